"""Streamable HTTP, 2025-03-26 to 2025-11-25: sessions opened by ``initialize``, their streams and ends.

Answers are the stdio engine's bytes for the same lines (the ``run`` fixture: both engines);
a session is one client's catalogue, as one stdio connection is.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest
from support.httpwire import POST_HEADERS, STREAM, Call, empty_reply, events, http, json_reply, refusal, seen, within

from shipcode_mcp import Context, Server

INIT = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
LIST = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture(autouse=True)
def session_engine(engine_module, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions' bodies judged by the engine under test."""
    from shipcode_mcp.transports.http import served

    monkeypatch.setattr(served, "Engine", engine_module.Engine)


def make_app() -> Server:
    app = Server("old", version="1.0.0", protocol_versions=["2025-11-25", "2025-06-18"])

    @app.tool()
    def echo(text: str) -> str:
        """Echo"""
        return text

    @app.tool()
    async def greet(ctx: Context) -> str:
        """Asks the client's user a name"""
        await ctx.info("asking")
        answer = await ctx.elicit("What is your name?", SCHEMA)
        return f"Hello, {answer['content']['name']}!"

    return app


def stdio(run, app: Server, *lines: bytes) -> list[bytes]:
    """What the stdio engine under test writes for these lines, one answer per item."""
    return run(b"".join(line + b"\n" for line in lines), catalogue=app.catalogue()).splitlines(keepends=True)


def session_headers(session_id: str, **extra: str) -> dict[str, str]:
    return {**POST_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25", **extra}


async def opened(served) -> tuple[Call, str]:
    call = await http(served, "POST", INIT)
    return call, call.header("mcp-session-id")


def test_initialize_opens_a_session_and_its_requests_answer_as_on_stdio(run) -> None:
    app = make_app()

    async def scenario():
        served = app.http_app()
        init, session_id = await opened(served)
        note = await http(served, "POST", INITIALIZED, session_headers(session_id))
        listing = await http(served, "POST", LIST, session_headers(session_id))
        return init, session_id, note, listing

    init, session_id, note, listing = within(scenario())
    init_answer, list_answer = stdio(run, app, INIT, INITIALIZED, LIST)
    assert len(session_id) == 32 and session_id.isascii()
    assert seen(init) == json_reply(200, init_answer, ("mcp-session-id", session_id))
    assert seen(note) == empty_reply(202, ("mcp-session-id", session_id))
    assert seen(listing) == json_reply(200, list_answer, ("mcp-session-id", session_id))


def test_sessions_have_different_ids() -> None:
    app = make_app()

    async def scenario():
        served = app.http_app()
        return [(await opened(served))[1] for _ in range(3)]

    ids = within(scenario())
    assert len(set(ids)) == 3


def test_a_request_without_a_session_is_refused() -> None:
    call = within(http(make_app().http_app(), "POST", LIST))
    assert seen(call) == json_reply(400, refusal(-32600, "Bad Request: Mcp-Session-Id header is missing"))


def test_an_unknown_session_is_not_found() -> None:
    call = within(http(make_app().http_app(), "POST", LIST, session_headers("nope")))
    assert seen(call) == json_reply(404, refusal(-32600, "Session not found"))


def in_session(app: Server, body: bytes) -> tuple[Call, str]:
    """``body`` POSTed in a new session of ``app``: the call and the session's id."""

    async def scenario():
        served = app.http_app()
        _, session_id = await opened(served)
        return await http(served, "POST", body, session_headers(session_id)), session_id

    return within(scenario())


def test_errors_of_a_session_answer_200(run) -> None:
    app = make_app()
    unknown = b'{"jsonrpc":"2.0","id":5,"method":"nothing/here"}'
    call, session_id = in_session(app, unknown)
    assert seen(call) == json_reply(200, stdio(run, app, unknown)[0], ("mcp-session-id", session_id))


def test_a_failed_initialize_opens_no_session(run) -> None:
    app = make_app()
    bad = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}'
    call = within(http(app.http_app(), "POST", bad))
    assert seen(call) == json_reply(200, stdio(run, app, bad)[0])


def test_an_unsupported_version_header_is_refused() -> None:
    async def scenario():
        served = make_app().http_app()
        _, session_id = await opened(served)
        return await http(served, "POST", LIST, session_headers(session_id, **{"mcp-protocol-version": "2025-03-26"}))

    call = within(scenario())
    assert seen(call) == json_reply(
        400,
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Unsupported protocol version",'
        b'"data":{"supported":["2025-11-25","2025-06-18"],"requested":"2025-03-26"}}}\n',
    )


