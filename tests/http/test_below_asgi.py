"""HTTP below ASGI: what ``--http``'s connections answer at the protocol level is byte for byte what the ASGI app
answers, for every request shape the HTTP tests send (docs/http.md, "Answered below ASGI").

Each shape is sent to two connections of uvicorn's httptools protocol as ``--http`` serves it
(:class:`HttpConnection`), in memory: one answering below ASGI, one with that switched off (as
``SHIPCODE_MCP_HTTP_ASGI_ONLY`` does), each over a fresh app of its own. What each wrote, and whether it
closed, must be equal (session ids aside, which are random); uvicorn's ``date`` field is fixed for both.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import orjson
import pytest
import uvicorn
from support.httpwire import META, MODERN, modern_body
from uvicorn.server import ServerState

from shipcode_mcp import Server, defaults
from shipcode_mcp.transports.http import serve
from shipcode_mcp.transports.http.asgi import McpHttpApp
from shipcode_mcp.transports.http.connection import HttpConnection
from shipcode_mcp.transports.http.direct import DirectPath

MAX_BYTES = 4096
DATE = (b"date", b"Wed, 02 Dec 2026 00:00:00 GMT")
LEGACY = "2025-11-25"
HOST = {"host": "localhost:8000"}
JSON = {**HOST, "content-type": "application/json", "accept": "application/json, text/event-stream"}


def modern(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**JSON, "mcp-protocol-version": MODERN, "mcp-method": method, **extra}
    if name is not None:
        headers["mcp-name"] = name
    return headers


ECHO = modern_body("tools/call", {"name": "echo", "arguments": {"text": "below"}})
ADD = modern_body("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, rid="r")
ECHO_HEADERS = modern("tools/call", "echo")
ADD_HEADERS = modern("tools/call", "add")
PING = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
LEGACY_ECHO = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"old"}}}'
INIT = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{}}}'
    % LEGACY.encode()
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
INIT_WITH = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":'
NO_SUCH_TOOL = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}'


def head(headers: dict[str, str] | list[tuple[str, str]], method: str = "POST", target: str = "/mcp", version="1.1"):
    fields = headers.items() if isinstance(headers, dict) else headers
    lines = [f"{method} {target} HTTP/{version}", *(f"{name}: {value}" for name, value in fields)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def post(body: bytes, headers: dict[str, str] | list[tuple[str, str]], **options: str) -> bytes:
    fields = list(headers.items() if isinstance(headers, dict) else headers)
    return head([*fields, ("content-length", str(len(body)))], **options) + body


def chunked(pieces: list[bytes], headers: dict[str, str]) -> bytes:
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    return head({**headers, "transfer-encoding": "chunked"}) + chunks + b"0\r\n\r\n"


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


def in_session(session: str, **extra: str) -> dict[str, str]:
    return {**JSON, "mcp-protocol-version": LEGACY, "mcp-session-id": session, **extra}


#: Each shape: the reads the server gets, given the id of a legacy session open on its app.
SHAPES: dict[str, Callable[[str], list[bytes]]] = {
    # 2026-07-28, answered at once
    "echo": lambda s: [post(ECHO, ECHO_HEADERS)],
    "add": lambda s: [post(ADD, ADD_HEADERS)],
    "tools/list": lambda s: [post(modern_body("tools/list"), modern("tools/list"))],
    "ping 2026": lambda s: [post(modern_body("ping"), modern("ping"))],
    "notification 2026": lambda s: [post(orjson.dumps({"jsonrpc": "2.0", "method": "x", "params": {}}), JSON)],
    "mixed-case field names": lambda s: [post(ECHO, {k.title(): v for k, v in ECHO_HEADERS.items()})],
    "allowed origin": lambda s: [post(ECHO, {**ECHO_HEADERS, "origin": "http://localhost:8000"})],
    "json only accepted": lambda s: [post(ECHO, {**ECHO_HEADERS, "accept": "application/json"})],
    "event stream only accepted": lambda s: [post(ECHO, {**ECHO_HEADERS, "accept": "text/event-stream"})],
    "utf-8 charset": lambda s: [post(ECHO, {**ECHO_HEADERS, "content-type": "application/json; charset=utf-8"})],
    # bodies
    "invalid JSON": lambda s: [post(b'{"jsonrpc":', ECHO_HEADERS)],
    "empty body": lambda s: [post(b"", ECHO_HEADERS)],
    "not an object": lambda s: [post(b"[1,2]", ECHO_HEADERS)],
    "not UTF-8": lambda s: [post(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', ECHO_HEADERS)],
    "unknown tool": lambda s: [post(modern_body("tools/call", {"name": "nope"}), modern("tools/call", "nope"))],
    "bad arguments": lambda s: [post(modern_body("tools/call", {"name": "add", "arguments": {"a": "x"}}), ADD_HEADERS)],
    "body at the limit": lambda s: [post(ECHO.ljust(MAX_BYTES), ECHO_HEADERS)],
    "oversize body": lambda s: [post(ECHO.ljust(MAX_BYTES + 1), ECHO_HEADERS)],
    "chunked body": lambda s: [chunked([ECHO[:10], ECHO[10:40], ECHO[40:]], ECHO_HEADERS)],
    "chunked oversize body": lambda s: [chunked([ECHO.ljust(MAX_BYTES), b"x"], ECHO_HEADERS)],
    "body in a later read": lambda s: [post(ECHO, ECHO_HEADERS)[:-20], post(ECHO, ECHO_HEADERS)[-20:]],
    "head and body in many reads": lambda s: pieces(post(ECHO, ECHO_HEADERS), 7),
    "truncated body": lambda s: [post(ECHO, ECHO_HEADERS)[:-5]],
    "a body like a whole request, in a later read": lambda s: [
        post(post(ECHO, ECHO_HEADERS), ECHO_HEADERS)[: -len(post(ECHO, ECHO_HEADERS))],
        post(ECHO, ECHO_HEADERS),
    ],
    "a head ending like a whole request, in a later read": lambda s: [
        b"POST /other HTTP/1.1\r\nX-A: 1",
        post(ECHO, ECHO_HEADERS),
    ],
    # 2026-07-28 header rules
    "name mismatch": lambda s: [post(ECHO, modern("tools/call", "add"))],
    "method mismatch": lambda s: [post(ECHO, modern("tools/list"))],
    "version missing": lambda s: [post(ECHO, {k: v for k, v in ECHO_HEADERS.items() if k != "mcp-protocol-version"})],
    "version unknown": lambda s: [post(ECHO, {**ECHO_HEADERS, "mcp-protocol-version": "2099-01-01"})],
    "name in base64": lambda s: [post(ECHO, {**ECHO_HEADERS, "mcp-name": "=?base64?ZWNobw==?="})],
    "name with a control character": lambda s: [post(ECHO, {**ECHO_HEADERS, "mcp-name": "ec\x01ho"})],
    "meta version differs": lambda s: [
        post(
            modern_body("ping", meta={**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}), modern("ping")
        )
    ],
    # Host and Origin
    "foreign host": lambda s: [post(ECHO, {**ECHO_HEADERS, "host": "evil.example"})],
    "malformed host": lambda s: [post(ECHO, {**ECHO_HEADERS, "host": "a b"})],
    "no host": lambda s: [post(ECHO, {k: v for k, v in ECHO_HEADERS.items() if k != "host"})],
    "foreign origin": lambda s: [post(ECHO, {**ECHO_HEADERS, "origin": "http://evil.example"})],
    "null origin": lambda s: [post(ECHO, {**ECHO_HEADERS, "origin": "null"})],
    "forwarded https": lambda s: [post(ECHO, {**ECHO_HEADERS, "x-forwarded-proto": "https"})],
    "forwarded https with its origin": lambda s: [
        post(ECHO, {**ECHO_HEADERS, "x-forwarded-proto": "https", "origin": "https://localhost:8000"})
    ],
    "forwarded for": lambda s: [post(ECHO, {**ECHO_HEADERS, "x-forwarded-for": "203.0.113.9"})],
    # repeated header fields
    "content type twice": lambda s: [post(ECHO, [*ECHO_HEADERS.items(), ("content-type", "application/json")])],
    "host twice": lambda s: [post(ECHO, [*ECHO_HEADERS.items(), ("host", "localhost:8000")])],
    "accept twice": lambda s: [post(ECHO, [*ECHO_HEADERS.items(), ("accept", "application/json")])],
    "name twice": lambda s: [post(ECHO, [*ECHO_HEADERS.items(), ("mcp-name", "echo")])],
    "unread field twice": lambda s: [post(ECHO, [*ECHO_HEADERS.items(), ("x-a", "1"), ("x-a", "2")])],
    # types and encodings
    "text body": lambda s: [post(ECHO, {**ECHO_HEADERS, "content-type": "text/plain"})],
    "no content type": lambda s: [post(ECHO, {k: v for k, v in ECHO_HEADERS.items() if k != "content-type"})],
    "latin-1 charset": lambda s: [post(ECHO, {**ECHO_HEADERS, "content-type": "application/json; charset=latin-1"})],
    "gzip": lambda s: [post(ECHO, {**ECHO_HEADERS, "content-encoding": "gzip"})],
    "html accepted": lambda s: [post(ECHO, {**ECHO_HEADERS, "accept": "text/html"})],
    "expect 100-continue": lambda s: [post(ECHO, {**ECHO_HEADERS, "expect": "100-continue"})],
    # targets and methods
    "query": lambda s: [post(ECHO, ECHO_HEADERS, target="/mcp?x=1")],
    "escaped path": lambda s: [post(ECHO, ECHO_HEADERS, target="/%6Dcp")],
    "other path": lambda s: [post(ECHO, ECHO_HEADERS, target="/other")],
    "absolute form": lambda s: [post(ECHO, ECHO_HEADERS, target="http://localhost:8000/mcp")],
    "absolute form, foreign authority": lambda s: [post(ECHO, ECHO_HEADERS, target="http://evil.example/mcp")],
    "HEAD": lambda s: [head(JSON, method="HEAD")],
    "GET": lambda s: [head(JSON, method="GET")],
    "DELETE": lambda s: [head(JSON, method="DELETE")],
    "PUT": lambda s: [post(ECHO, ECHO_HEADERS, method="PUT")],
    # connections
    "connection close": lambda s: [post(ECHO, {**ECHO_HEADERS, "connection": "close"})],
    "HTTP/1.0": lambda s: [post(ECHO, ECHO_HEADERS, version="1.0")],
    "HTTP/1.0 keep-alive": lambda s: [post(ECHO, {**ECHO_HEADERS, "connection": "keep-alive"}, version="1.0")],
    "keep-alive, three requests": lambda s: [
        post(ECHO, ECHO_HEADERS),
        post(ADD, ADD_HEADERS),
        post(ECHO, ECHO_HEADERS),
    ],
    "pipelined, all at once": lambda s: [post(ECHO, ECHO_HEADERS) + post(ADD, ADD_HEADERS) + post(ECHO, ECHO_HEADERS)],
    "pipelined": lambda s: [post(ECHO, ECHO_HEADERS) + post(b"{", ECHO_HEADERS) + post(ADD, ADD_HEADERS)],
    "pipelined behind a slow answer": lambda s: [
        post(modern_body("tools/call", {"name": "nope"}), modern("tools/call", "nope")) + post(ECHO, ECHO_HEADERS) * 3
    ],
    "pipelined after close": lambda s: [post(ECHO, {**ECHO_HEADERS, "connection": "close"}) + post(ADD, ADD_HEADERS)],
    "initialize pipelined after close": lambda s: [
        post(ECHO, {**ECHO_HEADERS, "connection": "close"}) + post(INIT, JSON)
    ],
    "DELETE pipelined after close": lambda s: [
        post(ECHO, {**ECHO_HEADERS, "connection": "close"}) + head(in_session(s), method="DELETE")
    ],
    "pipelined, the last in part": lambda s: [post(ECHO, ECHO_HEADERS) + post(ADD, ADD_HEADERS)[:-3], b"3}}"],
    "too many fields": lambda s: [post(ECHO, [*ECHO_HEADERS.items(), *((f"x-{i}", "1") for i in range(100))])],
    "head too large": lambda s: [post(ECHO, {**ECHO_HEADERS, "x-pad": "p" * 70000})],
    "malformed request line": lambda s: [b"POST /mcp HTTP/9\r\n\r\n"],
    # 2025 sessions
    "session ping": lambda s: [post(PING, in_session(s))],
    "session echo": lambda s: [post(LEGACY_ECHO, in_session(s))],
    "session echo, no version header": lambda s: [
        post(LEGACY_ECHO, {k: v for k, v in in_session(s).items() if k != "mcp-protocol-version"})
    ],
    "session pipelined": lambda s: [post(PING, in_session(s)) * 2 + post(LEGACY_ECHO, in_session(s))],
    "unknown session": lambda s: [post(PING, in_session("x" * 32))],
    "no session": lambda s: [post(PING, {**JSON, "mcp-protocol-version": LEGACY})],
    "session id twice": lambda s: [post(PING, [*in_session(s).items(), ("mcp-session-id", s)])],
    "initialize": lambda s: [post(INIT, JSON)],
    "session GET without event streams": lambda s: [head(in_session(s, accept="application/json"), method="GET")],
    "session DELETE": lambda s: [head(in_session(s), method="DELETE") + post(PING, in_session(s))],
    # a session's life: initialize, notifications/initialized, DELETE
    "initialize, its version header": lambda s: [post(INIT, {**JSON, "mcp-protocol-version": LEGACY})],
    "initialize, an older version": lambda s: [post(INIT.replace(LEGACY.encode(), b"2025-03-26"), JSON)],
    "initialize, an unknown version": lambda s: [post(INIT.replace(LEGACY.encode(), b"1999-01-01"), JSON)],
    "initialize, a 2026-07-28 version header": lambda s: [post(INIT, {**JSON, "mcp-protocol-version": MODERN})],
    "initialize, an unknown version header": lambda s: [post(INIT, {**JSON, "mcp-protocol-version": "2099-01-01"})],
    "initialize in a session": lambda s: [post(INIT, in_session(s))],
    "initialize, event streams only accepted": lambda s: [post(INIT, {**JSON, "accept": "text/event-stream"})],
    "initialize, params not an object": lambda s: [post(INIT_WITH + b"[1]}", JSON)],
    "initialize, no params": lambda s: [post(INIT_WITH.replace(b',"params":', b"}"), JSON)],
    "initialize as a notification": lambda s: [post(b'{"jsonrpc":"2.0","method":"initialize","params":{}}', JSON)],
    "initialize, foreign host": lambda s: [post(INIT, {**JSON, "host": "evil.example"})],
    "initialize, connection close": lambda s: [post(INIT, {**JSON, "connection": "close"}) + post(PING, in_session(s))],
    "initialize, HTTP/1.0": lambda s: [post(INIT, JSON, version="1.0")],
    "initialized": lambda s: [post(INITIALIZED, in_session(s))],
    "initialized, no version header": lambda s: [
        post(INITIALIZED, {k: v for k, v in in_session(s).items() if k != "mcp-protocol-version"})
    ],
    "initialized, unknown session": lambda s: [post(INITIALIZED, in_session("x" * 32))],
    "initialized, no session": lambda s: [post(INITIALIZED, {**JSON, "mcp-protocol-version": LEGACY})],
    "initialized after the session made its own catalogue": lambda s: [
        post(NO_SUCH_TOOL, in_session(s)) + post(INITIALIZED, in_session(s))
    ],
    "another notification": lambda s: [post(b'{"jsonrpc":"2.0","method":"notifications/x"}', in_session(s))],
    "session life, pipelined": lambda s: [
        post(INIT, JSON)
        + post(INITIALIZED, in_session(s))
        + post(LEGACY_ECHO, in_session(s))
        + head(in_session(s), method="DELETE")
    ],
    "session DELETE alone": lambda s: [head(in_session(s), method="DELETE")],
    "session DELETE twice": lambda s: [head(in_session(s), method="DELETE") * 2],
    "session DELETE, unknown session": lambda s: [head(in_session("x" * 32), method="DELETE")],
    "session DELETE with a body": lambda s: [post(b"{}", in_session(s), method="DELETE")],
    "session DELETE, foreign host": lambda s: [head(in_session(s, host="evil.example"), method="DELETE")],
    "session DELETE, foreign origin": lambda s: [head(in_session(s, origin="http://evil.example"), method="DELETE")],
    "session DELETE, connection close": lambda s: [
        head(in_session(s, connection="close"), method="DELETE") + post(PING, in_session(s))
    ],
    "session DELETE, HTTP/1.0": lambda s: [head(in_session(s), method="DELETE", version="1.0")],
    "session DELETE, id twice": lambda s: [head([*in_session(s).items(), ("mcp-session-id", s)], method="DELETE")],
    "session DELETE, a query": lambda s: [head(in_session(s), method="DELETE", target="/mcp?x=1")],
    "session DELETE, expect 100-continue": lambda s: [
        post(b"{}", in_session(s, expect="100-continue"), method="DELETE")
    ],
}


def make_app() -> Server:
    app = Server("below", version="1.0.0")
    app.tool()(defaults.echo)
    app.tool()(defaults.add)
    return app


def verify(token: str) -> dict[str, str]:
    if token != "good":
        raise ValueError("not a token")
    return {"sub": "ada"}


class Wire:
    """A connection's transport in memory: what was written, and whether it was closed."""

    def __init__(self, loop: asyncio.AbstractEventLoop, address: tuple[str, int]) -> None:
        self.loop = loop
        self.address = address
        self.out = bytearray()
        self.closed = False
        self.protocol: HttpConnection | None = None

    def get_extra_info(self, name: str, default: object = None) -> object:
        return {"sockname": self.address, "peername": ("127.0.0.1", 40000)}.get(name, default)

    def write(self, data: bytes) -> None:
        if not self.closed:
            self.out += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.loop.call_soon(self.protocol.connection_lost, None)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class Served:
    """One app served over in-memory connections of ``--http``'s protocol."""

    def __init__(
        self, direct: bool, address: tuple[str, int] = ("127.0.0.1", 8000), keep_alive: float = 5, **options: object
    ) -> None:
        self.address = address
        self.loop = asyncio.new_event_loop()
        self.asgi = make_app().http_app(max_message_bytes=MAX_BYTES, **options)
        # with uvicorn's proxy-headers middleware, as served
        self.config = uvicorn.Config(self.asgi, lifespan="off", timeout_keep_alive=keep_alive)
        self.config.load()
        self.state = ServerState()
        self.state.default_headers = [DATE]
        self.direct = direct
        self.wires: list[Wire] = []

    def connect(self) -> tuple[HttpConnection, Wire]:
        connection = HttpConnection(self.config, self.state, {}, self.loop, direct=self.direct)
        connection.access_log = False  # as served (no access log unless --log-level info), whatever pytest logs
        wire = Wire(self.loop, self.address)
        wire.protocol = connection
        connection.connection_made(wire)
        self.wires.append(wire)
        return connection, wire

    def feed(self, connection: HttpConnection, data: bytes, then: Callable[[], object] = lambda: None) -> object:
        """``connection`` reads ``data`` as uvicorn's transport gives it, on the running event loop; what
        ``then`` gives right after, before anything else runs."""

        async def read() -> object:
            connection.data_received(data)
            return then()

        return self.loop.run_until_complete(read())

    def settle(self) -> None:
        """Run the event loop until no request is being answered (or one waits for what never comes)."""
        for _ in range(100):
            self.loop.run_until_complete(asyncio.sleep(0))
            if not self.state.tasks:
                break
        self.loop.run_until_complete(asyncio.sleep(0))

    def exchange(self, reads: list[bytes]) -> tuple[bytes, bool]:
        """What one connection writes for ``reads`` (each given in turn), and whether it ended."""
        connection, wire = self.connect()
        for data in reads:
            if wire.closed:
                break
            self.feed(connection, data)
            self.settle()
        return bytes(wire.out), wire.closed

    def open_session(self, **extra: str) -> str:
        out, _ = self.exchange([post(INIT, {**JSON, **extra})])
        session = re.search(rb"mcp-session-id: ([^\r]+)\r\n", out)[1].decode()
        self.exchange([post(INITIALIZED, in_session(session, **extra))])
        return session

    def close(self) -> None:
        for wire in self.wires:
            wire.close()
        self.settle()
        self.asgi.sessions.close_all()
        self.loop.close()


