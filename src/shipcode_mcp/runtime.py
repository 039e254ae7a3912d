"""The runtime contract: what serves a :class:`~shipcode_mcp.session.Session`'s deferred work and its way back.

Two transports implement it, each in its own way: the stdio server's
:class:`~shipcode_mcp.transports.scheduler.Scheduler` (one client, one event loop over stdin and
stdout) and HTTP's :class:`~shipcode_mcp.transports.http.exchange.HttpRuntime` (one session's work,
its lines routed to the POST that waits for them). A session without one (an engine fed
in-process) runs its work at once, in order. Imported only by type checkers and the tests: a
:class:`~typing.Protocol` is checked structurally, so neither implementation inherits it.
"""

from __future__ import annotations

from typing import Any, Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .deferred import Deferred


class Runtime(Protocol):
    """The six calls a :class:`~shipcode_mcp.session.Session` makes of the runtime serving it."""

    def defer(self, id_bytes: bytes, deferred: Deferred) -> Any:
        """Start deferred work for the request ``id_bytes``: its result body when it ran inline, None
        when it is in flight (answered when done), or :data:`~shipcode_mcp.deferred.PAUSE` at the in-flight
        limit."""

    def cancel(self, request_id: object) -> None:
        """``notifications/cancelled``: cancel the work in flight for ``request_id`` (no answer follows)."""

    def response(self, id_bytes: bytes, message: dict[str, Any]) -> None:
        """A client's response: resolve the server's own request it answers; any other is ignored."""

    def send(self, line: bytes) -> None:
        """Write one whole line (a notification or a request to the client); callable from any thread."""

    def run_blocking(self, func: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        """An awaitable of ``func(*args)`` run in the worker threads."""

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        """Send a request to the client and return its ``result`` (:class:`~shipcode_mcp.errors.ClientError`
        if it fails)."""
