"""What goes back on the wire: JSON answers, refusals, event streams, and the HTTP status of an answer.

A JSON answer's body is the stdio server's line for the same message, newline included. An
event stream carries each line as one ``event: message`` whose ``data`` is that line.
"""

from __future__ import annotations

from ...protocol import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RESPONSE_HEAD, error_tail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any

    Send = Callable[[dict[str, Any]], Awaitable[None]]

#: HTTP status of a 2026-07-28 error answer by its code (any other answer: 200).
MODERN_ERROR_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    -32020: 400,  # HeaderMismatch
    -32021: 400,  # MissingRequiredClientCapability
    -32022: 400,  # UnsupportedProtocolVersion
    METHOD_NOT_FOUND: 404,
}
_ERROR_OPEN = b',"error":{"code":'
_NULL_ERROR_OPEN = RESPONSE_HEAD + b"null" + _ERROR_OPEN
JSON_CONTENT_TYPE = (b"content-type", b"application/json")
EMPTY_LENGTH = (b"content-length", b"0")
STREAM_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
EVENT_HEAD = b"event: message\ndata: "
#: An event-stream comment: keeps a quiet stream open through proxies.
KEEPALIVE = b":\n\n"


def error_code(answer: bytes, id_text: bytes) -> int | None:
    """The error code of an answer line to the request whose id is ``id_text`` (None: a result)."""
    for head in (RESPONSE_HEAD + id_text + _ERROR_OPEN, _NULL_ERROR_OPEN):
        if answer.startswith(head):
            return int(answer[len(head) : answer.index(b",", len(head))])
    return None


def modern_status(answer: bytes, id_text: bytes) -> int:
    """The HTTP status of a 2026-07-28 answer."""
    code = error_code(answer, id_text)
    return 200 if code is None else MODERN_ERROR_STATUS.get(code, 200)


def refusal_body(code: int, message: str, id_text: bytes = b"null") -> bytes:
    """A JSON-RPC error line refusing a request at the HTTP level."""
    return RESPONSE_HEAD + id_text + error_tail(code, message)


def json_response(
    status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two ASGI messages of a whole response; a body is JSON."""
    if body:
        fields = [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(body))]
    else:
        fields = [EMPTY_LENGTH]
    if headers:
        fields[:0] = headers
    return {"type": "http.response.start", "status": status, "headers": fields}, {
        "type": "http.response.body",
        "body": body,
    }


async def reply(send: Send, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """A whole response; a body is JSON."""
    start, end = json_response(status, body, headers)
    await send(start)
    await send(end)


async def refuse(
    send: Send, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """Refuse with an HTTP status and a JSON-RPC error whose id is null."""
    await reply(send, status, refusal_body(code, message), headers)


async def open_stream(send: Send, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Begin a ``text/event-stream`` response."""
    await send({"type": "http.response.start", "status": 200, "headers": STREAM_HEADERS + list(headers or ())})


async def stream_line(send: Send, line: bytes) -> None:
    """One line as one event."""
    await send({"type": "http.response.body", "body": EVENT_HEAD + line + b"\n", "more_body": True})


async def close_stream(send: Send) -> None:
    await send({"type": "http.response.body", "body": b""})
