"""Legacy sessions across the processes of ``--processes N``: each request reaches the process holding its session.

The processes share one listening socket, so a client's connections may land on any of them. Each
process claims an index at start-up (a lock file held while it lives, in a private directory the
command line makes for the server), listens on a Unix socket beside it, and begins the ids of its
sessions with that index and a dot (``1.`` before the same 24 random bytes). A request whose
``Mcp-Session-Id`` names another process is relayed to that process over its socket: the request as
ASGI gives it (its scope, then its body as it comes), the response as the owner sends it, chunk by
chunk, event streams included. The owner serves it as its own, every check included; a client that
leaves closes the relay, and the owner sees it leave. A request that lands on its session's process,
as a keep-alive connection's usually does, pays one comparison.

A process that cannot be reached (it ended, with its sessions) answers for it: 404 ``Session not
found``, after at most :data:`CONNECT_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import struct
import time

from orjson import dumps, loads

from ...protocol import INTERNAL_ERROR, INVALID_REQUEST
from .replies import refuse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: Seconds to reach the process holding a session before answering that it is not found.
CONNECT_SECONDS = 5.0
#: Seconds a starting process waits for an index to free up (a process being replaced still holds it).
CLAIM_SECONDS = 10.0
#: A frame's header: its kind and the length of what follows.
FRAME = struct.Struct("!BI")
#: Frame kinds: the request's scope, a body chunk (the last, or one with more to come), the response's start;
#: an event of the bus (:mod:`.siblings`: a connection whose first frame is one carries only events).
SCOPE, BODY, MORE, START, EVENT = range(5)
#: The scope members a relayed request keeps (with its headers).
SCOPE_MEMBERS = (
    "http_version",
    "method",
    "scheme",
    "path",
    "raw_path",
    "query_string",
    "root_path",
    "client",
    "server",
)
NOT_FOUND = "Session not found"


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes] | None:
    """The next frame, or None at the end of the stream."""
    try:
        kind, length = FRAME.unpack(await reader.readexactly(FRAME.size))
        return kind, await reader.readexactly(length)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


async def read_to_end(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


def write_frame(writer: asyncio.StreamWriter, kind: int, payload: bytes) -> None:
    writer.write(FRAME.pack(kind, len(payload)) + payload)


def scope_frame(scope: dict[str, Any]) -> bytes:
    """What a relayed request's scope carries, as JSON (byte strings as Latin-1 text)."""
    kept: dict[str, Any] = {name: scope.get(name) for name in SCOPE_MEMBERS}
    for name in ("raw_path", "query_string"):
        if kept[name] is not None:
            kept[name] = kept[name].decode("latin-1")
    kept["headers"] = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in scope["headers"]]
    return dumps(kept)


def scope_of(frame: bytes) -> dict[str, Any]:
    """The ASGI scope of a relayed request."""
    scope = loads(frame)
    for name in ("raw_path", "query_string"):
        if scope[name] is not None:
            scope[name] = scope[name].encode("latin-1")
    for name in ("client", "server"):
        if scope[name] is not None:
            scope[name] = tuple(scope[name])
    scope["headers"] = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in scope["headers"]]
    scope.update(type="http", asgi={"version": "3.0", "spec_version": "2.3"})
    return scope


