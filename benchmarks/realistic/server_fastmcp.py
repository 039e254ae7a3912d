"""FastMCP (the ``fastmcp`` package) serving the workload's tools, as its deployment guide runs it for production:
its ASGI app (``http_app()``, Streamable HTTP at /mcp, sessions on) under uvicorn with several workers:

    uvicorn server_fastmcp:app --app-dir benchmarks/realistic --host 127.0.0.1 --port PORT --workers 2
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import served  # noqa: E402
from fastmcp import FastMCP  # noqa: E402

mcp = FastMCP("realistic-fastmcp", version="1.0.0")
for function in served.TOOLS:
    mcp.tool(function)
app = mcp.http_app()
