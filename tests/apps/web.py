"""An app for the HTTP server tests: a plain tool and one that asks the client its name."""

from __future__ import annotations

from shipcode_mcp import Context, Server

app = Server("web", version="1.0.0")
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
