"""Request bodies read whole: within the message limit, and within a set time, one timer watching every read.

A read that passes its deadline is cancelled and ends in :class:`BodyTimeout`. The timer runs
only while some body is being read and looks every eighth of the time allowed (at most every
second), so a late body is noticed at most that much after its deadline. Arming one timer per
request would cost more than judging a small request.
"""

from __future__ import annotations

import asyncio
from asyncio import current_task
from threading import get_ident

from ...limits import DEFAULT_BODY_SECONDS, check_seconds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The longest interval between two looks at the deadlines.
MAX_TICK_SECONDS = 1.0


class BodyTimeout(Exception):
    """The request body did not arrive whole in time."""


class BodyTooLarge(Exception):
    """The request body exceeds the message limit."""


class ClientGone(Exception):
    """The client disconnected."""


class BodyDeadlines:
    """The deadlines of the bodies being read (one per app)."""

    def __init__(self, seconds: float = DEFAULT_BODY_SECONDS) -> None:
        self.seconds = check_seconds(seconds, "body_timeout")
        self.tick = min(seconds / 8, MAX_TICK_SECONDS)
        #: Each reading task's deadline (event-loop time).
        self.reading: dict[asyncio.Task, float] = {}
        #: Tasks cancelled for being late, until they see it.
        self.late: set[asyncio.Task] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0

    async def read(self, receive: Callable[[], Any], limit: int, declared: bytes | None) -> bytes:
        """The whole request body; :class:`BodyTooLarge` as soon as it is known to exceed ``limit`` (the
        ``Content-Length`` value ``declared`` may tell at once), :class:`BodyTimeout` when it is not whole
        by its deadline, :class:`ClientGone` when the client leaves first."""
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            raise BodyTooLarge
        # The clock of the current task's body starts. The loop of the last body, when it runs in this
        # thread, is the one running now: asking it for its task spares asking which loop runs (a system
        # call per request on Python 3.11).
        task = current_task(self._loop) if self._thread == get_ident() else None
        if task is None:
            task = self._adopt()
        reading = self.reading
        reading[task] = self._loop.time() + self.seconds
        if self._timer is None:
            self._timer = self._loop.call_later(self.tick, self._sweep)
        try:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            body = message.get("body", b"")
            size = len(body)
            if size > limit:
                raise BodyTooLarge
            if not message.get("more_body", False):  # the usual case: the whole body at once
                return body
            chunks = [body]
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise BodyTooLarge
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        except asyncio.CancelledError:
            if self.expired(task):
                raise BodyTimeout from None
            raise
        finally:
            reading.pop(task, None)

    def _adopt(self) -> asyncio.Task:
        """The current task, on a loop (or thread) other than the last body's: its timer starts anew there."""
        task = current_task()
        loop = task.get_loop()
        if loop is not self._loop:
            self._loop = loop
            self._timer = None
        self._thread = get_ident()
        return task

    def expired(self, task: asyncio.Task) -> bool:
        """Whether the task's cancellation came from its deadline alone (it is then taken back)."""
        if task not in self.late:
            return False
        self.late.discard(task)
        return task.uncancel() == 0

    def _sweep(self) -> None:
        now = self._loop.time()
        for task, deadline in list(self.reading.items()):
            if deadline <= now:
                del self.reading[task]
                self.late.add(task)
                task.cancel()
        self._timer = self._loop.call_later(self.tick, self._sweep) if self.reading else None