def answered(served: Served, reads: Callable[[str], list[bytes]], **extra: str) -> tuple[bytes, bool, int]:
    """What ``served`` writes for ``reads`` (given a session opened with ``extra`` header fields), session
    ids replaced by ``SESSION`` (the one opened) and ``NEW``; whether it ended; the sessions then open."""
    session = served.open_session(**extra)
    out, closed = served.exchange(reads(session))
    out = out.replace(session.encode(), b"SESSION")
    return re.sub(rb"mcp-session-id: [^\r]+", b"mcp-session-id: NEW", out), closed, len(served.asgi.sessions.sessions)


def both(reads: Callable[[str], list[bytes]], **options: object) -> list[tuple[bytes, bool, int]]:
    """:func:`answered` below ASGI and through it, each by a fresh app made with ``options`` (and ``address``:
    where connections arrive)."""
    pair = [Served(direct, **options) for direct in (True, False)]
    extra = {"authorization": "Bearer good"} if "auth" in options else {}
    try:
        return [answered(served, reads, **extra) for served in pair]
    finally:
        for served in pair:
            served.close()


#: The shapes that get no answer.
SILENT = {"truncated body"}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_request_shape_gets_the_asgi_apps_bytes(served_engine, shape: str) -> None:
    below, through_asgi = both(SHAPES[shape])
    assert below == through_asgi
    assert below[0].startswith(b"HTTP/1.1 ") != (shape in SILENT)


