"""The stdio-to-stateless-HTTP bridge the 2026-07-28 conformance run depends on (``stateless_bridge.mjs``).

The server is ``scripted_stateless_server.py`` (no shipcode-mcp in it), the client plain
``http.client``; every answer is compared whole. Skipped, with the reason, only when npm cannot
reach its registry.
"""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support import conformance

SCRIPTED = [sys.executable, str(conformance.FOLDER / "scripted_stateless_server.py")]
JSON = {"Content-Type": "application/json"}
EVENTS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def serve(tmp_path: Path, *options: str):
    return conformance.bridge(
        SCRIPTED, dict(os.environ), tmp_path / "bridge.log", *options, script=conformance.STATELESS_BRIDGE
    )


def call(request_id: object, name: str, **params: object) -> str:
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, **params}}
    return json.dumps(body, separators=(",", ":"))


def line(request_id: object, result: object = None, error: object = None) -> bytes:
    """The scripted server's answer line (as it writes it, so as the bridge must pass it on)."""
    answer = {"result": result} if error is None else {"error": error}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, **answer}, separators=(",", ":")).encode()


def text(value: str) -> dict:
    return {"resultType": "complete", "content": [{"type": "text", "text": value}]}


def report(pending: list, cancelled: list, notified: list) -> dict:
    return text(json.dumps({"pending": pending, "cancelled": cancelled, "notified": notified}, separators=(",", ":")))


def refusal(status: int, message: str, request_id: object = None, code: int = -32000) -> tuple[int, dict, bytes]:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return status, JSON, json.dumps(body, separators=(",", ":")).encode()


def event(message: bytes) -> bytes:
    return b"event: message\ndata: " + message + b"\n\n"


class Exchange:
    """One HTTP request to the bridge, its answer read whole or event by event."""

    def __init__(self, url: str, body: str = "", method: str = "POST", path: str = "/mcp", **headers: str) -> None:
        address = urlsplit(url)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
        self.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
        self.connection.request(method, path, body, headers={k.replace("_", "-"): v for k, v in headers.items()})
        self.response = self.connection.getresponse()

    def headers(self) -> dict[str, str]:
        names = ("Content-Type", "Cache-Control", "X-Accel-Buffering")
        return {name: self.response.headers[name] for name in names if name in self.response.headers}

    def whole(self) -> tuple[int, dict[str, str], bytes]:
        """The status, the headers that say what the body is, and the whole body."""
        try:
            return self.response.status, self.headers(), self.response.read()
        finally:
            self.connection.close()

    def event(self) -> bytes:
        """The next server-sent event, whole."""
        lines = []
        while not lines or lines[-1] != b"\n":
            lines.append(self.response.readline())
            assert lines[-1], f"the stream ended after {b''.join(lines)!r}"
        return b"".join(lines)

    def close(self) -> None:
        self.connection.close()


