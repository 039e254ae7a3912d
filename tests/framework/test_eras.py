"""Protocol eras on both engines: 2026-07-28 requests beside the legacy handshake, byte for byte.

An app speaks every version by default. A request whose ``params._meta`` names a protocol
version is judged by 2026-07-28's rules (``_meta`` checks, removed methods, ``resultType``,
caching hints, server identity, ``input_required`` rounds); any other by the legacy rules.
Sealed request states carry an expiry, so an ``input_required`` answer is compared whole
with its ``requestState`` cut out, and the state itself is opened with the app's key.
"""

from __future__ import annotations

import base64
import time

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.serverproc import ServerProcess
from support.wire import StateClock, default_catalogue, engine, error, request, result

from shipcode_mcp import Context, InputRequired, Server, elicitation_request, roots_request, sampling_request
from shipcode_mcp.asking.state import MAX_STATE_CHARS, StateSeal

KEY = "era-tests-key-of-thirty-two-bytes"
V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LOG = "io.modelcontextprotocol/logLevel"
ALL_CAPS = {"elicitation": {"url": {}}, "sampling": {}, "roots": {}}
META = {V: "2026-07-28", CAPS: ALL_CAPS}
SERVER_META = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"eras","version":"2.0.0"}}'
COMPLETE = b'"resultType":"complete",' + SERVER_META + b"}"
CACHED = b'"resultType":"complete","ttlMs":0,"cacheScope":"private",' + SERVER_META + b"}"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
NAME = elicitation_request("What is your name?", SCHEMA)
CITY = elicitation_request("Which city?", {"type": "object", "properties": {"city": {"type": "string"}}})


def make_app(**options) -> Server:
    app = Server("eras", version="2.0.0", state_key=KEY, **options)

    @app.tool()
    def echo(text: str) -> str:
        """Echo"""
        return text

    @app.tool()
    def add(a: float, b: float) -> float:
        """Add"""
        return a + b

    @app.tool()
    async def greet(ctx: Context) -> str:
        """Ask a name, then greet"""
        answer = await ctx.elicit("What is your name?", SCHEMA, key="user_name")
        return f"Hello, {answer['content']['name']}!"

    @app.tool()
    async def trip(ctx: Context) -> str:
        """Two questions in two rounds (default keys)"""
        name = await ctx.elicit("What is your name?", SCHEMA)
        city = await ctx.elicit("Which city?", CITY["params"]["requestedSchema"])
        return f"{name['content']['name']} goes to {city['content']['city']}"

    @app.tool()
    def both(ctx: Context) -> str:
        """Two questions in one round"""
        answers = ctx.input_responses
        if "name" not in answers or "roots" not in answers:
            raise InputRequired({"name": NAME, "roots": roots_request()}, state={"asked": 2})
        return f"{answers['name']['content']['name']} with {len(answers['roots']['roots'])} roots, {ctx.request_state}"

    @app.tool()
    def steps(ctx: Context) -> str:
        """Rounds counted in the request state"""
        step = 0 if ctx.request_state is None else ctx.request_state["step"]
        if step < 2:
            raise InputRequired({f"q{step}": NAME}, state={"step": step + 1})
        return f"done after {step} rounds, last {sorted(ctx.input_responses)}"

    @app.tool()
    async def think(ctx: Context) -> str:
        """Ask the client's model"""
        answer = await ctx.sample("2+2?", max_tokens=5, key="math")
        return answer["content"]["text"]

    @app.tool()
    def chatty(ctx: Context) -> str:
        """Logs at two levels"""
        ctx.debug("fine detail")
        ctx.warning("watch out")
        return "said"

    @app.prompt()
    async def personal(ctx: Context) -> str:
        """A prompt that asks first"""
        answer = await ctx.elicit("What is your name?", SCHEMA, key="who")
        return f"Write to {answer['content']['name']}"

    @app.resource("memo://{topic}")
    async def memo(topic: str, ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", SCHEMA, key="who")
        return f"{topic} for {answer['content']['name']}"

    @app.resource("file:///plain.txt")
    def plain() -> str:
        return "plain"

    return app


def modern(method: str, params: dict | None = None, rid: object = 1, meta: dict | None = None) -> bytes:
    return request(method, {**(params or {}), "_meta": META if meta is None else meta}, rid)


def body_of(line: bytes) -> dict:
    return orjson.loads(line)["result"]


def accepted(**content: object) -> dict:
    return {"action": "accept", "content": content}


def split_state(line: bytes) -> tuple[bytes, str]:
    """An input_required answer without its requestState value, and the value."""
    head, rest = line.split(b'"requestState":"', 1)
    state, tail = rest.split(b'"', 1)
    return head + b'"requestState":"STATE"' + tail, state.decode()


def opened(request_key: str, state: str) -> object:
    valid, value = StateSeal(KEY.encode()).open(request_key, state)
    assert valid
    return value


def input_required(requests: bytes, rid: object = 1) -> bytes:
    return result(
        b'{"resultType":"input_required","inputRequests":'
        + requests
        + b',"requestState":"STATE",'
        + SERVER_META
        + b"}",
        rid,
    )


NAME_BYTES = orjson.dumps(NAME)


# -- discovery and the envelope of a modern request ----------------------------------------------


def test_discover_lists_versions_capabilities_and_hints(run) -> None:
    out = run(modern("server/discover"), catalogue=make_app(instructions="Be kind").catalogue())
    assert out == result(
        b'{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],'
        b'"capabilities":{"tools":{},"resources":{},"prompts":{},"logging":{}},"instructions":"Be kind",' + CACHED
    )


def test_caching_hints_and_server_identity_are_the_apps(run) -> None:
    app = make_app(ttl_ms=60000, cache_scope="public", server_info_meta=False)
    out = run(
        modern("resources/list", rid=1) + modern("resources/read", {"uri": "file:///plain.txt"}, rid=2),
        catalogue=app.catalogue(),
    )
    assert out == result(
        b'{"resources":[{"uri":"file:///plain.txt","name":"plain","mimeType":"text/plain"}],'
        b'"resultType":"complete","ttlMs":60000,"cacheScope":"public"}',
        1,
    ) + result(
        b'{"contents":[{"uri":"file:///plain.txt","mimeType":"text/plain","text":"plain"}],'
        b'"resultType":"complete","ttlMs":60000,"cacheScope":"public"}',
        2,
    )


def test_every_list_is_cacheable_and_a_call_is_not(run) -> None:
    out = run(
        modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=1)
        + modern("resources/templates/list", rid=2)
        + modern("prompts/list", rid=3),
        catalogue=make_app().catalogue(),
    )
    assert out == (
        result(b'{"content":[{"type":"text","text":"hi"}],' + COMPLETE, 1)
        + result(
            b'{"resourceTemplates":[{"uriTemplate":"memo://{topic}","name":"memo","mimeType":"text/plain"}],' + CACHED,
            2,
        )
        + result(b'{"prompts":[{"name":"personal","description":"A prompt that asks first"}],' + CACHED, 3)
    )


