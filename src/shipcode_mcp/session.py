"""One client's session beyond single answers: deferred work, notifications, requests to the client.

A handler that cannot answer at once (an ``async def`` tool, a blocking tool, a tool that
takes a :class:`~shipcode_mcp.context.Context`) returns a :class:`Deferred`. The line rules
hand it to :meth:`Session.defer`. With a scheduler attached (the concurrent server, see
:mod:`shipcode_mcp.scheduler`) it runs concurrently and is answered when done; without one
(an engine fed in-process) it runs to completion at once, in order.
"""

from __future__ import annotations

from .context import Context
from .errors import ClientError
from .jsontext import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: ``Deferred.mode``: run now, in order, on the line processor (a sync tool taking a Context).
INLINE = 0
#: ``Deferred.mode``: a coroutine, run as a task on the server's event loop.
ASYNC = 1
#: ``Deferred.mode``: a sync function that blocks, run in the worker thread pool.
THREAD = 2

#: Returned by :meth:`Session.defer` when the in-flight limit is reached: stop reading input.
PAUSE = object()


class Deferred:
    """Work a handler hands to the session: ``func(*args, ctx)`` gives the result body bytes.

    For ``ASYNC`` work it returns a coroutine of those bytes. ``progress_token`` is the
    request's ``params._meta.progressToken`` (None when absent). ``contained`` says that
    ``func`` already turns every exception, ``SystemExit`` included, into its answer (as
    tools do), so it needs no :func:`settled` around it. ``args`` spare a handler a closure
    per call (whose cells would live as long as the call); without ``takes_context`` the work
    is ``func(*args)`` and no Context is made.
    """

    __slots__ = ("func", "mode", "progress_token", "contained", "args", "takes_context")

    def __init__(
        self,
        func: Callable[..., Any],
        mode: int,
        progress_token: object = None,
        contained: bool = False,
        args: tuple = (),
        takes_context: bool = True,
    ) -> None:
        self.func = func
        self.mode = mode
        self.progress_token = progress_token
        self.contained = contained
        self.args = args
        self.takes_context = takes_context

    def arguments(self, session: Session, id_bytes: bytes) -> tuple:
        """What ``func`` is called with for the request ``id_bytes`` of ``session``."""
        if self.takes_context:
            return (*self.args, Context(session, id_bytes, self.progress_token))
        return self.args


async def settled(work: Any) -> Any:
    """Await ``ASYNC`` deferred work; a ``SystemExit`` it raises becomes a RuntimeError, so it
    fails that request instead of stopping the event loop."""
    try:
        return await work
    except SystemExit as error:
        raise RuntimeError(f"a handler raised SystemExit({error.code!r})") from error


def notification_line(method: str, params: dict[str, Any]) -> bytes:
    """One notification, encoded as a whole output line."""
    return b'{"jsonrpc":"2.0","method":' + dumps(method) + b',"params":' + dumps(params) + b"}\n"


class Session:
    """What the server knows of its client, and the way back to it."""

    def __init__(self) -> None:
        #: The ``capabilities`` the client declared in ``initialize``.
        self.client_capabilities: dict[str, Any] = {}
        #: Rank in :data:`~shipcode_mcp.protocol.LOG_LEVELS` below which log messages are not sent (0: all are).
        self.log_threshold = 0
        #: Writes whole lines to the output; set by the engine (or the scheduler).
        self.emit: Callable[[bytes], object] | None = None
        #: The concurrent runtime, when one serves this session.
        self.scheduler: Any = None
        #: Resource uris the client subscribed to.
        self.subscriptions: set[str] = set()
        self._inline_loop: Any = None

    # -- from the line rules ---------------------------------------------------------------

    def defer(self, id_bytes: bytes, deferred: Deferred) -> bytes | object | None:
        """Run deferred work: its body now, None when in flight, or :data:`PAUSE`."""
        if self.scheduler is not None:
            return self.scheduler.defer(id_bytes, deferred)
        result = deferred.func(*deferred.arguments(self, id_bytes))
        if deferred.mode == ASYNC:
            if self._inline_loop is None:
                import asyncio

                self._inline_loop = asyncio.new_event_loop()
            result = self._inline_loop.run_until_complete(result)
        return result

    def cancel(self, params: dict[str, Any]) -> None:
        """``notifications/cancelled``: cancel that request if it is in flight."""
        if self.scheduler is not None:
            self.scheduler.cancel(params.get("requestId"))

    def response(self, id_bytes: bytes, message: dict[str, Any]) -> None:
        """A client's response: it may answer one of the server's own requests."""
        if self.scheduler is not None:
            self.scheduler.response(id_bytes, message)

    def initialize(self, params: dict[str, Any] | None) -> None:
        """Remember what the client declared in ``initialize``."""
        capabilities = params.get("capabilities") if params is not None else None
        self.client_capabilities = capabilities if type(capabilities) is dict else {}

    # -- from handlers (through a Context) ---------------------------------------------------

    def send(self, line: bytes) -> None:
        """Write one whole line (a notification); callable from any thread."""
        if self.scheduler is not None:
            self.scheduler.send(line)
        elif self.emit is not None:
            self.emit(line)

    def resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` if the client subscribed to ``uri``."""
        if uri in self.subscriptions:
            self.notify("notifications/resources/updated", {"uri": uri})

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification to the client."""
        self.send(notification_line(method, params))

    async def request(self, method: str, params: dict[str, Any] | None, capability: str) -> Any:
        """Send a request to the client and return its ``result``; :class:`ClientError` if it fails."""
        if capability not in self.client_capabilities:
            raise ClientError(f"{method}: the client did not declare the {capability} capability")
        if self.scheduler is None:
            raise ClientError(f"{method}: no client connection to ask")
        result = await self.scheduler.request(method, params)
        if type(result) is not dict:
            raise ClientError(f"{method}: the client answered with an invalid result")
        return result
