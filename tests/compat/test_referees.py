"""The referees: every app of the corpus recorded under its own framework, and the hook that serves it otherwise.

A referee transcript is recorded twice when it is first needed, kept only when both recordings
agree, and cached under ``envs/transcripts/`` by the hash of the app, its calls, the framework's
pins and the recorder code that shapes it, so later runs read it back. Over stdio always; over
Streamable HTTP too when ``SHIPCODE_MCP_COMPAT_HTTP=1`` (the first recording of every app takes
minutes). ``serve_with_shipcode`` serves the same app file with shipcode-mcp, on both engines, and its
transcript must equal the referee's, step by step, but for the deliberate differences (``deliberate``).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

import environments
import pytest
import recorder

#: How a server may end: over stdio at the end of its input (exit 0); over HTTP on SIGTERM, where uvicorn
#: ends by the signal after its graceful shutdown (-15) or exits 0.
EXITS = {"stdio": (0,), "http": (0, -15)}

CASES = [
    pytest.param(app, framework, transport, id=f"{app.stem}-{framework}-{transport}")
    for app in recorder.apps()
    for framework in recorder.frameworks_of(app)
    for transport in ("stdio", "http")
]


@functools.cache
def referee(app: Path, framework: str, transport: str) -> dict[str, Any]:
    """The app's transcript under its framework (made on first use); skips when the framework cannot install."""
    if transport == "http" and os.environ.get("SHIPCODE_MCP_COMPAT_HTTP") != "1":
        pytest.skip("the HTTP referees are recorded with SHIPCODE_MCP_COMPAT_HTTP=1")
    try:
        return recorder.referee_transcript(app, framework, transport)
    except environments.RegistryUnreachable as error:
        pytest.skip(str(error))


@functools.cache
def shipcode_path() -> Path:
    """A folder holding this checkout's shipcode-mcp (built engine included) and orjson, which it needs:
    on ``PYTHONPATH``, a framework's environment serves with them and keeps its own packages."""
    import tempfile

    import orjson

    import shipcode_mcp

    folder = Path(tempfile.mkdtemp(prefix="shipcode-path-"))
    for module in (shipcode_mcp, orjson):
        (folder / module.__name__).symlink_to(Path(module.__file__).parent)
    return folder


#: How ``env`` picks each engine: the compiled one required, or the pure one.
ENGINE_SWITCHES = {"compiled": "SHIPCODE_MCP_REQUIRE_EXTENSIONS=1", "pure": "SHIPCODE_MCP_NO_EXTENSIONS=1"}


def serve_with_shipcode(
    app_path: Path, api: str, port: int | None = None, framework: str | None = None, engine: str = "compiled"
) -> list[str]:
    """THE HOOK: the command that serves ``app_path`` (written for ``api``) with shipcode-mcp, unchanged.

    Over stdio when ``port`` is None, else over Streamable HTTP on ``port`` (``--http PORT``). It runs in
    the environment of ``framework`` (default: the first of the API's), with shipcode-mcp on ``PYTHONPATH``,
    on ``engine``.
    """
    framework = framework or environments.frameworks_for(api)[0]
    interpreter = environments.python(framework)
    command = [
        *("env", "-u", "SHIPCODE_MCP_NO_EXTENSIONS", "-u", "SHIPCODE_MCP_REQUIRE_EXTENSIONS", ENGINE_SWITCHES[engine]),
        f"PYTHONPATH={shipcode_path()}",
        *(str(interpreter), "-m", "shipcode_mcp", str(app_path)),
    ]
    return command if port is None else [*command, "--http", str(port)]


def test_every_framework_is_pinned_exactly() -> None:
    """Each ``.in`` names one framework at one version; its ``.txt`` pins that and everything else with ``==``."""
    for name in environments.FRAMEWORKS:
        wanted = environments.version(name)
        assert re.fullmatch(r"[a-z]+==\d+\.\d+\.\d+", wanted), wanted
        pins = (environments.REQUIREMENTS / f"{name}.txt").read_text().splitlines()
        requirements = [line for line in pins if line and not line.startswith("#")]
        assert wanted in requirements
        assert [line for line in requirements if "==" not in line] == []


def test_every_app_is_written_for_one_api_and_has_calls() -> None:
    """Apps of all three APIs, each with a sidecar of calls and at least one framework to referee it."""
    apis = {app.name: recorder.api_of(app) for app in recorder.apps()}
    assert set(apis.values()) == {"sdk-fastmcp", "sdk-mcpserver", "fastmcp"}
    for app in recorder.apps():
        calls = recorder.script_of(app)["calls"]
        assert calls and all(set(call) <= {"why", "method", "params", "answers"} for call in calls), app.name
        assert set(recorder.script_of(app)) <= {"calls", "routes", "factories", "frameworks"}, app.name
        assert recorder.frameworks_of(app), app.name


