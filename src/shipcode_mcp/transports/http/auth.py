"""Bearer tokens: who is calling, and the RFC 9728 document that says where to get a token.

``verify(token)`` is the app's (sync or async; PyJWT or authlib can do the checking): it returns
who is calling (any value but None), or None, or raises, to refuse. A request without a valid
token is refused 401 with ``WWW-Authenticate: Bearer resource_metadata="<url>"``, the url of the
protected resource metadata served at ``/.well-known/oauth-protected-resource`` (and at that
path followed by the MCP endpoint's path), then ``scope="..."`` when scopes are configured, and
``error="invalid_token"`` when a bearer token was sent (RFC 6750 section 3.1). What ``verify``
raises is logged at debug level only: a bad token is the client's mistake, not the server's.
"""

from __future__ import annotations

import inspect
import re

from ..._log import log
from ...jsontext import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

WELL_KNOWN = "/.well-known/oauth-protected-resource"
#: A scope token (RFC 6749 section 3.3): visible ASCII but the double quote and the backslash.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value ("" when empty); None when the value
    is absent or of another scheme (no bearer token was sent)."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def quoted(text: str) -> bytes:
    """A challenge parameter's value as a quoted string (RFC 9110 section 5.6.4)."""
    return b'"%s"' % text.replace("\\", "\\\\").replace('"', '\\"').encode("latin-1", "replace")


class BearerAuth:
    """The bearer-token rules of one app."""

    def __init__(
        self,
        verify: Callable[[str], Any],
        resource: str | None = None,
        authorization_servers: list[str] | None = None,
        scopes: list[str] | None = None,
    ) -> None:
        if not callable(verify):
            raise ValueError(f"auth must be a function verify(token), not {verify!r}")
        self.verify = verify
        self.resource = resource
        self.authorization_servers = list(authorization_servers or ())
        self.scopes = None if scopes is None else list(scopes)
        for scope in self.scopes or ():
            if type(scope) is not str or not _SCOPE_TOKEN.fullmatch(scope):
                raise ValueError(f"scope {scope!r} is not a scope token: visible ASCII but space, '\"' and '\\'")
        #: The challenge's ``scope`` parameter: every scope, space-separated (none when not configured).
        self.scope_parameter = b", scope=" + quoted(" ".join(self.scopes)) if self.scopes else b""

    async def caller(self, token: str | None) -> Any:
        """Who the bearer ``token`` names (None: no token, or one ``verify`` refuses or raises on)."""
        if not token:
            return None
        try:
            who = self.verify(token)
            if inspect.isawaitable(who):
                who = await who
        except Exception as error:  # a token verify cannot read: refused like any other
            log("debug", f"bearer token refused: verify raised {error!r}")
            return None
        return who

    def resource_of(self, base: str, path: str) -> str:
        """The protected resource's identifier: the app's, else the endpoint's own url."""
        return self.resource if self.resource is not None else base + path

    def challenge(self, base: str, path: str, presented: bool) -> bytes:
        """The ``WWW-Authenticate`` value of a refusal; ``presented``: a bearer token was sent."""
        value = b"Bearer resource_metadata=" + quoted(base + WELL_KNOWN + path) + self.scope_parameter
        return value + b', error="invalid_token"' if presented else value

    def metadata(self, base: str, path: str) -> bytes:
        """The RFC 9728 protected resource metadata document."""
        document: dict[str, Any] = {
            "resource": self.resource_of(base, path),
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes is not None:
            document["scopes_supported"] = self.scopes
        return dumps(document)
