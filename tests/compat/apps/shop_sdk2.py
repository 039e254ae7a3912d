"""A shop in the official SDK's style (mcp 2.x, MCPServer): rich argument types and structured output."""

import datetime
import enum
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Literal
from uuid import UUID

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

server = MCPServer("Shop", instructions="Look up and order goods.")


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


@server.tool()
def deliver(customer: Customer, when: datetime.date, size: Size = Size.SMALL) -> str:
    """Deliver to a customer on a day."""
    return f"{size.value} parcel to {customer.address.city} for {customer.name} on {when.isoformat()}"


@server.tool()
def pack(lines: list[Line], mode: Literal["box", "bag"] = "box") -> str:
    """Pack order lines."""
    return f"{sum(line['qty'] for line in lines)} items in a {mode}"


@server.tool()
def distance(a: Point, b: Point) -> float:
    """Distance between two points."""
    return ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5


@server.tool()
def checkout(order_id: UUID, price: Decimal, quantity: int = 1) -> Receipt:
    """Check out an order."""
    return Receipt(order_id=order_id, total=price * quantity, items=quantity)


@server.tool()
def stock(sku: str) -> Stock:
    """Stock of one product."""
    return Stock(sku=sku, available=len(sku))


@server.tool()
def weather(city: str) -> Weather:
    """The weather of a city."""
    return Weather(temperature=21.5, conditions=f"sunny in {city}")


@server.tool()
def prices(skus: list[str]) -> dict[str, float]:
    """Prices by product."""
    return {sku: len(sku) * 1.5 for sku in skus}


@server.tool()
def count(words: tuple[str, int]) -> int:
    """Count a word a number of times."""
    return len(words[0]) * words[1]


@server.tool()
def names(prefix: str | None = None, limit: int | None = 3) -> list[str]:
    """Product names."""
    return [f"{prefix or 'item'}-{n}" for n in range(limit or 0)]


@server.tool()
def schedule(at: datetime.datetime, every: datetime.timedelta | None = None) -> dict:
    """An untyped dict result."""
    return {"at": at.isoformat(), "every": str(every)}


@server.tool(structured_output=False)
def catalogue() -> list[str]:
    """The catalogue, unstructured."""
    return ["tea", "coffee"]


@server.tool()
def nested(matrix: list[list[int]], labels: dict[str, list[float]]) -> int:
    """Nested containers."""
    return sum(map(sum, matrix)) + len(labels)


@server.tool()
def bad_output() -> Receipt:
    """Returns what its annotation does not allow."""
    return {"order_id": "not-a-uuid", "total": "x", "items": 1}  # type: ignore[return-value]


if __name__ == "__main__":
    server.run()
