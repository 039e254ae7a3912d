"""Hostile clients of a real ``shipcode-mcp --http`` server on loopback: each gets its documented
answer (docs/http.md, "Hostile clients"), and the server still serves afterwards.

One server per engine (``tests/apps/hostile.py``, ``--max-message-bytes 4096 --body-timeout 0.5
--head-timeout 1``) is shared by the tests here (those that fill its session table start their own); every
test ends by checking it still answers a call exactly. Clients
speak raw HTTP/1.1 over sockets, so what they send is exactly what the test says. Every wait is
bounded (:data:`LIMIT`), a guard against a hang, never a schedule.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
from support.httpserver import HttpServer
from support.httpwire import META, modern_body, refusal

from shipcode_mcp.target import load_target

APP = str(Path(__file__).parents[1] / "apps" / "hostile.py")
LIMIT = 30  # seconds any one step may take: a guard, never a schedule
MAX_BYTES = 4096
BODY_SECONDS = "0.5"
HEAD_SECONDS = "1"
FLOOD = 200
#: Peak resident memory of the server under the flood (docs/http.md says so).
FLOOD_RSS_BOUND = 64 * 1024 * 1024
MODERN = {
    "host": "localhost",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "echo",
}
LEGACY = {"host": "localhost", "content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}'
PING = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
SERVER_META = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hostile","version":"1.0.0"}}'


def echo_body(text: str, rid: int = 1) -> bytes:
    return modern_body("tools/call", {"name": "echo", "arguments": {"text": text}}, rid=rid)


def echo_answer(text: str, rid: int = 1) -> bytes:
    content = orjson.dumps([{"type": "text", "text": text}])
    return b'{"jsonrpc":"2.0","id":%d,"result":{"content":%s,"resultType":"complete",%s}}\n' % (
        rid,
        content,
        SERVER_META,
    )


def request_head(headers: dict[str, str], method: str = "POST", path: str = "/mcp", version: str = "1.1") -> bytes:
    lines = [f"{method} {path} HTTP/{version}", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def request(body: bytes, headers: dict[str, str], **options: str) -> bytes:
    return request_head({**headers, "content-length": str(len(body))}, **options) + body


#: The connections a test opened, closed after it.
OPENED: list[socket.socket] = []


class Client:
    """One raw connection to the server."""

    def __init__(self, server: HttpServer) -> None:
        self.socket = socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT)
        OPENED.append(self.socket)
        #: The ``Connection`` header of the last response.
        self.connection: str | None = None

    def send(self, data: bytes) -> Client:
        self.socket.sendall(data)
        return self

    def response(self) -> tuple[int, str | None, bytes]:
        """The next response: status, content type and body."""
        answer = http.client.HTTPResponse(self.socket)
        answer.begin()
        self.connection = answer.getheader("connection")
        return answer.status, answer.getheader("content-type"), answer.read()

    def closed_by_server(self) -> bool:
        """Whether the server has closed the connection after saying it would (waiting for it, within the limit)."""
        if self.connection != "close":
            return False
        try:
            return self.socket.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.socket.close()


def json_answer(status: int, body: bytes) -> tuple[int, str, bytes]:
    return status, "application/json", body


@pytest.fixture(scope="module")
def servers() -> Iterator[Callable[[str], HttpServer]]:
    """The module's server for an engine, started on first use and stopped at the end."""
    started: dict[str, HttpServer] = {}

    def server(engine_name: str) -> HttpServer:
        if engine_name not in started:
            started[engine_name] = HttpServer(
                engine_name,
                *(
                    "--max-message-bytes",
                    str(MAX_BYTES),
                    "--body-timeout",
                    BODY_SECONDS,
                    "--head-timeout",
                    HEAD_SECONDS,
                ),
                app=APP,
            )
        return started[engine_name]

    yield server
    assert [server.stop() for server in started.values()] == [0] * len(started)


@pytest.fixture
def server(servers: Callable[[str], HttpServer], engine_name: str) -> Iterator[HttpServer]:
    """The engine's server; after the test it must still be running and answer a call exactly."""
    served = servers(engine_name)
    yield served
    still_serving(served, MODERN)


def still_serving(served: HttpServer, headers: dict[str, str]) -> None:
    """After a test: the connections it opened closed, the server still running and answering a call exactly."""
    while OPENED:
        OPENED.pop().close()
    assert served.process.poll() is None, "the server stopped"
    assert served.post(echo_body("still here", rid=7), headers)[::2] == (200, echo_answer("still here", rid=7))


# -- request heads ---------------------------------------------------------------------------------------

