"""A lax (``strict=False``) typed tool with a flat scalar schema stays on the compiled engine's fast path
where its checks judge exactly, and falls back to pydantic where they refuse: the bytes of both engines
are pydantic's answers."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field
from support.wire import call, result, text

from shipcode_mcp import Server


def lax_app() -> Server:
    app = Server("lax", strict=False)

    @app.tool()
    def scale(qty: int, factor: float = 1.5, label: str = "x", loud: bool = False) -> str:
        return f"{label}:{qty * factor!r}:{type(factor).__name__}:{loud}"

    @app.tool()
    def bounded(qty: Annotated[int, Field(ge=1)]) -> int:
        return qty

    @app.tool()
    def fielded(qty: int = Field(3, description="how many")) -> int:
        return qty

    return app


def test_only_the_exactly_judged_tool_is_fast() -> None:
    catalogue = lax_app().catalogue()
    fast = {tool.name: tool for tool in catalogue.fast_tools}
    assert list(fast) == ["scale"]
    assert fast["scale"].fallback is True
    assert fast["scale"].fields == (
        ("qty", "integer", True),
        ("factor", "number", False),
        ("label", "string", False),
        ("loud", "boolean", False),
    )


def test_a_native_flat_tool_does_not_fall_back() -> None:
    app = Server("native")

    @app.tool()
    def add(a: int, b: int) -> int:
        return a + b

    assert [tool.fallback for tool in app.catalogue().fast_tools] == [False]


CALLS = [
    # accepted by the flat checks, as pydantic would pass them: an integer for a float is a float
    (call("scale", {"qty": 2}), text("x:3.0:float:False")),
    (call("scale", {"qty": 2, "factor": 2}), text("x:4.0:float:False")),
    (call("scale", {"qty": 2, "factor": 0.25, "label": "y", "loud": True}), text("y:0.5:float:True")),
    # refused by the flat checks, accepted by pydantic's lax mode
    (call("scale", {"qty": "2"}), text("x:3.0:float:False")),
    (call("scale", {"qty": 2.0, "loud": "yes"}), text("x:3.0:float:True")),
    (call("scale", {"qty": 2, "loud": 1}), text("x:3.0:float:True")),
    # refused by both: pydantic's reasons
    (
        call("scale", {"qty": "two"}),
        text(
            "Invalid arguments for scale: qty: Input should be a valid integer, unable to parse string as an integer",
            is_error=True,
        ),
    ),
    (call("scale", {}), text("Invalid arguments for scale: qty: Field required", is_error=True)),
    (
        call("scale", {"qty": 1, "extra": 1}),
        text("Invalid arguments for scale: extra: Extra inputs are not permitted", is_error=True),
    ),
    (call("scale", []), text("Invalid arguments for scale: Input should be an object", is_error=True)),
    # not fast: pydantic's constraint and Field default
    (
        call("bounded", {"qty": 0}),
        text("Invalid arguments for bounded: qty: Input should be greater than or equal to 1", is_error=True),
    ),
    (call("bounded", {"qty": "4"}), result(b'{"content":[{"type":"text","text":"4"}]}')),
    (call("fielded", {}), result(b'{"content":[{"type":"text","text":"3"}]}')),
]


@pytest.mark.parametrize(("line", "expected"), CALLS)
def test_calls_answer_as_pydantic(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=lax_app().catalogue()) == expected
