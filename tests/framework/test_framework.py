"""The public framework on both engines: schemas, validation, results, errors and resources.

A user app built with ``Server`` is served in-process through the ``run`` fixture; every
answer is compared whole, byte for byte.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal, Optional

import pytest
from support.wire import call, error, read, request, result, text

from shipcode_mcp import Server, ToolError
from shipcode_mcp.protocol import RpcError
from shipcode_mcp.schema import FlatShape

app = Server("framework-tests", version="2.5.0", instructions="Try the tools.")


@app.tool
def scalars(s: str, i: int, f: float, b: bool, n: None) -> str:
    """Show the types received.

    Indented second paragraph.
    """
    return " ".join(type(value).__name__ for value in (s, i, f, b, n))


@app.tool()
def optional(x: int | None = None, y: Optional[str] = "d", z: float = 0.5, flag: bool = True) -> str:  # noqa: UP045
    return f"{x!r} {y!r} {z!r} {flag!r}"


@app.tool(name="collections", description="Lists, maps and choices")
def collections_tool(
    items: list[int], table: dict[str, float], mode: Literal["a", "b", 3] = "a", raw: list = None
) -> str:
    return f"{items} {table} {mode!r} {raw!r}"


@app.tool()
def untyped(x, y=1, *, z: Annotated[int, "a count"] = 2) -> str:
    """Untyped"""
    return repr((x, y, z))


@app.tool(
    name="explicit",
    description="Explicit schema",
    input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]},
)
def explicit(**arguments: Any) -> str:
    return ",".join(sorted(arguments))


@app.tool(
    title="Flat",
    input_schema={
        "type": "object",
        "properties": {"q": {"type": "string", "description": "query"}},
        "required": ["q"],
        "additionalProperties": False,
    },
    annotations={"readOnlyHint": True},
)
def flat(q: str) -> str:
    """Flat explicit schema"""
    return q[::-1]


RETURNS: dict[str, Any] = {
    "int": 42,
    "big": 2**70,
    "float": 3.0,
    "fraction": 0.1 + 0.2,
    "huge": 1e21,
    "tiny": 1e-7,
    "inf": float("inf"),
    "nan": float("nan"),
    "true": True,
    "false": False,
    "none": None,
    "text": "héllo\n😀",
    "blocks": [{"type": "text", "text": "a"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
    "empty": [],
    "list": [1, "a", None],
    "dict": {"b": 1, "a": [True]},
    "set": {1},
    "bytes": b"x",
    "tuple": (1, 2),
}


@app.tool()
def give(kind: str) -> Any:
    """Return a value of the given kind"""
    return RETURNS[kind]


@app.tool(output_schema={"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]})
def total(values: list[float], mode: Literal["ok", "mismatch", "text"] = "ok") -> Any:
    """Sum numbers"""
    if mode == "mismatch":
        return {"sum": sum(values)}
    if mode == "text":
        return str(sum(values))
    return {"total": sum(values)}


@app.tool()
def fail(how: Literal["tool error", "empty tool error", "value error", "exit"]) -> str:
    """Fail in various ways"""
    if how == "tool error":
        raise ToolError("no such city: Atlantis")
    if how == "empty tool error":
        raise ToolError
    if how == "value error":
        raise ValueError("boom")
    raise SystemExit(3)


@app.tool()
async def shout(text: str) -> str:
    """Upper-case the text, asynchronously"""
    await asyncio.sleep(0)
    return text.upper()


@app.tool(name='say "hi"', description="")
def say_hi() -> str:
    return "hi"


@app.resource("file:///notes/readme.md", name="readme", mime_type="text/markdown", description="Read me", title="R")
def readme() -> str:
    return "# Title\n"


@app.resource("data://logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n\x00"


@app.resource("file:///data.json")
def config() -> str:
    return '{"a":1}'


@app.resource("mem://async")
async def later() -> str:
    await asyncio.sleep(0)
    return "async text"


@app.resource("mem://broken")
def broken() -> str:
    raise RuntimeError("disk on fire")


@app.resource("mem://wrong-type")
def wrong_type() -> Any:
    return 5


CATALOGUE = app.catalogue()

TOOLS = (
    '{"tools":['
    '{"name":"scalars","description":"Show the types received.\\n\\nIndented second paragraph.","inputSchema":'
    '{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"f":{"type":"number"},'
    '"b":{"type":"boolean"},"n":{"type":"null"}},"required":["s","i","f","b","n"],"additionalProperties":false}},'
    '{"name":"optional","description":"","inputSchema":{"type":"object","properties":'
    '{"x":{"type":["integer","null"],"default":null},"y":{"type":["string","null"],"default":"d"},'
    '"z":{"type":"number","default":0.5},"flag":{"type":"boolean","default":true}},"additionalProperties":false}},'
    '{"name":"collections","description":"Lists, maps and choices","inputSchema":{"type":"object","properties":'
    '{"items":{"type":"array","items":{"type":"integer"}},"table":{"type":"object","additionalProperties":'
    '{"type":"number"}},"mode":{"enum":["a","b",3],"default":"a"},"raw":{"type":["array","null"],"default":null}},'
    '"required":["items","table"],"additionalProperties":false}},'
    '{"name":"untyped","description":"Untyped","inputSchema":{"type":"object","properties":{"x":{},'
    '"y":{"default":1},"z":{"type":"integer","description":"a count","default":2}},"required":["x"],'
    '"additionalProperties":false}},'
    '{"name":"explicit","description":"Explicit schema","inputSchema":{"type":"object","properties":'
    '{"n":{"type":"integer","minimum":0}},"required":["n"]}},'
    '{"name":"flat","title":"Flat","description":"Flat explicit schema","inputSchema":{"type":"object",'
    '"properties":{"q":{"type":"string","description":"query"}},"required":["q"],"additionalProperties":false},'
    '"annotations":{"readOnlyHint":true}},'
    '{"name":"give","description":"Return a value of the given kind","inputSchema":{"type":"object","properties":'
    '{"kind":{"type":"string"}},"required":["kind"],"additionalProperties":false}},'
    '{"name":"total","description":"Sum numbers","inputSchema":{"type":"object","properties":'
    '{"values":{"type":"array","items":{"type":"number"}},"mode":{"enum":["ok","mismatch","text"],"default":"ok"}},'
    '"required":["values"],"additionalProperties":false},"outputSchema":{"type":"object","properties":'
    '{"total":{"type":"number"}},"required":["total"]}},'
    '{"name":"fail","description":"Fail in various ways","inputSchema":{"type":"object","properties":'
    '{"how":{"enum":["tool error","empty tool error","value error","exit"]}},"required":["how"],'
    '"additionalProperties":false}},'
    '{"name":"shout","description":"Upper-case the text, asynchronously","inputSchema":{"type":"object",'
    '"properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},'
    '{"name":"say \\"hi\\"","description":"","inputSchema":{"type":"object","properties":{},'
    '"additionalProperties":false}}'
    "]}"
)
RESOURCES = (
    '{"resources":['
    '{"uri":"file:///notes/readme.md","name":"readme","title":"R","description":"Read me","mimeType":"text/markdown"},'
    '{"uri":"data://logo","name":"logo","mimeType":"image/png"},'
    '{"uri":"file:///data.json","name":"config","mimeType":"application/json"},'
    '{"uri":"mem://async","name":"later","mimeType":"text/plain"},'
    '{"uri":"mem://broken","name":"broken","mimeType":"text/plain"},'
    '{"uri":"mem://wrong-type","name":"wrong_type","mimeType":"text/plain"}'
    "]}"
)
INIT = (
    '{"protocolVersion":"2024-11-05","capabilities":{"tools":{},"resources":{}},'
    '"serverInfo":{"name":"framework-tests","version":"2.5.0"},"instructions":"Try the tools."}'
)


def tool_error(value: str) -> bytes:
    return text(value, is_error=True)


def invalid(tool: str) -> bytes:
    return tool_error(f"Invalid arguments for {tool}")


# -- catalogue -------------------------------------------------------------------------------


def test_initialize_reports_the_apps_identity_and_instructions(run) -> None:
    # The version asked for is answered when the app speaks it (every version, by default).
    assert run(request("initialize", {"protocolVersion": "2024-11-05"}), catalogue=CATALOGUE) == result(INIT)


def test_tools_list(run) -> None:
    assert run(request("tools/list"), catalogue=CATALOGUE) == result(TOOLS)


def test_resources_list(run) -> None:
    assert run(request("resources/list"), catalogue=CATALOGUE) == result(RESOURCES)


def test_empty_app(run) -> None:
    empty = Server("empty").catalogue()
    data = request("tools/list") + request("resources/list") + call("echo", {"text": "x"})
    expected = result('{"tools":[]}') + result('{"resources":[]}') + error(-32602, "Unknown tool")
    assert run(data, catalogue=empty) == expected
    assert run(request("initialize"), catalogue=empty) == result(
        '{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},'
        '"serverInfo":{"name":"empty","version":"0.1.0"}}'
    )


def test_flat_schemas_expose_their_fields_to_the_engines() -> None:
    assert isinstance(app.tools["flat"].validate, FlatShape)
    assert app.tools["flat"].validate.fields == (("q", "string", True),)
    assert app.tools["scalars"].validate.fields == (
        ("s", "string", True),
        ("i", "integer", True),
        ("f", "number", True),
        ("b", "boolean", True),
        ("n", "null", True),
    )
    assert not isinstance(app.tools["collections"].validate, FlatShape)


# -- arguments -------------------------------------------------------------------------------

SCALARS = {"s": "x", "i": 1, "f": 2, "b": True, "n": None}
CALLS: list[tuple[str, bytes, bytes]] = [
    ("scalars", call("scalars", SCALARS), text("str int int bool NoneType")),
    ("scalars float", call("scalars", {**SCALARS, "f": 2.5}), text("str int float bool NoneType")),
    ("scalars int as 1.0", call("scalars", {**SCALARS, "i": 1.0}), invalid("scalars")),
    ("scalars int as true", call("scalars", {**SCALARS, "i": True}), invalid("scalars")),
    ("scalars number as string", call("scalars", {**SCALARS, "f": "2"}), invalid("scalars")),
    ("scalars bool as 0", call("scalars", {**SCALARS, "b": 0}), invalid("scalars")),
    ("scalars null as 0", call("scalars", {**SCALARS, "n": 0}), invalid("scalars")),
    ("scalars missing", call("scalars", {"s": "x", "i": 1, "f": 2, "b": True}), invalid("scalars")),
    ("scalars extra", call("scalars", {**SCALARS, "extra": 1}), invalid("scalars")),
    ("optional defaults", call("optional", {}), text("None 'd' 0.5 True")),
    ("optional no arguments", call("optional"), text("None 'd' 0.5 True")),
    ("optional given", call("optional", {"x": 3, "y": None, "z": 1, "flag": False}), text("3 None 1 False")),
    ("optional null", call("optional", {"x": None}), text("None 'd' 0.5 True")),
    ("optional int as 3.0", call("optional", {"x": 3.0}), invalid("optional")),
    ("optional int as string", call("optional", {"x": "3"}), invalid("optional")),
    ("optional bool as null", call("optional", {"flag": None}), invalid("optional")),
    ("optional extra", call("optional", {"w": 1}), invalid("optional")),
    ("optional arguments array", call("optional", []), invalid("optional")),
    (
        "collections",
        call("collections", {"items": [1, 2], "table": {"k": 1.5, "j": 2}}),
        text("[1, 2] {'k': 1.5, 'j': 2} 'a' None"),
    ),
    (
        "collections all",
        call("collections", {"items": [], "table": {}, "mode": 3, "raw": [1, "a", {}]}),
        text("[] {} 3 [1, 'a', {}]"),
    ),
    ("collections raw null", call("collections", {"items": [], "table": {}, "raw": None}), text("[] {} 'a' None")),
    ("collections bad choice", call("collections", {"items": [], "table": {}, "mode": "c"}), invalid("collections")),
    (
        "collections true is not 3",
        call("collections", {"items": [], "table": {}, "mode": True}),
        invalid("collections"),
    ),
    ("collections item string", call("collections", {"items": [1, "2"], "table": {}}), invalid("collections")),
    ("collections item 2.0", call("collections", {"items": [1, 2.0], "table": {}}), invalid("collections")),
    ("collections item bool", call("collections", {"items": [False], "table": {}}), invalid("collections")),
    ("collections value string", call("collections", {"items": [], "table": {"k": "1"}}), invalid("collections")),
    ("collections table list", call("collections", {"items": [], "table": []}), invalid("collections")),
    ("collections missing", call("collections", {"items": []}), invalid("collections")),
    ("untyped anything", call("untyped", {"x": {"a": [1, None]}}), text("({'a': [1, None]}, 1, 2)")),
    ("untyped all", call("untyped", {"x": "s", "y": [True], "z": 5}), text("('s', [True], 5)")),
    ("untyped annotated int", call("untyped", {"x": 1, "z": "5"}), invalid("untyped")),
    ("untyped missing", call("untyped", {"y": 1}), invalid("untyped")),
    ("explicit open schema", call("explicit", {"n": 1, "extra": True}), text("extra,n")),
    ("explicit minimum", call("explicit", {"n": -1}), invalid("explicit")),
    ("explicit 2.0", call("explicit", {"n": 2.0}), invalid("explicit")),
    ("explicit missing", call("explicit", {}), invalid("explicit")),
    ("flat", call("flat", {"q": "abc"}), text("cba")),
    ("flat extra", call("flat", {"q": "abc", "r": 1}), invalid("flat")),
    ("no parameters", call('say "hi"', {}), text("hi")),
    ("no parameters extra", call('say "hi"', {"a": 1}), invalid('say "hi"')),
    ("async tool", call("shout", {"text": "quiet"}), text("QUIET")),
]


@pytest.mark.parametrize(("line", "expected"), [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_arguments(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=CATALOGUE) == expected


def test_overflowing_numbers_are_invalid_in_nested_arguments(run) -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"collections","arguments":'
        b'{"items":[],"table":{"k":1e400}}}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"untyped","arguments":'
        b'{"x":[[{"a":-1e999}]]}}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"scalars","arguments":'
        b'{"s":"x","i":1,"f":1e400,"b":true,"n":null}}}\n',
    ]
    expected = invalid("collections") + invalid("untyped") + invalid("scalars")
    assert run(b"".join(lines), catalogue=CATALOGUE) == expected


def test_deeply_nested_arguments_are_validated(run) -> None:
    local = Server("deep")

    @local.tool()
    def depth(x: list) -> str:
        level = 0
        while type(x) is list:
            x, level = x[0], level + 1
        return f"{level} {x!r}"

    nested = b"[" * 1000 + b"2.0" + b"]" * 1000
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"depth","arguments":{"x":' + nested
    assert run(line + b"}}}\n", catalogue=local.catalogue()) == text("1000 2.0")


# -- return values ---------------------------------------------------------------------------

RESULTS: list[tuple[str, bytes]] = [
    ("int", text("42")),
    ("big", text("1180591620717411303424")),
    ("float", text("3")),
    ("fraction", text("0.30000000000000004")),
    ("huge", text("1e+21")),
    ("tiny", text("1e-7")),
    ("inf", text("Infinity")),
    ("nan", text("NaN")),
    ("true", text("true")),
    ("false", text("false")),
    ("none", result('{"content":[]}')),
    ("text", text("héllo\n😀")),
    (
        "blocks",
        result('{"content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}'),
    ),
    ("empty", result('{"content":[]}')),
    ("list", text('[1,"a",null]')),
    ("dict", text('{"b":1,"a":[true]}')),
    ("set", tool_error("Tool give failed")),
    ("bytes", tool_error("Tool give failed")),
    ("tuple", tool_error("Tool give failed")),
]


@pytest.mark.parametrize(("kind", "expected"), RESULTS, ids=[r[0] for r in RESULTS])
def test_return_values(run, kind: str, expected: bytes) -> None:
    assert run(call("give", {"kind": kind}), catalogue=CATALOGUE) == expected


def test_text_is_written_as_is(run) -> None:
    assert run(call("give", {"kind": "text"}), catalogue=CATALOGUE) == (
        '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"héllo\\n😀"}]}}\n'.encode()
    )


def test_output_schema_gives_structured_content(run) -> None:
    assert run(call("total", {"values": [1, 2, 3]}), catalogue=CATALOGUE) == result(
        '{"content":[{"type":"text","text":"{\\"total\\":6}"}],"structuredContent":{"total":6}}'
    )


@pytest.mark.parametrize("mode", ["mismatch", "text"])
def test_output_schema_violations_are_tool_failures(run, capsys, mode: str) -> None:
    assert run(call("total", {"values": [1], "mode": mode}), catalogue=CATALOGUE) == tool_error("Tool total failed")
    assert "output schema" in capsys.readouterr().err


# -- errors ----------------------------------------------------------------------------------


def test_tool_error_shows_its_message(run) -> None:
    assert run(call("fail", {"how": "tool error"}), catalogue=CATALOGUE) == tool_error("no such city: Atlantis")


def test_tool_error_without_message(run) -> None:
    assert run(call("fail", {"how": "empty tool error"}), catalogue=CATALOGUE) == tool_error("")


@pytest.mark.parametrize(("how", "logged"), [("value error", "ValueError: boom"), ("exit", "SystemExit: 3")])
def test_other_exceptions_name_the_tool_log_a_traceback_and_serving_goes_on(run, capsys, how, logged) -> None:
    data = call("fail", {"how": how}) + request("ping")
    assert run(data, catalogue=CATALOGUE) == tool_error("Tool fail failed") + result("{}")
    err = capsys.readouterr().err
    assert "tool 'fail' failed" in err
    assert "Traceback (most recent call last)" in err
    assert logged in err


def test_unknown_tool_and_bad_params(run) -> None:
    data = call("nope", {}) + request("tools/call", {"arguments": {}}) + request("tools/call")
    expected = error(-32602, "Unknown tool") + error(-32602, "Invalid params") + error(-32602, "Invalid params")
    assert run(data, catalogue=CATALOGUE) == expected


# -- resources -------------------------------------------------------------------------------


READS: list[tuple[str, bytes, bytes]] = [
    (
        "text",
        read("file:///notes/readme.md"),
        result('{"contents":[{"uri":"file:///notes/readme.md","mimeType":"text/markdown","text":"# Title\\n"}]}'),
    ),
    (
        "bytes are a base64 blob",
        read("data://logo"),
        result('{"contents":[{"uri":"data://logo","mimeType":"image/png","blob":"iVBORw0KGgoA"}]}'),
    ),
    (
        "guessed mime type",
        read("file:///data.json"),
        result('{"contents":[{"uri":"file:///data.json","mimeType":"application/json","text":"{\\"a\\":1}"}]}'),
    ),
    (
        "async",
        read("mem://async"),
        result('{"contents":[{"uri":"mem://async","mimeType":"text/plain","text":"async text"}]}'),
    ),
    ("unknown", read("mem://nope"), error(-32002, "Resource not found")),
    ("traversal", read("file:///notes/../data.json"), error(-32002, "Resource not found")),
    ("not a string", read(["data://logo"]), error(-32602, "Invalid params")),
]


@pytest.mark.parametrize(("line", "expected"), [c[1:] for c in READS], ids=[c[0] for c in READS])
def test_resources_read(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=CATALOGUE) == expected


@pytest.mark.parametrize("uri", ["mem://broken", "mem://wrong-type"])
def test_failing_resource_is_an_internal_error_and_serving_goes_on(run, capsys, uri: str) -> None:
    data = read(uri) + request("ping")
    assert run(data, catalogue=CATALOGUE) == error(-32603, "Internal error") + result("{}")
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_a_resource_may_answer_a_json_rpc_error_of_its_own(run) -> None:
    local = Server("errors")

    @local.resource("mem://gone")
    def gone() -> str:
        raise RpcError(-32002, "Resource not found")

    @local.resource("mem://busy")
    def busy() -> str:
        raise RpcError(-32000, "Busy, try again")

    data = read("mem://gone") + read("mem://busy")
    assert run(data, catalogue=local.catalogue()) == error(-32002, "Resource not found") + error(
        -32000, "Busy, try again"
    )


# -- registration ----------------------------------------------------------------------------


def test_decorators_return_the_function_unchanged() -> None:
    assert scalars("a", 1, 2.0, True, None) == "str int float bool NoneType"
    assert readme() == "# Title\n"


def test_duplicate_names_are_refused() -> None:
    local = Server("dups")

    @local.tool()
    def one() -> str:
        return "1"

    with pytest.raises(ValueError, match="already registered"):
        local.tool(name="one")(lambda: "2")

    local.resource("mem://x")(lambda: "x")
    with pytest.raises(ValueError, match="already registered"):
        local.resource("mem://x")(lambda: "y")


class Point:
    """Not a JSON type."""


def test_unsupported_type_hint_is_refused_at_registration() -> None:
    local = Server("hints")

    with pytest.raises(TypeError, match="cannot infer a JSON Schema"):

        @local.tool()
        def where(p: Point) -> str:
            return ""


def test_none_default_admits_null_in_every_schema_shape() -> None:
    local = Server("nulls")

    @local.tool()
    def nulls(a: int = None, b: list[int] | dict[str, int] = None, c: Literal["x"] = None, d: Any = None) -> str:
        return ""

    assert local.tools["nulls"].input_schema["properties"] == {
        "a": {"type": ["integer", "null"], "default": None},
        "b": {
            "anyOf": [
                {"type": "array", "items": {"type": "integer"}},
                {"type": "object", "additionalProperties": {"type": "integer"}},
                {"type": "null"},
            ],
            "default": None,
        },
        "c": {"enum": ["x", None], "default": None},
        "d": {"default": None},
    }
