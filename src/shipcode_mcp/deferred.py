"""Deferred work: what a handler that cannot answer at once hands to the session.

A handler that cannot answer at once (an ``async def`` tool, a blocking tool, a tool that
takes a :class:`~shipcode_mcp.context.Context`) returns a :class:`Deferred`; the line rules
hand it to :meth:`Session.defer <shipcode_mcp.session.Session.defer>`, which runs it by its
:class:`~shipcode_mcp.runtime.Runtime` or, without one, at once.
"""

from __future__ import annotations

from .context import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .session import Session

#: ``Deferred.mode``: run now, in order, on the line processor (a sync tool taking a Context).
INLINE = 0
#: ``Deferred.mode``: a coroutine, run as a task on the server's event loop.
ASYNC = 1
#: ``Deferred.mode``: a sync function that blocks, run in the worker thread pool.
THREAD = 2

#: Returned by :meth:`~shipcode_mcp.session.Session.defer` when the in-flight limit is reached: stop reading input.
PAUSE = object()


_inline_loops: list = []


def inline_loop() -> Any:
    """The event loop that runs async work at once for an engine fed in-process (one per process)."""
    if not _inline_loops:
        import asyncio

        _inline_loops.append(asyncio.new_event_loop())
    return _inline_loops[0]


class Deferred:
    """Work a handler hands to the session: ``func(*args, ctx)`` gives the result body bytes.

    For ``ASYNC`` work it returns a coroutine of those bytes. ``progress_token`` is the
    request's ``params._meta.progressToken`` (None when absent). ``contained`` says that
    ``func`` already turns every exception, ``SystemExit`` included, into its answer (as
    tools do), so it needs no :func:`settled` around it. ``args`` spare a handler a closure
    per call (whose cells would live as long as the call); without ``takes_context`` the work
    is ``func(*args)`` and no Context is made.
    """

    __slots__ = ("func", "mode", "progress_token", "contained", "args", "takes_context", "round", "meta")

    def __init__(
        self,
        func: Callable[..., Any],
        mode: int,
        progress_token: object = None,
        contained: bool = False,
        args: tuple = (),
        takes_context: bool = True,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.func = func
        self.mode = mode
        self.progress_token = progress_token
        self.contained = contained
        self.args = args
        self.takes_context = takes_context
        #: The request's :class:`~shipcode_mcp.asking.rounds.Round` (None: a legacy request's first round).
        self.round = None
        #: The request's ``params._meta`` (None when it has none, or no Context is made).
        self.meta = meta

    def arguments(self, session: Session, id_bytes: bytes) -> tuple:
        """What ``func`` is called with for the request ``id_bytes`` of ``session``."""
        if self.takes_context:
            return (*self.args, Context(session, id_bytes, self.progress_token, self.round, self.meta))
        return self.args


async def settled(work: Any) -> Any:
    """Await ``ASYNC`` deferred work; a ``SystemExit`` it raises becomes a RuntimeError, so it
    fails that request instead of stopping the event loop."""
    try:
        return await work
    except SystemExit as error:
        raise RuntimeError(f"a handler raised SystemExit({error.code!r})") from error
