"""``examples/assistant.py`` (tools that talk back through a ``Context``) driven by the
official Python and TypeScript SDK clients over stdio, on both engines.

A session follows a plan: the client's scripted answers to the server's requests
(sampling, elicitation, roots) and a list of steps. For every step the test compares the
whole outcome and every event the client saw while the step ran, in order: the server's
requests (method, id, params), log messages and progress notifications. The clients
deliver notifications to their callbacks in tasks of their own, so after each step the
runner waits for as many events as the step expects (at most ``WAIT_LIMIT`` seconds, a guard
that ends the session there): a missing event fails that step, an extra one the next.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
from support.clients import EXAMPLES, Events, check_session, failure, load_example, ok, text, ts_outcome
from support.wire import SERVER_COMMAND, engine_env

APP = [str(EXAMPLES / "assistant.py")]
WAIT_LIMIT = 10  # seconds: a guard against a hang, never a schedule
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

SUMMARY = {
    "role": "assistant",
    "content": {"type": "text", "text": "Drafts stay in memory until deleted."},
    "model": "small-1",
    "stopReason": "endTurn",
}
ROOTS = [{"uri": "file:///home/user/project", "name": "project"}, {"uri": "file:///tmp/scratch"}]
REJECTED = {"code": -1, "message": "User rejected sampling"}
ANSWERS = {
    "sampling/createMessage": [{"result": SUMMARY}, {"error": REJECTED}],
    "elicitation/create": [
        {"result": {"action": "accept", "content": {"confirm": True}}},
        {"result": {"action": "decline"}},
        {"result": {"action": "cancel"}},
    ],
    "roots/list": [{"result": {"roots": ROOTS}}],
}
TEXT = "Drafts are kept in memory. Deleting one asks the user first. Nothing is written to disk."
SAMPLING_PARAMS = {
    "messages": [{"role": "user", "content": {"type": "text", "text": f"Summarize in one sentence:\n\n{TEXT}"}}],
    "modelPreferences": {"hints": [{"name": "small"}], "speedPriority": 1},
    "systemPrompt": "You write short, plain summaries.",
    "temperature": 0.2,
    "maxTokens": 100,
}
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Delete it", "default": False}},
    "required": ["confirm"],
}

Step = tuple[str, Any, dict[str, Any], list[dict[str, Any]]]  # kind, params, outcome, events


def call(name: str, arguments: dict[str, Any], outcome: dict[str, Any], *events: dict[str, Any]) -> Step:
    return ("callTool", {"name": name, "arguments": arguments}, outcome, list(events))


def asked(method: str, request_id: str, params: dict[str, Any] | None) -> dict[str, Any]:
    return {"request": method, "id": request_id, "params": params}


def log(level: str, logger: str, data: Any) -> dict[str, Any]:
    return {"log": {"level": level, "logger": logger, "data": data}}


def elicited(request_id: str, name: str) -> dict[str, Any]:
    message = f"Delete the draft {name!r}? This cannot be undone."
    return asked("elicitation/create", request_id, {"message": message, "requestedSchema": CONFIRM_SCHEMA})


def logged_at(level: str, sent: bool) -> Step:
    message = f"a {level} message"
    events = [log(level, "log_at", message)] if sent else []
    return call("log_at", {"level": level, "message": message}, ok(text(f"logged at {level}")), *events)


def assistant_steps(first_id: int, folder: Path, tokens: bool) -> list[Step]:
    """The steps of a session with every callback.

    ``first_id`` is the client's id for ``initialize``; its later requests count up from it.
    With ``tokens``, progress events are whole notifications, whose token the client chose
    (the request's id); without, they are what the Python SDK's progress callback receives.
    """
    readme = folder / "readme.txt"
    readme.write_text("héllo\n", encoding="utf-8")
    missing = folder / "missing.txt"
    steps: list[Step] = []

    def request_id() -> int:
        """The id of the step about to be added."""
        return first_id + 1 + len(steps)

    def count_with_progress(n: int, outcome: dict[str, Any], *logs: dict[str, Any]) -> Step:
        token = {"progressToken": request_id()} if tokens else {}
        reports = [
            {"progress": {**token, "progress": i, "total": n, "message": f"{i} of {n}"}} for i in range(1, n + 1)
        ]
        events = [*logs[:1], *reports, *logs[1:]]
        return ("callToolWithProgress", {"name": "count_to", "arguments": {"n": n}}, outcome, events)

    steps.append(
        ("listTools", None, ok({"tools": [tool.listing() for tool in load_example("assistant").tools.values()]}), [])
    )
    steps.append(call("whoami", {}, ok(text(f'{{"request_id":{request_id()}}}'))))
    steps += [
        call(
            "summarize",
            {"text": TEXT},
            ok(text(SUMMARY["content"]["text"])),
            asked("sampling/createMessage", "s1", SAMPLING_PARAMS),
            log("debug", "summarize", "summarized by small-1"),
        ),
        call(
            "summarize",
            {"text": TEXT},
            ok(failure("sampling/createMessage: the client answered with error -1: User rejected sampling")),
            asked("sampling/createMessage", "s2", SAMPLING_PARAMS),
        ),
        call(
            "confirm_delete",
            {"name": "cover-letter"},
            ok(text("deleted cover-letter")),
            elicited("s3", "cover-letter"),
            log("notice", "drafts", "deleted the draft 'cover-letter'"),
        ),
        call(
            "confirm_delete",
            {"name": "shopping-list"},
            ok(text("kept shopping-list: declined")),
            elicited("s4", "shopping-list"),
        ),
        call(
            "confirm_delete",
            {"name": "shopping-list"},
            ok(text("kept shopping-list: cancelled")),
            elicited("s5", "shopping-list"),
        ),
        call("confirm_delete", {"name": "cover-letter"}, ok(failure("no draft named 'cover-letter'"))),
        call(
            "workspace",
            {},
            ok(text("file:///home/user/project (project)\nfile:///tmp/scratch")),
            asked("roots/list", "s6", None),
        ),
    ]
    steps.append(
        count_with_progress(
            3,
            ok(text("counted to 3")),
            log("info", "count_to", "counting to 3"),
            log("debug", "count_to", {"counted": 3}),
        )
    )
    steps += [
        # no progress token: no progress notifications
        call(
            "count_to",
            {"n": 2},
            ok(text("counted to 2")),
            log("info", "count_to", "counting to 2"),
            log("debug", "count_to", {"counted": 2}),
        ),
        call("count_to", {"n": 0}, ok(failure("n must be between 1 and 1000"))),
        call(
            "read_text",
            {"path": str(readme)},
            ok(text("héllo\n")),
            log("info", "read_text", f"read 6 characters from {readme}"),
        ),
        call("read_text", {"path": str(missing)}, ok(failure(f"cannot read {missing}: No such file or directory"))),
    ]
    # every level until the client sets one; then that level and above
    steps += [logged_at(level, True) for level in LEVELS]
    steps.append(("setLevel", "warning", ok({}), []))
    steps += [logged_at(level, LEVELS.index(level) >= LEVELS.index("warning")) for level in LEVELS]
    steps.append(count_with_progress(1, ok(text("counted to 1"))))  # its info and debug logs are filtered
    steps.append(("ping", None, ok({}), []))
    return steps


def bare_steps() -> list[Step]:
    """The steps of a session with a client that declared no capabilities."""
    return [
        call(
            "summarize",
            {"text": TEXT},
            ok(failure("sampling/createMessage: the client did not declare the sampling capability")),
        ),
        call(
            "confirm_delete",
            {"name": "shopping-list"},
            ok(failure("elicitation/create: the client did not declare the elicitation capability")),
        ),
        call("workspace", {}, ok(failure("roots/list: the client did not declare the roots capability"))),
        logged_at("debug", True),
    ]


def plan(steps: list[Step], callbacks: bool) -> dict[str, Any]:
    """What a client runner needs: the scripted answers and the steps with their event counts."""
    return {
        "callbacks": callbacks,
        "answers": {method: list(answers) for method, answers in ANSWERS.items()},
        "steps": [[kind, params, len(events)] for kind, params, _, events in steps],
    }


IDENTITY = {
    "serverInfo": {"name": "assistant", "version": "1.0.0"},
    "capabilities": {"tools": {}, "resources": {}, "logging": {}},
    "instructions": "Summarize text, manage drafts, read files.",
}


# -- the Python SDK ----------------------------------------------------------------------------


async def python_sdk_session(session_plan: dict[str, Any], env: dict[str, str], errlog) -> dict[str, Any]:
    """Run a plan through ``mcp.ClientSession``; the same output as ``ts_context_client.mjs``."""
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client
    from mcp.shared import exceptions

    protocol_error = getattr(exceptions, "MCPError", None) or exceptions.McpError
    events = Events(WAIT_LIMIT)
    answers = session_plan["answers"]

    def wire(model: Any) -> Any:
        return None if model is None else model.model_dump(by_alias=True, exclude_unset=True, mode="json")

    def answer(method: str, context: Any, params: Any, result_type: Any) -> Any:
        events.record({"request": method, "id": context.request_id, "params": wire(params)})
        scripted = answers[method].pop(0)
        if "error" in scripted:
            return types.ErrorData(**scripted["error"])
        return result_type.model_validate(scripted["result"])

    async def sampling(context, params):
        return answer("sampling/createMessage", context, params, types.CreateMessageResult)

    async def elicitation(context, params):
        return answer("elicitation/create", context, params, types.ElicitResult)

    async def list_roots(context):
        return answer("roots/list", context, None, types.ListRootsResult)

    async def logging(params):
        events.record({"log": wire(params)})

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        reported = {"progress": done, "total": total, "message": message}
        events.record({"progress": {key: value for key, value in reported.items() if value is not None}})

    callbacks = (
        {"sampling_callback": sampling, "elicitation_callback": elicitation, "list_roots_callback": list_roots}
        if session_plan["callbacks"]
        else {}
    )
    params = StdioServerParameters(command=SERVER_COMMAND[0], args=[*SERVER_COMMAND[1:], *APP], env=env)
    out: dict[str, Any] = {"steps": []}
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, logging_callback=logging, **callbacks) as client,
    ):
        init = wire(await client.initialize())
        out.update(
            serverVersion=init["serverInfo"], capabilities=init["capabilities"], instructions=init.get("instructions")
        )

        def set_level(level: str) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # newer SDKs mark logging deprecated for a later revision
                return client.set_logging_level(level)

        calls = {
            "listTools": lambda _: client.list_tools(),
            "callTool": lambda p: client.call_tool(p["name"], p["arguments"]),
            "callToolWithProgress": lambda p: client.call_tool(
                p["name"], p["arguments"], progress_callback=on_progress
            ),
            "setLevel": set_level,
            "ping": lambda _: client.send_ping(),
        }
        for kind, step_params, expected_events in session_plan["steps"]:
            try:
                outcome = {"ok": wire(await calls[kind](step_params))}
            except protocol_error as error:
                outcome = {"error": {"code": error.error.code, "message": error.error.message}}
            arrived = await events.wait_for(expected_events)
            out["steps"].append({"outcome": outcome, "events": events.take()})
            if not arrived:
                break  # this step's comparison fails and shows what did arrive
    return out


def run_python_session(steps: list[Step], callbacks: bool, engine_name: str, tmp_path: Path) -> dict[str, Any]:
    import anyio

    with open(tmp_path / "server-stderr.txt", "w") as errlog:
        return anyio.run(python_sdk_session, plan(steps, callbacks), engine_env(engine_name), errlog)


def test_python_sdk_client_with_every_callback(engine_name: str, tmp_path: Path) -> None:
    steps = assistant_steps(1, tmp_path, tokens=False)
    check_session(run_python_session(steps, True, engine_name, tmp_path), IDENTITY, steps)


def test_python_sdk_client_without_capabilities(engine_name: str, tmp_path: Path) -> None:
    steps = bare_steps()
    check_session(run_python_session(steps, False, engine_name, tmp_path), IDENTITY, steps)


# -- the TypeScript SDK ------------------------------------------------------------------------


@pytest.fixture
def ts_context_client(request: pytest.FixtureRequest) -> Path:
    """``ts_context_client.mjs`` beside the npm install of the TypeScript SDK (``ts_client``)."""
    script = request.getfixturevalue("ts_client").with_name("ts_context_client.mjs")
    shutil.copyfile(Path(__file__).with_name("ts_context_client.mjs"), script)
    return script


def run_typescript_session(
    script: Path, steps: list[Step], callbacks: bool, engine_name: str, tmp_path: Path
) -> dict[str, Any]:
    command = json.dumps([*SERVER_COMMAND, *APP])
    with open(tmp_path / "server-stderr.txt", "wb") as errlog:
        done = subprocess.run(
            ["node", str(script), command, json.dumps(plan(steps, callbacks))],
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=engine_env(engine_name),
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, (tmp_path / "server-stderr.txt").read_text()
    return json.loads(done.stdout)


def test_typescript_sdk_client_with_every_callback(ts_context_client: Path, engine_name: str, tmp_path: Path) -> None:
    steps = assistant_steps(0, tmp_path, tokens=True)
    check_session(
        run_typescript_session(ts_context_client, steps, True, engine_name, tmp_path), IDENTITY, steps, ts_outcome
    )


def test_typescript_sdk_client_without_capabilities(ts_context_client: Path, engine_name: str, tmp_path: Path) -> None:
    steps = bare_steps()
    check_session(
        run_typescript_session(ts_context_client, steps, False, engine_name, tmp_path), IDENTITY, steps, ts_outcome
    )
