"""The official SDK's ``MCPServer`` (``mcp.server.mcpserver``, mcp 2.x) on shipcode-mcp.

The successor of mcp 1.x's ``FastMCP``, with the same decorators; what differs is in its answers: a
tool's own exception is not shown to the client, resource errors carry the uri as ``data``.
"""

from __future__ import annotations

from ..errors import ClientError
from ..protocol import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from .base import installed_version
from .fastmcp_sdk1 import (
    AssistantMessage,
    Audio,
    Context,
    FastMCP,
    File,
    Image,
    Message,
    ResourceError,
    ToolError,
    UserMessage,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class MCPServer(FastMCP):
    """The official SDK's ``MCPServer``: ``MCPServer("name")`` and its decorators (see docs/migrating.md)."""

    API = "the official SDK's MCPServer (mcp.server.mcpserver, mcp 2.x)"

    def framework_version(self) -> str:
        return installed_version("mcp", "2.3.0")

    def capabilities(self) -> dict[str, Any]:
        capabilities = super().capabilities()
        del capabilities["experimental"]
        return capabilities

    DEFAULT_NAME = "mcp-server"
    structures_content = False

    def failed_result(self, tool: Any, error: BaseException) -> dict[str, Any]:
        if isinstance(error, ClientError) and error.error is not None:  # the client's error answers the call
            raise RpcError(error.error.get("code", INTERNAL_ERROR), error.error.get("message", ""))
        if isinstance(error, ToolError):
            text = self.tool_error_text(tool.name, error)
        else:
            text = f"Error executing tool {tool.name}"  # the exception's message stays on the server
        return {"content": [{"type": "text", "text": text}], "isError": True}

    def unknown_resource(self, uri: object) -> RpcError:
        return RpcError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})

    def template_error(self, template: Any, uri: str | None, error: BaseException) -> RpcError:
        return RpcError(INTERNAL_ERROR, f"Error creating resource from template {uri}", {"uri": uri})

    def context_resource_is_template(self, uri: str) -> bool:
        raise ValueError(
            f"Resource {uri!r} has no URI template variables, but the handler declares a Context parameter. "
            "Context injection for static resources is not supported. "
            "Add a template variable to the URI or remove the Context parameter."
        )


#: The API this module stands in for, as the command line names it.
API = MCPServer.API

__all__ = [
    "AssistantMessage",
    "Audio",
    "Context",
    "File",
    "Image",
    "MCPServer",
    "Message",
    "ResourceError",
    "ToolError",
    "UserMessage",
]
