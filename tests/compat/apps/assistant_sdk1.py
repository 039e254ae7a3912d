"""An assistant in the official SDK's style (mcp 1.x): Context, lifespan, elicitation, sampling, raw results."""

import base64
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcp.server.fastmcp import Context, FastMCP, Image
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.session import ServerSession
from mcp.types import CallToolResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Database:
    """A stand-in for a connection pool."""

    def __init__(self) -> None:
        self.rows = {"apples": 3, "pears": 0}
        self.open = True


@dataclass
class AppContext:
    db: Database


@asynccontextmanager
async def app_lifespan(server: FastMCP) -> AsyncIterator[AppContext]:
    """Open the database once at start-up, close it at shutdown."""
    db = Database()
    print("app: lifespan opened", file=sys.stderr)
    try:
        yield AppContext(db=db)
    finally:
        db.open = False
        print("app: lifespan closed", file=sys.stderr)


app = FastMCP("Assistant", lifespan=app_lifespan)


@app.tool()
def query(key: str, ctx: Context[ServerSession, AppContext]) -> int | None:
    """Look a key up in the database opened by the lifespan."""
    db = ctx.request_context.lifespan_context.db
    return db.rows.get(key) if db.open else -1


@app.tool()
async def process(items: list[str], ctx: Context) -> str:
    """Process items, logging and reporting progress."""
    await ctx.info(f"Processing {len(items)} items")
    for done, item in enumerate(items, start=1):
        await ctx.report_progress(progress=done, total=len(items), message=f"did {item}")
    await ctx.debug("debug line")
    await ctx.warning("warning line")
    await ctx.error("error line")
    return f"processed {len(items)}"


@app.resource("notes://{name}")
def note(name: str) -> str:
    """A note by name."""
    return f"note {name}"


@app.resource("stock://{key}")
async def stock(key: str, ctx: Context) -> str:
    """The stock of a key in the database opened by the lifespan, the read logged."""
    await ctx.info(f"Reading the stock of {key}")
    db = ctx.request_context.lifespan_context.db
    return f"{key}: {db.rows.get(key, 0)}"


@app.resource("status://db")
def db_status(ctx: Context) -> str:
    """Whether the database opened by the lifespan is open."""
    db = ctx.request_context.lifespan_context.db
    return "open" if db.open else "closed"


@app.prompt()
async def restock(key: str, ctx: Context) -> str:
    """Ask for a key to be restocked, the request logged."""
    await ctx.info(f"Asking to restock {key}")
    return f"Please restock {key}."


@app.tool()
async def read_note(name: str, ctx: Context) -> str:
    """Read a note through the server's own resources."""
    contents = list(await ctx.read_resource(f"notes://{name}"))
    return f"{contents[0].content} ({contents[0].mime_type})"


class BookingPreferences(BaseModel):
    """Schema for collecting user preferences."""

    checkAlternative: bool = Field(description="Would you like to check another date?")
    alternativeDate: str = Field(default="2024-12-26", description="Alternative date (YYYY-MM-DD)")


@app.tool()
async def book_table(date: str, party_size: int, ctx: Context) -> str:
    """Book a table, asking for another date when the first is full."""
    if date != "2024-12-25":
        return f"[SUCCESS] Booked for {party_size} on {date}"
    result = await ctx.elicit(message=f"No tables for {party_size} on {date}. Another date?", schema=BookingPreferences)
    if result.action == "accept" and result.data:
        if result.data.checkAlternative:
            return f"[SUCCESS] Booked for {result.data.alternativeDate}"
        return "[CANCELLED] No booking made"
    return f"[CANCELLED] Booking cancelled ({result.action})"


@app.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model for a summary."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))],
        max_tokens=100,
    )
    return result.content.text if result.content.type == "text" else str(result.content)


@app.tool()
def pixel() -> Image:
    """A one-pixel image."""
    return Image(data=PIXEL, format="png")


@app.tool()
def raw_text() -> TextContent:
    """A content object returned as it is."""
    return TextContent(type="text", text="raw text")


@app.tool()
def raw_result() -> CallToolResult:
    """A whole result returned as it is."""
    return CallToolResult(content=[TextContent(type="text", text="custom")], structuredContent={"ok": True})


@app.tool()
def mixed() -> list:
    """Text and an image in one result."""
    return ["caption", Image(data=PIXEL, format="png")]


@app.tool()
def refuse(reason: str) -> str:
    """Refuse with a ToolError."""
    raise ToolError(f"refused: {reason}")


@app.tool()
def crash() -> str:
    """Raise an unexpected exception."""
    raise RuntimeError("boom")


if __name__ == "__main__":
    app.run()
