"""Security checks of the HTTP endpoint that no other test pins: each one removed alone leaves the rest green.

Host and Origin values that only look local, bearer tokens in other schemes or empty, an endpoint mounted below
a root path, sessions touched by another caller, idle time that each request restarts and that an open stream
or a request in flight holds off, session ids, the end of a session and of the server. Both engines judge the
bodies.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from support.httpwire import (
    POST_HEADERS,
    STREAM,
    Call,
    http,
    json_reply,
    modern_body,
    modern_headers,
    refusal,
    seen,
    within,
)
from test_auth import INVALID_TOKEN, UNAUTHORIZED
from test_auth import make_app as guarded_app

from shipcode_mcp import Context, Server

pytestmark = pytest.mark.usefixtures("served_engine")

INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}'
LIST = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
HOLD = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hold"}}'
HOST_INVALID = json_reply(400, refusal(-32600, "Bad Request: Host header is not a valid host[:port]"))
ORIGIN_REFUSED = json_reply(403, refusal(-32600, "Forbidden: Origin not allowed"))
NOT_FOUND = json_reply(404, refusal(-32600, "Session not found"))
PUBLIC = ("10.0.0.5", 8000)


def make_app(gates: dict | None = None) -> Server:
    """The bearer-token tests' app (``whoami``), with a tool that waits until released."""
    app = guarded_app()

    async def hold(ctx: Context) -> str:
        gates["started"].set()
        try:
            await gates["release"].wait()
        except asyncio.CancelledError:
            gates["cancelled"].set()
            raise
        return "held"

    app.add_tool(hold, description="Waits until released")
    return app


def new_gates() -> dict:
    """The events of ``hold``: it started, it may end, it was cancelled (made on the loop that serves)."""
    return {"started": asyncio.Event(), "release": asyncio.Event(), "cancelled": asyncio.Event()}


def anyone(token: str) -> dict:
    """A verifier that takes every token it is given: what reaches it is the endpoint's to judge."""
    return {"sub": token}


async def anyone_async(token: str) -> dict | None:
    return None if token == "bad" else {"sub": token}


def stdio(run, *lines: bytes) -> list[bytes]:
    """What the stdio engine under test writes for these lines, one answer per item."""
    return run(b"".join(line + b"\n" for line in lines), catalogue=make_app().catalogue()).splitlines(keepends=True)


def session_headers(session_id: str, authorization: str | None = None) -> dict[str, str]:
    headers = {**POST_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    if authorization is not None:
        headers["authorization"] = authorization
    return headers


# -- Host and Origin ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["[::1]evil.example", "[::1].evil.example", "[::1]@evil.example:8000"])
def test_a_host_that_only_begins_like_a_local_address_is_refused(host: str) -> None:
    call = within(http(make_app().http_app(), "POST", INIT, {**POST_HEADERS, "host": host}))
    assert seen(call) == HOST_INVALID


@pytest.mark.parametrize("origin", ["ftp://localhost", "ws://localhost:8000", "chrome-extension://localhost"])
def test_an_origin_of_another_scheme_is_refused(origin: str) -> None:
    local = within(http(make_app().http_app(), "POST", INIT, {**POST_HEADERS, "origin": origin}))
    same_host = {**POST_HEADERS, "host": "localhost:8000", "origin": origin.replace("localhost", "localhost:8000")}
    public = within(http(make_app().http_app(), "POST", INIT, same_host, server=PUBLIC))
    assert (seen(local), seen(public)) == (ORIGIN_REFUSED, ORIGIN_REFUSED)


def test_off_loopback_an_origin_with_no_host_to_match_is_refused() -> None:
    headers = {key: value for key, value in POST_HEADERS.items() if key != "host"}
    call = within(
        http(make_app().http_app(), "POST", INIT, {**headers, "origin": "https://mcp.example"}, server=PUBLIC)
    )
    assert seen(call) == ORIGIN_REFUSED


@pytest.mark.parametrize("origin", ["https://app.example/", "https://app.example/mcp", "ftp://app.example", "https://"])
def test_an_allowed_origin_that_is_not_scheme_and_host_is_refused_at_once(origin: str) -> None:
    message = f"allowed origin {origin!r} is not http(s)://host[:port], http(s)://host:* or *"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make_app().http_app(allowed_origins=[origin])


# -- bearer tokens -----------------------------------------------------------------------------------------------


def whoami(authorization: str | None, verify=anyone, root_path: str = "") -> Call:
    """A call of the tool ``whoami`` with this ``Authorization`` value (None: without one)."""
    headers = modern_headers("tools/call", "whoami")
    if authorization is not None:
        headers["authorization"] = authorization
    body = modern_body("tools/call", {"name": "whoami"})
    return within(http(make_app().http_app(auth=verify), "POST", body, headers, root_path=root_path))


def answered(text: str) -> tuple:
    return json_reply(
        200,
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"%s"}],"resultType":"complete",'
        b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"guarded","version":"1.0.0"}}}}\n' % text.encode(),
    )