def claim_index(directory: str, processes: int, seconds: float = CLAIM_SECONDS) -> tuple[int, int]:
    """``(index, lock descriptor)``: the first index no live process holds, held until this process ends."""
    waited = 0.0
    while True:
        for index in range(processes):
            fd = os.open(os.path.join(directory, f"{index}.lock"), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            return index, fd
        if waited >= seconds:
            raise RuntimeError(f"no free process index in {directory}: more than {processes} processes")
        time.sleep(0.05)
        waited += 0.05


class Relay:
    """This process's place among the server's processes: its index, its socket, the others' sockets."""

    def __init__(self, directory: str, processes: int) -> None:
        self.directory = directory
        self.processes = processes
        #: This process's mark (its index and a dot), once claimed.
        self.mark = b""
        #: Each other process's socket path, by its index's bytes.
        self.peers: dict[bytes, str] = {}
        #: ``heard(event)``: what takes the events the other processes carry here (the bus of :mod:`.siblings`).
        self.heard: Callable[[bytes], object] | None = None
        self._lock = -1
        self._server: asyncio.AbstractServer | None = None
        self._app: Callable[..., Any] | None = None

    def socket_path(self, index: int) -> str:
        return os.path.join(self.directory, f"{index}.sock")

    async def start(self, app: Callable[..., Any]) -> str:
        """Claim an index, listen on its socket for requests relayed to ``app``; the prefix of its session ids."""
        index, self._lock = claim_index(self.directory, self.processes)
        path = self.socket_path(index)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a socket left by the process this one replaces
        self._app = app
        self._server = await asyncio.start_unix_server(self._serve, path)
        self.mark = b"%d" % index
        self.peers = {b"%d" % other: self.socket_path(other) for other in range(self.processes) if other != index}
        return f"{index}."

    def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def owner(self, session_id: bytes) -> str | None:
        """The socket of the process holding the session ``session_id`` names, when that is another process."""
        index, dot, _ = session_id.partition(b".")
        if not dot or index == self.mark:
            return None
        return self.peers.get(index)

    # -- the process holding the session ---------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one relayed request as this process's own."""
        gone = False

        async def receive() -> dict[str, Any]:
            nonlocal gone
            frame = None if gone else await read_frame(reader)
            if frame is None:
                gone = True
                return {"type": "http.disconnect"}
            return {"type": "http.request", "body": frame[1], "more_body": frame[0] == MORE}

        async def send(message: dict[str, Any]) -> None:
            if writer.is_closing():  # the relaying process closed: sent into the void, as to a client that left
                return
            if message["type"] == "http.response.start":
                head = {"status": message["status"], "headers": message.get("headers", [])}
                head["headers"] = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in head["headers"]]
                write_frame(writer, START, dumps(head))
            else:
                more = message.get("more_body", False)
                write_frame(writer, MORE if more else BODY, message.get("body", b""))
                with contextlib.suppress(ConnectionError):
                    await writer.drain()

        try:
            frame = await read_frame(reader)
            if frame is not None and frame[0] == EVENT:
                await self._hear(frame, reader)
                return
            if frame is not None and frame[0] == SCOPE:
                await self._app(scope_of(frame[1]), receive, send)
            if not gone and not writer.is_closing():
                # Read what the relaying process still sends (a body no handler read) until it closes, having
                # read the whole response: a socket closed with bytes unread would reset the connection first.
                writer.write_eof()
                await asyncio.wait_for(read_to_end(reader), CONNECT_SECONDS)
        except (ConnectionError, TimeoutError):
            pass  # the relaying process closed (its client left), or did not close in time
        finally:
            writer.close()

    async def _hear(self, frame: tuple[int, bytes] | None, reader: asyncio.StreamReader) -> None:
        """Another process's events, until it closes."""
        while frame is not None and frame[0] == EVENT:
            if self.heard is not None:
                self.heard(frame[1])
            frame = await read_frame(reader)

    # -- the process the request landed on -------------------------------------------------------

    async def forward(
        self, path: str, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[..., Any]
    ) -> None:
        """Relay a request to the process listening at ``path``, and its response back."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), CONNECT_SECONDS)
        except (OSError, TimeoutError):
            await refuse(send, 404, INVALID_REQUEST, NOT_FOUND)
            return
        write_frame(writer, SCOPE, scope_frame(scope))
        upload = asyncio.ensure_future(self._upload(receive, writer))
        started = complete = False
        try:
            while not complete:
                frame = await read_frame(reader)
                if frame is None:
                    break
                kind, payload = frame
                if kind == START:
                    head = loads(payload)
                    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in head["headers"]]
                    await send({"type": "http.response.start", "status": head["status"], "headers": headers})
                    started = True
                else:
                    await send({"type": "http.response.body", "body": payload, "more_body": kind == MORE})
                    complete = kind == BODY
            if not complete:  # the owner stopped before its response was whole (it is ending): so does this one
                if started:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                else:
                    await refuse(send, 502, INTERNAL_ERROR, "Bad Gateway: the session's process did not answer")
        finally:
            upload.cancel()
            writer.close()

    @staticmethod
    async def _upload(receive: Callable[[], Any], writer: asyncio.StreamWriter) -> None:
        """The request's body to the owner as it comes; when the client leaves, the relay closes."""
        with contextlib.suppress(ConnectionError):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    writer.close()
                    return
                more = message.get("more_body", False)
                write_frame(writer, MORE if more else BODY, message.get("body", b""))
                await writer.drain()
