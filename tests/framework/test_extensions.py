"""The extension mechanism (``shipcode_mcp.extensions``), on both engines fed in-process, whole bytes: an extension
advertised under ``capabilities.extensions`` in both eras, its methods served in both, a tool whose calls it takes
over, a member of the ``subscriptions/listen`` filter; what ``Server(extensions=...)`` refuses."""

from __future__ import annotations

import pytest
from orjson import dumps
from support.wire import engine

from shipcode_mcp import Server
from shipcode_mcp.extensions import Extension, client_declares, missing_extension

NAME = "example.com/echo"
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
SERVER = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ext","version":"1.0.0"}}'


class Echo(Extension):
    """Says back what it is told; takes over the tool ``shout``; agrees to listen for ``echoes``."""

    name = NAME

    def settings(self) -> dict:
        return {"loud": True}

    def methods(self, catalogue) -> dict:
        def say(params):
            if not client_declares(catalogue, params, NAME):
                raise missing_extension(NAME)
            return dumps({"said": params["text"]})

        return {"echo/say": say}

    def claims(self, catalogue) -> dict:
        return {"shout": lambda params: dumps({"content": [{"type": "text", "text": "claimed"}]})}

    def listen_filters(self, catalogue) -> dict:
        return {"echoes": lambda value: value if type(value) is list else None}


def served(engine_name: str):
    app = Server("ext", version="1.0.0", extensions=[Echo()])

    @app.tool()
    def shout(text: str) -> str:
        return text.upper()

    return engine(engine_name).Engine(app.catalogue(), 1 << 20)


def request(rid: int, method: str, params: dict) -> bytes:
    return dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + b"\n"


def test_the_legacy_era(engine_name: str) -> None:
    server = served(engine_name)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {"extensions": {NAME: {}}}}
    assert server.feed(request(1, "initialize", hello)) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},'
        b'"extensions":{"example.com/echo":{"loud":true}}},"serverInfo":{"name":"ext","version":"1.0.0"}}}\n'
    )
    assert server.feed(request(2, "echo/say", {"text": "hi"})) == b'{"jsonrpc":"2.0","id":2,"result":{"said":"hi"}}\n'
    assert server.feed(request(3, "tools/call", {"name": "shout", "arguments": {"text": "a"}})) == (
        b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"claimed"}]}}\n'
    )


def test_a_legacy_client_that_did_not_declare_it(engine_name: str) -> None:
    server = served(engine_name)
    server.feed(request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    assert server.feed(request(2, "echo/say", {"text": "hi"})) == (
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32021,"message":"Server requires the example.com/echo extension '
        b'for this request","data":{"requiredCapabilities":{"extensions":{"example.com/echo":{}}}}}}\n'
    )


def test_the_modern_era(engine_name: str) -> None:
    server = served(engine_name)
    declared = {**MODERN, "io.modelcontextprotocol/clientCapabilities": {"extensions": {NAME: {}}}}
    assert server.feed(request(1, "server/discover", {"_meta": MODERN})) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26",'
        b'"2024-11-05"],"capabilities":{"tools":{},"resources":{},"extensions":{"example.com/echo":{"loud":true}}},'
        b'"resultType":"complete","ttlMs":0,"cacheScope":"private",%s}}\n' % SERVER
    )
    assert server.feed(request(2, "echo/say", {"text": "hi", "_meta": declared})) == (
        b'{"jsonrpc":"2.0","id":2,"result":{"said":"hi","resultType":"complete",%s}}\n' % SERVER
    )
    assert server.feed(request(3, "echo/say", {"text": "hi", "_meta": MODERN})) == (
        b'{"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"Server requires the example.com/echo extension '
        b'for this request","data":{"requiredCapabilities":{"extensions":{"example.com/echo":{}}}}}}\n'
    )
    call = {"name": "shout", "arguments": {"text": "a"}, "_meta": MODERN}
    assert server.feed(request(4, "tools/call", call)) == (
        b'{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"claimed"}],"resultType":"complete",%s}}\n'
        % SERVER
    )
    listen = {"notifications": {"echoes": ["x"], "toolsListChanged": True}, "_meta": MODERN}
    assert server.feed(request(5, "subscriptions/listen", listen)) == (
        b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":'
        b'{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"echoes":["x"]}}}\n'
    )


def test_an_app_without_extensions_serves_none_of_their_methods(engine_name: str) -> None:
    server = engine(engine_name).Engine(Server("plain").catalogue(), 1 << 20)
    assert server.feed(request(1, "echo/say", {"text": "hi"})) == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}\n'
    )


def refusal(error: type[Exception], make) -> str:
    """The message of the ``error`` that ``make()`` raises."""
    with pytest.raises(error) as caught:
        make()
    return str(caught.value)


def test_what_an_app_refuses() -> None:
    assert refusal(TypeError, lambda: Server("x", extensions=[object()])) == "an extension is an Extension, not object"
    twice = refusal(ValueError, lambda: Server("x", extensions=[Echo(), Echo()]))
    assert twice == "the extension 'example.com/echo' is already added"
    nameless = refusal(ValueError, lambda: Server("x", extensions=[Extension()]))
    assert nameless == "an extension's name is 'prefix/name', not ''"

    def sometimes() -> str:
        return ""

    wrong = refusal(ValueError, lambda: Server("x").tool(task="sometimes")(sometimes))
    assert wrong == "tool 'sometimes': task is True, False, \"required\" or a function"
