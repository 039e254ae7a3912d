"""shipcode-mcp: a fast, exact MCP server over stdio (every protocol era), and a small framework.

>>> from shipcode_mcp import Server, ToolError, Context

``Image``, ``Audio`` and ``File`` (:mod:`shipcode_mcp.media`) are imported when first asked for:
an app that does not return them does not load them. So are ``FastMCP`` (the official SDK's API, mcp
1.x) and ``MCPServer`` (mcp 2.x) of :mod:`shipcode_mcp.compat`, for apps moved over by their imports
(docs/migrating.md).

Modules write ``TYPE_CHECKING = False`` instead of importing it from :mod:`typing`: type
checkers read it as ``typing.TYPE_CHECKING``, and serving tools and resources never imports
:mod:`typing` (a few milliseconds of start-up on a machine where nothing else loads it).
"""

from __future__ import annotations

from ._version import __version__
from .app import Server
from .asking.rounds import InputRequired, elicitation_request, roots_request, sampling_request
from .context import Context
from .errors import ClientError, ResourceError, RpcError, ToolError
from .handlers import Resource, Tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .compat.fastmcp_sdk1 import FastMCP
    from .compat.mcpserver import MCPServer
    from .media import Audio, File, Image

__all__ = [
    "Audio",
    "ClientError",
    "Context",
    "FastMCP",
    "File",
    "Image",
    "InputRequired",
    "MCPServer",
    "Resource",
    "ResourceError",
    "RpcError",
    "Server",
    "Tool",
    "ToolError",
    "__version__",
    "elicitation_request",
    "roots_request",
    "sampling_request",
]

_LAZY = {"Audio", "File", "Image"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from . import media

        return getattr(media, name)
    if name == "FastMCP":
        from .compat.fastmcp_sdk1 import FastMCP

        return FastMCP
    if name == "MCPServer":
        from .compat.mcpserver import MCPServer

        return MCPServer
    raise AttributeError(f"module 'shipcode_mcp' has no attribute {name!r}")