UNSUPPORTED = (
    b'{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":'
    b'{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"%s"}}}\n'
)


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({V: "1900-01-01", CAPS: {}}, UNSUPPORTED % b"1900-01-01"),
        ({V: "2025-06-18", CAPS: {}}, UNSUPPORTED % b"2025-06-18"),
        ({V: 20260728, CAPS: {}}, error(-32602, f"Missing {V} in _meta")),
        ({V: "2026-07-28"}, error(-32602, f"Missing {CAPS} in _meta")),
        ({V: "2026-07-28", CAPS: []}, error(-32602, f"Missing {CAPS} in _meta")),
        ({V: "2026-07-28", CAPS: {}, LOG: "loud"}, error(-32602, f"Invalid {LOG} in _meta")),
    ],
)
def test_a_request_with_bad_meta_is_refused(run, meta: dict, expected: bytes) -> None:
    line = modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, meta=meta)
    assert run(line, catalogue=make_app().catalogue()) == expected


@pytest.mark.parametrize("method", ["server/discover", "subscriptions/listen"])
def test_methods_of_2026_alone_are_judged_by_it_whatever_their_meta(run, method: str) -> None:
    catalogue = make_app().catalogue()
    out = run(
        request(method, rid=1) + request(method, {"_meta": {CAPS: {}}}, rid=2) + request(method, {"_meta": []}, rid=3),
        catalogue=catalogue,
    )
    assert out == (
        error(-32602, "Missing _meta", 1)
        + error(-32602, f"Missing {V} in _meta", 2)
        + error(-32602, "Missing _meta", 3)
    )


def test_an_app_that_speaks_only_2026_judges_every_request_by_it(run) -> None:
    catalogue = make_app(protocol_versions=["2026-07-28"]).catalogue()
    out = run(
        request("tools/list", rid=1)
        + request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}, rid=2)
        + modern("initialize", rid=3),
        catalogue=catalogue,
    )
    assert out == (
        error(-32602, "Missing _meta", 1) + error(-32602, "Missing _meta", 2) + error(-32601, "Method not found", 3)
    )


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "nope"]
)
def test_methods_2026_removed_are_not_found(run, method: str) -> None:
    out = run(
        modern(method, {"uri": "file:///plain.txt", "level": "info"}),
        catalogue=make_app(resource_subscriptions=True).catalogue(),
    )
    assert out == error(-32601, "Method not found")


def test_an_unknown_resource_is_invalid_params_in_2026_and_not_found_before(run) -> None:
    catalogue = make_app().catalogue()
    out = run(
        modern("resources/read", {"uri": "file:///none"}, rid=1)
        + request("resources/read", {"uri": "file:///none"}, rid=2),
        catalogue=catalogue,
    )
    assert out == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"file:///none"}}}\n'
        + error(-32002, "Resource not found", 2)
    )


# -- the legacy handshake beside it ---------------------------------------------------------------


