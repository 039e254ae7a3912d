"""The bus: resource updates, list changes and task notifications, told to every listener of every process.

An event is published where it happens and delivered at once to this process's listeners (its
``subscriptions/listen`` streams and legacy sessions), by the handler its kind registered: that is all a
:class:`Bus` does, and all a server of one process needs. A shared bus (:class:`~shipcode_mcp.redisbus.RedisBus`)
also carries each event to the other processes and machines, which deliver it to their own listeners
(:mod:`shipcode_mcp.sharedbus`; see ``docs/extensions.md``, "The bus").
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["LISTS", "RESOURCE", "TASK", "Bus"]

#: Event kinds: a resource updated (its uri), a list changed (``tools``, ``prompts`` or ``resources``),
#: a task changed (see :mod:`shipcode_mcp.tasks`).
RESOURCE, LISTS, TASK = b"resource", b"lists", b"task"


class Bus:
    """The in-process bus: an event reaches the listeners of this process alone."""

    #: Whether events reach other processes too.
    shared = False

    def __init__(self) -> None:
        #: What delivers an event of each kind to this process's listeners: ``handler(payload)``.
        self.handlers: dict[bytes, Callable[[bytes], object]] = {}

    def on(self, kind: bytes, handler: Callable[[bytes], object]) -> None:
        """Deliver the events of ``kind`` with ``handler(payload)``."""
        self.handlers[kind] = handler

    def publish(self, kind: bytes, payload: bytes) -> None:
        """An event happened here: delivered to this process's listeners now (callable from any thread)."""
        self.handlers[kind](payload)

    def deliver(self, kind: bytes, payload: bytes) -> None:
        """An event from another process: delivered here when this process serves its kind."""
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(payload)

    async def start(self) -> None:
        """Serving begins in this process (on its event loop)."""

    async def stop(self) -> None:
        """Serving ends in this process."""
