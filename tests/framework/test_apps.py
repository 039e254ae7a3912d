"""MCP Apps (``shipcode_mcp.apps``, ``io.modelcontextprotocol/ui``) on both engines fed in-process, whole bytes:
the extension advertised, a tool's ``_meta.ui`` (with the flat ``ui/resourceUri``) and its visibility, a
``ui://`` interface listed and read with its ``_meta.ui``, in both eras and over HTTP; what registration
refuses (a uri outside ``ui://``, an unknown visibility, CSP member or permission, an interface not served)."""

from __future__ import annotations

import pytest
from support.httpwire import http, json_reply, modern_body, modern_headers, seen, within
from support.wire import call, engine, read, request

from shipcode_mcp import Server

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
PAGE = '<!DOCTYPE html><html><head><title>view</title></head><body><p id="n"></p></body></html>'
UI_META = (
    b'"_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"]},'
    b'"permissions":{"clipboardWrite":{}},"domain":"view.example.com","prefersBorder":false}}'
)
EXTENSION = b'"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}'
TOOLS = (
    b'{"tools":[{"name":"show","description":"Show a number","inputSchema":{"type":"object","properties":{"n":'
    b'{"type":"integer"}},"required":["n"],"additionalProperties":false},"_meta":{"ui":{"resourceUri":'
    b'"ui://numbers/view.html"},"ui/resourceUri":"ui://numbers/view.html"}},'
    b'{"name":"refresh","description":"Refresh the view","inputSchema":{"type":"object","properties":{},'
    b'"additionalProperties":false},"_meta":{"ui":{"resourceUri":"ui://numbers/view.html","visibility":["app"]},'
    b'"ui/resourceUri":"ui://numbers/view.html"}},'
    b'{"name":"plain","description":"Not drawn","inputSchema":{"type":"object","properties":{},'
    b'"additionalProperties":false}}]}'
)
RESOURCES = (
    b'{"resources":[{"uri":"ui://numbers/view.html","name":"numbers view","description":"Numbers, drawn",'
    b'"mimeType":"text/html;profile=mcp-app",' + UI_META + b"}]}"
)
CONTENTS = (
    b'{"contents":[{"uri":"ui://numbers/view.html","mimeType":"text/html;profile=mcp-app","text":'
    b'"<!DOCTYPE html><html><head><title>view</title></head><body><p id=\\"n\\"></p></body></html>",' + UI_META + b"}]}"
)
SERVER = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"numbers","version":"1.0.0"}}'


def numbers() -> Server:
    app = Server("numbers", version="1.0.0")
    app.ui_resource(
        "ui://numbers/view.html",
        PAGE,
        name="numbers view",
        description="Numbers, drawn",
        csp={"resourceDomains": ["https://cdn.example.com"], "connectDomains": ["https://api.example.com"]},
        permissions=["clipboardWrite"],
        domain="view.example.com",
        prefers_border=False,
    )

    @app.tool(ui="ui://numbers/view.html")
    def show(n: int) -> int:
        """Show a number"""
        return n

    def refresh() -> str:
        """Refresh the view"""
        return "refreshed"

    app.add_tool(refresh, ui="ui://numbers/view.html", visibility=["app"])

    @app.tool
    def plain() -> str:
        """Not drawn"""
        return "plain"

    return app


def served(engine_name: str):
    return engine(engine_name).Engine(numbers().catalogue(), 1 << 20)


def test_the_legacy_era(engine_name: str) -> None:
    server = served(engine_name)
    assert server.feed(request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, 0)) == (
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},'
        + EXTENSION
        + b'},"serverInfo":{"name":"numbers","version":"1.0.0"}}}\n'
    )
    assert server.feed(request("tools/list")) == b'{"jsonrpc":"2.0","id":1,"result":' + TOOLS + b"}\n"
    assert server.feed(request("resources/list", None, 2)) == b'{"jsonrpc":"2.0","id":2,"result":' + RESOURCES + b"}\n"
    assert server.feed(read("ui://numbers/view.html", 3)) == b'{"jsonrpc":"2.0","id":3,"result":' + CONTENTS + b"}\n"
    # The host, not the server, tells the app's calls from the model's: an app-only tool answers any call.
    assert server.feed(call("refresh", {}, 4) + call("show", {"n": 7}, 5)) == (
        b'{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"refreshed"}]}}\n'
        b'{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"7"}]}}\n'
    )


def test_the_modern_era(engine_name: str) -> None:
    server = served(engine_name)
    assert server.feed(request("server/discover", {"_meta": MODERN})) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26",'
        b'"2024-11-05"],"capabilities":{"tools":{},"resources":{},' + EXTENSION + b'},"resultType":"complete",'
        b'"ttlMs":0,"cacheScope":"private",' + SERVER + b"}}\n"
    )
    assert server.feed(request("tools/list", {"_meta": MODERN}, 2)) == (
        b'{"jsonrpc":"2.0","id":2,"result":' + TOOLS[:-1] + b',"resultType":"complete","ttlMs":0,'
        b'"cacheScope":"private",' + SERVER + b"}}\n"
    )
    assert server.feed(request("resources/read", {"uri": "ui://numbers/view.html", "_meta": MODERN}, 3)) == (
        b'{"jsonrpc":"2.0","id":3,"result":' + CONTENTS[:-1] + b',"resultType":"complete","ttlMs":0,'
        b'"cacheScope":"private",' + SERVER + b"}}\n"
    )


