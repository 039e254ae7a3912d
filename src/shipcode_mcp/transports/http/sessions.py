"""Legacy (2025-03-26 to 2025-11-25) sessions: opened by ``initialize``, named by ``Mcp-Session-Id``.

A session lives in the process that opened it, with its own catalogue (what the client
declared, its log level, its subscriptions), until the client deletes it, it stays idle for
``idle_seconds`` (no request in flight, no stream open), or the server stops. A session that
never got a request after its ``initialize`` (*unconfirmed*) ends after ``unconfirmed_seconds``
idle instead.

No client can take every session: a client (its caller when authenticated, else its network
address: see :func:`client_of`) holds at most ``per_client``; its next ``initialize`` ends its own
least recently used idle session (unconfirmed ones first), or is refused when all of them are in
use. At most ``max_sessions`` are open: when full, a new one ends the oldest idle unconfirmed
session, or is refused until room frees up.

A session costs little until it needs state of its own: what it declared in ``initialize`` is kept,
and its ``initialize``, ``notifications/initialized`` and the calls the compiled fast path answers at
once (which read nothing of a session) are judged by one catalogue shared by such sessions
(:attr:`SessionTable.shared`). Anything else makes the session's own catalogue first, told what the
client declared; a session that never needed one has nothing to end.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from secrets import token_urlsafe
from time import monotonic

from ...context import caller_identity
from ...limits import check_count, check_seconds
from .exchange import END, Exchange

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable
    from typing import Any

    from .served import Served

#: Sessions open at most in one process.
DEFAULT_MAX_SESSIONS = 1000
#: Sessions one client (a caller, or an address) may hold at once.
DEFAULT_MAX_SESSIONS_PER_CLIENT = 100
#: Seconds a session may stay idle before it ends.
DEFAULT_SESSION_IDLE_SECONDS = 1800.0
#: Seconds a session that never got a request after its ``initialize`` may stay idle.
DEFAULT_UNCONFIRMED_IDLE_SECONDS = 30.0


def client_of(caller: Any, client: Any) -> Hashable:
    """Who holds a session, for the per-client limit: the caller's identity when authenticated
    (:func:`~shipcode_mcp.context.caller_identity`), else the address of ``client`` (the ASGI
    scope's ``(host, port)``): an IPv4 address, or an IPv6 address's /64 network (what one host or
    one customer usually holds)."""
    if caller is not None:
        identity = caller_identity(caller)
        if identity is not None:
            return identity
    if not client:
        return ""
    host = client[0]
    return address_holder(host) if type(host) is str else host


@lru_cache(maxsize=4096)
def address_holder(host: str) -> str:
    """The holder of sessions opened from ``host`` (see :func:`client_of`); remembered, as most clients come again."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a Unix socket's path, a name
        return host
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network((address, 64), strict=False))
    return host


class NoRoom(Exception):
    """No session can be opened now: ``per_client`` says whether the client's own limit is why."""

    def __init__(self, per_client: bool) -> None:
        super().__init__(per_client)
        self.per_client = per_client


class LegacySession:
    """One client's session: its catalogue, who opened it, its GET stream, when it was last used."""

    __slots__ = ("id", "served", "declared", "_open", "caller", "client", "stream", "busy", "opened", "last_used")

    def __init__(
        self,
        session_id: str,
        open_catalogue: Callable[[Callable[[bytes], object]], Served],
        caller: Any,
        client: Hashable,
    ) -> None:
        self.id = session_id
        #: Its own catalogue, once it needs one (see :meth:`own`).
        self.served: Served | None = None
        #: The ``params`` of its ``initialize``, told to its own catalogue when that is made.
        self.declared: dict[str, Any] | None = None
        self._open = open_catalogue
        self.caller = caller
        #: Who holds it, for the per-client limit (:func:`client_of`).
        self.client = client
        #: The open GET stream, if any: what no request waits for goes there.
        self.stream: Exchange | None = None
        #: Requests in flight.
        self.busy = 0
        #: When it opened, set a microsecond early: no later request can be timed at this very value.
        self.opened = self.last_used = monotonic() - 1e-6

    def own(self) -> Served:
        """Its own catalogue, made on first need and told what the client declared in ``initialize``."""
        served = self.served
        if served is None:
            served = self.served = self._open(self.standalone)
            served.runtime.serving()  # made on the loop: a list change may come before its first request
            catalogue = served.catalogue
            if type(catalogue.routes.get("initialize")) is not bytes:  # a constant answer records nothing
                catalogue.session.initialize(self.declared)
        return served

    @property
    def confirmed(self) -> bool:
        """Whether a request came after ``initialize``: each one sets ``last_used`` (``initialize`` does not)."""
        return self.last_used != self.opened

    def standalone(self, line: bytes) -> None:
        """A line no request waits for (a list change, a resource update): on the GET stream, or dropped."""
        if self.stream is not None:
            self.stream.notify(line)

    def touch(self) -> None:
        """A request ended: the idle time starts again."""
        self.last_used = monotonic()

    def idle_since(self, now: float) -> float:
        """Seconds idle (0 while a request is in flight or a stream is open)."""
        return 0.0 if self.busy or self.stream is not None else now - self.last_used

    def in_use(self) -> bool:
        return bool(self.busy) or self.stream is not None

    def end(self) -> None:
        if self.stream is not None:
            self.stream.put(END, b"")
            self.stream = None
        if self.served is not None:
            self.served.end()


