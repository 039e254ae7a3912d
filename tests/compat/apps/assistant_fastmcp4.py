"""An assistant in FastMCP 4's style: Context, a lifespan yielding a dict, elicitation, raw results."""

import base64
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from fastmcp.utilities.types import Image
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Database:
    """A stand-in for a connection pool."""

    def __init__(self) -> None:
        self.rows = {"apples": 3, "pears": 0}
        self.open = True


@asynccontextmanager
async def app_lifespan(server: FastMCP) -> AsyncIterator[dict]:
    """Open the database once at start-up, close it at shutdown."""
    db = Database()
    print("app: lifespan opened", file=sys.stderr)
    try:
        yield {"db": db}
    finally:
        db.open = False
        print("app: lifespan closed", file=sys.stderr)


server = FastMCP("Assistant", lifespan=app_lifespan)


@server.tool
def query(key: str, ctx: Context) -> int | None:
    """Look a key up in the database opened by the lifespan."""
    db = ctx.lifespan_context["db"]
    return db.rows.get(key) if db.open else -1


@server.tool
async def process(items: list[str], ctx: Context) -> str:
    """Process items, logging and reporting progress."""
    await ctx.info(f"Processing {len(items)} items")
    for done, item in enumerate(items, start=1):
        await ctx.report_progress(progress=done, total=len(items), message=f"did {item}")
    await ctx.debug("debug line")
    await ctx.warning("warning line")
    await ctx.error("error line")
    return f"processed {len(items)}"


@server.resource("notes://{name}")
def note(name: str) -> str:
    """A note by name."""
    return f"note {name}"


@server.resource("stock://{key}")
async def stock(key: str, ctx: Context) -> str:
    """The stock of a key in the database opened by the lifespan, the read logged."""
    await ctx.info(f"Reading the stock of {key}")
    db = ctx.lifespan_context["db"]
    return f"{key}: {db.rows.get(key, 0)}"


@server.resource("status://db")
def db_status(ctx: Context) -> str:
    """Whether the database opened by the lifespan is open."""
    db = ctx.lifespan_context["db"]
    return "open" if db.open else "closed"


@server.prompt
async def restock(key: str, ctx: Context) -> str:
    """Ask for a key to be restocked, the request logged."""
    await ctx.info(f"Asking to restock {key}")
    return f"Please restock {key}."


@server.tool
async def read_note(name: str, ctx: Context) -> str:
    """Read a note through the server's own resources."""
    result = await ctx.read_resource(f"notes://{name}")
    return f"{result.contents[0].content} ({result.contents[0].mime_type})"


class BookingPreferences(BaseModel):
    """Schema for collecting user preferences."""

    checkAlternative: bool = Field(description="Would you like to check another date?")
    alternativeDate: str = Field(default="2024-12-26", description="Alternative date (YYYY-MM-DD)")


@server.tool
async def book_table(date: str, party_size: int, ctx: Context) -> str:
    """Book a table, asking for another date when the first is full."""
    if date != "2024-12-25":
        return f"[SUCCESS] Booked for {party_size} on {date}"
    result = await ctx.elicit(f"No tables for {party_size} on {date}. Another date?", response_type=BookingPreferences)
    if result.action == "accept" and result.data:
        if result.data.checkAlternative:
            return f"[SUCCESS] Booked for {result.data.alternativeDate}"
        return "[CANCELLED] No booking made"
    return f"[CANCELLED] Booking cancelled ({result.action})"


@server.tool
def pixel() -> Image:
    """A one-pixel image."""
    return Image(data=PIXEL, format="png")


@server.tool
def raw_text() -> TextContent:
    """A content object returned as it is."""
    return TextContent(type="text", text="raw text")


@server.tool
def raw_result() -> CallToolResult:
    """A whole result returned as it is."""
    return CallToolResult(content=[TextContent(type="text", text="custom")], structuredContent={"ok": True})


@server.tool
def tool_result() -> ToolResult:
    """FastMCP's own result: content and structured content chosen by the tool."""
    return ToolResult(content=[TextContent(type="text", text="chosen")], structured_content={"chosen": 1})


@server.tool
def mixed() -> list:
    """Text and an image in one result."""
    return ["caption", Image(data=PIXEL, format="png")]


@server.tool
def refuse(reason: str) -> str:
    """Refuse with a ToolError."""
    raise ToolError(f"refused: {reason}")


@server.tool
def crash() -> str:
    """Raise an unexpected exception."""
    raise RuntimeError("boom")


if __name__ == "__main__":
    server.run()
