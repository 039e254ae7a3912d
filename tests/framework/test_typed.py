"""Tool arguments typed through pydantic, on both engines: schemas, conversion, strict and lax
validation, the reasons of invalid arguments, and pydantic imported only when an app needs it.

The app is ``tests/apps/typed.py``; answers are compared whole, in-process and over stdio.
"""

from __future__ import annotations

import datetime
import enum
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal
from uuid import UUID

import annotated_types
import orjson
import pytest
from pydantic import BaseModel, Field
from support.wire import call, request, result, text
from typing_extensions import TypedDict

from shipcode_mcp import Context, Server
from shipcode_mcp.schema import FlatShape
from shipcode_mcp.typed import Arguments

APP_FILE = Path(__file__).resolve().parents[1] / "apps" / "typed.py"
sys.path.insert(0, str(APP_FILE.parent))
from typed import Item, app  # noqa: E402

CATALOGUE = app.catalogue()

ORDER_LISTING = (
    '{"name":"order","description":"Place an order","inputSchema":{"$defs":{"Color":{"enum":["red","blue"],'
    '"title":"Color","type":"string"},"Item":{"description":"One line of an order.","properties":{"name":'
    '{"title":"Name","type":"string"},"qty":{"default":1,"title":"Qty","type":"integer"}},"required":["name"],'
    '"title":"Item","type":"object"}},"additionalProperties":false,"properties":{"item":{"$ref":"#/$defs/Item"},'
    '"qty":{"description":"how many","minimum":1,"title":"Qty","type":"integer"},"color":{"$ref":"#/$defs/Color",'
    '"default":"red"},"when":{"anyOf":[{"format":"date","type":"string"},{"type":"null"}],"default":null,'
    '"title":"When"},"note":{"default":"none","description":"a note","maxLength":8,"title":"Note","type":"string"}},'
    '"required":["item","qty"],"title":"orderArguments","type":"object"}}'
)
FLAT_LISTING = (
    '{"name":"flat","description":"Plain hints: today\'s schema, the compiled engine\'s fast path","inputSchema":'
    '{"type":"object","properties":{"n":{"type":"integer"},"ratio":{"type":"number","default":0.5}},'
    '"required":["n"],"additionalProperties":false}}'
)
UUID_TEXT = "12345678-1234-5678-1234-567812345678"
SHAPES = {
    "point": {"x": 1, "y": 2},
    "box": {"w": 2},
    "pair": [1, "a"],
    "id": UUID_TEXT,
    "amount": "1.50",
    "at": "2024-01-02T03:04:05",
    "alarm": "07:30",
    "choice": 3,
}


def invalid(tool: str, reasons: str) -> bytes:
    return text(f"Invalid arguments for {tool}: {reasons}", is_error=True)


def tool_listing(name: str) -> str:
    """One tool's entry of ``tools/list``."""
    return orjson.dumps(CATALOGUE.tools[name].listing()).decode()


# -- schemas ---------------------------------------------------------------------------------


def test_a_typed_tool_lists_the_schema_pydantic_gives(run) -> None:
    assert tool_listing("order") == ORDER_LISTING
    listings = ",".join(tool_listing(name) for name in CATALOGUE.tools)
    assert run(request("tools/list"), catalogue=CATALOGUE) == result('{"tools":[' + listings + "]}")


def test_plain_hints_keep_todays_schema_and_the_fast_path() -> None:
    assert tool_listing("flat") == FLAT_LISTING
    assert type(CATALOGUE.tools["flat"].validate) is FlatShape
    # Typed arguments, lax validation and structured output are never checked or encoded in C.
    assert [tool.name for tool in CATALOGUE.fast_tools] == ["flat", "unstructured"]


def sdk_metadata(func: Any) -> Any:
    """The official SDK's (1.x or 2.x) metadata of a tool function: its argument model, output schema..."""
    try:
        from mcp.server.mcpserver.utilities.func_metadata import func_metadata
    except ImportError:
        from mcp.server.fastmcp.utilities.func_metadata import func_metadata
    return func_metadata(func)


def sdk_arguments_schema(func: Any) -> dict[str, Any]:
    """The input schema the official SDK lists for ``func``."""
    return sdk_metadata(func).arg_model.model_json_schema(by_alias=True)


