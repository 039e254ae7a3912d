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

A relay connection serves one request after another: once a request's body was all sent and its response came
whole, its connection waits for the next request to the same process (at most :data:`IDLE_CONNECTIONS` wait per
process; the others close), so a client without keep-alive costs no new Unix-socket connection per request.
Any other end (the client left, the owner answered before the whole body came) closes it. The scope goes
with the body's first frame when that comes at once, and the owner answers below ASGI what its app's direct
path answers (:mod:`.direct`), as its own connections do.

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
from .replies import json_response, refuse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: Seconds to reach the process holding a session before answering that it is not found.
CONNECT_SECONDS = 5.0
#: Seconds a starting process waits for an index to free up (a process being replaced still holds it).
CLAIM_SECONDS = 10.0
#: Relay connections kept open, waiting for the next request, per other process.
IDLE_CONNECTIONS = 8
#: Seconds a relayed request that the direct path may answer waits for its body's first frame before the app
#: serves it (the relaying process sends it right after the scope; a body that is late is the app's to wait for).
BODY_WAIT_SECONDS = 0.005
#: The methods of relayed requests the direct path may answer.
DIRECT_METHODS = ("POST", "DELETE")
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


def framed(kind: int, payload: bytes) -> bytes:
    """A frame: its header, then its payload."""
    return FRAME.pack(kind, len(payload)) + payload


def write_frame(writer: asyncio.StreamWriter, kind: int, payload: bytes) -> None:
    writer.write(framed(kind, payload))


