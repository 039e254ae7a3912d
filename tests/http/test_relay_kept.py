"""Relay connections kept between requests (``transports/http/relay.py``): two processes' relays in one event
loop, one relaying to the other. A connection whose request ended whole serves the next request; one whose
body the owner never read, or whose client left, is closed; no more than ``IDLE_CONNECTIONS`` wait."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from shipcode_mcp.transports.http import relay
from shipcode_mcp.transports.http.relay import Relay

START = {"type": "http.response.start", "status": 200, "headers": [(b"x-seen", b"1")]}


async def reading_app(scope: dict[str, Any], receive: Callable[[], Any], send: Callable[..., Any]) -> None:
    """Reads the whole body; answers with it."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send(START)
    await send({"type": "http.response.body", "body": scope["path"].encode() + b" " + body})


async def refusing_app(scope: dict[str, Any], receive: Callable[[], Any], send: Callable[..., Any]) -> None:
    """Answers without reading the body."""
    await send(START)
    await send({"type": "http.response.body", "body": b"refused"})


class Client:
    """The relaying process's side of one request: its body in chunks, then what comes back."""

    def __init__(self, chunks: list[bytes], leaves: bool = False, slow: bool = False) -> None:
        self.chunks = list(chunks)
        self.leaves = leaves
        #: Whether the body's second chunk comes only once the response is whole.
        self.slow = slow
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self.answered = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.slow and len(self.chunks) == 1:
            await self.answered.wait()
        if self.chunks:
            chunk = self.chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(self.chunks)}
        if self.leaves:
            return {"type": "http.disconnect"}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            self.answered.set()


def scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "headers": [(b"host", b"localhost")],
    }


def answer(body: bytes) -> list[dict[str, Any]]:
    return [
        {"type": "http.response.start", "status": 200, "headers": [(b"x-seen", b"1")]},
        {"type": "http.response.body", "body": body, "more_body": False},
    ]


def relayed(tmp_path, app, requests: list[Client], concurrent: bool = False) -> tuple[list, int, int]:
    """Each client's request relayed from one process to the other, one after another (or all at once): what
    each got, how many relay connections the owner accepted, and how many wait afterwards."""

    async def run() -> tuple[list, int, int]:
        accepted = 0
        here, owner = Relay(str(tmp_path), 2), Relay(str(tmp_path), 2)
        serve = owner._serve

        async def counting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal accepted
            accepted += 1
            await serve(reader, writer)

        owner._serve = counting  # type: ignore[method-assign]
        await here.start(app)
        await owner.start(app)
        path = owner.socket_path(1)
        forwards = [
            here.forward(path, scope(f"/{i}"), client.receive, client.send) for i, client in enumerate(requests)
        ]
        if concurrent:
            await asyncio.gather(*forwards)
        else:
            for forward in forwards:
                await forward
        await asyncio.sleep(0.05)  # the owner sees what closed
        waiting = len(here.idle.get(path, []))
        here.stop()
        owner.stop()
        await asyncio.sleep(0.05)
        return [client.sent for client in requests], accepted, waiting

    return asyncio.run(run())


def test_one_connection_serves_request_after_request(tmp_path) -> None:
    clients = [Client([b"a%d" % i, b"b", b"c"]) for i in range(20)]
    sent, accepted, waiting = relayed(tmp_path, reading_app, clients)
    assert sent == [answer(b"/%d a%dbc" % (i, i)) for i in range(20)]
    assert (accepted, waiting) == (1, 1)


def test_a_body_the_owner_did_not_read_closes_its_connection(tmp_path) -> None:
    clients = [Client([b"x", b"y"], slow=True), Client([b"z"]), Client([b"x", b"y"], slow=True), Client([b"z"])]
    sent, accepted, waiting = relayed(tmp_path, refusing_app, clients)
    assert sent == [answer(b"refused")] * 4
    assert (accepted, waiting) == (3, 1)


def test_a_client_that_leaves_closes_its_connection(tmp_path) -> None:
    clients = [Client([b"a"]), Client([], leaves=True), Client([b"b"])]
    sent, accepted, waiting = relayed(tmp_path, reading_app, clients)
    assert sent[0] == answer(b"/0 a") and sent[2] == answer(b"/2 b")
    assert (accepted, waiting) == (2, 1)


