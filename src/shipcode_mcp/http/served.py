"""An app's catalogue served over HTTP: its line rules and its session's runtime.

Each body is judged by the same :class:`~shipcode_mcp.lines.LineRules` that judge a stdio line,
so its answer is the stdio server's bytes. 2026-07-28 requests share one ``Served`` (they carry
their state); each legacy session and each ``subscriptions/listen`` stream has its own.
"""

from __future__ import annotations

from ..lines import LineRules
from .exchange import CURRENT, Exchange, Runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..app import Server
    from ..workers import WorkerPool


class Served:
    """A catalogue of ``app`` with rules judging whole messages and a runtime for deferred work."""

    __slots__ = ("catalogue", "rules", "runtime")

    def __init__(
        self,
        app: Server,
        max_message_bytes: int,
        pool: Callable[[], WorkerPool],
        all_modern: bool = False,
        standalone: Callable[[bytes], object] | None = None,
    ) -> None:
        self.catalogue = app.catalogue()
        self.rules = LineRules(self.catalogue, max_message_bytes)
        if all_modern:
            self.rules.all_modern = True
        self.runtime = Runtime(self.catalogue.session, pool, standalone)

    def exchange(self) -> Exchange:
        """A new exchange for a request to this catalogue."""
        return Exchange()

    def judge(self, body: bytes, exchange: Exchange | None = None) -> bytes:
        """Judge one message for ``exchange``; the answer given at once (``b""``: none, or later)."""
        self.runtime.serving()
        token = CURRENT.set(exchange)
        try:
            self.rules.line(body)
        finally:
            CURRENT.reset(token)
        out = self.rules.out
        if not out:
            return b""
        answer = b"".join(out)
        out.clear()
        return answer

    def end(self) -> None:
        """Stop serving: cancel the work in flight."""
        self.runtime.end()
