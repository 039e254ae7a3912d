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
- Below ASGI: a POST or DELETE to the endpoint of an app with a direct path (:mod:`.direct`) is held from the
  end of its head; when its body ends in the same read, the direct path may answer it there, in one write, with no
  ASGI scope, receive or send. Else (the body still coming at the end of the read, or no answer at once) it
  goes to the ASGI app as uvicorn would have sent it. A request is held only when uvicorn would start it at
  once and it needs nothing the ASGI app's way adds: nothing before it is still being answered, no
  ``Expect: 100-continue``, no upgrade, no access log, no concurrency limit, writing not paused, and, from a
  client uvicorn trusts with proxy headers, no ``X-Forwarded-For`` or ``X-Forwarded-Proto``.
- Read whole: when a read is exactly one such request, plain enough to be read without the parser
  (:func:`~._headerscan_py.whole_request`: the endpoint's exact request line, token names, visible ASCII values,
  no field that changes how the body or the connection is read), arriving between requests, it is read there in
  one call, with no parser callback, and answered as a held request is; when the direct path does not answer it,
  the parser reads the same bytes as it would have, and the request goes to the ASGI app without being judged
  twice.

On the way of a normal request this adds a few comparisons per read and per head, no clock read and no
timer. The ASGI scope of a request is made only when the request goes to the ASGI app. Imported only to
serve (``--http``): it needs uvicorn and httptools.
"""

from __future__ import annotations

import re
import weakref

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ...limits import DEFAULT_HEAD_SECONDS, DEFAULT_MAX_HEAD_BYTES
from ...protocol import INVALID_REQUEST
from ._headerscan import whole_request
from .direct import DirectPath
from .replies import JSON_CONTENT_TYPE, refusal_body

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
#: The header fields by which uvicorn's proxy-headers middleware changes a request's client and scheme.
FORWARDED = (b"x-forwarded-for", b"x-forwarded-proto")
#: How much earlier than asked a timer may fire (uvloop counts whole milliseconds).
TIMER_SLACK = 0.001
#: A direct answer's content type, as uvicorn writes it.
DIRECT_TYPE = b"%s: %s\r\n" % JSON_CONTENT_TYPE
#: The methods of requests held for the direct path.
HELD_METHODS = (b"POST", b"DELETE")


class HeadRefused(Exception):
    """Stops the parser in the middle of a head that is refused."""


class _NoEvent:
    """The message event of a request answered below ASGI: nothing waits for it."""

    __slots__ = ()

    def set(self) -> None:
        pass


class Answered:
    """Stands for uvicorn's request-response cycle once a request is answered below ASGI (uvicorn and this
    class read the last request's cycle: whether its response is complete, whether its body still comes)."""

    __slots__ = ()
    response_complete = True
    more_body = False
    disconnected = False
    keep_alive = False
    message_event = _NoEvent()


