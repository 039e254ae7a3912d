"""The 2026-07-28 request headers checked against the body: -32020 (HeaderMismatch) when they differ.

``MCP-Protocol-Version`` must equal ``_meta``'s protocol version, ``Mcp-Method`` the method and,
for ``tools/call``, ``resources/read`` and ``prompts/get``, ``Mcp-Name`` the tool or prompt name
or the uri. A tool parameter whose schema carries ``x-mcp-header: Name`` is mirrored in
``Mcp-Param-Name``: present in the arguments, it must be in the header too, and equal. Values
are trimmed and compared case-sensitively; ``=?base64?...?=`` values are decoded first; a
header given twice, or with characters outside visible ASCII, space and tab, is refused.
"""

from __future__ import annotations

import base64
import binascii
import re

from ...protocol import META_VERSION, RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The code of HeaderMismatch errors.
HEADER_MISMATCH = -32020
#: Methods whose ``Mcp-Name`` header is required, and the params member it mirrors.
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: A character a header value may not hold: anything but visible ASCII, space and tab.
_INVALID_CHARACTER = re.compile(r"[^\t\x20-\x7e]")
_SENTINEL_OPEN = "=?base64?"
_SENTINEL_CLOSE = "?="


def mismatch(message: str) -> RpcError:
    return RpcError(HEADER_MISMATCH, f"Header mismatch: {message}")


class RequestHeaders:
    """The request's headers by lower-case name (each value a list: a name may repeat)."""

    __slots__ = ("values",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        values: dict[str, list[str]] = {}
        for name, value in raw:
            values.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        self.values = values

    def get(self, name: str) -> str | None:
        """The first value of a header, or None."""
        found = self.values.get(name)
        return found[0] if found else None

    def one(self, name: str, shown: str) -> str | None:
        """The single value of a header, trimmed (None when absent); refused when repeated or malformed."""
        found = self.values.get(name)
        if not found:
            return None
        if len(found) > 1:
            raise mismatch(f"{shown} header appears more than once")
        value = found[0]
        if _INVALID_CHARACTER.search(value):
            raise mismatch(f"{shown} header value contains invalid characters")
        return value.strip(" \t")


def decoded(value: str, shown: str) -> str:
    """A header value with the Base64 sentinel form decoded."""
    if value.startswith(_SENTINEL_OPEN) and value.endswith(_SENTINEL_CLOSE) and len(value) >= 11:
        try:
            return base64.b64decode(value[len(_SENTINEL_OPEN) : -len(_SENTINEL_CLOSE)], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise mismatch(f"{shown} header value is not valid Base64 of UTF-8 text") from None
    return value


def check_equal(headers: RequestHeaders, name: str, shown: str, expected: str, encoded: bool = False) -> None:
    """Refuse unless the header ``name`` is present and equals ``expected``."""
    value = headers.one(name, shown)
    if value is None:
        raise mismatch(f"{shown} header is missing")
    if encoded:
        value = decoded(value, shown)
    if value != expected:
        raise mismatch(f"{shown} header value {value!r} does not match body value {expected!r}")


def check_request(headers: RequestHeaders, method: str, params: Any, tools: dict[str, Any]) -> None:
    """Refuse a 2026-07-28 request (a valid envelope) whose headers do not match its body."""
    meta = params.get("_meta") if type(params) is dict else None
    version = meta.get(META_VERSION) if type(meta) is dict else None
    if type(version) is str:
        check_equal(headers, "mcp-protocol-version", "MCP-Protocol-Version", version)
    check_equal(headers, "mcp-method", "Mcp-Method", method)
    member = NAMED_BY.get(method)
    if member is None or type(params) is not dict:
        return
    target = params.get(member)
    if type(target) is str:
        check_equal(headers, "mcp-name", "Mcp-Name", target, encoded=True)
    if method == "tools/call" and type(target) is str and target in tools:
        arguments = params.get("arguments")
        if type(arguments) is dict:
            check_parameters(headers, tools[target].input_schema, arguments)


def header_parameters(schema: Any, path: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...]]]:
    """``(header name, property path)`` of each property with ``x-mcp-header``, via ``properties`` only."""
    found = []
    properties = schema.get("properties") if type(schema) is dict else None
    if type(properties) is dict:
        for key, sub in properties.items():
            if type(sub) is dict:
                header = sub.get("x-mcp-header")
                if type(header) is str and header:
                    found.append((header, (*path, key)))
                found.extend(header_parameters(sub, (*path, key)))
    return found


def header_text(value: Any) -> str | None:
    """A primitive argument value as the client mirrors it (None: not a mirrored kind)."""
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int or type(value) is str:
        return str(value)
    return None


def check_parameters(headers: RequestHeaders, schema: Any, arguments: dict[str, Any]) -> None:
    """Refuse a call whose ``Mcp-Param-*`` headers do not mirror the annotated arguments."""
    for header, path in header_parameters(schema):
        value: Any = arguments
        for key in path:
            value = value.get(key) if type(value) is dict else None
        if value is None:
            continue
        shown = f"Mcp-Param-{header}"
        given = headers.one(f"mcp-param-{header.lower()}", shown)
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
