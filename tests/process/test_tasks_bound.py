"""10,000 tasks in flight in one process (the memory store's default bound) within a documented memory bound
(docs/extensions.md: about 80 MiB beyond the server's own; asserted under 120 MiB), and the next one refused."""

from __future__ import annotations

from pathlib import Path

import orjson
from support.serverproc import ServerProcess, baseline_rss_mib

APP = str(Path(__file__).parents[1] / "apps" / "tasks.py")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}
IN_FLIGHT = 10_000
BOUND_MIB = 120
INSTANT = b"2026-01-02T03:04:05.678Z"
SERVER = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasks","version":"1.0.0"}}'


def call(rid: int) -> bytes:
    params = {"name": "wait_forever", "arguments": {}, "_meta": META}
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}) + b"\n"


def created(rid: int) -> bytes:
    """The answer to the call ``rid``: its task, ``task-<rid>`` (the app counts its tasks)."""
    return (
        b'{"jsonrpc":"2.0","id":%d,"result":{"resultType":"task","taskId":"task-%d","status":"working",'
        b'"createdAt":"%s","lastUpdatedAt":"%s","ttlMs":60000,"pollIntervalMs":50,%s}}'
        % (rid, rid, INSTANT, INSTANT, SERVER)
    )


def test_ten_thousand_tasks_in_flight_within_the_bound(engine_name: str) -> None:
    baseline = baseline_rss_mib(engine_name, APP)
    with ServerProcess(engine_name, APP) as server:
        server.start_writer(b"".join(call(rid) for rid in range(1, IN_FLIGHT + 1)), close=False)
        answers = b""
        while answers.count(b"\n") < IN_FLIGHT:
            answers += server.read_some()
        server.wait_writer()
        assert sorted(answers.splitlines()) == sorted(created(rid) for rid in range(1, IN_FLIGHT + 1))
        server.send(call(IN_FLIGHT + 1))
        refused = b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"Too many tasks in flight"}}\n'
        assert server.read_some() == refused % (IN_FLIGHT + 1)
        grown = server.peak_rss_mib() - baseline
        assert grown < BOUND_MIB, f"{IN_FLIGHT} tasks took {grown:.1f} MiB"
