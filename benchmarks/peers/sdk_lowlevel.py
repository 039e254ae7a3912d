"""Peer: the official MCP Python SDK (`mcp` on PyPI), low-level `Server`, over stdio.

Serves the benchmark catalogue (tools echo and add, resource file:///hello.txt); with ``--slow`` also the
async ``sleep`` tool of the slow workload. Works with mcp 2.x (handlers passed to the constructor) and mcp 1.x
(decorators).
"""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio  # noqa: E402
import catalogue as cat  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402

try:  # mcp >= 2
    import mcp_types as types
except ImportError:  # mcp 1.x
    import mcp.types as types

NAME = "peer-sdk-lowlevel"
SLOW = "--slow" in sys.argv[1:]


def _tools() -> list:
    tools = [
        types.Tool(name="echo", description=cat.ECHO_DESCRIPTION, inputSchema=cat.ECHO_SCHEMA),
        types.Tool(name="add", description=cat.ADD_DESCRIPTION, inputSchema=cat.ADD_SCHEMA),
    ]
    if SLOW:
        tools.append(types.Tool(name="sleep", description=cat.SLEEP_DESCRIPTION, inputSchema=cat.SLEEP_SCHEMA))
    return tools


async def _call(name: str, args: object) -> tuple[str, bool]:
    """(text, is_error) of one tool call, with the same argument rules as shipcode-mcp."""
    if name == "sleep" and SLOW:
        if not cat.sleep_args_ok(args):
            return "Invalid arguments for sleep", True
        await asyncio.sleep(args["ms"] / 1000)
        return "ok", False
    if name == "echo":
        return (args["text"], False) if cat.echo_args_ok(args) else ("Invalid arguments for echo", True)
    if name == "add":
        if cat.add_args_ok(args):
            return cat.add_text(args["a"], args["b"]), False
        return "Invalid arguments for add", True
    raise ValueError("Unknown tool")


def _resource():
    return types.Resource(uri=cat.HELLO_URI, name=cat.HELLO_NAME, mimeType=cat.HELLO_MIME)


def build_v2() -> Server:
    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=_tools())

    async def call_tool(ctx, params):
        text, is_error = await _call(params.name, params.arguments if params.arguments is not None else {})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=is_error)

    async def list_resources(ctx, params):
        return types.ListResourcesResult(resources=[_resource()])

    async def read_resource(ctx, params):
        if str(params.uri) != cat.HELLO_URI:
            raise ValueError("Resource not found")
        contents = types.TextResourceContents(uri=cat.HELLO_URI, mimeType=cat.HELLO_MIME, text=cat.HELLO_TEXT)
        return types.ReadResourceResult(contents=[contents])

    return Server(
        NAME,
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def build_v1() -> Server:
    from mcp.server.lowlevel.helper_types import ReadResourceContents

    server = Server(NAME, version="1.0.0")

    @server.list_tools()
    async def list_tools():
        return _tools()

    # validate_input=False: the handler applies the same rules as shipcode-mcp itself (not available before 1.10).
    try:
        decorator = server.call_tool(validate_input=False)
    except TypeError:
        decorator = server.call_tool()

    @decorator
    async def call_tool(name, arguments):
        text, is_error = await _call(name, arguments if arguments is not None else {})
        if is_error:
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)
        return [types.TextContent(type="text", text=text)]

    @server.list_resources()
    async def list_resources():
        return [_resource()]

    @server.read_resource()
    async def read_resource(uri):
        if str(uri) != cat.HELLO_URI:
            raise ValueError("Resource not found")
        return [ReadResourceContents(content=cat.HELLO_TEXT, mime_type=cat.HELLO_MIME)]

    return server


async def main() -> None:
    server = build_v1() if hasattr(Server, "call_tool") else build_v2()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
