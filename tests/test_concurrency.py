"""The concurrent server over real pipes, on both engines: order, cancellation, end of
input, stop signals, the in-flight limit, worker threads, timely writes, and requests to
the client. Schedules are driven by gates (events) that requests open, never by timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import orjson
import pytest
from wire import SERVER_COMMAND, engine_env
from serverproc import ServerProcess

APP = str(Path(__file__).with_name("apps") / "gates.py")
HEAD = b'{"jsonrpc":"2.0","id":'


def call(rid: int | str, tool: str, meta: dict | None = None, /, **arguments: object) -> bytes:
    params: dict = {"name": tool, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}) + b"\n"


def request(rid: int | str, method: str, params: dict | None = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return orjson.dumps(message) + b"\n"


def notification(method: str, params: object = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return orjson.dumps(message) + b"\n"


def text(rid: int | str, value: str, error: bool = False) -> bytes:
    body = b'{"content":[{"type":"text","text":' + orjson.dumps(value) + (b'}],"isError":true}' if error else b"}]}")
    return HEAD + orjson.dumps(rid) + b',"result":' + body + b"}\n"


def failure(rid: int | str, code: int, message: str) -> bytes:
    return HEAD + orjson.dumps(rid) + b',"error":{"code":%d,"message":%s}}\n' % (code, orjson.dumps(message))


def pong(rid: int) -> bytes:
    return HEAD + b'%d,"result":{}}\n' % rid


def serve(engine_name: str, data: bytes, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The whole session: ``data`` on stdin (then EOF), everything the server wrote."""
    return subprocess.run(
        [*SERVER_COMMAND, APP, *args],
        input=data,
        capture_output=True,
        env=engine_env(engine_name),
        timeout=timeout,
        check=False,
    )


def test_async_answers_overtake_and_sync_answers_keep_their_order(engine_name: str) -> None:
    data = call(1, "wait", name="a") + request(2, "ping") + call(3, "open_gate", name="a") + request(4, "ping")
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == pong(2) + text(3, "opened a") + pong(4) + text(1, "passed a")


def test_a_cancelled_request_is_never_answered(engine_name: str) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(call(1, "wait", name="b") + request(2, "ping"))
        assert server.read_exactly(len(pong(2))) == pong(2)  # the next read comes after wait(b) started
        server.send(
            notification("notifications/cancelled", {"requestId": 1, "reason": "changed my mind"})
            + call(3, "wait", name="cancelled:b")
            + call(4, "open_gate", name="b")
        )
        server.close_stdin()
        # The cancellation reached the handler (it opened cancelled:b); opening b answers nothing more.
        assert server.read_to_eof() == text(4, "opened b") + text(3, "passed cancelled:b")
        assert (server.wait().status, server.stderr()) == (0, b"")


def test_a_request_cancelled_before_it_started_never_runs(engine_name: str) -> None:
    data = (
        call(1, "wait", name="e")
        + notification("notifications/cancelled", {"requestId": 1})
        + call(2, "wait", name="cancelled:e")
        + call(3, "open_gate", name="cancelled:e")
    )
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == text(3, "opened cancelled:e") + text(2, "passed cancelled:e")


def test_unknown_finished_and_malformed_cancellations_are_ignored(engine_name: str) -> None:
    data = (
        call("x", "wait", name="c")
        + notification("notifications/cancelled", {"requestId": 99})
        + notification("notifications/cancelled", {"requestId": "1"})
        + notification("notifications/cancelled", {"requestId": ["x"]})
        + notification("notifications/cancelled", {})
        + notification("notifications/cancelled", [])
        + notification("notifications/cancelled")
        + call(5, "open_gate", name="c")
        + notification("notifications/cancelled", {"requestId": 5})
        + request(6, "ping")
    )
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == text(5, "opened c") + pong(6) + text("x", "passed c")


def test_end_of_input_waits_for_every_handler_in_flight(engine_name: str) -> None:
    data = call(1, "step", n=1) + call(2, "step", n=2) + call(3, "step", n=3)
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == text(1, "done 1") + text(2, "done 2") + text(3, "done 3")


