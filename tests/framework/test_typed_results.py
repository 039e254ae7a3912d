"""Tool results the way the ecosystem returns them, on both engines: structured output from return
annotations (the official SDK's schemas and values), ``Image``/``Audio``/``File``, and the official
SDK's content objects returned as they are. Answers are compared whole, in-process and over stdio."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import mcp.types as sdk
import orjson
import pytest
from support.wire import call, result, text
from test_typed import sdk_metadata, served_over_stdio
from typed import Box, Item, app, boxed, double, items, point, priced

from shipcode_mcp import Audio, File, Image, Server

CATALOGUE = app.catalogue()
PNG = b"\x89PNG\r\n\x1a\nfake"
B64 = base64.b64encode(PNG).decode()


def structured(body_text: str, content: str, rid: int = 1) -> bytes:
    """The result of a call whose text block is ``body_text`` and structured content ``content``."""
    block = '{"type":"text","text":' + orjson.dumps(body_text).decode() + "}"
    return result('{"content":[' + block + '],"structuredContent":' + content + "}", rid)


# -- structured output -----------------------------------------------------------------------

STRUCTURED = [
    (call("boxed", {"w": 2}), structured('{"w":2.0,"h":4.0}', '{"w":2.0,"h":4.0}')),
    (
        call("items", {"n": 2}),
        structured(
            '[{"name":"i0","qty":0},{"name":"i1","qty":1}]', '{"result":[{"name":"i0","qty":0},{"name":"i1","qty":1}]}'
        ),
    ),
    (call("point", {"x": 2}), structured('{"x":2,"y":-2}', '{"x":2,"y":-2}')),
    (call("priced", {"name": "tea"}), structured('{"tea":"1.50"}', '{"tea":"1.50"}')),
    (call("double", {"n": 4}), structured("8", '{"result":8}')),
    # structured_output=False: a model's JSON as text, nothing more.
    (call("unstructured", {"name": "a"}), text('{"name":"a","qty":1}')),
]


@pytest.mark.parametrize(("line", "expected"), STRUCTURED)
def test_structured_output(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=CATALOGUE) == expected


def test_structured_output_over_stdio(run_process) -> None:
    served_over_stdio(run_process, STRUCTURED)


@pytest.mark.parametrize(
    ("func", "value"),
    [(boxed, Box(2.0, 4.0)), (items, [Item(name="a", qty=2)]), (point, {"x": 1, "y": 2}), (priced, None), (double, 8)],
)
def test_output_schemas_and_values_are_the_official_sdks(func: Any, value: Any) -> None:
    metadata = sdk_metadata(func)
    tool = CATALOGUE.tools[func.__name__]
    assert tool.output_schema == metadata.output_schema
    if value is not None:
        body = orjson.loads(tool.encode(value))
        assert body["structuredContent"] == metadata.convert_result(value).structured_content


def test_a_result_that_does_not_fit_its_annotation_is_a_tool_failure(run, capsys) -> None:
    assert run(call("point", {"x": -1}), catalogue=CATALOGUE) == text("Tool point failed", is_error=True)
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ValueError: the result does not match the output schema: y: Field required"
    )


def test_plain_annotations_stay_unstructured_and_content_annotations_too() -> None:
    local = Server("plain")
    local.tool()(lambda: "x")

    @local.tool()
    def named() -> str:
        return "x"

    @local.tool()
    def table() -> dict[str, int]:
        return {}

    @local.tool()
    def picture() -> Image:
        return Image(data=PNG)

    @local.tool()
    def blocks() -> list[sdk.TextContent | sdk.ImageContent]:
        return []

    @local.tool()
    def whole() -> sdk.CallToolResult:
        return sdk.CallToolResult(content=[])

    assert [tool.output_schema for tool in local.tools.values()] == [None] * 6


def test_structured_output_asked_for_without_an_annotation_is_refused() -> None:
    local = Server("asked")
    with pytest.raises(TypeError) as refused:
        local.tool(structured_output=True)(lambda: 1)
    assert str(refused.value) == "tool '<lambda>': structured output needs a return annotation of data"


# -- Image, Audio, File and the official SDK's objects ---------------------------------------


def block_result(*blocks: dict[str, Any]) -> bytes:
    return result(b'{"content":' + orjson.dumps(list(blocks)) + b"}")


def returning(value: Any) -> Any:
    """A catalogue whose tool ``give`` returns ``value`` (annotated ``Any``: no structured output)."""
    local = Server("give")

    @local.tool()
    def give() -> Any:
        return value

    return local.catalogue()


def embedded(uri: str, mime_type: str, **data: str) -> bytes:
    """The result holding one embedded resource (``text=`` or ``blob=``)."""
    return block_result({"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, **data}})


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "note.wav").write_bytes(b"RIFF")
    (tmp_path / "notes.txt").write_text("caf\u00e9\n", encoding="utf-8")
    (tmp_path / "page.bin").write_bytes(b"\xff\x00")
    return tmp_path


def media_cases(folder: Path) -> list[tuple[Any, bytes]]:
    image = {"type": "image", "data": B64, "mimeType": "image/png"}
    return [
        (Image(data=PNG), block_result(image)),
        (Image(path=folder / "chart.png"), block_result(image)),
        (Image(data=PNG, format="JPEG"), block_result({**image, "mimeType": "image/jpeg"})),
        (
            Image(data=PNG, annotations={"audience": ["user"]}),
            block_result({**image, "annotations": {"audience": ["user"]}}),
        ),
        (
            Image(data=PNG, annotations=sdk.Annotations(priority=0.5)),
            block_result({**image, "annotations": {"priority": 0.5}}),
        ),
        (Audio(path=folder / "note.wav"), block_result({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})),
        (Audio(data=b"ID3", format="mpeg"), block_result({"type": "audio", "data": "SUQz", "mimeType": "audio/mpeg"})),
        (File(path=folder / "notes.txt"), embedded((folder / "notes.txt").as_uri(), "text/plain", text="caf\u00e9\n")),
        (
            File(path=folder / "page.bin"),
            embedded((folder / "page.bin").as_uri(), "application/octet-stream", blob="/wA="),
        ),
        (
            File(data=b"a,b\n", format="csv", name="rows"),
            embedded("file:///rows.csv", "application/csv", blob="YSxiCg=="),
        ),
        (File(data=b"\xe9", format="txt"), embedded("file:///resource.plain", "text/plain", text="\u00e9")),
        # The official SDK's objects, dumped by alias without None members.
        (sdk.TextContent(type="text", text="hi"), text("hi")),
        (sdk.ImageContent(type="image", data=B64, mime_type="image/png"), block_result(image)),
        (
            sdk.EmbeddedResource(
                type="resource",
                resource=sdk.TextResourceContents(uri="memo://1", mime_type="text/plain", text="memo"),
            ),
            embedded("memo://1", "text/plain", text="memo"),
        ),
        (
            sdk.ResourceLink(type="resource_link", uri="file:///a.txt", name="a"),
            block_result({"name": "a", "uri": "file:///a.txt", "type": "resource_link"}),
        ),
        (
            [sdk.TextContent(type="text", text="see"), Image(data=PNG), {"type": "text", "text": "as given"}],
            block_result({"type": "text", "text": "see"}, image, {"type": "text", "text": "as given"}),
        ),
        (
            sdk.CallToolResult(
                content=[sdk.TextContent(type="text", text="no")], structured_content={"n": 1}, is_error=True
            ),
            result('{"content":[{"type":"text","text":"no"}],"structuredContent":{"n":1},"isError":true}'),
        ),
        # A model of the app's, without structured output: its JSON (None members kept) as text.
        (sdk.Annotations(priority=1.0), text('{"audience":null,"priority":1.0,"lastModified":null}')),
    ]


@pytest.mark.parametrize("case", range(18))
def test_media_and_content_objects(run, files: Path, case: int) -> None:
    value, expected = media_cases(files)[case]
    assert run(call("give"), catalogue=returning(value)) == expected


def test_media_takes_path_or_data() -> None:
    for arguments in ({}, {"path": "a.png", "data": b""}):
        with pytest.raises(ValueError) as refused:
            Image(**arguments)
        assert str(refused.value) == "Image() takes either path= or data=, exactly one"


def test_a_returned_call_tool_result_leaves_its_result_type_to_the_protocol_era(run) -> None:
    from test_eras import modern

    returned = sdk.CallToolResult(content=[sdk.TextContent(type="text", text="no")], is_error=True)
    assert run(modern("tools/call", {"name": "give"}), catalogue=returning(returned)) == result(
        '{"content":[{"type":"text","text":"no"}],"isError":true,"resultType":"complete",'
        '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"give","version":"0.1.0"}}}'
    )


def test_a_structured_tool_may_return_a_whole_result_as_it_is(run) -> None:
    local = Server("whole")

    @local.tool()
    def maybe(n: int) -> Item:
        if n < 0:
            return sdk.CallToolResult(content=[sdk.TextContent(type="text", text="negative")], is_error=True)
        return Item(name="x", qty=n)

    lines = call("maybe", {"n": -1}) + call("maybe", {"n": 2}, rid=2)
    assert run(lines, catalogue=local.catalogue()) == result(
        '{"content":[{"type":"text","text":"negative"}],"isError":true}'
    ) + structured('{"name":"x","qty":2}', '{"name":"x","qty":2}', rid=2)


def test_a_framework_may_prepare_the_validator_and_the_structured_result(run) -> None:
    """What a compatibility layer does: the official SDK's schemas and lax, open validation, its own text block."""
    from shipcode_mcp import Tool
    from shipcode_mcp.results import text_result
    from shipcode_mcp.typed import Arguments, StructuredResult

    class Indented(StructuredResult):
        def content(self, value: object, structured: Any) -> bytes:
            return text_result(orjson.dumps(structured, option=orjson.OPT_INDENT_2).decode())

    def add(a: int, b: int) -> int:
        return a + b

    validator = Arguments(add, "add", strict=False, closed=False, json_strings=True)
    local = Server("prepared")
    tool = local.add_tool(Tool(add, validator=validator, structured=Indented.of(add, "add", None)))
    metadata = sdk_metadata(add)
    assert (tool.input_schema, tool.output_schema) == (
        metadata.arg_model.model_json_schema(by_alias=True),
        metadata.output_schema,
    )
    assert run(call("add", {"a": "2", "b": 3, "c": 1}), catalogue=local.catalogue()) == structured(
        '{\n  "result": 5\n}', '{"result":5}'
    )