def test_initialize_negotiates_whatever_the_version_header_says(run) -> None:
    app = make_app()
    headers = {**POST_HEADERS, "mcp-protocol-version": "2025-03-26"}
    call = within(http(app.http_app(), "POST", INIT, headers))
    assert seen(call) == json_reply(200, stdio(run, app, INIT)[0], ("mcp-session-id", call.header("mcp-session-id")))


def test_delete_ends_the_session() -> None:
    async def scenario():
        served = make_app().http_app()
        _, session_id = await opened(served)
        ended = await http(served, "DELETE", b"", session_headers(session_id))
        after = await http(served, "POST", LIST, session_headers(session_id))
        again = await http(served, "DELETE", b"", session_headers(session_id))
        return ended, after, again

    ended, after, again = within(scenario())
    assert seen(ended) == empty_reply(200)
    assert seen(after) == json_reply(404, refusal(-32600, "Session not found"))
    assert seen(again) == json_reply(404, refusal(-32600, "Session not found"))


def test_the_get_stream_carries_list_changes_and_opens_once() -> None:
    app = make_app()

    async def scenario():
        served = app.http_app()
        _, session_id = await opened(served)
        await http(served, "POST", INITIALIZED, session_headers(session_id))
        stream = Call(served, "GET", b"", session_headers(session_id)).start()
        while stream.status is None:
            await asyncio.sleep(0)
        second = await http(served, "GET", b"", session_headers(session_id))
        app.add_tool(lambda: "x", name="later", description="Later")
        first = await stream.chunk(0)
        await http(served, "DELETE", b"", session_headers(session_id))
        await stream.finish()
        return stream, first, second, session_id

    stream, first, second, session_id = within(scenario())
    assert first == events(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')
    assert seen(second) == json_reply(409, refusal(-32600, "Conflict: the session's stream is already open"))
    assert (stream.status, stream.headers, stream.ended) == (200, [*STREAM, ("mcp-session-id", session_id)], True)


CALL_GREET = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"greet"}}'


async def greeting(served) -> tuple[Call, str]:
    """A session whose handshake is done, and its call of the asking tool ``greet`` (id 9), started."""
    _, session_id = await opened(served)
    await http(served, "POST", INITIALIZED, session_headers(session_id))
    return Call(served, "POST", CALL_GREET, session_headers(session_id)).start(), session_id


def test_the_server_asks_on_the_requests_stream_and_the_answer_is_posted_back() -> None:
    app = make_app()

    async def scenario():
        served = app.http_app()
        asking, session_id = await greeting(served)
        log = await asking.chunk(0)
        question = await asking.chunk(1)
        answer = b'{"jsonrpc":"2.0","id":"s1","result":{"action":"accept","content":{"name":"Ada"}}}'
        posted = await http(served, "POST", answer, session_headers(session_id))
        await asking.finish()
        return asking, log, question, posted, session_id

    asking, log, question, posted, session_id = within(scenario())
    assert log == events(
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"asking"}}\n'
    )
    assert question == events(
        b'{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"What is your name?",'
        b'"requestedSchema":' + orjson.dumps(SCHEMA) + b"}}\n"
    )
    assert seen(posted) == empty_reply(202, ("mcp-session-id", session_id))
    assert asking.chunks[2:] == [
        events(b'{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}\n')
    ]
    assert (asking.status, asking.headers, asking.ended) == (200, [*STREAM, ("mcp-session-id", session_id)], True)


async def opened_from(served, host: str, confirm: bool = True) -> str:
    """A session opened from ``host`` (confirmed by a second request unless ``confirm`` is false): its id."""
    call = Call(served, "POST", INIT)
    call.scope["client"] = (host, 40000)
    session_id = (await call.finish()).header("mcp-session-id")
    assert session_id is not None
    if confirm:
        assert (await http(served, "POST", INITIALIZED, session_headers(session_id))).status == 202
    return session_id


async def alive(served, *session_ids: str) -> list[bool]:
    """Which of these sessions still answer."""
    return [(await http(served, "POST", LIST, session_headers(session_id))).status == 200 for session_id in session_ids]


NO_ROOM = json_reply(503, refusal(-32603, "Service Unavailable: too many open sessions"))