def test_normalize_replaces_only_what_may_differ() -> None:
    """Server info, the server's request ids, progress tokens and the apps folder become markers; nothing else."""
    folder = str(recorder.APPS)
    raw = [
        {
            "request": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            "received": [{"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": "x", "version": "1.2"}}}],
        },
        {
            "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"_meta": {"progressToken": 7}}},
            "received": [
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": 1}},
                {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}},
                {"client replies": {"jsonrpc": "2.0", "id": 0, "result": {}}},
                {"jsonrpc": "2.0", "id": "a", "method": "sampling/createMessage", "params": {}},
                {"client replies": {"jsonrpc": "2.0", "id": "a", "error": {"code": 1, "message": "m"}}},
                {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": f"in {folder}/a.py"}]}},
            ],
        },
        {"exit": 0, "app said": []},
    ]
    assert recorder.normalize(raw) == [
        {
            "request": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            "received": [
                {"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": "<name>", "version": "<version>"}}}
            ],
        },
        {
            "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"_meta": {"progressToken": 7}}},
            "received": [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": "<progress token>", "progress": 1},
                },
                {"jsonrpc": "2.0", "id": "<server request 1>", "method": "elicitation/create", "params": {}},
                {"client replies": {"jsonrpc": "2.0", "id": "<server request 1>", "result": {}}},
                {"jsonrpc": "2.0", "id": "<server request 2>", "method": "sampling/createMessage", "params": {}},
                {
                    "client replies": {
                        "jsonrpc": "2.0",
                        "id": "<server request 2>",
                        "error": {"code": 1, "message": "m"},
                    }
                },
                {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "in <apps>/a.py"}]}},
            ],
        },
        {"exit": 0, "app said": []},
    ]


def _response_to(request: dict[str, Any], received: list[dict[str, Any]]) -> dict[str, Any]:
    """The last message received for ``request``, checked to be its one answer, after notifications and asks."""
    *before, answer = received
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request["id"]
    assert len(set(answer) & {"result", "error"}) == 1, answer
    asked = None
    for message in before:
        if "client replies" in message:  # follows the server's request it answers
            assert asked is not None and message["client replies"]["id"] == asked["id"]
            asked = None
        else:
            assert message["jsonrpc"] == "2.0" and "method" in message and "result" not in message, message
            asked = message if "id" in message else None
    return answer


@pytest.mark.parametrize(("app", "framework", "transport"), CASES)
def test_referee_transcript_is_well_formed(app: Path, framework: str, transport: str) -> None:
    """Each session: initialize at the offered version, the listings, every scripted call, the routes, an exit."""
    transcript = referee(app, framework, transport)
    calls = recorder.script_of(app)["calls"]
    assert list(transcript) == list(recorder.PROTOCOL_VERSIONS)
    routes = recorder.script_of(app).get("routes", []) if transport == "http" else []
    for version, steps in transcript.items():
        *exchanges, ending = steps
        exchanges, visits = exchanges[: len(exchanges) - len(routes)], exchanges[len(exchanges) - len(routes) :]
        assert [visit["route"] for visit in visits] == routes
        methods = [step["request"]["method"] for step in exchanges]
        assert methods == ["initialize", *recorder.LISTINGS, *(call["method"] for call in calls)]
        answers = [_response_to(step["request"], step["received"]) for step in exchanges]
        assert answers[0]["result"]["protocolVersion"] == version
        assert [step["request"]["params"] for step in exchanges[5:]] == [call.get("params", {}) for call in calls]
        assert [answer["id"] for answer in answers] == list(range(1, len(exchanges) + 1))
        assert ending["exit"] in EXITS[transport], ending


@pytest.mark.parametrize(("app", "framework", "transport"), CASES)
def test_referee_transcript_is_stable(app: Path, framework: str, transport: str) -> None:
    """Recording twice gave the same normalized transcript (checked when first recorded), as the cache holds it."""
    transcript = referee(app, framework, transport)
    assert json.loads(recorder.cache_of(app, framework, transport).read_text()) == transcript


@pytest.mark.parametrize(("app", "framework", "transport"), CASES)
def test_shipcode_serves_the_app_as_its_framework_does(
    app: Path, framework: str, transport: str, engine_name: str
) -> None:
    """The same app file served by shipcode-mcp (on either engine) gives the referee's transcript, call by call."""
    expected = deliberate(referee(app, framework, transport), framework, transport)
    api = recorder.api_of(app)
    actual = recorder.record(lambda port: serve_with_shipcode(app, api, port, framework, engine_name), app, transport)
    compare(app, expected, actual)


#: The lines of a lifespan that ran: what the corpus apps with one write to stderr.
LIFESPAN = ["app: lifespan opened", "app: lifespan closed"]


def deliberate(expected: dict[str, Any], framework: str, transport: str) -> dict[str, Any]:
    """The referee's transcript with the differences docs/migrating.md records as deliberate ("Stopping over
    HTTP"): on SIGTERM shipcode-mcp exits 0 where uvicorn under the frameworks ends by the signal (-15), and
    it leaves the app's lifespan where fastmcp (2.x and 4.x) never does. Each is checked to be what the
    referee did, so a framework that changes fails here instead of passing unnoticed."""
    if transport != "http":
        return expected
    changed = {}
    for version, steps in expected.items():
        *exchanges, ending = steps
        assert ending["exit"] == -15, ending
        said = ending["app said"]
        if framework.startswith("fastmcp") and said:
            assert said == LIFESPAN[:1], said
            said = LIFESPAN
        changed[version] = [*exchanges, {"exit": 0, "app said": said}]
    return changed


def compare(app: Path, expected: dict[str, Any], actual: dict[str, Any]) -> None:
    """Every step of ``actual`` equals the referee's, in every protocol version."""
    for version in recorder.PROTOCOL_VERSIONS:
        for step, (want, got) in enumerate(zip(expected[version], actual[version], strict=True)):
            assert got == want, f"{app.name} {version} step {step}"
