"""The requests of the HTTP benchmark and what their answers must be.

A workload is one request (a ``tools/call``, ``ping`` or ``tools/list``) POSTed again and again with the same
id. shipcode-mcp's answer must be, byte for byte, the line its stdio server writes for the same message in the
same era; every other server's is parsed (JSON, or the last ``data:`` line of an event stream) and judged by
what it means.
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


@dataclass(frozen=True)
class Workload:
    """One request: its method, the tool it calls (with its arguments and the text the answer carries) and the
    eras it is measured in ("fixed", the floor's, is measured with every workload)."""

    method: str
    tool: str = ""
    arguments: dict | None = None
    text: str = ""
    eras: tuple = ("modern", "legacy")


WORKLOADS = {
    "echo": Workload("tools/call", "echo", {"text": ECHO_TEXT}, ECHO_TEXT),
    "add": Workload("tools/call", "add", {"a": 1234, "b": 5678.25}, "6912.25"),
    "ping": Workload("ping", eras=("legacy",)),
    "tools/list": Workload("tools/list", eras=("modern",)),
}
#: The workloads measured unless ``--workloads`` names others.
DEFAULT_WORKLOADS = ("echo", "add")
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


def workload_post(workload: str, era: str, session: str | None = None, version: str = LEGACY) -> Request:
    """The POST of a workload: 2026-07-28 (``_meta`` and the Mcp-* headers) or legacy (in the session, if any)."""
    asked = WORKLOADS[workload]
    params: dict = {"name": asked.tool, "arguments": asked.arguments} if asked.tool else {}
    headers = dict(POST_HEADERS)
    if era == "modern":
        params["_meta"] = META
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": asked.method})
        if asked.tool:
            headers["Mcp-Name"] = asked.tool
    else:
        headers["MCP-Protocol-Version"] = version
        if session is not None:
            headers["Mcp-Session-Id"] = session
    message: dict = {"jsonrpc": "2.0", "id": 1, "method": asked.method}
    if params:
        message["params"] = params
    return Request(headers, orjson.dumps(message))


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


def open_session(port: int, stateless: bool = False) -> tuple[str | None, str]:
    """Open a legacy session over HTTP: (Mcp-Session-Id, the negotiated protocol version). A server that keeps
    no sessions (``stateless``) may give no id: then None, and the handshake is made all the same."""
    status, headers, body = post(port, initialize_body(), POST_HEADERS)
    if status != 200 or ("mcp-session-id" not in headers and not stateless):
        raise RuntimeError(f"initialize: HTTP {status} {body[:200]!r}")
    version = message_of(headers.get("content-type", ""), body)["result"]["protocolVersion"]
    session = headers.get("mcp-session-id")
    ack = {**POST_HEADERS, "MCP-Protocol-Version": version}
    if session is not None:
        ack["Mcp-Session-Id"] = session
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
    asked = WORKLOADS[workload]
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("id") != 1:
        return "not a JSON-RPC answer to id 1"
    result = message.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        return f"no successful result: {str(message)[:200]}"
    if asked.method == "ping":
        return None if set(result) <= {"_meta"} else f"a ping's result is not empty: {str(result)[:200]}"
    if asked.method == "tools/list":
        return tools_problem(result.get("tools"))
    content = result.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return "no content"
    got = content[0].get("text")
    if workload == "add":
        try:
            same = math.isclose(float(got), float(asked.text))
        except (TypeError, ValueError):
            same = False
    else:
        same = got == asked.text
    return None if same else f"text {got!r}, expected {asked.text!r}"


def tools_problem(tools: object) -> str | None:
    """What is wrong with a ``tools/list`` result's tools: a list of tools, each named, with an object schema."""
    if not isinstance(tools, list) or not tools:
        return "no tools"
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            return f"a tool without a name: {str(tool)[:200]}"
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tool {tool['name']!r}: its inputSchema is not an object schema"
    return None


def floor_problem(message: object) -> str | None:
    """The floor answers one fixed result whatever it is asked: a JSON-RPC result for id 1."""
    if not isinstance(message, dict) or message.get("id") != 1 or "result" not in message:
        return "not a JSON-RPC result for id 1"
    return None
