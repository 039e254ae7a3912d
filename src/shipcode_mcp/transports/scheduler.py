"""The concurrent server: one asyncio event loop drives input, deferred work and output.

The engine still judges every line in order and answers sync requests at once. Deferred
work (:class:`~shipcode_mcp.session.Deferred`) runs here: ``async`` handlers as tasks on
the loop, blocking tools in a pool of daemon worker threads. Their answers, and the
notifications and requests a :class:`~shipcode_mcp.context.Context` sends, join the
engine's output as whole lines and are written at the loop's next turn.

- At most ``max_concurrency`` handlers are in flight: at the limit the engine stops at a
  line boundary and the server stops reading until one finishes.
- ``notifications/cancelled`` cancels a handler in flight; no answer is written for it.
- At end of input: no more reading; handlers in flight may finish for ``eof_grace``
  seconds, then each straggler is cancelled and answered -32603 ``Request cancelled at end
  of input``; then the server exits. Requests to the client still waiting fail with
  :class:`~shipcode_mcp.errors.ClientError`.
- On a stop signal: no more reading, handlers in flight are cancelled without answers,
  what is computed is written (best effort), and the server exits.
- Requests to the client carry the ids ``"s1"``, ``"s2"``, ...
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import threading

from .._log import log
from ..asking.legacy import ClientRequests
from ..deferred import ASYNC, INLINE, PAUSE, settled
from ..errors import ClientError
from ..jsontext import id_text
from ..limits import DEFAULT_EOF_GRACE, DEFAULT_MAX_CONCURRENCY, DEFAULT_WORKERS, SETTLE_SECONDS
from ..protocol import (
    INTERNAL_ERROR,
    READ_SIZE,
    RESPONSE_HEAD,
    ServerStop,
    error_tail,
)
from .signals import keep_off_this_thread
from .workers import WorkerPool, job_answer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..deferred import Deferred
    from ..session import Session
    from .signals import StopSignals

_unfinished: list[Any] = []  # handlers that ignored their cancellation: kept, never destroyed
STRAGGLER_TAIL = error_tail(INTERNAL_ERROR, "Request cancelled at end of input")
#: The garbage collector's first threshold while serving (Python's default: 700). Handlers in
#: flight are many young objects that live on: at 700 the collector walks them again and again
#: as they age, for a fifth of the CPU an async call costs. Cyclic garbage waits a little longer.
GC_YOUNG_THRESHOLD = 10_000


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop when it is installed (``pip install ".[uvloop]"`` from a checkout) and
    ``SHIPCODE_MCP_NO_UVLOOP`` is unset or empty, else asyncio's.

    The two serve alike, byte for byte; uvloop runs callbacks, timers and I/O in C, for
    about a third less CPU per async call.
    """
    if not os.environ.get("SHIPCODE_MCP_NO_UVLOOP"):
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


