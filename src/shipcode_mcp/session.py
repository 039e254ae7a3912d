"""One client's session beyond single answers: deferred work, notifications, requests to the client.

A handler that cannot answer at once returns a :class:`~shipcode_mcp.deferred.Deferred`. The line rules
hand it to :meth:`Session.defer`. With a runtime attached (:class:`~shipcode_mcp.runtime.Runtime`: the
concurrent stdio server or an HTTP session) it runs concurrently and is answered when done; without one
(an engine fed in-process) it runs to completion at once, in order.
"""

from __future__ import annotations

from .deferred import ASYNC, THREAD, inline_loop
from .jsontext import dumps
from .protocol import META_SUBSCRIPTION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .deferred import Deferred
    from .runtime import Runtime


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
        #: The catalogue serving this session (set by it): what a Context reads resources from.
        self.catalogue: Any = None
        #: This session's id for ``ctx.session_id`` when no transport gives one (made on first use).
        self.generated_id: str | None = None

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

    async def finish(self, deferred: Deferred, id_bytes: bytes) -> Any:
        """Run deferred work to its end inside a handler of the request ``id_bytes``: its body."""
        arguments = deferred.arguments(self, id_bytes)
        if deferred.mode == ASYNC:
            return await deferred.func(*arguments)
        if deferred.mode == THREAD:
            return await self.run_blocking(deferred.func, *arguments)
        return deferred.func(*arguments)

    async def ask(self, request: dict[str, Any]) -> Any:
        """Send one request of an :class:`~shipcode_mcp.asking.rounds.InputRequired` to a legacy client;
        its result (see :func:`shipcode_mcp.asking.legacy.ask`)."""
        from .asking.legacy import ask

        return await ask(self, request)

    async def request(self, method: str, params: dict[str, Any] | None, capability: str) -> Any:
        """Send a request to the client and return its ``result``
        (see :func:`shipcode_mcp.asking.legacy.send_request`)."""
        from .asking.legacy import send_request

        return await send_request(self, method, params, capability)
