"""An app for the tests of the bus (``tests/http/test_bus.py``): resources clients subscribe to, a tool that
says one of them was updated, one that adds a tool, and a task that asks before it completes. Served with
``--redis URL``, the bus and the tasks go through that Redis.
"""

from __future__ import annotations

import os

from shipcode_mcp import Context, InputRequired, Server, elicitation_request
from shipcode_mcp.tasks import Tasks

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
app = Server(
    "bus", version="1.0.0", resource_subscriptions=True, list_changed=True, extensions=[Tasks(poll_interval_ms=50)]
)


@app.resource("note://a")
def note() -> str:
    """A note"""
    return "a"


@app.tool()
def touch(uri: str) -> int:
    """Says the resource ``uri`` was updated; answers with this process's id"""
    app.notify_resource_updated(uri)
    return os.getpid()


@app.tool()
def grow(name: str) -> int:
    """Adds a tool named ``name`` in this process; answers with this process's id"""
    app.add_tool(lambda: name, name=name, description="Grown")
    return os.getpid()


@app.tool(task=True)
def asks(ctx: Context) -> str:
    """Asks a name, then greets it"""
    if "who" not in ctx.input_responses:
        raise InputRequired({"who": elicitation_request("Who?", NAME)})
    return f"Hi {ctx.input_responses['who']['content']['name']}"
