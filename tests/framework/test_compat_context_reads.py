"""Resources, resource templates and prompts of an app written for another framework get that framework's
``Context`` when they ask for one, as its tools do: fastmcp's log records, the SDK's ``ctx.session``.
Both engines; the frameworks' own answers to the same apps are in ``tests/compat`` (the assistant apps)."""

from __future__ import annotations

import pytest
from support.wire import notification, request, result

from shipcode_mcp.compat import fastmcp
from shipcode_mcp.compat.fastmcp_sdk1 import Context, FastMCP
from shipcode_mcp.compat.mcpserver import MCPServer


def fastmcp_app() -> fastmcp.FastMCP:
    mcp = fastmcp.FastMCP("reads")

    @mcp.resource("stock://{key}")
    async def stock(key: str, ctx: fastmcp.Context) -> str:
        await ctx.info(f"reading {key}", extra={"key": key})
        return f"{key}: 3"

    @mcp.resource("notes://today")
    def today(ctx: fastmcp.Context) -> str:
        ctx.warning("no notes")
        return "nothing"

    @mcp.prompt
    async def restock(key: str, ctx: fastmcp.Context) -> str:
        await ctx.debug("prompting")
        return f"Restock {key}."

    return mcp


def log(level: str, data: object) -> bytes:
    return notification("notifications/message", {"level": level, "data": data})


def test_fastmcp_resources_templates_and_prompts_log_as_fastmcp(run) -> None:
    lines = (
        request("resources/read", {"uri": "stock://tea"}, 1)
        + request("resources/read", {"uri": "notes://today"}, 2)
        + request("prompts/get", {"name": "restock", "arguments": {"key": "tea"}}, 3)
    )
    assert run(lines, catalogue=fastmcp_app().catalogue()) == (
        log("info", {"msg": "reading tea", "extra": {"key": "tea"}})
        + result(b'{"contents":[{"uri":"stock://tea","mimeType":"text/plain","text":"tea: 3"}]}', 1)
        + log("warning", {"msg": "no notes", "extra": None})
        + result(b'{"contents":[{"uri":"notes://today","mimeType":"text/plain","text":"nothing"}]}', 2)
        + log("debug", {"msg": "prompting", "extra": None})
        + result(b'{"messages":[{"role":"user","content":{"type":"text","text":"Restock tea."}}]}', 3)
    )


def sdk_app() -> FastMCP:
    mcp = FastMCP("reads")

    @mcp.resource("users://{uid}/session")
    def session_of(uid: int, ctx: Context) -> str:
        return f"{uid + 1} {type(ctx.session).__name__}"

    @mcp.prompt()
    async def ask(topic: str, ctx: Context) -> str:
        await ctx.info(f"asking about {topic}")
        return f"{topic} through {type(ctx.session).__name__}"

    return mcp


def test_sdk_templates_and_prompts_get_the_sdk_context(run) -> None:
    lines = request("resources/read", {"uri": "users://41/session"}, 1) + request(
        "prompts/get", {"name": "ask", "arguments": {"topic": "tea"}}, 2
    )
    assert run(lines, catalogue=sdk_app().catalogue()) == (
        result(b'{"contents":[{"uri":"users://41/session","mimeType":"text/plain","text":"42 ClientSession"}]}', 1)
        + log("info", "asking about tea")
        + result(b'{"messages":[{"role":"user","content":{"type":"text","text":"tea through ClientSession"}}]}', 2)
    )


def test_a_resource_without_parts_taking_a_context_by_each_framework_s_rule(run) -> None:
    """mcp 1.x lists it as a template that no read matches, fastmcp as a resource; mcp 2.x refuses it at load,
    with its words."""
    listings = request("resources/list", rid=1) + request("resources/templates/list", rid=2)
    entry = b'"uri%s":"status://db","name":"status","mimeType":"text/plain"'
    read = b'{"contents":[{"uri":"status://db","mimeType":"text/plain","text":"open"}]}'
    unknown = b'{"jsonrpc":"2.0","id":3,"error":{"code":0,"message":"Unknown resource: status://db"}}\n'
    for server, as_template in ((FastMCP(), True), (fastmcp.FastMCP(), False)):

        @server.resource("status://db")
        def status(ctx: Context) -> str:
            return "open"

        tags = b',"_meta":{"%s":{"tags":[]}}' % (b"fastmcp" if "4.x" in fastmcp.FastMCP.API else b"_fastmcp")
        resources = b"" if as_template else b"{" + entry % b"" + tags + b"}"
        templates = b"{" + entry % b"Template" + b"}" if as_template else b""
        out = run(listings + request("resources/read", {"uri": "status://db"}, 3), catalogue=server.catalogue())
        assert out == (
            result(b'{"resources":[' + resources + b"]}", 1)
            + result(b'{"resourceTemplates":[' + templates + b"]}", 2)
            + (unknown if as_template else result(read, 3))
        )
    with pytest.raises(ValueError) as refused:
        MCPServer().resource("status://db")(status)
    assert str(refused.value) == (
        "Resource 'status://db' has no URI template variables, but the handler declares a Context parameter. "
        "Context injection for static resources is not supported. "
        "Add a template variable to the URI or remove the Context parameter."
    )
