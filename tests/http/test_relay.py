"""Legacy sessions across ``--processes 2``: every request of a session is served whichever process its
connection lands on (kept alive or not), by the process holding the session, event streams included."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from support.httpserver import HttpServer

APP = str(Path(__file__).parents[1] / "apps" / "relayed.py")
VERSION = "2025-11-25"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INITIALIZE = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t"}},
    }
)
INITIALIZE_ANSWER = (
    b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},'
    b'"logging":{}},"serverInfo":{"name":"web","version":"1.0.0"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
NOT_FOUND = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}\n'
ASKED = (
    b'event: message\ndata: {"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":'
    b'"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},'
    b'"required":["name"]}}}\n\n'
)
ANSWERED = b'{"jsonrpc":"2.0","id":"s1","result":{"action":"accept","content":{"name":"Ada"}}}'
GREETED = (
    b'event: message\ndata: {"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}\n\n'
)
LIST_CHANGED = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n'


@pytest.fixture(autouse=True)
def close_connections() -> Iterator[None]:
    yield
    for connection in Connection.opened:
        connection.close()
    Connection.opened.clear()


def call(rid: int, tool: str, arguments: dict) -> bytes:
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )


def echoed(rid: int, text: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}\n' % (
        rid,
        text.encode(),
    )


def of(session_id: str) -> dict[str, str]:
    return {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": VERSION}


class Connection:
    """One kept-alive connection, and which process it landed on (learnt by opening a session on it)."""

    #: Every connection a test opened, closed after it.
    opened: list[Connection] = []

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.opened.append(self)
        status, headers, body = self.ask("POST", INITIALIZE, HEADERS)
        assert (status, body) == (200, INITIALIZE_ANSWER)
        #: The session opened to learn the process: its id begins with that process's index.
        self.probe = headers["mcp-session-id"]
        self.process = self.probe.split(".")[0]

    def ask(self, method: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        response = self.start(method, body, headers)
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()

    def close(self) -> None:
        self.http.close()

    def start(self, method: str, body: bytes, headers: dict[str, str]) -> http.client.HTTPResponse:
        self.http.request(method, "/mcp", body, headers)
        return self.http.getresponse()


def one_on_each_process(port: int) -> tuple[Connection, Connection]:
    """A kept-alive connection to each of the two processes (new ones until both are found)."""
    found: dict[str, Connection] = {}
    for _ in range(400):
        connection = Connection(port)
        if connection.process in found:
            connection.close()
            time.sleep(0.02)  # an idle process may take every connection while the other one starts
        else:
            found[connection.process] = connection
        if len(found) == 2:
            return found["0"], found["1"]
    raise AssertionError(f"400 connections all landed on process {list(found)}")


def on_process(port: int, process: str) -> Connection:
    """A new kept-alive connection landed on ``process``."""
    for _ in range(400):
        connection = Connection(port)
        if connection.process == process:
            return connection
        connection.close()
        time.sleep(0.02)
    raise AssertionError(f"400 connections missed process {process}")


def test_sessions_are_served_whichever_process_a_new_connection_lands_on(engine_name: str) -> None:
    server = HttpServer(engine_name, "--processes", "2", app=APP)
    try:
        seen = []
        for i in range(40):
            status, headers, body = server.post(INITIALIZE, HEADERS)
            session_id = headers["mcp-session-id"]
            seen.append((status, body, session_id[:2], len(session_id)))
            seen.append(server.post(INITIALIZED, of(session_id))[::2])
            seen.append(server.post(call(i, "echo", {"text": f"n{i}"}), of(session_id))[::2])
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            connection.request("DELETE", "/mcp", headers=of(session_id))
            response = connection.getresponse()
            seen.append((response.status, response.read()))
            connection.close()
            seen.append(server.post(call(i, "echo", {"text": "gone"}), of(session_id))[::2])
    finally:
        assert server.stop() == 0
    expected = []
    for i, (_, _, prefix, length) in enumerate(seen[::5]):
        assert prefix in ("0.", "1.") and length == 34  # the process's index, then 32 random characters
        expected += [(200, INITIALIZE_ANSWER, prefix, 34), (202, b""), (200, echoed(i, f"n{i}")), (200, b"")]
        expected.append((404, NOT_FOUND))
    assert seen == expected


def test_a_session_streams_and_ends_through_the_other_process(engine_name: str) -> None:
    server = HttpServer(engine_name, "--processes", "2", app=APP)
    try:
        home, other = one_on_each_process(server.port)
        session = home.probe
        assert other.ask("POST", INITIALIZED, of(session))[::2] == (202, b"")
        # A request to the client and its answer, both through the process not holding the session.
        asking = on_process(server.port, other.process)
        stream = other.start("POST", call(9, "greet", {}), of(session))
        head = (stream.status, stream.getheader("content-type"), stream.getheader("mcp-session-id"))
        asked = b""
        while len(asked) < len(ASKED):
            asked += stream.read1(len(ASKED) - len(asked))
        answered = asking.ask("POST", ANSWERED, of(session))[::2]
        greeted = stream.read()
        # The session's GET stream opened through the other process; a list change on its own process reaches it.
        listening = on_process(server.port, other.process)
        events = listening.start("GET", b"", of(session))
        events_head = (events.status, events.getheader("content-type"))
        grown = home.ask("POST", call(3, "grow", {"name": "later"}), of(session))[::2]
        change = b""
        while len(change) < len(LIST_CHANGED):
            change += events.read1(len(LIST_CHANGED) - len(change))
        ended = other.ask("DELETE", b"", of(session))[::2]
        rest = events.read()
        after = home.ask("POST", call(4, "echo", {"text": "x"}), of(session))[::2]
    finally:
        assert server.stop() == 0
    assert head == (200, "text/event-stream", session)
    assert (asked, answered, greeted) == (ASKED, (202, b""), GREETED)
    assert (events_head, grown, change) == ((200, "text/event-stream"), (200, echoed(3, "later")), LIST_CHANGED)
    assert (ended, rest, after) == ((200, b""), b"", (404, NOT_FOUND))


def test_an_id_naming_a_process_that_does_not_hold_it_is_not_found(engine_name: str) -> None:
    server = HttpServer(engine_name, "--processes", "2", app=APP)
    try:
        zero, one = one_on_each_process(server.port)
        forged = [
            connection.ask("POST", INITIALIZED, of(f"{index}.{'A' * 32}"))[::2]
            for connection in (zero, one)
            for index in (0, 1, 2)
        ]
    finally:
        assert server.stop() == 0
    assert forged == [(404, NOT_FOUND)] * 6


def test_a_process_that_cannot_be_reached_answers_session_not_found(tmp_path: Path) -> None:
    from support.httpwire import http, json_reply, seen, within

    from shipcode_mcp.transports.http.relay import Relay

    relay = Relay(str(tmp_path), 3)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(relay.socket_path(2))  # a socket left by a process that ended: nothing listens
    stale.close()

    def to(index: int):
        async def app(scope, receive, send):
            await relay.forward(relay.socket_path(index), scope, receive, send)

        return app

    answers = [seen(within(http(to(index), "POST", INITIALIZED, of("1.x")), seconds=10)) for index in (1, 2)]
    assert answers == [json_reply(404, NOT_FOUND)] * 2


def test_a_response_whose_body_no_one_read_reaches_a_relaying_process_that_reads_late(tmp_path: Path) -> None:
    """The owner answers without reading a long body, then waits for the relaying process to close: closing
    with bytes unread would reset the connection, and the response would be lost to a late reader."""
    import asyncio

    from support.httpwire import within

    from shipcode_mcp.transports.http.relay import BODY, MORE, SCOPE, START, Relay, read_frame, write_frame

    async def answer_at_once(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    async def scenario():
        relay = Relay(str(tmp_path), 2)
        await relay.start(answer_at_once)
        reader, writer = await asyncio.open_unix_connection(relay.socket_path(0))
        write_frame(
            writer,
            SCOPE,
            b'{"method":"DELETE","headers":[],"http_version":"1.1","scheme":"http","path":'
            b'"/mcp","raw_path":null,"query_string":null,"root_path":"","client":null,"server":null}',
        )
        write_frame(writer, MORE, b" " * 1048576)
        write_frame(writer, BODY, b"")
        await asyncio.sleep(0.5)  # the owner has answered and is done
        frames = [await read_frame(reader), await read_frame(reader)]
        writer.close()
        relay.stop()
        return frames

    assert within(scenario(), seconds=20) == [
        (START, b'{"status":200,"headers":[["content-length","0"]]}'),
        (BODY, b""),
    ]
