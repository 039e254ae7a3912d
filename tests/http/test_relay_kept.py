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