class Shade(enum.IntEnum):
    LIGHT = 1
    DARK = 2


class Part(BaseModel):
    name: str = Field(description="the part's name")
    tags: list[str] = []


class Where(TypedDict):
    lat: float
    lon: float


@dataclass
class Size:
    w: int
    h: int = 1


def everything(
    part: Part,
    qty: Annotated[int, Field(ge=1, le=99, description="how many")],
    shade: Shade = Shade.LIGHT,
    when: datetime.datetime | None = None,
    day: datetime.date = datetime.date(2024, 1, 1),
    alarm: datetime.time | None = None,
    note: str = Field("-", description="a note", max_length=20),
    where: Where | None = None,
    size: Size | None = None,
    path: tuple[int, ...] = (),
    pair: tuple[str, float] | None = None,
    id: UUID | None = None,
    price: Decimal = Decimal("0"),
    mode: Literal["fast", "slow"] = "fast",
    nested: dict[str, list[Part]] | None = None,
    json: int = 0,
    untyped=None,
) -> str:
    return ""


def test_open_lax_arguments_list_exactly_the_official_sdks_schema() -> None:
    assert Arguments(everything, "everything", strict=False, closed=False).schema == sdk_arguments_schema(everything)


def test_closed_arguments_add_only_additional_properties_false_at_the_root() -> None:
    closed = Arguments(everything, "everything").schema
    assert closed == {**sdk_arguments_schema(everything), "additionalProperties": False}
    assert list(closed) == sorted(closed)  # where pydantic puts its keys


# -- calls -----------------------------------------------------------------------------------

CALLS = [
    # Converted: a model instance, an Enum member, a date; a Field default is its value.
    (
        call("order", {"item": {"name": "tea"}, "qty": 2, "color": "blue", "when": "2024-01-02"}),
        text("Item(name='tea', qty=1) 2 <Color.BLUE: 'blue'> datetime.date(2024, 1, 2) 'none'"),
    ),
    (
        call("order", {"item": {"name": "tea", "qty": 3}, "qty": 1}),
        text("Item(name='tea', qty=3) 1 <Color.RED: 'red'> None 'none'"),
    ),
    (
        call("shapes", SHAPES),
        text(
            f"{{'x': 1, 'y': 2}} Box(w=2.0, h=1.0) (1, 'a') UUID('{UUID_TEXT}') Decimal('1.50') "
            "datetime.datetime(2024, 1, 2, 3, 4, 5) datetime.time(7, 30) 3"
        ),
    ),
    (
        call("shapes", {**SHAPES, "point": {"x": 1, "y": 2, "z": 3}, "choice": "b"}),  # a TypedDict ignores extras
        text(
            f"{{'x': 1, 'y': 2}} Box(w=2.0, h=1.0) (1, 'a') UUID('{UUID_TEXT}') Decimal('1.50') "
            "datetime.datetime(2024, 1, 2, 3, 4, 5) datetime.time(7, 30) 'b'"
        ),
    ),
    (
        call("groups", {"table": {"a": [{"name": "x"}], "b": []}, "json": 3}),
        text("{'a': [Item(name='x', qty=1)], 'b': []} 3"),
    ),
    # Constraints and the reasons: each argument named with pydantic's message.
    (
        call("order", {"item": {"name": "tea"}, "qty": -5}),
        invalid("order", "qty: Input should be greater than or equal to 1"),
    ),
    (
        call("order", {"item": {"name": 5}, "qty": 0, "extra": True}),
        invalid(
            "order",
            "item.name: Input should be a valid string; qty: Input should be greater than or equal to 1; "
            "extra: Extra inputs are not permitted",
        ),
    ),
    (
        call("order", {"item": {"name": "tea"}, "qty": 1, "extra": 1}),
        invalid("order", "extra: Extra inputs are not permitted"),
    ),
    (
        call("order", {"item": {"name": "tea"}, "qty": 1, "note": "much too long"}),
        invalid("order", "note: String should have at most 8 characters"),
    ),
    (call("order"), invalid("order", "item: Field required; qty: Field required")),
    (call("order", [1]), invalid("order", "Input should be an object")),
    (
        call("order", {"item": {"name": "tea"}, "qty": 1, "color": "green"}),
        invalid("order", "color: Input should be 'red' or 'blue'"),
    ),
    (
        call("shapes", {**SHAPES, "pair": [1, "a", 2], "id": "nope", "alarm": "25:00"}),
        invalid(
            "shapes",
            "pair: Tuple should have at most 2 items after validation, not 3; id: Input should be a valid UUID, "
            "invalid character: found `n` at 0; alarm: Input should be in a valid time format, hour value is "
            "outside expected range of 0-23",
        ),
    ),
    (
        call("shapes", {"point": {}, "box": {}, "pair": [], "id": 1, "amount": [], "at": 1.5, "alarm": None}),
        invalid(
            "shapes",
            "point.x: Field required; point.y: Field required; box.w: Field required; pair.0: Field required; "
            "pair.1: Field required; and 5 more",
        ),
    ),
    # Strict (the native default): nothing is converted.
    (call("order", {"item": {"name": "tea"}, "qty": "2"}), invalid("order", "qty: Input should be a valid integer")),
    (call("order", {"item": {"name": "tea"}, "qty": 2.0}), invalid("order", "qty: Input should be a valid integer")),
    (call("order", {"item": {"name": "tea"}, "qty": True}), invalid("order", "qty: Input should be a valid integer")),
    (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"order","arguments":'
        b'{"item":{"name":"tea"},"qty":1e400}}}\n',
        invalid("order", "A number overflows a double"),
    ),
    # Lax (strict=False): pydantic's conversions.
    (call("count", {"n": "2", "ratio": 1, "flag": "yes"}), text("2 1.0 True")),
    (call("count", {"n": 2.0, "flag": 1}), text("2 0.5 True")),
    (
        call("count", {"n": 2.5}),
        invalid("count", "n: Input should be a valid integer, got a number with a fractional part"),
    ),
    (call("count", {"n": 1, "other": 1}), invalid("count", "other: Extra inputs are not permitted")),
    # Plain hints: today's check and its contract bytes.
    (call("flat", {"n": 2}), text("2 0.5")),
    (call("flat", {"n": "2"}), text("Invalid arguments for flat", is_error=True)),
]


