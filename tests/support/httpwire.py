"""An in-process HTTP client for ASGI apps: one request's scope, its receive and send, what came back.

``await Call(app, "POST", body=...).start()`` runs the app as a task; ``chunk()`` waits for the
next body chunk, ``disconnect()`` says the client left, ``finish()`` waits for the app to return.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

#: Headers of a well-formed POST from a local client.
POST_HEADERS = {
    "host": "localhost:8000",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LOG = "io.modelcontextprotocol/logLevel"
MODERN = "2026-07-28"
META = {V: MODERN, CAPS: {}}


class Call:
    """One HTTP request to an ASGI app."""

    def __init__(
        self,
        app: Any,
        method: str = "POST",
        body: bytes = b"",
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
        path: str = "/mcp",
        server: tuple[str, int] | None = ("127.0.0.1", 8000),
        pieces: list[bytes] | None = None,
        root_path: str = "",
        open_ended: bool = False,
    ) -> None:
        items = (
            list((headers if headers is not None else POST_HEADERS).items())
            if not isinstance(headers, list)
            else headers
        )
        self.scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": root_path + path,
            "raw_path": (root_path + path).encode(),
            "root_path": root_path,
            "query_string": b"",
            "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in items],
            "server": server,
            "client": ("127.0.0.1", 40000),
        }
        self.app = app
        self._pieces = list(pieces) if pieces is not None else [body]
        #: Whether the body never ends (its last piece still says more is coming).
        self._open_ended = open_ended
        self._gone = asyncio.Event()
        self.received = 0  # body messages the app took
        self.status: int | None = None
        self.headers: list[tuple[str, str]] = []
        self.chunks: list[bytes] = []
        self._new_chunk = asyncio.Event()
        self.ended = False
        self.task: asyncio.Task | None = None

    async def receive(self) -> dict[str, Any]:
        if self._pieces:
            piece = self._pieces.pop(0)
            self.received += 1
            return {"type": "http.request", "body": piece, "more_body": bool(self._pieces) or self._open_ended}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert self.status is None
            self.status = message["status"]
            self.headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in message["headers"]]
        elif message["type"] == "http.response.body":
            assert self.status is not None and not self.ended
            if message.get("body"):
                self.chunks.append(message["body"])
            if not message.get("more_body", False):
                self.ended = True
            self._new_chunk.set()

    def start(self) -> Call:
        self.task = asyncio.ensure_future(self.app(self.scope, self.receive, self.send))
        return self

    async def chunk(self, index: int) -> bytes:
        """Body chunk number ``index`` (from 0), waiting for it."""
        while len(self.chunks) <= index:
            assert not self.ended, f"the response ended after {len(self.chunks)} chunks"
            self._new_chunk.clear()
            await asyncio.wait(
                {self.task, asyncio.ensure_future(self._new_chunk.wait())}, return_when="FIRST_COMPLETED"
            )
            if self.task.done() and len(self.chunks) <= index:
                self.task.result()
                raise AssertionError(f"the app returned after {len(self.chunks)} chunks")
        return self.chunks[index]

    def disconnect(self) -> None:
        self._gone.set()

    async def finish(self) -> Call:
        if self.task is None:
            self.start()
        await self.task
        return self

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def header(self, name: str) -> str | None:
        found = [value for key, value in self.headers if key == name]
        return found[0] if found else None


async def http(app: Any, method: str = "POST", body: bytes = b"", headers: Any = None, **options: Any) -> Call:
    """One whole request."""
    return await Call(app, method, body, headers, **options).finish()


def seen(call: Call) -> tuple[int | None, list[tuple[str, str]], bytes]:
    """Status, headers and body of a finished call: what tests compare whole."""
    return call.status, call.headers, call.body


def json_reply(status: int, body: bytes, *extra: tuple[str, str]) -> tuple[int, list[tuple[str, str]], bytes]:
    """What a JSON response with ``body`` looks like."""
    return status, [*extra, ("content-type", "application/json"), ("content-length", str(len(body)))], body


def empty_reply(status: int, *extra: tuple[str, str]) -> tuple[int, list[tuple[str, str]], bytes]:
    return status, [*extra, ("content-length", "0")], b""


STREAM = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-accel-buffering", "no")]


def events(*lines: bytes) -> bytes:
    """An event stream's body carrying these lines."""
    return b"".join(b"event: message\ndata: " + line + b"\n" for line in lines)


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**POST_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


def modern_body(method: str, params: dict | None = None, rid: object = 1, meta: dict | None = None) -> bytes:
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**(params or {}), "_meta": meta or META}}
    )


def refusal(code: int, message: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%s}}\n' % (code, orjson.dumps(message))


def within(work: Any, seconds: float = 60) -> Any:
    """Run a coroutine to its end, failing (not hanging) after ``seconds``."""
    return asyncio.run(asyncio.wait_for(work, seconds))