def write_message(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    """One ASGI response message as a frame: the start (status and headers, as JSON), or a body chunk."""
    if message["type"] == "http.response.start":
        head = {"status": message["status"], "headers": message.get("headers", [])}
        head["headers"] = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in head["headers"]]
        write_frame(writer, START, dumps(head))
    else:
        write_frame(writer, MORE if message.get("more_body", False) else BODY, message.get("body", b""))


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
        #: Relay connections waiting for a request, by the socket path of the process they reach.
        self.idle: dict[str, list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = {}
        #: The relay connections this process serves (closed when it stops: they may be waiting for a request).
        self.served: set[asyncio.StreamWriter] = set()

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
        for waiting in self.idle.values():
            for _, writer in waiting:
                writer.close()
        self.idle.clear()
        for writer in self.served:
            writer.close()

    def owner(self, session_id: bytes) -> str | None:
        """The socket of the process holding the session ``session_id`` names, when that is another process."""
        index, dot, _ = session_id.partition(b".")
        if not dot or index == self.mark:
            return None
        return self.peers.get(index)

    # -- the process holding the session ---------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve the requests relayed on one connection, one after another, each as this process's own: below
        ASGI when the app's direct path answers it (:mod:`.direct`), else by the app."""
        self.served.add(writer)
        try:
            frame = await read_frame(reader)
            if frame is not None and frame[0] == EVENT:  # a connection of the bus: events only
                await self._hear(frame, reader)
                return
            while frame is not None and frame[0] == SCOPE and not writer.is_closing():
                scope = scope_of(frame[1])
                first = None
                if self._direct_target(scope):
                    first = asyncio.ensure_future(read_frame(reader))
                    await asyncio.wait((first,), timeout=BODY_WAIT_SECONDS)
                    if first.done() and self._at_once(scope, first.result(), writer):
                        await writer.drain()
                        frame = await read_frame(reader)
                        continue
                frame = await self._serve_one(scope, first, reader, writer)
        except (ConnectionError, TimeoutError):
            pass  # the relaying process closed (its client left), or did not close in time
        finally:
            self.served.discard(writer)
            writer.close()

    def _direct_target(self, scope: dict[str, Any]) -> bool:
        """Whether a relayed request is one the app's direct path may answer (a POST or DELETE to its endpoint)."""
        app = self._app
        return (
            getattr(app, "direct", None) is not None
            and scope["method"] in DIRECT_METHODS
            and scope["path"] == app.path
            and not scope["query_string"]
            and not scope["root_path"]
        )

    def _at_once(self, scope: dict[str, Any], first: tuple[int, bytes] | None, writer: asyncio.StreamWriter) -> bool:
        """Answer a relayed request whose body came whole in its ``first`` frame by the app's direct path, as the
        connections of ``--http`` do; False (nothing written) when the app is to serve it."""
        if first is None or first[0] != BODY:
            return False
        server = scope["server"]
        method = scope["method"].encode()
        try:
            answer = self._app.direct.answer(
                method, scope["headers"], first[1], server[0] if server else None, scope["scheme"], scope["client"]
            )
        except Exception:  # a fault: the app meets it too, and answers it
            return False
        if answer is None:
            return False
        for message in json_response(*answer):
            write_message(writer, message)
        return True

    async def _serve_one(
        self,
        scope: dict[str, Any],
        first: asyncio.Future[tuple[int, bytes] | None] | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> tuple[int, bytes] | None:
        """Serve one relayed request by the app (``first``: the read of its first body frame, when begun); the
        frame that follows it (the next request's scope), None at the end.

        This is the connection's one reader: it reads the body's frames for the app's ``receive``, then the
        next frame while the app finishes; the end of the stream before then is the client leaving."""
        body: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        gone = asyncio.Event()

        async def receive() -> dict[str, Any]:
            frame = await body.get()
            if frame is None:  # the whole body was read, or the client left: what comes next is its leaving
                body.put_nowait(None)
                await gone.wait()
                return {"type": "http.disconnect"}
            return {"type": "http.request", "body": frame[1], "more_body": frame[0] == MORE}

        async def send(message: dict[str, Any]) -> None:
            if writer.is_closing():  # the relaying process closed: sent into the void, as to a client that left
                return
            write_message(writer, message)
            if message["type"] != "http.response.start":
                with contextlib.suppress(ConnectionError):
                    await writer.drain()

        serving = asyncio.ensure_future(self._app(scope, receive, send))
        following = first
        whole = False  # the body's last frame was read
        try:
            while True:
                if following is None:
                    following = asyncio.ensure_future(read_frame(reader))
                await asyncio.wait((serving, following), return_when=asyncio.FIRST_COMPLETED)
                if not following.done():  # the app is done: the next frame is the next request's
                    await serving
                    if whole:
                        return await following
                    # A body no handler read: the relaying process closes, having read the whole response,
                    # and is read until then (a socket closed with bytes unread would reset the connection).
                    writer.write_eof()
                    await asyncio.wait_for(self._read_to_end(following, reader), CONNECT_SECONDS)
                    return None
                frame = following.result()
                following = None
                if frame is None:  # the relaying process closed: its client left
                    gone.set()
                    body.put_nowait(None)
                    await serving
                    return None
                if whole:  # the next request's scope, sent once this response was whole
                    await serving
                    return frame
                whole = frame[0] != MORE
                body.put_nowait(frame)
                if whole:
                    body.put_nowait(None)
        finally:
            for task in (serving, following):
                if task is not None and not task.done():
                    task.cancel()

    @staticmethod
    async def _read_to_end(following: asyncio.Future[tuple[int, bytes] | None], reader: asyncio.StreamReader) -> None:
        frame = await following
        while frame is not None:
            frame = await read_frame(reader)

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
            reader, writer = await self._connect(path)
        except (OSError, TimeoutError):
            await refuse(send, 404, INVALID_REQUEST, NOT_FOUND)
            return
        # The scope goes with the body's first frame when that comes at once (the body read with the head, as
        # most are): one write, and the owner has both in one read. Else it goes alone, on the next loop turn.
        scope_sent = [framed(SCOPE, scope_frame(scope))]
        sent: list[bool] = []  # holds True once the body's last frame is sent
        upload = asyncio.ensure_future(self._upload(receive, writer, sent, scope_sent))
        asyncio.get_running_loop().call_soon(self._send_scope, writer, scope_sent)
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
            if complete and sent and not writer.is_closing():
                self._keep(path, reader, writer)
            else:
                writer.close()

    async def _connect(self, path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the process listening at ``path``: one waiting for a request, else a new one."""
        waiting = self.idle.get(path)
        while waiting:
            reader, writer = waiting.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            writer.close()
        return await asyncio.wait_for(asyncio.open_unix_connection(path), CONNECT_SECONDS)

    def _keep(self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A connection whose request is done waits for the next one (beyond :data:`IDLE_CONNECTIONS`: closed)."""
        waiting = self.idle.setdefault(path, [])
        if len(waiting) < IDLE_CONNECTIONS and self._server is not None:
            waiting.append((reader, writer))
        else:
            writer.close()

    @staticmethod
    def _send_scope(writer: asyncio.StreamWriter, scope_sent: list[bytes]) -> None:
        """The scope's frame, unless it went with the body's first."""
        if scope_sent and not writer.is_closing():
            writer.write(scope_sent.pop())

    @staticmethod
    async def _upload(
        receive: Callable[[], Any], writer: asyncio.StreamWriter, sent: list[bool], scope_sent: list[bytes]
    ) -> None:
        """The request's body to the owner as it comes, its first frame after the scope's when that is not sent
        yet (``sent`` told when its last frame is); when the client leaves, the relay closes."""
        with contextlib.suppress(ConnectionError):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    writer.close()
                    return
                more = message.get("more_body", False)
                data = framed(MORE if more else BODY, message.get("body", b""))
                writer.write(scope_sent.pop() + data if scope_sent else data)
                if not more:
                    sent.append(True)
                await writer.drain()
