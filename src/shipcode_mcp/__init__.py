"""shipcode-mcp: a fast, exact MCP (2025-06-18) server over stdio, and a small framework.

>>> from shipcode_mcp import Server, ToolError, Context
"""

from __future__ import annotations

from .app import Server
from .context import Context
from .errors import ClientError, RpcError, ToolError
from .handlers import Resource, Tool

__version__ = "1.0.0"
__all__ = ["ClientError", "Context", "Resource", "RpcError", "Server", "Tool", "ToolError", "__version__"]
