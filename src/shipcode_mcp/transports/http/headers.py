"""The 2026-07-28 request headers checked against the body: -32020 (HeaderMismatch) when they differ.

``MCP-Protocol-Version`` must equal ``_meta``'s protocol version, ``Mcp-Method`` the method and,
for ``tools/call``, ``resources/read`` and ``prompts/get``, ``Mcp-Name`` the tool or prompt name
or the uri. A tool parameter whose schema carries ``x-mcp-header: Name`` is mirrored in
``Mcp-Param-Name``: present in the arguments, it must be in the header too, and equal. Values
are trimmed and compared case-sensitively; ``=?base64?...?=`` values are decoded first; a
header given twice, or with characters outside visible ASCII, space and tab, is refused. Other
headers read may be given once only too (:data:`ONCE_ONLY`), except ``Accept``, whose lines are
joined into one list.
"""

from __future__ import annotations

import base64
import binascii
from functools import lru_cache

from ...protocol import META_VERSION, RpcError
from ...schema import header_parameters
from ._headerscan import HEADERS_READ, header_value, plain_headers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_READ = frozenset(HEADERS_READ)
#: The code of HeaderMismatch errors.
HEADER_MISMATCH = -32020
#: Methods whose ``Mcp-Name`` header is required, and the params member it mirrors.
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_SENTINEL_OPEN = "=?base64?"
_SENTINEL_CLOSE = "?="


def mismatch(message: str) -> RpcError:
    return RpcError(HEADER_MISMATCH, f"Header mismatch: {message}")


#: The headers read that a request may give once only, by the names messages show: a repeat is refused
#: before anything else (the MCP headers are refused by the checks here, -32020 with the request's id).
ONCE_ONLY = {
    b"host": "Host",
    b"origin": "Origin",
    b"authorization": "Authorization",
    b"mcp-session-id": "Mcp-Session-Id",
    b"content-type": "Content-Type",
    b"content-encoding": "Content-Encoding",
    b"content-length": "Content-Length",
}


class RequestHeaders:
    """The request's headers by lower-case name, values as bytes (a name may repeat).

    The headers read on every request (``HEADERS_READ``) are found at once, in one pass of the header scan
    (:func:`~shipcode_mcp.transports.http._headerscan.plain_headers`); the whole list is read by name only
    when it is not plain (names not lower-case, one of those repeated) or another header is asked for.
    """

    __slots__ = ("raw", "first", "repeated", "whole")

    def __init__(self, raw: Any) -> None:
        if type(raw) is not list:
            raw = list(raw)
        self.raw = raw
        plain = plain_headers(raw)
        #: Each name's later values, when a name repeats (None: none does, or not read yet).
        self.repeated: dict[bytes, list[bytes]] | None = None
        if plain is None:
            self._read_all()
        else:
            #: The first value of each header read so far, by lower-case name.
            self.first = plain
            #: Whether ``first`` holds every header.
            self.whole = False

    def _read_all(self) -> None:
        first: dict[bytes, bytes] = {}
        repeated: dict[bytes, list[bytes]] = {}
        for name, value in self.raw:
            name = name.lower()
            if name in first:
                repeated.setdefault(name, []).append(value)
            else:
                first[name] = value
        accept = repeated.get(b"accept")
        if accept is not None:  # a list (RFC 9110 section 5.3): its lines are one value
            first[b"accept"] = b", ".join([first[b"accept"], *accept])
        self.first = first
        self.repeated = repeated or None
        self.whole = True

    def repeated_once_only(self) -> str | None:
        """The name of a header of :data:`ONCE_ONLY` given more than once (as shown), or None."""
        if self.repeated is not None:
            for name, shown in ONCE_ONLY.items():
                if name in self.repeated:
                    return shown
        return None

    def get(self, name: bytes) -> str | None:
        """The first value of a header, or None."""
        if not self.whole and name not in _READ:
            self._read_all()
        value = self.first.get(name)
        return None if value is None else value.decode("latin-1")

    def one(self, name: bytes, shown: str) -> str | None:
        """The single value of a header, trimmed (None when absent); refused when repeated or malformed."""
        if not self.whole and name not in _READ:
            self._read_all()
        value = self.first.get(name)
        if value is None:
            return None
        if self.repeated is not None and name in self.repeated:
            raise mismatch(f"{shown} header appears more than once")
        text = clean_value(value)
        if text is None:
            raise mismatch(f"{shown} header value contains invalid characters")
        return text


