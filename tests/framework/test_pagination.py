"""Lists in pages (``Server(list_page_size=N)``, ``shipcode_mcp.pagination``), on both engines fed in-process (and one
page over HTTP), whole bytes: each list walked page by page in both eras (the caching hints on every 2026-07-28
page), cursors that are the same in every process, an invalid cursor and one of a list that has changed refused,
today's bytes kept without a page size or when a list fits in one page."""

from __future__ import annotations

import pytest
from support.httpwire import http, json_reply, modern_body, modern_headers, seen, within
from support.wire import engine, request

from shipcode_mcp import Server

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
HINTS = (
    b'"resultType":"complete","ttlMs":60000,"cacheScope":"public",'
    b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"paged","version":"1.0.0"}}'
)
TOOL = b'{"name":"%s","description":"","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}'
#: The cursors of the app below: the same in every process, as long as its lists are the same.
AFTER_B = "f8AfiyXeGUNi"
AFTER_D = "f8AfiyXeGUNk"
AFTER_Y = "w8xKGIsWnxRtZW06Ly95"
AFTER_PLAN = "pywXQcbS6o1wbGFu"


def app_of(tools: str, page_size: int | None = 2) -> Server:
    app = Server("paged", version="1.0.0", ttl_ms=60_000, cache_scope="public", list_page_size=page_size)
    for name in tools:
        app.add_tool(lambda: "", name=name)
    for uri in ("mem://x", "mem://y", "mem://z"):
        app.add_resource(lambda: "", uri, name=uri[-1])
    app.add_resource(lambda day: day, "log://{day}", name="log")
    for name in ("greet", "plan", "sum"):
        app.add_prompt(lambda: "hi", name)
    return app


def served(engine_name: str, app: Server):
    return engine(engine_name).Engine(app.catalogue(), 1 << 20)


def tools(*names: str) -> bytes:
    return b'{"tools":[' + b",".join(TOOL % name.encode() for name in names) + b"]"


def test_tools_walked_in_pages_in_the_legacy_era(engine_name: str) -> None:
    server = served(engine_name, app_of("abcde"))
    assert server.feed(request("tools/list")) == (
        b'{"jsonrpc":"2.0","id":1,"result":' + tools("a", "b") + b',"nextCursor":"%s"}}\n' % AFTER_B.encode()
    )
    assert server.feed(request("tools/list", {"cursor": AFTER_B}, 2)) == (
        b'{"jsonrpc":"2.0","id":2,"result":' + tools("c", "d") + b',"nextCursor":"%s"}}\n' % AFTER_D.encode()
    )
    assert server.feed(request("tools/list", {"cursor": AFTER_D}, 3)) == (
        b'{"jsonrpc":"2.0","id":3,"result":' + tools("e") + b"}}\n"
    )


def test_every_modern_page_has_the_caching_hints(engine_name: str) -> None:
    server = served(engine_name, app_of("abcde"))
    assert server.feed(request("tools/list", {"_meta": MODERN})) == (
        b'{"jsonrpc":"2.0","id":1,"result":'
        + tools("a", "b")
        + b',"nextCursor":"%s",' % AFTER_B.encode()
        + HINTS
        + b"}}\n"
    )
    assert server.feed(request("tools/list", {"cursor": AFTER_D, "_meta": MODERN}, 2)) == (
        b'{"jsonrpc":"2.0","id":2,"result":' + tools("e") + b"," + HINTS + b"}}\n"
    )


def test_resources_templates_and_prompts_in_pages(engine_name: str) -> None:
    server = served(engine_name, app_of("ab"))
    first = server.feed(request("resources/list"))
    assert first == (
        b'{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"mem://x","name":"x","mimeType":"text/plain"},'
        b'{"uri":"mem://y","name":"y","mimeType":"text/plain"}],'
        b'"nextCursor":"%s"}}\n' % AFTER_Y.encode()
    )
    assert server.feed(request("resources/list", {"cursor": AFTER_Y}, 2)) == (
        b'{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"mem://z","name":"z","mimeType":"text/plain"}]}}\n'
    )
    assert server.feed(request("resources/templates/list", None, 3)) == (
        b'{"jsonrpc":"2.0","id":3,"result":{"resourceTemplates":'
        b'[{"uriTemplate":"log://{day}","name":"log","mimeType":"text/plain"}]}}\n'
    )
    assert server.feed(request("prompts/list", {"_meta": MODERN}, 4)) == (
        b'{"jsonrpc":"2.0","id":4,"result":{"prompts":[{"name":"greet","description":""},'
        b'{"name":"plan","description":""}],'
        b'"nextCursor":"%s",' % AFTER_PLAN.encode() + HINTS + b"}}\n"
    )
    assert server.feed(request("prompts/list", {"cursor": AFTER_PLAN, "_meta": MODERN}, 5)) == (
        b'{"jsonrpc":"2.0","id":5,"result":{"prompts":[{"name":"sum","description":""}],' + HINTS + b"}}\n"
    )


@pytest.mark.parametrize(
    ("cursor", "message"),
    [
        ("zz", b'"Invalid cursor","data":{"cursor":"zz"}'),
        (5, b'"Invalid cursor","data":{"cursor":5}'),
        (AFTER_B + "x", b'"Invalid cursor","data":{"cursor":"%s"}' % (AFTER_B + "x").encode()),
    ],
)
def test_an_invalid_cursor(engine_name: str, cursor: object, message: bytes) -> None:
    server = served(engine_name, app_of("abcde"))
    for params in ({"cursor": cursor}, {"cursor": cursor, "_meta": MODERN}):
        assert server.feed(request("tools/list", params)) == (
            b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":' + message + b"}}\n"
        )


def test_a_cursor_of_a_list_that_has_changed(engine_name: str) -> None:
    server = served(engine_name, app_of("abcdef"))
    assert server.feed(request("tools/list", {"cursor": AFTER_B})) == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid cursor: the list has changed since; '
        b'list again from the start","data":{"cursor":"%s"}}}\n' % AFTER_B.encode()
    )


def test_one_page_is_todays_constant_answer(engine_name: str) -> None:
    paged, whole = app_of("abc", page_size=3), app_of("abc", page_size=None)
    assert type(paged.catalogue().routes["tools/list"]) is bytes
    assert paged.catalogue().routes["tools/list"] == whole.catalogue().routes["tools/list"]
    assert paged.catalogue().modern.routes["tools/list"] == whole.catalogue().modern.routes["tools/list"]
    for app in (paged, whole):
        assert served(engine_name, app).feed(request("tools/list")) == (
            b'{"jsonrpc":"2.0","id":1,"result":' + tools("a", "b", "c") + b"}}\n"
        )


def test_the_page_size_is_checked() -> None:
    for size in (0, -1, 2.0, "2"):
        with pytest.raises(ValueError, match=r"^list_page_size must be a whole number, 1 or more"):
            Server("paged", list_page_size=size)


def test_a_page_over_http() -> None:
    app = app_of("abcde")
    body = modern_body("tools/list", {"cursor": AFTER_D})
    call = within(http(app.http_app(), "POST", body, modern_headers("tools/list")))
    assert seen(call) == json_reply(200, b'{"jsonrpc":"2.0","id":1,"result":' + tools("e") + b"," + HINTS + b"}}\n")
