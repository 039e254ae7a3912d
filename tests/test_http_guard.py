"""Who may call the HTTP endpoint, and in what form: each refusal's exact status, headers and body.

Host and Origin guard against DNS rebinding; bodies are bounded, JSON and parseable; bodies the
line rules refuse (not JSON, a batch) get the stdio bytes with status 400.
"""

from __future__ import annotations

import asyncio

import pytest
from httpwire import POST_HEADERS, Call, http, json_reply, refusal, seen, within

from shipcode_mcp import Server

INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}'
HOST_REFUSED = refusal(-32600, "Misdirected Request: Host not allowed")
ORIGIN_REFUSED = refusal(-32600, "Forbidden: Origin not allowed")


def app() -> Server:
    return Server("guarded", version="1.0.0")


def post(headers: dict, body: bytes = INIT, server=("127.0.0.1", 8000), **options) -> Call:
    return within(http(app().http_app(**options), "POST", body, headers, server=server))


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:9", "[::1]:8000", "LOCALHOST"])
def test_a_loopback_bind_admits_localhost_names(host: str) -> None:
    assert post({**POST_HEADERS, "host": host}).status == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "localhost.evil.example", "[::2]"])
def test_a_loopback_bind_refuses_other_names(host: str) -> None:
    assert seen(post({**POST_HEADERS, "host": host})) == json_reply(421, HOST_REFUSED)


def test_a_missing_host_is_refused_on_loopback_only() -> None:
    headers = {key: value for key, value in POST_HEADERS.items() if key != "host"}
    assert seen(post(headers)) == json_reply(421, HOST_REFUSED)
    assert post(headers, server=("10.0.0.5", 8000)).status == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://localhost:3000", 200),
        ("https://127.0.0.1", 200),
        ("http://evil.example", 403),
        ("http://localhost.evil.example", 403),
        ("null", 403),
        ("file://", 403),
    ],
)
def test_a_loopback_bind_admits_only_local_origins(origin: str, status: int) -> None:
    call = post({**POST_HEADERS, "origin": origin})
    assert call.status == status
    if status == 403:
        assert seen(call) == json_reply(403, ORIGIN_REFUSED)


def test_a_public_bind_admits_any_host_and_same_origin_only() -> None:
    public = ("10.0.0.5", 8000)
    assert post({**POST_HEADERS, "host": "mcp.example:8000"}, server=public).status == 200
    same = {**POST_HEADERS, "host": "mcp.example:8000", "origin": "https://mcp.example:8000"}
    assert post(same, server=public).status == 200
    foreign = {**POST_HEADERS, "host": "mcp.example:8000", "origin": "https://evil.example"}
    assert seen(post(foreign, server=public)) == json_reply(403, ORIGIN_REFUSED)


def test_allowed_hosts_and_origins_replace_the_defaults() -> None:
    options = {"allowed_hosts": ["mcp.example", "10.1.1.1:8080"], "allowed_origins": ["https://app.example"]}
    assert post({**POST_HEADERS, "host": "mcp.example:1234"}, **options).status == 200
    assert post({**POST_HEADERS, "host": "10.1.1.1:8080"}, **options).status == 200
    assert seen(post({**POST_HEADERS, "host": "10.1.1.1:8081"}, **options)) == json_reply(421, HOST_REFUSED)
    assert seen(post({**POST_HEADERS, "host": "localhost"}, **options)) == json_reply(421, HOST_REFUSED)
    good = {**POST_HEADERS, "host": "mcp.example", "origin": "https://app.example"}
    assert post(good, **options).status == 200
    bad = {**POST_HEADERS, "host": "mcp.example", "origin": "http://localhost"}
    assert seen(post(bad, **options)) == json_reply(403, ORIGIN_REFUSED)
    assert post({**POST_HEADERS, "host": "anything"}, allowed_hosts=["*"]).status == 200


