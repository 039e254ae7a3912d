"""Who may call the HTTP endpoint, and in what form: each refusal's exact status, headers and body.

Host and Origin guard against DNS rebinding; bodies are bounded, JSON and parseable; bodies the
line rules refuse (not JSON, a batch) get the stdio bytes with status 400.
"""

from __future__ import annotations

import asyncio

import pytest
from support.httpwire import POST_HEADERS, Call, http, json_reply, refusal, seen, within
from support.wire import headerscan

from shipcode_mcp import Server

INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}'
HOST_REFUSED = refusal(-32600, "Misdirected Request: Host not allowed")
ORIGIN_REFUSED = refusal(-32600, "Forbidden: Origin not allowed")
HOST_INVALID = refusal(-32600, "Bad Request: Host header is not a valid host[:port]")


def app() -> Server:
    return Server("guarded", version="1.0.0")


def post(headers: dict, body: bytes = INIT, server=("127.0.0.1", 8000), **options) -> Call:
    return within(http(app().http_app(**options), "POST", body, headers, server=server))


def post_to(served, headers: dict, server=("127.0.0.1", 8000), scheme: str = "http") -> Call:
    call = Call(served, "POST", INIT, headers, server=server)
    call.scope["scheme"] = scheme
    return within(call.finish())


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "127.0.0.1:9", "[::1]:8000", "LOCALHOST", "[0:0::1]", "localhost:65535"]
)
def test_a_loopback_bind_admits_localhost_names(host: str) -> None:
    assert post({**POST_HEADERS, "host": host}).status == 200


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "localhost.evil.example", "[::2]", "localhost.", "127.0.0.01"]
)
def test_a_loopback_bind_refuses_other_names(host: str) -> None:
    assert seen(post({**POST_HEADERS, "host": host})) == json_reply(421, HOST_REFUSED)


INVALID_HOSTS = [
    "localhost:@evil.example",
    'localhost:1"x',
    "user@localhost",
    "localhost:0",
    "localhost:65536",
    "localhost:",
    "localhost:+80",
    "localhost:80:80",
    "localhost:1e3",
    "local host",
    "",
    "[::1",
    "[::g]",
    "[fe80::1%25eth0]",
    "localhost/mcp",
    "local\\host",
    "evil.example,localhost",
]


@pytest.mark.parametrize("host", INVALID_HOSTS)
@pytest.mark.parametrize("server", [("127.0.0.1", 8000), ("10.0.0.5", 8000)])
def test_a_host_that_is_not_an_authority_is_400_everywhere(host: str, server: tuple) -> None:
    assert seen(post({**POST_HEADERS, "host": host}, server=server)) == json_reply(400, HOST_INVALID)


def test_a_missing_host_is_refused_on_loopback_only() -> None:
    headers = {key: value for key, value in POST_HEADERS.items() if key != "host"}
    assert seen(post(headers)) == json_reply(421, HOST_REFUSED)
    assert post(headers, server=("10.0.0.5", 8000)).status == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://localhost:3000", 200),
        ("https://127.0.0.1", 200),
        ("http://[::1]:5173", 200),
        ("HTTP://LocalHost:8000", 200),
        ("http://evil.example", 403),
        ("http://localhost.evil.example", 403),
        ("http://localhost:@evil.example", 403),
        ("http://user@localhost", 403),
        ("http://localhost/", 403),
        ("http://localhost:0", 403),
        ("ftp://localhost", 403),
        ("http://localhost http://evil.example", 403),
        ("null", 403),
        ("file://", 403),
    ],
)
def test_a_loopback_bind_admits_only_local_origins(origin: str, status: int) -> None:
    call = post({**POST_HEADERS, "origin": origin})
    assert call.status == status
    if status == 403:
        assert seen(call) == json_reply(403, ORIGIN_REFUSED)


@pytest.mark.parametrize(
    ("scheme", "host", "origin", "status"),
    [
        ("http", "mcp.example:8000", None, 200),
        ("http", "mcp.example:8000", "http://mcp.example:8000", 200),
        ("http", "mcp.example:8000", "https://mcp.example:8000", 403),  # another scheme: another origin
        ("http", "mcp.example", "http://mcp.example:80", 200),
        ("http", "mcp.example", "http://mcp.example:8000", 403),
        ("https", "mcp.example", "https://mcp.example", 200),
        ("https", "mcp.example:443", "https://mcp.example", 200),
        ("https", "mcp.example", "http://mcp.example", 403),
        ("http", "mcp.example:8000", "https://evil.example", 403),
    ],
)
def test_a_public_bind_admits_any_host_and_its_own_origin_only(scheme, host, origin, status) -> None:
    headers = {**POST_HEADERS, "host": host}
    if origin is not None:
        headers["origin"] = origin
    call = post_to(app().http_app(), headers, server=("10.0.0.5", 8000), scheme=scheme)
    assert seen(call) == json_reply(403, ORIGIN_REFUSED) if status == 403 else call.status == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [("https://mcp.example", 200), ("https://mcp.example:443", 200), ("http://mcp.example", 403), (None, 200)],
)
def test_behind_a_proxy_the_public_url_is_the_own_origin(origin: str | None, status: int) -> None:
    headers = {**POST_HEADERS, "host": "10.0.0.5:8000"}  # what the proxy passes on
    if origin is not None:
        headers["origin"] = origin
    served = app().http_app(public_url="https://mcp.example/")
    assert post_to(served, headers, server=("10.0.0.5", 8000)).status == status