#: The largest request head served by default (docs/http.md), and the most header fields.
MAX_HEAD_BYTES = 64 * 1024
MAX_FIELDS = 100
HEAD_TOO_LARGE = json_answer(
    431, refusal(-32600, f"Request Header Fields Too Large: the limit is {MAX_HEAD_BYTES} bytes")
)
TOO_MANY_FIELDS = json_answer(431, refusal(-32600, f"Request Header Fields Too Large: at most {MAX_FIELDS} fields"))
HEAD_TOO_LATE = json_answer(
    408, refusal(-32600, f"Request Timeout: the request head did not arrive within {HEAD_SECONDS} s")
)
#: How much a 74 MiB head may move the server's resident memory, and the server's CPU time for it.
HEAD_RSS_BOUND = 4 * 1024 * 1024
HEAD_CPU_BOUND = 0.25


def padded_head(size: int, body: bytes) -> bytes:
    """A request for ``body`` whose head (request line to blank line) is ``size`` bytes long."""
    head = request_head({**MODERN, "content-length": str(len(body)), "x-pad": ""})
    return request_head({**MODERN, "content-length": str(len(body)), "x-pad": "p" * (size - len(head))}) + body


@pytest.mark.parametrize(("size", "expected"), [(MAX_HEAD_BYTES, "served"), (MAX_HEAD_BYTES + 1, "refused")])
def test_a_head_is_served_up_to_its_limit(server: HttpServer, size: int, expected: str) -> None:
    sent = padded_head(size, echo_body("padded"))
    assert sent.index(b"\r\n\r\n") + 4 == size
    client = Client(server).send(sent)
    answer = (client.response(), client.closed_by_server())
    assert answer == (
        (json_answer(200, echo_answer("padded")), False) if expected == "served" else (HEAD_TOO_LARGE, True)
    )


def process_usage(server: HttpServer) -> tuple[int, float]:
    """The server's resident memory (bytes) and CPU time (seconds) so far, from /proc."""
    rss = int(Path(f"/proc/{server.process.pid}/status").read_text().split("VmRSS:")[1].split()[0]) * 1024
    ticks = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13]
    return rss, sum(map(int, ticks)) / os.sysconf("SC_CLK_TCK")


def test_a_74_mib_head_is_refused_in_bounded_memory_and_time(server: HttpServer) -> None:
    rss, cpu = process_usage(server)
    client = Client(server).send(b"POST /mcp HTTP/1.1\r\nhost: localhost\r\nx-big: ")
    piece = b"a" * 65536
    try:
        for _ in range(74 * 16):  # 74 MiB, unless the server closes first
            client.send(piece)
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = client.response()
    more_rss, more_cpu = process_usage(server)
    assert answer == HEAD_TOO_LARGE
    assert (more_rss - rss < HEAD_RSS_BOUND, more_cpu - cpu < HEAD_CPU_BOUND) == (True, True), (
        more_rss - rss,
        more_cpu - cpu,
    )


def test_every_head_of_a_connection_is_bounded(server: HttpServer) -> None:
    client = Client(server).send(request(echo_body("first"), MODERN))
    first = client.response()
    client.send(padded_head(MAX_HEAD_BYTES + 1, echo_body("second")))
    assert [first, client.response(), client.closed_by_server()] == [
        json_answer(200, echo_answer("first")),
        HEAD_TOO_LARGE,
        True,
    ]


