"""Streamable HTTP, 2026-07-28: one POST per request, headers checked against the body, a status per error.

Every answer's bytes are compared with what the stdio engines write for the same message
(the ``run`` fixture: both engines), so the HTTP body is the stdio line, newline included.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest
from support.httpwire import (
    CAPS,
    LOG,
    META,
    MODERN,
    POST_HEADERS,
    STREAM,
    Call,
    V,
    empty_reply,
    events,
    http,
    json_reply,
    modern_body,
    modern_headers,
    refusal,
    seen,
    within,
)

from shipcode_mcp import Context, Server

KEY = "http-tests-key-of-thirty-two-bytes"


def make_app() -> tuple[Server, dict]:
    app = Server("web", version="1.0.0", state_key=KEY, list_changed=True)
    gates: dict = {}

    @app.tool()
    def echo(text: str) -> str:
        """Echo"""
        return text

    @app.tool()
    async def chatty(ctx: Context) -> str:
        """Logs, then answers"""
        await ctx.info("working")
        await ctx.report_progress(1, 2)
        return "done"

    @app.tool()
    def inline_log(ctx: Context) -> str:
        """A sync tool that logs"""
        ctx.warning("careful")
        return "ok"

    @app.tool()
    async def wait(ctx: Context) -> str:
        """Waits until released; records its cancellation"""
        gates["started"].set()
        try:
            await gates["release"].wait()
        except asyncio.CancelledError:
            gates["cancelled"].set()
            raise
        return "released"

    @app.tool(blocking=True)
    def threaded_log(ctx: Context) -> str:
        """A blocking tool that logs from its worker thread"""
        ctx.info("from a thread")
        return "threaded"

    @app.tool()
    def regional(region: str, count: int = 0) -> str:
        """A tool whose region is mirrored in a header"""
        return f"{region} {count}"

    app.tools["regional"].input_schema["properties"]["region"]["x-mcp-header"] = "Region"
    app.tools["regional"].input_schema["properties"]["count"]["x-mcp-header"] = "Count"
    return app, gates


def stdio(run, app: Server, body: bytes) -> bytes:
    """What the stdio engine under test answers to ``body`` as a line."""
    return run(body + b"\n", catalogue=app.catalogue())


def post(app: Server, body: bytes, headers: dict, **options) -> Call:
    return within(http(app.http_app(**options), "POST", body, headers))


def test_discover_is_the_stdio_answer_as_json(run) -> None:
    app, _ = make_app()
    body = modern_body("server/discover")
    call = post(app, body, modern_headers("server/discover"))
    assert seen(call) == json_reply(200, stdio(run, app, body))


def test_a_tool_call_is_the_stdio_answer_as_json(run) -> None:
    app, _ = make_app()
    body = modern_body("tools/call", {"name": "echo", "arguments": {"text": "héllo"}}, rid="abc")
    call = post(app, body, modern_headers("tools/call", "echo"))
    expected = stdio(run, app, body)
    assert expected.startswith(b'{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"h\xc3\xa9llo"')
    assert seen(call) == json_reply(200, expected)


@pytest.mark.parametrize(
    ("method", "params", "status"),
    [
        ("nothing/here", {}, 404),
        ("initialize", {}, 404),
        ("ping", {}, 404),
        ("tools/call", {"name": "missing"}, 400),
        ("resources/read", {"uri": "file:///none"}, 400),
    ],
)
def test_errors_carry_their_status(run, method: str, params: dict, status: int) -> None:
    app, _ = make_app()
    body = modern_body(method, params, rid=7)
    name = params.get("name") or params.get("uri")
    call = post(app, body, modern_headers(method, name))
    expected = stdio(run, app, body)
    assert expected.startswith(b'{"jsonrpc":"2.0","id":7,"error":')
    assert seen(call) == json_reply(status, expected)


@pytest.mark.parametrize(
    ("meta", "status"),
    [
        ({V: MODERN}, 400),  # no client capabilities
        ({V: MODERN, CAPS: {}, LOG: "loud"}, 400),
    ],
)
def test_bad_meta_is_the_stdio_error_with_400(run, meta: dict, status: int) -> None:
    app, _ = make_app()
    body = modern_body("tools/list", meta=meta)
    call = post(app, body, modern_headers("tools/list"))
    assert seen(call) == json_reply(status, stdio(run, app, body))


def test_a_request_without_meta_under_the_modern_header_is_judged_modern() -> None:
    app, _ = make_app()
    body = b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}'
    call = post(app, body, modern_headers("tools/list"))
    assert seen(call) == json_reply(
        400, b'{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Missing _meta"}}\n'
    )


def mismatch(message: str, rid: bytes = b"1") -> bytes:
    text = orjson.dumps("Header mismatch: " + message)
    return b'{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":%s}}\n' % (rid, text)


CALL_ECHO = modern_body("tools/call", {"name": "echo", "arguments": {"text": "x"}})


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (
            {"mcp-method": "tools/list"},
            mismatch("Mcp-Method header value 'tools/list' does not match body value 'tools/call'"),
        ),
        ({"mcp-method": None}, mismatch("Mcp-Method header is missing")),
        ({"mcp-name": None}, mismatch("Mcp-Name header is missing")),
        ({"mcp-name": "Echo"}, mismatch("Mcp-Name header value 'Echo' does not match body value 'echo'")),
        ({"mcp-name": "=?base64?ZWNobw==?="}, None),  # "echo", encoded
        ({"mcp-name": "  echo\t"}, None),  # trimmed
        ({"mcp-name": "=?base64?ZWNobw?="}, mismatch("Mcp-Name header value is not valid Base64 of UTF-8 text")),
        (
            {"mcp-name": "=?base64?ZWNobA==?="},
            mismatch("Mcp-Name header value 'echl' does not match body value 'echo'"),
        ),
        ({"mcp-name": "ech\x7fo"}, mismatch("Mcp-Name header value contains invalid characters")),
        ({"mcp-protocol-version": "2026-07-29"}, None),  # unsupported: see the next test
    ],
)
def test_standard_headers_must_match_the_body(run, headers: dict, expected: bytes | None) -> None:
    app, _ = make_app()
    sent = modern_headers("tools/call", "echo")
    for name, value in headers.items():
        if value is None:
            del sent[name]
        else:
            sent[name] = value
    call = post(app, CALL_ECHO, sent)
    if "mcp-protocol-version" in headers:
        assert call.status == 400
        assert orjson.loads(call.body)["error"]["code"] == -32022
    elif expected is None:
        assert seen(call) == json_reply(200, stdio(run, app, CALL_ECHO))
    else:
        assert seen(call) == json_reply(400, expected)


def test_a_repeated_header_is_a_mismatch() -> None:
    app, _ = make_app()
    sent = [*modern_headers("tools/call", "echo").items(), ("mcp-name", "echo")]
    call = post(app, CALL_ECHO, sent)
    assert seen(call) == json_reply(400, mismatch("Mcp-Name header appears more than once"))


def test_a_header_repeated_in_another_case_is_a_mismatch() -> None:
    app, _ = make_app()
    sent = [*modern_headers("tools/call", "echo").items()]
    call = Call(app.http_app(), "POST", CALL_ECHO, sent)
    call.scope["headers"].append((b"Mcp-Name", b"echo"))
    assert seen(within(call.finish())) == json_reply(400, mismatch("Mcp-Name header appears more than once"))


def test_the_version_header_must_match_the_meta() -> None:
    app, _ = make_app()
    body = modern_body("server/discover", meta={V: "v999", CAPS: {}}, rid=302)
    call = post(app, body, modern_headers("server/discover"))
    assert seen(call) == json_reply(
        400, mismatch("MCP-Protocol-Version header value '2026-07-28' does not match body value 'v999'", b"302")
    )


def test_an_unsupported_version_lists_the_supported_ones() -> None:
    app, _ = make_app()
    body = modern_body("server/discover", meta={V: "v999", CAPS: {}}, rid=301)
    call = post(app, body, modern_headers("server/discover", **{"mcp-protocol-version": "v999"}))
    supported = b'["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]'
    assert seen(call) == json_reply(
        400,
        b'{"jsonrpc":"2.0","id":301,"error":{"code":-32022,"message":"Unsupported protocol version",'
        b'"data":{"supported":' + supported + b',"requested":"v999"}}}\n',
    )


def test_mirrored_parameters_are_checked() -> None:
    app, _ = make_app()
    body = modern_body("tools/call", {"name": "regional", "arguments": {"region": "us-west1", "count": 42}})
    base = modern_headers("tools/call", "regional")
    good = post(app, body, {**base, "mcp-param-region": "us-west1", "mcp-param-count": "42.0"})
    assert (good.status, b'"text":"us-west1 42"' in good.body) == (200, True)
    missing = post(app, body, {**base, "mcp-param-count": "42"})
    assert seen(missing) == json_reply(400, mismatch("Mcp-Param-Region header is missing"))
    wrong = post(app, body, {**base, "mcp-param-region": "=?base64?ZXUtd2VzdDE=?=", "mcp-param-count": "42"})
    assert seen(wrong) == json_reply(
        400, mismatch("Mcp-Param-Region header value 'eu-west1' does not match body value 'us-west1'")
    )
    without = modern_body("tools/call", {"name": "regional", "arguments": {"region": "x"}})
    assert post(app, without, {**base, "mcp-param-region": "x"}).status == 200


def test_a_notification_is_accepted_without_a_body() -> None:
    app, _ = make_app()
    body = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    call = post(app, body, modern_headers("notifications/cancelled"))
    assert seen(call) == empty_reply(202)


def test_get_and_delete_are_not_allowed() -> None:
    app, _ = make_app()
    for method in ("GET", "DELETE", "PUT"):
        call = within(http(app.http_app(), method, b"", {"host": "localhost", "accept": "text/event-stream"}))
        assert seen(call) == json_reply(405, refusal(-32600, "Method Not Allowed"), ("allow", "GET, POST, DELETE")), (
            method
        )


def test_notifications_before_the_answer_make_an_event_stream(run) -> None:
    app, _ = make_app()
    meta = {**META, LOG: "debug", "progressToken": "p"}
    body = modern_body("tools/call", {"name": "chatty"}, meta=meta)
    call = post(app, body, modern_headers("tools/call", "chatty"))
    lines = stdio(run, app, body).splitlines(keepends=True)
    assert [line[:48] for line in lines] == [
        b'{"jsonrpc":"2.0","method":"notifications/message',
        b'{"jsonrpc":"2.0","method":"notifications/progres',
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"t',
    ]
    assert seen(call) == (200, STREAM, events(*lines))


def test_a_sync_handler_logging_before_its_answer_streams_too(run) -> None:
    app, _ = make_app()
    body = modern_body("tools/call", {"name": "inline_log"}, meta={**META, LOG: "info"})
    call = post(app, body, modern_headers("tools/call", "inline_log"))
    lines = stdio(run, app, body).splitlines(keepends=True)
    assert len(lines) == 2
    assert seen(call) == (200, STREAM, events(*lines))


def test_a_client_reading_json_only_gets_the_answer_alone(run) -> None:
    app, _ = make_app()
    body = modern_body("tools/call", {"name": "chatty"}, meta={**META, LOG: "debug"})
    call = post(app, body, {**modern_headers("tools/call", "chatty"), "accept": "application/json"})
    answer = stdio(run, app, body).splitlines(keepends=True)[-1]
    assert seen(call) == json_reply(200, answer)


def test_an_async_answer_alone_is_json(run) -> None:
    app, _ = make_app()
    body = modern_body("tools/call", {"name": "chatty"})  # no log level, no progress token: nothing before
    call = post(app, body, modern_headers("tools/call", "chatty"))
    assert seen(call) == json_reply(200, stdio(run, app, body))


def test_ids_of_different_requests_may_collide() -> None:
    app, gates = make_app()

    async def scenario() -> tuple[Call, Call]:
        gates.update(started=asyncio.Event(), release=asyncio.Event(), cancelled=asyncio.Event())
        served = app.http_app()
        waiting = Call(
            served, body=modern_body("tools/call", {"name": "wait"}), headers=modern_headers("tools/call", "wait")
        ).start()
        await gates["started"].wait()
        quick = await http(served, "POST", CALL_ECHO, modern_headers("tools/call", "echo"))
        assert not waiting.task.done()
        gates["release"].set()
        return await waiting.finish(), quick

    waiting, quick = within(scenario())
    assert (waiting.status, b'"text":"released"' in waiting.body) == (200, True)
    assert (quick.status, b'"text":"x"' in quick.body) == (200, True)


def test_a_client_that_disconnects_cancels_its_request() -> None:
    app, gates = make_app()

    async def scenario() -> Call:
        gates.update(started=asyncio.Event(), release=asyncio.Event(), cancelled=asyncio.Event())
        call = Call(
            app.http_app(),
            body=modern_body("tools/call", {"name": "wait"}),
            headers=modern_headers("tools/call", "wait"),
        ).start()
        await gates["started"].wait()
        call.disconnect()
        await gates["cancelled"].wait()
        return await call.finish()

    call = within(scenario())
    assert (call.status, call.body) == (None, b"")


def test_listen_streams_the_changes_asked_for() -> None:
    app, _ = make_app()
    params = {"notifications": {"toolsListChanged": True, "promptsListChanged": True}}
    body = modern_body("subscriptions/listen", params, rid="sub")

    async def scenario() -> Call:
        call = Call(app.http_app(), body=body, headers=modern_headers("subscriptions/listen")).start()
        first = await call.chunk(0)
        assert first == events(
            b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":'
            b'{"io.modelcontextprotocol/subscriptionId":"sub"},"notifications":{"toolsListChanged":true,'
            b'"promptsListChanged":true}}}\n'
        )
        app.add_tool(lambda: "new", name="fresh", description="Fresh")
        second = await call.chunk(1)
        call.disconnect()
        await call.finish()
        return call, second

    call, second = within(scenario())
    assert second == events(
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":'
        b'{"io.modelcontextprotocol/subscriptionId":"sub"}}}\n'
    )
    assert (call.status, call.headers, call.ended) == (200, STREAM, False)


def test_an_app_speaking_only_2026_needs_the_version_header() -> None:
    app = Server("only", version="1.0.0", protocol_versions=[MODERN])
    body = modern_body("server/discover")
    headers = {**POST_HEADERS, "mcp-method": "server/discover"}
    call = post(app, body, headers)
    assert seen(call) == json_reply(400, mismatch("MCP-Protocol-Version header is missing"))
    plain = post(app, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}', headers)
    assert seen(plain) == json_reply(400, mismatch("MCP-Protocol-Version header is missing"))
    refused = within(http(app.http_app(), "GET", b"", {"host": "localhost", "mcp-session-id": "x"}))
    assert seen(refused) == json_reply(405, refusal(-32600, "Method Not Allowed"), ("allow", "POST"))


def test_a_quiet_listen_stream_gets_keepalive_comments(monkeypatch: pytest.MonkeyPatch) -> None:
    from shipcode_mcp.transports.http import asgi

    monkeypatch.setattr(asgi, "KEEPALIVE_SECONDS", 0.01)
    app, _ = make_app()
    body = modern_body("subscriptions/listen", {"notifications": {}}, rid=5)

    async def scenario() -> list[bytes]:
        call = Call(app.http_app(), body=body, headers=modern_headers("subscriptions/listen")).start()
        chunks = [await call.chunk(0), await call.chunk(1), await call.chunk(2)]
        call.disconnect()
        await call.finish()
        return chunks

    assert within(scenario())[1:] == [b":\n\n", b":\n\n"]


def test_at_most_max_concurrency_requests_are_judged_at_once() -> None:
    app = Server("busy", version="1.0.0")
    started: list[int] = []
    release = {}

    @app.tool()
    async def hold(n: int) -> str:
        """Waits until released"""
        started.append(n)
        await release["gate"].wait()
        return str(n)

    async def scenario() -> tuple[list[int], list[int], list[int]]:
        release["gate"] = asyncio.Event()
        served = app.http_app(max_concurrency=2)
        calls = [
            Call(
                served,
                body=modern_body("tools/call", {"name": "hold", "arguments": {"n": n}}),
                headers=modern_headers("tools/call", "hold"),
            ).start()
            for n in range(5)
        ]
        for _ in range(20):  # every request had its turns: only two got in
            await asyncio.sleep(0)
        at_limit = list(started)
        release["gate"].set()
        for call in calls:
            await call.finish()
        return at_limit, sorted(started), [call.status for call in calls]

    at_limit, everyone, statuses = within(scenario())
    assert (at_limit, everyone, statuses) == ([0, 1], [0, 1, 2, 3, 4], [200] * 5)


def test_listen_streams_are_bounded_and_need_an_event_stream() -> None:
    app, _ = make_app()
    body = modern_body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid=8)

    async def scenario() -> tuple[Call, Call, Call]:
        served = app.http_app(max_sessions=1)
        first = Call(served, body=body, headers=modern_headers("subscriptions/listen")).start()
        await first.chunk(0)
        second = await http(served, "POST", body, modern_headers("subscriptions/listen"))
        json_only = await http(
            served, "POST", body, {**modern_headers("subscriptions/listen"), "accept": "application/json"}
        )
        first.disconnect()
        await first.finish()
        again = Call(served, body=body, headers=modern_headers("subscriptions/listen")).start()
        await again.chunk(0)
        again.disconnect()
        await again.finish()
        return second, json_only, again

    second, json_only, again = within(scenario())
    assert seen(second) == json_reply(503, refusal(-32603, "Service Unavailable: too many open subscriptions"))
    assert seen(json_only) == json_reply(406, refusal(-32600, "Not Acceptable: accept text/event-stream"))
    assert again.status == 200


def test_a_blocking_tool_logging_from_its_thread_streams_too(run) -> None:
    app, _ = make_app()
    body = modern_body("tools/call", {"name": "threaded_log"}, meta={**META, LOG: "info"})
    call = post(app, body, modern_headers("tools/call", "threaded_log"))
    lines = stdio(run, app, body).splitlines(keepends=True)
    assert [line[:48] for line in lines] == [
        b'{"jsonrpc":"2.0","method":"notifications/message',
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"t',
    ]
    assert seen(call) == (200, STREAM, events(*lines))
