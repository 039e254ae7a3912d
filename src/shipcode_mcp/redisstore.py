"""Tasks kept in Redis (redis-py, asyncio): every process and machine sharing the Redis sees them.

``RedisTaskStore(url)`` keeps each task under ``<prefix><taskId>`` as one JSON value that Redis
expires with the task (``PX``). ``change`` is optimistic: ``WATCH``, read, ``MULTI``/``SET``, retried
when another process changed the task meanwhile. redis-py is imported only when such a store is
made (``pip install "shipcode-mcp[redis]"``).
"""

from __future__ import annotations

from orjson import dumps, loads

from .taskstore import TaskStore, now_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["RedisTaskStore"]

#: What begins every key of a task, by default.
DEFAULT_PREFIX = "shipcode-mcp:task:"


def encode(record: dict[str, Any]) -> bytes:
    """A record as stored: its result's JSON bytes as text."""
    result = record.get("result")
    if type(result) is bytes:
        record = {**record, "result": result.decode()}
    return dumps(record)


def decode(data: bytes) -> dict[str, Any]:
    """A stored record, its result back to JSON bytes."""
    record = loads(data)
    result = record.get("result")
    if type(result) is str:
        record["result"] = result.encode()
    return record


class RedisTaskStore(TaskStore):
    """Tasks in Redis at ``url`` (``redis://host:port/db``), or through a ``client`` of ``redis.asyncio``."""

    shared = True

    def __init__(self, url: str | None = None, *, client: Any = None, prefix: str = DEFAULT_PREFIX) -> None:
        if (url is None) == (client is None):
            raise TypeError("RedisTaskStore takes a url or a client")
        if client is None:
            try:
                from redis import asyncio as redis
            except ImportError:
                raise TypeError('RedisTaskStore needs redis-py: pip install "shipcode-mcp[redis]"') from None
            self.url = url
            self._client = None
            self._connect = lambda: redis.from_url(url)
        else:
            self._client = client
        self.prefix = prefix

    @property
    def client(self) -> Any:
        """The connection pool, made on first use (on the loop that serves)."""
        if self._client is None:
            self._client = self._connect()
        return self._client

    def key(self, task_id: str) -> str:
        return self.prefix + task_id

    async def create(self, record: dict[str, Any]) -> None:
        ttl = max(1, record["expiresAt"] - now_ms())
        await self.client.set(self.key(record["taskId"]), encode(record), px=ttl, nx=True)

    async def get(self, task_id: str) -> dict[str, Any] | None:
        data = await self.client.get(self.key(task_id))
        return None if data is None else decode(data)

    async def change(
        self, task_id: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        from redis.exceptions import WatchError

        key = self.key(task_id)
        async with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    data = await pipe.get(key)
                    if data is None:
                        return None
                    record = decode(data)
                    changed = change(dict(record))
                    if changed is None:
                        await pipe.unwatch()
                        return record
                    pipe.multi()
                    pipe.set(key, encode(changed), keepttl=True)
                    await pipe.execute()
                    return changed
                except WatchError:
                    continue

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