def test_a_head_arriving_in_many_reads_is_counted_across_them(server: HttpServer) -> None:
    client = Client(server).send(b"POST /mcp HTTP/1.1\r\nhost: localhost\r\n")
    try:
        for _ in range(MAX_HEAD_BYTES // 1024 + 1):
            client.send(b"x-piece: " + b"a" * 1013 + b"\r\n")  # 1 KiB a field, each read apart
            time.sleep(0.002)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert (client.response(), client.closed_by_server()) == (HEAD_TOO_LARGE, True)


@pytest.mark.parametrize(("fields", "expected"), [(MAX_FIELDS, "served"), (MAX_FIELDS + 1, "refused")])
def test_a_head_may_have_a_hundred_fields(server: HttpServer, fields: int, expected: str) -> None:
    body = echo_body("fields")
    given = {**MODERN, "content-length": str(len(body))}
    extra = {f"x-field-{number}": "1" for number in range(fields - len(given))}
    client = Client(server).send(request_head({**given, **extra}) + body)
    answer = (client.response(), client.closed_by_server())
    assert answer == (
        (json_answer(200, echo_answer("fields")), False) if expected == "served" else (TOO_MANY_FIELDS, True)
    )


def seconds_until_closed(client: Client) -> tuple[float, bytes]:
    """How long the server takes to close the connection from now, and what it sent before."""
    start = time.monotonic()
    received = b""
    while more := client.socket.recv(65536):
        received += more
    return time.monotonic() - start, received


def answer_bytes(status: int, reason: str, answer: tuple[int, str, bytes]) -> bytes:
    """A whole refusal as sent before a connection closes, its Date field left out."""
    fields = f"content-type: {answer[1]}\r\ncontent-length: {len(answer[2])}\r\nconnection: close\r\n\r\n"
    return f"HTTP/1.1 {status} {reason}\r\n{fields}".encode() + answer[2]


def without_date(response: bytes) -> bytes:
    head, _, body = response.partition(b"\r\n\r\n")
    return b"\r\n".join(line for line in head.split(b"\r\n") if not line.startswith(b"date: ")) + b"\r\n\r\n" + body


def test_a_head_that_stops_coming_is_refused_at_the_head_timeout(server: HttpServer) -> None:
    client = Client(server).send(request_head(MODERN)[:40])
    took, received = seconds_until_closed(client)
    assert without_date(received) == answer_bytes(408, "Request Timeout", HEAD_TOO_LATE)
    assert float(HEAD_SECONDS) <= took + 0.05 < LIMIT  # the clock looks 4 times per timeout: at most 1.25 of it


def test_a_head_sent_a_byte_at_a_time_is_refused_at_the_head_timeout(server: HttpServer) -> None:
    client = Client(server)
    start = time.monotonic()
    client.socket.settimeout(0.1)
    received = b""
    for byte in request_head(MODERN):  # a byte every 0.1 s: each well within the timeout, the head never
        try:
            client.socket.sendall(bytes([byte]))
            received = client.socket.recv(65536)
        except TimeoutError:
            continue
        break
    client.socket.settimeout(LIMIT)
    received += seconds_until_closed(client)[1]
    took = time.monotonic() - start
    assert without_date(received) == answer_bytes(408, "Request Timeout", HEAD_TOO_LATE)
    assert float(HEAD_SECONDS) <= took + 0.05 < LIMIT


def test_a_connection_that_sends_nothing_is_closed_at_the_head_timeout(server: HttpServer) -> None:
    took, received = seconds_until_closed(Client(server))
    assert (received, float(HEAD_SECONDS) <= took + 0.05 < LIMIT) == (b"", True)


@pytest.mark.parametrize(
    ("target", "host", "expected"),
    [
        (
            "http://evil.example/mcp",
            "localhost",
            json_answer(421, refusal(-32600, "Misdirected Request: Host not allowed")),
        ),
        ("http://localhost/mcp", "evil.example", json_answer(200, echo_answer("absolute"))),
        ("http://localhost:1/mcp?x=1", "evil.example", json_answer(200, echo_answer("absolute"))),
    ],
)
def test_an_absolute_form_target_is_judged_by_its_authority(
    server: HttpServer, target: str, host: str, expected: tuple
) -> None:
    sent = request(echo_body("absolute"), {**MODERN, "host": host}, path=target)
    assert Client(server).send(sent).response() == expected


def test_a_head_is_bounded_in_every_process(engine_name: str) -> None:
    server = HttpServer(
        engine_name, "--processes", "2", "--max-head-bytes", "1024", "--head-timeout", HEAD_SECONDS, app=APP
    )
    try:
        refused = json_answer(431, refusal(-32600, "Request Header Fields Too Large: the limit is 1024 bytes"))
        answers = [Client(server).send(padded_head(1024 + extra, echo_body("p"))).response() for extra in (0, 1)]
        assert answers == [json_answer(200, echo_answer("p")), refused]
        took, received = seconds_until_closed(Client(server).send(request_head(MODERN)[:40]))
        assert (without_date(received), float(HEAD_SECONDS) <= took + 0.05 < LIMIT) == (
            answer_bytes(408, "Request Timeout", HEAD_TOO_LATE),
            True,
        )
    finally:
        while OPENED:
            OPENED.pop().close()
        assert server.stop() == 0


# -- bodies ------------------------------------------------------------------------------------------

TOO_LARGE = json_answer(413, refusal(-32600, f"Payload Too Large: the limit is {MAX_BYTES} bytes"))
TOO_LATE = json_answer(408, refusal(-32600, f"Request Timeout: the body did not arrive within {BODY_SECONDS} s"))


def test_a_declared_oversize_body_is_refused_before_it_is_sent(server: HttpServer) -> None:
    client = Client(server).send(request_head({**MODERN, "content-length": str(10**12)}))
    assert (client.response(), client.closed_by_server()) == (TOO_LARGE, True)


def test_a_chunked_oversize_body_is_refused_once_past_the_limit(server: HttpServer) -> None:
    head = request_head({**MODERN, "transfer-encoding": "chunked"})
    chunks = b"".join(b"%x\r\n%s\r\n" % (1024, b" " * 1024) for _ in range(MAX_BYTES // 1024 + 1))
    client = Client(server).send(head + chunks)  # one byte... and more past the limit; never a last chunk
    assert (client.response(), client.closed_by_server()) == (TOO_LARGE, True)


def test_a_body_at_the_limit_is_judged(server: HttpServer) -> None:
    body = echo_body("x")
    padded = body + b" " * (MAX_BYTES - len(body))
    assert Client(server).send(request(padded, MODERN)).response() == json_answer(200, echo_answer("x"))


def test_a_truncated_body_gets_no_answer(server: HttpServer) -> None:
    body = echo_body("cut")
    client = Client(server).send(request_head({**MODERN, "content-length": str(len(body))}) + body[:30])
    client.socket.shutdown(socket.SHUT_WR)  # the client is done sending: the body stays short
    assert client.socket.recv(4096) == b""


def test_a_body_that_stops_coming_is_refused_at_its_deadline(server: HttpServer) -> None:
    body = echo_body("never whole")
    client = Client(server).send(request_head({**MODERN, "content-length": str(len(body))}) + body[:30])
    assert (client.response(), client.closed_by_server()) == (TOO_LATE, True)


def test_a_body_sent_a_byte_at_a_time_is_refused_at_its_deadline(server: HttpServer) -> None:
    body = echo_body("slowly")  # about 180 bytes, one every 50 ms: 9 s, far past the 0.5 s allowed
    client = Client(server).send(request_head({**MODERN, "content-length": str(len(body))}))
    client.socket.settimeout(0.05)
    answer = b""
    for byte in body:
        try:
            client.socket.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            break
        try:
            answer = client.socket.recv(65536)
        except TimeoutError:
            continue
        break
    client.socket.settimeout(LIMIT)
    while more := client.socket.recv(65536):  # the rest of the answer, up to the server closing
        answer += more
    head, _, rest = answer.partition(b"\r\n\r\n")
    status, *fields = head.split(b"\r\n")
    headers = dict(field.split(b": ", 1) for field in fields if not field.startswith(b"date: "))
    late = {b"connection": b"close", b"content-type": b"application/json", b"content-length": b"%d" % len(TOO_LATE[2])}
    assert (status, headers, rest) == (b"HTTP/1.1 408 Request Timeout", late, TOO_LATE[2])


# -- types and encodings ---------------------------------------------------------------------------

UNSUPPORTED_TYPE = json_answer(415, refusal(-32600, "Unsupported Media Type: send application/json"))
ENCODED = json_answer(415, refusal(-32600, "Unsupported Media Type: send the body unencoded"))


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"content-type": "text/plain"}, UNSUPPORTED_TYPE),
        ({"content-type": "application/x-www-form-urlencoded"}, UNSUPPORTED_TYPE),
        ({"content-type": "application/json; charset=utf-16"}, UNSUPPORTED_TYPE),
        ({"content-encoding": "gzip"}, ENCODED),
        (
            {"accept": "text/html"},
            json_answer(406, refusal(-32600, "Not Acceptable: accept application/json or text/event-stream")),
        ),
    ],
)
def test_wrong_types_and_encodings_are_refused(server: HttpServer, headers: dict, expected: tuple) -> None:
    assert Client(server).send(request(echo_body("typed"), {**MODERN, **headers})).response() == expected


