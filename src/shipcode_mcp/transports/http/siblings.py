"""The bus of ``--processes N`` without Redis: each event carried to the sibling processes over their relay sockets.

Each process keeps one connection to each sibling's Unix socket (:mod:`.relay`), opened on the first
event and again after it broke, on which events go as frames of their own (``EVENT``); the sibling's
relay hands them to its bus, which delivers them to its listeners. A sibling that cannot be reached
(starting, or being replaced) misses the events of that time; one that reads slower than events come,
holding :data:`MAX_BEHIND_BYTES` unread, misses them until it catches up. The processes of one machine
only: separate servers, or several machines, share a Redis (:mod:`shipcode_mcp.redisbus`).
"""

from __future__ import annotations

import asyncio

from ...sharedbus import CarriedBus
from .relay import CONNECT_SECONDS, EVENT, FRAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .relay import Relay

#: Bytes of events a sibling may leave unread on its connection: beyond, its events are dropped.
MAX_BEHIND_BYTES = 4 << 20


class SiblingBus(CarriedBus):
    """The bus among the processes of one ``--processes N`` server, over their relay sockets."""

    def __init__(self, relay: Relay, handlers: dict[bytes, Callable[[bytes], object]]) -> None:
        super().__init__()
        self.handlers.update(handlers)
        self.relay = relay
        relay.heard = self.heard
        self._writers: dict[bytes, asyncio.StreamWriter] = {}

    async def carry(self, batch: list[bytes]) -> None:
        frames = b"".join(FRAME.pack(EVENT, len(message)) + message for message in batch)
        unreached: BaseException | None = None
        for index, path in self.relay.peers.items():
            writer = self._writers.get(index)
            if writer is None or writer.is_closing():
                try:
                    _, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), CONNECT_SECONDS)
                except (OSError, TimeoutError) as error:
                    unreached = error
                    continue
                self._writers[index] = writer
            if writer.transport.get_write_buffer_size() <= MAX_BEHIND_BYTES:
                writer.write(frames)
        if unreached is not None:
            raise OSError(f"a sibling process cannot be reached: {unreached}")

    async def stop(self) -> None:
        await super().stop()
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
