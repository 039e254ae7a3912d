"""``benchmarks/run.py http``: the requests of the ``ping`` and ``tools/list`` workloads, the checks that judge a
peer's answers to them, and the Go peers' versions read from their binaries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # its packages import each other so
try:
    from httpbench import exchange, servers
finally:
    del sys.path[0]

ANSWER = {"jsonrpc": "2.0", "id": 1}
TOOL = {"name": "user_info", "description": "Who am I", "inputSchema": {"type": "object", "properties": {}}}


def test_a_legacy_ping_is_posted_in_its_session() -> None:
    post = exchange.workload_post("ping", "legacy", "s-1", "2025-11-25")
    assert post == exchange.Request(
        {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
            "Mcp-Session-Id": "s-1",
        },
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
    )


def test_a_modern_tools_list_carries_its_meta_and_method_header() -> None:
    post = exchange.workload_post("tools/list", "modern")
    assert post == exchange.Request(
        {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        },
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":'
        b'"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}',
    )


@pytest.mark.parametrize(
    ("workload", "message", "problem"),
    [
        ("ping", {**ANSWER, "result": {}}, None),
        ("ping", {**ANSWER, "result": {"_meta": {"k": 1}}}, None),
        ("ping", {**ANSWER, "result": {"pong": True}}, "a ping's result is not empty: {'pong': True}"),
        ("ping", {"jsonrpc": "2.0", "id": 2, "result": {}}, "not a JSON-RPC answer to id 1"),
        (
            "ping",
            {**ANSWER, "error": {"code": -32601}},
            "no successful result: " + str({**ANSWER, "error": {"code": -32601}}),
        ),
        ("tools/list", {**ANSWER, "result": {"tools": [TOOL], "resultType": "complete"}}, None),
        ("tools/list", {**ANSWER, "result": {"tools": []}}, "no tools"),
        ("tools/list", {**ANSWER, "result": {}}, "no tools"),
        (
            "tools/list",
            {**ANSWER, "result": {"tools": [{"inputSchema": {"type": "object"}}]}},
            "a tool without a name: {'inputSchema': {'type': 'object'}}",
        ),
        (
            "tools/list",
            {**ANSWER, "result": {"tools": [{"name": "t"}]}},
            "tool 't': its inputSchema is not an object schema",
        ),
        (
            "tools/list",
            {**ANSWER, "result": {"tools": [{"name": "t", "inputSchema": {"type": "string"}}]}},
            "tool 't': its inputSchema is not an object schema",
        ),
    ],
)
def test_a_peers_answer_is_judged_by_its_shape(workload: str, message: dict, problem: str | None) -> None:
    assert exchange.meaning_problem(workload, message) == problem


def test_a_go_peers_versions_come_from_its_build_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servers, "GO_CACHE", tmp_path)
    binary = tmp_path / "mcp-go" / servers.GO_BINARY
    binary.parent.mkdir(parents=True)
    binary.write_bytes(
        b"\x7fELF...path\tgithub.com/grafana/mcp-grafana/cmd/mcp-grafana\n"
        b"mod\tgithub.com/grafana/mcp-grafana\tv1.6.3\t\n"
        b"dep\tgithub.com/mark3labs/mcp-gox\tv9.9.9\th1:x=\n"
        b"dep\tgithub.com/mark3labs/mcp-go\tv1.1.1\th1:PMZ=\n..."
    )
    assert servers.go_versions("mcp-go") == "v1.6.3 on github.com/mark3labs/mcp-go v1.1.1"
    assert servers.go_versions("go-sdk") == ""
