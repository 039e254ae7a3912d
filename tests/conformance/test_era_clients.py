"""``app.py`` driven by the official clients of 2026-07-28 over stdio, in each era, on both engines.

- the Python SDK 2.3 client (``mcp.client.Client``, a test dependency) in ``mode="2026-07-28"``,
  ``"auto"`` (``server/discover`` first) and ``"legacy"`` (``initialize``);
- the TypeScript client 2.4 (``@modelcontextprotocol/client``, pinned in ``package.json``,
  installed on first use by ``conformance.install``) with ``versionNegotiation`` pinned to
  2026-07-28, ``"auto"`` and ``"legacy"``.

One session each: list the tools, call a tool, read a resource, get a prompt, call a tool that
reports progress and one that logs (the client opting in to ``info``), and finish three tool
calls that ask the client (an elicitation, two elicitations in two rounds, a sampling), the client
answering. In 2026-07-28 the asking is ``input_required`` results the client fulfils and retries;
with ``initialize`` it is real requests from the server: the same handlers serve both. Every
result, as the client decoded it, every request the client answered and every notification it got
are compared whole.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import conformance
from support.clients import Events
from support.httpserver import HttpServer
from support.wire import SERVER_COMMAND, engine_env

SESSION_LIMIT = 60  # seconds: a guard against a hang, never a schedule
WAIT_LIMIT = 10  # seconds a step's notifications may take to arrive: a guard, never a schedule
SERVER_INFO = {"name": "shipcode-mcp-conformance", "version": "1.0.0"}
MODERN_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
CACHING = {"ttlMs": 0, "cacheScope": "private"}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}


def served_tools() -> list[dict[str, Any]]:
    """The tools ``app.py`` lists, from the app loaded in this process."""
    spec = importlib.util.spec_from_file_location("conformance_app", conformance.APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [tool.listing() for tool in module.app.tools.values()]


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def elicitation(message: str, schema: dict[str, Any]) -> list[Any]:
    return ["elicitation/create", {"message": message, "requestedSchema": schema}]


def call(name: str) -> dict[str, Any]:
    return {"name": name, "arguments": {}}


def log(data: str) -> list[Any]:
    return ["notifications/message", {"level": "info", "data": data}]


def progress(value: int) -> list[Any]:
    return ["notifications/progress", {"progress": value, "total": 100}]


# (kind, params, result, cacheable: whether 2026-07-28 adds caching hints,
#  requests the client answers, notifications the client gets)
Step = tuple[str, dict[str, Any], dict[str, Any], bool, list[list[Any]], list[list[Any]]]
STATIC_TEXT = "This is the content of the static text resource."
STEPS: list[Step] = [
    ("listTools", {}, {"tools": served_tools()}, True, [], []),
    ("callTool", call("test_simple_text"), text("This is a simple text response for testing."), False, [], []),
    (
        "readResource",
        {"uri": "test://static-text"},
        {"contents": [{"uri": "test://static-text", "mimeType": "text/plain", "text": STATIC_TEXT}]},
        True,
        [],
        [],
    ),
    (
        "getPrompt",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}},
        {
            "description": "A prompt with two required arguments",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='a', arg2='b'"}}
            ],
        },
        False,
        [],
        [],
    ),
    (
        "callTool",
        call("test_tool_with_progress"),
        text("Tool with progress executed successfully"),
        False,
        [],
        [progress(0), progress(50), progress(100)],
    ),
    (
        "callTool",
        call("test_tool_with_logging"),
        text("Tool with logging executed successfully"),
        False,
        [],
        [log("Tool execution started"), log("Tool processing data"), log("Tool execution completed")],
    ),
    (
        "callTool",
        call("test_input_required_result_elicitation"),
        text("Hello, Ada!"),
        False,
        [elicitation("What is your name?", NAME)],
        [],
    ),
    (
        "callTool",
        call("test_input_required_result_multi_round"),
        text("Hello, Ada! Your favorite color is teal."),
        False,
        [elicitation("Step 1: What is your name?", NAME), elicitation("Step 2: What is your favorite color?", COLOR)],
        [],
    ),
    (
        "callTool",
        call("test_input_required_result_sampling"),
        text("The model answered: Paris"),
        False,
        [
            [
                "sampling/createMessage",
                {
                    "messages": [
                        {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
                    ],
                    "maxTokens": 100,
                },
            ]
        ],
        [],
    ),
]


def expected_steps(modern: bool, result_type: bool) -> list[dict[str, Any]]:
    """Each step's outcome, and what the client answered and got during it, as a client of that era sees them.

    A 2026-07-28 result also names the server in its ``_meta``, carries ``resultType`` (which the
    TypeScript client does not hand on: ``result_type`` False) and, for lists and reads, caching hints.
    """
    steps = []
    for _, _, result, cacheable, asked, notified in STEPS:
        if modern:
            result = {"_meta": MODERN_META, **(CACHING if cacheable else {}), **result}
            if result_type:
                result["resultType"] = "complete"
        steps.append({"outcome": {"ok": result}, "asked": asked, "notified": notified})
    return steps


# -- the Python SDK ----------------------------------------------------------------------------


async def python_sdk_session(mode: str, env: dict[str, str], errlog: Any) -> dict[str, Any]:
    """Run the steps through ``mcp.client.Client``; the same output as ``ts_era_client.mjs``."""
    from mcp import StdioServerParameters, types
    from mcp.client.client import Client

    asked: list[list[Any]] = []
    events = Events(WAIT_LIMIT)

    def wire(model: Any) -> Any:
        return model.model_dump(by_alias=True, exclude_unset=True, mode="json")

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(["elicitation/create", wire(params)])
        content = {"name": "Ada"} if "name" in params.message else {"color": "teal"}
        return types.ElicitResult(action="accept", content=content)

    async def sample(context: Any, params: Any) -> Any:
        asked.append(["sampling/createMessage", wire(params)])
        answer = types.TextContent(type="text", text="Paris")
        return types.CreateMessageResult(role="assistant", content=answer, model="m", stop_reason="endTurn")

    async def on_log(params: Any) -> None:
        events.record(["notifications/message", wire(params)])

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        events.record(["notifications/progress", {"progress": value, "total": total}])

    params = StdioServerParameters(command=SERVER_COMMAND[0], args=[*SERVER_COMMAND[1:], str(conformance.APP)], env=env)
    client = Client(
        params,
        mode=mode,
        elicitation_callback=elicit,
        sampling_callback=sample,
        log_level="info",
        logging_callback=on_log,
    )
    calls = {
        "listTools": lambda _: client.list_tools(),
        "callTool": lambda p: client.call_tool(p["name"], p["arguments"], progress_callback=on_progress),
        "readResource": lambda p: client.read_resource(p["uri"]),
        "getPrompt": lambda p: client.get_prompt(p["name"], p["arguments"]),
    }
    async with client:
        server_info = client.server_info
        out: dict[str, Any] = {
            "protocolVersion": client.protocol_version,
            "serverInfo": None if server_info is None else wire(server_info),
            "steps": [],
        }
        for kind, step_params, *_, notified in STEPS:
            outcome = {"ok": wire(await calls[kind](step_params))}
            arrived = await events.wait_for(len(notified))
            out["steps"].append({"outcome": outcome, "asked": list(asked), "notified": events.take()})
            asked.clear()
            if not arrived:
                break  # this step's comparison fails and shows what did arrive
    return out


@pytest.mark.parametrize(
    ("mode", "identity"),
    [
        ("2026-07-28", {"protocolVersion": "2026-07-28", "serverInfo": None}),  # pinned: no discover, no name
        ("auto", {"protocolVersion": "2026-07-28", "serverInfo": SERVER_INFO}),
        ("legacy", {"protocolVersion": "2025-11-25", "serverInfo": SERVER_INFO}),
    ],
    ids=["pinned", "auto", "legacy"],
)
def test_python_sdk_client(mode: str, identity: dict[str, Any], engine_name: str, tmp_path: Path) -> None:
    import anyio

    async def guarded() -> dict[str, Any]:
        with anyio.fail_after(SESSION_LIMIT), open(tmp_path / "server-stderr.txt", "w") as errlog:
            return await python_sdk_session(mode, engine_env(engine_name), errlog)

    out = anyio.run(guarded)
    modern = identity["protocolVersion"] == "2026-07-28"
    assert out == {**identity, "steps": expected_steps(modern, result_type=True)}


# -- the TypeScript client ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "version"),
    [({"pin": "2026-07-28"}, "2026-07-28"), ("auto", "2026-07-28"), ("legacy", "2025-11-25")],
    ids=["pinned", "auto", "legacy"],
)
def test_typescript_client(mode: Any, version: str, node: Path, engine_name: str, tmp_path: Path) -> None:
    command = json.dumps([*SERVER_COMMAND, str(conformance.APP)])
    plan = json.dumps([[kind, params, len(notified)] for kind, params, *_, notified in STEPS])
    with open(tmp_path / "server-stderr.txt", "wb") as errlog:
        done = subprocess.run(
            [node, conformance.FOLDER / "ts_era_client.mjs", command, json.dumps(mode), plan],
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=engine_env(engine_name),
            timeout=SESSION_LIMIT,
            check=False,
        )
    assert done.returncode == 0, (tmp_path / "server-stderr.txt").read_text()
    expected = {"protocolVersion": version, "serverInfo": SERVER_INFO}
    assert json.loads(done.stdout) == {**expected, "steps": expected_steps(version == "2026-07-28", result_type=False)}


@pytest.mark.parametrize(
    ("mode", "version"),
    [({"pin": "2026-07-28"}, "2026-07-28"), ("auto", "2026-07-28"), ("legacy", "2025-11-25")],
    ids=["pinned", "auto", "legacy"],
)
def test_typescript_client_over_http(mode: Any, version: str, node: Path, engine_name: str, tmp_path: Path) -> None:
    """The same sessions over Streamable HTTP: ``shipcode-mcp app.py --http`` on a loopback port."""
    server = HttpServer(engine_name, app=str(conformance.APP))
    try:
        plan = json.dumps([[kind, params, len(notified)] for kind, params, *_, notified in STEPS])
        url = f"http://127.0.0.1:{server.port}/mcp"
        done = subprocess.run(
            [node, conformance.FOLDER / "ts_era_client.mjs", url, json.dumps(mode), plan],
            capture_output=True,
            timeout=SESSION_LIMIT,
            check=False,
        )
    finally:
        assert server.stop() == 0
    assert done.returncode == 0, done.stderr.decode()
    expected = {"protocolVersion": version, "serverInfo": SERVER_INFO}
    assert json.loads(done.stdout) == {**expected, "steps": expected_steps(version == "2026-07-28", result_type=False)}