@pytest.mark.parametrize(
    "forwarded",
    [{}, {"x-forwarded-proto": "https"}, {"x-forwarded-proto": "http"}, {"x-forwarded-for": "203.0.113.9"}],
)
@pytest.mark.parametrize("origin", ["http://public.example:8000", "https://public.example:8000"])
def test_proxy_headers_count_below_asgi_too(served_engine, origin: str, forwarded: dict[str, str]) -> None:
    """At a public address the Origin must match the request's scheme, which a proxy header from a client
    uvicorn trusts (loopback) may change."""
    headers = {**ECHO_HEADERS, "host": "public.example:8000", "origin": origin, **forwarded}
    below, through_asgi = both(lambda s: [post(ECHO, headers)], address=("192.0.2.1", 8000))
    assert below == through_asgi


@pytest.mark.parametrize("limit", [{"max_sessions": 1}, {"max_sessions_per_client": 1}])
@pytest.mark.parametrize("shape", ["initialize", "session life, pipelined"])
def test_session_limits_count_below_asgi_too(served_engine, shape: str, limit: dict[str, int]) -> None:
    """With no room for another session, an ``initialize`` is refused (503), or ends the client's idle one."""
    below, through_asgi = both(SHAPES[shape], **limit)
    assert below == through_asgi