@pytest.mark.parametrize("authorization", ["Basic good", "Token good", "good", "Bearer\tgood", "Bearergood"])
def test_a_token_in_another_scheme_is_no_token(authorization: str) -> None:
    assert seen(whoami(authorization)) == UNAUTHORIZED


@pytest.mark.parametrize("authorization", ["Bearer", "Bearer ", "Bearer    "])
def test_an_empty_bearer_token_never_reaches_the_verifier(authorization: str) -> None:
    assert seen(whoami(authorization)) == INVALID_TOKEN


@pytest.mark.parametrize("authorization", ["Bearer good", "bearer good", "BEARER  good", " Bearer good  "])
def test_a_bearer_token_is_read_in_any_case_and_spacing(authorization: str) -> None:
    assert seen(whoami(authorization)) == answered("good")


def test_an_async_verifier_is_awaited_before_the_caller_is_judged() -> None:
    assert (seen(whoami("Bearer bad", anyone_async)), seen(whoami("Bearer ada", anyone_async))) == (
        INVALID_TOKEN,
        answered("ada"),
    )


def test_an_endpoint_mounted_below_a_root_path_asks_for_a_token_too() -> None:
    status, headers, body = UNAUTHORIZED
    challenge = [(name, value.replace("resource/mcp", "resource/api/mcp")) for name, value in headers]
    assert seen(whoami(None, root_path="/api")) == (status, challenge, body)
    assert seen(whoami("Bearer ada", root_path="/api")) == answered("ada")


def test_another_caller_can_neither_use_nor_stream_nor_end_a_session(run) -> None:
    async def scenario() -> list:
        endpoint = make_app().http_app(auth=anyone)
        opened = await http(endpoint, "POST", INIT, {**POST_HEADERS, "authorization": "Bearer ada"})
        session_id = opened.header("mcp-session-id")
        bob, ada = session_headers(session_id, "Bearer bob"), session_headers(session_id, "Bearer ada")
        call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}'
        tried = [
            await http(endpoint, "POST", LIST, bob),
            await http(endpoint, "POST", call, bob),
            await http(endpoint, "GET", b"", bob),
            await http(endpoint, "DELETE", b"", bob),
            await http(endpoint, "POST", LIST, ada),  # the session lives on for its own caller
            await http(endpoint, "DELETE", b"", ada),
        ]
        return [seen(call) for call in tried], session_id

    tried, session_id = within(scenario())
    listed = stdio(run, INIT, LIST)[1]
    assert tried == [
        NOT_FOUND,
        NOT_FOUND,
        NOT_FOUND,
        NOT_FOUND,
        json_reply(200, listed, ("mcp-session-id", session_id)),
        (200, [("content-length", "0")], b""),
    ]


# -- session lifetime and limits -------------------------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The sessions' clock, set by the test: ``clock[0]`` is now."""
    from shipcode_mcp.transports.http import sessions

    now = [1000.0]
    monkeypatch.setattr(sessions, "monotonic", lambda: now[0])
    return now