def test_stragglers_are_answered_and_cancelled_after_the_grace(engine_name: str) -> None:
    data = call(1, "never") + call(2, "wait", name="cancelled:never-seen") + request(3, "ping")
    done = serve(engine_name, data, "--eof-grace", "0.05", "--log-level", "error")
    assert (done.returncode, done.stderr) == (0, b"")
    straggler = "Request cancelled at end of input"
    assert done.stdout == pong(3) + failure(1, -32603, straggler) + failure(2, -32603, straggler)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_cancels_handlers_in_flight_without_answers(engine_name: str, signum: int) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(call(1, "never") + call(2, "wait", name="d") + request(3, "ping"))
        assert server.read_exactly(len(pong(3))) == pong(3)  # both handlers are in flight now
        server.signal(signum)
        assert server.read_to_eof(timeout=30) == b""
        assert server.wait().status == 0
        assert server.stderr() == b""


def test_input_pauses_at_the_concurrency_limit(engine_name: str) -> None:
    data = call(1, "step", n=1) + call(2, "step", n=2) + call(3, "step", n=3) + call(4, "started")
    assert len(data) < 512  # one write, read whole by the server
    limited = serve(engine_name, data, "--max-concurrency", "2")
    # Two in flight: the third call and `started` are read only as handlers finish.
    assert limited.stdout == text(1, "done 1") + text(2, "done 2") + text(4, "2") + text(3, "done 3")
    unlimited = serve(engine_name, data)
    assert unlimited.stdout == text(4, "0") + text(1, "done 1") + text(2, "done 2") + text(3, "done 3")
    assert (limited.returncode, limited.stderr, unlimited.returncode, unlimited.stderr) == (0, b"", 0, b"")


def test_blocking_tools_run_concurrently_in_worker_threads(engine_name: str) -> None:
    done = serve(engine_name, call(1, "meet", n=1) + call(2, "meet", n=2))
    assert (done.returncode, done.stderr) == (0, b"")
    assert sorted(done.stdout.splitlines(keepends=True)) == [text(1, "met 1"), text(2, "met 2")]


def test_one_worker_thread_runs_blocking_tools_one_at_a_time(engine_name: str) -> None:
    done = serve(engine_name, call(1, "meet", n=1) + call(2, "meet", n=2), "--workers", "1", "--log-level", "off")
    # The first call waits at the barrier alone until it breaks (2 s timeout in the app):
    # a second thread never came. Both then fail as tools.
    assert done.returncode == 0
    assert done.stdout == text(1, "Tool meet failed", error=True) + text(2, "Tool meet failed", error=True)


def test_an_answer_is_written_before_a_handler_that_starts_after_it_waited(engine_name: str, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with ServerProcess(engine_name, APP) as server:
        # ping's answer waits for pause_ms (>= 2 ms), then read_fifo blocks until written:
        # the answer must be on the wire before read_fifo runs.
        server.send(request(1, "ping") + call(2, "pause_ms", ms=2) + call(3, "read_fifo", path=str(fifo)))
        assert server.read_exactly(len(pong(1) + text(2, "paused")), timeout=10) == pong(1) + text(2, "paused")
        with open(fifo, "w") as writer:
            writer.write("released")
        assert server.read_exactly(len(text(3, "released"))) == text(3, "released")
        server.close_stdin()
        assert server.read_to_eof() == b""
        assert server.wait().status == 0


INIT_RESULT = (
    b'{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"logging":{}},'
    b'"serverInfo":{"name":"concurrency","version":"1.0.0"}}'
)


def initialize(capabilities: dict) -> bytes:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"},
    }
    return request(0, "initialize", params) + notification("notifications/initialized")


INIT_ANSWER = HEAD + b'0,"result":' + INIT_RESULT + b"}\n"