def post(url: str, body: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return Exchange(url, body, **headers).whole()


def progress(token: str, value: int) -> bytes:
    """The scripted server's progress line."""
    params = {"progressToken": token, "progress": value, "total": 1}
    message = {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


def test_notifications_ride_the_stream_of_their_request(node: Path, tmp_path: Path) -> None:
    """What the server writes while serving a request goes, in order, on that request's stream."""
    meta = {"_meta": {"progressToken": "t"}}
    log = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}'
    with serve(tmp_path) as url:
        stream = event(progress("t", 1)) + event(log) + event(line(1, text("done")))
        assert post(url, call(1, "chatty", **meta)) == (200, EVENTS, stream)
        # A client that takes no event stream gets the answer alone.
        assert post(url, call(2, "chatty", **meta), Accept="application/json") == (200, JSON, line(2, text("done")))
        assert post(url, call(3, "report")) == (200, JSON, line(3, report([], [], [])))


@pytest.mark.parametrize(
    ("code", "status"),
    [(-32700, 400), (-32600, 400), (-32602, 400), (-32020, 400), (-32021, 400), (-32022, 400), (-32601, 404)]
    + [(-32603, 200), (-32002, 200), (-32000, 200)],
)
def test_the_status_follows_the_error_code(node: Path, tmp_path: Path, code: int, status: int) -> None:
    with serve(tmp_path) as url:
        answer = line(7, error={"code": code, "message": "Failed"})
        assert post(url, call(7, "fail", arguments={"code": code})) == (status, JSON, answer)


def test_requests_reach_the_server_one_at_a_time(node: Path, tmp_path: Path) -> None:
    """A request waits until the one before it is answered (and past --max-waiting, is refused)."""
    release = '{"jsonrpc":"2.0","method":"notifications/release"}'
    with serve(tmp_path, "--max-waiting", "1") as url, concurrent.futures.ThreadPoolExecutor(2) as pool:
        held = Exchange(url, call("held", "hold", _meta={"progressToken": "h"}))
        assert held.event() == event(progress("h", 0))  # the server has it, and holds it
        reports = {pool.submit(post, url, call(request_id, "report")): request_id for request_id in (2, 3)}
        done, waiting = concurrent.futures.wait(reports, return_when=concurrent.futures.FIRST_COMPLETED)
        refused, queued = reports[done.pop()], reports[waiting.pop()]
        assert refusal(503, "Too many waiting requests", refused) == reports_result(reports, refused)
        assert post(url, release) == (202, {}, b"")  # a notification goes at once, and releases the held request
        assert held.event() == event(line("held", text("released")))
        held.close()
        # The waiting request reached the server only once the held one was answered.
        expected = (200, JSON, line(queued, report([], [], ["notifications/release"])))
        assert reports_result(reports, queued) == expected


def reports_result(reports: dict, request_id: int) -> tuple[int, dict[str, str], bytes]:
    return next(future for future, rid in reports.items() if rid == request_id).result(timeout=60)


def test_a_client_that_goes_away_cancels_its_request(node: Path, tmp_path: Path) -> None:
    with serve(tmp_path) as url:
        held = Exchange(url, call(5, "hold"))
        held.event()
        held.close()
        cancelled = ["notifications/cancelled"]
        assert post(url, call(6, "report")) == (200, JSON, line(6, report([], [5], cancelled)))


def test_listen_streams_carry_their_own_notifications(node: Path, tmp_path: Path) -> None:
    listen = {"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen"}
    listen["params"] = {"notifications": {"toolsListChanged": True}}
    acknowledged = (
        b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":'
        b'{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub"},"notifications":{"toolsListChanged":true}}}'
    )
    changed = (
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":'
        b'{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub"}}}'
    )
    with serve(tmp_path) as url:
        stream = Exchange(url, json.dumps(listen))
        assert stream.headers() == EVENTS
        assert stream.event() == event(acknowledged)
        assert post(url, call(1, "change")) == (200, JSON, line(1, text("changed")))
        assert stream.event() == event(changed)
        assert post(url, call("sub", "report")) == refusal(409, "The id of an open subscriptions/listen stream", "sub")
        stream.close()
        assert post(url, call(2, "report")) == (200, JSON, line(2, report([], ["sub"], ["notifications/cancelled"])))


def test_refuses_what_it_must(node: Path, tmp_path: Path) -> None:
    """Loopback hosts and origins only, POST to /mcp only, one JSON-RPC request or notification per body."""
    ping = call(1, "report")
    forbidden = refusal(403, "Forbidden: loopback clients only")
    with serve(tmp_path) as url:
        port = urlsplit(url).port
        assert post(url, ping, Host=f"evil.example:{port}") == forbidden
        assert post(url, ping, Origin="http://evil.example") == forbidden
        assert Exchange(url, ping, path="/other").whole() == refusal(404, "Not found")
        assert Exchange(url, method="GET").whole() == refusal(405, "Method not allowed: POST only")
        assert Exchange(url, method="DELETE").whole() == refusal(405, "Method not allowed: POST only")
        assert post(url, "{") == refusal(400, "Parse error", code=-32700)
        invalid = "Invalid Request: one JSON-RPC request or notification per POST"
        assert post(url, f"[{ping}]") == refusal(400, invalid, code=-32600)
        assert post(url, '{"jsonrpc":"2.0","id":1,"result":{}}') == refusal(400, invalid, code=-32600)
        assert post(url, ping, Origin=f"http://localhost:{port}") == (200, JSON, line(1, report([], [], [])))


def test_answers_for_a_server_that_exits(node: Path, tmp_path: Path) -> None:
    """A request the server process will never answer gets an error at once, naming why."""
    with serve(tmp_path) as url:
        assert post(url, call(1, "exit")) == refusal(502, "Bridge: server exited (3)", 1)
