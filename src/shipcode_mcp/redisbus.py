"""The bus through Redis (redis-py, asyncio): every process and machine sharing the Redis hears every event.

``RedisBus(url)`` delivers an event to this process's listeners at once, as the in-process bus does,
then publishes it on one Redis channel (``PUBLISH``, in batches), which every process sharing the Redis
subscribes to; each delivers what the others published to its own listeners. Redis gone: nothing fails;
the events of the time it is away reach the listeners of the process where they happened only (Redis
keeps no published message for a subscriber that is not connected); both connections are tried again,
and the log says when Redis is lost and when it is back (:class:`~shipcode_mcp.sharedbus.CarriedBus`).
redis-py is imported only when such a bus is made (``pip install "shipcode-mcp[redis]"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets

from .sharedbus import DEFAULT_MAX_UNSENT, RETRY_SECONDS, CarriedBus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RedisBus"]

#: The channel every process publishes on and listens to, by default.
DEFAULT_CHANNEL = "shipcode-mcp:bus"
#: Seconds to connect, and for a command to Redis to answer.
CONNECT_SECONDS = 2.0


class RedisBus(CarriedBus):
    """The bus through the Redis at ``url`` (``redis://host:port/db``; ``rediss://`` for TLS)."""

    def __init__(self, url: str, *, channel: str = DEFAULT_CHANNEL, max_unsent: int = DEFAULT_MAX_UNSENT) -> None:
        super().__init__(max_unsent)
        try:
            from redis import asyncio as redis
        except ImportError:
            raise TypeError('RedisBus needs redis-py: pip install "shipcode-mcp[redis]"') from None
        redis.ConnectionPool.from_url(url)  # a url it cannot read: ValueError now, not when serving
        self._redis = redis
        self.url = url
        self.channel = channel
        #: What begins each message this process publishes: it skips its own when Redis hands them back.
        self.origin = b""
        self._publisher: Any = None
        #: Set once the first attempt to subscribe ended (subscribed, or Redis found away).
        self._tried: asyncio.Event | None = None

    def client(self, **options: Any) -> Any:
        return self._redis.from_url(self.url, socket_connect_timeout=CONNECT_SECONDS, socket_keepalive=True, **options)

    async def carry(self, batch: list[bytes]) -> None:
        if self._publisher is None:
            self._publisher = self.client(socket_timeout=CONNECT_SECONDS)
        origin = self.origin
        if len(batch) == 1:
            await self._publisher.publish(self.channel, origin + batch[0])
            return
        async with self._publisher.pipeline(transaction=False) as pipe:
            for message in batch:
                pipe.publish(self.channel, origin + message)
            await pipe.execute()

    async def listen(self) -> None:
        """Deliver what the other processes publish; subscribe again whenever the connection was lost."""
        client = None
        pause = 0.0
        try:
            client = self.client(health_check_interval=30)
            while True:
                pubsub = client.pubsub(ignore_subscribe_messages=True)
                try:
                    await pubsub.subscribe(self.channel)
                    self.back("listen")
                    pause = 0.0
                    self._tried_once()
                    while True:
                        message = await pubsub.get_message(timeout=None)
                        if message is not None:
                            self._heard(message["data"])
                except Exception as error:  # noqa: BLE001 - Redis gone (or worse): said, tried again
                    self.lost("listen", error)
                    self._tried_once()
                finally:
                    with contextlib.suppress(Exception):  # closing a connection to a Redis that is gone
                        await pubsub.aclose()
                pause = min(RETRY_SECONDS, max(0.1, pause * 2))
                await asyncio.sleep(pause)
        finally:
            self._tried_once()  # serving never waits on a listener that ended
            if client is not None:
                await client.aclose()

    def _tried_once(self) -> None:
        if self._tried is not None:
            self._tried.set()

    def _heard(self, data: bytes) -> None:
        """One message of the channel: another process's event, delivered here (this process's own skipped)."""
        if not data.startswith(self.origin):
            self.heard(data[len(self.origin) :])

    async def start(self) -> None:
        """Connect and subscribe: serving begins once subscribed (or once Redis was found away)."""
        if self._loop is not None:
            return
        self.origin = secrets.token_hex(8).encode()  # per process, made where it serves
        self._tried = asyncio.Event()
        await super().start()
        await self._tried.wait()

    async def stop(self) -> None:
        await super().stop()
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            try:
                await publisher.aclose()
            except Exception:  # noqa: BLE001, S110 - closing a connection to a Redis that is gone
                pass