def direct_path(app: Any) -> tuple[DirectPath | None, Any]:
    """The direct path of the app uvicorn serves (under its proxy-headers middleware, whose trusted hosts
    come second); None for any other app or wrapper."""
    trusted = None
    if type(app) is ProxyHeadersMiddleware:
        trusted = app.trusted_hosts
        app = app.app
    direct = getattr(app, "direct", None)
    return (direct, trusted) if type(direct) is DirectPath else (None, None)


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
        direct: bool = True,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        #: What answers requests below ASGI (None: every request goes to the ASGI app), and the hosts whose
        #: proxy headers uvicorn follows (None: none).
        self.direct, self.trusted = direct_path(self.app) if direct else (None, None)
        #: Whether this connection's requests may carry proxy headers uvicorn follows.
        self.forwarded = False
        #: The request lines read whole (:meth:`read_whole`) with their methods; None: no request is.
        self.whole_heads: tuple[tuple[bytes, bytes], ...] | None = None
        #: Whether the parser is inside a request (from its first byte to its end).
        self.in_message = False
        #: Whether the direct path has already judged the request the parser reads next (read whole, and not
        #: answered): it goes to the ASGI app without being asked again.
        self.judged = False
        #: The body read so far of the request held for the direct path (None: none held), and its method.
        self.held: list[bytes] | None = None
        self.held_method = b"POST"
        #: Whether the held request lets the connection stay open after it.
        self.keep_alive = True
        #: The event-loop time of the last answer below ASGI, while nothing has come after it (else None), and
        #: the timer that ends the connection after uvicorn's keep-alive time without a request.
        self.quiet_since: float | None = None
        self.quiet_timer: asyncio.TimerHandle | None = None
        #: uvicorn's default response fields (``date``, changed every second, and those configured), and per
        #: status a direct answer's status line and those fields as written.
        self.fields: tuple[Any, dict[int, bytes]] = (None, {})
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
        if self.trusted is not None:
            self.forwarded = (self.client[0] if self.client else None) in self.trusted
        if self.direct is not None and not (self.access_log or self.limit_concurrency is not None):
            self.whole_heads = tuple(
                (b"%s %s HTTP/1.1\r\n" % (method, self.direct.target), method) for method in HELD_METHODS
            )
        HeadClock.of(self).start()

    def data_received(self, data: bytes) -> None:
        self.quiet_since = None
        if self.whole_heads is not None and not self.in_message and self.read_whole(data):
            return
        left = self.head_left
        if left is None and (not self.cycle.more_body or self.cycle.response_complete):  # a new head begins
            left = self.max_head_bytes
        if left is not None:
            if len(data) > left:
                self.head_overflow(data, left)
                return
            self.head_left = left - len(data)
        self.feed(data)

    def feed(self, data: bytes | memoryview) -> None:
        """uvicorn reads ``data``; then a request held whose body has not ended goes to the ASGI app, and
        after a request answered below ASGI the connection waits for the next as uvicorn's would."""
        before = self.cycle
        HttpToolsProtocol.data_received(self, data)  # not super(), which costs more on every request's way
        if self.held is not None:
            self.release(False)
        if self.cycle is not before and type(self.cycle) is Answered:
            self.answered()

    def head_overflow(self, data: bytes, left: int) -> None:
        """A read longer than the head may still be: the head must end within what it may take; what
        follows it is the body (and perhaps the next request)."""
        view = memoryview(data)
        self.head_left = 0
        if left:
            self.feed(view[:left])
        if self.transport.is_closing():
            return
        if self.head_left == 0:
            self.refuse(431, f"Request Header Fields Too Large: the limit is {self.max_head_bytes} bytes")
        else:
            self.data_received(view[left:])

    def on_message_begin(self) -> None:
        self.in_message = True
        self.url = b""
        self.expect_100_continue = False
        self.headers = []
        self.scope = None  # type: ignore[assignment]  # made when the request goes to the ASGI app

    def on_headers_complete(self) -> None:
        self.head_left = None
        judged, self.judged = self.judged, False
        if len(self.headers) > MAX_HEADER_FIELDS or self.url[:1] != b"/":
            self.unusual_head()
        elif self.direct is not None and not judged and self.url == self.direct.target and self.holds():
            self.held = []
            return
        self.to_asgi()

    def to_asgi(self) -> None:
        """The request goes to the ASGI app: its scope is made (uvicorn's, with the head as read), then
        uvicorn starts it (or queues it behind the one being answered)."""
        url, headers, expect = self.url, self.headers, self.expect_100_continue
        HttpToolsProtocol.on_message_begin(self)
        self.url, self.headers, self.expect_100_continue = url, headers, expect
        self.scope["headers"] = headers
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

    # -- below ASGI ------------------------------------------------------------------------------------

    def holds(self) -> bool:
        """Whether the request whose head has just ended (to the endpoint) is held for the direct path."""
        cycle = self.cycle
        parser = self.parser
        method = parser.get_method()
        if (
            method not in HELD_METHODS
            or (cycle is not None and not cycle.response_complete)
            or self.expect_100_continue
            or parser.should_upgrade()
            or self.flow.write_paused
            or self.access_log
            or self.limit_concurrency is not None
        ):
            return False
        if self.proxied(self.headers):
            return False
        self.keep_alive = parser.get_http_version() != "1.0" and parser.should_keep_alive()
        self.held_method = method
        return True

    def proxied(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """Whether uvicorn's proxy-headers middleware changes the client or scheme of a request with these fields."""
        if self.forwarded:
            for name, _ in headers:
                if name in FORWARDED:
                    return True
        return False

    def direct_answer(self, method: bytes, headers: list[tuple[bytes, bytes]], body: bytes) -> Any:
        """The direct path's answer to a whole request on this connection, or None (the ASGI app serves it). A
        fault is the ASGI app's to meet again, and answer as uvicorn does (500)."""
        server = self.server
        try:
            return self.direct.answer(method, headers, body, server[0] if server else None, self.scheme, self.client)
        except Exception:
            return None

    def read_whole(self, data: bytes) -> bool:
        """Answer ``data`` below ASGI when it is one whole plain request to the endpoint, arriving while nothing is
        being answered, and the direct path answers it; False (nothing changed) when the parser is to read it."""
        cycle = self.cycle
        if (cycle is not None and not cycle.response_complete) or self.pipeline or self.flow.write_paused:
            return False
        request = whole_request(data, self.whole_heads, self.max_head_bytes)
        if request is None:
            return False
        method, headers, body = request
        if self.proxied(headers):
            return False
        answer = self.direct_answer(method, headers, body)
        if answer is None:
            self.judged = True
            return False
        self._unset_keepalive_if_required()
        self.head_left = None
        self.keep_alive = True
        self.respond(*answer)
        self.answered()
        return True

    def on_body(self, body: bytes) -> None:
        if self.held is None:
            HttpToolsProtocol.on_body(self, body)
        else:
            self.held.append(body)

    def on_message_complete(self) -> None:
        self.in_message = False
        held = self.held
        if held is None:
            HttpToolsProtocol.on_message_complete(self)
            return
        answer = self.direct_answer(self.held_method, self.headers, held[0] if len(held) == 1 else b"".join(held))
        if answer is None:
            self.release(True)
        else:
            self.held = None
            self.respond(*answer)

    def release(self, complete: bool) -> None:
        """The held request goes to the ASGI app with its body read so far (``complete``: the whole body)."""
        held = self.held
        self.held = None
        if self.transport.is_closing():  # the parser refused what followed the head
            return
        self.to_asgi()
        for chunk in held:
            HttpToolsProtocol.on_body(self, chunk)
        if complete:
            HttpToolsProtocol.on_message_complete(self)

    def respond(self, status: int, answer: bytes, extra: list[tuple[bytes, bytes]] | None) -> None:
        """Write the direct answer as uvicorn writes the ASGI app's (:func:`~.replies.json_response`): status line,
        uvicorn's default fields, the answer's, its content type when it has a body, its length, ``connection:
        close`` when the connection ends, then the body."""
        fields = self.server_state.default_headers
        if fields is not self.fields[0]:
            self.fields = (fields, {})
        heads = self.fields[1]
        head = heads.get(status)
        if head is None:
            head = heads[status] = b"".join([STATUS_LINE[status], *[b"%s: %s\r\n" % field for field in fields]])
        if extra:
            head += b"".join([b"%s: %s\r\n" % field for field in extra])
        end = b"\r\n" if self.keep_alive else b"connection: close\r\n\r\n"
        kind = DIRECT_TYPE if answer else b""
        self.transport.write(b"%s%scontent-length: %d\r\n%s%s" % (head, kind, len(answer), end, answer))
        self.cycle = Answered()  # type: ignore[assignment]
        self.server_state.total_requests += 1
        if not self.keep_alive:
            self.transport.close()

    def answered(self) -> None:
        """After a read whose last request was answered below ASGI: what uvicorn does once a response is
        complete: read again, and end the connection when nothing more comes within uvicorn's keep-alive
        time. One timer serves the answers of a connection: when it finds a later answer than the one it was
        set for, it waits again for the rest of that one's time (a timer per answer costs more than the rest
        of the answer's way)."""
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        self.quiet_since = self.loop.time()
        if self.quiet_timer is None:
            self.quiet_timer = self.loop.call_at(self.quiet_since + self.timeout_keep_alive, self.quiet_end)

    def quiet_end(self) -> None:
        """The keep-alive timer of answers below ASGI: the connection ends if nothing came since the last."""
        self.quiet_timer = None
        if self.quiet_since is None or self.transport.is_closing():
            return
        due = self.quiet_since + self.timeout_keep_alive
        if self.loop.time() + TIMER_SLACK >= due:
            self.timeout_keep_alive_handler()
        else:
            self.quiet_timer = self.loop.call_at(due, self.quiet_end)

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
