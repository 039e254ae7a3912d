"""The realistic benchmark's tools (benchmarks/realistic/) answer exactly what its oracle computes from the seeded
data: served by shipcode-mcp over HTTP (its native ``Server`` API, ``--processes 2``) on both engines, in a 2025
session per call and in stateless 2026-07-28 calls, against a real ``redis-server`` and the workload's API
service, both started here. Without ``redis-server`` (``apt-get install -y redis-server``) the tests are skipped.
"""

from __future__ import annotations

import http.client
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from support.httpserver import HttpServer, free_port

REALISTIC = Path(__file__).resolve().parents[2] / "benchmarks" / "realistic"

sys.path[:0] = [str(REALISTIC), str(REALISTIC.parent)]  # the workload's modules import each other by bare name
try:
    import answers
    import store
finally:
    del sys.path[:2]

Store = store.Store

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="redis-server is not installed (apt-get install -y redis-server): the realistic tools need a real Redis",
)
#: Calls checked per era: every tool, a product that does not exist among them.
CASES = answers.cases(30)
BASE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZE = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
)


def request(connection: http.client.HTTPConnection, method: str, path: str, body, headers: dict) -> tuple:
    connection.request(method, path, body, headers)
    response = connection.getresponse()
    return response.status, response.getheader("mcp-session-id"), response.read()


@pytest.fixture(scope="module")
def backends() -> Iterator[dict]:
    """Redis seeded with the workload's data and the API service: the environment the tools read them from."""
    pytest.importorskip("redis", reason="redis-py is not installed (pip install -e '.[test]')")
    pytest.importorskip("httpx", reason="httpx is not installed (pip install -e '.[test]')")
    store = Store(free_port())
    api_port = free_port()
    api = subprocess.Popen([sys.executable, str(REALISTIC / "api_service.py"), str(api_port)])
    try:
        store.start()
        deadline = time.monotonic() + 30
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", api_port, timeout=5)
            try:
                request(connection, "GET", "/products/1", None, {})
                break
            except OSError:
                assert time.monotonic() < deadline and api.poll() is None, "the API service did not start"
                time.sleep(0.05)
            finally:
                connection.close()
        yield {
            "REALISTIC_REDIS_URL": store.url,
            "REALISTIC_API_URL": f"http://127.0.0.1:{api_port}",
            "api_port": api_port,
        }
    finally:
        api.terminate()
        api.wait(10)
        store.stop()


@pytest.fixture
def server(engine_name: str, backends: dict) -> Iterator[HttpServer]:
    env = {k: v for k, v in backends.items() if k.startswith("REALISTIC_")}
    served = HttpServer(engine_name, "--processes", "2", env=env, app=str(REALISTIC / "server_shipcode.py"))
    yield served
    served.stop()


def text_result(text: str, era: str) -> bytes:
    """shipcode-mcp's whole result for a tool's text answer in an era."""
    if era == "legacy":
        return b'{"content":[{"type":"text","text":' + orjson.dumps(text) + b"}]}"
    return (
        b'{"content":[{"type":"text","text":'
        + orjson.dumps(text)
        + b'}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":'
        b'{"name":"realistic-shipcode-mcp","version":"1.0.0"}}}'
    )


def legacy_session(connection: http.client.HTTPConnection, case: dict) -> list:
    """A whole 2025 session for one call on one keep-alive connection: each step's status, and the call's body."""
    status, session, _ = request(connection, "POST", "/mcp", INITIALIZE, BASE)
    asked = dict(BASE, **{"MCP-Protocol-Version": "2024-11-05", "Mcp-Session-Id": session or ""})
    noted, _, _ = request(connection, "POST", "/mcp", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', asked)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": case["tool"], "arguments": case["arguments"]},
    }
    called, _, body = request(connection, "POST", "/mcp", orjson.dumps(call), asked)
    deleted, _, _ = request(connection, "DELETE", "/mcp", None, asked)
    return [status, noted, called, body, deleted]


def stateless_call(connection: http.client.HTTPConnection, case: dict) -> list:
    params = {"name": case["tool"], "arguments": case["arguments"], "_meta": MODERN_META}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    headers = dict(BASE, **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": case["tool"]})
    status, _, body = request(connection, "POST", "/mcp", orjson.dumps(call), headers)
    return [status, body]


@pytest.mark.parametrize("era", ["legacy", "stateless"])
def test_every_tool_answers_the_oracles_text(server: HttpServer, era: str) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        got = [(legacy_session if era == "legacy" else stateless_call)(connection, case) for case in CASES]
    finally:
        connection.close()
    answered = [b'{"jsonrpc":"2.0","id":2,"result":' + text_result(case["text"], era) + b"}\n" for case in CASES]
    expected = [[200, 202, 200, body, 200] if era == "legacy" else [200, body] for body in answered]
    assert got == expected


def test_the_cases_cover_each_tool_and_a_missing_product() -> None:
    assert [case["tool"] for case in CASES[:3]] == ["search_products", "get_product", "calculate_cart"]
    assert CASES[0] == {
        "tool": "search_products",
        "arguments": {"user_id": 20, "query": "870", "category": "grocery", "limit": 4},
        "text": '{"query":"870","category":"grocery","total":1,"items":'
        '[{"id":870,"name":"amber copper lamp 870","price_cents":16105,"popular":true}]}',
    }
    missing = [case for case in answers.cases() if case["text"].startswith('{"error"')]
    product = missing[0]["arguments"]["product_id"]
    assert missing[0]["text"] == f'{{"error":"product not found","product_id":{product}}}'


def test_the_api_service_answers_bad_requests_plainly(backends: dict) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", backends["api_port"], timeout=30)
    json = {"Content-Type": "application/json"}
    try:
        got = [
            request(connection, "GET", "/products/0", None, {})[::2],
            request(connection, "GET", "/products/abc", None, {})[::2],
            request(connection, "GET", "/nothing", None, {})[::2],
            request(connection, "POST", "/cart/calculate", b"not json", json)[::2],
            request(connection, "POST", "/cart/calculate", b'{"tier":"gold","items":[{"product_id":1}]}', json)[::2],
            request(connection, "POST", "/cart/calculate", b'{"items":[{"product_id":99999,"quantity":1}]}', json)[::2],
            request(connection, "POST", "/cart/calculate", b'{"items":[{"product_id":1,"quantity":0}]}', json)[::2],
            request(
                connection, "POST", "/cart/calculate", b'{"tier":"gold","items":[{"product_id":1,"quantity":3}]}', json
            )[::2],
        ]
    finally:
        connection.close()
    not_found, bad_cart = (404, b'{"error":"not found"}'), (400, b'{"error":"bad cart"}')
    priced = (
        b'{"lines":[{"product_id":1,"quantity":3,"line_cents":14379}],'
        b'"subtotal_cents":15135,"discount_cents":2193,"tax_cents":1068,"total_cents":14010}'
    )
    assert got == [not_found, not_found, not_found, bad_cart, bad_cart, bad_cart, bad_cart, (200, priced)]
