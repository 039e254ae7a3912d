"""The sealed ``requestState`` of 2026-07-28 rounds: only the server's own state, unchanged and unexpired, gets in.

A retry is refused with -32602 ``Invalid requestState`` when its state is past its expiry (or was sealed with a
lifetime already spent), when any character of it changed (the last one of its MAC included), when its MAC is cut
short or empty, when it was sealed for another request, or when what it holds is not what the server seals. Each case
is sent as raw lines to both engines, as POSTs over HTTP on both engines, and to :class:`StateSeal` itself. The clock
is set (:class:`~wire.StateClock`), never waited for: with it frozen, even the first round's answer is exact bytes.
"""

from __future__ import annotations

import string

import orjson
import pytest
from support.httpwire import http, json_reply, modern_headers, seen, within
from support.wire import StateClock, error, request, result

from shipcode_mcp import Context, Server
from shipcode_mcp.asking.state import STATE_KEY_VARIABLE, STATE_LIFETIME, StateSeal, state_keys

KEY = "state-tests-key-of-thirty-two-bytes"
V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
META = {V: "2026-07-28", CAPS: {"elicitation": {}}}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
#: When the first round is sealed: not a whole second, so the expiry's rounding shows.
SEALED_AT = 1_800_000_000.75
#: The last instant its state is valid.
EXPIRY = float(int(SEALED_AT + STATE_LIFETIME))
#: Every character of the state's alphabet (URL-safe base64).
ALPHABET = string.ascii_letters + string.digits + "-_"
SERVER_META = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"state","version":"1.0.0"}}'