def test_each_request_restarts_the_idle_time(run, clock: list[float]) -> None:
    async def scenario() -> list:
        endpoint = make_app().http_app(session_idle_seconds=60)
        session_id = (await http(endpoint, "POST", INIT)).header("mcp-session-id")
        answers = []
        for step in (5, 50, 50, 60.5):  # used at once: a session never used ends sooner
            clock[0] += step
            answers.append(seen(await http(endpoint, "POST", LIST, session_headers(session_id))))
        return answers, session_id

    answers, session_id = within(scenario())
    alive = json_reply(200, stdio(run, INIT, LIST)[1], ("mcp-session-id", session_id))
    assert answers == [alive, alive, alive, NOT_FOUND]


def test_an_open_stream_or_a_request_in_flight_holds_off_the_idle_end(run, clock: list[float]) -> None:
    gates: dict = {}

    async def scenario() -> list:
        gates.update(new_gates())
        endpoint = make_app(gates).http_app(session_idle_seconds=60)
        session_id = (await http(endpoint, "POST", INIT)).header("mcp-session-id")
        headers = session_headers(session_id)
        stream = Call(endpoint, "GET", b"", headers).start()
        while stream.status is None:
            await asyncio.sleep(0)
        clock[0] += 1000
        answers = [seen(await http(endpoint, "POST", LIST, headers))]  # the stream is open: not idle
        stream.disconnect()
        await stream.finish()
        holding = Call(endpoint, "POST", HOLD, headers).start()
        await gates["started"].wait()
        clock[0] += 1000
        answers.append(seen(await http(endpoint, "POST", LIST, headers)))  # a request in flight: not idle
        gates["release"].set()
        await holding.finish()
        clock[0] += 60.5
        answers.append(seen(await http(endpoint, "POST", LIST, headers)))  # idle since the request ended
        return answers, session_id

    answers, session_id = within(scenario())
    alive = json_reply(200, stdio(run, INIT, LIST)[1], ("mcp-session-id", session_id))
    assert answers == [alive, alive, NOT_FOUND]


def test_session_ids_are_long_and_unguessable() -> None:
    async def scenario() -> list[str]:
        endpoint = make_app().http_app()
        return [(await http(endpoint, "POST", INIT)).header("mcp-session-id") for _ in range(3)]

    ids = within(scenario())
    assert [bool(re.fullmatch(r"[A-Za-z0-9_-]{32}", session_id)) for session_id in ids] == [True] * 3
    assert len(set(ids)) == 3


def test_ending_a_session_stops_its_work_and_ends_its_requests() -> None:
    gates: dict = {}

    async def scenario() -> tuple:
        gates.update(new_gates())
        endpoint = make_app(gates).http_app()
        session_id = (await http(endpoint, "POST", INIT)).header("mcp-session-id")
        holding = Call(endpoint, "POST", HOLD, session_headers(session_id)).start()
        await gates["started"].wait()
        ended = await http(endpoint, "DELETE", b"", session_headers(session_id))
        await holding.finish()
        return seen(ended), seen(holding), gates["cancelled"].is_set(), session_id

    ended, held, cancelled, session_id = within(scenario())
    assert (ended, held, cancelled) == (
        (200, [("content-length", "0")], b""),
        (200, [*STREAM, ("mcp-session-id", session_id)], b""),
        True,
    )


def test_shutting_down_ends_every_session_and_its_stream() -> None:
    async def scenario() -> tuple:
        endpoint = make_app().http_app()
        session_id = (await http(endpoint, "POST", INIT)).header("mcp-session-id")
        stream = Call(endpoint, "GET", b"", session_headers(session_id)).start()
        while stream.status is None:
            await asyncio.sleep(0)
        messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        said: list = []

        async def receive() -> dict:
            return messages.pop(0)

        async def send(message: dict) -> None:
            said.append(message)

        await endpoint({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
        await stream.finish()
        after = await http(endpoint, "POST", LIST, session_headers(session_id))
        return said, seen(stream), seen(after), session_id

    said, streamed, after, session_id = within(scenario())
    assert said == [{"type": "lifespan.startup.complete"}, {"type": "lifespan.shutdown.complete"}]
    assert (streamed, after) == ((200, [*STREAM, ("mcp-session-id", session_id)], b""), NOT_FOUND)
