"""An app's catalogue served over HTTP: what judges its messages, and its session's runtime.

Each body is judged as a stdio line is, so its answer is the stdio server's bytes: by the engine
itself (the compiled fast path, ``Engine.http_modern`` and ``Engine.fast``, then the line rules on the
body parsed once, ``Engine.judge``); on the stateless endpoint
every request is judged by 2026-07-28's rules (``Engine.modern_only``).
2026-07-28 requests share one ``Served`` (they carry their state); each legacy session and each
``subscriptions/listen`` stream has its own.
"""

from __future__ import annotations

from ..._engine import Engine
from .exchange import CURRENT, Exchange, HttpRuntime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ...app import Server
    from ...lines import Envelope
    from ..workers import WorkerPool
    from .exchange import Gate


def fast_path() -> bool:
    """Whether the engine has a fast path (the compiled engine: the pure one judges every message in full)."""
    return Engine.fast_path


class Served:
    """A catalogue of ``app``, what judges its messages, and a runtime for its deferred work."""

    __slots__ = ("catalogue", "_judge", "runtime", "http_modern", "fast")

    def __init__(
        self,
        app: Server,
        max_message_bytes: int,
        pool: Callable[[], WorkerPool],
        gate: Gate,
        all_modern: bool = False,
        standalone: Callable[[bytes], object] | None = None,
    ) -> None:
        self.catalogue = app.catalogue()
        engine = Engine(self.catalogue, max_message_bytes)
        # The engine's fast path alone: an answer given at once, or None when the message is to be
        # judged in full. An engine without one (``fast_path``: the pure one): these stay None and
        # nothing asks it twice.
        #: ``http_modern(body, version, method, name)``: a 2026-07-28 request whose headers match its body,
        #: answered with a result (HTTP 200); for the catalogue serving 2026-07-28.
        self.http_modern = None
        #: ``fast(body)``: a message of a legacy session.
        self.fast = None
        if all_modern:
            engine.modern_only()
            if engine.fast_path:
                self.http_modern = engine.http_modern
        elif engine.fast_path:
            self.fast = engine.fast
        self._judge = engine.judge
        self.runtime = HttpRuntime(self.catalogue.session, pool, gate, standalone)

    def exchange(self) -> Exchange:
        """A new exchange for a request to this catalogue."""
        return Exchange()

    def judge(self, parsed: Envelope, exchange: Exchange | None = None) -> bytes:
        """Judge one message, parsed and told apart (:func:`~shipcode_mcp.lines.envelope`), for ``exchange``;
        the answer given at once (``b""``: none, or later)."""
        self.runtime.serving()
        token = CURRENT.set(exchange)
        try:
            return self._judge(parsed)
        finally:
            CURRENT.reset(token)

    def end(self) -> None:
        """Stop serving: cancel the work in flight."""
        self.runtime.end()
