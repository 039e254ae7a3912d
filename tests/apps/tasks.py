"""An app of task tools for the raw-wire tests of the tasks extension (``tests/test_tasks.py``).

Task ids count up (``task-1``, ``task-2``, ...) and every timestamp is one fixed instant, so answers are
whole known bytes; with ``TASKS_REDIS`` set (a Redis url) the tasks are kept there, with real random ids
(several processes share them) and a process's word that it runs a task lasting 0.9 s. ``served()`` is the
app over HTTP with bearer tokens of two callers (``uvicorn --factory tasks:served``).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from shipcode_mcp import Context, InputRequired, RpcError, Server, ToolError, elicitation_request
from shipcode_mcp.tasks import Tasks

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
INSTANT = "2026-01-02T03:04:05.678Z"


class CountedTasks(Tasks):
    """Tasks with counted ids and one fixed instant."""

    count = 0

    def new_task_id(self) -> str:
        self.count += 1
        return f"task-{self.count}"

    def timestamp(self) -> str:
        return INSTANT


if os.environ.get("TASKS_REDIS"):
    from shipcode_mcp.redisstore import RedisTaskStore

    tasks = Tasks(RedisTaskStore(os.environ["TASKS_REDIS"]), ttl_ms=60_000, poll_interval_ms=50, lease_ms=900)
else:
    tasks = CountedTasks(ttl_ms=60_000, poll_interval_ms=50)
app = Server("tasks", version="1.0.0", extensions=[tasks])


@app.tool()
def greet(name: str) -> str:
    """Greets at once"""
    return f"Hello, {name}!"


@app.tool(task=True)
async def quick(text: str) -> str:
    """Answers at once, from a task"""
    return text.upper()


@app.tool(task=True)
async def wait_forever() -> str:
    """Works until cancelled"""
    await asyncio.sleep(3600)
    return "never"


@app.tool(task=True)
async def fails() -> str:
    """Fails as a tool"""
    raise ToolError("no luck")


@app.tool(task=True)
async def breaks() -> str:
    """Fails with a JSON-RPC error"""
    raise RpcError(-32000, "broken", {"why": "on purpose"})


@app.tool(task=True)
def asks(ctx: Context) -> str:
    """Asks two names at once (sync, in a worker thread)"""
    questions = {"first": elicitation_request("First?", NAME), "second": elicitation_request("Second?", NAME)}
    missing = {key: request for key, request in questions.items() if key not in ctx.input_responses}
    if missing:
        raise InputRequired(missing)
    return " and ".join(ctx.input_responses[key]["content"]["name"] for key in questions)


@app.tool(task="required")
def needs_task(n: int) -> int:
    """Only ever a task"""
    return n * 2


async def ask_first(arguments: dict[str, Any], ctx: Context) -> bool:
    """Asks who is calling before the task exists; then a task when ``later`` is true."""
    await ctx.elicit("Who?", NAME, key="who")
    return arguments["later"]


@app.tool(task=ask_first)
async def greets_later(later: bool, ctx: Context) -> str:
    """Greets whoever answered, from a task or at once"""
    answer = await ctx.elicit("Who?", NAME, key="who")
    return f"Hi {answer['content']['name']}"


#: Bearer tokens of two callers.
TOKENS = {"ada": {"iss": "https://auth.example", "sub": "ada"}, "bob": {"iss": "https://auth.example", "sub": "bob"}}


def served() -> Any:
    return app.http_app(auth=TOKENS.get)