def initialized(version: str, rid: object = 1) -> bytes:
    return result(
        b'{"protocolVersion":"%s","capabilities":{"tools":{},"resources":{},"prompts":{},"logging":{}},'
        b'"serverInfo":{"name":"eras","version":"2.0.0"}}' % version.encode(),
        rid,
    )


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2026-07-28", "2025-11-25"),
        ("1900-01-01", "2025-11-25"),
    ],
)
def test_initialize_answers_the_version_asked_when_spoken_else_the_newest_legacy(
    run, asked: str, answered: str
) -> None:
    line = request("initialize", {"protocolVersion": asked, "capabilities": {}})
    assert run(line, catalogue=make_app().catalogue()) == initialized(answered)


def test_the_protocol_versions_of_an_app_bound_negotiation(run) -> None:
    catalogue = make_app(protocol_versions=["2025-03-26", "2025-06-18"]).catalogue()
    out = run(
        request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, rid=1)
        + modern("server/discover", rid=2),
        catalogue=catalogue,
    )
    # Without 2026-07-28, _meta means nothing: discover is not a method.
    assert out == initialized("2025-06-18", 1) + error(-32601, "Method not found", 2)


def test_the_default_catalogue_keeps_its_contract(run) -> None:
    out = run(
        request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, rid=1)
        + modern("server/discover", rid=2)
        + modern("ping", rid=3),
        catalogue=default_catalogue(),
    )
    assert out == result(
        b'{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{}},'
        b'"serverInfo":{"name":"shipcode-mcp","version":"1.0.0"}}',
        1,
    ) + error(-32601, "Method not found", 2) + result(b"{}", 3)


# -- logging per request ---------------------------------------------------------------------------


def test_log_messages_only_for_a_request_that_names_a_level(run) -> None:
    catalogue = make_app().catalogue()
    out = run(
        modern("tools/call", {"name": "chatty"}, rid=1)
        + modern("tools/call", {"name": "chatty"}, rid=2, meta={**META, LOG: "warning"})
        + modern("tools/call", {"name": "chatty"}, rid=3, meta={**META, LOG: "debug"}),
        catalogue=catalogue,
    )
    said = result(b'{"content":[{"type":"text","text":"said"}],' + COMPLETE, 0)

    def log(level: str, data: str) -> bytes:
        return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"%s","data":"%s"}}\n' % (
            level.encode(),
            data.encode(),
        )

    assert out == (
        said.replace(b'"id":0', b'"id":1')
        + log("warning", "watch out")
        + said.replace(b'"id":0', b'"id":2')
        + log("debug", "fine detail")
        + log("warning", "watch out")
        + said.replace(b'"id":0', b'"id":3')
    )


# -- asking the client: 2026-07-28 rounds ----------------------------------------------------------


def test_one_round_asks_then_answers(run) -> None:
    catalogue = make_app().catalogue()
    first = run(modern("tools/call", {"name": "greet"}), catalogue=catalogue)
    shape, state = split_state(first)
    assert shape == input_required(b'{"user_name":' + NAME_BYTES + b"}")
    assert opened("tools/call greet", state) == {"a": {}, "s": None}
    retry = modern(
        "tools/call",
        {"name": "greet", "inputResponses": {"user_name": accepted(name="Ada")}, "requestState": state},
        rid=2,
    )
    assert run(retry, catalogue=catalogue) == result(
        b'{"content":[{"type":"text","text":"Hello, Ada!"}],' + COMPLETE, 2
    )


def test_answers_of_earlier_rounds_travel_in_the_state(run) -> None:
    catalogue = make_app().catalogue()
    shape, state = split_state(run(modern("tools/call", {"name": "trip"}), catalogue=catalogue))
    assert shape == input_required(b'{"elicit-1":' + NAME_BYTES + b"}")
    second = run(
        modern(
            "tools/call",
            {"name": "trip", "inputResponses": {"elicit-1": accepted(name="Ada")}, "requestState": state},
            rid=2,
        ),
        catalogue=catalogue,
    )
    shape, state = split_state(second)
    assert shape == input_required(b'{"elicit-2":' + orjson.dumps(CITY) + b"}", rid=2)
    assert opened("tools/call trip", state) == {"a": {"elicit-1": accepted(name="Ada")}, "s": None}
    third = run(
        modern(
            "tools/call",
            {"name": "trip", "inputResponses": {"elicit-2": accepted(city="Paris")}, "requestState": state},
            rid=3,
        ),
        catalogue=catalogue,
    )
    assert third == result(b'{"content":[{"type":"text","text":"Ada goes to Paris"}],' + COMPLETE, 3)


