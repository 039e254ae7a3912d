"""The MCP servers of the workload, how each is run, and the probe that checks one before it is loaded.

Every server serves the same three tools (tools.py; server_node.mjs on Node) at http://127.0.0.1:PORT/mcp with
``processes`` processes: shipcode-mcp with ``--processes``, the Python peers as uvicorn ``--workers``, Node
through node:cluster.
"""

from __future__ import annotations

import dataclasses
import http.client
import os
import signal
import sys
from pathlib import Path

import environments
import orjson
from common import node
from httpbench import servers
from httpbench.exchange import message_of
from httpbench.servers import Server

HERE = Path(__file__).resolve().parent
SHIPCODE = str(Path(sys.executable).with_name("shipcode-mcp"))
LEGACY = "2024-11-05"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
BASE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
VARIANTS = ("legacy", "stateless")


@dataclasses.dataclass
class Peer:
    name: str
    label: str
    speaks_modern: bool = False  # refused stateless calls fail the run instead of skipping the variant
    server: Server | None = None
    versions: dict = dataclasses.field(default_factory=dict)


PEERS = {
    "shipcode": "shipcode-mcp compiled",
    "shipcode-pure": "shipcode-mcp pure",
    "fastmcp": "FastMCP",
    "sdk": "Python SDK MCPServer",
    "node": "TypeScript SDK",
}
DEFAULT_PEERS = ("shipcode", "fastmcp", "sdk", "node")
CLIENT_DISTS = ("redis", "hiredis", "httpx", "httpcore", "anyio", "sniffio", "aiohttp")


def uvicorn_argv(python: str, module: str, processes: int) -> list:
    argv = [python, "-m", "uvicorn", f"{module}:app", "--app-dir", str(HERE), "--host", "127.0.0.1"]
    return argv + ["--port", "{port}", "--workers", str(processes), "--log-level", "warning"]


def prepare(name: str, processes: int, environ: dict) -> Peer:
    """The peer ``name`` with its server command, installing what it needs; its ``server.note`` says why it
    cannot run ("" when it can)."""
    peer = Peer(name, PEERS[name], speaks_modern=name.startswith("shipcode"))
    note = ""
    if name.startswith("shipcode"):
        clients, note = environments.shipcode_clients()
        env = dict(environ, PYTHONPATH=str(clients))
        if name == "shipcode-pure":
            env["SHIPCODE_MCP_NO_EXTENSIONS"] = "1"
        argv = [SHIPCODE, str(HERE / "server_shipcode.py"), "--http", "127.0.0.1:{port}"]
        argv += ["--processes", str(processes)]
        dists = ("shipcode-mcp", "uvicorn") + CLIENT_DISTS
        peer.versions = environments.python_versions(sys.executable, dists, str(clients))
    elif name in ("fastmcp", "sdk"):
        python, note = environments.python_env(name)
        env = dict(environ)
        argv = uvicorn_argv(python, f"server_{name}", processes)
        framework = "fastmcp" if name == "fastmcp" else "mcp"
        if not note:
            peer.versions = environments.python_versions(python, (framework, "uvicorn") + CLIENT_DISTS)
    else:
        script, note = environments.node_peer()
        env = dict(environ, NODE_ENV="production")
        argv = ["node", script, "{port}", str(processes)]
        if not note:
            peer.versions = node.versions()
    peer.server = Server(name, peer.label, argv, env, note)
    return peer


class Connection:
    """One keep-alive connection to a server's /mcp, as a k6 virtual user holds one."""

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(self, method: str, body: bytes | None, headers: dict) -> tuple[int, dict, bytes]:
        self.http.request(method, "/mcp", body=body, headers=headers)
        response = self.http.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()

    def close(self) -> None:
        self.http.close()


def _text(headers: dict, body: bytes) -> str | None:
    try:
        message = message_of(headers.get("content-type", ""), body)
        return message["result"]["content"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def opens_sessions(port: int) -> bool:
    """Whether the server answers a 2025 ``initialize`` with an ``Mcp-Session-Id`` (the session is then deleted)."""
    init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}
    connection = Connection(port)
    try:
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        _, headers, _ = connection.send("POST", body, BASE)
        session = headers.get("mcp-session-id")
        if session:
            connection.send("DELETE", None, dict(BASE, **{"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session}))
        return session is not None
    finally:
        connection.close()


def legacy_problem(connection: Connection, case: dict) -> str | None:
    """Make one whole legacy session for a case on the connection; what went wrong, or None."""
    init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    status, headers, answer = connection.send("POST", body, BASE)
    if status != 200:
        return f"initialize: HTTP {status} {answer[:200]!r}"
    asked = dict(BASE, **{"MCP-Protocol-Version": LEGACY})
    if "mcp-session-id" in headers:
        asked["Mcp-Session-Id"] = headers["mcp-session-id"]
    status, _, answer = connection.send("POST", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', asked)
    if status != 202:
        return f"notifications/initialized: HTTP {status} {answer[:200]!r}"
    params = {"name": case["tool"], "arguments": case["arguments"]}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    status, headers, answer = connection.send("POST", body, asked)
    if status != 200 or _text(headers, answer) != case["text"]:
        return f"tools/call {case['tool']}: HTTP {status} {answer[:300]!r}, expected the text {case['text'][:200]!r}"
    status, _, answer = connection.send("DELETE", None, asked)
    if not (200 <= status < 300 or ("Mcp-Session-Id" not in asked and status == 405)):
        return f"DELETE: HTTP {status} {answer[:200]!r}"
    return None


def stateless_problem(connection: Connection, case: dict) -> str | None:
    """Make one 2026-07-28 call for a case; what went wrong, or None."""
    params = {"name": case["tool"], "arguments": case["arguments"], "_meta": META}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = dict(BASE, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": case["tool"]})
    status, headers, answer = connection.send("POST", body, headers)
    if status != 200 or _text(headers, answer) != case["text"]:
        return f"HTTP {status} {answer[:300]!r}, expected the text {case['text'][:200]!r}"
    return None


def probe(port: int, variant: str, cases: list) -> str | None:
    """Ask each tool once in the variant's era on one connection; the first problem, or None."""
    check = legacy_problem if variant == "legacy" else stateless_problem
    connection = Connection(port)
    try:
        for case in cases[:3]:  # one call of each tool
            problem = check(connection, case)
            if problem:
                return problem
    except (OSError, http.client.HTTPException) as error:
        return f"{type(error).__name__}: {error}"
    finally:
        connection.close()
    return None


def environ(redis_url: str, api_url: str, http_client: str) -> dict:
    """What every server's environment adds: where Redis and the API service are, which HTTP client."""
    return {"REALISTIC_REDIS_URL": redis_url, "REALISTIC_API_URL": api_url, "REALISTIC_HTTP_CLIENT": http_client}


def stop(server: Server) -> None:
    """Stop a server and every process it started (a worker left behind by its parent is killed)."""
    if server.process is None:
        return
    tree = servers.process_tree(server.process.pid)
    servers.stop(server)
    for pid in tree[1:]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