@pytest.mark.parametrize(
    ("entries", "scheme", "host", "status"),
    [
        (["mcp.example"], "http", "mcp.example", 200),
        (["mcp.example"], "http", "MCP.example:80", 200),
        (["mcp.example"], "http", "mcp.example:8000", 421),  # no port written: the default port only
        (["mcp.example"], "https", "mcp.example:443", 200),
        (["mcp.example"], "https", "mcp.example:80", 421),
        (["mcp.example:443"], "https", "mcp.example", 200),
        (["mcp.example:443"], "http", "mcp.example", 421),
        (["mcp.example:*"], "http", "mcp.example:1234", 200),
        (["mcp.example:*"], "http", "mcp.example", 200),
        (["mcp.example:*"], "http", "other.example", 421),
        (["10.1.1.1:8080"], "http", "10.1.1.1:8080", 200),
        (["10.1.1.1:8080"], "http", "10.1.1.1:8081", 421),
        (["[::1]:8000"], "http", "[0::1]:8000", 200),
        (["mcp.example"], "http", "localhost", 421),  # the entries replace the localhost defaults
        (["*"], "http", "anything.example:9", 200),
        (["*"], "http", "local host", 400),  # * admits any Host, never one that is not a Host
    ],
)
def test_allowed_hosts_are_exact(entries: list[str], scheme: str, host: str, status: int) -> None:
    call = post_to(app().http_app(allowed_hosts=entries), {**POST_HEADERS, "host": host}, scheme=scheme)
    expected = {400: HOST_INVALID, 421: HOST_REFUSED}.get(status)
    assert seen(call) == json_reply(status, expected) if expected else call.status == 200


@pytest.mark.parametrize(
    ("entries", "origin", "status"),
    [
        (["https://app.example"], "https://app.example", 200),
        (["https://app.example"], "https://app.example:443", 200),
        (["https://app.example"], "HTTPS://App.Example", 200),
        (["https://app.example"], "http://app.example", 403),  # the plain-http origin of the same name
        (["https://app.example"], "https://app.example:8443", 403),
        (["https://app.example"], "http://app.example:443", 403),
        (["https://app.example:443"], "https://app.example", 200),
        (["http://localhost:*"], "http://localhost:5173", 200),
        (["http://localhost:*"], "https://localhost:5173", 403),
        (["http://localhost:*"], "http://localhost", 200),
        (["*"], "https://anything.example:9", 200),
        (["*"], "null", 403),  # * admits any origin, never what is not one
        (["https://app.example"], "http://localhost", 403),  # the entries replace the localhost defaults
    ],
)
def test_allowed_origins_are_exact(entries: list[str], origin: str, status: int) -> None:
    call = post({**POST_HEADERS, "origin": origin}, allowed_origins=entries)
    assert seen(call) == json_reply(403, ORIGIN_REFUSED) if status == 403 else call.status == 200


