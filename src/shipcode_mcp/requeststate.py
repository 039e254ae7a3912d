"""The sealed ``requestState`` of 2026-07-28 multi round-trip requests.

The state travels through the client, so it is untrusted input: it is sealed with
HMAC-SHA256 (:mod:`hmac`) under the app's state key and bound to the request it belongs to
(method and tool, prompt or uri) and to an expiry. A seal that does not verify is refused.

The key is ``Server(state_key=...)``, else the environment variable
``SHIPCODE_MCP_STATE_KEY``, else random per process: processes that must accept each
other's retries share a key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time

from orjson import loads

from .jsontext import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The environment variable holding the state key.
STATE_KEY_VARIABLE = "SHIPCODE_MCP_STATE_KEY"
#: Seconds a sealed state stays valid.
STATE_LIFETIME = 3600


def state_key(configured: str | bytes | None) -> bytes:
    """The key to seal with: the app's, the environment's, or 32 random bytes."""
    if configured is None:
        configured = os.environ.get(STATE_KEY_VARIABLE) or None
    if configured is None:
        return os.urandom(32)
    key = configured.encode("utf-8") if isinstance(configured, str) else bytes(configured)
    if not key:
        raise ValueError("the request state key is empty")
    return key


class StateSeal:
    """Seals and opens request states under one key."""

    __slots__ = ("_key", "lifetime")

    def __init__(self, key: bytes, lifetime: float = STATE_LIFETIME) -> None:
        self._key = key
        self.lifetime = lifetime

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()

    def seal(self, request: str, value: Any) -> str:
        """The sealed text of ``value`` for the request ``request`` (method and target)."""
        payload = dumps({"r": request, "x": int(time.time() + self.lifetime), "v": value})
        return _b64(payload) + "." + _b64(self._mac(payload))

    def open(self, request: str, text: object) -> tuple[bool, Any]:
        """``(True, value)`` when ``text`` was sealed here for ``request`` and has not expired."""
        if type(text) is not str or text.count(".") != 1:
            return False, None
        payload_text, mac_text = text.split(".")
        try:
            payload = _unb64(payload_text)
            mac = _unb64(mac_text)
        except ValueError:
            return False, None
        if not hmac.compare_digest(mac, self._mac(payload)):
            return False, None
        content = loads(payload)
        if content.get("r") != request or not content.get("x", 0) >= time.time():
            return False, None
        return True, content.get("v")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text.isascii():
        raise ValueError("not base64")
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