@pytest.mark.parametrize(
    "body",
    [
        echo_body("utf-16").decode().encode("utf-16"),
        echo_body("caf\u00e9").replace("\u00e9".encode(), b"\xe9"),  # Latin-1, not UTF-8
        b"\xef\xbb\xbf" + echo_body("bom"),
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"',
    ],
)
def test_bodies_that_are_not_utf8_json_get_the_stdio_answer_with_400(server: HttpServer, run, body: bytes) -> None:
    expected = run(body + b"\n") or b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'
    assert Client(server).send(request(body, MODERN)).response() == json_answer(400, expected)


# -- who may call ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"host": "evil.example"}, json_answer(421, refusal(-32600, "Misdirected Request: Host not allowed"))),
        (
            {"host": "localhost.evil.example:80"},
            json_answer(421, refusal(-32600, "Misdirected Request: Host not allowed")),
        ),
        ({"origin": "http://evil.example"}, json_answer(403, refusal(-32600, "Forbidden: Origin not allowed"))),
        ({"origin": "null"}, json_answer(403, refusal(-32600, "Forbidden: Origin not allowed"))),
    ],
)
def test_foreign_hosts_and_origins_are_refused(server: HttpServer, headers: dict, expected: tuple) -> None:
    assert Client(server).send(request(echo_body("foreign"), {**MODERN, **headers})).response() == expected


def test_a_request_without_host_is_refused_on_loopback(server: HttpServer) -> None:
    headers = {name: value for name, value in MODERN.items() if name != "host"}
    answer = Client(server).send(request(echo_body("hostless"), headers, version="1.0")).response()
    assert answer == json_answer(421, refusal(-32600, "Misdirected Request: Host not allowed"))


def mismatch(message: str, rid: int = 1) -> tuple[int, str, bytes]:
    return json_answer(
        400, b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32020,"message":%s}}\n' % (rid, orjson.dumps(message))
    )


