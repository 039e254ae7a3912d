"""The bus through a real Redis, whole bytes: a resource update, a list change and a task's changes published on one
server reach the ``subscriptions/listen`` streams and the legacy subscribers of another server sharing the Redis (two
machines), and of the other process of ``--processes 2``; Redis gone and back; a slow listener's stream bounded.
"""

from __future__ import annotations

import http.client
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from support.eventstream import EventStream, close_all
from support.httpserver import HttpServer
from support.httpwire import Call, events, modern_body, modern_headers, within
from support.redisserver import RedisServer
from support.wire import engine_env

from shipcode_mcp import Server
from shipcode_mcp.transports.http.exchange import MAX_UNSENT_NOTIFICATIONS

APP = str(Path(__file__).parents[1] / "apps" / "bus.py")
TASKS = "io.modelcontextprotocol/tasks"
SUBSCRIPTION = b'"_meta":{"io.modelcontextprotocol/subscriptionId":"sub"}'
DECLARED = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
}
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
ACKNOWLEDGED = b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",'
ACKNOWLEDGED += b'"params":{%s,"notifications":%s}}\n'


@pytest.fixture
def pair(engine_name: str, redis: RedisServer):
    """Two servers sharing the Redis (two machines); their streams closed and they stopped after the test."""
    one = HttpServer(engine_name, "--redis", redis.url, app=APP)
    try:
        other = HttpServer(engine_name, "--redis", redis.url, app=APP)
    except BaseException:
        one.stop()
        raise
    yield one, other
    close_all()
    one.stop()
    other.stop()


def call(server: HttpServer, tool: str, arguments: dict) -> dict:
    """A 2026-07-28 ``tools/call`` (declaring the tasks extension): its result."""
    body = modern_body("tools/call", {"name": tool, "arguments": arguments}, 1, DECLARED)
    status, _, answer = server.post(body, modern_headers("tools/call", tool))
    assert status == 200, answer
    return orjson.loads(answer)["result"]


def task_method(server: HttpServer, method: str, params: dict) -> dict:
    body = modern_body(method, params, 1, DECLARED)
    status, _, answer = server.post(body, modern_headers(method, params["taskId"]))
    assert status == 200, answer
    return orjson.loads(answer)["result"]


def listen(server: HttpServer, notifications: dict) -> EventStream:
    """A ``subscriptions/listen`` stream on ``server``, its acknowledgement checked."""
    body = modern_body("subscriptions/listen", {"notifications": notifications}, "sub", DECLARED)
    stream = EventStream(server.port, "POST", modern_headers("subscriptions/listen"), body)
    assert stream.status == 200
    assert stream.event() == events(ACKNOWLEDGED % (SUBSCRIPTION, orjson.dumps(notifications)))
    return stream


class LegacySession:
    """A 2025-06-18 session subscribed to ``note://a``, its GET stream open."""

    def __init__(self, server: HttpServer) -> None:
        self.server = server
        initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        status, headers, _ = server.post(self.message("initialize", initialize, 1), LEGACY)
        assert status == 200
        self.id = headers["mcp-session-id"]
        self.headers = {**LEGACY, "mcp-session-id": self.id, "mcp-protocol-version": "2025-06-18"}
        assert server.post(self.message("notifications/initialized", None), self.headers)[0] == 202
        subscribed = server.post(self.message("resources/subscribe", {"uri": "note://a"}, 2), self.headers)
        assert subscribed[::2] == (200, b'{"jsonrpc":"2.0","id":2,"result":{}}\n')
        get = {"accept": "text/event-stream", "mcp-session-id": self.id, "mcp-protocol-version": "2025-06-18"}
        self.stream: EventStream | None = None
        self.get_headers = get

    @staticmethod
    def message(method: str, params: dict | None, rid: int | None = None) -> bytes:
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        return orjson.dumps({key: value for key, value in message.items() if value is not None})

    def open(self) -> EventStream:
        self.stream = EventStream(self.server.port, "GET", self.get_headers)
        assert self.stream.status == 200
        return self.stream

    def end(self) -> None:
        """``DELETE`` the session."""
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        try:
            connection.request("DELETE", "/mcp", headers=self.headers)
            connection.getresponse().read()
        finally:
            connection.close()

    def touch(self, uri: str) -> None:
        """``touch`` called in this session (on the process holding it)."""
        params = {"name": "touch", "arguments": {"uri": uri}}
        status, _, _ = self.server.post(self.message("tools/call", params, 3), self.headers)
        assert status == 200


def updated(uri: bytes, subscription: bool) -> bytes:
    meta = SUBSCRIPTION + b"," if subscription else b""
    line = b'{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{%s"uri":"%s"}}\n'
    return events(line % (meta, uri))


def test_updates_and_list_changes_on_one_server_reach_the_listeners_of_another(pair: tuple) -> None:
    one, other = pair
    listener = listen(other, {"toolsListChanged": True, "resourceSubscriptions": ["note://a"]})
    legacy = LegacySession(other)
    stream = legacy.open()
    call(one, "touch", {"uri": "note://a"})
    assert listener.event() == updated(b"note://a", True)
    assert stream.event() == updated(b"note://a", False)
    call(one, "touch", {"uri": "note://elsewhere"})  # no one listens to it: nothing is sent
    call(one, "grow", {"name": "fresh"})
    changed = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"%s}\n'
    assert listener.event() == events(changed % b',"params":{%s}' % SUBSCRIPTION)
    assert stream.event() == events(changed % b"")


