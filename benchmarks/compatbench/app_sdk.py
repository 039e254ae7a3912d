"""The compat workload's app, written for the official SDK's FastMCP (mcp 1.x) as its users write one: a
pydantic-typed argument, structured output, a Context log call. ``app_fastmcp.py`` is the same app for fastmcp."""

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

mcp = FastMCP("orders")


class Item(BaseModel):
    name: str = Field(min_length=1, description="What is ordered")
    qty: int = Field(ge=1, le=1000, description="How many")
    price: float = Field(ge=0, description="The price of one")


class Quote(BaseModel):
    first: str
    lines: int
    total: float


@mcp.tool()
async def quote(items: list[Item], ctx: Context, discount: float = 0.0) -> Quote:
    """Price an order."""
    await ctx.info(f"quoting {len(items)} items")
    total = sum(item.qty * item.price for item in items) * (1 - discount)
    return Quote(first=items[0].name, lines=len(items), total=round(total, 2))


if __name__ == "__main__":
    mcp.run()
