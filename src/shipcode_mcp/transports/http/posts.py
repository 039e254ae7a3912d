"""One POST: its body parsed and told apart as the line rules would.

What a body is decides where it goes (a session, the 2026-07-28 catalogue, a refusal); its
answer's bytes always come from the line rules themselves.
"""

from __future__ import annotations

from orjson import JSONDecodeError, loads

from ...jsontext import id_text, is_overflow_error, loads_overflowing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .headers import RequestHeaders

_PARAMS_KINDS = (dict, list)
#: Envelope kinds of a parsed body, as the line rules tell them apart.
REQUEST, NOTIFICATION, RESPONSE, INVALID = range(4)


def envelope(message: Any) -> int:
    """What a parsed body is, by the line rules' envelope checks (their answers stay theirs)."""
    if type(message) is not dict:
        return INVALID
    request_id = message.get("id")
    if "id" in message and type(request_id) is not int and type(request_id) is not str:
        return INVALID
    method = message.get("method")
    params = message.get("params", None)
    if type(method) is not str or ("params" in message and type(params) not in _PARAMS_KINDS):
        return RESPONSE if "method" not in message and ("result" in message or "error" in message) else INVALID
    if message.get("jsonrpc") != "2.0":
        return INVALID
    return REQUEST if "id" in message else NOTIFICATION


def parsed(body: bytes) -> Any:
    """The body as JSON (orjson, with the line rules' fallback for overflowing numbers); None if it is not."""
    try:
        return loads(body)
    except JSONDecodeError as error:
        if is_overflow_error(error):
            try:
                return loads_overflowing(body)
            except ValueError:
                return None
        return None


class Post:
    """One POST being served: its ASGI pair, headers and body, and what the body is."""

    __slots__ = (
        "receive",
        "send",
        "headers",
        "body",
        "message",
        "kind",
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
    ) -> None:
        self.receive = receive
        self.send = send
        self.headers = headers
        self.body = body
        self.message = parsed(body)
        self.kind = envelope(self.message)
        #: The method of a request (None otherwise).
        self.method = self.message["method"] if self.kind == REQUEST else None
        #: The request id as answers write it (``null`` when it has none).
        self.rid = (id_text(self.message.get("id")) if self.kind == REQUEST else None) or b"null"
        self.json_ok = json_ok
        self.stream_ok = stream_ok
        self.caller = caller
