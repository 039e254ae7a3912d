"""An app of another API (``compat/``) keeps its flat-scalar tools on the compiled engine's fast path: C checks
and makes the call, and writes the framework's own result bytes (``isError: false``, ``{"result": ...}``, its
text of a number) where it can lay them out; everything else goes to the framework's own ``tools/call``."""

from __future__ import annotations

import random

import orjson
import pytest
from support.wire import call, engine, result

from shipcode_mcp.compat.fastmcp import MAJOR
from shipcode_mcp.compat.fastmcp import FastMCP as FastMCPPackage
from shipcode_mcp.compat.fastmcp_sdk1 import FastMCP
from shipcode_mcp.compat.mcpserver import MCPServer

APIS = {"sdk1": FastMCP, "sdk2": MCPServer, "fastmcp": FastMCPPackage}


def app(api: str):
    mcp = APIS[api]("speed")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.tool()
    def scale(x: float, by: float = 2.0) -> float:
        return x * by

    @mcp.tool()
    def echo(text: str) -> str:
        return text

    @mcp.tool()
    def shout(text: str, loud: bool = False) -> str:
        return text.upper() if loud else text

    @mcp.tool()
    def anything(x: int):
        return {1: "a\nb", 2: 2**70, 3: True, 4: None, 5: [1], 6: -0.0}.get(x, x)

    @mcp.tool()
    def positive(x: int) -> int:  # returns what its annotation refuses (the framework's failure)
        return "many" if x > 1 else x  # fastmcp does not check it

    @mcp.tool()
    def broken(x: int) -> int:
        raise ValueError("no")

    @mcp.tool()
    async def later(x: int) -> int:
        return x

    return mcp


def structured(value: bytes, api: str) -> bytes:
    wrapped = b',"_meta":{"fastmcp":{"wrap_result":true}}' if api == "fastmcp" and MAJOR >= 4 else b""
    return b',"structuredContent":{"result":' + value + b'},"isError":false' + wrapped + b"}"


@pytest.mark.parametrize("api", APIS)
def test_the_flat_sync_tools_are_fast(api: str) -> None:
    fast = {tool.name: tool for tool in app(api).catalogue().fast_tools}
    assert list(fast) == ["add", "scale", "echo", "shout", "anything", "positive", "broken"]
    assert [(name, list(tool.layout.pieces)) for name, tool in fast.items()] == [
        ("add", [int]),
        ("scale", [float]),
        ("echo", [str]),
        ("shout", [str]),
        ("anything", [str, int, float]),
        ("positive", [int]),
        ("broken", [int]),
    ]
    assert all(tool.fallback for tool in fast.values())


def expected_calls(api: str) -> list[tuple[bytes, bytes]]:
    content = b'{"content":[{"type":"text","text":'
    return [
        (call("add", {"a": 2, "b": 3}), content + b'"5"}]' + structured(b"5", api)),
        (call("add", {"a": -9, "b": 3}), content + b'"-6"}]' + structured(b"-6", api)),
        # refused by C, accepted by the framework's lax validation
        (call("add", {"a": "2", "b": 3}), content + b'"5"}]' + structured(b"5", api)),
        (call("scale", {"x": 3}), content + b'"6.0"}]' + structured(b"6.0", api)),
        (call("scale", {"x": 0.25, "by": 0.5}), content + b'"0.125"}]' + structured(b"0.125", api)),
        (call("scale", {"x": 1e15, "by": 10}), content + b'"1e+16"}]' + structured(b"1e+16", api)),
        (call("scale", {"x": 1e-5, "by": 1}), content + b'"0.00001"}]' + structured(b"0.00001", api)),
        (call("echo", {"text": "hi there"}), content + b'"hi there"}]' + structured(b'"hi there"', api)),
        (call("echo", {"text": ""}), content + b'""}]' + structured(b'""', api)),
        (call("shout", {"text": "hi", "loud": True}), content + b'"HI"}]' + structured(b'"HI"', api)),
        (call("anything", {"x": 1}), content + b'"a\\nb"}],"isError":false}'),
        (call("anything", {"x": 2}), content + b'"1180591620717411303424"}],"isError":false}'),
        (call("anything", {"x": 3}), content + b'"true"}],"isError":false}'),
        (call("anything", {"x": 4}), b'{"content":[],"isError":false}'),
        (call("anything", {"x": 5}), content + (b'"[1]"' if api == "fastmcp" else b'"1"') + b'}],"isError":false}'),
        (call("anything", {"x": 6}), content + b'"-0.0"}],"isError":false}'),
        (call("anything", {"x": 7}), content + b'"7"}],"isError":false}'),
        (call("later", {"x": 7}), content + b'"7"}]' + structured(b"7", api)),
    ]