def test_several_inputs_in_one_round_and_the_handlers_state(run) -> None:
    catalogue = make_app().catalogue()
    shape, state = split_state(run(modern("tools/call", {"name": "both"}), catalogue=catalogue))
    assert shape == input_required(b'{"name":' + NAME_BYTES + b',"roots":{"method":"roots/list"}}')
    responses = {"name": accepted(name="Ada"), "roots": {"roots": [{"uri": "file:///a"}]}, "extra": {"ignored": True}}
    retry = modern("tools/call", {"name": "both", "inputResponses": responses, "requestState": state}, rid=2)
    assert run(retry, catalogue=catalogue) == result(
        b'{"content":[{"type":"text","text":"Ada with 1 roots, {\'asked\': 2}"}],' + COMPLETE, 2
    )


def test_rounds_counted_in_explicit_state(run) -> None:
    catalogue = make_app().catalogue()
    state = None
    for step in range(2):
        params = (
            {"name": "steps", "inputResponses": {f"q{step - 1}": accepted(name="x")}} if state else {"name": "steps"}
        )
        if state:
            params["requestState"] = state
        shape, state = split_state(run(modern("tools/call", params, rid=step), catalogue=catalogue))
        assert shape == input_required(b'{"q%d":' % step + NAME_BYTES + b"}", rid=step)
    done = run(
        modern(
            "tools/call", {"name": "steps", "inputResponses": {"q1": accepted(name="y")}, "requestState": state}, rid=9
        ),
        catalogue=catalogue,
    )
    assert done == result(b'{"content":[{"type":"text","text":"done after 2 rounds, last [\'q1\']"}],' + COMPLETE, 9)


def test_a_missing_or_malformed_response_asks_again(run) -> None:
    catalogue = make_app().catalogue()
    _, state = split_state(run(modern("tools/call", {"name": "greet"}), catalogue=catalogue))
    for rid, responses in ((2, {}), (3, {"user_name": "Ada"}), (4, {"other": accepted(name="Ada")})):
        again = run(
            modern("tools/call", {"name": "greet", "inputResponses": responses, "requestState": state}, rid=rid),
            catalogue=catalogue,
        )
        assert split_state(again)[0] == input_required(b'{"user_name":' + NAME_BYTES + b"}", rid=rid)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"inputResponses": []}, "Invalid inputResponses"),
        ({"requestState": "not-a-state"}, "Invalid requestState"),
        ({"requestState": 5}, "Invalid requestState"),
    ],
)
def test_malformed_round_trip_params_are_invalid(run, params: dict, message: str) -> None:
    line = modern("tools/call", {"name": "greet", **params})
    assert run(line, catalogue=make_app().catalogue()) == error(-32602, message)


def test_a_tampered_or_foreign_state_is_refused(run) -> None:
    catalogue = make_app().catalogue()
    _, state = split_state(run(modern("tools/call", {"name": "greet"}), catalogue=catalogue))
    payload, mac = state.split(".")
    tampered = payload[:-1] + ("A" if payload[-1] != "A" else "B") + "." + mac
    other_key = split_state(
        run(modern("tools/call", {"name": "greet"}), catalogue=make_app_keyed("another-key-" + "k" * 21).catalogue())
    )[1]
    lines = b"".join(
        modern(
            "tools/call",
            {"name": name, "inputResponses": {"user_name": accepted(name="Ada")}, "requestState": text},
            rid=rid,
        )
        for rid, name, text in ((1, "greet", tampered), (2, "trip", state), (3, "greet", other_key))
    )
    assert run(lines, catalogue=catalogue) == b"".join(error(-32602, "Invalid requestState", rid) for rid in (1, 2, 3))


def test_only_the_answers_asked_for_are_read_and_carried_on(run) -> None:
    catalogue = make_app().catalogue()
    _, state = split_state(run(modern("tools/call", {"name": "trip"}), catalogue=catalogue))
    unasked = {f"extra-{number}": accepted(name="x" * 100) for number in range(1000)}
    responses = {"elicit-1": accepted(name="Ada"), **unasked, "elicit-2": accepted(city="Early")}
    second = run(
        modern("tools/call", {"name": "trip", "inputResponses": responses, "requestState": state}, rid=2),
        catalogue=catalogue,
    )
    shape, state = split_state(second)
    assert shape == input_required(b'{"elicit-2":' + orjson.dumps(CITY) + b"}", rid=2)
    sealed = StateSeal(KEY.encode()).unseal("tools/call trip", state)
    assert (sealed["q"], sealed["v"]) == (["elicit-2"], {"a": {"elicit-1": accepted(name="Ada")}, "s": None})
    _, steps_state = split_state(run(modern("tools/call", {"name": "steps"}), catalogue=catalogue))
    _, steps_state = split_state(
        run(
            modern(
                "tools/call",
                {"name": "steps", "inputResponses": {"q0": accepted(name="x")}, "requestState": steps_state},
            ),
            catalogue=catalogue,
        )
    )
    done = run(
        modern(
            "tools/call",
            {"name": "steps", "inputResponses": {"q1": accepted(name="y"), "q0": {}}, "requestState": steps_state},
            rid=9,
        ),
        catalogue=catalogue,
    )
    assert done == result(b'{"content":[{"type":"text","text":"done after 2 rounds, last [\'q1\']"}],' + COMPLETE, 9)


