"""Open streams of notifications end as soon as the server starts to stop: on SIGTERM a legacy session's GET
stream and a ``subscriptions/listen`` stream each end properly (the chunked body's last chunk, the listen stream
with the error answering its request), well before the 5 s grace, the app's lifespan still left and the exit
status 0; with ``--http``, ``--http --processes 2`` and ``app.http_app()`` under plain uvicorn."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import orjson
import pytest
from support.eventstream import EventStream, close_all
from support.httpserver import HttpServer
from support.httpwire import events, modern_body, modern_headers

APP = str(Path(__file__).parents[1] / "apps" / "stopping.py")
#: Well below the 5 s grace, generous for a loaded machine.
BOUND_SECONDS = 2.5
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
NOTIFICATIONS: dict = {}
ACKNOWLEDGED = (
    b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",'
    b'"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub"},"notifications":%s}}\n'
)
STOPPED = b'{"jsonrpc":"2.0","id":"sub","error":{"code":-32603,'
STOPPED += b'"message":"Server shutting down: the request was cancelled"}}\n'
#: How each way of serving is started (``HttpServer``'s arguments), and its exit status: uvicorn run by hand raises
#: the signal it caught again once stopped, as it does for any app.
SERVINGS = {
    "one process": {"args": (), "status": 0},
    "two processes": {"args": ("--processes", "2"), "status": 0},
    "plain uvicorn": {"args": ("--log-level", "warning"), "factory": "stopping:served", "status": -signal.SIGTERM},
}


def rest(stream: EventStream) -> bytes:
    """Every byte the server sends until it closes the connection."""
    data = stream._raw
    while chunk := stream.sock.recv(65536):
        data += chunk
    return data


def get_stream(server: HttpServer) -> EventStream:
    """A legacy session's GET stream, open."""
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
    status, headers, _ = server.post(body, LEGACY)
    assert status == 200
    get = {"accept": "text/event-stream", "mcp-session-id": headers["mcp-session-id"]}
    get["mcp-protocol-version"] = "2025-06-18"
    stream = EventStream(server.port, "GET", get)
    assert stream.status == 200
    return stream


def listen_stream(server: HttpServer) -> EventStream:
    """A ``subscriptions/listen`` stream, acknowledged."""
    body = modern_body("subscriptions/listen", {"notifications": NOTIFICATIONS}, "sub")
    stream = EventStream(server.port, "POST", modern_headers("subscriptions/listen"), body)
    assert stream.status == 200
    assert stream.event() == events(ACKNOWLEDGED % orjson.dumps(NOTIFICATIONS))
    return stream


@pytest.mark.parametrize("serving", list(SERVINGS))
def test_open_streams_end_as_soon_as_the_server_stops(engine_name: str, serving: str) -> None:
    how = SERVINGS[serving]
    server = HttpServer(engine_name, *how["args"], app=APP, factory=how.get("factory"))
    try:
        streams = [get_stream(server), listen_stream(server)]
        time.sleep(0.2)  # both streams are being pumped
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        ends = [rest(stream) for stream in streams]
        status = server.process.wait(30)
        seconds = time.monotonic() - started
        stderr = server.process.stderr.read()
    finally:
        close_all()
        server.stop()
    last_lines = stderr.splitlines()[-1:]
    assert (ends, status, last_lines, seconds < BOUND_SECONDS) == (
        [b"0\r\n\r\n", b"%x\r\n" % (len(STOPPED) + 22) + b"event: message\ndata: " + STOPPED + b"\n\r\n0\r\n\r\n"],
        how["status"],
        [b"lifespan left"],
        True,
    ), seconds
