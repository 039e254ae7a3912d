"""shipcode-mcp: a fast, exact MCP (2025-06-18) server over stdio, and a small framework.

>>> from shipcode_mcp import Server, ToolError, Context
"""

from __future__ import annotations

from ._version import __version__
from .app import Server
from .context import Context
from .errors import ClientError, RpcError, ToolError
from .handlers import Resource, Tool

__all__ = ["ClientError", "Context", "Resource", "RpcError", "Server", "Tool", "ToolError", "__version__"]