@lru_cache(maxsize=256)
def clean_value(value: bytes) -> str | None:
    """A header value as text, trimmed; None when it holds characters outside visible ASCII, space and tab
    (the header scan's :func:`~shipcode_mcp.transports.http._headerscan.header_value`). Remembered: a
    client sends the same few values again and again."""
    text = header_value(value)
    return None if text is None else text.decode("ascii")


def decoded(value: str, shown: str) -> str:
    """A header value with the Base64 sentinel form decoded."""
    if value.startswith(_SENTINEL_OPEN) and value.endswith(_SENTINEL_CLOSE) and len(value) >= 11:
        try:
            return base64.b64decode(value[len(_SENTINEL_OPEN) : -len(_SENTINEL_CLOSE)], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise mismatch(f"{shown} header value is not valid Base64 of UTF-8 text") from None
    return value


def check_equal(headers: RequestHeaders, name: bytes, shown: str, expected: str, encoded: bool = False) -> None:
    """Refuse unless the header ``name`` is present and equals ``expected``."""
    value = headers.one(name, shown)
    if value is None:
        raise mismatch(f"{shown} header is missing")
    if encoded:
        value = decoded(value, shown)
    if value != expected:
        raise mismatch(f"{shown} header value {value!r} does not match body value {expected!r}")


def check_request(
    headers: RequestHeaders, method: str, params: Any, tools: dict[str, Any], named_by: dict[str, str]
) -> None:
    """Refuse a 2026-07-28 request (a valid envelope) whose headers do not match its body (``named_by``:
    the ``Mcp-Name`` members of the app's extensions' methods)."""
    meta = params.get("_meta") if type(params) is dict else None
    version = meta.get(META_VERSION) if type(meta) is dict else None
    if type(version) is str:
        check_equal(headers, b"mcp-protocol-version", "MCP-Protocol-Version", version)
    check_equal(headers, b"mcp-method", "Mcp-Method", method)
    member = NAMED_BY.get(method) or named_by.get(method)
    if member is None or type(params) is not dict:
        return
    target = params.get(member)
    if type(target) is str:
        check_equal(headers, b"mcp-name", "Mcp-Name", target, encoded=True)
    if method == "tools/call" and type(target) is str and target in tools:
        arguments = params.get("arguments")
        if type(arguments) is dict:
            mirrored = tool_header_parameters(tools[target])
            if mirrored:
                check_parameters(headers, mirrored, arguments)


@lru_cache(maxsize=1024)
def tool_header_parameters(tool: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A tool's :func:`header_parameters`, found once."""
    return tuple(header_parameters(tool.input_schema))


def header_text(value: Any) -> str | None:
    """A primitive argument value as the client mirrors it (None: not a mirrored kind)."""
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int or type(value) is str:
        return str(value)
    return None


def check_parameters(
    headers: RequestHeaders, mirrored: tuple[tuple[str, tuple[str, ...]], ...], arguments: dict[str, Any]
) -> None:
    """Refuse a call whose ``Mcp-Param-*`` headers do not mirror the annotated arguments."""
    for header, path in mirrored:
        value: Any = arguments
        for key in path:
            value = value.get(key) if type(value) is dict else None
        if value is None:
            continue
        shown = f"Mcp-Param-{header}"
        given = headers.one(f"mcp-param-{header.lower()}".encode("latin-1", "replace"), shown)
        if given is None:
            raise mismatch(f"{shown} header is missing")
        given = decoded(given, shown)
        expected = header_text(value)
        if given == expected:
            continue
        if type(value) is int and type(value) is not bool and _same_number(given, value):
            continue
        raise mismatch(f"{shown} header value {given!r} does not match body value {expected!r}")


def _same_number(text: str, value: int) -> bool:
    try:
        return float(text) == value
    except ValueError:
        return False