@pytest.mark.parametrize("requests", [3, 30])
def test_at_most_so_many_connections_wait(tmp_path, requests: int) -> None:
    clients = [Client([b"r%d" % i]) for i in range(requests)]
    sent, accepted, waiting = relayed(tmp_path, reading_app, clients, concurrent=True)
    assert sent == [answer(b"/%d r%d" % (i, i)) for i in range(requests)]
    assert (accepted, waiting) == (requests, min(requests, relay.IDLE_CONNECTIONS))


ECHO = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"far"}}}'
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
JSON = {"host": "localhost:8000", "content-type": "application/json", "accept": "application/json, text/event-stream"}

#: Relayed requests to the process holding a session: (method, header fields given the session id, body chunks).
RELAYED = {
    "call": ("POST", lambda s: {"mcp-session-id": s}, [ECHO]),
    "call, body in chunks": ("POST", lambda s: {"mcp-session-id": s}, [ECHO[:20], ECHO[20:]]),
    "initialized": ("POST", lambda s: {"mcp-session-id": s}, [INITIALIZED]),
    "call, foreign host": ("POST", lambda s: {"mcp-session-id": s, "host": "evil.example"}, [ECHO]),
    "call, unknown session": ("POST", lambda s: {"mcp-session-id": "1.nope"}, [ECHO]),
    "call, event streams only": ("POST", lambda s: {"mcp-session-id": s, "accept": "text/event-stream"}, [ECHO]),
    "DELETE": ("DELETE", lambda s: {"mcp-session-id": s}, [b""]),
    "DELETE twice": ("DELETE", lambda s: {"mcp-session-id": s}, [b""]),
    "DELETE, unknown session": ("DELETE", lambda s: {"mcp-session-id": "1.nope"}, [b""]),
}


def relayed_to_an_app(tmp_path, direct: bool) -> list[list[dict[str, Any]]]:
    """Each of :data:`RELAYED` relayed, in turn, to a process whose app holds one session (opened first)."""
    from shipcode_mcp import Server, defaults

    async def run() -> list[list[dict[str, Any]]]:
        server = Server("relayed", version="1.0.0")
        server.tool()(defaults.echo)
        app = server.http_app()
        if not direct:
            app.direct = None
        here, owner = Relay(str(tmp_path), 2), Relay(str(tmp_path), 2)
        await here.start(app)
        app.sessions.prefix = await owner.start(app)
        await app.start()
        opening = Client([b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'])
        await app(dict(scope("/mcp"), headers=fields(JSON)), opening.receive, opening.send)
        session = dict(opening.sent[0]["headers"])[b"mcp-session-id"].decode()
        answers = []
        for method, headers, chunks in RELAYED.values():
            client = Client(chunks)
            relayed_scope = dict(scope("/mcp"), method=method, headers=fields({**JSON, **headers(session)}))
            await here.forward(owner.socket_path(1), relayed_scope, client.receive, client.send)
            answers.append([named(message, session) for message in client.sent])
        here.stop()
        owner.stop()
        await app.stop()
        await asyncio.sleep(0.05)  # the relay connections end
        return answers

    return asyncio.run(run())


def named(message: dict[str, Any], session: str) -> dict[str, Any]:
    """A response message with the session's random id written ``SESSION``."""
    if "headers" not in message:
        return message
    return {**message, "headers": [(k, b"SESSION" if v == session.encode() else v) for k, v in message["headers"]]}


def fields(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode(), value.encode()) for name, value in headers.items()]


def test_the_owner_answers_below_asgi_what_its_app_answers(served_engine, tmp_path) -> None:
    """The process holding a session answers a relayed request its direct path answers without its ASGI app:
    the same messages back, for each request of :data:`RELAYED`."""
    (tmp_path / "below").mkdir()
    (tmp_path / "asgi").mkdir()
    below = relayed_to_an_app(tmp_path / "below", True)
    through_asgi = relayed_to_an_app(tmp_path / "asgi", False)
    assert below == through_asgi
    assert [sent[0]["status"] for sent in below] == [200, 200, 202, 421, 404, 200, 200, 404, 404]
