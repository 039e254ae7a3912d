"""The compiled engine's fast path over HTTP: common requests answered without parsing the body in
Python, and never at the cost of a check (whatever it declines is judged in full, with the same bytes)."""

from __future__ import annotations

import orjson
import pytest
from support.httpwire import POST_HEADERS, Call, http, json_reply, modern_body, modern_headers, seen, within
from support.wire import engine

from shipcode_mcp import Server, defaults
from shipcode_mcp.lines import LineRules
from shipcode_mcp.transports.http import posts, served

pytestmark = pytest.mark.compiled

LEGACY = "2025-11-25"
INIT = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def make_app() -> Server:
    """The default catalogue's tools in an app speaking every era."""
    app = Server("fast", version="1.0.0")
    app.tool()(defaults.echo)
    app.tool()(defaults.add)
    return app


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """HTTP served by the compiled engine; what reached the line rules or a Python parse of a body."""
    monkeypatch.setattr(served, "Engine", engine("compiled").Engine)
    reached: list[bytes] = []
    line, envelope = LineRules.line, posts.envelope
    monkeypatch.setattr(LineRules, "line", lambda self, data: reached.append(data) or line(self, data))
    monkeypatch.setattr(posts, "envelope", lambda body, limit: reached.append(body) or envelope(body, limit))
    return reached


def stdio_answers(app: Server, *lines: bytes) -> list[bytes]:
    """The pure engine's answers to these lines, one per line that has one."""
    return engine("pure").Engine(app.catalogue()).feed(b"".join(line + b"\n" for line in lines)).splitlines(True)


MODERN_CALLS = [
    ("tools/call", "echo", {"name": "echo", "arguments": {"text": "héllo"}}),
    ("tools/call", "add", {"arguments": {"a": 7, "b": 49.25}, "name": "add"}),
    ("tools/call", "add", {"name": "add", "arguments": {"a": 1, "b": "x"}}),  # invalid arguments: a result
    ("tools/list", None, {}),
    ("server/discover", None, {}),
]


def test_common_modern_requests_are_answered_on_the_fast_path(compiled: list[bytes]) -> None:
    app = make_app()
    bodies = [modern_body(method, params, rid=rid) for rid, (method, _, params) in enumerate(MODERN_CALLS)]

    async def scenario() -> list[Call]:
        served_app = app.http_app()
        return [
            await http(served_app, "POST", body, modern_headers(method, name))
            for body, (method, name, _) in zip(bodies, MODERN_CALLS, strict=True)
        ]

    calls = within(scenario())
    missed = list(compiled)  # before the pure engine below runs the line rules itself
    assert [seen(call) for call in calls] == [json_reply(200, answer) for answer in stdio_answers(app, *bodies)]
    assert missed == []


def test_common_requests_of_a_session_are_answered_on_the_fast_path(compiled: list[bytes]) -> None:
    app = make_app()
    call = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
    listing = b'{"jsonrpc":"2.0","id":6,"method":"tools/list"}'

    async def scenario() -> tuple[str, list[Call]]:
        served_app = app.http_app()
        opened = await http(served_app, "POST", INIT)
        session = opened.header("mcp-session-id")
        headers = {**POST_HEADERS, "mcp-session-id": session, "mcp-protocol-version": LEGACY}
        await http(served_app, "POST", INITIALIZED, headers)
        compiled.clear()
        return session, [await http(served_app, "POST", body, headers) for body in (call, listing)]

    session, calls = within(scenario())
    missed = list(compiled)
    expected = stdio_answers(app, INIT, INITIALIZED, call, listing)[1:]
    assert [seen(one) for one in calls] == [json_reply(200, answer, ("mcp-session-id", session)) for answer in expected]
    assert missed == []


def test_a_tool_named_like_an_encoded_header_is_still_decoded(compiled: list[bytes]) -> None:
    # The header's raw text equals the name, but a =?base64?...?= value is decoded first: "x" is not the name.
    app = Server("fast", version="1.0.0")
    name = "=?base64?eA==?="
    app.tool(name=name)(lambda: "called")
    body = modern_body("tools/call", {"name": name, "arguments": {}})
    call = within(http(app.http_app(), "POST", body, modern_headers("tools/call", name)))
    message = orjson.dumps(f"Header mismatch: Mcp-Name header value 'x' does not match body value '{name}'")
    assert seen(call) == json_reply(400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":%s}}\n' % message)
