"""A writing-desk MCP server that talks back to its client, built with shipcode-mcp.

Every tool here takes a ``Context``, the handler's way back to the client: it logs
(``notifications/message``), reports progress, asks the client's model for a completion
(sampling), asks the client's user a question (elicitation) and reads the client's roots.
Run it with ``shipcode-mcp examples/assistant.py`` (or ``python examples/assistant.py``).

- ``async def`` tools run concurrently on the server's event loop; they ``await`` the
  Context's members.
- A sync tool runs in line order; its Context calls (``log``, the level shortcuts,
  ``report_progress``) take effect at once, without ``await``.
- ``blocking=True`` marks a sync tool that blocks (file I/O here): it runs in a worker thread.
"""

from __future__ import annotations

from typing import Annotated, Literal

from shipcode_mcp import Context, Server, ToolError

app = Server("assistant", version="1.0.0", instructions="Summarize text, manage drafts, read files.")

Level = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

#: Drafts by name, in memory.
DRAFTS: dict[str, str] = {
    "cover-letter": "Dear hiring team, ...",
    "shopping-list": "milk, eggs, bread",
}

#: What ``confirm_delete`` says when the user did not confirm, by the elicitation's action.
NOT_CONFIRMED = {"accept": "not confirmed", "decline": "declined", "cancel": "cancelled"}


@app.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Summarize a text in one sentence, with the client's model"""
    answer = await ctx.sample(
        f"Summarize in one sentence:\n\n{text}",
        max_tokens=100,
        system_prompt="You write short, plain summaries.",
        temperature=0.2,
        model_preferences={"hints": [{"name": "small"}], "speedPriority": 1},
    )
    content = answer.get("content")
    if type(content) is not dict or content.get("type") != "text":
        raise ToolError("the client's model did not answer with text")
    await ctx.debug(f"summarized by {answer.get('model')}", logger="summarize")
    return content["text"]


@app.tool()
async def confirm_delete(name: str, ctx: Context) -> str:
    """Delete a draft after the user confirms it"""
    if name not in DRAFTS:
        raise ToolError(f"no draft named {name!r}")
    answer = await ctx.elicit(
        f"Delete the draft {name!r}? This cannot be undone.",
        {
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Delete it", "default": False}},
            "required": ["confirm"],
        },
    )
    action = answer.get("action")
    if action == "accept" and (answer.get("content") or {}).get("confirm") is True:
        del DRAFTS[name]
        await ctx.notice(f"deleted the draft {name!r}", logger="drafts")
        return f"deleted {name}"
    return f"kept {name}: {NOT_CONFIRMED.get(action, 'no answer')}"


@app.tool()
async def workspace(ctx: Context) -> str:
    """The client's roots (the folders it lets this server work in), one per line"""
    roots = await ctx.list_roots()
    if not roots:
        return "no roots"
    return "\n".join(f"{root['uri']} ({root['name']})" if "name" in root else root["uri"] for root in roots)


@app.tool()
async def count_to(n: Annotated[int, "where to stop, 1 to 1000"], ctx: Context) -> str:
    """Count from 1 to n, reporting progress at every step"""
    if not 1 <= n <= 1000:
        raise ToolError("n must be between 1 and 1000")
    await ctx.log("info", f"counting to {n}", logger="count_to")
    for i in range(1, n + 1):
        await ctx.report_progress(i, total=n, message=f"{i} of {n}")
    await ctx.log("debug", {"counted": n}, logger="count_to")  # data may be any JSON value
    return f"counted to {n}"


@app.tool()
def whoami(ctx: Context) -> dict:
    """The id of this very request, as the client sent it"""
    return {"request_id": ctx.request_id}


@app.tool()
def log_at(level: Level, message: str, ctx: Context) -> str:
    """Write a message to the client's log at the given level"""
    shortcuts = {
        "debug": ctx.debug,
        "info": ctx.info,
        "notice": ctx.notice,
        "warning": ctx.warning,
        "error": ctx.error,
        "critical": ctx.critical,
        "alert": ctx.alert,
        "emergency": ctx.emergency,
    }
    shortcuts[level](message, logger="log_at")  # the same as ctx.log(level, message, logger="log_at")
    return f"logged at {level}"


@app.tool(blocking=True)
def read_text(path: str, ctx: Context) -> str:
    """Read a UTF-8 text file (plain blocking I/O: it runs in a worker thread)"""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise ToolError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ToolError(f"cannot read {path}: not UTF-8 text") from None
    ctx.info(f"read {len(text)} characters from {path}", logger="read_text")
    return text


if __name__ == "__main__":
    app.run()
