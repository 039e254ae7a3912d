"""An app typed the way the ecosystem writes tools: pydantic models, ``TypedDict``, dataclasses,
``Enum``, dates, ``UUID``, ``Decimal``, ``tuple``, ``Field`` constraints, and return annotations
that give structured output. Each tool answers with what it received, so a test sees the conversion."""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs it below Python 3.12

from shipcode_mcp import Server

app = Server("typed", version="1.0.0")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Item(BaseModel):
    """One line of an order."""

    name: str
    qty: int = 1


class Point(TypedDict):
    x: int
    y: int


@dataclass
class Box:
    w: float
    h: float = 1.0


@app.tool()
def order(
    item: Item,
    qty: Annotated[int, Field(ge=1, description="how many")],
    color: Color = Color.RED,
    when: datetime.date | None = None,
    note: str = Field("none", description="a note", max_length=8),
) -> str:
    """Place an order"""
    return f"{item!r} {qty!r} {color!r} {when!r} {note!r}"


@app.tool()
def shapes(
    point: Point,
    box: Box,
    pair: tuple[int, str],
    id: UUID,
    amount: Decimal,
    at: datetime.datetime,
    alarm: datetime.time,
    choice: Literal["a", "b"] | int,
) -> str:
    """Show what arrives"""
    return " ".join(repr(value) for value in (point, box, pair, id, amount, at, alarm, choice))


@app.tool()
def groups(table: dict[str, list[Item]], json: int = 0) -> str:
    """Nested containers, and a parameter named like a pydantic method"""
    return f"{table!r} {json!r}"


@app.tool(strict=False)
def count(n: int, ratio: float = 0.5, flag: bool = False) -> str:
    """Lax: pydantic converts what it can"""
    return f"{n!r} {ratio!r} {flag!r}"


@app.tool()
def flat(n: int, ratio: float = 0.5) -> str:
    """Plain hints: today's schema, the compiled engine's fast path"""
    return f"{n!r} {ratio!r}"


@app.tool()
def boxed(w: float) -> Box:
    """A dataclass returned: structured output"""
    return Box(w, w * 2)


@app.tool()
def items(n: int) -> list[Item]:
    """A list of models: wrapped as {"result": [...]}"""
    return [Item(name=f"i{index}", qty=index) for index in range(n)]


@app.tool()
def point(x: int) -> Point:
    """A TypedDict returned; a wrong value fails the output check"""
    return {"x": x, "y": -x} if x >= 0 else {"x": x}


@app.tool()
def priced(name: str) -> dict[str, Decimal]:
    """dict[str, T]: structured as it is"""
    return {name: Decimal("1.50")}


@app.tool(structured_output=True)
def double(n: int) -> int:
    """A plain annotation, structured on request"""
    return n * 2


@app.tool(structured_output=False)
def unstructured(name: str) -> Item:
    """A model returned without structured output: its JSON as text"""
    return Item(name=name)