def test_sessions_are_bounded_in_number() -> None:
    async def scenario():
        served = make_app().http_app(max_sessions=2)
        first = [await opened_from(served, host) for host in ("10.0.0.1", "10.0.0.2")]
        refused = await http(served, "POST", INIT)
        await http(served, "DELETE", b"", session_headers(first[0]))
        room = await http(served, "POST", INIT)  # a deleted session's room is free at once
        return refused, room

    refused, room = within(scenario())
    assert seen(refused) == NO_ROOM
    assert (room.status, room.header("mcp-session-id") is not None) == (200, True)


def test_a_full_table_ends_the_oldest_unconfirmed_session() -> None:
    async def scenario():
        served = make_app().http_app(max_sessions=3)
        confirmed = await opened_from(served, "10.0.0.1")
        unconfirmed = [await opened_from(served, host, confirm=False) for host in ("10.0.0.2", "10.0.0.3")]
        newest = await opened_from(served, "10.0.0.4")  # ends the older unconfirmed one
        return await alive(served, confirmed, *unconfirmed, newest)

    assert within(scenario()) == [True, False, True, True]


def test_a_client_over_its_share_ends_its_own_least_recently_used_session() -> None:
    async def scenario():
        served = make_app().http_app(max_sessions_per_client=2)
        first, second = [await opened_from(served, "10.0.0.1") for _ in range(2)]
        other = await opened_from(served, "10.0.0.2")
        await http(served, "POST", LIST, session_headers(first))  # now second is the least recently used
        third = await opened_from(served, "10.0.0.1")
        return await alive(served, first, second, third, other)

    assert within(scenario()) == [True, False, True, True]


def test_a_client_over_its_share_ends_its_unconfirmed_sessions_first() -> None:
    async def scenario():
        served = make_app().http_app(max_sessions_per_client=2)
        used = await opened_from(served, "10.0.0.1")
        fresh = await opened_from(served, "10.0.0.1", confirm=False)
        newest = await opened_from(served, "10.0.0.1")  # ends fresh, though used is the least recently used
        return await alive(served, used, fresh, newest)

    assert within(scenario()) == [True, False, True]


def test_a_client_whose_sessions_are_all_in_use_is_refused_429() -> None:
    async def scenario():
        served = make_app().http_app(max_sessions_per_client=1)
        session_id = await opened_from(served, "127.0.0.1")
        stream = Call(served, "GET", b"", {**session_headers(session_id), "accept": "text/event-stream"}).start()
        await stream.chunk(0)  # the session's stream is open: the session is in use
        refused = await http(served, "POST", INIT)
        elsewhere = Call(served, "POST", INIT)
        elsewhere.scope["client"] = ("127.0.0.2", 40000)
        await elsewhere.finish()
        stream.disconnect()
        await stream.finish()
        return refused, elsewhere

    refused, elsewhere = within(scenario())
    assert seen(refused) == json_reply(
        429, refusal(-32600, "Too Many Requests: this client's 1 sessions are all in use")
    )
    assert elsewhere.status == 200


def test_callers_and_networks_hold_sessions() -> None:
    from shipcode_mcp.transports.http.sessions import client_of

    clients = [
        client_of(None, ("192.0.2.7", 5000)),
        client_of(None, ("2001:db8:1:2:aaaa::1", 5000)),
        client_of(None, ("2001:db8:1:2:bbbb::9", 6000)),
        client_of(None, ("::ffff:192.0.2.7", 5000)),
        client_of(None, ("/run/mcp.sock", 0)),
        client_of(None, None),
        client_of({"sub": "ada", "iss": "https://auth.example", "jti": "1"}, ("192.0.2.7", 5000)),
        client_of(object(), ("192.0.2.8", 5000)),  # a caller without an identity: its address
    ]
    assert clients == [
        "192.0.2.7",
        "2001:db8:1:2::/64",
        "2001:db8:1:2::/64",
        "192.0.2.7",
        "/run/mcp.sock",
        "",
        b'c["https://auth.example","ada"]',
        "192.0.2.8",
    ]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The sessions' clock, in seconds: a test moves it by hand."""
    from shipcode_mcp.transports.http import sessions

    now = [1000.0]
    monkeypatch.setattr(sessions, "monotonic", lambda: now[0])
    return now


