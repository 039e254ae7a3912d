"""The concurrent server over real pipes, on both engines: order, cancellation, end of
input, stop signals, the in-flight limit, worker threads, timely writes, and requests to
the client. Schedules are driven by gates (events) that requests open, never by timing.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from support.serverproc import ServerProcess
from support.wire import (
    HEAD,
    SERVER_COMMAND,
    call,
    engine_env,
    error,
    not_found,
    notification,
    pong,
    read,
    request,
    result,
    run_server,
    text,
)

APP = str(Path(__file__).parents[1] / "apps" / "gates.py")


def serve(engine_name: str, data: bytes, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The whole session: ``data`` on stdin (then EOF), everything the server wrote."""
    return run_server(engine_name, data, APP, *args, timeout=timeout)


def test_async_answers_overtake_and_sync_answers_keep_their_order(engine_name: str) -> None:
    data = (
        call("wait", {"name": "a"}, rid=1)
        + request("ping", rid=2)
        + call("open_gate", {"name": "a"}, rid=3)
        + request("ping", rid=4)
    )
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == pong(2) + text("opened a", rid=3) + pong(4) + text("passed a", rid=1)


def test_sync_tools_taking_a_context_answer_in_line_order_too(engine_name: str) -> None:
    # Run anywhere but in line order (a worker thread, a task), the tool would answer after
    # the ping that follows it in the same chunk.
    data = call("wait", {"name": "b"}, rid=1) + call("open_gate_noting", {"name": "b"}, rid=2) + request("ping", rid=3)
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    log = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"opening b"}}\n'
    assert done.stdout == log + text("opened b", rid=2) + pong(3) + text("passed b", rid=1)


def test_a_cancelled_request_is_never_answered(engine_name: str) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(call("wait", {"name": "b"}, rid=1) + request("ping", rid=2))
        assert server.read_exactly(len(pong(2))) == pong(2)  # the next read comes after wait(b) started
        server.send(
            notification("notifications/cancelled", {"requestId": 1, "reason": "changed my mind"})
            + call("wait", {"name": "cancelled:b"}, rid=3)
            + call("open_gate", {"name": "b"}, rid=4)
        )
        server.close_stdin()
        # The cancellation reached the handler (it opened cancelled:b); opening b answers nothing more.
        assert server.read_to_eof() == text("opened b", rid=4) + text("passed cancelled:b", rid=3)
        assert (server.wait().status, server.stderr()) == (0, b"")


def test_a_request_cancelled_before_it_started_never_runs(engine_name: str) -> None:
    data = (
        call("wait", {"name": "e"}, rid=1)
        + notification("notifications/cancelled", {"requestId": 1})
        + call("wait", {"name": "cancelled:e"}, rid=2)
        + call("open_gate", {"name": "cancelled:e"}, rid=3)
    )
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == text("opened cancelled:e", rid=3) + text("passed cancelled:e", rid=2)


def test_unknown_finished_and_malformed_cancellations_are_ignored(engine_name: str) -> None:
    data = (
        call("wait", {"name": "c"}, rid="x")
        + notification("notifications/cancelled", {"requestId": 99})
        + notification("notifications/cancelled", {"requestId": "1"})
        + notification("notifications/cancelled", {"requestId": ["x"]})
        + notification("notifications/cancelled", {})
        + notification("notifications/cancelled", [])
        + notification("notifications/cancelled")
        + call("open_gate", {"name": "c"}, rid=5)
        + notification("notifications/cancelled", {"requestId": 5})
        + request("ping", rid=6)
    )
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == text("opened c", rid=5) + pong(6) + text("passed c", rid="x")


