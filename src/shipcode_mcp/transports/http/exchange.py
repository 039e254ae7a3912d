"""One HTTP request's way back, and the runtime that serves a session's deferred work over HTTP.

An :class:`Exchange` is what one POST is waiting for: the lines a handler sends before its
answer (notifications; in legacy sessions, requests to the client) and then the answer itself.
An :class:`HttpRuntime` is the :class:`~shipcode_mcp.runtime.Runtime` of a
:class:`~shipcode_mcp.session.Session` served over HTTP, as the stdio server's scheduler is on stdio:
it runs deferred work on the server's event loop or in worker threads, and routes each line a handler
sends about its request to the exchange of that request (the context variable :data:`CURRENT`), and
any other line to the session's standalone stream.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import deque

from ..._log import log
from ...asking.legacy import ClientRequests
from ...deferred import ASYNC, INLINE, settled
from ...jsontext import id_text
from ..workers import job_answer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ...deferred import Deferred
    from ...session import Session
    from ..workers import WorkerPool

#: The exchange of the request being served, in the handler's context.
CURRENT: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar("shipcode_mcp_exchange", default=None)

#: How the lines that belong to the request being served begin: log messages, progress, and
#: requests to the client. Others (list changes, resource updates) concern the whole session.
REQUEST_LINES = (
    b'{"jsonrpc":"2.0","method":"notifications/message"',
    b'{"jsonrpc":"2.0","method":"notifications/progress"',
    b'{"jsonrpc":"2.0","id":',
)
#: :meth:`Exchange.next` kinds: a line before the answer, the answer, the end without one.
LINE, ANSWER, END = 0, 1, 2
#: How many notifications a stream of them (``subscriptions/listen``, a legacy session's GET stream) holds
#: unsent at most: a client that reads slower than they come has its stream ended (see :meth:`Exchange.notify`).
MAX_UNSENT_NOTIFICATIONS = 1_000


class Exchange:
    """The lines of one request, in order, for the HTTP response that carries them."""

    __slots__ = ("_items", "_ready", "job", "closed", "answered")

    def __init__(self) -> None:
        self._items: deque[tuple[int, bytes]] = deque()
        #: Set when a line is queued; made when someone first waits (most answers are given at once).
        self._ready: asyncio.Event | None = None
        #: The request's deferred work while it runs.
        self.job: Any = None
        #: True once no one reads any more (the client left): later lines are dropped.
        self.closed = False
        #: True once the answer (or the end without one) is queued.
        self.answered = False

    def put(self, kind: int, line: bytes) -> None:
        """Queue a line (on the event loop's thread)."""
        if self.closed or self.answered:
            return
        if kind != LINE:
            self.answered = True
        self._items.append((kind, line))
        if self._ready is not None:
            self._ready.set()

    def notify(self, line: bytes) -> None:
        """Queue a notification on a stream of them: a stream already :data:`MAX_UNSENT_NOTIFICATIONS` behind
        is ended at once, what it held dropped (its client listens again, and reads again what it follows)."""
        if len(self._items) < MAX_UNSENT_NOTIFICATIONS:
            self.put(LINE, line)
        else:
            log("warning", f"a stream of notifications fell {MAX_UNSENT_NOTIFICATIONS} behind its reader: ended")
            self._items.clear()
            self.put(END, b"")

    @property
    def waiting(self) -> bool:
        """Whether lines are queued, not yet taken."""
        return bool(self._items)

    async def next(self) -> tuple[int, bytes]:
        """The next line and its kind, waiting for it."""
        while not self._items:
            if self._ready is None:
                self._ready = asyncio.Event()
            self._ready.clear()
            await self._ready.wait()
        return self._items.popleft()

    def leave(self, cancel: bool) -> None:
        """No one reads any more (the client left, or the session ended); ``cancel``: stop the work too."""
        self.closed = True
        self._items.append((END, b""))
        if self._ready is not None:
            self._ready.set()
        if cancel and self.job is not None and not self.job.done():
            self.job.cancel()


class Gate:
    """At most ``limit`` pieces of deferred work in flight across an app's catalogues: a request
    waits for a free place before it is judged."""

    __slots__ = ("limit", "active", "_free")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self._free: asyncio.Event | None = None

    def full(self) -> bool:
        return self.active >= self.limit

    async def wait(self) -> None:
        """Wait until a place is free."""
        while self.active >= self.limit:
            if self._free is None:
                self._free = asyncio.Event()
            self._free.clear()
            await self._free.wait()

    def started(self) -> None:
        self.active += 1

    def ended(self) -> None:
        self.active -= 1
        if self._free is not None:
            self._free.set()


class HttpRuntime:
    """Deferred work, notifications and requests to the client of one session served over HTTP
    (a :class:`~shipcode_mcp.runtime.Runtime`).

    ``standalone(line)`` receives what no request is waiting for (the session's GET stream).
    """

    def __init__(
        self,
        session: Session,
        pool: Callable[[], WorkerPool],
        gate: Gate,
        standalone: Callable[[bytes], object] | None = None,
    ) -> None:
        self.session = session
        self.gate = gate
        #: The event loop serving, and its thread (see :meth:`serving`).
        self.loop: Any = None
        self._thread = 0
        self._pool = pool
        self.standalone = standalone
        #: Deferred work in flight -> its request's id bytes.
        self.jobs: dict[Any, bytes] = {}
        self.requests = ClientRequests()
        session.runtime = self

    def serving(self) -> None:
        """Called on the event loop before each message is judged: the loop serving now."""
        self.loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    # -- the runtime's side of a Session --------------------------------------------------------

    def defer(self, id_bytes: bytes, deferred: Deferred) -> Any:
        """Start deferred work for the current exchange: its body when it ran inline, else None."""
        args = deferred.arguments(self.session, id_bytes)
        if deferred.mode == INLINE:
            return deferred.func(*args)
        exchange = CURRENT.get()
        if deferred.mode == ASYNC:
            work = deferred.func(*args)
            job = self.loop.create_task(work if deferred.contained else settled(work))
        else:
            job = self.loop.run_in_executor(self._pool(), contextvars.copy_context().run, deferred.func, *args)
        self.jobs[job] = id_bytes
        self.gate.started()
        if exchange is not None:
            exchange.job = job
        job.add_done_callback(lambda done: self._done(done, exchange))
        return None

    def _done(self, job: Any, exchange: Exchange | None) -> None:
        id_bytes = self.jobs.pop(job)
        self.gate.ended()
        if exchange is None or exchange.closed:
            if not job.cancelled():
                job.exception()  # retrieved: a client that left is not an error
            return
        if job.cancelled():
            exchange.put(END, b"")
        else:
            exchange.put(ANSWER, job_answer(id_bytes, job))

    def send(self, line: bytes) -> None:
        """A whole line from a handler (any thread): to its request's exchange when it belongs to that
        request (:data:`REQUEST_LINES`), else to the standalone stream."""
        exchange = CURRENT.get() if line.startswith(REQUEST_LINES) else None
        if threading.get_ident() != self._thread:
            self.loop.call_soon_threadsafe(self._deliver, exchange, line)
        else:
            self._deliver(exchange, line)

    def _deliver(self, exchange: Exchange | None, line: bytes) -> None:
        if exchange is not None:
            exchange.put(LINE, line)
        elif self.standalone is not None:
            self.standalone(line)

    def cancel(self, request_id: object) -> None:
        """``notifications/cancelled``: end the session's work for that id; no answer follows."""
        key = id_text(request_id)
        if key is None:
            return
        for job, id_bytes in list(self.jobs.items()):
            if id_bytes == key:
                job.cancel()

    def run_blocking(self, func: Callable[..., Any], *args: Any) -> Any:
        """An awaitable of ``func(*args)`` run in the worker threads."""
        return self.loop.run_in_executor(self._pool(), contextvars.copy_context().run, func, *args)

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        """Send a request to the client on the current request's stream and wait for its ``result``."""
        return await self.requests.ask(self.loop, self.send, method, params)

    def response(self, id_bytes: bytes, message: dict[str, Any]) -> None:
        """A client's response: resolves the matching request; any other is ignored."""
        self.requests.resolve(id_bytes, message)

    def end(self) -> None:
        """The session ends: cancel its work, fail its requests to the client."""
        for job in list(self.jobs):
            job.cancel()
        self.requests.fail("the session ended before the client answered")