@pytest.mark.parametrize("api", APIS)
def test_calls_answer_as_the_framework(run, api: str) -> None:
    calls = expected_calls(api)
    data = b"".join(call.replace(b'"id":1', b'"id":%d' % rid) for rid, (call, _) in enumerate(calls, 2))
    out = run(data, catalogue=app(api).catalogue())
    assert out == b"".join(result(body, rid) for rid, (_, body) in enumerate(calls, 2))


def transcript(api: str, data: bytes, name: str) -> bytes:
    return engine(name).Engine(app(api).catalogue()).feed(data)


@pytest.mark.parametrize("api", APIS)
def test_failures_unknown_tools_and_invalid_arguments_are_the_framework_s(api: str) -> None:
    lines = [
        call("positive", {"x": 2}),
        call("broken", {"x": 1}),
        call("nope", {}),
        call("add", {"a": 1}),
        call("add", {"a": 1, "b": 2, "c": 3}),
        call("add", None),
        call("add", {"a": 2.5, "b": 1}),
    ]
    data = b"".join(line.replace(b'"id":1', b'"id":%d' % rid) for rid, line in enumerate(lines, 2))
    compiled = transcript(api, data, "compiled")
    answers = [orjson.loads(line)["result"] for line in compiled.splitlines()]
    checked_output, closed = api != "fastmcp", api == "fastmcp"
    assert [answer.get("isError") for answer in answers] == [checked_output, True, True, True, closed, True, True]
    assert compiled == transcript(api, data, "pure")


@pytest.mark.parametrize("api", APIS)
def test_random_numbers_and_texts_answer_as_the_pure_engine(api: str) -> None:
    rng = random.Random(26)
    lines = []
    for rid in range(2, 802):
        exponent = rng.choice((-8, -5, -4, -3, 0, 3, 12, 15, 16, 17))
        x = rng.uniform(-1, 1) * 10.0**exponent
        which = rng.randrange(4)
        if which == 0:
            lines.append(call("scale", {"x": x, "by": rng.choice((1, 0.1, 3))}, rid=rid))
        elif which == 1:
            lines.append(call("add", {"a": rng.randrange(-(10**17), 10**17), "b": rng.randrange(-9, 9)}, rid=rid))
        elif which == 2:
            lines.append(call("anything", {"x": rng.randrange(-(10**12), 10**12)}, rid=rid))
        else:
            text = "".join(rng.choice('ab é"\\\n€😀') for _ in range(rng.randrange(12)))
            lines.append(call("echo", {"text": text}, rid=rid))
    data = b"".join(lines)
    assert transcript(api, data, "compiled") == transcript(api, data, "pure")


@pytest.mark.parametrize("api", APIS)
def test_the_compiled_engine_makes_the_calls_itself(api: str) -> None:
    catalogue = app(api).catalogue()
    compiled = engine("compiled").Engine(catalogue)
    framework_call = catalogue.routes["tools/call"]
    seen = []

    def spy(params):
        seen.append(params["name"])
        return framework_call(params)

    catalogue.routes["tools/call"] = spy  # what the line rules call; C answers without it
    lines = [call("add", {"a": 1, "b": 2}), call("echo", {"text": "x"}), call("add", {"a": "1", "b": 2})]
    lines += [call("nope", {}), call("later", {"x": 1})]
    compiled.feed(b"".join(lines))
    assert seen == ["add", "nope", "later"]
