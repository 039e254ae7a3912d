"""A bus that carries each event to the other processes too: the mechanics the Redis bus
(:mod:`shipcode_mcp.redisbus`) and the bus of ``--processes N`` share (a bounded queue of events to carry,
carried in batches from the serving loop, outages said once and tried again), imported only with one of them.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque

from ._log import log
from .bus import Bus

__all__ = ["CarriedBus"]

#: How many events may wait to be carried to the other processes, by default: one more is dropped.
DEFAULT_MAX_UNSENT = 10_000
#: Seconds between two attempts to reach the other processes again, at most (the first waits a tenth of a second).
RETRY_SECONDS = 2.0


class CarriedBus(Bus):
    """A bus that also carries each event to the other processes: what a subclass carries them with
    (:meth:`carry`, :meth:`listen`) runs on the serving loop; an event published elsewhere (another thread)
    goes there first. At most ``max_unsent`` events wait to be carried; beyond, they are dropped (said once).
    When the other processes cannot be reached, nothing fails: what could not be carried is dropped, the
    next batch tries again after a pause, and the log says when they are lost and when they are back."""

    shared = True

    def __init__(self, max_unsent: int = DEFAULT_MAX_UNSENT) -> None:
        super().__init__()
        if type(max_unsent) is not int or max_unsent < 1:
            raise ValueError("max_unsent is a whole number, 1 or more")
        self.max_unsent = max_unsent
        self._unsent: deque[bytes] = deque()
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0
        self._jobs: list[asyncio.Task] = []
        #: What is down (logged once per outage): why, by what ("carry" or "listen").
        self._down: dict[str, str] = {}
        self._dropping = False

    def publish(self, kind: bytes, payload: bytes) -> None:
        self.handlers[kind](payload)
        loop = self._loop
        if loop is None:  # not serving: no other process to tell yet
            return
        message = kind + b" " + payload
        if threading.get_ident() == self._thread:
            self._queue(message)
        else:
            loop.call_soon_threadsafe(self._queue, message)

    def _queue(self, message: bytes) -> None:
        if len(self._unsent) >= self.max_unsent:
            if not self._dropping:
                self._dropping = True
                log("warning", f"the bus holds {self.max_unsent} events not yet carried: more are dropped")
            return
        self._unsent.append(message)
        if self._wake is not None:
            self._wake.set()

    def heard(self, message: bytes) -> None:
        """An event another process carried here: delivered to this process's listeners."""
        kind, space, payload = message.partition(b" ")
        if space:
            try:
                self.deliver(kind, payload)
            except Exception as error:  # noqa: BLE001 - a malformed event: said, the bus goes on
                log("warning", f"the bus dropped an event it could not read ({type(error).__name__}: {error})")

    async def carry(self, batch: list[bytes]) -> None:
        """Carry a batch of events to the other processes; raises when they cannot be reached."""
        raise NotImplementedError

    async def listen(self) -> None:
        """Hear the other processes' events (:meth:`heard`) for as long as serving lasts."""

    async def _carry_all(self) -> None:
        wake = self._wake
        assert wake is not None
        pause = 0.0
        while True:
            if not self._unsent:
                wake.clear()
                await wake.wait()
            batch = list(self._unsent)
            self._unsent.clear()
            self._dropping = False
            try:
                await self.carry(batch)
            except Exception as error:  # noqa: BLE001 - the others unreachable (or worse): said, tried again
                self.lost("carry", error)
                pause = min(RETRY_SECONDS, max(0.1, pause * 2))
                await asyncio.sleep(pause)
            else:
                self.back("carry")
                pause = 0.0

    def lost(self, what: str, error: BaseException) -> None:
        """The other processes cannot be reached: said once per outage."""
        if what not in self._down:
            self._down[what] = str(error)
            log("warning", f"the bus cannot reach the other processes ({what}: {type(error).__name__}: {error})")

    def back(self, what: str) -> None:
        if self._down.pop(what, None) is not None:
            log("warning", f"the bus reaches the other processes again ({what})")

    async def start(self) -> None:
        if self._loop is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._wake = asyncio.Event()
        self._jobs = [self._loop.create_task(self._carry_all()), self._loop.create_task(self.listen())]

    async def stop(self) -> None:
        jobs, self._jobs = self._jobs, []
        self._loop = None
        for job in jobs:
            job.cancel()
        for job in jobs:
            try:
                await job
            except asyncio.CancelledError:
                pass
            except Exception:  # noqa: BLE001, S110 - closing connections to processes that are gone
                pass