@pytest.mark.parametrize("authorization", [None, "Bearer good", "Bearer bad"])
@pytest.mark.parametrize("shape", ["echo", "session ping"])
def test_with_bearer_tokens_every_request_gets_the_asgi_apps_bytes(served_engine, shape: str, authorization) -> None:
    extra = {} if authorization is None else {"authorization": authorization}

    def reads(session: str) -> list[bytes]:
        if shape == "echo":
            return [post(ECHO, {**ECHO_HEADERS, **extra})]
        return [post(PING, in_session(session, **extra))]

    below, through_asgi = both(reads, auth=verify)
    assert below == through_asgi


#: Shapes the compiled engine answers below ASGI.
ANSWERED_BELOW = [
    "echo",
    "add",
    "tools/list",
    "session ping",
    "session echo",
    "pipelined, all at once",
    "session pipelined",
    "initialize",
    "initialize, its version header",
    "initialize, an unknown version",
    "initialize, params not an object",
    "initialized",
    "session life, pipelined",
    "session DELETE alone",
]


@pytest.mark.parametrize("shape", ANSWERED_BELOW)
def test_the_compiled_engine_answers_below_asgi_within_the_read(served_engine, engine_name: str, shape: str) -> None:
    """Answered while uvicorn reads, in one write, with no ASGI task; the pure engine has no fast path, so
    its requests all go to the ASGI app (answered only once the event loop runs)."""
    served = Served(True)
    try:
        session = served.open_session()
        connection, wire = served.connect()
        writes = []
        wire.write = lambda data: writes.append(data)  # type: ignore[method-assign]
        (reads,) = SHAPES[shape](session)
        tasks, written = served.feed(connection, reads, lambda: (set(served.state.tasks), list(writes)))
        if engine_name == "compiled":
            requests = len(re.findall(rb"(?:POST|DELETE) /mcp ", reads))
            assert (tasks, len(written), wire.closed) == (set(), requests, False)
        else:
            assert (len(tasks), written) == (1, [])
    finally:
        served.close()


