"""The bus's events as another process delivers them (``app.bus.deliver``), in-process, whole bytes: a list change
heard from elsewhere tells this process's sessions and makes the app declare ``listChanged``; what this process does
not serve, or cannot read, is dropped without a word to the client."""

from __future__ import annotations

import orjson
from support.wire import request

from shipcode_mcp import Server
from shipcode_mcp.bus import LISTS, RESOURCE, TASK

INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}}


def test_a_list_change_heard_from_another_process(engine_module) -> None:
    app = Server("heard", version="1.0.0")
    app.add_tool(lambda: "x", name="x", description="x")
    engine = engine_module.Engine(app.catalogue())
    first = orjson.loads(engine.feed(request("initialize", INITIALIZE)))["result"]["capabilities"]["tools"]
    app.bus.deliver(LISTS, b"tools")  # another process added a tool: its catalogue, not this one, changed
    assert (first, engine.feed(b"")) == ({}, b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')
    later = engine_module.Engine(app.catalogue())
    answer = orjson.loads(later.feed(request("initialize", INITIALIZE)))["result"]["capabilities"]["tools"]
    assert answer == {"listChanged": True}


def test_what_this_process_cannot_serve_is_dropped(engine_module) -> None:
    app = Server("heard", version="1.0.0", resource_subscriptions=True)
    app.add_resource(lambda: "a", uri="note://a")
    engine = engine_module.Engine(app.catalogue())
    engine.feed(request("initialize", INITIALIZE) + request("resources/subscribe", {"uri": "note://a"}, 2))
    app.bus.deliver(TASK, b'["t",null]\n{}')  # no tasks served here
    app.bus.deliver(LISTS, b"widgets")  # no such list
    app.bus.deliver(b"unknown", b"")
    assert engine.feed(b"") == b""
    app.bus.deliver(RESOURCE, b"note://a")
    line = b'{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"note://a"}}\n'
    assert engine.feed(b"") == line
