"""shipcode-mcp: a fast, exact MCP (2025-06-18) server over stdio, and a small framework.

>>> from shipcode_mcp import Server, ToolError
"""

from __future__ import annotations

from .app import Resource, Server, Tool, ToolError

__version__ = "1.0.0"
__all__ = ["Resource", "Server", "Tool", "ToolError", "__version__"]
