"""One POST: its body read within the message limit, parsed, and told apart as the line rules would.

What a body is decides where it goes (a session, the 2026-07-28 catalogue, a refusal); its
answer's bytes always come from the line rules themselves.
"""

from __future__ import annotations

import asyncio

from orjson import JSONDecodeError, loads

from ...jsontext import id_text, is_overflow_error, loads_overflowing
from .deadlines import BodyTimeout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .deadlines import BodyDeadlines
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


class BodyTooLarge(Exception):
    """The request body exceeds the message limit."""


class ClientGone(Exception):
    """The client disconnected."""


async def read_body(receive: Callable[[], Any], limit: int, declared: bytes | None, deadlines: BodyDeadlines) -> bytes:
    """The whole request body; :class:`BodyTooLarge` as soon as it is known to exceed ``limit``,
    :class:`BodyTimeout` when it is not whole by its deadline."""
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge
    task = deadlines.begin()
    try:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        body = message.get("body", b"")
        size = len(body)
        if size > limit:
            raise BodyTooLarge
        if not message.get("more_body", False):  # the usual case: the whole body at once
            return body
        chunks = [body]
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
    except asyncio.CancelledError:
        if deadlines.expired(task):
            raise BodyTimeout from None
        raise
    finally:
        deadlines.end(task)


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
