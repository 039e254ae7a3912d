"""The official MCP Python SDK serving the workload's tools: ``MCPServer`` (``mcp`` 2; ``FastMCP`` of
``mcp.server.fastmcp`` in 1.x), its Streamable HTTP app (/mcp, sessions on) under uvicorn with several workers,
as its README runs it for production:

    uvicorn server_sdk:app --app-dir benchmarks/realistic --host 127.0.0.1 --port PORT --workers 2
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import served  # noqa: E402

try:  # mcp >= 2
    from mcp.server import MCPServer as App
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as App

mcp = App("realistic-python-sdk", log_level="WARNING")
for function in served.TOOLS:
    mcp.tool()(function)
app = mcp.streamable_http_app()
