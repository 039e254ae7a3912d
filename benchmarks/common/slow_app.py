"""The app shipcode-mcp serves for the benchmark's `slow` workload: ``shipcode-mcp benchmarks/common/slow_app.py``.

The default catalogue (tools echo and add, resource file:///hello.txt) plus ``sleep``, an ``async def`` tool
that awaits ``asyncio.sleep``: the stand-in for a tool that waits on a network, a database or a subprocess.
Written with the public API only, as a user would write it.
"""

from __future__ import annotations

import asyncio

from shipcode_mcp import Server

app = Server("shipcode-mcp", version="1.0.0")


@app.tool()
def echo(text: str) -> str:
    """Echo back the given text"""
    return text


@app.tool()
def add(a: float, b: float) -> float:
    """Add two numbers"""
    return a + b


@app.tool()
async def sleep(ms: int) -> str:
    """Wait ms milliseconds, then answer ok"""
    await asyncio.sleep(ms / 1000)
    return "ok"


@app.resource("file:///hello.txt", name="hello.txt", mime_type="text/plain")
def hello() -> str:
    return "Hello, world!"
