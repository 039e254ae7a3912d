"""Open streams of notifications end as soon as the server starts to stop, not when its grace period is over.

A stream of notifications (a legacy session's GET stream, a ``subscriptions/listen`` stream) has no end of
its own, so it would hold the server for its whole grace period. Each is registered here while open; when
uvicorn starts to stop, each ends at once, its body finished properly: a ``subscriptions/listen`` stream
with the error that answers its request, a GET stream with nothing more. Calls still running keep the grace.

uvicorn tells no ASGI app that it is stopping before its connections are done (the lifespan shutdown comes
after), so while a stream is open one timer per app looks, :data:`LOOK_SECONDS` apart, at the flag that
uvicorn's stop-signal handler sets (``should_exit`` of the server it belongs to): the same under ``--http``,
with one process or several, and under plain uvicorn. Under another server the streams keep its grace period.
"""

from __future__ import annotations

import asyncio
import signal

from ...protocol import RESPONSE_HEAD
from .exchange import ANSWER, END

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .exchange import Exchange

#: Seconds between two looks at uvicorn's flag while a stream is open.
LOOK_SECONDS = 0.1


def uvicorn_stopping() -> bool:
    """Whether the uvicorn server serving this process has been told to stop (False under any other)."""
    handler = signal.getsignal(signal.SIGTERM)
    return getattr(getattr(handler, "__self__", None), "should_exit", False) is True


class OpenStreams:
    """The open streams of notifications of one app, and the ending of them all when the server stops."""

    __slots__ = ("_open", "_looking", "stopping", "tail")

    def __init__(self, tail: bytes) -> None:
        #: Each open stream, and the request id its last event answers (None: it ends with no event).
        self._open: dict[Exchange, bytes | None] = {}
        self._looking: asyncio.TimerHandle | None = None
        #: True once the server has started to stop: a stream opened later ends at once.
        self.stopping = False
        #: What follows a request id in the error that ends a ``subscriptions/listen`` stream.
        self.tail = tail

    def add(self, exchange: Exchange, rid: bytes | None) -> None:
        """A stream opens (``rid``: the id of the request it answers, when it ends with an answer)."""
        self._open[exchange] = rid
        if self.stopping:
            self._end(exchange, rid)
        elif self._looking is None:
            self._looking = asyncio.get_running_loop().call_later(LOOK_SECONDS, self._look)

    def discard(self, exchange: Exchange) -> None:
        """A stream has ended."""
        self._open.pop(exchange, None)
        if not self._open and self._looking is not None:
            self._looking.cancel()
            self._looking = None

    def _look(self) -> None:
        self._looking = None
        if uvicorn_stopping():
            self.end_all()
        elif self._open:
            self._looking = asyncio.get_running_loop().call_later(LOOK_SECONDS, self._look)

    def end_all(self) -> None:
        """The server is stopping: every open stream ends now, and any opened later at once."""
        self.stopping = True
        for exchange, rid in list(self._open.items()):
            self._end(exchange, rid)

    def _end(self, exchange: Exchange, rid: bytes | None) -> None:
        if rid is None:
            exchange.put(END, b"")
        else:
            exchange.put(ANSWER, RESPONSE_HEAD + rid + self.tail)