def asking(reply: str):
    """A handler that asks the client's user a name, then answers ``reply`` with it."""

    async def handler(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", SCHEMA, key="user_name")
        return reply.format(answer["content"]["name"])

    return handler


def make_app() -> Server:
    app = Server("state", version="1.0.0", state_key=KEY)
    app.add_tool(asking("Hello, {}!"), name="greet", description="Ask a name, then greet")
    app.add_tool(asking("Bye, {}!"), name="wave", description="Ask a name, then wave")
    app.add_prompt(asking("Write to {}"), name="greet", description="A prompt that asks first")

    @app.tool()
    def echo(text: str) -> str:
        """Echo"""
        return text

    return app


def modern(method: str, params: dict, rid: object = 1) -> bytes:
    return request(method, {**params, "_meta": META}, rid)


def retry(state: object, rid: object, name: str = "greet", method: str = "tools/call") -> bytes:
    """The second round of ``method`` on ``name``: the answer ``Ada``, and ``state``."""
    answers = {"user_name": {"action": "accept", "content": {"name": "Ada"}}}
    return modern(method, {"name": name, "inputResponses": answers, "requestState": state}, rid)


COMPLETE = b'"resultType":"complete",' + SERVER_META + b"}"


def greeted(rid: object) -> bytes:
    return result(b'{"content":[{"type":"text","text":"Hello, Ada!"}],' + COMPLETE, rid)


def refused(rid: object) -> bytes:
    return error(-32602, "Invalid requestState", rid)


FIRST = modern("tools/call", {"name": "greet"})


def state_of(answer: bytes) -> str:
    """The ``requestState`` of an ``input_required`` answer (a line, or an HTTP body)."""
    return orjson.loads(answer)["result"]["requestState"]


def sealed_by_the_app(request_key: str, value: object, lifetime: float = STATE_LIFETIME) -> str:
    """A state sealed under the app's key for no caller, asking ``user_name`` as the app does, holding ``value``."""
    return StateSeal(KEY.encode(), lifetime).seal(request_key, value, None, ["user_name"])


def forgeries(state: str) -> list[str]:
    """``state`` with its MAC or payload changed, cut, padded or split otherwise: none is the server's own."""
    payload, mac = state.split(".")
    forged = [payload + "." + mac[:-1] + other for other in ALPHABET if other != mac[-1]]
    forged += [payload[:-1] + other + "." + mac for other in ALPHABET if other != payload[-1]]
    forged += [payload + "." + mac[:cut] for cut in (-1, 40, 12, 11, 1, 0)]  # cut short, down to empty
    forged += [payload + "." + mac + pad for pad in ("=", "==", "A")]  # padded, or one character longer
    forged += [payload + "." + ("B" if mac[0] == "A" else "A") + mac[1:]]  # the first character changed
    forged += [payload + "!." + mac, payload + " ." + mac, payload[:1] + "\n" + payload[1:] + "." + mac]
    forged += ["." + mac, payload + ".", state + ".", state + "." + mac, "." + state, payload + mac, ""]
    standard = state.replace("-", "+").replace("_", "/")  # the same bytes in the standard alphabet
    return forged + [standard] if standard != state else forged


# -- over stdio, both engines ---------------------------------------------------------------------------------------


def test_a_state_is_accepted_until_its_expiry_and_refused_after(run, monkeypatch: pytest.MonkeyPatch) -> None:
    catalogue = make_app().catalogue()
    clock = StateClock(monkeypatch, SEALED_AT)
    state = state_of(run(FIRST, catalogue=catalogue))
    out = []
    moments = (SEALED_AT, EXPIRY - 0.5, EXPIRY, EXPIRY + 0.25, EXPIRY + 1, SEALED_AT + 2 * STATE_LIFETIME)
    for rid, now in enumerate(moments):
        clock.now = now
        out.append(run(retry(state, rid), catalogue=catalogue))
    assert out == [greeted(0), greeted(1), greeted(2), refused(3), refused(4), refused(5)]


def test_a_state_sealed_with_a_spent_lifetime_is_refused(run) -> None:
    spent = sealed_by_the_app("tools/call greet", {"a": {}, "s": None}, lifetime=-1)
    fresh = sealed_by_the_app("tools/call greet", {"a": {}, "s": None})
    out = run(retry(spent, 1) + retry(fresh, 2), catalogue=make_app().catalogue())
    assert out == refused(1) + greeted(2)


def test_a_state_changed_anywhere_is_refused(run) -> None:
    catalogue = make_app().catalogue()
    state = state_of(run(FIRST, catalogue=catalogue))
    forged = forgeries(state)
    out = run(b"".join(retry(text, rid) for rid, text in enumerate(forged)) + retry(state, "own"), catalogue=catalogue)
    assert out == b"".join(refused(rid) for rid in range(len(forged))) + greeted("own")


def test_a_state_is_bound_to_its_method_and_its_target(run) -> None:
    catalogue = make_app().catalogue()
    state = state_of(run(FIRST, catalogue=catalogue))
    prompt_state = state_of(run(modern("prompts/get", {"name": "greet"}), catalogue=catalogue))
    out = run(
        retry(state, 1, name="wave")
        + retry(state, 2, method="prompts/get")
        + retry(prompt_state, 3)
        + retry(prompt_state, 4, method="prompts/get")
        + retry(state, 5),
        catalogue=catalogue,
    )
    written = b'{"description":"A prompt that asks first","messages":[{"role":"user","content":{"type":"text",'
    assert out == (
        refused(1) + refused(2) + refused(3) + result(written + b'"text":"Write to Ada"}}],' + COMPLETE, 4) + greeted(5)
    )


@pytest.mark.parametrize("value", [5, None, [], "a", {"s": 1}, {"a": []}, {"a": None, "s": None}])
def test_a_sealed_value_of_another_shape_is_refused(run, value: object) -> None:
    """Only the shape the server seals (``{"a": {...}, "s": ...}``) is opened, whatever the key signed."""
    own = sealed_by_the_app("tools/call greet", {"a": {}, "s": None})  # sealed as the app seals: accepted
    lines = retry(sealed_by_the_app("tools/call greet", value), 1) + retry(own, 2)
    assert run(lines, catalogue=make_app().catalogue()) == refused(1) + greeted(2)


@pytest.mark.parametrize("state", ["a.b.c", "a..b", "..", ".", "", "junk", 5, None, [], {}])
def test_a_malformed_state_is_refused_on_any_tool(run, state: object) -> None:
    """Even a tool that asks nothing (and the compiled engine's fast path) checks the state it is sent."""
    line = modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "requestState": state})
    assert run(line, catalogue=make_app().catalogue()) == refused(1)


# -- over HTTP, both engines ----------------------------------------------------------------------------------------


