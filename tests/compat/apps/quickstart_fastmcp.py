"""A quickstart in FastMCP's style, built by a factory: tools, resources, prompts and a health route."""

from typing import Annotated

from fastmcp import FastMCP
from fastmcp.prompts import Message
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse


def create_server() -> FastMCP:
    mcp = FastMCP("Demo")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers"""
        return a + b

    @mcp.tool
    def order(
        item: Annotated[str, Field(description="What to order", min_length=1)],
        qty: Annotated[int, Field(ge=1, le=100, description="How many to order")],
        note: str = Field(default="", description="A note for the kitchen"),
    ) -> str:
        """Place an order."""
        return f"{qty} x {item}" + (f" ({note})" if note else "")

    @mcp.tool()
    def greet(name: str = Field(description="Who to greet"), polite: bool = True) -> str:
        """Greet someone by name."""
        return f"Good day, {name}." if polite else f"Hi {name}"

    @mcp.tool(name="divide", description="Divide a by b.", tags={"math"})
    def divide_numbers(a: float, b: float) -> float:
        return a / b

    @mcp.resource("config://app")
    def get_config() -> str:
        """Static configuration data"""
        return "App configuration here"

    @mcp.resource("users://{user_id}/profile")
    def get_user_profile(user_id: int) -> str:
        """Dynamic user data"""
        return f"Profile of user {user_id} ({type(user_id).__name__})"

    @mcp.resource("files://{folder}/{name}", mime_type="text/plain")
    def read_file(folder: str, name: str) -> str:
        """A file of a folder."""
        return f"{folder}/{name}"

    @mcp.prompt
    def review_code(code: str) -> str:
        """Review a piece of code"""
        return f"Please review this code:\n\n{code}"

    @mcp.prompt(title="Debug Assistant")
    def debug_error(error: str) -> list[Message]:
        """Start a debugging conversation."""
        return [
            Message("I'm seeing this error:"),
            Message(error),
            Message("I'll help debug that. What have you tried so far?", role="assistant"),
        ]

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return mcp
