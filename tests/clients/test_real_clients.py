"""User apps driven by the official MCP clients over stdio, on both engines.

- the Python SDK client (``mcp``, a test dependency);
- the TypeScript SDK client (``@modelcontextprotocol/sdk``), installed with npm into the
  git-ignored pytest cache on first use; skipped, with the reason, when node or npm or the
  npm registry is not available.

Each test runs one scripted session against the example apps (``examples/``) plus a
``--resources`` folder, and compares every answer, as the client decoded it, whole.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.clients import EXAMPLES, failure, load_example, ok, text, ts_outcome
from support.wire import SERVER_COMMAND, engine_env

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A resource folder with a text file, a binary file and a symlink leading out of it."""
    root = tmp_path / "shared"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "howto.md").write_text("# How to\n\nConvert *everything*.\n")
    (root / "pixel.png").write_bytes(PNG)
    (tmp_path / "private.txt").write_text("private")
    (root / "private.txt").symlink_to(tmp_path / "private.txt")
    return root.resolve()


Step = tuple[str, Any, dict[str, Any]]  # (kind, params, expected outcome)
NOT_FOUND = {"error": {"code": -32002, "message": "Resource not found"}}


def call(name: str, arguments: dict[str, Any], expected: dict[str, Any]) -> Step:
    return ("callTool", {"name": name, "arguments": arguments}, expected)


def read(uri: str, expected: dict[str, Any]) -> Step:
    return ("readResource", {"uri": uri}, expected)


def contents(uri: str, mime_type: str, **data: str) -> dict[str, Any]:
    return ok({"contents": [{"uri": uri, "mimeType": mime_type, **data}]})


def convert(value: object, source: str, target: str, expected: dict[str, Any], **more: Any) -> Step:
    return call("convert", {"value": value, "from_unit": source, "to_unit": target, **more}, expected)


def units_session(folder: Path) -> tuple[list[str], dict[str, Any], list[Step]]:
    """Server arguments, expected identity, and the steps of a session with the units example."""
    app = load_example("units")
    howto, pixel = (folder / "docs" / "howto.md").as_uri(), (folder / "pixel.png").as_uri()
    mass = {"kind": "mass", "units": ["g", "kg", "oz", "lb"]}
    listing = [
        {"uri": "units://table", "name": "table", "description": "Every unit with its kind", "mimeType": "text/csv"},
        {"uri": howto, "name": "docs/howto.md", "mimeType": "text/markdown"},
        {"uri": pixel, "name": "pixel.png", "mimeType": "image/png"},
    ]
    steps = [
        ("ping", None, ok({})),
        ("listTools", None, ok({"tools": [tool.listing() for tool in app.tools.values()]})),
        convert(1, "km", "m", ok(text("1000"))),
        convert(5, "mi", "km", ok(text("8.05")), digits=2),
        convert(-300, "C", "K", ok(failure("-300 C is below absolute zero"))),
        convert(1, "kg", "m", ok(failure("cannot convert kg (mass) to m (length)"))),
        convert("1", "kg", "g", ok(failure("Invalid arguments for convert"))),
        call(
            "units", {"kind": "mass"}, ok({**text(json.dumps(mass, separators=(",", ":"))), "structuredContent": mass})
        ),
        call("nope", {}, {"error": {"code": -32602, "message": "Unknown tool"}}),
        ("listResources", None, ok({"resources": listing})),
        read("units://table", contents("units://table", "text/csv", text=app.resources["units://table"].read())),
        read(howto, contents(howto, "text/markdown", text="# How to\n\nConvert *everything*.\n")),
        read(pixel, contents(pixel, "image/png", blob=base64.b64encode(PNG).decode())),
        read((folder / "private.txt").as_uri(), NOT_FOUND),
        read(folder.as_uri() + "/../private.txt", NOT_FOUND),
    ]
    identity = {
        "serverInfo": {"name": "units", "version": "1.0.0"},
        "capabilities": {"tools": {}, "resources": {}},
        "instructions": "Convert lengths, masses, volumes and temperatures.",
    }
    return [str(EXAMPLES / "units.py"), "--resources", str(folder)], identity, steps


def notes_session(tmp_path: Path) -> tuple[list[str], dict[str, Any], list[Step]]:
    """Server arguments, expected identity, and the steps of a session with the notes example."""
    note = {"id": 1, "title": "Groceries", "text": "milk, eggs", "tags": ["home", "shop"]}
    structured = ok({**text(json.dumps(note, separators=(",", ":"))), "structuredContent": note})
    steps = [
        call("add_note", {"title": "Groceries", "text": "milk, eggs", "tags": ["shop", "home"]}, structured),
        call("get_note", {"note_id": 1}, structured),
        call("get_note", {"note_id": 9}, ok(failure("no note with id 9"))),
        call("search_notes", {"query": "EGGS", "tag": "home"}, ok(text("1: Groceries [home, shop]"))),
        call("search_notes", {}, ok(text("1: Groceries [home, shop]"))),
        call("add_note", {"title": " ", "text": ""}, ok(failure("a note needs a title"))),
        read("notes://all", contents("notes://all", "application/json", text=json.dumps([note]))),
        call("delete_note", {"note_id": 1}, ok(text("deleted note 1: Groceries"))),
        call("search_notes", {}, ok(text("no notes found"))),
    ]
    identity = {
        "serverInfo": {"name": "notes", "version": "1.0.0"},
        "capabilities": {"tools": {}, "resources": {}},
        "instructions": None,
    }
    return [str(EXAMPLES / "notes.py")], identity, steps