def test_over_http_the_state_is_checked_as_over_stdio(run, served_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    clock = StateClock(monkeypatch, SEALED_AT)
    first_line = run(FIRST, catalogue=app.catalogue())
    state = state_of(first_line)
    payload, mac = state.split(".")
    spent = sealed_by_the_app("tools/call greet", {"a": {}, "s": None}, lifetime=-1)
    changed = payload + "." + mac[:-1] + ("A" if mac[-1] != "A" else "B")
    cases = [
        # (clock, state, the answer)
        (SEALED_AT, None, json_reply(200, first_line)),
        (EXPIRY, state, json_reply(200, greeted(1))),
        (EXPIRY + 0.25, state, json_reply(400, refused(1))),
        (SEALED_AT, spent, json_reply(400, refused(1))),
        (SEALED_AT, changed, json_reply(400, refused(1))),
        (SEALED_AT, payload + "." + mac[:-1], json_reply(400, refused(1))),
        (SEALED_AT, payload + "." + mac[:8], json_reply(400, refused(1))),
        (SEALED_AT, payload + ".", json_reply(400, refused(1))),
        (SEALED_AT, state, json_reply(200, greeted(1))),
    ]

    async def scenario() -> list:
        endpoint = app.http_app()
        calls = []
        for now, text, _ in cases:
            clock.now = now
            body = FIRST if text is None else retry(text, 1)
            calls.append(seen(await http(endpoint, "POST", body[:-1], modern_headers("tools/call", "greet"))))
        return calls

    assert within(scenario()) == [answer for _, _, answer in cases]


# -- the seal itself ------------------------------------------------------------------------------------------------


def test_the_seal_opens_what_it_sealed_until_its_expiry(monkeypatch: pytest.MonkeyPatch) -> None:
    seal = StateSeal(b"k")
    clock = StateClock(monkeypatch, SEALED_AT)
    text = seal.seal("tools/call x", {"a": {"q": [1, "é"]}, "s": 2.5})
    opened = []
    for now in (SEALED_AT - 3600, SEALED_AT, EXPIRY - 0.5, EXPIRY, EXPIRY + 0.25, EXPIRY + 1, EXPIRY + 3600):
        clock.now = now
        opened.append(seal.open("tools/call x", text))
    valid = (True, {"a": {"q": [1, "é"]}, "s": 2.5})
    assert opened == [valid, valid, valid, valid, (False, None), (False, None), (False, None)]


def test_the_lifetime_is_the_seals_own(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = StateClock(monkeypatch, 1000.0)
    text = StateSeal(b"k", lifetime=10).seal("r", 1)
    opened = []
    for now in (1010.0, 1010.5):
        clock.now = now
        opened.append(StateSeal(b"k").open("r", text))
    assert opened == [(True, 1), (False, None)]
    clock.now = 1000.0
    assert StateSeal(b"k", lifetime=-1).open("r", StateSeal(b"k", lifetime=-1).seal("r", 1)) == (False, None)


def test_the_seal_refuses_every_change_another_key_and_another_request() -> None:
    seal = StateSeal(b"k")
    text = seal.seal("tools/call x", {"a": {}})
    assert seal.open("tools/call x", text) == (True, {"a": {}})
    refusals = [seal.open("tools/call x", forged) for forged in forgeries(text)]
    assert refusals == [(False, None)] * len(refusals)
    assert StateSeal(b"k2").open("tools/call x", text) == (False, None)
    assert seal.open("tools/call y", text) == (False, None)
    assert seal.open("prompts/get x", text) == (False, None)


def test_the_seal_reads_only_its_own_alphabet(monkeypatch: pytest.MonkeyPatch) -> None:
    StateClock(monkeypatch, SEALED_AT)
    seal = StateSeal(b"k")
    texts = [seal.seal("r", number) for number in range(20)]
    spelled = [text for text in texts if "-" in text or "_" in text]
    assert spelled  # some states use the two characters where the alphabets differ
    for text in spelled:
        standard = text.replace("-", "+").replace("_", "/")
        assert (seal.open("r", text)[0], seal.open("r", standard)) == (True, (False, None))


@pytest.mark.parametrize("text", [5, None, b"a.b", ["a.b"], {"a": "b"}])
def test_the_seal_refuses_what_is_not_text(text: object) -> None:
    assert StateSeal(b"k").open("r", text) == (False, None)


def test_the_key_is_the_apps_else_the_environments_else_random(monkeypatch: pytest.MonkeyPatch) -> None:
    app, env = "a" * 32, "from-env-" + "e" * 23
    monkeypatch.setenv(STATE_KEY_VARIABLE, env)
    ring = (state_keys(app), state_keys(b"\x00" + app.encode()), state_keys(None))
    assert ring == ((app.encode(),), (b"\x00" + app.encode(),), (env.encode(),))
    for empty in ("", b""):
        with pytest.raises(ValueError, match="^state_key: the request state key is empty$"):
            state_keys(empty)
    monkeypatch.setenv(STATE_KEY_VARIABLE, "")
    (first,), (second,) = state_keys(None), state_keys(None)
    assert (len(first), len(second), first != second) == (32, 32, True)


def test_an_empty_state_key_is_refused_when_the_app_is_served() -> None:
    with pytest.raises(ValueError, match="^state_key: the request state key is empty$"):
        Server("state", state_key="").catalogue()