SESSION_MISSING = json_answer(400, refusal(-32600, "Bad Request: Mcp-Session-Id header is missing"))
HEADER_CASES = {
    "no-version": ({"mcp-protocol-version": None}, SESSION_MISSING),  # a legacy request: it needs a session
    "no-method": ({"mcp-method": None}, mismatch("Header mismatch: Mcp-Method header is missing")),
    "other-method": (
        {"mcp-method": "tools/list"},
        mismatch("Header mismatch: Mcp-Method header value 'tools/list' does not match body value 'tools/call'"),
    ),
    "other-name": (
        {"mcp-name": "Echo"},
        mismatch("Header mismatch: Mcp-Name header value 'Echo' does not match body value 'echo'"),
    ),
    "no-name": ({"mcp-name": None}, mismatch("Header mismatch: Mcp-Name header is missing")),
}


@pytest.mark.parametrize("case", list(HEADER_CASES))
def test_missing_and_mismatched_headers_are_refused(server: HttpServer, case: str) -> None:
    changed, expected = HEADER_CASES[case]
    sent = {name: value for name, value in {**MODERN, **changed}.items() if value is not None}
    assert Client(server).send(request(echo_body("headers"), sent)).response() == expected


def test_an_unknown_version_header_lists_the_versions_spoken(server: HttpServer) -> None:
    answer = Client(server).send(request(echo_body("v"), {**MODERN, "mcp-protocol-version": "2099-01-01"})).response()
    data = {"supported": list(load_target(APP).protocol_versions), "requested": "2099-01-01"}
    error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
    assert answer == json_answer(400, orjson.dumps({"jsonrpc": "2.0", "id": 1, "error": error}) + b"\n")


# -- sessions ----------------------------------------------------------------------------------------

NOT_FOUND = json_answer(404, refusal(-32600, "Session not found"))


def open_session(server: HttpServer) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=LIMIT)
    try:
        connection.request("POST", "/mcp", INIT, LEGACY)
        response = connection.getresponse()
        response.read()
        assert response.status == 200
        return response.getheader("mcp-session-id")
    finally:
        connection.close()


def session_ping(server: HttpServer, session_id: str) -> tuple[int, str | None, bytes]:
    return Client(server).send(request(PING, {**LEGACY, "mcp-session-id": session_id})).response()


@pytest.mark.parametrize("session_id", ["no-such-session", "x" * 32, "", "\t"])
def test_an_unknown_session_is_not_found(server: HttpServer, session_id: str) -> None:
    assert session_ping(server, session_id) == NOT_FOUND


def test_an_ended_session_is_not_found(server: HttpServer) -> None:
    session_id = open_session(server)
    assert session_ping(server, session_id) == json_answer(200, b'{"jsonrpc":"2.0","id":2,"result":{}}\n')
    ended = Client(server).send(request_head({**LEGACY, "mcp-session-id": session_id}, method="DELETE")).response()
    assert (ended, session_ping(server, session_id)) == ((200, None, b""), NOT_FOUND)


def test_an_expired_session_is_not_found(engine_name: str) -> None:
    server = HttpServer(engine_name, "--log-level", "warning", app=APP, factory="hostile:short_sessions")
    try:
        session_id = open_session(server)
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline and (answer := session_ping(server, session_id)) != NOT_FOUND:
            time.sleep(0.3)  # each ping touches the session: at least 0.2 s idle between two
        assert answer == NOT_FOUND
        assert server.post(echo_body("after"), MODERN)[::2] == (200, echo_answer("after"))
    finally:
        server.stop()


# -- many connections, and clients that vanish ---------------------------------------------------------


