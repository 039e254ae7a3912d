"""The requests of the HTTP benchmark and what their answers must be.

A workload is one ``tools/call`` POSTed again and again with the same id. shipcode-mcp's answer must be,
byte for byte, the line its stdio server writes for the same message in the same era; every other server's
is parsed (JSON, or the last ``data:`` line of an event stream) and judged by what it means.
"""

from __future__ import annotations

import http.client
import math
import subprocess
from dataclasses import dataclass

import orjson

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ECHO_TEXT = "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. 0123456789"
#: The workloads: name -> (tool, arguments, the text the answer carries).
WORKLOADS = {
    "echo": ("echo", {"text": ECHO_TEXT}, ECHO_TEXT),
    "add": ("add", {"a": 1234, "b": 5678.25}, "6912.25"),
}
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@dataclass(frozen=True)
class Request:
    """One POST: its headers (without Host and Content-Length) and body."""

    headers: dict
    body: bytes

    def spec(self) -> bytes:
        """The request file of ``post.lua``: header lines, an empty line, the body."""
        head = "".join(f"{name}: {value}\n" for name, value in self.headers.items())
        return head.encode() + b"\n" + self.body


def tool_call(workload: str, era: str, session: str | None = None, version: str = LEGACY) -> Request:
    """The ``tools/call`` of a workload: 2026-07-28 (``_meta`` and the Mcp-* headers) or legacy."""
    tool, arguments, _ = WORKLOADS[workload]
    params: dict = {"name": tool, "arguments": arguments}
    headers = dict(POST_HEADERS)
    if era == "modern":
        params["_meta"] = META
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool})
    else:
        headers["MCP-Protocol-Version"] = version
        if session is not None:
            headers["Mcp-Session-Id"] = session
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    return Request(headers, body)


def initialize_body(rid: int = 0) -> bytes:
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "http-bench", "version": "1"},
            },
        }
    )


INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def post(port: int, body: bytes, headers: dict) -> tuple[int, dict, bytes]:
    """One POST to 127.0.0.1:port/mcp on a fresh connection: (status, lower-cased headers, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/mcp", body=body, headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def open_session(port: int) -> tuple[str, str]:
    """Open a legacy session over HTTP: (Mcp-Session-Id, the negotiated protocol version)."""
    status, headers, body = post(port, initialize_body(), POST_HEADERS)
    if status != 200 or "mcp-session-id" not in headers:
        raise RuntimeError(f"initialize: HTTP {status} {body[:200]!r}")
    version = orjson.loads(body)["result"]["protocolVersion"]
    session = headers["mcp-session-id"]
    ack = {**POST_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": version}
    status, _, body = post(port, INITIALIZED, ack)
    if status != 202:
        raise RuntimeError(f"notifications/initialized: HTTP {status} {body[:200]!r}")
    return session, version


def stdio_answer(command: list, env: dict, request: Request, era: str) -> bytes:
    """The line shipcode-mcp's stdio server writes for the request's body, after a handshake in the legacy era."""
    lines = [request.body]
    if era == "legacy":
        lines = [initialize_body(0), INITIALIZED, request.body]
    done = subprocess.run(command, input=b"\n".join(lines) + b"\n", capture_output=True, env=env, timeout=60)
    answers = done.stdout.splitlines(keepends=True)
    if done.returncode != 0 or not answers:
        raise RuntimeError(f"stdio server: exit {done.returncode}, {done.stderr[-300:]!r}")
    return answers[-1]


def message_of(content_type: str, body: bytes) -> dict:
    """The JSON-RPC message of an answer: the body, or the last ``data:`` line of an event stream."""
    if content_type.startswith("text/event-stream"):
        data = [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:")]
        return orjson.loads(data[-1])
    return orjson.loads(body)


def meaning_problem(workload: str, message: object) -> str | None:
    """What is wrong with a parsed answer to a workload's request (None when it says the right thing)."""
    _, _, text = WORKLOADS[workload]
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("id") != 1:
        return "not a JSON-RPC answer to id 1"
    result = message.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        return f"no successful result: {str(message)[:200]}"
    content = result.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return "no content"
    got = content[0].get("text")
    if workload == "add":
        try:
            same = math.isclose(float(got), float(text))
        except (TypeError, ValueError):
            same = False
    else:
        same = got == text
    return None if same else f"text {got!r}, expected {text!r}"


def floor_problem(message: object) -> str | None:
    """The floor answers one fixed result whatever it is asked: a JSON-RPC result for id 1."""
    if not isinstance(message, dict) or message.get("id") != 1 or "result" not in message:
        return "not a JSON-RPC result for id 1"
    return None
