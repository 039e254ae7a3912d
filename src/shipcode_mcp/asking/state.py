"""The sealed ``requestState`` of 2026-07-28 multi round-trip requests.

The state travels through the client, so it is untrusted input: it is sealed with
HMAC-SHA256 (:mod:`hmac`) under the app's state key and bound to the request it belongs to
(method and tool, prompt or uri), to an expiry and, when the transport authenticated the
caller, to the caller: such a state is sealed under a key derived from the caller's identity
(:func:`shipcode_mcp.context.caller_identity`), so it verifies for that caller only. It also
records the keys the server asked for, so that only their answers are carried on. A seal
that does not verify is refused, and so is one longer than :data:`MAX_STATE_CHARS`.

The key is ``Server(state_key=...)``, else the environment variable
``SHIPCODE_MCP_STATE_KEY``, else random per process: processes that must accept each
other's retries share a key. It may be a ring of keys (a list, or the variable's keys
separated by commas): the first seals, every one opens, so a key is rotated without
refusing the states sealed under the one before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time

from orjson import loads

from ..jsontext import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

#: The environment variable holding the state key.
STATE_KEY_VARIABLE = "SHIPCODE_MCP_STATE_KEY"
#: The shortest state key, in bytes: HMAC-SHA256 wants a key at least as long as its output (RFC 7518, 3.2).
MIN_STATE_KEY_BYTES = 32
#: Seconds a sealed state stays valid.
STATE_LIFETIME = 3600
#: The longest sealed state, in characters: a longer one is refused as it arrives, and a round
#: whose state would be longer ends with an error (a state is never cut short).
MAX_STATE_CHARS = 1 << 20


def state_keys(configured: str | bytes | Sequence[str | bytes] | None) -> tuple[bytes, ...]:
    """The ring of keys: the app's (one key, or a list of them), else the environment's (keys separated
    by commas), else one of 32 random bytes; the first seals, all of them open.

    :class:`StateKeyError` for a ring with no key, or a key empty, shorter than
    :data:`MIN_STATE_KEY_BYTES`, with white space around it, or given twice.
    """
    where = "state_key"
    if configured is None:
        configured = os.environ.get(STATE_KEY_VARIABLE) or None
        if configured is None:
            return (os.urandom(32),)
        where = STATE_KEY_VARIABLE
        configured = configured.split(",")
    elif isinstance(configured, (str, bytes)):
        configured = [configured]
    ring = [key.encode("utf-8") if isinstance(key, str) else bytes(key) for key in configured]
    if not ring:
        raise StateKeyError(f"{where}: the request state key ring has no key")
    for number, key in enumerate(ring, 1):
        which = "the request state key" if len(ring) == 1 else f"request state key {number} of {len(ring)}"
        if not key:
            raise StateKeyError(f"{where}: {which} is empty")
        if key != key.strip():
            raise StateKeyError(f"{where}: {which} begins or ends with white space")
        if len(key) < MIN_STATE_KEY_BYTES:
            raise StateKeyError(
                f"{where}: {which} is too short: {len(key)} bytes, at least {MIN_STATE_KEY_BYTES} "
                "(python -c 'import secrets; print(secrets.token_urlsafe(32))' makes one)"
            )
        if key in ring[: number - 1]:
            raise StateKeyError(f"{where}: {which} is the same as key {ring.index(key) + 1}")
    return tuple(ring)


class StateKeyError(ValueError):
    """A state key ring that cannot seal: the one line saying why."""


class StateTooLarge(ValueError):
    """A state that would be longer than the seal allows."""


class StateSeal:
    """Seals request states under the first key of a ring and opens them under any of its keys.

    ``keys`` is one key or the ring (:func:`state_keys`). ``identity`` is who is calling
    (:func:`~shipcode_mcp.context.caller_identity`), or None when no one was authenticated: then
    the state key itself seals.
    """

    __slots__ = ("_keys", "lifetime", "max_chars")

    def __init__(
        self, keys: bytes | tuple[bytes, ...], lifetime: float = STATE_LIFETIME, max_chars: int = MAX_STATE_CHARS
    ) -> None:
        self._keys = (keys,) if isinstance(keys, bytes) else tuple(keys)
        self.lifetime = lifetime
        self.max_chars = max_chars

    @staticmethod
    def _mac(key: bytes, payload: bytes, identity: bytes | None) -> bytes:
        if identity is not None:
            key = hmac.new(key, b"caller\0" + identity, hashlib.sha256).digest()
        return hmac.new(key, payload, hashlib.sha256).digest()

    def seal(self, request: str, value: Any, identity: bytes | None = None, asked: list[str] | None = None) -> str:
        """The sealed text of ``value`` for the request ``request`` (method and target) and the caller ``identity``.

        ``asked`` are the keys of the questions this round asks. :class:`StateTooLarge` when the
        text would be longer than ``max_chars``.
        """
        content: dict[str, Any] = {"r": request, "x": int(time.time() + self.lifetime)}
        if asked is not None:
            content["q"] = asked
        content["v"] = value
        payload = dumps(content)
        size = (4 * len(payload) + 2) // 3 + 44  # the Base64 text of the payload, a dot, the MAC's
        if size > self.max_chars:
            raise StateTooLarge(f"Request state too large: {size} characters, the limit is {self.max_chars}")
        return _b64(payload) + "." + _b64(self._mac(self._keys[0], payload, identity))

    def open(self, request: str, text: object, identity: bytes | None = None) -> tuple[bool, Any]:
        """``(True, value)`` when ``text`` was sealed here for ``request`` and ``identity`` and has not expired."""
        content = self.unseal(request, text, identity)
        return (False, None) if content is None else (True, content.get("v"))

    def unseal(self, request: str, text: object, identity: bytes | None = None) -> dict[str, Any] | None:
        """Everything sealed in ``text`` (the value ``v``, the keys asked ``q``), or None when it does not open."""
        if type(text) is not str or len(text) > self.max_chars or text.count(".") != 1:
            return None
        payload_text, mac_text = text.split(".")
        try:
            payload = _unb64(payload_text)
            mac = _unb64(mac_text)
        except ValueError:
            return None
        # Each key's whole MAC compared in constant time; a state opens under any key of the ring.
        if not any(hmac.compare_digest(mac, self._mac(key, payload, identity)) for key in self._keys):
            return None
        content = loads(payload)
        if content.get("r") != request or not content.get("x", 0) >= time.time():
            return None
        return content


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """The bytes :func:`_b64` wrote as ``text``; ValueError for any other text.

    Only the one spelling is read: a decoder alone would also take the spare bits of the last
    character changed, ``=`` padding, or ``+`` and ``/``, so a state changed there would pass.
    """
    if not text.isascii():
        raise ValueError("not base64")
    data = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    if _b64(data) != text:
        raise ValueError("not the sealed spelling")
    return data
