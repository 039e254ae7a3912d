"""An app for the tests of sessions across processes: a plain tool, one that asks the client, one that changes the list."""

from __future__ import annotations

from shipcode_mcp import Context, Server

app = Server("relayed", version="1.0.0")
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@app.tool()
def echo(text: str) -> str:
    """Echo back the given text"""
    return text


@app.tool()
async def greet(ctx: Context) -> str:
    """Ask the user's name, then greet"""
    answer = await ctx.elicit("What is your name?", SCHEMA, key="name")
    return f"Hello, {answer['content']['name']}!"


@app.tool()
def grow(name: str) -> str:
    """Add a tool: the sessions of this process hear of it on their streams"""
    app.add_tool(lambda: name, name=name, description="Added")
    return name
