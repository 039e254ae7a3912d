"""One HTTP connection: uvicorn's httptools protocol with bounded request heads.

- A request head (request line and header fields) is counted as it arrives: past ``max_head_bytes``,
  or with more than :data:`MAX_HEADER_FIELDS` fields, it is refused 431 and the connection closed, so
  what follows is never read. A head that begins in the same read as the end of the request before it
  (pipelining) is counted from the next read; after a response sent before its request's body was read
  (a refusal), what still comes counts as the next head.
- A head not whole ``head_timeout`` seconds after its first byte ends its connection (408 when part of
  it came; a new connection that sends nothing is closed silently). One timer per server looks at every
  connection :data:`LOOKS` times per timeout, so a slow head ends between one and 1.25 timeouts.
- An absolute-form target (``POST http://host/mcp``) names the request's authority (RFC 9112 section
  3.2.2): the app sees it as the ``Host``, so the Host check judges what the target names.

On the way of a normal request this adds a few comparisons per read and per head, no clock read and no
timer. Imported only to serve (``--http``): it needs uvicorn and httptools.
"""

from __future__ import annotations

import re
import weakref

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ...limits import DEFAULT_HEAD_SECONDS, DEFAULT_MAX_HEAD_BYTES
from ...protocol import INVALID_REQUEST
from .replies import refusal_body

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    from typing import Any

#: Header fields a request head may have.
MAX_HEADER_FIELDS = 100
#: How often per head timeout the clock looks at the connections.
LOOKS = 4
#: The authority of an absolute-form request target.
ABSOLUTE_FORM = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)")


class HeadRefused(Exception):
    """Stops the parser in the middle of a head that is refused."""


class HttpConnection(HttpToolsProtocol):
    """uvicorn's httptools protocol, with request heads bounded in size and time (see the module)."""

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
        max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES,
        head_timeout: float = DEFAULT_HEAD_SECONDS,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.max_head_bytes = max_head_bytes
        self.head_timeout = head_timeout
        #: Bytes the head being read may still take; None from the end of a head until more comes after its
        #: request (its body read, or its response sent).
        self.head_left: int | None = max_head_bytes
        #: ``(request before, look)``: the clock's first look at the head now unfinished.
        self.seen: tuple[Any, int] | None = None
        #: The status and message of a head refused in the parser's middle.
        self.refusal: tuple[int, str] | None = None

    # -- the head, as it arrives -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        HeadClock.of(self).start()

    def data_received(self, data: bytes) -> None:
        left = self.head_left
        if left is None and (not self.cycle.more_body or self.cycle.response_complete):  # a new head begins
            left = self.max_head_bytes
        if left is not None:
            if len(data) > left:
                self.head_overflow(data, left)
                return
            self.head_left = left - len(data)
        HttpToolsProtocol.data_received(self, data)  # not super(), which costs more on every request's way

    def head_overflow(self, data: bytes, left: int) -> None:
        """A read longer than the head may still be: the head must end within what it may take; what
        follows it is the body (and perhaps the next request)."""
        view = memoryview(data)
        self.head_left = 0
        if left:
            HttpToolsProtocol.data_received(self, view[:left])
        if self.transport.is_closing():
            return
        if self.head_left == 0:
            self.refuse(431, f"Request Header Fields Too Large: the limit is {self.max_head_bytes} bytes")
        else:
            self.data_received(view[left:])

    def on_headers_complete(self) -> None:
        self.head_left = None
        if len(self.headers) > MAX_HEADER_FIELDS or self.url[:1] != b"/":
            self.unusual_head()
        HttpToolsProtocol.on_headers_complete(self)

    def unusual_head(self) -> None:
        """Too many fields: refused. An absolute-form target: its authority replaces every ``Host`` field
        (RFC 9112 section 3.2.2)."""
        if len(self.headers) > MAX_HEADER_FIELDS:
            self.refusal = (431, f"Request Header Fields Too Large: at most {MAX_HEADER_FIELDS} fields")
            raise HeadRefused
        target = ABSOLUTE_FORM.match(self.url)
        if target is not None:
            self.headers[:] = [field for field in self.headers if field[0] != b"host"]
            self.headers.append((b"host", target[1]))

    # -- refusals --------------------------------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a head the parser stopped on: ours when this class stopped it."""
        if self.refusal is None:
            super().send_400_response(msg)
        else:
            self.refuse(*self.refusal)

    def refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with a JSON-RPC error (unless a response is under way) and close."""
        if self.cycle is None or self.cycle.response_complete:
            body = refusal_body(INVALID_REQUEST, message)
            fields = [b"%s: %s\r\n" % field for field in self.server_state.default_headers]
            length = b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
            content_type = b"content-type: application/json\r\n"
            self.transport.write(b"".join([STATUS_LINE[status], *fields, content_type, length, body]))
        self.head_left = None
        self.transport.close()

    # -- time ------------------------------------------------------------------------------------------

    def look(self, now: int) -> None:
        """The clock's look: end a head unfinished for :data:`LOOKS` looks (a new connection's counts from its
        start; between two requests uvicorn's keep-alive time applies until a head begins)."""
        left = self.head_left
        if left is None:
            self.seen = None
        elif self.seen is None or self.seen[0] is not self.cycle:
            self.seen = (self.cycle, now)
        elif now - self.seen[1] >= LOOKS and not self.transport.is_closing():
            if left == self.max_head_bytes:
                self.transport.close()
            else:
                self.refuse(408, f"Request Timeout: the request head did not arrive within {self.head_timeout:g} s")


class HeadClock:
    """The head timeout of every connection of one server: one timer, :data:`LOOKS` looks per timeout,
    running while the server has connections of this kind."""

    #: The clock of each server (uvicorn's server state).
    clocks: weakref.WeakKeyDictionary[Any, HeadClock] = weakref.WeakKeyDictionary()

    def __init__(self, connection: HttpConnection) -> None:
        self.loop = connection.loop
        self.connections = connection.connections
        self.step = connection.head_timeout / LOOKS
        self.looks = 0
        self.timer: asyncio.TimerHandle | None = None

    @classmethod
    def of(cls, connection: HttpConnection) -> HeadClock:
        clock = cls.clocks.get(connection.server_state)
        if clock is None:
            clock = cls.clocks[connection.server_state] = cls(connection)
        return clock

    def start(self) -> None:
        if self.timer is None:
            self.timer = self.loop.call_later(self.step, self.look)

    def look(self) -> None:
        self.looks += 1
        watching = False
        for connection in list(self.connections):
            if isinstance(connection, HttpConnection):
                watching = True
                connection.look(self.looks)
        self.timer = self.loop.call_later(self.step, self.look) if watching else None