def test_asgi_only_is_switched_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(serve.ASGI_ONLY_VARIABLE, raising=False)
    assert serve.protocol(1000, 2.0)["http"].keywords == {"max_head_bytes": 1000, "head_timeout": 2.0, "direct": True}
    monkeypatch.setenv(serve.ASGI_ONLY_VARIABLE, "1")
    assert serve.protocol(1000, 2.0)["http"].keywords == {"max_head_bytes": 1000, "head_timeout": 2.0, "direct": False}


def test_an_app_without_a_direct_path_is_served_through_asgi(served_engine) -> None:
    """A bearer-token app, or an app uvicorn wraps in a middleware other than its proxy headers', is served
    through ASGI whatever the engine."""
    for served in (Served(True, auth=verify), Served(True)):
        try:
            if served.asgi.auth is None:
                served.config.loaded_app = uvicorn.middleware.message_logger.MessageLoggerMiddleware(served.asgi)
            connection, _ = served.connect()
            assert connection.direct is None
        finally:
            served.close()


def test_a_fault_in_the_direct_path_is_met_again_by_the_asgi_app(served_engine, monkeypatch) -> None:
    """A request the fast path fails on is answered as uvicorn answers an ASGI app's fault: 500, closed."""

    at_once = McpHttpApp.at_once

    def fault(self: McpHttpApp, shared: object, first: dict, body: bytes, caller: object) -> object:
        if body == ECHO:
            raise RuntimeError("a fault")
        return at_once(self, shared, first, body, caller)

    monkeypatch.setattr(McpHttpApp, "at_once", fault)
    below, through_asgi = both(SHAPES["echo"])
    assert below == through_asgi
    assert below[0].startswith(b"HTTP/1.1 500 Internal Server Error\r\n")


