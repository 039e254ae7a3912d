"""Peer: the high-level server of an MCP Python SDK, over stdio, serving the benchmark catalogue.

    python fastmcp_server.py            # the official SDK's FastMCP (`mcp` 1.x), renamed MCPServer in `mcp` 2.x
    python fastmcp_server.py --standalone   # the separate `fastmcp` package (FastMCP 2+)
    ... --slow                            # also the slow workload's async `sleep` tool

Tools are plain decorated functions, as a user of these frameworks writes them; argument checking is the
framework's own (pydantic validation of the annotated parameters).
"""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import catalogue as cat  # noqa: E402

STANDALONE = "--standalone" in sys.argv[1:]
SLOW = "--slow" in sys.argv[1:]

if STANDALONE:
    os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
    os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
    from fastmcp import FastMCP as App

    app = App("peer-fastmcp-standalone", version="1.0.0")
else:
    try:  # mcp >= 2
        from mcp.server.mcpserver import MCPServer as App
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as App
    app = App("peer-sdk-fastmcp", log_level="WARNING")


@app.tool(description=cat.ECHO_DESCRIPTION)
def echo(text: str) -> str:
    return text


@app.tool(description=cat.ADD_DESCRIPTION)
def add(a: float, b: float) -> str:
    return cat.add_text(a, b)


if SLOW:

    @app.tool(description=cat.SLEEP_DESCRIPTION)
    async def sleep(ms: int) -> str:
        await asyncio.sleep(ms / 1000)
        return "ok"


@app.resource(cat.HELLO_URI, name=cat.HELLO_NAME, mime_type=cat.HELLO_MIME)
def hello() -> str:
    return cat.HELLO_TEXT


if __name__ == "__main__":
    if STANDALONE:
        app.run(transport="stdio", show_banner=False)
    else:
        app.run()
