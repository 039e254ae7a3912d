"""The official SDK's ``FastMCP`` (``mcp.server.fastmcp``, mcp 1.x) on shipcode-mcp.

An unchanged app's ``from mcp.server.fastmcp import FastMCP, Context, Image`` (and its submodules:
``prompts.base``, ``exceptions``, ``utilities.types``) resolves to this module under
``shipcode-mcp app.py``; an app may also import it itself (``from shipcode_mcp import FastMCP``).
"""

from __future__ import annotations

from ..errors import ToolError
from ..media import Audio, File, Image
from .base import Context, FrameworkServer, ResourceError
from .messages import AssistantMessage, Message, UserMessage

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


class FastMCP(FrameworkServer):
    """The official SDK's ``FastMCP``: ``FastMCP("name")`` and its decorators (see docs/migrating.md)."""

    API = "the official SDK's FastMCP (mcp.server.fastmcp, mcp 1.x)"
    DEFAULT_NAME = "FastMCP"
    structures_content = True

    def framework_version(self) -> str:
        from .base import installed_version

        return installed_version("mcp", "1.30.0")


__all__ = [
    "AssistantMessage",
    "Audio",
    "Context",
    "FastMCP",
    "File",
    "Image",
    "Message",
    "ResourceError",
    "ToolError",
    "UserMessage",
]

#: The API this module stands in for, as the command line names it.
API = FastMCP.API