#: uvicorn's keep-alive time in the test below, and the waits: shorter than it, then longer.
KEEP_ALIVE = 0.5
SHORTER, LONGER = 0.3, 0.7


@pytest.mark.parametrize("shape", ["echo", "session ping", "invalid JSON"])
def test_a_quiet_connection_ends_after_the_keep_alive_time_both_ways(served_engine, shape: str) -> None:
    """Each answer starts uvicorn's keep-alive time again; a connection quiet for that long ends."""
    seen = []
    for direct in (True, False):
        served = Served(direct, keep_alive=KEEP_ALIVE)
        try:
            (request,) = SHAPES[shape](served.open_session())
            connection, wire = served.connect()
            states = []
            for wait in (SHORTER, SHORTER, LONGER):
                connection.data_received(request)
                served.settle()
                served.loop.run_until_complete(asyncio.sleep(wait))
                states.append(wire.closed)
            seen.append(states)
        finally:
            served.close()
    assert seen == [[False, False, True]] * 2


def test_a_request_begun_after_an_answer_stops_the_keep_alive_time_both_ways(served_engine) -> None:
    """What comes after an answer stops its keep-alive time: a head still arriving is the head timeout's."""
    seen = []
    for direct in (True, False):
        served = Served(direct, keep_alive=KEEP_ALIVE)
        try:
            connection, wire = served.connect()
            connection.data_received(post(ECHO, ECHO_HEADERS))
            served.settle()
            connection.data_received(post(ECHO, ECHO_HEADERS)[:30])
            served.loop.run_until_complete(asyncio.sleep(LONGER))
            seen.append((bytes(wire.out).count(b"HTTP/1.1 200 OK"), wire.closed))
        finally:
            served.close()
    assert seen == [(1, False)] * 2


