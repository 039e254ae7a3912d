"""Where tasks are kept: the :class:`TaskStore` interface and the in-memory store (the default).

A task is a record, a dict of JSON values (its ``result`` the JSON bytes of the tool's result
body): ``taskId``, ``owner`` (who may see it, or None), ``status``, ``createdAt`` and
``lastUpdatedAt`` (ISO 8601), ``ttlMs``, ``pollIntervalMs``, ``expiresAt`` (ms since the epoch),
``tool``, ``arguments``, ``capabilities``, ``answers``, ``state``, ``inputRequests``,
``result`` or ``error``, and ``lease`` (ms since the epoch until which the process running the
work vouches for it; stores shared by several processes only).

A store is used from the event loop of the server. ``create`` keeps a new record, ``get`` reads
one (None: unknown or expired), ``change`` applies ``change(record) -> record | None`` atomically
(None: leave it as it is). The Redis store (:mod:`shipcode_mcp.redisstore`) shares tasks between
processes and machines.
"""

from __future__ import annotations

import time
from collections import OrderedDict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["MemoryTaskStore", "TaskLimit", "TaskStore"]

#: The statuses after which a task never changes.
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: How many tasks the memory store keeps at most, by default.
DEFAULT_MAX_TASKS = 10_000
#: How many bytes of results and arguments the memory store keeps at most, by default.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


def now_ms() -> int:
    """Milliseconds since the epoch."""
    return int(time.time() * 1000)


class TaskLimit(Exception):
    """The store is full of tasks still running: no new task can be kept."""


class TaskStore:
    """Where tasks are kept. Subclasses implement the three operations."""

    #: Whether other processes read and change the same tasks.
    shared = False
    #: Whether :meth:`read` answers at once (without waiting on anything).
    at_once = False

    async def create(self, record: dict[str, Any]) -> None:
        """Keep a new task (:class:`TaskLimit` when there is no room)."""
        raise NotImplementedError

    async def get(self, task_id: str) -> dict[str, Any] | None:
        """The task's record; None when there is none (or it expired)."""
        raise NotImplementedError

    async def change(
        self, task_id: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """Apply ``change`` to the task's record atomically; the record after it (None: no such task)."""
        raise NotImplementedError

    def read(self, task_id: str) -> dict[str, Any] | None:
        """:meth:`get`, at once: for stores whose ``at_once`` is true."""
        raise NotImplementedError

    async def close(self) -> None:
        """Let go of connections."""


def size_of(record: dict[str, Any]) -> int:
    """What a record is counted for against the memory store's byte bound: its result, and 1 KiB."""
    result = record.get("result")
    return 1024 + (len(result) if type(result) is bytes else 0)


class MemoryTaskStore(TaskStore):
    """Tasks in this process's memory: at most ``max_tasks`` and about ``max_bytes`` of results.

    When full, expired tasks go first, then the oldest finished ones; a store full of tasks still
    running refuses new ones (:class:`TaskLimit`).
    """

    def __init__(self, max_tasks: int = DEFAULT_MAX_TASKS, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if type(max_tasks) is not int or max_tasks < 1 or type(max_bytes) is not int or max_bytes < 1:
            raise ValueError("max_tasks and max_bytes are whole numbers, 1 or more")
        self.max_tasks = max_tasks
        self.max_bytes = max_bytes
        self.records: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.bytes = 0

    async def create(self, record: dict[str, Any]) -> None:
        size = size_of(record)
        if len(self.records) >= self.max_tasks or self.bytes + size > self.max_bytes:
            self._make_room(size)
        self.records[record["taskId"]] = record
        self.bytes += size

    def _make_room(self, size: int) -> None:
        moment = now_ms()
        for task_id, record in list(self.records.items()):
            if record["expiresAt"] <= moment:
                self._drop(task_id)
        for task_id, record in list(self.records.items()):
            if len(self.records) < self.max_tasks and self.bytes + size <= self.max_bytes:
                return
            if record["status"] in TERMINAL:
                self._drop(task_id)
        if len(self.records) >= self.max_tasks or self.bytes + size > self.max_bytes:
            raise TaskLimit(f"{len(self.records)} tasks are running: no room for another")

    def _drop(self, task_id: str) -> None:
        self.bytes -= size_of(self.records.pop(task_id))

    at_once = True

    async def get(self, task_id: str) -> dict[str, Any] | None:
        return self.read(task_id)

    def read(self, task_id: str) -> dict[str, Any] | None:
        record = self.records.get(task_id)
        if record is not None and record["expiresAt"] <= now_ms():
            self._drop(task_id)
            return None
        return record

    async def change(
        self, task_id: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        record = self.read(task_id)
        if record is None:
            return None
        changed = change(dict(record))
        if changed is None:
            return record
        self.bytes += size_of(changed) - size_of(record)
        self.records[task_id] = changed
        return changed