def peak_rss(server: HttpServer) -> int:
    """The server process's peak resident memory, in bytes (``VmHWM``)."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) * 1024


def test_a_flood_of_connections_is_answered_in_bounded_memory(server: HttpServer) -> None:
    idle = [Client(server) for _ in range(FLOOD)]  # connected, sending nothing
    halves = [Client(server).send(request_head(MODERN)[:40]) for _ in range(FLOOD)]  # half a request head
    callers = [Client(server) for _ in range(FLOOD)]
    for number, caller in enumerate(callers):
        caller.send(request(echo_body(str(number), rid=number), MODERN))
    answers = [caller.response() for caller in callers]
    assert answers == [json_answer(200, echo_answer(str(number), rid=number)) for number in range(FLOOD)]
    for client in idle + halves + callers:
        client.close()
    assert peak_rss(server) < FLOOD_RSS_BOUND


def test_a_client_that_vanishes_mid_stream_has_its_request_cancelled(server: HttpServer) -> None:
    before = server.post(modern_body("tools/call", {"name": "cancelled"}, rid=3), {**MODERN, "mcp-name": "cancelled"})[
        2
    ]
    meta = {**META, "progressToken": "p"}
    drip = modern_body("tools/call", {"name": "drip"}, rid=4, meta=meta)
    client = Client(server).send(request(drip, {**MODERN, "mcp-name": "drip"}))
    answer = http.client.HTTPResponse(client.socket)
    answer.begin()
    first = b""
    while b"\n\n" not in first:  # the progress event, mid-stream
        first += answer.read1(65536)
    client.socket.shutdown(socket.SHUT_RDWR)
    client.close()
    assert (answer.status, answer.getheader("content-type")) == (200, "text/event-stream")
    progress = (
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}'
    )
    assert first == b"event: message\ndata: " + progress + b"\n\n"
    count = orjson.loads(before)["result"]["content"][0]["text"]
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        after = server.post(
            modern_body("tools/call", {"name": "cancelled"}, rid=5), {**MODERN, "mcp-name": "cancelled"}
        )
        if orjson.loads(after[2])["result"]["content"][0]["text"] != count:
            break
        time.sleep(0.05)
    assert orjson.loads(after[2])["result"]["content"][0]["text"] == str(int(count) + 1)


def test_a_legacy_stream_whose_client_vanishes_can_be_opened_again(server: HttpServer) -> None:
    session_id = open_session(server)
    stream = request_head(
        {"host": "localhost", "accept": "text/event-stream", "mcp-session-id": session_id}, method="GET"
    )
    first = Client(server).send(stream)
    answer = http.client.HTTPResponse(first.socket)
    answer.begin()
    assert (answer.status, answer.getheader("content-type")) == (200, "text/event-stream")
    first.socket.shutdown(socket.SHUT_RDWR)
    first.close()
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        again = Client(server).send(stream)
        reopened = http.client.HTTPResponse(again.socket)
        reopened.begin()
        again.close()
        if reopened.status != 409:  # until the server has seen the first client go
            break
        time.sleep(0.05)
    assert reopened.status == 200


# -- what is accepted -----------------------------------------------------------------------------------


def test_a_client_that_accepts_only_event_streams_gets_one_for_an_answer_ready_at_once(server: HttpServer) -> None:
    modern = Client(server).send(request(echo_body("streamed"), {**MODERN, "accept": "text/event-stream"}))
    session_id = open_session(server)
    legacy = Client(server).send(request(PING, {**LEGACY, "accept": "text/event-stream", "mcp-session-id": session_id}))
    assert [modern.response(), legacy.response()] == [
        (200, "text/event-stream", b"event: message\ndata: " + echo_answer("streamed") + b"\n"),
        (200, "text/event-stream", b'event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{}}\n\n'),
    ]


# -- stopping ---------------------------------------------------------------------------------------------

STOPPED = (
    b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"Server shutting down: the request was cancelled"}}\n'
)


def test_calls_running_when_the_server_stops_are_answered_with_an_error(engine_name: str) -> None:
    server = HttpServer(engine_name, app=APP)
    drip = {**MODERN, "mcp-name": "drip"}
    progress = {**META, "progressToken": "p"}
    clients = [
        Client(server).send(request(modern_body("tools/call", {"name": "drip"}, rid=1), drip)),
        Client(server).send(request(modern_body("tools/call", {"name": "drip"}, rid=2, meta=progress), drip)),
        Client(server).send(
            request(modern_body("tools/call", {"name": "drip"}, rid=3), {**drip, "accept": "text/event-stream"})
        ),
    ]
    try:
        streaming = http.client.HTTPResponse(clients[1].socket)
        streaming.begin()
        first = streaming.read1(65536)  # the progress event: every call is running
        server.process.send_signal(signal.SIGTERM)
        answers = [clients[0].response(), first + streaming.read(), clients[2].response()]
        assert (server.process.wait(LIMIT), server.process.stderr.read()) == (
            0,
            b"ERROR:    Cancel 3 running task(s), timeout graceful shutdown exceeded\n",
        )
    finally:
        while OPENED:
            OPENED.pop().close()
        server.stop()
    notice = (
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}'
    )
    assert answers == [
        json_answer(200, STOPPED % 1),
        b"event: message\ndata: " + notice + b"\n\nevent: message\ndata: " + STOPPED % 2 + b"\n",
        (200, "text/event-stream", b"event: message\ndata: " + STOPPED % 3 + b"\n"),
    ]


# -- headers that are not what they claim ------------------------------------------------------------


def raw_request(body: bytes, fields: list[tuple[str, str]]) -> bytes:
    """A POST to /mcp with exactly these header lines (a name may repeat) and a Content-Length."""
    lines = ["POST /mcp HTTP/1.1", *(f"{name}: {value}" for name, value in fields), f"content-length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def repeated_answer(shown: str) -> tuple[int, str, bytes]:
    return json_answer(400, refusal(-32600, f"Bad Request: {shown} header appears more than once"))


REPEATED = {
    "host": ("Host", "localhost"),
    "origin": ("Origin", "http://localhost"),
    "authorization": ("Authorization", "Bearer good"),
    "mcp-session-id": ("Mcp-Session-Id", "x" * 32),
    "content-type": ("Content-Type", "application/json"),
    "content-encoding": ("Content-Encoding", "identity"),
}


@pytest.mark.parametrize("name", list(REPEATED))
def test_a_header_the_server_reads_given_twice_is_refused(server: HttpServer, name: str) -> None:
    shown, value = REPEATED[name]
    fields = [*((key, given) for key, given in MODERN.items() if key != name), (name, value), (name, value)]
    assert Client(server).send(raw_request(echo_body("twice"), fields)).response() == repeated_answer(shown)


def test_two_content_lengths_are_refused_by_the_http_parser(server: HttpServer) -> None:
    body = echo_body("twice")
    client = Client(server).send(raw_request(body, [*MODERN.items(), ("content-length", str(len(body)))]))
    answer = (400, "text/plain; charset=utf-8", b"Invalid HTTP request received.")
    assert (client.response(), client.closed_by_server()) == (answer, True)


HOST_INVALID = json_answer(400, refusal(-32600, "Bad Request: Host header is not a valid host[:port]"))


@pytest.mark.parametrize(
    "host", ["localhost:@evil.example", 'localhost:1"x', "localhost:0", "localhost:65536", "user@localhost", "a b"]
)
def test_a_host_that_is_not_host_and_port_is_400(server: HttpServer, host: str) -> None:
    assert Client(server).send(request(echo_body("host"), {**MODERN, "host": host})).response() == HOST_INVALID


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ("http://localhost:8000", json_answer(200, echo_answer("origin"))),
        ("https://[::1]", json_answer(200, echo_answer("origin"))),
        ("http://localhost:@evil.example", json_answer(403, refusal(-32600, "Forbidden: Origin not allowed"))),
        ("http://localhost/", json_answer(403, refusal(-32600, "Forbidden: Origin not allowed"))),
    ],
)
def test_an_origin_is_judged_whole(server: HttpServer, origin: str, expected: tuple) -> None:
    assert Client(server).send(request(echo_body("origin"), {**MODERN, "origin": origin})).response() == expected


# -- bearer tokens ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bearers() -> Iterator[Callable[[str], HttpServer]]:
    """A server wanting a bearer token (``hostile:bearer``) for an engine, stopped at the end: it must have
    written nothing (no traceback) meanwhile."""
    started: dict[str, HttpServer] = {}

    def server(engine_name: str) -> HttpServer:
        if engine_name not in started:
            started[engine_name] = HttpServer(engine_name, "--log-level", "warning", app=APP, factory="hostile:bearer")
        return started[engine_name]

    yield server
    for served in started.values():
        served.process.send_signal(signal.SIGTERM)
        assert (served.process.communicate(timeout=LIMIT)[1], served.stop()) == (b"", -signal.SIGTERM)


@pytest.fixture
def bearer(bearers: Callable[[str], HttpServer], engine_name: str) -> Iterator[HttpServer]:
    """The engine's bearer server; after the test it must still answer a call with a good token exactly."""
    served = bearers(engine_name)
    yield served
    still_serving(served, {**MODERN, "authorization": "Bearer good"})


