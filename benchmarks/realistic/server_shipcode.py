"""shipcode-mcp serving the workload's tools with its native ``Server`` API:

shipcode-mcp benchmarks/realistic/server_shipcode.py --http 127.0.0.1:PORT --processes 2
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import served  # noqa: E402

from shipcode_mcp import Server  # noqa: E402

app = Server("realistic-shipcode-mcp", version="1.0.0")
for function in served.TOOLS:
    app.tool()(function)