ORIGIN_FORMS = "http(s)://host[:port], http(s)://host:* or *"
HOST_FORMS = "host, host:port, host:* or *"
SCOPE_FORM = "visible ASCII but space, '\"' and '\\'"
BAD_OPTIONS = [
    ({"allowed_origins": ["app.example"]}, f"allowed origin 'app.example' is not {ORIGIN_FORMS}"),
    ({"allowed_origins": ["https://app.example/"]}, f"allowed origin 'https://app.example/' is not {ORIGIN_FORMS}"),
    ({"allowed_origins": ["ftp://app.example"]}, f"allowed origin 'ftp://app.example' is not {ORIGIN_FORMS}"),
    ({"allowed_origins": ["https://app.example:0"]}, f"allowed origin 'https://app.example:0' is not {ORIGIN_FORMS}"),
    ({"allowed_origins": []}, "allowed origins: the list is empty (it would refuse every request)"),
    ({"allowed_origins": "https://app.example"}, "allowed origins must be a list of strings, not a string"),
    ({"allowed_hosts": ["localhost:@evil.example"]}, f"allowed host 'localhost:@evil.example' is not {HOST_FORMS}"),
    ({"allowed_hosts": ["a b"]}, f"allowed host 'a b' is not {HOST_FORMS}"),
    ({"allowed_hosts": ["localhost:65536"]}, f"allowed host 'localhost:65536' is not {HOST_FORMS}"),
    ({"allowed_hosts": [""]}, f"allowed host '' is not {HOST_FORMS}"),
    ({"allowed_hosts": []}, "allowed hosts: the list is empty (it would refuse every request)"),
    ({"allowed_hosts": [8000]}, f"allowed host 8000 is not {HOST_FORMS}"),
    ({"public_url": "mcp.example"}, "public URL 'mcp.example' is not http(s)://host[:port]"),
    ({"public_url": "https://mcp.example/mcp"}, "public URL 'https://mcp.example/mcp' is not http(s)://host[:port]"),
    ({"body_timeout": float("inf")}, "body_timeout must be a finite number of seconds, more than 0, not inf"),
    ({"body_timeout": float("nan")}, "body_timeout must be a finite number of seconds, more than 0, not nan"),
    ({"body_timeout": -1}, "body_timeout must be a finite number of seconds, more than 0, not -1"),
    ({"body_timeout": 0}, "body_timeout must be a finite number of seconds, more than 0, not 0"),
    ({"body_timeout": "5"}, "body_timeout must be a finite number of seconds, more than 0, not '5'"),
    (
        {"session_idle_seconds": float("inf")},
        "session_idle_seconds must be a finite number of seconds, more than 0, not inf",
    ),
    ({"max_message_bytes": 0}, "max_message_bytes must be a whole number, at least 1, not 0"),
    ({"max_concurrency": 0}, "max_concurrency must be a whole number, at least 1, not 0"),
    ({"workers": 0}, "workers must be a whole number, at least 1, not 0"),
    ({"max_sessions": 1.5}, "max_sessions must be a whole number, at least 1, not 1.5"),
    ({"auth": "s3cret"}, "auth must be a function verify(token), not 's3cret'"),
    ({"auth": len, "scopes": ['no"tes']}, f"scope 'no\"tes' is not a scope token: {SCOPE_FORM}"),
    ({"auth": len, "scopes": ["two words"]}, f"scope 'two words' is not a scope token: {SCOPE_FORM}"),
    ({"path": "mcp"}, "path must start with /"),
]


@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS)
def test_every_bad_option_value_is_a_clear_value_error(options: dict, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        app().http_app(**options)
    assert str(refused.value) == message


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
def test_plain_headers_are_read_in_one_pass(engine_name, raw, expected) -> None:
    assert headerscan(engine_name).plain_headers(raw) == expected


@pytest.fixture
def header_engine(engine_name, monkeypatch: pytest.MonkeyPatch) -> None:
    """The headers read through the header scan of the engine under test (``plain_headers``)."""
    from shipcode_mcp.transports.http import headers

    monkeypatch.setattr(headers, "plain_headers", headerscan(engine_name).plain_headers)


def post_raw(headers: list[tuple[str, str]], **options) -> Call:
    return within(Call(app().http_app(**options), "POST", INIT, headers).finish())


LOCAL = list(POST_HEADERS.items())
ONCE_ONLY = {
    "host": ("Host", "localhost:8000"),
    "origin": ("Origin", "http://localhost:8000"),
    "authorization": ("Authorization", "Bearer good"),
    "mcp-session-id": ("Mcp-Session-Id", "abc"),
    "content-type": ("Content-Type", "application/json"),
    "content-encoding": ("Content-Encoding", "identity"),
    "content-length": ("Content-Length", str(len(INIT))),
}


@pytest.mark.parametrize("name", list(ONCE_ONLY))
@pytest.mark.parametrize("second_name", ["same", "title"])
def test_a_header_read_given_twice_is_400_naming_it(header_engine, name: str, second_name: str) -> None:
    shown, value = ONCE_ONLY[name]
    headers = [(key, given) for key, given in LOCAL if key != name]
    headers += [(name, value), (name if second_name == "same" else name.title(), value)]  # the same value twice
    expected = refusal(-32600, f"Bad Request: {shown} header appears more than once")
    assert seen(post_raw(headers)) == json_reply(400, expected)
    assert seen(post_raw(headers, auth=lambda token: token)) == json_reply(400, expected)  # before the token


def test_headers_not_read_may_repeat(header_engine) -> None:
    assert post_raw([*LOCAL, ("x-trace", "1"), ("x-trace", "2")]).status == 200


@pytest.mark.parametrize(
    ("lines", "status"),
    [(["text/html", "application/json"], 200), (["text/event-stream", "text/html"], 200), (["text/html"] * 2, 406)],
)
def test_accept_lines_are_one_list(header_engine, lines: list[str], status: int) -> None:
    headers = [(key, value) for key, value in LOCAL if key != "accept"] + [("accept", line) for line in lines]
    assert post_raw(headers).status == status


def test_a_repeated_protocol_version_is_a_mismatch_in_either_era(header_engine) -> None:
    for version in ("2025-06-18", "2026-07-28"):
        call = post_raw([*LOCAL, ("mcp-protocol-version", version), ("mcp-protocol-version", version)])
        expected = (
            b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,'
            b'"message":"Header mismatch: MCP-Protocol-Version header appears more than once"}}\n'
        )
        assert seen(call) == json_reply(400, expected), version
