"""Bearer tokens over HTTP: 401 with where to get one, the protected resource metadata, ``ctx.auth``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from support.httpserver import HttpServer
from support.httpwire import META, POST_HEADERS, http, json_reply, modern_body, modern_headers, refusal, seen, within

from shipcode_mcp import Context, Server, _log
from shipcode_mcp.context import caller_identity

TOKENS = {"good": {"sub": "ada"}, "other": {"sub": "bob"}}
INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}'


def make_app() -> Server:
    app = Server("guarded", version="1.0.0")

    @app.tool()
    def whoami(ctx: Context) -> str:
        """Who is calling"""
        return ctx.auth["sub"]

    @app.tool()
    async def whoami_async(ctx: Context) -> str:
        """Who is calling, asked from a task"""
        return ctx.auth["sub"]

    @app.tool(blocking=True)
    def whoami_thread(ctx: Context) -> str:
        """Who is calling, asked from a worker thread"""
        return ctx.auth["sub"]

    return app


def verify(token: str):
    return TOKENS.get(token)


async def verify_async(token: str):
    return TOKENS.get(token)


METADATA_URL = "http://localhost:8000/.well-known/oauth-protected-resource/mcp"


def unauthorized(challenge: str) -> tuple:
    return json_reply(
        401, refusal(-32600, "Unauthorized: a valid bearer token is required"), ("www-authenticate", challenge)
    )


#: No bearer token sent: where to get one, and nothing more (RFC 6750 section 3.1).
UNAUTHORIZED = unauthorized(f'Bearer resource_metadata="{METADATA_URL}"')
#: A bearer token sent and refused.
INVALID_TOKEN = unauthorized(f'Bearer resource_metadata="{METADATA_URL}", error="invalid_token"')


def refused(served, authorization: str | None, host: str = "localhost:8000"):
    headers = {**POST_HEADERS, "host": host}
    if authorization is not None:
        headers["authorization"] = authorization
    return seen(within(http(served, "POST", INIT, headers)))


def test_no_bearer_token_is_401_with_the_metadata_url() -> None:
    served = make_app().http_app(auth=verify)
    for authorization in (None, "Basic Z29vZA==", "good"):
        assert refused(served, authorization) == UNAUTHORIZED, authorization


def test_a_refused_bearer_token_is_401_invalid_token() -> None:
    served = make_app().http_app(auth=verify)
    for authorization in ("Bearer bad", "bearer  bad ", "Bearer ", "Bearer other-than-good"):
        assert refused(served, authorization) == INVALID_TOKEN, authorization


def raising(token: str):
    raise ValueError(f"cannot decode {token}")


async def raising_async(token: str):
    raise ValueError(f"cannot decode {token}")


def test_a_verify_that_raises_refuses_with_401_and_logs_at_debug_only(capsys: pytest.CaptureFixture) -> None:
    for check in (raising, raising_async):
        served = make_app().http_app(auth=check)
        assert refused(served, "Bearer x.y.z") == INVALID_TOKEN
        assert capsys.readouterr() == ("", "")
        _log.set_level("debug")
        try:
            assert refused(served, "Bearer x\ny") == INVALID_TOKEN
        finally:
            _log.set_level(_log.DEFAULT_LEVEL)
        logged = "shipcode-mcp: debug: bearer token refused: verify raised ValueError('cannot decode x\\ny')\n"
        assert capsys.readouterr() == ("", logged)


def test_the_challenge_names_the_scopes() -> None:
    served = make_app().http_app(auth=verify, scopes=["notes", "files:read"])
    scoped = f'Bearer resource_metadata="{METADATA_URL}", scope="notes files:read"'
    assert refused(served, None) == unauthorized(scoped)
    assert refused(served, "Bearer bad") == unauthorized(scoped + ', error="invalid_token"')


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("LOCALHOST:8000", "http://localhost:8000"),
        ("[0:0::1]:8000", "http://[::1]:8000"),
        ("127.0.0.1:80", "http://127.0.0.1"),
        ("localhost:08000", "http://localhost:8000"),
    ],
)
def test_urls_are_written_from_the_validated_host(host: str, url: str) -> None:
    served = make_app().http_app(auth=verify)
    challenge = f'Bearer resource_metadata="{url}/.well-known/oauth-protected-resource/mcp"'
    assert refused(served, None, host) == unauthorized(challenge)
    call = within(http(served, "GET", b"", {"host": host}, path="/.well-known/oauth-protected-resource"))
    assert orjson.loads(call.body)["resource"] == f"{url}/mcp"


@pytest.mark.parametrize("host", ['localhost:1", error="invalid_token', "localhost:@evil.example", 'localhost:1"x'])
def test_a_host_that_is_not_one_is_400_before_any_url_is_written(host: str) -> None:
    served = make_app().http_app(auth=verify)
    invalid = json_reply(400, refusal(-32600, "Bad Request: Host header is not a valid host[:port]"))
    assert refused(served, None, host) == invalid
    metadata = within(http(served, "GET", b"", {"host": host}, path="/.well-known/oauth-protected-resource"))
    assert seen(metadata) == invalid


def test_the_public_url_is_the_base_of_every_url() -> None:
    served = make_app().http_app(auth=verify, public_url="https://mcp.example:8443", allowed_hosts=["*"])
    challenge = 'Bearer resource_metadata="https://mcp.example:8443/.well-known/oauth-protected-resource/mcp"'
    assert refused(served, None, "10.0.0.5:8000") == unauthorized(challenge)
    call = within(http(served, "GET", b"", {"host": "10.0.0.5:8000"}, path="/.well-known/oauth-protected-resource"))
    assert orjson.loads(call.body)["resource"] == "https://mcp.example:8443/mcp"


def test_without_a_host_off_loopback_urls_name_the_address() -> None:
    served = make_app().http_app(auth=verify)
    call = within(
        http(served, "POST", INIT, {k: v for k, v in POST_HEADERS.items() if k != "host"}, server=("::2", 81))
    )
    assert seen(call) == unauthorized(
        'Bearer resource_metadata="http://[::2]:81/.well-known/oauth-protected-resource/mcp"'
    )


def test_the_protected_resource_metadata() -> None:
    served = make_app().http_app(auth=verify, authorization_servers=["https://auth.example"], scopes=["notes"])
    document = (
        b'{"resource":"http://localhost:8000/mcp","authorization_servers":["https://auth.example"],'
        b'"bearer_methods_supported":["header"],"scopes_supported":["notes"]}'
    )
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        call = within(http(served, "GET", b"", {"host": "localhost:8000"}, path=path))
        assert seen(call) == json_reply(200, document), path
    other = within(http(served, "GET", b"", {"host": "localhost:8000"}, path="/.well-known/oauth-protected-resourcex"))
    assert other.status == 404
    named = make_app().http_app(auth=verify, resource="https://mcp.example/mcp")
    call = within(http(named, "GET", b"", {"host": "localhost"}, path="/.well-known/oauth-protected-resource"))
    assert (
        call.body
        == b'{"resource":"https://mcp.example/mcp","authorization_servers":[],"bearer_methods_supported":["header"]}'
    )


def test_handlers_see_the_caller_in_every_mode() -> None:
    for check in (verify, verify_async):
        served = make_app().http_app(auth=check)
        for tool in ("whoami", "whoami_async", "whoami_thread"):
            body = modern_body("tools/call", {"name": tool}, rid=4)
            headers = {**modern_headers("tools/call", tool), "authorization": "Bearer good"}
            call = within(http(served, "POST", body, headers))
            assert (call.status, b'"text":"ada"' in call.body) == (200, True), (check, tool)


def test_a_session_belongs_to_the_caller_that_opened_it() -> None:
    async def scenario():
        served = make_app().http_app(auth=verify)
        opened = await http(served, "POST", INIT, {**POST_HEADERS, "authorization": "Bearer good"})
        session = opened.header("mcp-session-id")
        listing = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
        headers = {**POST_HEADERS, "mcp-session-id": session}
        own = await http(served, "POST", listing, {**headers, "authorization": "Bearer good"})
        other = await http(served, "POST", listing, {**headers, "authorization": "Bearer other"})
        return own, other

    own, other = within(scenario())
    assert own.status == 200
    assert seen(other) == json_reply(404, refusal(-32600, "Session not found"))


# -- a request state belongs to its caller ---------------------------------------------------------------

BEARER_APP = str(Path(__file__).parents[1] / "apps" / "bearer.py")
ELICITING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
GREETED = (
    b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}],"resultType":"complete",'
    b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bearer","version":"1.0.0"}}}}\n'
)
REFUSED_STATE = b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid requestState"}}\n'


def test_a_request_state_is_refused_from_another_caller(engine_name: str) -> None:
    server = HttpServer(engine_name, app=BEARER_APP, factory="bearer:served")

    def greet(token: str, params: dict, rid: int) -> tuple[int, bytes]:
        body = modern_body("tools/call", {"name": "greet", **params}, rid=rid, meta=ELICITING)
        status, _, answer = server.post(
            body, {**modern_headers("tools/call", "greet"), "authorization": f"Bearer {token}"}
        )
        return status, answer

    def retry(state: str, token: str) -> tuple[int, bytes]:
        answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        return greet(token, {"inputResponses": answer, "requestState": state}, 2)

    try:
        states = {token: orjson.loads(greet(token, {}, 1)[1])["result"]["requestState"] for token in ("ada-1", "carol")}
        answers = [
            retry(states["ada-1"], "ada-2"),  # the same subject with a new token
            retry(states["ada-1"], "bob"),
            retry(states["ada-1"], "carol"),
            retry(states["carol"], "carol"),
            retry(states["carol"], "ada-1"),
        ]
    finally:
        server.stop()  # uvicorn's own process, ended by the signal
    assert answers == [
        (200, GREETED),
        (400, REFUSED_STATE),
        (400, REFUSED_STATE),
        (200, GREETED),
        (400, REFUSED_STATE),
    ]


def test_a_caller_is_known_by_its_subject() -> None:
    @dataclass
    class Account:
        name: str
        roles: list[str]

    callers = [
        "ada",
        {"sub": "ada", "exp": 1, "jti": "x"},
        {"iss": "https://auth.example", "sub": "ada", "exp": 2},
        {"iss": 7, "sub": "ada"},
        {"user": "ada", "roles": ["admin"]},
        {"sub": 7},
        Account("ada", ["admin"]),
        [1, "a"],
        object(),
    ]
    assert [caller_identity(caller) for caller in callers] == [
        b"sada",
        b'c[null,"ada"]',
        b'c["https://auth.example","ada"]',
        b'c[null,"ada"]',
        b'j{"roles":["admin"],"user":"ada"}',
        b'j{"sub":7}',
        b'j{"name":"ada","roles":["admin"]}',
        b'j[1,"a"]',
        None,
    ]


def test_with_auth_each_caller_holds_its_own_share_of_sessions() -> None:
    async def scenario():
        served = make_app().http_app(auth=verify, max_sessions_per_client=1)

        async def open_as(token: str) -> str:
            return (await http(served, "POST", INIT, {**POST_HEADERS, "authorization": token})).header("mcp-session-id")

        ada_first = await open_as("Bearer good")
        bob = await open_as("Bearer other")  # the same address, another caller
        ada_second = await open_as("Bearer good")  # ends ada's first (idle), not bob's
        listing = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
        statuses = []
        for token, session in (("Bearer good", ada_first), ("Bearer other", bob), ("Bearer good", ada_second)):
            headers = {**POST_HEADERS, "mcp-session-id": session, "authorization": token}
            statuses.append((await http(served, "POST", listing, headers)).status)
        return statuses

    assert within(scenario()) == [404, 200, 200]


def test_a_caller_without_an_identity_cannot_ask() -> None:
    app = Server("asking", version="1.0.0")

    @app.tool()
    async def greet(ctx: Context) -> str:
        """Ask a name"""
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return answer["content"]["name"]

    served = app.http_app(auth=lambda token: object())
    body = modern_body("tools/call", {"name": "greet"}, meta=ELICITING)
    headers = {**modern_headers("tools/call", "greet"), "authorization": "Bearer any"}
    call = within(http(served, "POST", body, headers))
    assert seen(call) == json_reply(
        200, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}\n'
    )