def test_answers_given_before_any_question_are_carried_on_only_when_asked(run) -> None:
    catalogue = make_app().catalogue()
    extra = {"unknown": accepted(foo="bar")}
    greeted = run(
        modern("tools/call", {"name": "greet", "inputResponses": {"user_name": accepted(name="Ada"), **extra}}),
        catalogue=catalogue,
    )
    assert greeted == result(b'{"content":[{"type":"text","text":"Hello, Ada!"}],' + COMPLETE)
    line = modern("tools/call", {"name": "trip", "inputResponses": {"elicit-1": accepted(name="Ada"), **extra}})
    shape, state = split_state(run(line, catalogue=catalogue))
    assert shape == input_required(b'{"elicit-2":' + orjson.dumps(CITY) + b"}")
    assert opened("tools/call trip", state) == {"a": {"elicit-1": accepted(name="Ada")}, "s": None}


def test_a_state_over_the_bound_ends_the_round_with_an_error(run) -> None:
    app = Server("eras", version="2.0.0", state_key=KEY)
    kept = "x" * (MAX_STATE_CHARS * 3 // 4)

    @app.tool()
    def hoard(ctx: Context) -> str:
        """Keeps too much in its state"""
        raise InputRequired({"more": NAME}, state=kept)

    payload = b'{"r":"tools/call hoard","x":1234567890,"q":["more"],"v":{"a":{},"s":"%s"}}' % kept.encode()
    size = len(base64.urlsafe_b64encode(payload).rstrip(b"=")) + 1 + 43  # the payload, a dot, the MAC
    assert run(modern("tools/call", {"name": "hoard"}), catalogue=app.catalogue()) == error(
        -32603, f"Request state too large: {size} characters, the limit is {MAX_STATE_CHARS}"
    )


def test_a_state_longer_than_the_bound_is_refused_unopened(run) -> None:
    state = StateSeal(KEY.encode(), max_chars=4 * MAX_STATE_CHARS).seal(
        "tools/call greet", {"a": {}, "s": "x" * MAX_STATE_CHARS}, asked=["user_name"]
    )
    line = modern(
        "tools/call",
        {"name": "greet", "inputResponses": {"user_name": accepted(name="Ada")}, "requestState": state},
    )
    assert run(line, catalogue=make_app().catalogue()) == error(-32602, "Invalid requestState")


def make_app_keyed(key: str) -> Server:
    """The same app sealing with another key: another deployment."""
    app = make_app()
    app.state_key = key
    return app


def test_asking_without_the_capability_is_refused_with_what_is_missing(run) -> None:
    catalogue = make_app().catalogue()
    out = run(
        modern("tools/call", {"name": "think"}, rid=1, meta={V: "2026-07-28", CAPS: {"elicitation": {}}})
        + modern("tools/call", {"name": "both"}, rid=2, meta={V: "2026-07-28", CAPS: {"sampling": {}}}),
        catalogue=catalogue,
    )
    assert out == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Server requires the sampling capability '
        b'for this request","data":{"requiredCapabilities":{"sampling":{}}}}}\n'
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32021,"message":"Server requires the elicitation and roots '
        b'capability for this request","data":{"requiredCapabilities":{"elicitation":{},"roots":{}}}}}\n'
    )


def test_prompts_and_reads_ask_too(run) -> None:
    catalogue = make_app().catalogue()
    for rid, method, params, answer in (
        (
            1,
            "prompts/get",
            {"name": "personal"},
            b'{"description":"A prompt that asks first","messages":[{"role":"user","content":'
            b'{"type":"text","text":"Write to Ada"}}],' + COMPLETE,
        ),
        (
            2,
            "resources/read",
            {"uri": "memo://cats"},
            b'{"contents":[{"uri":"memo://cats","mimeType":"text/plain","text":"cats for Ada"}],' + CACHED,
        ),
    ):
        shape, state = split_state(run(modern(method, params, rid=rid), catalogue=catalogue))
        assert shape == input_required(b'{"who":' + NAME_BYTES + b"}", rid=rid)
        retry = modern(
            method, {**params, "inputResponses": {"who": accepted(name="Ada")}, "requestState": state}, rid=rid
        )
        assert run(retry, catalogue=catalogue) == result(answer, rid)


def test_input_required_elsewhere_is_a_server_fault(run) -> None:
    app = make_app()

    @app.completion(prompt="personal")
    def complete(argument: str, value: str, context: dict) -> list[str]:
        raise InputRequired({"x": NAME})

    out = run(
        modern(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "personal"}, "argument": {"name": "a", "value": ""}},
            rid=1,
        )
        + request(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "personal"}, "argument": {"name": "a", "value": ""}},
            rid=2,
        ),
        catalogue=app.catalogue(),
    )
    assert out == error(-32603, "Internal error", 1) + error(-32603, "Internal error", 2)


# -- a catalogue that changes while serving, and subscriptions -------------------------------------