class SessionTable:
    """The open sessions of one process."""

    def __init__(
        self,
        open_catalogue: Callable[[Callable[[bytes], object]], Served],
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS,
        per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT,
        unconfirmed_seconds: float = DEFAULT_UNCONFIRMED_IDLE_SECONDS,
    ) -> None:
        check_count(max_sessions, "max_sessions")
        check_count(per_client, "max_sessions_per_client")
        check_seconds(idle_seconds, "session_idle_seconds")
        check_seconds(unconfirmed_seconds, "unconfirmed_idle_seconds")
        self._open_catalogue = open_catalogue
        self._shared: Served | None = None
        #: What begins every session id here: "" in one process; with several, this process's mark (:mod:`.relay`).
        self.prefix = ""
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.per_client = per_client
        self.unconfirmed_seconds = unconfirmed_seconds
        #: Idle seconds below which no session has ended: the one comparison a request pays.
        self._shortest_idle = min(idle_seconds, unconfirmed_seconds)
        self.sessions: dict[str, LegacySession] = {}
        #: Each client's sessions, by id, oldest first.
        self.clients: dict[Hashable, dict[str, LegacySession]] = {}

    def open(self, caller: Any, client: Hashable) -> LegacySession:
        """A new session for ``caller``, held by ``client``; :class:`NoRoom` when there is none."""
        held = self.clients.get(client)
        if held is not None and len(held) >= self.per_client:
            self._make_room(held.values(), NoRoom(True))
        if len(self.sessions) >= self.max_sessions:
            self.sweep()
            if len(self.sessions) >= self.max_sessions:
                self._make_room((s for s in self.sessions.values() if not s.confirmed), NoRoom(False))
        session_id = self.prefix + token_urlsafe(24)
        session = LegacySession(session_id, self._open_catalogue, caller, client)
        self.sessions[session_id] = session
        self.clients.setdefault(client, {})[session_id] = session
        return session

    def _make_room(self, candidates: Iterable[LegacySession], refusal: NoRoom) -> None:
        """End the least recently used idle session among ``candidates`` (unconfirmed ones first), or raise."""
        idle = [session for session in candidates if not session.in_use()]
        if not idle:
            raise refusal
        self.close(min(idle, key=lambda session: (session.confirmed, session.last_used)).id)

    @property
    def shared(self) -> Served:
        """The catalogue judging what reads nothing of a session (see the module), made on first use."""
        if self._shared is None:
            self._shared = self._open_catalogue(None)
            self._shared.runtime.serving()
        return self._shared

    def get(self, session_id: str, caller: Any) -> LegacySession | None:
        """The open session of that id opened by ``caller`` (None: unknown, expired, or another's)."""
        session = self.sessions.get(session_id)
        if session is None:
            return None
        now = monotonic()
        idle = session.idle_since(now)
        if idle > self._shortest_idle and self.expired(session, idle):
            self.close(session_id)
            return None
        if session.caller != caller:
            return None
        session.last_used = now  # a request arrived: the idle time starts again
        return session

    def expired(self, session: LegacySession, idle: float) -> bool:
        return idle > (self.idle_seconds if session.confirmed else self.unconfirmed_seconds)

    def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            held = self.clients[session.client]
            del held[session_id]
            if not held:
                del self.clients[session.client]
            session.end()

    def sweep(self) -> None:
        """End every session idle for too long."""
        now = monotonic()
        for session_id, session in list(self.sessions.items()):
            if self.expired(session, session.idle_since(now)):
                self.close(session_id)

    def close_all(self) -> None:
        for session_id in list(self.sessions):
            self.close(session_id)
