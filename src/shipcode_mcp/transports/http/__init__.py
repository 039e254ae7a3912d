"""Streamable HTTP: an MCP app served as a plain ASGI 3 application (see :func:`http_app`).

Imported only when HTTP is asked for (``Server.http_app``, ``shipcode-mcp --http``): serving
on stdio never loads it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ...app import Server
    from .asgi import McpHttpApp


def http_app(app: Server, path: str = "/mcp", **options: Any) -> McpHttpApp:
    """The ASGI application serving ``app`` at ``path`` (see :meth:`Server.http_app <shipcode_mcp.Server.http_app>`)."""
    from .asgi import McpHttpApp

    return McpHttpApp(app, path, **options)


__all__ = ["http_app"]
