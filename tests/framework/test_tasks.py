"""The tasks extension (``io.modelcontextprotocol/tasks``) on the wire, every method and error, whole bytes: the
stdio server of ``tests/apps/tasks.py`` on both engines, in 2026-07-28 (the client declares the extension in each
request's ``_meta``) and in the eras of ``initialize`` (declared there). Ids count up and timestamps are one fixed
instant there, so every answer is known in full.
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest
from support.serverproc import ServerProcess

APP = str(Path(__file__).parents[1] / "apps" / "tasks.py")
TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
}
UNDECLARED = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVER = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasks","version":"1.0.0"}}'
COMPLETE = b'"resultType":"complete",' + SERVER
INSTANT = b"2026-01-02T03:04:05.678Z"
MISSING = (
    b'"error":{"code":-32021,"message":"Server requires the io.modelcontextprotocol/tasks extension for this request",'
    b'"data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}'
)
NAME = b'{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'


class Client:
    """One stdio server of the tasks app, answered a line at a time."""

    def __init__(self, engine_name: str) -> None:
        self.server = ServerProcess(engine_name, APP)
        self.pending = b""
        self.rid = 0

    def line(self) -> bytes:
        while b"\n" not in self.pending:
            chunk = self.server.read_some(timeout=30)
            assert chunk, "the server ended"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line + b"\n"

    def send(self, method: str, params: dict | None = None, meta: dict | None = DECLARED) -> int:
        self.rid += 1
        message: dict = {"jsonrpc": "2.0", "id": self.rid, "method": method}
        if params is not None or meta is not None:
            message["params"] = {**(params or {}), **({"_meta": meta} if meta is not None else {})}
        self.server.send(orjson.dumps(message) + b"\n")
        return self.rid

    def ask(self, method: str, params: dict | None = None, meta: dict | None = DECLARED) -> bytes:
        self.send(method, params, meta)
        return self.line()

    def until(self, task_id: str, status: bytes, meta: dict | None = DECLARED) -> bytes:
        """``tasks/get`` until the task has ``status``: that answer."""
        deadline = time.monotonic() + 20
        while True:
            answer = self.ask("tasks/get", {"taskId": task_id}, meta)
            if b'"status":"%s"' % status in answer or time.monotonic() > deadline:
                return answer
            time.sleep(0.02)

    def close(self) -> None:
        self.server.close_stdin()
        self.server.wait(30)
        self.server.__exit__(None, None, None)


@pytest.fixture
def client(engine_name: str):
    served = Client(engine_name)
    yield served
    served.close()


def envelope(task: int, status: bytes) -> bytes:
    return (
        b'"taskId":"task-%d","status":"%s","createdAt":"%s","lastUpdatedAt":"%s","ttlMs":60000,"pollIntervalMs":50'
        % (task, status, INSTANT, INSTANT)
    )


def created(rid: int, task: int, modern: bool = True) -> bytes:
    tail = b"," + SERVER if modern else b""
    return b'{"jsonrpc":"2.0","id":%d,"result":{"resultType":"task",%s%s}}\n' % (rid, envelope(task, b"working"), tail)


def detailed(rid: int, task: int, status: bytes, extra: bytes = b"", modern: bool = True) -> bytes:
    tail = b"," + COMPLETE if modern else b""
    return b'{"jsonrpc":"2.0","id":%d,"result":{%s%s%s}}\n' % (rid, envelope(task, status), extra, tail)


def ack(rid: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"result":{%s}}\n' % (rid, COMPLETE)


def error(rid: int, body: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,%s}\n' % (rid, body)


def call(name: str, arguments: dict | None = None) -> dict:
    return {"name": name, "arguments": arguments or {}}


def test_a_task_tool_answers_a_task_that_completes(client: Client) -> None:
    assert client.ask("tools/call", call("quick", {"text": "abc"})) == created(1, 1)
    answer = client.until("task-1", b"completed")
    result = b',"result":{"content":[{"type":"text","text":"ABC"}]}'
    assert answer == detailed(client.rid, 1, b"completed", result)


def test_a_working_task_is_cancelled_and_cancelling_again_is_acknowledged(client: Client) -> None:
    assert client.ask("tools/call", call("wait_forever")) == created(1, 1)
    assert client.ask("tasks/get", {"taskId": "task-1"}) == detailed(2, 1, b"working")
    assert client.ask("tasks/cancel", {"taskId": "task-1"}) == ack(3)
    assert client.ask("tasks/get", {"taskId": "task-1"}) == detailed(4, 1, b"cancelled")
    assert client.ask("tasks/cancel", {"taskId": "task-1"}) == ack(5)
    assert client.ask("tasks/get", {"taskId": "task-1"}) == detailed(6, 1, b"cancelled")


def test_a_tool_error_completes_and_a_protocol_error_fails(client: Client) -> None:
    assert client.ask("tools/call", call("fails")) == created(1, 1)
    result = b',"result":{"content":[{"type":"text","text":"no luck"}],"isError":true}'
    assert client.until("task-1", b"completed") == detailed(client.rid, 1, b"completed", result)
    assert client.ask("tools/call", call("breaks")) == created(client.rid, 2)
    failed = b',"error":{"code":-32000,"message":"broken","data":{"why":"on purpose"}}'
    assert client.until("task-2", b"failed") == detailed(client.rid, 2, b"failed", failed)


def test_questions_are_answered_one_at_a_time_then_the_task_completes(client: Client) -> None:
    assert client.ask("tools/call", call("asks")) == created(1, 1)
    asked = (
        b',"inputRequests":{"first":{"method":"elicitation/create","params":{"message":"First?","requestedSchema":%s}},'
        b'"second":{"method":"elicitation/create","params":{"message":"Second?","requestedSchema":%s}}}' % (NAME, NAME)
    )
    assert client.until("task-1", b"input_required") == detailed(client.rid, 1, b"input_required", asked)
    first = {"first": {"action": "accept", "content": {"name": "Ada"}}, "unknown": {"action": "accept"}}
    assert client.ask("tasks/update", {"taskId": "task-1", "inputResponses": first}) == ack(client.rid)
    still = b',"inputRequests":{"second":{"method":"elicitation/create","params":'
    still += b'{"message":"Second?","requestedSchema":%s}}}'
    assert client.ask("tasks/get", {"taskId": "task-1"}) == detailed(client.rid, 1, b"input_required", still % NAME)
    second = {"second": {"action": "accept", "content": {"name": "Grace"}}}
    assert client.ask("tasks/update", {"taskId": "task-1", "inputResponses": second}) == ack(client.rid)
    result = b',"result":{"content":[{"type":"text","text":"Ada and Grace"}]}'
    assert client.until("task-1", b"completed") == detailed(client.rid, 1, b"completed", result)
    # A finished task takes no more answers: acknowledged, unchanged.
    assert client.ask("tasks/update", {"taskId": "task-1", "inputResponses": second}) == ack(client.rid)


def test_asking_before_the_task_then_a_task_or_an_answer_at_once(client: Client) -> None:
    answer = orjson.loads(client.ask("tools/call", call("greets_later", {"later": True})))["result"]
    assert answer["resultType"] == "input_required" and "taskId" not in answer
    assert answer["inputRequests"] == {
        "who": orjson.loads(b'{"method":"elicitation/create","params":{"message":"Who?","requestedSchema":%s}}' % NAME)
    }
    retry = {**call("greets_later", {"later": True}), "requestState": answer["requestState"]}
    retry["inputResponses"] = {"who": {"action": "accept", "content": {"name": "Lin"}}}
    assert client.ask("tools/call", retry) == created(2, 1)
    result = b',"result":{"content":[{"type":"text","text":"Hi Lin"}]}'
    assert client.until("task-1", b"completed") == detailed(client.rid, 1, b"completed", result)
    now = {**retry, "arguments": {"later": False}}
    answer = orjson.loads(client.ask("tools/call", call("greets_later", {"later": False})))["result"]
    now["requestState"] = answer["requestState"]
    assert client.ask("tools/call", now) == (
        b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"Hi Lin"}],%s}}\n'
        % (client.rid, COMPLETE)
    )


def test_a_client_without_the_extension(client: Client) -> None:
    plain = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ABC"}],%s}}\n' % COMPLETE
    assert client.ask("tools/call", call("quick", {"text": "abc"}), UNDECLARED) == plain
    assert client.ask("tools/call", call("needs_task", {"n": 2}), UNDECLARED) == error(2, MISSING)
    for rid, method in enumerate(("tasks/get", "tasks/update", "tasks/cancel"), 3):
        assert client.ask(method, {"taskId": "task-1", "inputResponses": {}}, UNDECLARED) == error(rid, MISSING)
    # A declaring client gets its task; the other still cannot read it.
    assert client.ask("tools/call", call("needs_task", {"n": 2})) == created(6, 1)
    result = b',"result":{"content":[{"type":"text","text":"4"}]}'
    assert client.until("task-1", b"completed") == detailed(client.rid, 1, b"completed", result)
    assert client.ask("tasks/get", {"taskId": "task-1"}, UNDECLARED) == error(client.rid, MISSING)


def test_bad_requests(client: Client) -> None:
    unknown = b'"error":{"code":-32602,"message":"Unknown task","data":{"taskId":"task-9"}}'
    invalid = b'"error":{"code":-32602,"message":"Invalid params"}'
    not_found = b'"error":{"code":-32601,"message":"Method not found"}'
    assert client.ask("tasks/get", {"taskId": "task-9"}) == error(1, unknown)
    assert client.ask("tasks/cancel", {"taskId": "task-9"}) == error(2, unknown)
    assert client.ask("tasks/update", {"taskId": "task-9", "inputResponses": {}}) == error(3, unknown)
    assert client.ask("tasks/get", {"taskId": 7}) == error(4, invalid)
    assert client.ask("tasks/cancel", {}) == error(5, invalid)
    bad_responses = b'"error":{"code":-32602,"message":"Invalid inputResponses"}'
    assert client.ask("tasks/update", {"taskId": "task-9", "inputResponses": []}) == error(6, bad_responses)
    assert client.ask("tasks/result", {"taskId": "task-9"}) == error(7, not_found)
    assert client.ask("tasks/list", {}) == error(8, not_found)
    wrong = (
        b'{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Invalid arguments for quick"}],'
        b'"isError":true,%s}}\n' % COMPLETE
    )
    assert client.ask("tools/call", call("quick", {"text": 3})) == wrong
    # A legacy task param does not make a plain tool a task.
    hinted = {**call("greet", {"name": "x"}), "task": {"ttl": 1000}}
    assert client.ask("tools/call", hinted) == (
        b'{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"Hello, x!"}],%s}}\n' % COMPLETE
    )


def test_a_listener_naming_a_task_is_told_of_each_change(client: Client) -> None:
    listen = client.send("subscriptions/listen", {"notifications": {"taskIds": ["task-1"], "toolsListChanged": True}})
    assert client.line() == (
        b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":'
        b'{"io.modelcontextprotocol/subscriptionId":%d},"notifications":{"taskIds":["task-1"]}}}\n' % listen
    )
    client.send("tools/call", call("asks"))
    lines = {client.line(), client.line()}  # the task, and its first change (in either order)
    sub = b'{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},' % listen
    asked = (
        b',"inputRequests":{"first":{"method":"elicitation/create","params":{"message":"First?","requestedSchema":%s}},'
        b'"second":{"method":"elicitation/create","params":{"message":"Second?","requestedSchema":%s}}}' % (NAME, NAME)
    )
    told = b'{"jsonrpc":"2.0","method":"notifications/tasks","params":%s%s%s}}\n'
    assert lines == {created(2, 1), told % (sub, envelope(1, b"input_required"), asked)}
    answers = {key: {"action": "accept", "content": {"name": key}} for key in ("first", "second")}
    client.send("tasks/update", {"taskId": "task-1", "inputResponses": answers})
    got = [client.line() for _ in range(3)]
    result = b',"result":{"content":[{"type":"text","text":"first and second"}]}'
    assert sorted(got) == sorted(
        [ack(3), told % (sub, envelope(1, b"working"), b""), told % (sub, envelope(1, b"completed"), result)]
    )
    invalid = b'"error":{"code":-32602,"message":"Invalid taskIds"}'
    assert client.ask("subscriptions/listen", {"notifications": {"taskIds": "task-1"}}) == error(4, invalid)


def test_the_legacy_era_declares_in_initialize(client: Client) -> None:
    capabilities = {"elicitation": {}, "extensions": {TASKS: {}}}
    hello = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}
    assert client.ask("initialize", hello, None) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},'
        b'"logging":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"serverInfo":{"name":"tasks","version":"1.0.0"}}}\n'
    )
    client.server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    assert client.ask("tools/call", call("quick", {"text": "old"}), None) == created(2, 1, modern=False)
    result = b',"result":{"content":[{"type":"text","text":"OLD"}]}'
    assert client.until("task-1", b"completed", None) == detailed(client.rid, 1, b"completed", result, modern=False)
    assert client.ask("tools/call", call("wait_forever"), None) == created(client.rid, 2, modern=False)
    assert (
        client.ask("tasks/cancel", {"taskId": "task-2"}, None)
        == b'{"jsonrpc":"2.0","id":%d,"result":{}}\n' % client.rid
    )
    assert client.ask("tasks/get", {"taskId": "task-2"}, None) == detailed(client.rid, 2, b"cancelled", modern=False)


def test_a_legacy_session_without_the_extension(client: Client) -> None:
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    client.ask("initialize", hello, None)
    client.server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    plain = b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"OLD"}]}}\n'
    assert client.ask("tools/call", call("quick", {"text": "old"}), None) == plain
    assert client.ask("tools/call", call("needs_task", {"n": 1}), None) == error(3, MISSING)
    assert client.ask("tasks/get", {"taskId": "task-1"}, None) == error(4, MISSING)