def test_an_invalid_allowed_origin_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="allowed origin 'app.example' is not of the form http"):
        app().http_app(allowed_origins=["app.example"])


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/json; charset=latin-1", "application/jsonx"])
def test_a_body_that_is_not_json_by_type_is_415(content_type: str | None) -> None:
    headers = {key: value for key, value in POST_HEADERS.items() if key != "content-type"}
    if content_type is not None:
        headers["content-type"] = content_type
    assert seen(post(headers)) == json_reply(415, refusal(-32600, "Unsupported Media Type: send application/json"))


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "Application/JSON"])
def test_json_content_types_pass(content_type: str) -> None:
    assert post({**POST_HEADERS, "content-type": content_type}).status == 200


@pytest.mark.parametrize("accept", ["text/html", "image/*", "application/json;q=0, text/event-stream;q=0"])
def test_an_accept_admitting_neither_json_nor_streams_is_406(accept: str) -> None:
    assert seen(post({**POST_HEADERS, "accept": accept})) == json_reply(
        406, refusal(-32600, "Not Acceptable: accept application/json or text/event-stream")
    )


@pytest.mark.parametrize("accept", ["*/*", "application/json", "text/event-stream", "application/*;q=0.5"])
def test_accepts_that_pass(accept: str) -> None:
    assert post({**POST_HEADERS, "accept": accept}).status == 200


TOO_LARGE = json_reply(413, refusal(-32600, "Payload Too Large: the limit is 100 bytes"), ("connection", "close"))


def test_a_declared_oversize_body_is_refused_unread() -> None:
    call = Call(
        app().http_app(max_message_bytes=100),
        "POST",
        headers={**POST_HEADERS, "content-length": "101"},
        pieces=[b"x" * 101],
    )
    within(call.finish())
    assert (seen(call), call.received) == (TOO_LARGE, 0)


def test_a_streamed_oversize_body_is_refused_once_it_exceeds() -> None:
    call = Call(app().http_app(max_message_bytes=100), "POST", headers=POST_HEADERS, pieces=[b"x" * 60] * 5)
    within(call.finish())
    assert (seen(call), call.received) == (TOO_LARGE, 2)


def test_a_body_at_the_limit_is_judged() -> None:
    limit = len(INIT) + 10
    served = app().http_app(max_message_bytes=limit)
    at = within(http(served, "POST", INIT + b" " * 10, POST_HEADERS))
    over = within(http(served, "POST", INIT + b" " * 11, POST_HEADERS))
    assert (at.status, over.status) == (200, 413)


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"",
        b"  ",
        b"[]",
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        b"1",
        b'{"jsonrpc":"2.0","id":1.5}',
    ],
)
def test_bodies_the_line_rules_refuse_are_400_with_their_bytes(run, body: bytes) -> None:
    call = post(POST_HEADERS, body)
    expected = run(body + b"\n") or b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'
    assert seen(call) == json_reply(400, expected)


def test_other_paths_are_not_found() -> None:
    call = within(http(app().http_app(), "POST", INIT, POST_HEADERS, path="/other"))
    assert seen(call) == json_reply(404, refusal(-32600, "Not Found"))


def test_a_mounted_app_serves_below_its_root_path() -> None:
    call = within(http(app().http_app(), "POST", INIT, POST_HEADERS, root_path="/api"))
    assert call.status == 200


def test_a_body_cut_short_by_the_client_is_dropped_and_the_server_goes_on() -> None:
    served = app().http_app()

    async def scenario() -> tuple[Call, Call]:
        cut = Call(served, "POST", headers=POST_HEADERS, pieces=[INIT[:20], INIT[20:40]], open_ended=True).start()
        while cut.received < 2:
            await asyncio.sleep(0)
        cut.disconnect()
        await cut.finish()
        return cut, await http(served, "POST", INIT, POST_HEADERS)

    cut, after = within(scenario())
    assert (cut.status, cut.body) == (None, b"")
    assert after.status == 200


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "gzip, identity"])
def test_an_encoded_body_is_415(encoding: str) -> None:
    call = post({**POST_HEADERS, "content-encoding": encoding})
    assert seen(call) == json_reply(415, refusal(-32600, "Unsupported Media Type: send the body unencoded"))


def test_an_identity_encoded_body_is_judged() -> None:
    assert post({**POST_HEADERS, "content-encoding": " Identity"}).status == 200


