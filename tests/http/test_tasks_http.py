"""The tasks extension over Streamable HTTP, whole answers: the ``Mcp-Name`` header of the task methods; two
servers sharing one Redis (two machines) where a task made on one is read, answered and cancelled on the
other, and fails when the process running it dies; tasks bound to their caller when bearer tokens are on.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import orjson
from support.httpserver import HttpServer
from support.httpwire import modern_body, modern_headers
from support.redisserver import RedisServer

APP = str(Path(__file__).parents[1] / "apps" / "tasks.py")
TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
}
SERVER = b'"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasks","version":"1.0.0"}}'


def post(server: HttpServer, method: str, params: dict, name: str | None = None, **headers: str) -> tuple:
    status, _, body = server.post(modern_body(method, params, 1, DECLARED), modern_headers(method, name, **headers))
    return status, body


def task_of(server: HttpServer, tool: str, **headers: str) -> dict:
    status, body = post(server, "tools/call", {"name": tool, "arguments": {}}, tool, **headers)
    assert status == 200
    return orjson.loads(body)["result"]


def shown(task: dict, status: str, extra: bytes = b"", updated: str | None = None) -> bytes:
    """The answer to ``tasks/get`` of ``task`` (as created) now at ``status``."""
    envelope = {**{k: task[k] for k in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")}}
    envelope["status"] = status
    if updated is not None:
        envelope["lastUpdatedAt"] = updated
    return b'{"jsonrpc":"2.0","id":1,"result":%s%s,%s}}\n' % (orjson.dumps(envelope)[:-1], extra, SERVER)


def until(server: HttpServer, task_id: str, status: str, **headers: str) -> bytes:
    deadline = time.monotonic() + 20
    while True:
        answer = post(server, "tasks/get", {"taskId": task_id}, task_id, **headers)[1]
        if b'"status":"%s"' % status.encode() in answer or time.monotonic() > deadline:
            return answer
        time.sleep(0.02)


def updated_at(answer: bytes) -> str:
    return orjson.loads(answer)["result"]["lastUpdatedAt"]


def test_the_task_methods_mirror_their_task_id_in_mcp_name(engine_name: str) -> None:
    server = HttpServer(engine_name, app=APP)
    try:
        created = b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"task-1","status":"working",'
        created += b'"createdAt":"2026-01-02T03:04:05.678Z","lastUpdatedAt":"2026-01-02T03:04:05.678Z",'
        created += b'"ttlMs":60000,"pollIntervalMs":50,%s}}\n' % SERVER.split(b",", 1)[1]
        assert post(server, "tools/call", {"name": "wait_forever", "arguments": {}}, "wait_forever") == (200, created)
        wrong = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: '
        wrong += b"Mcp-Name header value 'task-2' does not match body value 'task-1'\"}}\n"
        for method in ("tasks/get", "tasks/cancel"):
            assert post(server, method, {"taskId": "task-1"}, "task-2") == (400, wrong)
        missing = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,'
        missing += b'"message":"Header mismatch: Mcp-Name header is missing"}}\n'
        assert post(server, "tasks/update", {"taskId": "task-1", "inputResponses": {}}) == (400, missing)
        acked = b'{"jsonrpc":"2.0","id":1,"result":{%s}}\n' % SERVER
        assert post(server, "tasks/cancel", {"taskId": "task-1"}, "task-1") == (200, acked)
    finally:
        server.stop()


def test_a_task_is_bound_to_its_caller(engine_name: str) -> None:
    server = HttpServer(engine_name, app=APP, factory="tasks:served")
    try:
        task = task_of(server, "wait_forever", authorization="Bearer ada")
        unknown = (
            b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown task","data":{"taskId":"task-1"}}}\n'
        )
        for method in ("tasks/get", "tasks/cancel"):
            assert post(server, method, {"taskId": "task-1"}, "task-1", authorization="Bearer bob") == (400, unknown)
        answer = post(server, "tasks/get", {"taskId": "task-1"}, "task-1", authorization="Bearer ada")
        assert answer == (200, shown(task, "working"))
    finally:
        server.stop()


def test_two_servers_sharing_redis_share_their_tasks(engine_name: str, redis: RedisServer) -> None:
    env = {"TASKS_REDIS": redis.url}
    one, other = HttpServer(engine_name, app=APP, env=env), HttpServer(engine_name, app=APP, env=env)
    try:
        # Made on one, done, read on the other.
        status, body = post(one, "tools/call", {"name": "quick", "arguments": {"text": "abc"}}, "quick")
        assert status == 200
        task = orjson.loads(body)["result"]
        assert len(task["taskId"]) == 32 and task["status"] == "working"
        answer = until(other, task["taskId"], "completed")
        result = b',"result":{"content":[{"type":"text","text":"ABC"}]}'
        assert answer == shown(task, "completed", result, updated_at(answer))
        # Asking on one, answered on the other, which runs the tool again and completes it.
        task = task_of(one, "asks")
        answer = until(other, task["taskId"], "input_required")
        assert orjson.loads(answer)["result"]["inputRequests"].keys() == {"first", "second"}
        answers = {key: {"action": "accept", "content": {"name": key}} for key in ("first", "second")}
        acked = post(other, "tasks/update", {"taskId": task["taskId"], "inputResponses": answers}, task["taskId"])
        assert acked == (200, b'{"jsonrpc":"2.0","id":1,"result":{%s}}\n' % SERVER)
        answer = until(one, task["taskId"], "completed")
        result = b',"result":{"content":[{"type":"text","text":"first and second"}]}'
        assert answer == shown(task, "completed", result, updated_at(answer))
        # Working on one, cancelled on the other.
        task = task_of(one, "wait_forever")
        acked = post(other, "tasks/cancel", {"taskId": task["taskId"]}, task["taskId"])
        assert acked == (200, b'{"jsonrpc":"2.0","id":1,"result":{%s}}\n' % SERVER)
        answer = post(one, "tasks/get", {"taskId": task["taskId"]}, task["taskId"])[1]
        assert answer == shown(task, "cancelled", b"", updated_at(answer))
        # Working on one, which dies: the task failed with it, as the other tells once its word lapsed.
        task = task_of(one, "wait_forever")
        one.process.send_signal(signal.SIGKILL)
        one.process.wait(10)
        time.sleep(1.2)
        answer = post(other, "tasks/get", {"taskId": task["taskId"]}, task["taskId"])[1]
        ended = b',"error":{"code":-32603,"message":"The process running the task ended"}'
        assert answer == shown(task, "failed", ended, updated_at(answer))
    finally:
        one.stop()
        other.stop()
