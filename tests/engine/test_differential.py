"""Differential and property tests: random, mutated and chunked input through both engines.

- The compiled and the pure engine write identical bytes for any input and any chunking.
- Chunking never changes an engine's output.
- Every output is exactly what an independent model of the contract predicts
  (``oracle.Model``): answers, codes, messages, results and ids, byte for byte, and the
  session's ``initialized`` flag.

These tests compare the two engines, so they need both: with only the pure engine
(``--no-compiled`` or ``SHIPCODE_MCP_NO_EXTENSIONS``) they are deselected, never passed;
``test_model.py`` still checks each engine against the model alone.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.oracle import TOKENS, check_engines, mutated_stream
from support.serverproc import corpus_files, corpus_messages
from support.wire import default_catalogue, engine

pytestmark = pytest.mark.compiled

DEFAULT_LIMIT = 16 * 1024 * 1024
CATALOGUE = default_catalogue()
MESSAGES = corpus_messages()

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def engines() -> list:
    """The engines to compare: compiled and pure (an import error fails)."""
    return [engine("compiled"), engine("pure")]


def check(engines: list, data: bytes, cuts: list[int] = (), limit: int = DEFAULT_LIMIT) -> None:
    check_engines(engines, CATALOGUE, data, cuts, limit)


def cuts_for(data: bytes) -> st.SearchStrategy[list[int]]:
    if len(data) < 2:
        return st.just([])
    return st.lists(st.integers(1, len(data) - 1), max_size=12)


# -- inputs ------------------------------------------------------------------------------

line_end = st.sampled_from([b"\n", b"\n", b"\r\n"])


@st.composite
def random_bytes(draw) -> bytes:
    """Raw bytes, with newlines sprinkled in so they make several lines."""
    data = draw(st.binary(max_size=400))
    lines = draw(st.lists(st.binary(max_size=60), max_size=8))
    return data + b"".join(line + draw(line_end) for line in lines)


@st.composite
def mutated_messages(draw) -> bytes:
    seed = draw(st.integers(0, 2**32 - 1))
    count = draw(st.integers(1, 12))
    return mutated_stream(random.Random(seed), MESSAGES, count)


# Generated requests: every envelope shape, ids at the edges, methods served and not,
# arguments of every type, written with random spacing and escapes.

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**65), 2**65),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
ids = st.one_of(
    st.integers(-(2**63) - 2, 2**64 + 2),
    st.sampled_from([0, -1, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]),
    st.text(max_size=10),
    st.sampled_from(["", "é", "😀", "\u2028", "\x00", '"', "\\", "/", "\ud800"]),
    json_values,
)
methods = st.one_of(
    st.sampled_from(
        [
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/read",
            "resources/templates/list",
            "notifications/initialized",
            "notifications/cancelled",
            "prompts/list",
            "PING",
            "ping ",
            "",
        ]
    ),
    st.text(max_size=8),
    json_values,
)
numbers = st.one_of(
    st.integers(-(2**65), 2**65),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -0.0, 0.1, 1e21, 1e-7, 1e20, 1.7976931348623157e308, 5e-324]),
)
arguments = st.one_of(
    st.fixed_dictionaries({"text": st.one_of(st.text(max_size=20), json_values)}),
    st.fixed_dictionaries({"a": st.one_of(numbers, json_values), "b": st.one_of(numbers, json_values)}),
    st.dictionaries(st.sampled_from(["text", "a", "b", "c"]), json_values, max_size=3),
    json_values,
)
params = st.one_of(
    st.fixed_dictionaries(
        {"name": st.one_of(st.sampled_from(["echo", "add", "nope", "Echo"]), json_values)},
        optional={"arguments": arguments, "_meta": json_values},
    ),
    st.fixed_dictionaries({}, optional={"uri": st.one_of(st.sampled_from(["file:///hello.txt", "x"]), json_values)}),
    st.fixed_dictionaries({}, optional={"protocolVersion": st.text(max_size=10), "capabilities": json_values}),
    json_values,
)
good_ids = st.one_of(
    st.integers(-(2**63), 2**64 - 1),
    st.sampled_from([0, 1, -1, 9, 10, 99, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -(2**63)]),
    st.text(max_size=10),
)
echo_arguments = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=40)}),
    st.fixed_dictionaries({"text": st.text(alphabet=st.characters(max_codepoint=127), max_size=40)}),
)
add_arguments = st.fixed_dictionaries({"a": numbers, "b": numbers})
PARAMS_FOR = {
    "tools/call": st.one_of(
        st.fixed_dictionaries({"name": st.just("echo"), "arguments": echo_arguments}),
        st.fixed_dictionaries({"name": st.just("add"), "arguments": add_arguments}),
        st.fixed_dictionaries({"name": st.sampled_from(["echo", "add"]), "arguments": arguments}),
        st.fixed_dictionaries({"name": st.sampled_from(["echo", "add", "nope"])}, optional={"arguments": arguments}),
    ),
    "resources/read": st.fixed_dictionaries({"uri": st.sampled_from(["file:///hello.txt", "file:///nope"])}),
    "initialize": st.fixed_dictionaries(
        {}, optional={"protocolVersion": st.sampled_from(["2025-06-18", "2024-11-05"]), "capabilities": json_values}
    ),
}
good_params = st.one_of(
    *PARAMS_FOR.values(),
    st.fixed_dictionaries({}, optional={"cursor": st.text(max_size=4), "_meta": json_values}),
)
good_methods = st.sampled_from(
    [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "nope",
    ]
)


@st.composite
def well_formed(draw) -> dict:
    """A request as a client would send it (its params usually fit its method)."""
    method = draw(good_methods)
    request = {"jsonrpc": "2.0", "id": draw(good_ids), "method": method}
    if draw(st.integers(0, 9)) < 8:
        if method in PARAMS_FOR:
            request["params"] = draw(PARAMS_FOR[method])
        elif draw(st.booleans()):
            request["params"] = draw(good_params)
    return request


notifications = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.one_of(good_methods, st.just("notifications/initialized"))},
    optional={"params": good_params},
)
anything = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.one_of(st.just("2.0"), st.just("2.0"), json_values),
        "id": ids,
        "method": methods,
        "params": params,
        "result": json_values,
        "error": json_values,
    },
)
envelopes = st.one_of(well_formed(), well_formed(), well_formed(), notifications, anything)


def _string(draw, text: str) -> str:
    """A JSON string for ``text``, with random escapes (lone surrogates become ``\\u`` escapes)."""
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\' or code < 0x20 or 0xD800 <= code <= 0xDFFF:
            parts.append(f"\\u{code:04x}" if code > 0x7F or draw(st.booleans()) else json.dumps(char)[1:-1])
        elif draw(st.integers(0, 9)) == 0:
            parts.append("".join(f"\\u{unit:04x}" for unit in _utf16(char)))
        elif char == "/" and draw(st.booleans()):
            parts.append("\\/")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def _number(draw, value: int | float) -> str:
    if type(value) is int:
        return str(value)
    text = repr(value)
    if value.is_integer() and abs(value) < 1e16 and draw(st.booleans()):
        return str(int(value)) + draw(st.sampled_from([".0", "e0", "E+0", ".00"]))
    return text


def _write(draw, value: object) -> str:
    space = draw(st.sampled_from(["", "", "", " ", "\t", " \r "]))
    if value is None or type(value) is bool:
        return json.dumps(value)
    if type(value) in (int, float):
        return _number(draw, value)
    if type(value) is str:
        return _string(draw, value)
    if type(value) is list:
        return "[" + ("," + space).join(_write(draw, item) for item in value) + "]"
    items = [space + _string(draw, key) + space + ":" + space + _write(draw, item) for key, item in value.items()]
    return "{" + ",".join(items) + space + "}"


@st.composite
def generated_requests(draw) -> bytes:
    lines = []
    for envelope in draw(st.lists(envelopes, min_size=1, max_size=8)):
        keys = list(envelope)
        if draw(st.booleans()):
            keys = draw(st.permutations(keys))
        lines.append(_write(draw, {key: envelope[key] for key in keys}).encode("utf-8", "surrogatepass"))
    return b"".join(line + draw(line_end) for line in lines)


# -- the tests ---------------------------------------------------------------------------


#: Inputs that once exposed a difference or a fault (from the fuzzer or these tests).
REGRESSIONS = [
    b"",
    b"\n",
    b"\r",
    b"\x00\n\xff",
    b"[" * 2000,
    b"1e400\n" * 3,
    b"[" * 1000 + b"1e400" + b"]" * 1000,  # the result depended on the depth of the Python stack
    b"[" * 1024 + b"1e400" + b"]" * 1024,
]


@pytest.mark.parametrize("raw", REGRESSIONS, ids=range(len(REGRESSIONS)))
def test_regressions(engines, raw: bytes) -> None:
    check(engines, raw, list(range(1, len(raw), max(1, len(raw) // 50))))
    check(engines, raw + b"\n" + raw, [len(raw)])


@SETTINGS
@given(data=st.data())
def test_random_bytes(engines, data) -> None:
    raw = data.draw(random_bytes())
    check(engines, raw, data.draw(cuts_for(raw)))


@SETTINGS
@given(data=st.data())
def test_mutated_messages(engines, data) -> None:
    raw = data.draw(mutated_messages())
    check(engines, raw, data.draw(cuts_for(raw)))


@settings(SETTINGS, max_examples=200)
@given(data=st.data())
def test_generated_requests(engines, data) -> None:
    raw = data.draw(generated_requests())
    check(engines, raw, data.draw(cuts_for(raw)))


@SETTINGS
@given(data=st.data())
def test_small_limits(engines, data) -> None:
    """Lines near and over a small --max-message-bytes, under random chunking."""
    raw = data.draw(st.one_of(mutated_messages(), random_bytes(), generated_requests()))
    limit = data.draw(st.integers(1, 120))
    check(engines, raw, data.draw(cuts_for(raw)), limit)


@settings(SETTINGS, max_examples=60)
@given(data=st.data())
def test_tokens_and_long_lines(engines, data) -> None:
    """Lines built from the mutation tokens (deep nesting, surrogates, odd numbers) and long runs."""
    tokens = data.draw(st.lists(st.sampled_from(TOKENS), max_size=30))
    repeat = data.draw(st.sampled_from([1, 1, 100, 5000]))
    raw = b"".join(tokens) * repeat
    check(engines, raw, data.draw(cuts_for(raw)))


@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.stem)
def test_corpus_file(engines, path) -> None:
    data = path.read_bytes()
    check(engines, data, list(range(1, len(data), 3)))


def test_whole_corpus_as_one_stream(engines) -> None:
    data = b"".join(path.read_bytes().rstrip(b"\n") + b"\n" for path in corpus_files())
    rng = random.Random(0)
    for _ in range(20):
        check(engines, data, sorted(rng.sample(range(1, len(data)), 30)))