@pytest.mark.parametrize(("line", "expected"), CALLS)
def test_calls(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=CATALOGUE) == expected


def served_over_stdio(run_process, cases: list[tuple[bytes, bytes]]) -> None:
    """Serve the app file with ``shipcode-mcp``: the lines of ``cases`` in, exactly their answers out."""
    process = run_process(b"".join(line for line, _ in cases), str(APP_FILE))
    assert (process.stdout, process.returncode) == (b"".join(expected for _, expected in cases), 0)


def test_the_same_answers_over_stdio(run_process) -> None:
    served_over_stdio(run_process, CALLS)


def test_a_server_may_choose_lax_validation_for_every_tool(run) -> None:
    local = Server("lax", strict=False)

    @local.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @local.tool(strict=True)
    def exact(a: int) -> int:
        return a

    catalogue = local.catalogue()
    assert [tool.name for tool in catalogue.fast_tools] == ["exact"]  # strict plain hints: as ever
    assert type(catalogue.tools["add"].validate) is Arguments
    assert run(call("add", {"a": "2", "b": 3.0}), catalogue=catalogue) == text("5")
    assert run(call("exact", {"a": "2"}), catalogue=catalogue) == text("Invalid arguments for exact", is_error=True)
    lax = local.add_tool(lambda a: a, name="lambda")  # add_tool follows the server too
    assert lax.strict is False


def test_json_strings_read_as_the_official_sdk_reads_them() -> None:
    def tool(items: list[int], name: str, flag: bool | None = None, when: Any = None) -> str:
        return ""

    arguments = Arguments(tool, "tool", strict=False, closed=False, json_strings=True)
    assert arguments({"items": "[1, 2]", "name": "[1]", "flag": "true", "when": "null"}) == {
        "items": [1, 2],
        "name": "[1]",
        "flag": True,  # "true" stays a string, which lax validation converts
        "when": None,
    }


