"""A quickstart in the official SDK's style (mcp 1.x): tools, resources, prompts, completions, a health route."""

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.prompts import base
from mcp.types import Completion, PromptReference, ResourceTemplateReference
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse

mcp = FastMCP("Demo")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers"""
    return a + b


@mcp.tool()
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


@mcp.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b."""
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


@mcp.prompt()
def review_code(code: str) -> str:
    """Review a piece of code"""
    return f"Please review this code:\n\n{code}"


@mcp.prompt(title="Debug Assistant")
def debug_error(error: str) -> list[base.Message]:
    """Start a debugging conversation."""
    return [
        base.UserMessage("I'm seeing this error:"),
        base.UserMessage(error),
        base.AssistantMessage("I'll help debug that. What have you tried so far?"),
    ]


@mcp.completion()
async def handle_completion(ref, argument, context):
    """Languages for prompts, folders for the files template."""
    if isinstance(ref, PromptReference) and argument.name == "code":
        return Completion(values=["print('hi')"], total=1, hasMore=False)
    if isinstance(ref, ResourceTemplateReference) and argument.name == "folder":
        folders = ["docs", "src", "tests"]
        return Completion(values=[f for f in folders if f.startswith(argument.value)], hasMore=False)
    return None


@mcp.custom_route("/health", methods=["GET"])
async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


if __name__ == "__main__":
    mcp.run()