def test_tools_added_and_removed_while_serving(engine_module) -> None:
    app = make_app()
    engine = engine_module.Engine(app.catalogue())
    listen = modern(
        "subscriptions/listen", {"notifications": {"toolsListChanged": True, "promptsListChanged": True}}, rid="sub"
    )
    assert engine.feed(listen) == (
        b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":'
        b'{"io.modelcontextprotocol/subscriptionId":"sub"},"notifications":{}}}\n'
    )  # nothing is offered until the app declares list changes

    def shout(text: str) -> str:
        return text.upper()

    app.add_tool(shout, description="Shout")
    assert engine.feed(modern("tools/call", {"name": "shout", "arguments": {"text": "hi"}}, rid=1)) == result(
        b'{"content":[{"type":"text","text":"HI"}],' + COMPLETE, 1
    )
    assert engine.feed(request("tools/call", {"name": "shout", "arguments": {"text": "hi"}}, rid=2)) == result(
        b'{"content":[{"type":"text","text":"HI"}]}', 2
    )
    app.remove_tool("shout")
    app.remove_tool("echo")
    out = engine.feed(request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=3))
    assert out == error(-32602, "Unknown tool", 3)
    listed = body_of(engine.feed(modern("tools/list", rid=4)))
    assert [tool["name"] for tool in listed["tools"]] == ["add", "greet", "trip", "both", "steps", "think", "chatty"]


def test_list_changes_reach_the_subscriptions_that_asked(engine_module) -> None:
    app = make_app(list_changed=True)
    engine = engine_module.Engine(app.catalogue())
    out = engine.feed(
        modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid=7)
        + modern(
            "subscriptions/listen", {"notifications": {"promptsListChanged": True, "resourcesListChanged": True}}, rid=8
        )
    )
    assert out == (
        b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":'
        b'{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":'
        b'{"io.modelcontextprotocol/subscriptionId":8},"notifications":{"promptsListChanged":true,"resourcesListChanged":true}}}\n'
    )
    app.add_prompt(lambda: "hi", name="hi")
    app.add_tool(lambda: "x", name="x", description="x")
    assert engine.feed(b"") == (
        b'{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":8}}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}\n'
    )
    engine.feed(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}\n')
    app.remove_tool("x")
    assert engine.feed(b"") == b""


def test_a_legacy_session_hears_of_list_changes(engine_module) -> None:
    app = make_app(list_changed=True)
    engine = engine_module.Engine(app.catalogue())
    engine.feed(request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    app.add_tool(lambda: "x", name="x", description="x")
    assert engine.feed(b"") == b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'


# -- asking the client: the same handlers in a legacy session ---------------------------------------

LEGACY_APP = """
import sys
sys.path[:0] = [{folder!r}, {tests!r}]  # test_eras, and the package support it imports
from test_eras import make_app
app = make_app()
"""


@pytest.fixture
def legacy_app(tmp_path, request) -> str:
    path = tmp_path / "legacy_app.py"
    path.write_text(LEGACY_APP.format(folder=str(request.path.parent), tests=str(request.path.parents[1])))
    return str(path)


def exchange(server: ServerProcess, line: bytes) -> bytes:
    server.send(line)
    out = b""
    while not out.endswith(b"\n"):
        out += server.read_some()
    return out


@pytest.mark.parametrize(
    ("tool", "asked", "answer", "expected"),
    [
        ("greet", NAME, accepted(name="Ada"), "Hello, Ada!"),
        ("both", NAME, accepted(name="Ada"), None),
        (
            "think",
            sampling_request("2+2?", max_tokens=5),
            {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"},
            "4",
        ),
    ],
)
def test_a_legacy_client_is_asked_by_the_server(
    engine_name: str, legacy_app: str, tool: str, asked, answer, expected
) -> None:
    with ServerProcess(engine_name, legacy_app) as server:
        exchange(server, request("initialize", {"protocolVersion": "2025-11-25", "capabilities": ALL_CAPS}))
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        out = exchange(server, request("tools/call", {"name": tool}, rid=2))
        assert out == b'{"jsonrpc":"2.0","id":"s1","method":%s,"params":%s}\n' % (
            orjson.dumps(asked["method"]),
            orjson.dumps(asked["params"]),
        )
        if tool == "both":
            server.send(b'{"jsonrpc":"2.0","id":"s1","result":%s}\n' % orjson.dumps(answer))
            out = exchange(server, b"")
            assert out == b'{"jsonrpc":"2.0","id":"s2","method":"roots/list"}\n'
            server.send(b'{"jsonrpc":"2.0","id":"s2","result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}}\n')
            expected = "Ada with 2 roots, {'asked': 2}"
            out = exchange(server, b"")
        else:
            out = exchange(server, b'{"jsonrpc":"2.0","id":"s1","result":%s}\n' % orjson.dumps(answer))
        assert out == result(b'{"content":[{"type":"text","text":%s}]}' % orjson.dumps(expected), 2)
        server.close_stdin()
        assert server.wait().status == 0


# -- the compiled engine's fast path serves modern lines too ----------------------------------------

COMMON_MODERN = [
    modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=1),
    modern("tools/call", {"arguments": {"a": 7, "b": 49.25}, "name": "add"}, rid=2),
    modern("tools/call", {"name": "add", "arguments": {"a": 1, "b": "x"}}, rid=3),
    modern("tools/call", {"name": "nope", "arguments": {}}, rid="s-4"),
    modern("tools/list", rid=5),
    modern("server/discover", rid=6),
    modern("prompts/list", rid=7),
    request(
        "tools/call",
        {
            "_meta": {
                "io.modelcontextprotocol/clientInfo": {"name": "client", "version": "1.0", "icons": [{"src": "x"}]},
                V: "2026-07-28",
                CAPS: {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "extensions": {}},
                "com.example/trace": [1, 2.5, True, None, {"deep": [[]]}],
            },
            "name": "echo",
            "arguments": {"text": "é"},
        },
        rid=8,
    ),
]


def test_common_modern_lines_never_reach_the_line_rules(monkeypatch) -> None:
    from shipcode_mcp.lines import LineRules

    reached = []
    line_rules = LineRules.line

    def line(self, data: bytes) -> bool:
        reached.append(data)
        return line_rules(self, data)

    data = b"".join(COMMON_MODERN)
    expected = engine("pure").Engine(make_app().catalogue()).feed(data)
    monkeypatch.setattr(LineRules, "line", line)
    assert engine("compiled").Engine(make_app().catalogue()).feed(data) == expected
    assert reached == []


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=8,
)
META_KEYS = st.sampled_from(
    [V, CAPS, LOG, "io.modelcontextprotocol/clientInfo", "progressToken", "_x", "com.example/k"]
)