def challenge(server: HttpServer, error: bool) -> tuple[int, str, str | None, bytes]:
    """A 401's status, ``WWW-Authenticate`` and body as the server on ``server``'s port writes them."""
    url = f"http://localhost:{server.port}/.well-known/oauth-protected-resource/mcp"
    value = f'Bearer resource_metadata="{url}", scope="notes"' + (', error="invalid_token"' if error else "")
    return 401, "application/json", value, refusal(-32600, "Unauthorized: a valid bearer token is required")


def authorized(server: HttpServer, authorization: str | None) -> tuple[int, str | None, str | None, bytes]:
    headers = {**MODERN, "host": f"localhost:{server.port}"}
    if authorization is not None:
        headers["authorization"] = authorization
    client = Client(server).send(request(echo_body("token"), headers))
    answer = http.client.HTTPResponse(client.socket)
    answer.begin()
    return answer.status, answer.getheader("content-type"), answer.getheader("www-authenticate"), answer.read()


@pytest.mark.parametrize(
    ("authorization", "error"), [(None, False), ("Basic Z29vZA==", False), ("Bearer x.y.z", True), ("Bearer ", True)]
)
def test_a_missing_or_refused_token_is_401_with_its_challenge(bearer: HttpServer, authorization, error) -> None:
    assert authorized(bearer, authorization) == challenge(bearer, error)


def test_a_good_token_is_served(bearer: HttpServer) -> None:
    assert authorized(bearer, "Bearer good") == (200, "application/json", None, echo_answer("token"))