def test_an_idle_session_expires(clock: list[float]) -> None:
    async def scenario():
        served = make_app().http_app(session_idle_seconds=60, max_sessions=1)
        session_id = await opened_from(served, "127.0.0.1")
        clock[0] += 60
        alive = await http(served, "POST", LIST, session_headers(session_id))
        clock[0] += 60.5
        expired = await http(served, "POST", LIST, session_headers(session_id))
        _, other = await opened(served)
        clock[0] += 61
        _, third = await opened(served)  # the full table makes room by ending the idle one
        return alive, expired, other, third

    alive, expired, other, third = within(scenario())
    assert alive.status == 200
    assert seen(expired) == json_reply(404, refusal(-32600, "Session not found"))
    assert other is not None and third is not None and other != third


def test_a_session_never_used_after_initialize_ends_sooner(clock: list[float]) -> None:
    async def scenario():
        served = make_app().http_app(session_idle_seconds=60, unconfirmed_idle_seconds=10)
        confirmed = await opened_from(served, "10.0.0.1")
        unconfirmed = [await opened_from(served, "10.0.0.1", confirm=False) for _ in range(2)]
        clock[0] += 9.5
        early = await alive(served, unconfirmed[0])  # alive after 9.5 s, and now confirmed
        clock[0] += 10.5
        return early + await alive(served, *unconfirmed, confirmed)

    assert within(scenario()) == [True, True, False, True]


def test_what_a_handler_sends_to_other_sessions_goes_to_their_streams() -> None:
    app = make_app()

    @app.tool()
    def grow() -> str:
        """Adds a tool while answering"""
        app.add_tool(lambda: "x", name="grown", description="Grown")
        return "grown"

    grow_call = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grow"}}'

    async def scenario():
        served = app.http_app()
        sessions = []
        for _ in range(2):
            _, session_id = await opened(served)
            await http(served, "POST", INITIALIZED, session_headers(session_id))
            stream = Call(served, "GET", b"", session_headers(session_id)).start()
            while stream.status is None:
                await asyncio.sleep(0)
            sessions.append((session_id, stream))
        (first, first_stream), (second, second_stream) = sessions
        answer = await http(served, "POST", grow_call, session_headers(first))
        changes = [await first_stream.chunk(0), await second_stream.chunk(0)]
        for session_id, _ in sessions:
            await http(served, "DELETE", b"", session_headers(session_id))
        return answer, changes, first

    answer, changes, first = within(scenario())
    assert seen(answer) == json_reply(
        200,
        b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"grown"}]}}\n',
        ("mcp-session-id", first),
    )
    assert changes == [events(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')] * 2


def test_a_client_leaving_a_stream_leaves_its_session_serving(run) -> None:
    app = make_app()

    async def scenario():
        served = app.http_app()
        asking, session_id = await greeting(served)
        await asking.chunk(1)  # the question
        asking.disconnect()
        await asking.finish()
        listing = await http(served, "POST", LIST, session_headers(session_id))
        return asking, listing, session_id

    asking, listing, session_id = within(scenario())
    assert len(asking.chunks) == 2 and asking.ended is False
    assert seen(listing) == json_reply(200, stdio(run, app, INIT, INITIALIZED, LIST)[1], ("mcp-session-id", session_id))


def test_a_cancelled_notification_ends_a_request_without_an_answer() -> None:
    app = make_app()
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}'

    async def scenario():
        served = app.http_app()
        asking, session_id = await greeting(served)
        await asking.chunk(1)  # the question
        cancelled = await http(served, "POST", cancel, session_headers(session_id))
        await asking.finish()
        return asking, cancelled, session_id

    asking, cancelled, session_id = within(scenario())
    assert seen(cancelled) == empty_reply(202, ("mcp-session-id", session_id))
    assert (len(asking.chunks), asking.ended) == (2, True)


def test_a_body_spread_over_lines_is_one_message(run) -> None:
    app = make_app()
    spread = (
        b'{\n  "jsonrpc": "2.0",\n  "id": 4,\n  "method": "tools/call",\n'
        b'  "params": {"name": "echo", "arguments": {"text": "a\\nb"}}\n}\n'
    )
    compact = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\nb"}}}'

    call, session_id = in_session(app, spread)
    expected = stdio(run, app, INIT, compact)[1]
    assert expected == b'{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"a\\nb"}]}}\n'
    assert seen(call) == json_reply(200, expected, ("mcp-session-id", session_id))