@st.composite
def modern_lines(draw) -> bytes:
    meta = draw(st.dictionaries(META_KEYS, VALUES, max_size=5))
    if draw(st.booleans()):
        meta[V] = draw(st.sampled_from(["2026-07-28", "2025-11-25", "2026-07-28 "]))
    if draw(st.booleans()):
        meta[CAPS] = draw(st.sampled_from([{}, ALL_CAPS, {"sampling": {}}, [], "x"]))
    method, params = draw(
        st.sampled_from(
            [
                ("tools/call", {"name": "echo", "arguments": {"text": "a\nb"}}),
                ("tools/call", {"name": "add", "arguments": {"a": 1.5, "b": -2}}),
                ("tools/call", {"name": "add"}),
                ("tools/call", {"name": "greet"}),
                ("tools/list", {}),
                ("tools/list", {"cursor": "c"}),
                ("server/discover", {}),
                ("ping", {}),
                ("resources/read", {"uri": "file:///plain.txt"}),
            ]
        )
    )
    line = orjson.dumps(
        {"jsonrpc": "2.0", "id": draw(st.integers(0, 99)), "method": method, "params": {**params, "_meta": meta}}
    )
    if draw(st.integers(0, 4)) == 0:  # a byte changed: broken JSON, other keys, other values
        at = draw(st.integers(0, len(line) - 1))
        line = line[:at] + bytes([draw(st.integers(0x20, 0x7E))]) + line[at + 1 :]
    return line + b"\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(modern_lines(), min_size=1, max_size=6))
@example(lines=[modern("tools/call", {"name": "greet"}), modern("tools/call", {"name": "steps"}, rid=2)])
def test_both_engines_answer_modern_lines_alike(lines: list[bytes]) -> None:
    data = b"".join(lines)
    # One instant for both runs: a sealed state's expiry is in whole seconds, and a second
    # ticking over between the runs would change the state's bytes.
    with pytest.MonkeyPatch.context() as patch:
        StateClock(patch, time.time())
        outputs = [engine(name).Engine(make_app().catalogue()).feed(data) for name in ("compiled", "pure")]
    assert outputs[0] == outputs[1]


def test_a_repeated_meta_is_judged_like_the_first() -> None:
    # The compiled engine remembers the last _meta it accepted; a line whose _meta differs by
    # one byte (same length) or ends elsewhere must not pass for it.
    lines = b"".join(
        modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=rid, meta=meta)
        for rid, meta in enumerate(
            [
                META,
                {V: "2026-07-29", CAPS: ALL_CAPS},
                META,
                {V: "2026-07-28", CAPS: {**ALL_CAPS, "x": {}}},
                {V: "2026-07-28", CAPS: []},
                META,
            ]
        )
    )
    outputs = [engine(name).Engine(make_app().catalogue()).feed(lines) for name in ("compiled", "pure")]
    assert outputs[0] == outputs[1]
    assert outputs[1].count(b'"resultType":"complete"') == 4


# -- 2025-11-25 additions: icons, JSON Schema 2020-12 -----------------------------------------------

SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"city": {"type": "string"}}}},
    "properties": {
        "home": {"$ref": "#addressDef"},
        "work": {"$ref": "#/$defs/address"},
        "point": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}], "items": False},
        "phone": {"type": "string"},
        "contact": {"enum": ["phone", "email"]},
    },
    "dependentRequired": {"contact": ["phone"]},
    "if": {"properties": {"contact": {"const": "email"}}, "required": ["contact"]},
    "then": {"required": ["home"]},
}
ICONS = [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}]


