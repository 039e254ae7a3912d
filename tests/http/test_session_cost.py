"""A legacy session is cheap until it needs state: its handshake and the calls the fast path answers are
judged by a catalogue such sessions share; its own catalogue, made on first need, knows what its client
declared, and what one client declared is never another's."""

from __future__ import annotations

import pytest
from support.httpwire import POST_HEADERS, Call, empty_reply, events, http, json_reply, seen, within

from shipcode_mcp import Context, Server


def init(capabilities: bytes) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":' + capabilities + b',"clientInfo":{"name":"t","version":"1"}}}'
    )


ASKING = init(b'{"elicitation":{}}')
SILENT = init(b"{}")
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
ECHO = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
GREET = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet"}}'
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture(autouse=True)
def session_engine(engine_module, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions' bodies judged by the engine under test."""
    from shipcode_mcp.transports.http import served

    monkeypatch.setattr(served, "Engine", engine_module.Engine)


def make_app() -> Server:
    app = Server("cheap", version="1.0.0", protocol_versions=["2025-11-25", "2025-06-18"])

    @app.tool()
    def echo(text: str) -> str:
        """Echo"""
        return text

    @app.tool()
    async def greet(ctx: Context) -> str:
        """Asks the client's user a name"""
        answer = await ctx.elicit("What is your name?", SCHEMA)
        return f"Hello, {answer['content']['name']}!"

    return app


def headers(session_id: str) -> dict[str, str]:
    return {**POST_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}


def stdio(run, app: Server, *lines: bytes) -> list[bytes]:
    return run(b"".join(line + b"\n" for line in lines), catalogue=app.catalogue()).splitlines(keepends=True)


def test_a_handshake_a_plain_call_and_delete_need_no_catalogue_of_the_session(run, engine_name: str) -> None:
    app = make_app()

    async def scenario():
        served = app.http_app()
        opened = await http(served, "POST", SILENT)
        session_id = opened.header("mcp-session-id")
        session = served.sessions.sessions[session_id]
        note = await http(served, "POST", INITIALIZED, headers(session_id))
        shaken = session.served
        call = await http(served, "POST", ECHO, headers(session_id))
        called = session.served
        ended = await http(served, "DELETE", b"", headers(session_id))
        return session_id, opened, note, shaken, call, called, ended, served.sessions.sessions

    session_id, opened, note, shaken, call, called, ended, left = within(scenario())
    init_answer, echo_answer = stdio(run, app, SILENT, INITIALIZED, ECHO)
    assert seen(opened) == json_reply(200, init_answer, ("mcp-session-id", session_id))
    assert seen(note) == empty_reply(202, ("mcp-session-id", session_id))
    assert seen(call) == json_reply(200, echo_answer, ("mcp-session-id", session_id))
    assert seen(ended) == empty_reply(200)
    assert shaken is None and left == {}
    # The compiled fast path answers a plain call from its bytes; the pure engine judges it in the session.
    assert (called is None) == (engine_name == "compiled")


def test_what_a_client_declared_is_its_own_session_s(run) -> None:
    app = make_app()

    async def scenario():
        served = app.http_app()
        asking = (await http(served, "POST", ASKING)).header("mcp-session-id")
        silent = (await http(served, "POST", SILENT)).header("mcp-session-id")
        for session_id in (asking, silent):
            await http(served, "POST", INITIALIZED, headers(session_id))
        refused = await http(served, "POST", GREET, headers(silent))
        asked = Call(served, "POST", GREET, headers(asking)).start()
        question = await asked.chunk(0)
        await http(served, "DELETE", b"", headers(asking))
        await asked.finish()
        return silent, refused, question

    silent, refused, question = within(scenario())
    assert seen(refused) == json_reply(200, stdio(run, app, SILENT, INITIALIZED, GREET)[1], ("mcp-session-id", silent))
    assert question == events(
        b'{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"What is your name?",'
        b'"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}\n'
    )