def test_a_task_changing_on_one_server_is_told_to_the_listeners_of_another(pair: tuple) -> None:
    one, other = pair
    task = call(one, "asks", {})
    task_id = task["taskId"]
    deadline = time.monotonic() + 20
    while (asked := task_method(one, "tasks/get", {"taskId": task_id}))["status"] != "input_required":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    listener = listen(other, {"taskIds": [task_id]})
    answer = {"who": {"action": "accept", "content": {"name": "Ada"}}}
    task_method(one, "tasks/update", {"taskId": task_id, "inputResponses": answer})
    rests = {
        # It asked before the listener opened; its word may still be on its way there.
        "input_required": b',"inputRequests":' + orjson.dumps(asked["inputRequests"]),
        "working": b"",
        "completed": b',"result":{"content":[{"type":"text","text":"Hi Ada"}]}',
    }
    statuses: list[str] = []
    while statuses[-1:] != ["completed"]:
        event = listener.event()
        params = orjson.loads(event.split(b"data: ", 1)[1])["params"]
        status, stamp = params["status"], params["lastUpdatedAt"]  # when it changed, there
        shown = {"taskId": task_id, "status": status, "createdAt": task["createdAt"], "lastUpdatedAt": stamp}
        shown |= {"ttlMs": task["ttlMs"], "pollIntervalMs": 50}
        line = b'{"jsonrpc":"2.0","method":"notifications/tasks","params":{%s,%s%s}}\n'
        assert event == events(line % (SUBSCRIPTION, orjson.dumps(shown)[1:-1], rests[status]))
        statuses.append(status)
    assert statuses[-2:] == ["working", "completed"] and statuses[:-2] in ([], ["input_required"])


def processes_tell_each_other(server: HttpServer) -> None:
    """An update on one process of ``server`` reaches a legacy subscriber and a listener on the other."""
    listener = listen(server, {"resourceSubscriptions": ["note://a"]})
    sessions: dict[str, LegacySession] = {}  # one held by each process (a session id begins with its index)
    deadline = time.monotonic() + 30
    while len(sessions) < 2:
        assert time.monotonic() < deadline
        session = LegacySession(server)
        index = session.id.partition(".")[0]
        if index in sessions:  # ended: while the other process starts, sessions must not pile up on one
            session.end()
        else:
            sessions[index] = session
    stream = sessions["0"].open()
    sessions["1"].touch("note://a")  # on process 1: its update reaches process 0's subscriber
    assert stream.event() == updated(b"note://a", False)
    sessions["0"].touch("note://a")  # the listener, on either process, hears both
    assert listener.event() == updated(b"note://a", True)
    assert listener.event() == updated(b"note://a", True)


def test_the_processes_of_one_server_tell_each_other_through_redis(engine_name: str, redis: RedisServer) -> None:
    server = HttpServer(engine_name, "--processes", "2", "--redis", redis.url, app=APP)
    try:
        processes_tell_each_other(server)
    finally:
        close_all()
        server.stop()


def test_the_processes_of_one_server_tell_each_other_without_redis(engine_name: str) -> None:
    server = HttpServer(engine_name, "--processes", "2", app=APP)
    try:
        processes_tell_each_other(server)
    finally:
        close_all()
        server.stop()


def test_redis_gone_then_back(pair: tuple, redis: RedisServer) -> None:
    one, other = pair
    uris = ["note://lost", "note://back"]
    here, there = listen(one, {"resourceSubscriptions": uris}), listen(other, {"resourceSubscriptions": uris})
    redis.stop()
    call(one, "touch", {"uri": "note://lost"})  # answered; told here only
    assert here.event() == updated(b"note://lost", True)
    redis.start()
    deadline = time.monotonic() + 20
    while True:  # until both processes are connected again, an update may be lost
        call(one, "touch", {"uri": "note://back"})
        assert here.event() == updated(b"note://back", True)
        there.seconds = 0.5
        there.sock.settimeout(0.5)
        try:
            event = there.event()
            break
        except TimeoutError:
            assert time.monotonic() < deadline
    assert event == updated(b"note://back", True)  # the update of the time Redis was away is lost


def test_a_listener_falling_behind_has_its_stream_ended(engine_name: str) -> None:
    app = Server("slow", version="1.0.0", resource_subscriptions=True)
    body = modern_body("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["note://a"]}}, "sub")

    async def scenario() -> Call:
        call = Call(app.http_app(), body=body, headers=modern_headers("subscriptions/listen")).start()
        await call.chunk(0)
        for _ in range(MAX_UNSENT_NOTIFICATIONS + 1):  # all before the stream sends one: it fell behind
            app.notify_resource_updated("note://a")
        await call.finish()
        return call

    call = within(scenario())
    assert (call.status, call.body, call.ended) == (
        200,
        events(ACKNOWLEDGED % (SUBSCRIPTION, b'{"resourceSubscriptions":["note://a"]}')),
        True,
    )


def test_a_redis_url_it_cannot_read_is_refused_at_start_up(engine_name: str) -> None:
    pytest.importorskip("redis", reason="redis-py is not installed (pip install -e '.[test]')")
    done = subprocess.run(
        [sys.executable, "-m", "shipcode_mcp", APP, "--http", "127.0.0.1:0", "--redis", "redis.internal:6379"],
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
        check=False,
    )
    refused = b"shipcode-mcp: error: --redis redis.internal:6379: Redis URL must specify one of the following "
    refused += b"schemes (redis://, rediss://, unix://)\n"
    assert (done.returncode, done.stderr) == (2, refused)