def schema_app() -> Server:
    app = Server("eras", version="2.0.0", icons=ICONS)

    @app.tool(input_schema=SCHEMA_2020_12, icons=ICONS)
    def locate(**where: object) -> str:
        """Locate"""
        return "ok"

    @app.prompt(icons=ICONS)
    def hello() -> str:
        return "hi"

    return app


def test_icons_and_2020_12_schemas_are_listed_exactly_as_given(run) -> None:
    out = run(
        request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, rid=1)
        + request("tools/list", rid=2)
        + request("prompts/list", rid=3),
        catalogue=schema_app().catalogue(),
    )
    icons = orjson.dumps(ICONS)
    assert out == (
        result(
            b'{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"prompts":{}},'
            b'"serverInfo":{"name":"eras","version":"2.0.0","icons":' + icons + b"}}",
            1,
        )
        + result(
            b'{"tools":[{"name":"locate","description":"Locate","inputSchema":'
            + orjson.dumps(SCHEMA_2020_12)
            + b',"icons":'
            + icons
            + b"}]}",
            2,
        )
        + result(b'{"prompts":[{"name":"hello","description":"","icons":' + icons + b"}]}", 3)
    )


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [
        ({"home": {"city": "Oslo"}, "work": {"city": "Rome"}, "point": [1, 2]}, True),
        ({"home": {"city": 5}}, False),  # through the $anchor
        ({"work": {"city": 5}}, False),  # through $defs
        ({"point": [1, "2"]}, False),  # prefixItems
        ({"point": [1, 2, 3]}, False),  # items: false after the prefix
        ({"contact": "phone"}, False),  # dependentRequired
        ({"contact": "phone", "phone": "555"}, True),
        ({"contact": "email", "phone": "555"}, False),  # if/then
        ({"contact": "email", "phone": "555", "home": {}}, True),
        ({"point": [1.0, 2]}, False),  # 1.0 is not an integer here either
    ],
)
def test_2020_12_schemas_are_validated_with_2020_12_semantics(run, arguments: dict, valid: bool) -> None:
    out = run(request("tools/call", {"name": "locate", "arguments": arguments}), catalogue=schema_app().catalogue())
    expected = (
        b'{"content":[{"type":"text","text":"ok"}]}'
        if valid
        else (b'{"content":[{"type":"text","text":"Invalid arguments for locate"}],"isError":true}')
    )
    assert out == result(expected)


@pytest.mark.parametrize("tool", ["greet", "both"])
def test_a_legacy_client_without_the_capability_gets_a_tool_error(run, tool: str) -> None:
    out = run(
        request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}}, rid=1)
        + request("tools/call", {"name": tool}, rid=2),
        catalogue=make_app().catalogue(),
    )
    message = "elicitation/create: the client did not declare the elicitation capability"
    assert out == initialized("2025-11-25", 1) + result(
        b'{"content":[{"type":"text","text":"%s"}],"isError":true}' % message.encode(), 2
    )


def test_an_endpoint_of_2026_alone_keeps_the_fast_path(monkeypatch) -> None:
    """A stateless HTTP endpoint judges every body by 2026-07-28's rules (``modern_only``): a line
    without its _meta is refused as that era refuses it, common modern lines stay on the C path."""
    from shipcode_mcp.lines import LineRules

    legacy = [request("ping", rid=9), request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=10)]
    outputs = []
    for name in ("pure", "compiled"):
        served = engine(name).Engine(make_app().catalogue())
        served.modern_only()
        outputs.append(b"".join(served.message(line) for line in legacy))
    assert outputs[0] == outputs[1] == error(-32602, "Missing _meta", 9) + error(-32602, "Missing _meta", 10)

    reached = []
    line_rules = LineRules.line
    monkeypatch.setattr(LineRules, "line", lambda self, data: reached.append(data) or line_rules(self, data))
    served = engine("compiled").Engine(make_app().catalogue())
    served.modern_only()
    for line in COMMON_MODERN:
        served.message(line)
    assert reached == []


def test_a_handler_without_a_context_cannot_ask_in_either_era(run) -> None:
    """Without a Context a handler could never read the answers: InputRequired from it is -32603."""
    app = make_app()

    @app.tool()
    async def blind() -> str:
        """Asks, but could never read the answer"""
        raise InputRequired({"name": NAME})

    out = run(
        modern("tools/call", {"name": "blind"}, rid=1)
        + request("initialize", {"protocolVersion": "2025-11-25", "capabilities": ALL_CAPS}, rid=2)
        + request("tools/call", {"name": "blind"}, rid=3),
        catalogue=app.catalogue(),
    )
    assert out == error(-32603, "Internal error", 1) + initialized("2025-11-25", 2) + error(-32603, "Internal error", 3)
