"""One client's session beyond single answers: deferred work, notifications, requests to the client.

A handler that cannot answer at once (an ``async def`` tool, a blocking tool, a tool that
takes a :class:`~shipcode_mcp.context.Context`) returns a :class:`Deferred`. The line rules
hand it to :meth:`Session.defer`. With a runtime attached (:class:`~shipcode_mcp.runtime.Runtime`: the
concurrent stdio server or an HTTP session) it runs concurrently and is answered when done; without one
(an engine fed in-process) it runs to completion at once, in order.
"""

from __future__ import annotations

from .context import Context
from .errors import ClientError
from .jsontext import dumps
from .mrtr import REQUEST_CAPABILITY, declares
from .protocol import META_SUBSCRIPTION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .runtime import Runtime

#: ``Deferred.mode``: run now, in order, on the line processor (a sync tool taking a Context).
INLINE = 0
#: ``Deferred.mode``: a coroutine, run as a task on the server's event loop.
ASYNC = 1
#: ``Deferred.mode``: a sync function that blocks, run in the worker thread pool.
THREAD = 2

#: Returned by :meth:`Session.defer` when the in-flight limit is reached: stop reading input.
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

    __slots__ = ("func", "mode", "progress_token", "contained", "args", "takes_context", "round")

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
        #: The request's :class:`~shipcode_mcp.mrtr.Round` (None: a legacy request's first round).
        self.round = None

    def arguments(self, session: Session, id_bytes: bytes) -> tuple:
        """What ``func`` is called with for the request ``id_bytes`` of ``session``."""
        if self.takes_context:
            return (*self.args, Context(session, id_bytes, self.progress_token, self.round))
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
        #: Writes whole lines to the output; set by the engine (or the runtime).
        self.emit: Callable[[bytes], object] | None = None
        #: The runtime serving this session's deferred work, when one does.
        self.runtime: Runtime | None = None
        #: Resource uris the client subscribed to.
        self.subscriptions: set[str] = set()
        #: True once a client opened a legacy session with ``initialize``.
        self.initialized = False
        #: Open 2026-07-28 subscriptions: the ``subscriptions/listen`` request's id bytes ->
        #: (its id, the acknowledged filter).
        self.listeners: dict[bytes, tuple[Any, dict[str, Any]]] = {}

    # -- from the line rules ---------------------------------------------------------------

    def defer(self, id_bytes: bytes, deferred: Deferred) -> bytes | object | None:
        """Run deferred work: its body now, None when in flight, or :data:`PAUSE`."""
        if self.runtime is not None:
            return self.runtime.defer(id_bytes, deferred)
        result = deferred.func(*deferred.arguments(self, id_bytes))
        if deferred.mode == ASYNC:
            result = inline_loop().run_until_complete(result)
        return result

    def cancel(self, params: dict[str, Any]) -> None:
        """``notifications/cancelled``: cancel that request if it is in flight (or end that subscription)."""
        request_id = params.get("requestId")
        if self.listeners and (type(request_id) is int or type(request_id) is str):
            self.listeners.pop(dumps(request_id), None)
        if self.runtime is not None:
            self.runtime.cancel(request_id)

    def response(self, id_bytes: bytes, message: dict[str, Any]) -> None:
        """A client's response: it may answer one of the server's own requests."""
        if self.runtime is not None:
            self.runtime.response(id_bytes, message)

    def initialize(self, params: dict[str, Any] | None) -> None:
        """Remember what the client declared in ``initialize``."""
        capabilities = params.get("capabilities") if params is not None else None
        self.client_capabilities = capabilities if type(capabilities) is dict else {}
        self.initialized = True

    def listen(self, id_bytes: bytes, subscription: Any, agreed: dict[str, Any]) -> None:
        """Open a 2026-07-28 subscription: acknowledge it; it lasts until it is cancelled."""
        self.listeners[id_bytes] = (subscription, agreed)
        self.notify(
            "notifications/subscriptions/acknowledged",
            {"_meta": {META_SUBSCRIPTION: subscription}, "notifications": agreed},
        )

    # -- from handlers (through a Context) ---------------------------------------------------

    def send(self, line: bytes) -> None:
        """Write one whole line (a notification); callable from any thread."""
        if self.runtime is not None:
            self.runtime.send(line)
        elif self.emit is not None:
            self.emit(line)

    def resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` where the client subscribed to ``uri`` (either era)."""
        if uri in self.subscriptions:
            self.notify("notifications/resources/updated", {"uri": uri})
        for subscription, agreed in list(self.listeners.values()):
            if uri in agreed.get("resourceSubscriptions", ()):
                self.notify("notifications/resources/updated", {"_meta": {META_SUBSCRIPTION: subscription}, "uri": uri})

    def list_changed(self, kind: str, member: str) -> None:
        """Send ``notifications/<kind>/list_changed`` to a legacy client and to the subscriptions
        whose filter asked for ``member``."""
        method = f"notifications/{kind}/list_changed"
        if self.initialized:
            self.send(b'{"jsonrpc":"2.0","method":' + dumps(method) + b"}\n")
        for subscription, agreed in list(self.listeners.values()):
            if agreed.get(member) is True:
                self.notify(method, {"_meta": {META_SUBSCRIPTION: subscription}})

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification to the client."""
        self.send(notification_line(method, params))

    async def run_blocking(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking function in the worker threads (at once, without a runtime)."""
        if self.runtime is not None:
            return await self.runtime.run_blocking(func, *args)
        return func(*args)

    async def ask(self, request: dict[str, Any]) -> Any:
        """Send one request of an :class:`~shipcode_mcp.mrtr.InputRequired` to a legacy client; its result."""
        method = request["method"]
        params = request.get("params")
        if not declares(self.client_capabilities, request):
            raise ClientError(f"{method}: the client did not declare the {REQUEST_CAPABILITY[method]} capability")
        if method == "elicitation/create" and type(params) is dict and params.get("mode") == "url":
            import uuid

            params = {**params, "elicitationId": uuid.uuid4().hex}  # 2025-11-25 requires one
        return await self.request(method, params, REQUEST_CAPABILITY[method])

    async def request(self, method: str, params: dict[str, Any] | None, capability: str) -> Any:
        """Send a request to the client and return its ``result``; :class:`ClientError` if it fails."""
        if capability not in self.client_capabilities:
            raise ClientError(f"{method}: the client did not declare the {capability} capability")
        if self.runtime is None:
            raise ClientError(f"{method}: no client connection to ask")
        result = await self.runtime.request(method, params)
        if type(result) is not dict:
            raise ClientError(f"{method}: the client answered with an invalid result")
        return result
