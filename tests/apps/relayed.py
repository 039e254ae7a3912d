"""An app for the tests of sessions across processes: the HTTP tests' app (a plain tool, one that asks the
client), and a tool that changes the list of tools."""

from __future__ import annotations

from web import app


@app.tool()
def grow(name: str) -> str:
    """Add a tool: the sessions of this process hear of it on their streams"""
    app.add_tool(lambda: name, name=name, description="Added")
    return name