def test_an_interface_over_http() -> None:
    body = modern_body("resources/read", {"uri": "ui://numbers/view.html"})
    answer = within(
        http(numbers().http_app(), "POST", body, modern_headers("resources/read", "ui://numbers/view.html"))
    )
    assert seen(answer) == json_reply(
        200,
        b'{"jsonrpc":"2.0","id":1,"result":' + CONTENTS[:-1] + b',"resultType":"complete","ttlMs":0,'
        b'"cacheScope":"private",' + SERVER + b"}}\n",
    )


def test_an_interface_from_a_file(engine_name: str, tmp_path) -> None:
    (tmp_path / "view.html").write_text("<!DOCTYPE html><p>é</p>", encoding="utf-8")
    app = Server("numbers", version="1.0.0")
    app.ui_resource("ui://numbers/view.html", path=tmp_path / "view.html")
    (tmp_path / "view.html").write_text("changed later: not seen")
    server = engine(engine_name).Engine(app.catalogue(), 1 << 20)
    assert server.feed(request("resources/list") + read("ui://numbers/view.html", 2)) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"ui://numbers/view.html","name":'
        b'"ui://numbers/view.html","mimeType":"text/html;profile=mcp-app"}]}}\n'
        b'{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"ui://numbers/view.html",'
        b'"mimeType":"text/html;profile=mcp-app","text":"<!DOCTYPE html><p>\xc3\xa9</p>"}]}}\n'
    )


def _no_interface(app: Server) -> None:
    app.tool(ui="ui://numbers/missing.html")(lambda: "x")
    app.catalogue()


@pytest.mark.parametrize(
    ("register", "error", "message"),
    [
        (
            lambda app: app.ui_resource("https://x/view.html", PAGE),
            ValueError,
            "an interface's uri begins with 'ui://', not 'https://x/view.html'",
        ),
        (lambda app: app.ui_resource("ui://", PAGE), ValueError, "an interface's uri begins with 'ui://', not 'ui://'"),
        (
            lambda app: app.ui_resource("ui://v"),
            TypeError,
            "ui_resource() takes the page as html= or as path=, one of them",
        ),
        (lambda app: app.ui_resource("ui://v", b"<p>"), TypeError, "html is the page's text, not bytes"),
        (
            lambda app: app.ui_resource("ui://v", PAGE, csp={"scriptDomains": []}),
            ValueError,
            "csp members are connectDomains, resourceDomains, frameDomains, baseUriDomains, not scriptDomains",
        ),
        (
            lambda app: app.ui_resource("ui://v", PAGE, csp={"connectDomains": "https://a"}),
            ValueError,
            "csp connectDomains is a list of origins, not 'https://a'",
        ),
        (
            lambda app: app.ui_resource("ui://v", PAGE, permissions=["usb"]),
            ValueError,
            "permissions are among camera, microphone, geolocation, clipboardWrite, not ['usb']",
        ),
        (
            lambda app: app.ui_resource("ui://v", PAGE, prefers_border=1),
            ValueError,
            "prefers_border is True or False, not 1",
        ),
        (
            lambda app: app.tool(ui="file:///v.html")(lambda: "x"),
            ValueError,
            "an interface's uri begins with 'ui://', not 'file:///v.html'",
        ),
        (
            lambda app: app.tool(visibility=["user"])(lambda: "x"),
            ValueError,
            "visibility lists 'model' and/or 'app' once each, not ['user']",
        ),
        (
            lambda app: app.tool(visibility=[])(lambda: "x"),
            ValueError,
            "visibility lists 'model' and/or 'app' once each, not []",
        ),
        (
            lambda app: app.tool(visibility=["app", "app"])(lambda: "x"),
            ValueError,
            "visibility lists 'model' and/or 'app' once each, not ['app', 'app']",
        ),
        (
            _no_interface,
            ValueError,
            "tool '<lambda>' names the interface 'ui://numbers/missing.html', which the app does not serve",
        ),
    ],
)
def test_what_registration_refuses(register, error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        register(Server("numbers"))
    assert str(raised.value) == message


def test_a_page_that_is_not_utf8(tmp_path) -> None:
    (tmp_path / "view.html").write_bytes(b"<p>\xff</p>")
    with pytest.raises(ValueError) as raised:
        Server("numbers").ui_resource("ui://v", path=tmp_path / "view.html")
    assert str(raised.value) == f"{tmp_path / 'view.html'}: an interface's HTML is UTF-8 text"


def test_an_interface_removed_while_served(engine_name: str, capsys) -> None:
    app = numbers()
    server = engine(engine_name).Engine(app.catalogue(), 1 << 20)
    app.remove_resource("ui://numbers/view.html")
    assert capsys.readouterr().err == "".join(
        f"shipcode-mcp: warning: tool {name!r} names the interface 'ui://numbers/view.html', which the app does not "
        "serve\n"
        for name in ("show", "refresh")
    )
    assert server.feed(request("resources/list") + read("ui://numbers/view.html", 2)) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}\n'
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found"}}\n'
    )