def test_input_from_a_regular_file_is_served_alike(engine_name: str, tmp_path: Path) -> None:
    """A file cannot be watched for input as a pipe is: it is read in turns of the loop."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(call("step", {"n": 1}, rid=1) + request("ping", rid=2) + call("step", {"n": 3}, rid=3))
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [*SERVER_COMMAND, APP], stdin=stdin, capture_output=True, env=engine_env(engine_name), timeout=60
        )
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == pong(2) + text("done 1", rid=1) + text("done 3", rid=3)


def test_end_of_input_waits_for_every_handler_in_flight(engine_name: str) -> None:
    data = call("step", {"n": 1}, rid=1) + call("step", {"n": 2}, rid=2) + call("step", {"n": 3}, rid=3)
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == text("done 1", rid=1) + text("done 2", rid=2) + text("done 3", rid=3)


def test_stragglers_are_answered_and_cancelled_after_the_grace(engine_name: str) -> None:
    data = call("never", {}, rid=1) + call("wait", {"name": "cancelled:never-seen"}, rid=2) + request("ping", rid=3)
    done = serve(engine_name, data, "--eof-grace", "0.05", "--log-level", "error")
    assert (done.returncode, done.stderr) == (0, b"")
    straggler = "Request cancelled at end of input"
    assert done.stdout == pong(3) + error(-32603, straggler, rid=1) + error(-32603, straggler, rid=2)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_cancels_handlers_in_flight_without_answers(engine_name: str, signum: int) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(call("never", {}, rid=1) + call("wait", {"name": "d"}, rid=2) + request("ping", rid=3))
        assert server.read_exactly(len(pong(3))) == pong(3)  # both handlers are in flight now
        server.signal(signum)
        assert server.read_to_eof(timeout=30) == b""
        assert server.wait().status == 0
        assert server.stderr() == b""


def test_input_pauses_at_the_concurrency_limit(engine_name: str) -> None:
    data = (
        call("step", {"n": 1}, rid=1)
        + call("step", {"n": 2}, rid=2)
        + call("step", {"n": 3}, rid=3)
        + call("started", {}, rid=4)
    )
    assert len(data) < 512  # one write, read whole by the server
    limited = serve(engine_name, data, "--max-concurrency", "2")
    # Two in flight: the third call and `started` are read only as handlers finish.
    assert limited.stdout == text("done 1", rid=1) + text("done 2", rid=2) + text("2", rid=4) + text("done 3", rid=3)
    unlimited = serve(engine_name, data)
    assert unlimited.stdout == text("0", rid=4) + text("done 1", rid=1) + text("done 2", rid=2) + text("done 3", rid=3)
    assert (limited.returncode, limited.stderr, unlimited.returncode, unlimited.stderr) == (0, b"", 0, b"")


def test_uvloop_serves_when_installed_unless_turned_off(engine_name: str) -> None:
    wanted = importlib.util.find_spec("uvloop") is not None and not os.environ.get("SHIPCODE_MCP_NO_UVLOOP")
    default = serve(engine_name, call("loop", {}, rid=1))
    env = {**engine_env(engine_name), "SHIPCODE_MCP_NO_UVLOOP": "1"}
    turned_off = subprocess.run([*SERVER_COMMAND, APP], input=call("loop", {}, rid=1), capture_output=True, env=env)
    assert (default.returncode, default.stderr, turned_off.returncode, turned_off.stderr) == (0, b"", 0, b"")
    assert (default.stdout, turned_off.stdout) == (text("uvloop" if wanted else "asyncio"), text("asyncio"))


#: Serves like ``shipcode-mcp [target]``; at exit, writes to stderr which event loops were imported.
LOOPS_IMPORTED = (
    "import atexit, os, sys\n"
    "loops = lambda: ' '.join(name for name in ('asyncio', 'uvloop') if name in sys.modules)\n"
    "atexit.register(lambda: os.write(2, loops().encode()))\n"
    "from shipcode_mcp.cli import main\n"
    "sys.argv[0] = 'shipcode-mcp'\n"
    "raise SystemExit(main())\n"
)


def test_only_apps_with_deferred_work_import_an_event_loop(engine_name: str) -> None:
    def loops(*target: str) -> bytes:
        command = [sys.executable, "-c", LOOPS_IMPORTED, *target]
        done = subprocess.run(command, input=request("ping"), capture_output=True, env=engine_env(engine_name))
        assert (done.returncode, done.stdout) == (0, pong(1))
        return done.stderr

    uvloop = importlib.util.find_spec("uvloop") is not None and not os.environ.get("SHIPCODE_MCP_NO_UVLOOP")
    assert (loops(), loops(APP)) == (b"", b"asyncio uvloop" if uvloop else b"asyncio")


def test_blocking_tools_run_concurrently_in_worker_threads(engine_name: str) -> None:
    done = serve(engine_name, call("meet", {"n": 1}, rid=1) + call("meet", {"n": 2}, rid=2))
    assert (done.returncode, done.stderr) == (0, b"")
    assert sorted(done.stdout.splitlines(keepends=True)) == [text("met 1", rid=1), text("met 2", rid=2)]


def test_one_worker_thread_runs_blocking_tools_one_at_a_time(engine_name: str) -> None:
    done = serve(
        engine_name,
        call("meet", {"n": 1}, rid=1) + call("meet", {"n": 2}, rid=2),
        "--workers",
        "1",
        "--log-level",
        "off",
    )
    # The first call waits at the barrier alone until it breaks (2 s timeout in the app):
    # a second thread never came. Both then fail as tools.
    assert done.returncode == 0
    assert done.stdout == text("Tool meet failed", rid=1, is_error=True) + text(
        "Tool meet failed", rid=2, is_error=True
    )


def test_a_blocking_tool_reports_progress_from_its_worker_thread(engine_name: str) -> None:
    done = serve(engine_name, call("report", {"n": 1}, rid=1, meta={"progressToken": 7}))
    progress = notification("notifications/progress", {"progressToken": 7, "progress": 1, "total": 2})
    assert (done.returncode, done.stderr, done.stdout) == (0, b"", progress + text("reported 1", rid=1))


def test_an_answer_is_written_before_a_handler_that_starts_after_it_waited(engine_name: str, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with ServerProcess(engine_name, APP) as server:
        # ping's answer waits for pause_ms (>= 2 ms), then read_fifo blocks until written:
        # the answer must be on the wire before read_fifo runs.
        server.send(
            request("ping", rid=1) + call("pause_ms", {"ms": 2}, rid=2) + call("read_fifo", {"path": str(fifo)}, rid=3)
        )
        assert server.read_exactly(len(pong(1) + text("paused", rid=2)), timeout=10) == pong(1) + text("paused", rid=2)
        with open(fifo, "w") as writer:
            writer.write("released")
        assert server.read_exactly(len(text("released", rid=3))) == text("released", rid=3)
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
    return request("initialize", params, rid=0) + notification("notifications/initialized")


INIT_ANSWER = HEAD + b'0,"result":' + INIT_RESULT + b"}\n"


def test_sampling_goes_to_the_client_and_back(engine_name: str) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(initialize({"sampling": {}}) + call("sample", {"prompt": "hi"}, rid=1))
        sampling = (
            b'{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":'
            b'[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}\n'
        )
        assert server.read_exactly(len(INIT_ANSWER + sampling)) == INIT_ANSWER + sampling
        reply = {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m", "stopReason": "x"}
        server.send(orjson.dumps({"jsonrpc": "2.0", "id": "s2", "result": reply}) + b"\n")  # not ours: ignored
        server.send(orjson.dumps({"jsonrpc": "2.0", "id": "s1", "result": reply}) + b"\n")
        assert server.read_exactly(len(text("hello", rid=1))) == text("hello", rid=1)
        server.close_stdin()
        assert server.read_to_eof() == b""
        assert (server.wait().status, server.stderr()) == (0, b"")


def test_requests_to_the_client_fail_as_client_errors(engine_name: str) -> None:
    with ServerProcess(engine_name, APP) as server:
        server.send(initialize({"roots": {}}) + call("sample", {"prompt": "hi"}, rid=1) + call("roots", {}, rid=2))
        undeclared = text(
            "sampling/createMessage: the client did not declare the sampling capability", rid=1, is_error=True
        )
        roots = b'{"jsonrpc":"2.0","id":"s1","method":"roots/list"}\n'
        expected = INIT_ANSWER + roots + undeclared  # both tasks start, then the first one's answer
        assert server.read_exactly(len(expected)) == expected
        server.send(b'{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"no roots here"}}\n')
        refused = text("roots/list: the client answered with error -32601: no roots here", rid=2, is_error=True)
        assert server.read_exactly(len(refused)) == refused
        server.send(call("roots", {}, rid=3))
        assert server.read_exactly(len(roots.replace(b"s1", b"s2"))) == roots.replace(b"s1", b"s2")
        server.close_stdin()  # the input ends while the tool waits for the client
        ended = text("roots/list: the input ended before the client answered", rid=3, is_error=True)
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
        server.send(initialize({}) + call("chatty", {"n": 1}, rid=1, meta={"progressToken": "p1"}))
        first = INIT_ANSWER + b"".join(message(level, 1) for level in levels) + progress + text("id 1", rid=1)
        assert server.read_exactly(len(first)) == first
        server.send(
            request("logging/setLevel", {"level": "error"}, rid=2)
            + request("logging/setLevel", {"level": "loud"}, rid=3)
            + request("logging/setLevel", {}, rid=4)
        )
        levels_set = (
            HEAD + b'2,"result":{}}\n' + error(-32602, "Invalid params", rid=3) + error(-32602, "Invalid params", rid=4)
        )
        assert server.read_exactly(len(levels_set)) == levels_set
        server.send(call("chatty", {"n": 5}, rid=5))  # no progress token: no progress notification
        server.close_stdin()
        assert server.read_to_eof() == b"".join(message(level, 5) for level in levels[4:]) + text("id 5", rid=5)
        assert (server.wait().status, server.stderr()) == (0, b"")


def test_async_resources_are_read_concurrently(engine_name: str) -> None:
    data = request("resources/read", {"uri": "test://later"}, rid=1) + request(
        "resources/read", {"uri": "test://refused"}, rid=2
    )
    done = serve(engine_name, data)
    assert (done.returncode, done.stderr) == (0, b"")
    later = b'{"contents":[{"uri":"test://later","mimeType":"text/plain","text":"read later"}]}'
    assert done.stdout == HEAD + b'1,"result":' + later + b"}\n" + not_found(2)


def test_system_exit_in_an_async_handler_fails_its_request_and_serving_goes_on(engine_name: str) -> None:
    done = serve(engine_name, read("test://exits", rid=1) + read("test://later", rid=2))
    later = b'{"contents":[{"uri":"test://later","mimeType":"text/plain","text":"read later"}]}'
    assert (done.returncode, done.stdout) == (0, error(-32603, "Internal error", rid=1) + result(later, rid=2))
    head = b"shipcode-mcp: error: internal error in a handler\nTraceback (most recent call last):\n"
    tail = b"\nRuntimeError: a handler raised SystemExit(3)\n"
    assert (done.stderr[: len(head)], done.stderr[-len(tail) :]) == (head, tail)


def test_the_default_catalogue_has_no_logging(engine_name: str) -> None:
    done = run_server(engine_name, request("logging/setLevel", {"level": "info"}, rid=1))
    assert (done.returncode, done.stdout, done.stderr) == (0, error(-32601, "Method not found", rid=1), b"")


def test_a_flood_of_slow_calls_costs_bounded_memory(engine_name: str) -> None:
    """100,000 pipelined calls to an async tool peak at most 1.5x the memory of 10,000."""

    def peak_mib(count: int) -> float:
        data = b"".join(call("step", {"n": i}, rid=i) for i in range(count))
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
