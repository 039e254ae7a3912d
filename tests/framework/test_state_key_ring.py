"""The ``requestState`` key ring: the first key seals, every key opens, anything else is refused.

A ring (``Server(state_key=[new, old])``, or ``SHIPCODE_MCP_STATE_KEY=new,old``) rotates the key without refusing
the rounds in flight: states sealed under ``old`` still open, new ones are sealed under ``new``. A state sealed under
a key no longer in the ring is -32602 ``Invalid requestState``, as any foreign state is. A ring that cannot seal
(no key, a key empty, short, with white space around it, or given twice) is refused when the app is served, with one
line saying which key and why.
"""

from __future__ import annotations

import subprocess

import orjson
import pytest
from support.httpserver import APP
from support.wire import SERVER_COMMAND, StateClock, engine_env, error, request, result

from shipcode_mcp import Context, Server
from shipcode_mcp.asking.state import STATE_KEY_VARIABLE, StateKeyError, StateSeal, state_keys

NEW, OLD, GONE = "new-key-" + "n" * 24, "old-key-" + "o" * 24, "gone-key-" + "g" * 23
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ANSWERS = {"user_name": {"action": "accept", "content": {"name": "Ada"}}}
SHORT_HINT = "(python -c 'import secrets; print(secrets.token_urlsafe(32))' makes one)"


def make_app(ring: object) -> Server:
    app = Server("ring", version="1.0.0", state_key=ring)

    @app.tool()
    async def greet(ctx: Context) -> str:
        """Ask a name, then greet"""
        answer = await ctx.elicit("What is your name?", SCHEMA, key="user_name")
        return f"Hello, {answer['content']['name']}!"

    return app


def first_round(rid: object = 1) -> bytes:
    return request("tools/call", {"name": "greet", "_meta": META}, rid)


def retry(state: str, rid: object) -> bytes:
    params = {"name": "greet", "inputResponses": ANSWERS, "requestState": state, "_meta": META}
    return request("tools/call", params, rid)


def sealed_under(key: str) -> str:
    """A first round's state as an app whose ring begins with ``key`` seals it."""
    return StateSeal(key.encode()).seal("tools/call greet", {"a": {}, "s": None}, None, ["user_name"])


def greeted(rid: object) -> bytes:
    tail = b'"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ring","version":"1.0.0"}}}'
    return result(b'{"content":[{"type":"text","text":"Hello, Ada!"}],' + tail, rid)


def refused(rid: object) -> bytes:
    return error(-32602, "Invalid requestState", rid)


def test_a_state_sealed_under_any_key_of_the_ring_opens(run) -> None:
    catalogue = make_app([NEW, OLD]).catalogue()
    out = run(retry(sealed_under(OLD), "old") + retry(sealed_under(NEW), "new"), catalogue=catalogue)
    assert out == greeted("old") + greeted("new")


def test_a_state_sealed_under_a_key_gone_from_the_ring_is_refused(run) -> None:
    lines = retry(sealed_under(GONE), 1) + retry(sealed_under(OLD), 2) + retry(sealed_under(NEW), 3)
    assert run(lines, catalogue=make_app([NEW, OLD]).catalogue()) == refused(1) + greeted(2) + greeted(3)
    assert run(lines, catalogue=make_app([NEW]).catalogue()) == refused(1) + refused(2) + greeted(3)


def test_the_first_key_of_the_ring_seals(run, monkeypatch: pytest.MonkeyPatch) -> None:
    StateClock(monkeypatch, 1_800_000_000.0)  # the clock stands still: the state is exactly the first key's seal
    state = orjson.loads(run(first_round(), catalogue=make_app([NEW, OLD]).catalogue()))["result"]["requestState"]
    assert (state, state != sealed_under(OLD)) == (sealed_under(NEW), True)
    assert run(retry(state, 2), catalogue=make_app([OLD]).catalogue()) == refused(2)
    assert run(retry(state, 3), catalogue=make_app([NEW]).catalogue()) == greeted(3)


def test_a_callers_state_opens_under_any_key_for_that_caller_only() -> None:
    ring = StateSeal((NEW.encode(), OLD.encode()))
    state = StateSeal(OLD.encode()).seal("r", {"a": {}}, b"ada")
    opened = [ring.open("r", state, b"ada"), ring.open("r", state, b"bob"), ring.open("r", state)]
    assert opened == [(True, {"a": {}}), (False, None), (False, None)]
    assert StateSeal(GONE.encode()).open("r", ring.seal("r", 1, b"ada"), b"ada") == (False, None)


def test_the_ring_is_a_list_or_the_variables_keys_separated_by_commas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STATE_KEY_VARIABLE, f"{NEW},{OLD}")
    given = (state_keys([NEW, OLD.encode()]), state_keys((NEW,)), state_keys(NEW), state_keys(None))
    assert given == ((NEW.encode(), OLD.encode()), (NEW.encode(),), (NEW.encode(),), (NEW.encode(), OLD.encode()))


@pytest.mark.parametrize(
    ("ring", "line"),
    [
        ([], "state_key: the request state key ring has no key"),
        ([NEW, ""], "state_key: request state key 2 of 2 is empty"),
        ("x" * 31, f"state_key: the request state key is too short: 31 bytes, at least 32 {SHORT_HINT}"),
        ([NEW, "é" * 15], f"state_key: request state key 2 of 2 is too short: 30 bytes, at least 32 {SHORT_HINT}"),
        ([NEW, OLD, NEW], "state_key: request state key 3 of 3 is the same as key 1"),
        ([NEW, OLD.encode(), OLD], "state_key: request state key 3 of 3 is the same as key 2"),
        ([" " + NEW], "state_key: the request state key begins or ends with white space"),
        ([NEW, OLD + "\n"], "state_key: request state key 2 of 2 begins or ends with white space"),
    ],
)
def test_a_ring_that_cannot_seal_is_refused_when_the_app_is_served(ring: object, line: str) -> None:
    with pytest.raises(StateKeyError) as refusal:
        make_app(ring).catalogue()
    assert str(refusal.value) == line


@pytest.mark.parametrize(
    ("variable", "line"),
    [
        (f"{NEW},", "request state key 2 of 2 is empty"),
        (f"{NEW}, {OLD}", "request state key 2 of 2 begins or ends with white space"),
        (f"{NEW},short", f"request state key 2 of 2 is too short: 5 bytes, at least 32 {SHORT_HINT}"),
        (f"{OLD},{NEW},{OLD}", "request state key 3 of 3 is the same as key 1"),
    ],
)
def test_the_command_refuses_a_bad_ring_in_the_environment_with_one_line(
    engine_name: str, variable: str, line: str
) -> None:
    served = subprocess.run(
        [*SERVER_COMMAND, APP],
        input=first_round(),
        capture_output=True,
        env={**engine_env(engine_name), STATE_KEY_VARIABLE: variable},
        timeout=60,
        check=False,
    )
    expected = f"shipcode-mcp: error: {STATE_KEY_VARIABLE}: {line}\n".encode()
    assert (served.returncode, served.stdout, served.stderr) == (2, b"", expected)
