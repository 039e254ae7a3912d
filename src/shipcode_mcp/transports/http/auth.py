"""Bearer tokens: who is calling, and the RFC 9728 document that says where to get a token.

``verify(token)`` is the app's (sync or async; PyJWT or authlib can do the checking): it returns
who is calling (any value but None), or None to refuse. A request without a valid token is
refused 401 with ``WWW-Authenticate: Bearer resource_metadata="<url>"``, the url of the
protected resource metadata served at ``/.well-known/oauth-protected-resource`` (and at that
path followed by the MCP endpoint's path).
"""

from __future__ import annotations

import inspect

from ...jsontext import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

WELL_KNOWN = "/.well-known/oauth-protected-resource"


class BearerAuth:
    """The bearer-token rules of one app."""

    def __init__(
        self,
        verify: Callable[[str], Any],
        resource: str | None = None,
        authorization_servers: list[str] | None = None,
        scopes: list[str] | None = None,
    ) -> None:
        self.verify = verify
        self.resource = resource
        self.authorization_servers = list(authorization_servers or ())
        self.scopes = None if scopes is None else list(scopes)

    async def caller(self, authorization: str | None) -> Any:
        """Who the ``Authorization`` header names (None: no valid bearer token)."""
        if authorization is None:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        who = self.verify(token)
        if inspect.isawaitable(who):
            who = await who
        return who

    def resource_of(self, base: str, path: str) -> str:
        """The protected resource's identifier: the app's, else the endpoint's own url."""
        return self.resource if self.resource is not None else base + path

    def challenge(self, base: str, path: str) -> bytes:
        """The ``WWW-Authenticate`` value of a refusal."""
        return b'Bearer resource_metadata="%s"' % (base + WELL_KNOWN + path).encode()

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