def test_a_host_written_to_forge_the_challenge_is_400(bearer: HttpServer) -> None:
    forged = {**MODERN, "host": 'localhost:1", error="invalid_token/..."'}
    assert Client(bearer).send(request(echo_body("forged"), forged)).response() == HOST_INVALID
    metadata = request_head({"host": "localhost:@evil.example"}, "GET", "/.well-known/oauth-protected-resource")
    assert Client(bearer).send(metadata).response() == HOST_INVALID


def test_the_metadata_names_the_validated_host(bearer: HttpServer) -> None:
    metadata = request_head({"host": f"LOCALHOST:{bearer.port}"}, "GET", "/.well-known/oauth-protected-resource")
    document = (
        b'{"resource":"http://localhost:%d/mcp","authorization_servers":[],'
        b'"bearer_methods_supported":["header"],"scopes_supported":["notes"]}' % bearer.port
    )
    assert Client(bearer).send(metadata).response() == json_answer(200, document)


def test_two_authorization_headers_are_refused(bearer: HttpServer) -> None:
    fields = [*MODERN.items(), ("authorization", "Bearer good"), ("authorization", "Bearer x.y.z")]
    assert Client(bearer).send(raw_request(echo_body("twice"), fields)).response() == repeated_answer("Authorization")


# -- sessions shared fairly (the defaults: 1,000 per process, 100 per address) -------------------------
# These fill a session table (about 22 MiB): each has a server of its own, not the module's.

MAX_SESSIONS = 1000
PER_ADDRESS = 100
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
LIST = b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}'


class Connection:
    """One keep-alive connection from a loopback address of its own (Linux routes all of 127.0.0.0/8 to lo)."""

    def __init__(self, server: HttpServer, address: str) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", server.port, timeout=LIMIT, source_address=(address, 0))

    def post(self, body: bytes, session_id: str | None = None) -> tuple[int, str | None]:
        """Status and ``Mcp-Session-Id`` of the answer."""
        headers = LEGACY if session_id is None else {**LEGACY, "mcp-session-id": session_id}
        self.http.request("POST", "/mcp", body, headers)
        response = self.http.getresponse()
        response.read()
        return response.status, response.getheader("mcp-session-id")

    def open(self, confirm: bool = True) -> str:
        """A new session (confirmed by ``notifications/initialized`` unless ``confirm`` is false): its id."""
        status, session_id = self.post(INIT)
        assert (status, session_id is not None) == (200, True)
        if confirm:
            assert self.post(INITIALIZED, session_id) == (202, session_id)
        return session_id

    def alive(self, session_ids: list[str]) -> list[bool]:
        return [self.post(LIST, session_id)[0] == 200 for session_id in session_ids]

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def crowded(engine_name: str) -> Iterator[HttpServer]:
    """A server of the engine's for one test to crowd; after it a new client still opens a session and is
    answered."""
    served = HttpServer(engine_name, app=APP)
    try:
        yield served
        after = Connection(served, "127.0.3.1")
        assert after.alive([after.open()]) == [True]
        after.close()
    finally:
        assert served.stop() == 0


def test_one_address_opening_every_session_locks_no_one_out(crowded: HttpServer) -> None:
    flooder = Connection(crowded, "127.0.0.2")
    flood = [flooder.open() for _ in range(MAX_SESSIONS)]
    other = Connection(crowded, "127.0.0.3")
    theirs = other.open()
    held, kept = flooder.alive(flood), other.alive([theirs])
    for connection in (flooder, other):
        connection.close()
    assert held == [False] * (MAX_SESSIONS - PER_ADDRESS) + [True] * PER_ADDRESS  # the address's newest 100
    assert kept == [True]


def test_a_table_full_of_unused_sessions_makes_room_for_a_new_client(crowded: HttpServer) -> None:
    flooders = [Connection(crowded, f"127.0.1.{number}") for number in range(MAX_SESSIONS // PER_ADDRESS)]
    for flooder in flooders:
        for _ in range(PER_ADDRESS):
            flooder.open(confirm=False)
        flooder.close()
    newcomer = Connection(crowded, "127.0.2.1")
    session_id = newcomer.open()
    assert newcomer.alive([session_id]) == [True]
    newcomer.close()


def test_fifty_users_opening_calling_and_deleting_sessions_are_never_refused(crowded: HttpServer) -> None:
    def user(_: int) -> list[int]:
        connection = Connection(crowded, "127.0.0.1")
        statuses = []
        for _ in range(4):
            session_id = connection.open()
            statuses.append(connection.post(LIST, session_id)[0])
            connection.http.request("DELETE", "/mcp", headers={**LEGACY, "mcp-session-id": session_id})
            response = connection.http.getresponse()
            response.read()
            statuses.append(response.status)
        connection.close()
        return statuses

    with ThreadPoolExecutor(50) as pool:
        statuses = list(pool.map(user, range(50)))
    assert statuses == [[200, 200] * 4] * 50
