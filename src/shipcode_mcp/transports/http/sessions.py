"""Legacy (2025-03-26 to 2025-11-25) sessions: opened by ``initialize``, named by ``Mcp-Session-Id``.

A session lives in the process that opened it, with its own catalogue (what the client
declared, its log level, its subscriptions), until the client deletes it, it stays idle for
``idle_seconds`` (no request in flight, no stream open), or the server stops. At most
``max_sessions`` are open: beyond that a new one is refused (503) until room frees up.
"""

from __future__ import annotations

import secrets
from time import monotonic

from .exchange import END, LINE, Exchange

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .served import Served

#: Sessions open at most in one process.
DEFAULT_MAX_SESSIONS = 1000
#: Seconds a session may stay idle before it ends.
DEFAULT_SESSION_IDLE_SECONDS = 1800.0


class LegacySession:
    """One client's session: its catalogue, who opened it, its GET stream, when it was last used."""

    __slots__ = ("id", "served", "caller", "stream", "busy", "last_used")

    def __init__(self, session_id: str, served: Served, caller: Any) -> None:
        self.id = session_id
        self.served = served
        self.caller = caller
        #: The open GET stream, if any: what no request waits for goes there.
        self.stream: Exchange | None = None
        #: Requests in flight.
        self.busy = 0
        self.last_used = monotonic()

    def standalone(self, line: bytes) -> None:
        """A line no request waits for (a list change, a resource update): on the GET stream, or dropped."""
        if self.stream is not None:
            self.stream.put(LINE, line)

    def touch(self) -> None:
        """A request ended: the idle time starts again."""
        self.last_used = monotonic()

    def idle_since(self, now: float) -> float:
        """Seconds idle (0 while a request is in flight or a stream is open)."""
        return 0.0 if self.busy or self.stream is not None else now - self.last_used

    def end(self) -> None:
        if self.stream is not None:
            self.stream.put(END, b"")
            self.stream = None
        self.served.end()


class SessionTable:
    """The open sessions of one process."""

    def __init__(
        self,
        open_catalogue: Callable[[Callable[[bytes], object]], Served],
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS,
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        if not idle_seconds > 0:
            raise ValueError("session_idle_seconds must be more than 0")
        self._open_catalogue = open_catalogue
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.sessions: dict[str, LegacySession] = {}

    def open(self, caller: Any) -> LegacySession | None:
        """A new session for ``caller``, or None when the table is full."""
        if len(self.sessions) >= self.max_sessions:
            self.sweep()
            if len(self.sessions) >= self.max_sessions:
                return None
        session_id = secrets.token_urlsafe(24)
        holder: list[LegacySession] = []
        served = self._open_catalogue(lambda line: holder[0].standalone(line))
        session = LegacySession(session_id, served, caller)
        holder.append(session)
        self.sessions[session_id] = session
        return session

    def get(self, session_id: str, caller: Any) -> LegacySession | None:
        """The open session of that id opened by ``caller`` (None: unknown, expired, or another's)."""
        session = self.sessions.get(session_id)
        if session is None:
            return None
        now = monotonic()
        if session.idle_since(now) > self.idle_seconds:
            self.close(session_id)
            return None
        if session.caller != caller:
            return None
        session.last_used = now  # a request arrived: the idle time starts again
        return session

    def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.end()

    def sweep(self) -> None:
        """End every session idle for too long."""
        now = monotonic()
        for session_id, session in list(self.sessions.items()):
            if session.idle_since(now) > self.idle_seconds:
                self.close(session_id)

    def close_all(self) -> None:
        for session_id in list(self.sessions):
            self.close(session_id)
