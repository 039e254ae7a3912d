"""The compat workload over Streamable HTTP: each app file served by its own framework and by shipcode-mcp, loaded
by wrk with one legacy session per connection.

Each framework serves its file as its documentation recommends for production (``own_http.py``:
``mcp.run(transport="streamable-http")``, uvicorn in one process, stateful sessions, answers as event streams);
shipcode-mcp serves it with ``shipcode-mcp app.py --http PORT`` (one process). All four run in the framework's
pinned environment with httptools and uvloop on ``PYTHONPATH`` (what ``uvicorn[standard]`` and
``shipcode-mcp[http]`` add), so every server has the same uvicorn. The servers start together; each gets 64
sessions (``initialize``, ``notifications/initialized``), then wrk (``session.lua``) loads one server at a time,
one connection per session, posting the same ``tools/call``: every answer must be the exact bytes of a sample
taken first, and the sample's messages must equal the framework's. Requests/s count the calls; CPU per call is
the server's, from ``/proc``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from httpbench import exchange
from httpbench.servers import cpu_seconds, free_port, process_tree

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "session.lua"
CONNECTIONS = 64
READY_SECONDS = 180
THROUGHPUT_GOAL = 10.0  # shipcode-mcp / its framework, requests/s over HTTP
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
    b'"clientInfo":{"name":"bench","version":"1"}}}'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
CALL = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quote","arguments":{"items":'
    b'[{"name":"tea","qty":3,"price":2.5},{"name":"cake","qty":"2","price":4.25}],"discount":0.1}}}'
)
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def command(python: Path, app: str, shipcode: bool, port: int) -> list[str]:
    if shipcode:
        return [str(python), "-m", "shipcode_mcp", str(HERE / app), "--http", str(port)]
    return [str(python), str(HERE / "own_http.py"), str(HERE / app), str(port)]


def post(port: int, body: bytes, session: str | None) -> tuple[int, str | None, bytes]:
    """One POST to /mcp: the status, the answer's session id and the body."""
    headers = (
        HEADERS if session is None else {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
    )
    status, answer_headers, answer = exchange.post(port, body, headers)
    return status, answer_headers.get("mcp-session-id"), answer


def wait_ready(port: int, process: subprocess.Popen, log) -> None:
    """Wait until the server accepts connections (its start-up done)."""
    deadline = time.monotonic() + READY_SECONDS
    while process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no answer on port {port} within {READY_SECONDS} s") from None
            time.sleep(0.1)
    log.seek(0)
    raise RuntimeError(f"exited with {process.returncode}: {log.read()[-600:].decode(errors='replace')}")


def open_session(port: int) -> str:
    """A new legacy session: ``initialize``, then ``notifications/initialized``; its id."""
    status, session, body = post(port, INITIALIZE, None)
    if status != 200 or not session or post(port, INITIALIZED, session)[0] != 202:
        raise RuntimeError(f"no session opened (initialize: {status}, session id {session!r}): {body[:300]!r}")
    return session


def sample(port: int, session: str) -> bytes:
    """One call in ``session``: the answer's whole body."""
    status, _, body = post(port, CALL, session)
    if status != 200:
        raise RuntimeError(f"tools/call answered {status}: {body[:300]!r}")
    return body


def messages(body: bytes) -> list:
    """The JSON-RPC messages of an answer: its JSON body, or the data of each event of its event stream."""
    if body.lstrip().startswith(b"{"):
        return [orjson.loads(body)]
    return [orjson.loads(line[5:]) for line in body.splitlines() if line.startswith(b"data:")]


def load(port: int, sessions: list[str], expected: bytes, seconds: int, pid: int) -> dict:
    """One wrk run against a server, a connection per session: calls/s, server CPU per call, and the answers that
    were not ``expected``."""
    argv = ["wrk", f"-t{CONNECTIONS}", f"-c{CONNECTIONS}", f"-d{seconds}s", "--timeout=30s", "-s", str(SCRIPT)]
    argv += [f"http://127.0.0.1:{port}/mcp", "--", CALL, expected, *sessions]
    pids = process_tree(pid)
    cpu_before = cpu_seconds(pids)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 90)
    cpu = cpu_seconds(pids) - cpu_before
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({done.returncode}): {(done.stdout + done.stderr)[-400:]}")
    out = orjson.loads(lines[-1])
    calls = max(out["calls"], 1)
    wrong = sum(out["errors"].values()) + out["wrong_status"] + out["wrong_body"]
    return {
        "rate": out["calls"] / (out["duration_us"] / 1e6),
        "cpu": cpu / calls,
        "calls": out["calls"],
        "wrong": wrong,
    }


def measure(servers: dict, pairs: dict, environments: dict, rounds: int, seconds: int) -> tuple[dict, list]:
    """Start every server, check its sample answer against its framework's, then ``rounds`` interleaved wrk runs
    of ``seconds`` each: the runs by server, and the failures."""
    started = {}
    try:
        for name, (environment, app, shipcode) in servers.items():
            port = free_port()
            python, env = environments[environment][shipcode]
            log = tempfile.TemporaryFile()
            process = subprocess.Popen(
                command(python, app, shipcode, port), env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
            started[name] = (port, process, log)
        sessions = {}
        for name, (port, process, log) in started.items():
            wait_ready(port, process, log)
            sessions[name] = [open_session(port) for _ in range(CONNECTIONS)]
        samples = {name: sample(port, sessions[name][0]) for name, (port, _, _) in started.items()}
        failures = [
            f"{name} over HTTP: the answer's messages differ from {framework}'s: {samples[name][:300]!r}"
            for name, framework in pairs.items()
            if not messages(samples[framework]) or messages(samples[name]) != messages(samples[framework])
        ]
        runs: dict[str, list[dict]] = {name: [] for name in servers}
        for round_number in range(rounds):
            for name, (port, process, _) in started.items():
                print(f"HTTP round {round_number + 1}/{rounds}: {name}", file=sys.stderr, flush=True)
                run = load(port, sessions[name], samples[name], seconds, process.pid)
                if run["wrong"]:
                    failures.append(f"{name} over HTTP: {run['wrong']} of {run['calls']} answers wrong or failed")
                runs[name].append(run)
        return runs, failures
    finally:
        for _, process, log in started.values():
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


def wrk_missing() -> str:
    """Why the HTTP part cannot run ("" when wrk is here)."""
    return "" if shutil.which("wrk") else "wrk is not installed (Debian: apt-get install wrk)"