def test_sampling_goes_to_the_client_and_back(engine_name: str) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(initialize({"sampling": {}}) + call(1, "sample", prompt="hi"))
        sampling = (
            b'{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":'
            b'[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}\n'
        )
        assert server.read_exactly(len(INIT_ANSWER + sampling)) == INIT_ANSWER + sampling
        reply = {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m", "stopReason": "x"}
        server.send(orjson.dumps({"jsonrpc": "2.0", "id": "s2", "result": reply}) + b"\n")  # not ours: ignored
        server.send(orjson.dumps({"jsonrpc": "2.0", "id": "s1", "result": reply}) + b"\n")
        assert server.read_exactly(len(text(1, "hello"))) == text(1, "hello")
        server.close_stdin()
        assert server.read_to_eof() == b""
        assert (server.wait().status, server.stderr()) == (0, b"")


def test_requests_to_the_client_fail_as_client_errors(engine_name: str) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(initialize({"roots": {}}) + call(1, "sample", prompt="hi") + call(2, "roots"))
        undeclared = text(1, "sampling/createMessage: the client did not declare the sampling capability", True)
        roots = b'{"jsonrpc":"2.0","id":"s1","method":"roots/list"}\n'
        expected = INIT_ANSWER + roots + undeclared  # both tasks start, then the first one's answer
        assert server.read_exactly(len(expected)) == expected
        server.send(b'{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"no roots here"}}\n')
        refused = text(2, "roots/list: the client answered with error -32601: no roots here", True)
        assert server.read_exactly(len(refused)) == refused
        server.send(call(3, "roots"))
        assert server.read_exactly(len(roots.replace(b"s1", b"s2"))) == roots.replace(b"s1", b"s2")
        server.close_stdin()  # the input ends while the tool waits for the client
        ended = text(3, "roots/list: the input ended before the client answered", True)
        assert server.read_to_eof() == ended
        assert (server.wait().status, server.stderr()) == (0, b"")


def test_log_messages_follow_the_level_and_precede_the_answer(engine_name: str) -> None:
    def message(level: str, n: int) -> bytes:
        return (
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"%s","logger":"chatty",'
            b'"data":{"n":%d}}}\n' % (level.encode(), n)
        )

    levels = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    progress = (
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,'
        b'"total":2,"message":"half"}}\n'
    )
    with ServerProcess(engine_name, APP) as server:
        server.send(initialize({}) + call(1, "chatty", {"progressToken": "p1"}, n=1))
        first = INIT_ANSWER + b"".join(message(level, 1) for level in levels) + progress + text(1, "id 1")
        assert server.read_exactly(len(first)) == first
        server.send(
            request(2, "logging/setLevel", {"level": "error"})
            + request(3, "logging/setLevel", {"level": "loud"})
            + request(4, "logging/setLevel", {})
        )
        levels_set = (
            HEAD + b'2,"result":{}}\n' + failure(3, -32602, "Invalid params") + failure(4, -32602, "Invalid params")
        )
        assert server.read_exactly(len(levels_set)) == levels_set
        server.send(call(5, "chatty", n=5))  # no progress token: no progress notification
        server.close_stdin()
        assert server.read_to_eof() == b"".join(message(level, 5) for level in levels[4:]) + text(5, "id 5")
        assert (server.wait().status, server.stderr()) == (0, b"")


def test_async_resources_are_read_concurrently(engine_name: str) -> None:
    data = request(1, "resources/read", {"uri": "test://later"}) + request(
        2, "resources/read", {"uri": "test://refused"}
    )
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    later = b'{"contents":[{"uri":"test://later","mimeType":"text/plain","text":"read later"}]}'
    assert done.stdout == HEAD + b'1,"result":' + later + b"}\n" + failure(2, -32002, "Resource not found")


def test_the_default_catalogue_has_no_logging(engine_name: str) -> None:
    done = subprocess.run(
        SERVER_COMMAND,
        input=request(1, "logging/setLevel", {"level": "info"}),
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, failure(1, -32601, "Method not found"), b"")


def test_a_flood_of_slow_calls_costs_bounded_memory(engine_name: str) -> None:
    """100,000 pipelined calls to an async tool peak at most 1.5x the memory of 10,000."""

    def peak_mib(count: int) -> float:
        data = b"".join(call(i, "step", n=i) for i in range(count))
        with ServerProcess(engine_name, APP) as server:
            server.start_writer(data, close=False)
            got = bytearray()
            while got.count(b"\n") < count:
                got += server.read_some(timeout=120)
            peak = server.peak_rss_mib()  # still running: every answer is out
            server.close_stdin()
            assert server.read_to_eof() == b""
            assert server.wait(timeout=60).status == 0
        assert got.count(b"\n") == count
        assert got.count(b'"text":"done ') == count
        return peak

    small, large = peak_mib(10_000), peak_mib(100_000)
    assert large <= 1.5 * small, (small, large)