SESSIONS = {"units": units_session, "notes": notes_session}


@pytest.fixture
def session(request: pytest.FixtureRequest, folder: Path, tmp_path: Path):
    name = request.param
    return SESSIONS[name](folder if name == "units" else tmp_path)


# -- the Python SDK ----------------------------------------------------------------------------


async def python_sdk_session(args: list[str], env: dict[str, str], steps: list, errlog) -> tuple[dict, list]:
    """Run the steps through ``mcp.ClientSession``; outcomes in wire form."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared import exceptions

    protocol_error = getattr(exceptions, "MCPError", None) or exceptions.McpError

    def wire(model: Any) -> dict[str, Any]:
        return model.model_dump(by_alias=True, exclude_unset=True, mode="json")

    params = StdioServerParameters(command=SERVER_COMMAND[0], args=[*SERVER_COMMAND[1:], *args], env=env)
    outcomes = []
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
        init = wire(await client.initialize())
        calls = {
            "ping": lambda _: client.send_ping(),
            "listTools": lambda _: client.list_tools(),
            "callTool": lambda p: client.call_tool(p["name"], p["arguments"]),
            "listResources": lambda _: client.list_resources(),
            "readResource": lambda p: client.read_resource(p["uri"]),
        }
        for kind, step_params, _ in steps:
            try:
                outcomes.append({"ok": wire(await calls[kind](step_params))})
            except protocol_error as error:
                outcomes.append({"error": {"code": error.error.code, "message": error.error.message}})
    identity = {
        "serverInfo": init["serverInfo"],
        "capabilities": init["capabilities"],
        "instructions": init.get("instructions"),
        "protocolVersion": init["protocolVersion"],
    }
    return identity, outcomes


@pytest.mark.parametrize("session", list(SESSIONS), indirect=True)
def test_python_sdk_client(session, engine_name: str, tmp_path: Path) -> None:
    import anyio

    args, identity, steps = session
    with open(tmp_path / "server-stderr.txt", "w") as errlog:
        got_identity, outcomes = anyio.run(python_sdk_session, args, engine_env(engine_name), steps, errlog)
    # The client asks for 2025-11-25, which apps speak.
    assert got_identity == {**identity, "protocolVersion": "2025-11-25"}
    for (kind, params, expected), outcome in zip(steps, outcomes, strict=True):
        assert outcome == expected, (kind, params)


def test_python_sdk_client_on_the_default_catalogue(engine_name: str, tmp_path: Path) -> None:
    import anyio

    steps = [
        call("echo", {"text": "héllo"}, ok(text("héllo"))),
        call("add", {"a": 0.1, "b": 0.2}, ok(text("0.30000000000000004"))),
        call("add", {"a": True, "b": 1}, ok(failure("Invalid arguments for add"))),
        read("file:///hello.txt", contents("file:///hello.txt", "text/plain", text="Hello, world!")),
    ]
    with open(tmp_path / "server-stderr.txt", "w") as errlog:
        identity, outcomes = anyio.run(python_sdk_session, [], engine_env(engine_name), steps, errlog)
    assert identity["serverInfo"] == {"name": "shipcode-mcp", "version": "1.0.0"}
    assert identity["protocolVersion"] == "2025-06-18"  # the default catalogue's one version
    assert outcomes == [expected for _, _, expected in steps]


# -- the TypeScript SDK ------------------------------------------------------------------------


def run_ts_session(script: Path, args: list[str], env: dict[str, str], steps: list, tmp_path: Path) -> dict:
    command = [*SERVER_COMMAND, *args]
    plan = [[kind, params] for kind, params, _ in steps]
    with open(tmp_path / "server-stderr.txt", "wb") as errlog:
        done = subprocess.run(
            ["node", str(script), json.dumps(command), json.dumps(plan)],
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=env,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, (tmp_path / "server-stderr.txt").read_text()
    return json.loads(done.stdout)


@pytest.mark.parametrize("session", list(SESSIONS), indirect=True)
def test_typescript_sdk_client(ts_client: Path, session, engine_name: str, tmp_path: Path) -> None:
    args, identity, steps = session
    out = run_ts_session(ts_client, args, engine_env(engine_name), steps, tmp_path)
    assert {
        "serverInfo": out["serverVersion"],
        "capabilities": out["capabilities"],
        "instructions": out["instructions"],
    } == identity
    for (kind, params, expected), outcome in zip(steps, out["steps"], strict=True):
        assert ts_outcome(outcome) == expected, (kind, params)