#: Shapes read whole, with no parser callback (each one plain request in one read).
READ_WHOLE = [
    "echo",
    "add",
    "tools/list",
    "session ping",
    "session echo",
    "initialize",
    "initialized",
    "session DELETE alone",
]
#: Shapes the parser reads (answered below ASGI or not), each for a reason of its own.
READ_BY_THE_PARSER = [
    "pipelined, all at once",
    "body in a later read",
    "connection close",
    "chunked body",
    "expect 100-continue",
    "HTTP/1.0",
    "query",
    "GET",
]


class NoParser:
    """Stands for the HTTP parser where none may be used."""

    def feed_data(self, data: bytes) -> None:
        raise AssertionError("the parser was used")


@pytest.mark.parametrize("shape", READ_WHOLE + READ_BY_THE_PARSER)
def test_a_plain_request_in_one_read_is_read_whole(served_engine, engine_name: str, shape: str) -> None:
    """A plain request alone in its read is answered with no parser at all; the others go to the parser, as
    every request does with the pure engine (no direct path)."""
    served = Served(True)
    try:
        session = served.open_session()
        connection, wire = served.connect()
        connection.parser = NoParser()
        (reads, *_) = SHAPES[shape](session)
        try:
            served.feed(connection, reads)
            read_whole = True
        except AssertionError:
            read_whole = False
        assert read_whole == (shape in READ_WHOLE and engine_name == "compiled")
        if read_whole:
            assert (wire.out.startswith(b"HTTP/1.1 20"), wire.closed, served.state.tasks) == (True, False, set())
    finally:
        served.close()


@pytest.mark.parametrize("shape", ["unknown tool", "bad arguments", "echo", "foreign host"])
def test_a_request_read_whole_is_judged_once(served_engine, monkeypatch, shape: str) -> None:
    """One judgement per request: one not answered below ASGI goes from there to the ASGI app, without the
    direct path being asked again when the parser reads it."""
    calls = []
    judge = DirectPath.answer

    def counted(self: DirectPath, *arguments: object) -> object:
        calls.append(arguments[0])
        return judge(self, *arguments)

    monkeypatch.setattr(DirectPath, "answer", counted)
    below, through_asgi = both(SHAPES[shape])
    assert below == through_asgi
    # the session opened first (initialize, initialized), then the request
    assert calls == ([b"POST"] * 3 if served_engine.IMPLEMENTATION == "compiled" else [])
