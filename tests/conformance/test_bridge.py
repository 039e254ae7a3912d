"""The stdio-to-Streamable-HTTP bridge the conformance run depends on (``bridge.mjs``).

The server is ``scripted_server.py`` (no shipcode-mcp in it), the client the TypeScript SDK's
(``bridge_client.mjs``). Skipped, with the reason, only when npm cannot reach its registry.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import scripted_server
from support import conformance

SCRIPTED = [sys.executable, str(conformance.FOLDER / "scripted_server.py")]


def test_messages_pass_both_ways(node: Path, tmp_path: Path) -> None:
    """Every kind of server message reaches the client in order, and the client's answers reach the server."""
    with conformance.bridge(SCRIPTED, dict(os.environ), tmp_path / "bridge.log") as url:
        client = subprocess.run(
            [node, conformance.FOLDER / "bridge_client.mjs", url], capture_output=True, timeout=120, check=False
        )
    assert client.returncode == 0, client.stderr.decode(errors="replace")
    sampled = {"model": "m", "stopReason": "endTurn", "role": "assistant", "content": {"type": "text", "text": "Hello"}}
    answers = [
        {"jsonrpc": "2.0", "id": "s-1", "result": sampled},
        {"jsonrpc": "2.0", "id": "s-2", "result": {"action": "accept", "content": {"name": "Ada"}}},
        {"jsonrpc": "2.0", "id": "s-3", "result": {"roots": [{"uri": "file:///work", "name": "work"}]}},
    ]
    requests = [["request", method, rid, params] for rid, method, params in scripted_server.SERVER_REQUESTS]
    assert json.loads(client.stdout) == [
        ["notification", "notifications/message", {"level": "info", "data": "started"}],
        ["progress", {"progress": 1, "total": 2}],
        *requests,
        ["notification", "notifications/resources/updated", {"uri": "test://watched"}],
        ["progress", {"progress": 2, "total": 2}],
        ["result", {"content": [{"type": "text", "text": json.dumps(answers, separators=(",", ":"))}]}],
    ]


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
)


def post(url: str, body: str, path: str = "/mcp", **headers: str) -> tuple[int, bytes]:
    """POST ``body`` to the bridge at ``url`` (``path`` instead of its own); the status and whole body.

    Header names are given with ``_`` for ``-``; a ``Host`` given replaces the real one.
    """
    address = urlsplit(url)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        connection.request("POST", path, body, headers={k.replace("_", "-"): v for k, v in headers.items()})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def refusal(status: int, message: str) -> tuple[int, bytes]:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    return status, json.dumps(body, separators=(",", ":")).encode()


def sse(message: bytes) -> tuple[int, bytes]:
    """A 200 answer holding one server-sent event with ``message``."""
    return 200, b"event: message\ndata: " + message + b"\n\n"


def test_refuses_what_it_must(node: Path, tmp_path: Path) -> None:
    """Loopback hosts and origins only, known sessions only, and at most --max-sessions sessions."""
    ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    forbidden = refusal(403, "Forbidden: loopback clients only")
    with conformance.bridge(SCRIPTED, dict(os.environ), tmp_path / "bridge.log", "--max-sessions", "1") as url:
        port = urlsplit(url).port
        assert post(url, INITIALIZE, Host=f"evil.example:{port}") == forbidden
        assert post(url, INITIALIZE, Origin="http://evil.example") == forbidden
        assert post(url, INITIALIZE, "/other") == refusal(404, "Not found")
        assert post(url, ping) == refusal(400, "Bad Request: no valid session id")
        assert post(url, ping, mcp_session_id="no-such-session") == refusal(404, "Session not found")
        assert post(url, INITIALIZE, Origin=f"http://localhost:{port}") == sse(
            b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{"tools":{},"logging":{},"resources":{"subscribe":true}},'
            b'"serverInfo":{"name":"scripted","version":"1.0.0"}}}'
        )
        assert post(url, INITIALIZE) == refusal(503, "Too many sessions")


def test_answers_for_a_server_that_exits(node: Path, tmp_path: Path) -> None:
    """A request the server process will never answer gets an error at once, naming why."""
    exits = [sys.executable, "-c", "raise SystemExit(3)"]
    with conformance.bridge(exits, dict(os.environ), tmp_path / "bridge.log") as url:
        assert post(url, INITIALIZE) == sse(
            b'{"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"Bridge: server exited (3)"}}'
        )
