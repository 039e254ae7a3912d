"""The MCP endpoint as a plain ASGI 3 application: both eras of Streamable HTTP on one path.

- 2026-07-28 (a request whose ``MCP-Protocol-Version`` header is not a handshake version, or
  any request to an app that speaks only 2026-07-28): POST only; headers checked against the
  body (:mod:`.headers`); the HTTP status follows the answer's error code; a client that
  disconnects cancels its request.
- 2025-03-26 to 2025-11-25: ``initialize`` opens a session (:mod:`.sessions`); its requests
  carry ``Mcp-Session-Id``; GET opens its stream, DELETE ends it; requests to the client travel
  on the stream of the request that asks, their answers are POSTed back.

An answer given with nothing before it is ``application/json``; when notifications (or requests
to the client) precede it, or the client accepts only ``text/event-stream``, the response is an
event stream that ends with it. A call still running when the server stops (uvicorn cancels what
is left when its grace period ends) is answered with a JSON-RPC error saying so.
"""

from __future__ import annotations

import asyncio

import shipcode_mcp.transports.http.replies as replies

from ...context import CALLER, HTTP_SCOPE
from ...lifespan import LifespanFailed, enter, leave, report
from ...limits import (
    DEFAULT_BODY_SECONDS,
    DEFAULT_HEAD_SECONDS,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_HEAD_BYTES,
    DEFAULT_WORKERS,
    check_count,
    check_seconds,
)
from ...lines import NOTIFICATION, REQUEST
from ...protocol import (
    DEFAULT_MAX_MESSAGE_BYTES,
    INITIALIZED_NOTIFICATION,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    LEGACY_VERSIONS,
    RESPONSE_HEAD,
    RpcError,
    error_tail,
)
from ..workers import WorkerPool
from ._headerscan import fast_fields
from .auth import WELL_KNOWN, BearerAuth, bearer_token
from .deadlines import BodyDeadlines, BodyTimeout, BodyTooLarge, ClientGone
from .direct import DirectPath
from .exchange import ANSWER, END, LINE, Gate
from .guard import REFUSALS, Guard, accepts, post_verdict
from .headers import RequestHeaders, check_request, mismatch
from .posts import Post
from .served import Served, fast_path
from .sessions import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    DEFAULT_SESSION_IDLE_SECONDS,
    DEFAULT_UNCONFIRMED_IDLE_SECONDS,
    NoRoom,
    SessionTable,
    client_of,
)
from .stopping import OpenStreams

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ...app import Server
    from .exchange import Exchange
    from .relay import Relay
    from .sessions import LegacySession

#: Seconds between keep-alive comments on a quiet long-lived stream.
KEEPALIVE_SECONDS = 15.0
UNSUPPORTED_VERSION = -32022
#: Sent with 413 and 408, which come before the body is whole: the connection ends, the rest is never read.
CLOSE = [(b"connection", b"close")]
#: The answer to a request for any other path.
NOT_FOUND = replies.refusal_body(INVALID_REQUEST, "Not Found")
#: How a call still running when the server stops is answered (after its request's id).
SHUTDOWN_TAIL = error_tail(INTERNAL_ERROR, "Server shutting down: the request was cancelled")


