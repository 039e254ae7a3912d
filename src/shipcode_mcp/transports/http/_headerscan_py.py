"""The header scan in pure Python: the twin of ``shipcode_mcp.transports.http._headerscan_c`` (built from
``pyx/_headerscan_c.pyx``), picked by :mod:`~shipcode_mcp.transports.http._headerscan`.

What every request's ASGI header list is read for, in one pass: the values of the headers in
:data:`HEADERS_READ`, and the 2026-07-28 header values the engine's fast path compares with a body.
A header read on every request is added to :data:`HEADERS_READ`, and to nothing else here.

And a request read whole from the bytes of one read (:func:`whole_request`), before any HTTP parser sees them:
only when it is plain enough that the parser would read the same request from them.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

IMPLEMENTATION = "pure"

#: The request headers read on every request, lower-case (the compiled twin reads them from here).
HEADERS_READ = (
    b"host",
    b"origin",
    b"content-type",
    b"content-encoding",
    b"accept",
    b"content-length",
    b"mcp-protocol-version",
    b"mcp-method",
    b"mcp-name",
    b"mcp-session-id",
    b"authorization",
)
_HEADERS_READ = frozenset(HEADERS_READ)
#: A character a header value may not hold: anything but visible ASCII, space and tab.
_INVALID_CHARACTER = re.compile(rb"[^\t\x20-\x7e]")
#: How a Base64-encoded value begins (``=?base64?...?=``): decoded by HTTP's checks, never by the fast path.
_BASE64_OPEN = b"=?base64?"
#: A header field line :func:`whole_request` reads: a name (an RFC 9110 token), a colon, a value of visible
#: ASCII, spaces and tabs.
_FIELD_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):([\t\x20-\x7e]*)\Z")
#: Header fields that change how a request's body or its connection is read: a request with one is not
#: read whole (the HTTP parser reads it).
NOT_WHOLE = frozenset((b"transfer-encoding", b"connection", b"upgrade", b"expect"))
#: The most header fields a request read whole may have (the HTTP connection refuses more).
MAX_FIELDS = 100
#: The most digits of a ``Content-Length`` read whole.
MAX_LENGTH_DIGITS = 15


def plain_headers(raw: Any) -> dict[bytes, bytes] | None:
    """The values of the headers of :data:`HEADERS_READ` present in ``raw`` (an ASGI header list), by
    name, when it is plain: a list of ``(bytes, bytes)`` tuples whose names are all lower-case and
    where none of those names repeats; else None (the caller reads the headers with more care).

    Compiled twin: ``plain_headers`` in ``pyx/_headerscan_c.pyx``.
    """
    if type(raw) is not list:
        return None
    found: dict[bytes, bytes] = {}
    for item in raw:
        if type(item) is not tuple or len(item) != 2:
            return None
        name, value = item
        if type(name) is not bytes or type(value) is not bytes or name != name.lower():
            return None
        if name in _HEADERS_READ:
            if name in found:
                return None
            found[name] = value
    return found


def header_value(value: Any) -> bytes | None:
    """A header value (bytes) trimmed of spaces and tabs; None when it is not bytes or holds characters
    other than visible ASCII, space and tab (HTTP refuses those itself).

    Compiled twin: ``_header_value`` in ``pyx/_headerscan_c.pyx``.
    """
    if type(value) is not bytes or _INVALID_CHARACTER.search(value):
        return None
    return value.strip(b" \t")


def fast_fields(first: dict[bytes, bytes]) -> tuple[bytes, bytes, bytes | None] | None:
    """The ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` values of a 2026-07-28 request (its
    headers read once, ``first``) as the engine's fast path compares them with the body: trimmed, the
    name None when absent. None when the fast path cannot judge them: the version or the method absent,
    a value :func:`header_value` refuses, or a Base64-encoded name.

    Compiled twin: ``fast_fields`` in ``pyx/_headerscan_c.pyx``.
    """
    version = first.get(b"mcp-protocol-version")
    method = first.get(b"mcp-method")
    if version is None or method is None:
        return None
    version = header_value(version)
    method = header_value(method)
    if version is None or method is None:
        return None
    name = first.get(b"mcp-name")
    if name is not None:
        name = header_value(name)
        if name is None or name.startswith(_BASE64_OPEN):
            return None
    return version, method, name


def whole_request(
    data: bytes, heads: tuple[tuple[bytes, bytes], ...], max_head: int
) -> tuple[bytes, list[tuple[bytes, bytes]], bytes] | None:
    """``(method, fields, body)`` when ``data`` is exactly one whole request, plain enough to be read here as
    the HTTP parser (llhttp, with uvicorn's header callback) reads it; else None, and the parser reads it.

    ``heads``: ``(request line with its CRLF, method)`` pairs, one of which the request line must be exactly.
    Plain: the head (request line and fields, CRLF CRLF included) within ``max_head`` bytes and at most
    :data:`MAX_FIELDS` fields, each a token name, a colon and a value of visible ASCII, spaces and tabs; none of
    :data:`NOT_WHOLE`; at most one ``Content-Length``, of digits only; and the body exactly what follows the
    head. ``fields`` as uvicorn lists them: names in lower case, values without the spaces and tabs around them.

    Compiled twin: ``whole_request`` in ``pyx/_headerscan_c.pyx``.
    """
    head = next((head for head in heads if data.startswith(head[0])), None)
    if head is None:
        return None
    line, method = head
    start = len(line)
    end = data.find(b"\r\n\r\n", start - 2)
    if end < 0 or end + 4 > max_head:
        return None
    fields: list[tuple[bytes, bytes]] = []
    length = None
    if end > start - 2:
        lines = data[start:end].split(b"\r\n")
        if len(lines) > MAX_FIELDS:
            return None
        for field in lines:
            match = _FIELD_LINE.match(field)
            if match is None:
                return None
            name = match[1].lower()
            value = match[2].strip(b" \t")
            if name in NOT_WHOLE:
                return None
            if name == b"content-length":
                if length is not None or not value.isdigit() or len(value) > MAX_LENGTH_DIGITS:
                    return None
                length = int(value)
            fields.append((name, value))
    body_start = end + 4
    if len(data) - body_start != (length or 0):
        return None
    return method, fields, data[body_start:]