class Scheduler:
    """Serves one session on ``fd_in``/``fd_out`` with an engine and an event loop: the session's
    :class:`~shipcode_mcp.runtime.Runtime` while it serves."""

    def __init__(
        self,
        engine: Any,
        session: Session,
        fd_in: int,
        fd_out: int,
        stops: StopSignals,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        workers: int = DEFAULT_WORKERS,
        eof_grace: float = DEFAULT_EOF_GRACE,
    ) -> None:
        self.engine = engine
        self.session = session
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.stops = stops
        self.max_concurrency = max_concurrency
        self.workers = workers
        self.eof_grace = eof_grace
        self.loop = new_event_loop()
        self.jobs: dict[Any, bytes] = {}  # task or future in flight -> its id bytes
        self.silenced: set[Any] = set()  # cancelled: never answered
        self.requests = ClientRequests()
        self.pool: WorkerPool | None = None
        self.reading = False
        self.poll_input = False  # input that epoll refuses (a regular file): read in turns
        self.paused = False
        self.eof = False
        self.stopping = False
        self.flush_due = False
        self.resume_due = False
        self.grace_timer: asyncio.TimerHandle | None = None
        #: Why serving ended: "end of input", "signal N" or "stdout closed".
        self.reason = "end of input"
        self._thread = threading.get_ident()
        # Bound once, and run in one context of its own: no method object and no copy of
        # the context per job (the scheduler reads no context variable).
        self._job_done = self._done
        self._done_context = contextvars.Context()

    # -- running -----------------------------------------------------------------------------

    def serve(self) -> str:
        """Serve until the end of input (and its grace), a stop signal or a closed output."""
        import signal

        loop = self.loop
        self.session.runtime = self
        self.engine.attach(self.fd_out)
        # What start-up made lives as long as the process: no collection walks it again, not
        # even the ones at exit (which otherwise cost as much as a thousand async calls).
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_read, False)
        os.set_blocking(wake_write, False)
        previous_wakeup = signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
        try:
            loop.add_reader(wake_read, self._on_signal, wake_read)
            self.stops.interruptible = False
            loop.call_soon(self._begin, wake_write)
            loop.run_forever()
            self._settle()
        finally:
            gc.set_threshold(*thresholds)
            self.stops.interruptible = True
            signal.set_wakeup_fd(previous_wakeup)
            loop.remove_reader(wake_read)
            os.close(wake_read)
            os.close(wake_write)
            self.session.runtime = None
        return self.reason

    def _begin(self, wake_write: int) -> None:
        """The loop's first turn: stop if a signal came already, else start reading.

        uvloop points the wakeup descriptor at a pipe of its own while it runs: it is pointed
        back here, so that a stop signal wakes this server on either loop.
        """
        import signal

        signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
        if self.stops.signum is not None:
            self._stop(f"signal {self.stops.signum}")
        else:
            self._start_reading()

    def _settle(self) -> None:
        """Let cancelled handlers unwind (for at most a second) before the loop is left."""
        left = [job for job in self.jobs if not job.done()]
        if left:
            self.loop.run_until_complete(asyncio.wait(left, timeout=SETTLE_SECONDS))
            _unfinished.extend(job for job in left if not job.done())

    def _guarded(self, work, *args) -> Any:
        """Run engine work where a stop signal may interrupt it; None if serving stopped."""
        stops = self.stops
        try:
            try:
                stops.interruptible = True
                if stops.signum is not None:
                    raise ServerStop(stops.signum)
                return work(*args)
            finally:
                stops.interruptible = False
        except ServerStop as stop:
            self._stop(f"signal {stop.args[0]}")
        except BrokenPipeError:
            self._stop("stdout closed")
        return None

    def _on_signal(self, fd: int) -> None:
        try:
            os.read(fd, 512)
        except OSError:
            pass
        if self.stops.signum is not None:
            self._stop(f"signal {self.stops.signum}")

    def _stop(self, reason: str) -> None:
        """Stop at once: cancel what is in flight (no answers), write what is computed."""
        if self.stopping:
            return
        self.stopping = True
        self.reason = reason
        self.stops.interruptible = False
        self._stop_reading()
        for job in list(self.jobs):
            self.silenced.add(job)
            job.cancel()
        self.requests.fail("the server is stopping")
        self.engine.flush_soon()
        self.loop.stop()

    def _finish(self) -> None:
        """End of input and nothing left in flight: write everything, then stop."""
        if self.grace_timer is not None:
            self.grace_timer.cancel()
        self._guarded(self.engine.flush)
        self.stopping = True
        self.loop.stop()

    # -- input -------------------------------------------------------------------------------

    def _start_reading(self) -> None:
        if self.reading or self.eof or self.stopping:
            return
        self.reading = True
        if not self.poll_input:
            try:
                self.loop.add_reader(self.fd_in, self._on_input)
                return
            except (OSError, ValueError):
                self.poll_input = True
        self.loop.call_soon(self._on_input)

    def _stop_reading(self) -> None:
        if self.reading:
            self.reading = False
            if not self.poll_input:
                self.loop.remove_reader(self.fd_in)

    def _on_input(self) -> None:
        if not self.reading:
            return
        try:
            data = os.read(self.fd_in, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            data = None
        except OSError as error:
            log("warning", f"cannot read the input: {error}; treating it as ended")
            data = b""
        if data == b"":
            self._end_of_input()
            return
        if data is not None:
            self._process(self.engine.take, data)
        if self.reading and self.poll_input:
            self.loop.call_soon(self._on_input)

    def _process(self, work, *args) -> None:
        """Let the engine judge lines; pause input when it asks. Answers are written at the
        loop's next turn, together with those of handlers completing meanwhile."""
        paused = self._guarded(work, *args)
        if self.stopping:
            return
        if paused:
            self.paused = True
            self._stop_reading()
        self._flush_soon()

    def _end_of_input(self) -> None:
        self._stop_reading()
        self.eof = True
        self._guarded(self.engine.end_input)
        if self.stopping:
            return
        self.requests.fail("the input ended before the client answered")
        if self.jobs:
            self._flush()
            self.grace_timer = self.loop.call_later(self.eof_grace, self._expire)
        else:
            self._finish()

    def _expire(self) -> None:
        """The grace after end of input is over: answer and cancel the stragglers."""
        for job, id_bytes in list(self.jobs.items()):
            self.silenced.add(job)
            job.cancel()
            self.engine.emit(RESPONSE_HEAD + id_bytes + STRAGGLER_TAIL)
        log("warning", f"{len(self.jobs)} handler(s) still running {self.eof_grace:g} s after end of input: cancelled")
        self._finish()

    # -- output ------------------------------------------------------------------------------

    def send(self, line: bytes) -> None:
        """Queue whole lines for the output; written at the loop's next turn. Any thread."""
        if threading.get_ident() != self._thread:
            self.loop.call_soon_threadsafe(self.send, line)
            return
        if self.stopping:
            return
        self.engine.emit(line)
        self._flush_soon()

    def _flush_soon(self) -> None:
        if not self.flush_due:
            self.flush_due = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self.flush_due = False
        if not self.stopping:
            self._guarded(self.engine.flush)

    # -- deferred work -------------------------------------------------------------------------

    def defer(self, id_bytes: bytes, deferred: Deferred) -> Any:
        """Start deferred work: its body when it ran inline, else None (or PAUSE at the limit)."""
        args = deferred.arguments(self.session, id_bytes)
        mode = deferred.mode
        if mode == INLINE:
            return deferred.func(*args)
        if mode == ASYNC:
            work = deferred.func(*args)
            job = self.loop.create_task(work if deferred.contained else settled(work))
        else:
            if self.pool is None:
                self.pool = WorkerPool(self.workers, keep_off_this_thread)
            job = self.loop.run_in_executor(self.pool, deferred.func, *args)
        self.jobs[job] = id_bytes
        job.add_done_callback(self._job_done, context=self._done_context)
        return PAUSE if len(self.jobs) >= self.max_concurrency else None

    def run_blocking(self, func, *args) -> Any:
        """An awaitable of ``func(*args)`` run in the worker threads."""
        if self.pool is None:
            self.pool = WorkerPool(self.workers, keep_off_this_thread)
        return self.loop.run_in_executor(self.pool, func, *args)

    def _done(self, job: Any) -> None:
        id_bytes = self.jobs.pop(job, None)
        if id_bytes is None:
            return
        if job in self.silenced:
            self.silenced.discard(job)
        elif not self.stopping:
            self.send(job_answer(id_bytes, job))
        if self.stopping:
            return
        if self.paused and not self.resume_due:
            self.resume_due = True  # once for all the handlers completing in this turn
            self.loop.call_soon(self._resume)
        if self.eof and not self.jobs:
            self._finish()

    def _resume(self) -> None:
        self.resume_due = False
        if self.stopping:
            return
        self.paused = False
        self._process(self.engine.resume)
        if not self.paused:
            self._start_reading()

    def cancel(self, request_id: object) -> None:
        """Cancel the handlers in flight for ``request_id``; unknown ids are ignored."""
        key = id_text(request_id)
        if key is None:
            return
        for job, id_bytes in self.jobs.items():  # rare: a scan beats an index kept per request
            if id_bytes == key:
                self.silenced.add(job)
                job.cancel()

    # -- requests to the client ------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        """Send a request to the client and wait for its ``result``."""
        if self.eof or self.stopping:
            raise ClientError(f"{method}: the input ended before the client answered")
        return await self.requests.ask(self.loop, self.send, method, params)

    def response(self, id_bytes: bytes, message: dict[str, Any]) -> None:
        """A client's response: resolves the matching request; any other is ignored."""
        self.requests.resolve(id_bytes, message)