class McpHttpApp:
    """The ASGI application of an MCP app (see :func:`http_app`)."""

    def __init__(
        self,
        app: Server,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_message_bytes: int | None = None,
        auth: Callable[[str], Any] | None = None,
        resource: str | None = None,
        authorization_servers: list[str] | None = None,
        scopes: list[str] | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        session_idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS,
        max_sessions_per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT,
        unconfirmed_idle_seconds: float = DEFAULT_UNCONFIRMED_IDLE_SECONDS,
        max_concurrency: int | None = None,
        workers: int | None = None,
        body_timeout: float = DEFAULT_BODY_SECONDS,
        public_url: str | None = None,
        max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES,
        head_timeout: float = DEFAULT_HEAD_SECONDS,
    ) -> None:
        if type(path) is not str or not path.startswith("/"):
            raise ValueError("path must start with /")
        self.app = app
        self.path = path
        self.guard = Guard(allowed_hosts, allowed_origins, public_url)
        self.max = DEFAULT_MAX_MESSAGE_BYTES if max_message_bytes is None else max_message_bytes
        self.max_concurrency = DEFAULT_MAX_CONCURRENCY if max_concurrency is None else max_concurrency
        self.workers = DEFAULT_WORKERS if workers is None else workers
        #: The request heads' limits, for the server's protocol (``--http`` serves with them).
        self.head_timeout = check_seconds(head_timeout, "head_timeout")
        check_count(self.max, "max_message_bytes")
        check_count(self.max_concurrency, "max_concurrency")
        check_count(self.workers, "workers")
        self.max_head_bytes = check_count(max_head_bytes, "max_head_bytes")
        self.deadlines = BodyDeadlines(body_timeout)
        self.auth = None
        if auth is not None:
            self.auth = BearerAuth(auth, resource, authorization_servers, scopes)
        self.sessions = SessionTable(
            self._legacy_catalogue,
            max_sessions,
            session_idle_seconds,
            max_sessions_per_client,
            unconfirmed_idle_seconds,
        )
        self.versions = app.protocol_versions
        self.legacy = any(version in LEGACY_VERSIONS for version in self.versions)
        self.modern_spoken = not all(version in LEGACY_VERSIONS for version in self.versions)
        #: The ``MCP-Protocol-Version`` values of the legacy versions spoken.
        self.legacy_spoken = frozenset(version.encode() for version in self.versions if version in LEGACY_VERSIONS)
        self._pool: WorkerPool | None = None
        self._shared: Served | None = None
        #: Bounds the deferred work in flight across every catalogue of the app.
        self.gate = Gate(self.max_concurrency)
        #: ``subscriptions/listen`` streams open.
        self.listening = 0
        #: The open streams of notifications, ended as soon as the server starts to stop.
        self.streams = OpenStreams(SHUTDOWN_TAIL)
        #: What ``--http``'s connections answer below ASGI (None: every request comes through ASGI).
        self.direct = DirectPath(self) if fast_path() and self.auth is None else None
        #: This process among the processes of one server, which relay each other's sessions' requests
        #: (:mod:`.relay`); None in a server of one process.
        self.relay: Relay | None = None

    # -- what serves ---------------------------------------------------------------------------

    def pool(self) -> WorkerPool:
        if self._pool is None:
            self._pool = WorkerPool(self.workers)
        return self._pool

    def shared(self) -> Served:
        """The catalogue serving 2026-07-28 requests and refusing malformed bodies (made on first use)."""
        if self._shared is None:
            self._shared = Served(self.app, self.max, self.pool, self.gate, all_modern=self.modern_spoken)
        return self._shared

    def _legacy_catalogue(self, standalone: Callable[[bytes], object]) -> Served:
        return Served(self.app, self.max, self.pool, self.gate, standalone=standalone)

    # -- ASGI ----------------------------------------------------------------------------------

    async def other(self, kind: str, receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        """What is not HTTP: the lifespan (the shared catalogue is made at start-up); anything else is closed."""
        if kind == "lifespan":
            await self.lifespan(receive, send)
        else:  # a websocket, say: not served here
            await send({"type": "websocket.close", "code": 1000})

    async def lifespan(self, receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        """The ASGI lifespan: start-up enters the app's lifespan (:mod:`shipcode_mcp.lifespan`), shutdown ends
        every session, then leaves it. A lifespan that raises is said on stderr, and the server told."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except LifespanFailed as failed:
                    report(failed.args[0])
                    await send({"type": "lifespan.startup.failed", "message": ""})  # said once, above
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await self.stop()
                except LifespanFailed as failed:
                    report(failed.args[0])
                    await send({"type": "lifespan.shutdown.failed", "message": ""})
                    return
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def start(self) -> None:
        """Ready to serve: the shared catalogue made, the app's lifespan entered (a host app that mounts
        this one, and so gets no ASGI lifespan of its own, calls it from its lifespan)."""
        self.shared()
        if self.relay is not None:
            self.sessions.prefix = await self.relay.start(self)
            if not self.app.bus.shared:  # without Redis, the processes tell each other over their relay sockets
                from .siblings import SiblingBus

                self.app.bus = SiblingBus(self.relay, self.app.bus.handlers)
        await self.app.bus.start()
        await enter(self.app)

    async def stop(self) -> None:
        """Serving ends: every session ended, then the app's lifespan left."""
        if self.relay is not None:
            self.relay.stop()
        self.sessions.close_all()
        await self.app.bus.stop()
        await leave(self.app)

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.other(scope["type"], receive, send)
            return
        root = scope.get("root_path")
        route = scope["path"]
        if root and route.startswith(root):
            route = route[len(root) :]
        headers = RequestHeaders(scope["headers"])
        if headers.repeated is not None:
            repeated = headers.repeated_once_only()
            if repeated is not None:
                await replies.refuse(
                    send, 400, INVALID_REQUEST, f"Bad Request: {repeated} header appears more than once"
                )
                return
        first = headers.first
        server = scope.get("server")
        refused = self.guard.refusal(
            first.get(b"host"), first.get(b"origin"), server[0] if server else None, scope.get("scheme", "http")
        )
        if refused:
            await replies.refuse(send, refused, INVALID_REQUEST, REFUSALS[refused])
            return
        if self.relay is not None and b"mcp-session-id" in first:
            owner = self.relay.owner(first[b"mcp-session-id"])
            if owner is not None:  # another process holds the session: it serves the request, checks and all
                await self.relay.forward(owner, scope, receive, send)
                return
        caller = token = None
        if self.auth is not None:
            root = root or ""
            if route in (WELL_KNOWN, WELL_KNOWN + self.path):
                await self.resource_metadata(scope, send, headers, root)
                return
            if route == self.path:
                bearer = bearer_token(headers.get(b"authorization"))
                caller = await self.auth.caller(bearer)
                if caller is None:
                    await self.unauthorized(scope, send, headers, root, bearer is not None)
                    return
                token = CALLER.set(caller)
        if route != self.path:
            await replies.reply(send, 404, NOT_FOUND)
            return
        request = HTTP_SCOPE.set(scope)  # a Context's request headers
        try:
            method = scope["method"]
            if method == "POST":
                await self.post(receive, send, headers, caller, scope)
            elif method in ("GET", "DELETE") and self.legacy and b"mcp-session-id" in first:
                await (self.get if method == "GET" else self.delete)(receive, send, headers, caller)
            else:
                allow = b"GET, POST, DELETE" if self.legacy else b"POST"
                await replies.refuse(send, 405, INVALID_REQUEST, "Method Not Allowed", [(b"allow", allow)])
        finally:
            HTTP_SCOPE.reset(request)
            if token is not None:
                CALLER.reset(token)

    async def unauthorized(
        self, scope: dict[str, Any], send: Callable[..., Any], headers: RequestHeaders, root: str, presented: bool
    ) -> None:
        """401, with where to get a token (and ``error="invalid_token"`` when one was ``presented``)."""
        base = self.base_url(scope, headers)
        await replies.refuse(
            send,
            401,
            INVALID_REQUEST,
            "Unauthorized: a valid bearer token is required",
            [(b"www-authenticate", self.auth.challenge(base, root + self.path, presented))],
        )

    def base_url(self, scope: dict[str, Any], headers: RequestHeaders) -> str:
        """The server's own origin: the public URL, else the request's scheme and (validated) Host."""
        return self.guard.own_origin(scope.get("scheme", "http"), headers.first.get(b"host"), scope.get("server"))

    async def resource_metadata(
        self, scope: dict[str, Any], send: Callable[..., Any], headers: RequestHeaders, root: str
    ) -> None:
        await replies.reply(send, 200, self.auth.metadata(self.base_url(scope, headers), root + self.path))

    # -- POST ------------------------------------------------------------------------------------

    async def post(
        self,
        receive: Callable[[], Any],
        send: Callable[..., Any],
        headers: RequestHeaders,
        caller: Any,
        scope: dict[str, Any],
    ) -> None:
        first = headers.first
        refused, json_ok, stream_ok = post_verdict(
            first.get(b"content-type"), first.get(b"content-encoding"), first.get(b"accept")
        )
        if refused is not None:
            await replies.refuse(send, refused[0], INVALID_REQUEST, refused[1])
            return
        try:
            body = await self.deadlines.read(receive, self.max, first.get(b"content-length"))
        except BodyTooLarge:
            message = f"Payload Too Large: the limit is {self.max} bytes"
            await replies.refuse(send, 413, INVALID_REQUEST, message, CLOSE)
            return
        except BodyTimeout:
            message = f"Request Timeout: the body did not arrive within {self.deadlines.seconds:g} s"
            await replies.refuse(send, 408, INVALID_REQUEST, message, CLOSE)
            return
        except ClientGone:
            return
        shared = self.shared()  # made on first use: an event loop runs
        if headers.repeated is None and json_ok and not self.gate.full():
            quick = self.at_once(shared, first, body, caller)
            if quick is not None:
                start, end = replies.json_response(200, *quick)
                await send(start)
                await send(end)
                return
        post = Post(receive, send, headers, body, json_ok, stream_ok, caller, self.max)
        if post.refusal is not None:
            await replies.reply(send, 400, post.refusal)
            return
        try:
            version = headers.one(b"mcp-protocol-version", "MCP-Protocol-Version")
        except RpcError as error:
            await replies.reply(send, 400, RESPONSE_HEAD + post.rid + error.tail)
            return
        modern = self.modern_spoken and (not self.legacy or (version is not None and version not in LEGACY_VERSIONS))
        negotiating = post.method == "initialize" and not modern
        if version is not None and version not in self.versions and not negotiating:
            error = RpcError(
                UNSUPPORTED_VERSION,
                "Unsupported protocol version",
                {"supported": list(self.versions), "requested": version},
            )
            await replies.reply(send, 400, RESPONSE_HEAD + post.rid + error.tail)
        elif modern:
            await self.modern_post(post)
        else:
            await self.legacy_post(post, scope)

    def at_once(
        self, shared: Served, first: dict[bytes, bytes], body: bytes, caller: Any
    ) -> tuple[bytes, list[tuple[bytes, bytes]] | None] | None:
        """The compiled fast path: ``(answer, extra headers)`` of a 2026-07-28 request, or of a request of a
        legacy session, that it answers with a result at once; None when the request is to be judged in full."""
        if shared.http_modern is not None:
            fields = fast_fields(first)
            if fields is not None:
                version, method, name = fields
                answer = shared.http_modern(body, version, method, name)
                if answer is not None:
                    return answer, None
        session_id = first.get(b"mcp-session-id")
        if session_id is None or not self.speaks_legacy(first.get(b"mcp-protocol-version")):
            return None
        session = self.sessions.get(session_id.decode("latin-1"), caller)
        if session is None:
            return None
        fast = (session.served or self.sessions.shared).fast  # a plain call reads nothing of its session
        if fast is None:
            return None
        answer = fast(body)
        return None if answer is None else (answer, [(b"mcp-session-id", session_id)])

    def speaks_legacy(self, version: bytes | None) -> bool:
        """Whether a POST whose ``MCP-Protocol-Version`` header is ``version`` (None: absent) is served as the
        legacy era's, with no refusal of its version."""
        return self.legacy and (
            version is None or version in self.legacy_spoken or version.strip(b" \t") in self.legacy_spoken
        )

    async def modern_post(self, post: Post) -> None:
        if post.kind != REQUEST:  # 2026-07-28 defines no notification or response from the client over HTTP
            await replies.reply(post.send, 202)
            return
        shared = self.shared()
        try:
            if b"mcp-protocol-version" not in post.headers.first:
                raise mismatch("MCP-Protocol-Version header is missing")
            catalogue = shared.catalogue
            check_request(post.headers, post.method, post.message.get("params"), catalogue.tools, catalogue.named_by)
        except RpcError as error:
            await replies.reply(post.send, 400, RESPONSE_HEAD + post.rid + error.tail)
            return
        if post.method == "subscriptions/listen":
            await self.listen(post)
            return
        if self.gate.full():
            await self.gate.wait()
        exchange = shared.exchange()
        await self.deliver(post, exchange, shared.judge(post.parsed, exchange), True, None)

    async def listen(self, post: Post) -> None:
        """``subscriptions/listen``: a catalogue of its own, whose notifications all go to this stream.

        At most ``max_sessions`` streams are open at once (beyond: 503).
        """
        if not post.stream_ok:
            await replies.refuse(post.send, 406, INVALID_REQUEST, "Not Acceptable: accept text/event-stream")
            return
        if self.listening >= self.sessions.max_sessions:
            await replies.refuse(post.send, 503, INTERNAL_ERROR, "Service Unavailable: too many open subscriptions")
            return
        served = Served(self.app, self.max, self.pool, self.gate, all_modern=True)
        exchange = served.exchange()
        served.runtime.standalone = exchange.notify
        self.listening += 1
        try:
            answer = served.judge(post.parsed, exchange)
            if answer:
                await self.at_once_answer(post, replies.modern_status(answer, post.rid), answer, None)
                return
            await replies.open_stream(post.send)
            await self.pump(post.receive, post.send, exchange, cancel=True, keepalive=True, rid=post.rid)
        finally:
            self.listening -= 1
            served.end()

    async def legacy_post(self, post: Post, scope: dict[str, Any]) -> None:
        session_id = post.headers.get(b"mcp-session-id")
        opening = post.method == "initialize" and session_id is None
        if opening:
            try:
                session = self.sessions.open(post.caller, client_of(post.caller, scope.get("client")))
            except NoRoom as full:
                await self.no_room(post.send, full)
                return
        elif session_id is None:
            await replies.refuse(post.send, 400, INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is missing")
            return
        else:
            session = self.sessions.get(session_id, post.caller)
            if session is None:
                await replies.refuse(post.send, 404, INVALID_REQUEST, "Session not found")
                return
        extra = [(b"mcp-session-id", session.id.encode())]
        session.busy += 1
        try:
            if self.gate.full():
                await self.gate.wait()
            served = self.legacy_served(session, post, opening)
            exchange = served.exchange()
            answer = served.judge(post.parsed, exchange)
            if post.kind != REQUEST:
                await replies.reply(post.send, 202, b"", extra)
            elif opening and replies.error_code(answer, post.rid) is not None:
                self.sessions.close(session.id)
                await self.at_once_answer(post, 200, answer, None)
            else:
                await self.deliver(post, exchange, answer, False, extra)
        finally:
            session.busy -= 1
            if not opening:  # an initialize alone leaves the session unconfirmed
                session.touch()

    def legacy_served(self, session: LegacySession, post: Post, opening: bool) -> Served:
        """The catalogue judging a message of a legacy session: the shared one (which records nothing) for its
        ``initialize`` (``opening``: the session keeps what the client declared) and for what reads nothing of
        a session that has no catalogue of its own (:meth:`reads_nothing`); else its own."""
        if opening:
            session.declared = post.message.get("params")
            return self.sessions.shared
        return self.sessions.shared if self.reads_nothing(session, post) else session.own()

    @staticmethod
    def reads_nothing(session: LegacySession, post: Post) -> bool:
        """Whether a message of a session is judged by the shared catalogue: its ``notifications/initialized``
        while it has no catalogue of its own."""
        return (
            session.served is None and post.kind == NOTIFICATION and post.message["method"] == INITIALIZED_NOTIFICATION
        )

    async def no_room(self, send: Callable[..., Any], full: NoRoom) -> None:
        """The answer to an ``initialize`` for which no session can be opened."""
        if full.per_client:
            limit = self.sessions.per_client
            message = f"Too Many Requests: this client's {limit} sessions are all in use"
            await replies.refuse(send, 429, INVALID_REQUEST, message)
        else:
            await replies.refuse(send, 503, INTERNAL_ERROR, "Service Unavailable: too many open sessions")

    # -- answers -----------------------------------------------------------------------------------

    async def deliver(
        self, post: Post, exchange: Exchange, answer: bytes, modern: bool, extra: list[tuple[bytes, bytes]] | None
    ) -> None:
        """Send a judged request's answer: at once when nothing precedes it, else as the exchange goes."""
        if answer and not exchange.waiting:
            status = replies.modern_status(answer, post.rid) if modern else 200
            await self.at_once_answer(post, status, answer, extra)
            return
        if answer:
            exchange.put(ANSWER, answer)
        watcher = asyncio.ensure_future(self.watch(post.receive, exchange, modern))
        try:
            await self.respond(post, exchange, modern, extra)
        finally:
            watcher.cancel()

    async def at_once_answer(
        self, post: Post, status: int, answer: bytes, extra: list[tuple[bytes, bytes]] | None
    ) -> None:
        """An answer with nothing before it: JSON, or a stream of that one event for a client that reads only
        event streams."""
        if post.json_ok:
            await replies.reply(post.send, status, answer, extra)
        else:
            await replies.open_stream(post.send, extra)
            await replies.stream_line(post.send, answer)
            await replies.close_stream(post.send)

    async def respond(
        self, post: Post, exchange: Exchange, modern: bool, extra: list[tuple[bytes, bytes]] | None
    ) -> None:
        """Send what the exchange gives: one JSON answer, or an event stream ending with the answer; when the
        server stops first, the answer says so."""
        send = post.send
        opened = False
        try:
            kind, line = await exchange.next()
            while kind == LINE and not post.stream_ok:  # the client reads JSON only: the answer alone
                kind, line = await exchange.next()
            if exchange.closed:  # the client left
                return
            if kind == ANSWER and post.json_ok:
                status = replies.modern_status(line, post.rid) if modern else 200
                await replies.reply(send, status, line, extra)
                return
            await replies.open_stream(send, extra)
            opened = True
            while kind != END:
                await replies.stream_line(send, line)
                if kind == ANSWER:
                    break
                kind, line = await exchange.next()
            if not exchange.closed:
                await replies.close_stream(send)
        except asyncio.CancelledError:  # uvicorn's grace period for stopping has ended
            gone = exchange.closed
            exchange.leave(True)
            stopped = RESPONSE_HEAD + post.rid + SHUTDOWN_TAIL
            if not opened:
                await self.at_once_answer(post, 200, stopped, extra)
            elif not gone:
                await replies.stream_line(send, stopped)
                await replies.close_stream(send)

    async def watch(self, receive: Callable[[], Any], exchange: Exchange, cancel: bool) -> None:
        """Wait for the client to disconnect: then leave the exchange (and, when ``cancel``, stop its work)."""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                exchange.leave(cancel)
                return

    async def pump(
        self,
        receive: Callable[[], Any],
        send: Callable[..., Any],
        exchange: Exchange,
        cancel: bool,
        keepalive: bool,
        rid: bytes | None = None,
    ) -> None:
        """Stream the exchange's lines until it ends or the client leaves; keep-alive comments while quiet.

        When the server starts to stop, the stream ends (:mod:`.stopping`), with an error answering the request
        ``rid`` when given.
        """
        watcher = asyncio.ensure_future(self.watch(receive, exchange, cancel))
        self.streams.add(exchange, rid)
        try:
            while True:
                try:
                    kind, line = await asyncio.wait_for(exchange.next(), KEEPALIVE_SECONDS if keepalive else None)
                except TimeoutError:
                    await send({"type": "http.response.body", "body": replies.KEEPALIVE, "more_body": True})
                    continue
                if kind == END:
                    break
                await replies.stream_line(send, line)
                if kind == ANSWER:
                    break
            if not exchange.closed:
                await replies.close_stream(send)
        except asyncio.CancelledError:  # uvicorn's grace period for stopping has ended
            if not exchange.closed:
                if rid is not None:
                    await replies.stream_line(send, RESPONSE_HEAD + rid + SHUTDOWN_TAIL)
                await replies.close_stream(send)
        finally:
            self.streams.discard(exchange)
            watcher.cancel()

    # -- GET and DELETE (legacy sessions) ----------------------------------------------------------

    async def get(
        self, receive: Callable[[], Any], send: Callable[..., Any], headers: RequestHeaders, caller: Any
    ) -> None:
        """The session's stream: what no request waits for (list changes, resource updates)."""
        if not accepts(headers.first.get(b"accept"))[1]:
            await replies.refuse(send, 406, INVALID_REQUEST, "Not Acceptable: accept text/event-stream")
            return
        session = self.sessions.get(headers.get(b"mcp-session-id"), caller)
        if session is None:
            await replies.refuse(send, 404, INVALID_REQUEST, "Session not found")
            return
        if session.stream is not None:
            await replies.refuse(send, 409, INVALID_REQUEST, "Conflict: the session's stream is already open")
            return
        exchange = session.stream = session.own().exchange()
        try:
            await replies.open_stream(send, [(b"mcp-session-id", session.id.encode())])
            await self.pump(receive, send, exchange, cancel=False, keepalive=True)
        finally:
            if session.stream is exchange:
                session.stream = None
            session.touch()

    async def delete(
        self, receive: Callable[[], Any], send: Callable[..., Any], headers: RequestHeaders, caller: Any
    ) -> None:
        """End the session."""
        session_id = headers.get(b"mcp-session-id")
        if self.sessions.get(session_id, caller) is None:
            await replies.refuse(send, 404, INVALID_REQUEST, "Session not found")
            return
        self.sessions.close(session_id)
        await replies.reply(send, 200)
