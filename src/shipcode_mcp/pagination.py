"""Lists served in pages (``Server(list_page_size=N)``): every page pre-encoded, found by its cursor.

A list's items keep the order in which the app added them. The cursor of the page after the one
that ends with item ``k`` is the base64url text (unpadded) of 8 bytes of the SHA-256 of the whole
list, followed by ``k``'s name (a tool's or prompt's name, a resource's ``uri``, a template's
``uriTemplate``). The same app serves the same cursors in every process and after a restart; a
cursor of a list that has changed since is refused with -32602 saying so.
"""

from __future__ import annotations

from base64 import urlsafe_b64decode, urlsafe_b64encode
from binascii import Error as Base64Error
from hashlib import sha256

from .jsontext import dumps
from .protocol import INVALID_PARAMS, RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: How many bytes of the list's SHA-256 a cursor carries.
DIGEST_BYTES = 8
INVALID_CURSOR = "Invalid cursor"
CHANGED_LIST = "Invalid cursor: the list has changed since; list again from the start"


def encode_cursor(digest: bytes, last: str) -> str:
    """The cursor of the page after the item named ``last`` of the list whose digest is ``digest``."""
    return urlsafe_b64encode(digest + last.encode()).rstrip(b"=").decode("ascii")


def cursor_digest(cursor: str) -> bytes | None:
    """The list digest a cursor carries, or None when it is not one of ours."""
    try:
        raw = urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (Base64Error, ValueError):
        return None
    return raw[:DIGEST_BYTES] if len(raw) > DIGEST_BYTES else None


class Pages:
    """``handler(params)`` of one list method: the result body of the page its ``cursor`` names.

    ``finish(body)`` completes each page's body once (the caching hints and server identity of
    2026-07-28); a request then costs a dictionary lookup.
    """

    __slots__ = ("digest", "first", "pages")

    def __init__(
        self, member: str, items: list[dict[str, Any]], key: str, size: int, finish: Callable[[bytes], bytes]
    ) -> None:
        self.digest = sha256(dumps(items)).digest()[:DIGEST_BYTES]
        #: The cursor -> the body of the page it names.
        self.pages: dict[str, bytes] = {}
        self.first = b""
        cursor = None
        for start in range(0, max(len(items), 1), size):
            page: dict[str, Any] = {member: items[start : start + size]}
            following = None
            if start + size < len(items):
                following = page["nextCursor"] = encode_cursor(self.digest, items[start + size - 1][key])
            body = finish(dumps(page))
            if cursor is None:
                self.first = body
            else:
                self.pages[cursor] = body
            cursor = following

    def __call__(self, params: dict[str, Any] | None) -> bytes:
        cursor = params.get("cursor") if params is not None else None
        if cursor is None:
            return self.first
        body = self.pages.get(cursor) if type(cursor) is str else None
        if body is None:
            digest = cursor_digest(cursor) if type(cursor) is str else None
            changed = digest is not None and digest != self.digest
            raise RpcError(INVALID_PARAMS, CHANGED_LIST if changed else INVALID_CURSOR, {"cursor": cursor})
        return body