LATE = json_reply(
    408, refusal(-32600, "Request Timeout: the body did not arrive within 0.05 s"), ("connection", "close")
)


def test_a_body_that_never_completes_is_refused_at_its_deadline_and_the_app_goes_on() -> None:
    served = app().http_app(body_timeout=0.05)

    async def scenario() -> tuple[Call, Call]:
        late = await Call(served, "POST", headers=POST_HEADERS, pieces=[INIT[:20]], open_ended=True).finish()
        return late, await http(served, "POST", INIT, POST_HEADERS)

    late, after = within(scenario())
    assert (seen(late), late.received) == (LATE, 1)
    assert after.status == 200
    assert served.deadlines.reading == {} and served.deadlines.late == set()


def test_the_body_deadline_holds_on_every_event_loop_the_app_serves() -> None:
    # One app served by one event loop, then another (a server restarted in-process, a test runner):
    # the deadlines' timer follows the loop of the body being read.
    served = app().http_app(body_timeout=0.05)

    async def late() -> Call:
        return await Call(served, "POST", headers=POST_HEADERS, pieces=[INIT[:20]], open_ended=True).finish()

    assert within(http(served, "POST", INIT, POST_HEADERS)).status == 200
    assert seen(within(late(), 10)) == LATE
    assert seen(within(late(), 10)) == LATE


def test_header_names_in_any_case_are_the_same_headers() -> None:
    # ASGI servers should lower-case header names; one that does not is understood all the same.
    def call(headers: list[tuple[bytes, bytes]]) -> Call:
        request = Call(app().http_app(), "POST", INIT)
        request.scope["headers"] = headers
        return within(request.finish())

    def shown(done: Call) -> tuple:  # the session id aside, which is new each time
        return done.status, [name for name, _ in done.headers], done.body

    lower = [(name.encode(), value.encode()) for name, value in POST_HEADERS.items()]
    mixed = [(name.title(), value) for name, value in lower]
    assert shown(call(mixed)) == shown(call(lower))
    assert call(mixed).status == 200


async def started_reading(served) -> Call:
    """A POST whose body never completes, once the app has read its first piece."""
    reading = Call(served, "POST", headers=POST_HEADERS, pieces=[INIT[:20]], open_ended=True).start()
    while reading.received < 1:
        await asyncio.sleep(0)
    return reading


def test_a_reading_cancelled_from_outside_stays_cancelled() -> None:
    served = app().http_app(body_timeout=60)

    async def scenario() -> Call:
        reading = await started_reading(served)
        reading.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading.task
        return reading

    reading = within(scenario())
    assert (reading.status, served.deadlines.reading) == (None, {})


def test_a_reading_cancelled_both_from_outside_and_by_its_deadline_stays_cancelled() -> None:
    served = app().http_app(body_timeout=60)

    async def scenario() -> Call:
        reading = await started_reading(served)
        deadlines = served.deadlines
        deadlines.reading = dict.fromkeys(deadlines.reading, 0.0)  # every deadline already passed
        deadlines._sweep()
        reading.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading.task
        return reading

    reading = within(scenario())
    assert (reading.status, served.deadlines.late) == (None, set())


def test_the_body_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="body_timeout must be more than 0 seconds"):
        app().http_app(body_timeout=0)


PLAIN = [(b"host", b"localhost:8000"), (b"accept", b"*/*"), (b"x-trace", b"1"), (b"x-trace", b"2")]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (PLAIN, {b"host": b"localhost:8000", b"accept": b"*/*"}),  # others may repeat: they are not read
        ([], {}),
        ([*PLAIN, (b"Origin", b"http://evil.example")], None),  # a name not lower-case
        ([*PLAIN, (b"accept", b"text/html")], None),  # a name read on every request, repeated
        ([[b"host", b"localhost:8000"]], None),  # not tuples
        ([(b"host", "localhost:8000")], None),  # not bytes
        (tuple(PLAIN), None),  # not a list
    ],
)
def test_plain_headers_are_read_in_one_pass(engine_module, raw, expected) -> None:
    assert engine_module.Engine.plain_headers(raw) == expected
