"""``shipcode-mcp --http``: uvicorn serving the app on 127.0.0.1, processes sharing a state key.

Servers run as subprocesses on ephemeral ports; requests go through the standard library's
HTTP client, so these are the bytes a real client reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from support.httpserver import APP, MODERN_HEADERS, HttpServer
from support.httpwire import META, modern_body, within
from support.wire import engine_env


def modern_call(server: HttpServer, name: str, params: dict, rid: int = 1) -> tuple[int, dict, bytes]:
    body = modern_body(
        "tools/call",
        {"name": name, **params},
        rid=rid,
        meta={**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}},
    )
    headers = {**MODERN_HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name}
    return server.post(body, headers)


def test_a_served_app_answers_both_eras_with_the_stdio_bytes(engine_name: str, run) -> None:
    from shipcode_mcp.target import load_target

    server = HttpServer(engine_name)
    try:
        status, headers, body = modern_call(server, "echo", {"arguments": {"text": "hi"}})
        initialize = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + b'{"protocolVersion":"2025-11-25"}}'
        legacy = server.post(initialize, {**MODERN_HEADERS})
    finally:
        assert server.stop() == 0
    catalogue = load_target(APP).catalogue
    sent = modern_body(
        "tools/call",
        {"name": "echo", "arguments": {"text": "hi"}},
        meta={**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}},
    )
    assert (status, headers["content-type"], body) == (
        200,
        "application/json",
        run(sent + b"\n", catalogue=catalogue()),
    )
    assert (legacy[0], legacy[2]) == (200, run(initialize + b"\n", catalogue=catalogue()))
    assert len(legacy[1]["mcp-session-id"]) == 32


def round_trip(first: HttpServer, second: HttpServer) -> bytes:
    """Start a greet round on ``first``, answer it on ``second``: the final body."""
    status, _, body = modern_call(first, "greet", {})
    asked = orjson.loads(body)["result"]
    assert (status, asked["resultType"]) == (200, "input_required")
    params = {
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": asked["requestState"],
    }
    return modern_call(second, "greet", params, rid=2)[2]


def test_a_round_finishes_on_another_process_sharing_the_key(engine_name: str) -> None:
    key = {"SHIPCODE_MCP_STATE_KEY": "shared-key-for-tests-of-32-bytes"}
    servers = [HttpServer(engine_name, env=key), HttpServer(engine_name, env=key)]
    other = HttpServer(engine_name, env={"SHIPCODE_MCP_STATE_KEY": "another-key-of-thirty-two-bytes!!"})
    try:
        finished = round_trip(servers[0], servers[1])
        refused = round_trip(servers[0], other)
    finally:
        assert [server.stop() for server in (*servers, other)] == [0, 0, 0]
    assert finished.startswith(b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]')
    assert refused == b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid requestState"}}\n'


def test_processes_of_one_server_share_one_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from support.httpwire import http, modern_headers

    from shipcode_mcp.transports.http import serve

    monkeypatch.delenv("SHIPCODE_MCP_STATE_KEY", raising=False)
    serve.share_state_key(None)
    key = os.environ["SHIPCODE_MCP_STATE_KEY"]
    assert len(key) == 43
    serve.share_state_key(None)
    assert os.environ["SHIPCODE_MCP_STATE_KEY"] == key  # one there already: kept
    builder = "shipcode_mcp.cli:http_app_of_command_line"
    monkeypatch.setenv(serve.HANDOFF_VARIABLE, json.dumps([builder, [APP, "--http", "8000", "--processes", "2"]]))
    first, second = serve.worker_app(), serve.worker_app()  # as two processes build theirs
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    headers = {**modern_headers("tools/call", "greet"), "host": "localhost"}

    async def scenario() -> bytes:
        asked = await http(first, "POST", modern_body("tools/call", {"name": "greet"}, meta=meta), headers)
        state = orjson.loads(asked.body)["result"]["requestState"]
        answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        retry = modern_body("tools/call", {"name": "greet", "inputResponses": answer, "requestState": state}, meta=meta)
        return (await http(second, "POST", retry, headers)).body

    assert within(scenario()).startswith(
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]'
    )


def test_several_processes_serve_one_port(engine_name: str) -> None:
    server = HttpServer(engine_name, "--processes", "2")
    try:
        answers = {modern_call(server, "echo", {"arguments": {"text": str(i)}}, rid=i)[0] for i in range(20)}
    finally:
        assert server.stop() == 0
    assert answers == {200}


def test_without_uvicorn_http_is_a_clear_error(engine_name: str, tmp_path: Path) -> None:
    (tmp_path / "uvicorn.py").write_text("raise ImportError('no uvicorn here')\n")
    env = {**engine_env(engine_name), "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-m", "shipcode_mcp", "--http", "8000"], capture_output=True, env=env, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        b"",
        b"shipcode-mcp: error: --http needs uvicorn: pip install 'shipcode-mcp[http]'\n",
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--processes", "2"],
        ["--allowed-hosts", "a.example"],
        ["--allowed-origins", "http://a"],
        ["--body-timeout", "5"],
        ["--public-url", "https://mcp.example"],
        ["--max-head-bytes", "1024"],
        ["--head-timeout", "5"],
        ["--redis", "redis://127.0.0.1:6379/0"],
    ],
)
def test_http_options_need_http(engine_name: str, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shipcode_mcp", *args],
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (
        2,
        b"shipcode-mcp: error: --processes, --redis, --allowed-hosts, --allowed-origins, --public-url, "
        b"--body-timeout, --max-head-bytes and --head-timeout need --http\n",
    )


@pytest.mark.parametrize("address", ["localhost", "1.2.3.4:", ":80", "80000", "[::1]:x"])
def test_a_bad_address_is_a_usage_error(engine_name: str, address: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shipcode_mcp", "--http", address],
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (
        2,
        f"shipcode-mcp: error: argument --http: invalid [HOST:]PORT value: '{address}'\n".encode(),
    )


@pytest.mark.parametrize("processes", [[], ["--processes", "2"]])
@pytest.mark.parametrize(
    ("option", "value", "kind"),
    [
        ("--max-head-bytes", "0", "positive integer"),
        ("--max-head-bytes", "-1", "positive integer"),
        ("--max-head-bytes", "64k", "positive integer"),
        ("--head-timeout", "0", "finite positive number of seconds"),
        ("--head-timeout", "-1", "finite positive number of seconds"),
        ("--head-timeout", "inf", "finite positive number of seconds"),
        ("--head-timeout", "nan", "finite positive number of seconds"),
    ],
)
def test_a_bad_head_limit_is_a_usage_error(
    engine_name: str, processes: list[str], option: str, value: str, kind: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shipcode_mcp", "--http", "8000", *processes, option, value],
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
        check=False,
    )
    last = done.stderr.splitlines()[-1]
    assert (done.returncode, last) == (
        2,
        f"shipcode-mcp: error: argument {option}: invalid {kind} value: '{value}'".encode(),
    )


def test_the_protocol_and_its_head_limits_reach_spawned_processes() -> None:
    import pickle

    from shipcode_mcp.transports.http import serve
    from shipcode_mcp.transports.http.connection import HttpConnection

    made = pickle.loads(pickle.dumps(serve.protocol(1024, 2.5)["http"]))
    limits = {"max_head_bytes": 1024, "head_timeout": 2.5, "direct": True}
    assert (made.func, made.args, made.keywords) == (HttpConnection, (), limits)


def test_without_httptools_h11_bounds_heads_by_its_own_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from shipcode_mcp.transports.http import serve

    monkeypatch.setitem(sys.modules, "httptools", None)  # an import of it fails
    for module in ("shipcode_mcp.transports.http.connection", "uvicorn.protocols.http.httptools_impl"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    assert serve.protocol(1024, 2.5) == {"http": "h11", "h11_max_incomplete_event_size": 1024}