def test_text_annotations_describe_parameters_on_the_typed_path_and_constraints_apply(run) -> None:
    local = Server("texts")

    @local.tool()
    def visit(
        city: Annotated[str, "city name"],
        day: datetime.date,
        level: Annotated[int, "how high", annotated_types.Ge(1)] = 1,
        note: Annotated[str, "not shown", Field(description="shown")] = "",
    ) -> str:
        return f"{city} {day} {level} {note}"

    assert orjson.dumps(local.tools["visit"].input_schema) == (
        b'{"additionalProperties":false,"properties":{"city":{"description":"city name","title":"City",'
        b'"type":"string"},"day":{"format":"date","title":"Day","type":"string"},"level":{"default":1,'
        b'"description":"how high","minimum":1,"title":"Level","type":"integer"},"note":{"default":"",'
        b'"description":"shown","title":"Note","type":"string"}},"required":["city","day"],'
        b'"title":"visitArguments","type":"object"}'
    )
    lines = call("visit", {"city": "Oslo", "day": "2026-01-31", "level": 0}) + call(
        "visit", {"city": "Oslo", "day": "2026-01-31"}, rid=2
    )
    assert run(lines, catalogue=local.catalogue()) == invalid(
        "visit", "level: Input should be greater than or equal to 1"
    ) + text("Oslo 2026-01-31 1 ", rid=2)


# -- registration ----------------------------------------------------------------------------


class Opaque:
    """No JSON Schema."""


def test_a_type_without_a_schema_is_refused_at_registration() -> None:
    local = Server("hints")
    with pytest.raises(TypeError) as refused:

        @local.tool()
        def where(p: Opaque) -> str:
            return ""

    assert str(refused.value) == f"tool 'where': cannot infer a JSON Schema from the type hint of 'p' ({Opaque!r})"


def test_a_private_parameter_is_refused_on_the_typed_path() -> None:
    local = Server("hints")
    with pytest.raises(TypeError) as refused:
        local.tool(strict=False)(lambda _x, y: 0)
    assert str(refused.value) == "tool '<lambda>': parameter '_x' starts with '_', which pydantic keeps private"


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)


def test_without_pydantic_an_app_that_needs_it_gets_one_clear_error() -> None:
    process = run_python(
        "import sys, datetime\n"
        "sys.modules['pydantic'] = None\n"
        "from shipcode_mcp import Server\n"
        "app = Server('x')\n"
        "app.tool()(lambda plain: 0)\n"
        "try:\n"
        "    @app.tool()\n"
        "    def when(day: datetime.date) -> str: ...\n"
        "except TypeError as error:\n"
        "    print(error)\n"
    )
    assert (process.stdout, process.stderr) == (
        "tool 'when': cannot infer a JSON Schema from the type hint <class 'datetime.date'>; "
        'that needs pydantic: pip install "shipcode-mcp[pydantic]"\n',
        "",
    )


@pytest.mark.parametrize("engine", ["_engine_c", "_engine_py"])
def test_serving_plain_hints_never_imports_pydantic(engine: str) -> None:
    process = run_python(
        "import sys\n"
        "from shipcode_mcp import Server\n"
        f"from shipcode_mcp.{engine} import Engine\n"
        "from shipcode_mcp.defaults import app\n"
        "mine = Server('plain')\n"
        "mine.tool()(lambda a, b=1: f'{a} {b}')\n"
        "for served in (app, mine):\n"
        "    engine = Engine(served.catalogue())\n"
        '    engine.feed(b\'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\\n\')\n'
        '    engine.feed(b\'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add",'
        '"arguments":{"a":1,"b":2}}}\\n\')\n'
        "print([name for name in sys.modules if name.startswith(('pydantic', 'shipcode_mcp.typed'))])\n"
    )
    assert (process.stdout, process.stderr) == ("[]\n", "")


def test_a_typed_tool_may_be_async_take_a_context_or_block(run) -> None:
    local = Server("context")

    @local.tool()
    async def remember(item: Item, ctx: Context) -> Item:
        await ctx.info(item.name)
        return item

    @local.tool(blocking=True)
    def weigh(item: Item) -> float:
        return 1.5

    assert list(local.tools["remember"].input_schema["properties"]) == ["item"]
    lines = call("remember", {"item": {"name": "tea"}}) + call("weigh", {"item": {"name": "tea"}}, rid=2)
    assert run(lines, catalogue=local.catalogue()) == (
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tea"}}\n'
        + result(
            '{"content":[{"type":"text","text":"{\\"name\\":\\"tea\\",\\"qty\\":1}"}],'
            '"structuredContent":{"name":"tea","qty":1}}'
        )
        + text("1.5", rid=2)
    )
