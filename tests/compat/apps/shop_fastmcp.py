"""A shop in FastMCP's style: rich argument types and structured output."""

import datetime
import enum
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Literal
from uuid import UUID

from fastmcp import FastMCP
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

mcp = FastMCP("Shop", instructions="Look up and order goods.")


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


class Address(BaseModel):
    street: str
    city: str = Field(description="City name")
    zip: Annotated[str, Field(pattern=r"^\d{5}$")]


class Customer(BaseModel):
    """A customer and where to deliver."""

    name: str
    address: Address
    tags: list[str] = []


class Line(TypedDict):
    sku: str
    qty: int


@dataclass
class Point:
    x: float
    y: float


class Receipt(BaseModel):
    """What an order cost."""

    order_id: UUID
    total: Decimal
    items: int


class Stock(TypedDict):
    sku: str
    available: int


@dataclass
class Weather:
    temperature: float
    conditions: str


@mcp.tool
def deliver(customer: Customer, when: datetime.date, size: Size = Size.SMALL) -> str:
    """Deliver to a customer on a day."""
    return f"{size.value} parcel to {customer.address.city} for {customer.name} on {when.isoformat()}"


@mcp.tool
def pack(lines: list[Line], mode: Literal["box", "bag"] = "box") -> str:
    """Pack order lines."""
    return f"{sum(line['qty'] for line in lines)} items in a {mode}"


@mcp.tool
def distance(a: Point, b: Point) -> float:
    """Distance between two points."""
    return ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5


@mcp.tool
def checkout(order_id: UUID, price: Decimal, quantity: int = 1) -> Receipt:
    """Check out an order."""
    return Receipt(order_id=order_id, total=price * quantity, items=quantity)


@mcp.tool
def stock(sku: str) -> Stock:
    """Stock of one product."""
    return Stock(sku=sku, available=len(sku))


@mcp.tool
def weather(city: str) -> Weather:
    """The weather of a city."""
    return Weather(temperature=21.5, conditions=f"sunny in {city}")


@mcp.tool
def prices(skus: list[str]) -> dict[str, float]:
    """Prices by product."""
    return {sku: len(sku) * 1.5 for sku in skus}


@mcp.tool
def count(words: tuple[str, int]) -> int:
    """Count a word a number of times."""
    return len(words[0]) * words[1]


@mcp.tool
def names(prefix: str | None = None, limit: int | None = 3) -> list[str]:
    """Product names."""
    return [f"{prefix or 'item'}-{n}" for n in range(limit or 0)]


@mcp.tool
def schedule(at: datetime.datetime, every: datetime.timedelta | None = None) -> dict:
    """An untyped dict result."""
    return {"at": at.isoformat(), "every": str(every)}


@mcp.tool(output_schema=None)
def catalogue() -> list[str]:
    """The catalogue, without an output schema."""
    return ["tea", "coffee"]


@mcp.tool
def nested(matrix: list[list[int]], labels: dict[str, list[float]]) -> int:
    """Nested containers."""
    return sum(map(sum, matrix)) + len(labels)


@mcp.tool
def bad_output() -> Receipt:
    """Returns what its annotation does not allow."""
    return {"order_id": "not-a-uuid", "total": "x", "items": 1}  # type: ignore[return-value]


if __name__ == "__main__":
    mcp.run()
