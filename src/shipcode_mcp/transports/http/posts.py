"""One POST: its body parsed and told apart once, by the line rules (:func:`~shipcode_mcp.lines.envelope`).

What a body is decides where it goes (a session, the 2026-07-28 catalogue, a refusal); the engine then
judges that same parse (``Engine.judge``), so its answer's bytes are the line rules' own.
"""

from __future__ import annotations

from ...lines import REFUSED, REQUEST, envelope, refusal
from ...protocol import PARSE_ERROR_LINE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ...lines import Envelope
    from .headers import RequestHeaders


class Post:
    """One POST being served: its ASGI pair, headers and body, and what the body is."""

    __slots__ = (
        "receive",
        "send",
        "headers",
        "body",
        "parsed",
        "message",
        "kind",
        "refusal",
        "method",
        "rid",
        "json_ok",
        "stream_ok",
        "caller",
    )

    def __init__(
        self,
        receive: Callable[[], Any],
        send: Callable[..., Any],
        headers: RequestHeaders,
        body: bytes,
        json_ok: bool,
        stream_ok: bool,
        caller: Any,
        max_bytes: int,
    ) -> None:
        self.receive = receive
        self.send = send
        self.headers = headers
        self.body = body
        #: The body parsed and told apart: what the engine judges (``Served.judge``).
        self.parsed: Envelope = envelope(body, max_bytes)
        kind, id_bytes, method, _, message = self.parsed
        #: The body as JSON (None when it is not JSON).
        self.message: Any = message
        #: What the body is: a kind of :mod:`shipcode_mcp.lines` (``REQUEST``, ``NOTIFICATION``, ...).
        self.kind = kind
        #: The line rules' answer to a refused body (a blank one, which they leave unanswered, is a parse
        #: error here); None when the body is a message to judge.
        self.refusal = (refusal(kind, id_bytes) or PARSE_ERROR_LINE) if kind in REFUSED else None
        #: The method of a request (None otherwise).
        self.method = method if kind == REQUEST else None
        #: The request id as answers write it (``null`` when it has none).
        self.rid = (id_bytes if kind == REQUEST else None) or b"null"
        self.json_ok = json_ok
        self.stream_ok = stream_ok
        self.caller = caller
