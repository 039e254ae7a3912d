"""Apps written for other frameworks, served by their own framework and by shipcode-mcp in the same run.

    python benchmarks/run.py compat --quick --check-targets   # under a minute (CI runs it without --check-targets)
    python benchmarks/run.py compat                            # more rounds, requests and seconds

The app (``app_sdk.py`` for the official SDK's FastMCP, ``app_fastmcp.py`` for the fastmcp package) takes a
pydantic-typed argument, returns structured output and logs through its Context. Each app file runs unchanged in
its framework's pinned environment (tests/compat's ``mcp1`` and ``fastmcp4``, made on first use as the tests make
them), once as ``python app.py`` (its framework) and once as ``python -m shipcode_mcp app.py`` (shipcode-mcp on
``PYTHONPATH``). Per server and round: start-up (spawn to the ``initialize`` answer), then n pipelined calls
over stdio (requests/s from the first request written to the last answer); the server's CPU seconds from
``/proc`` for its start-up and per call, load-independent beside the wall times. Every answer is parsed and
compared with the framework's answer to the same request. Rounds interleave the servers; the figures are
medians. Then the same files over Streamable HTTP (:mod:`compatbench.overhttp`: wrk, 64 connections, one
session each; skipped, saying so, without wrk). Targets (``--check-targets`` exits 2 on a miss): shipcode-mcp
>= 50x its framework's requests/s over stdio and >= 10x over HTTP, start-up <= 0.5x.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

from compatbench import overhttp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

#: server -> (framework environment, app file, served by shipcode-mcp).
SERVERS = {
    "sdk-fastmcp": ("mcp1", "app_sdk.py", False),
    "shipcode (sdk-fastmcp app)": ("mcp1", "app_sdk.py", True),
    "fastmcp": ("fastmcp4", "app_fastmcp.py", False),
    "shipcode (fastmcp app)": ("fastmcp4", "app_fastmcp.py", True),
}
#: shipcode-mcp's row -> the framework it is compared with.
PAIRS = {"shipcode (sdk-fastmcp app)": "sdk-fastmcp", "shipcode (fastmcp app)": "fastmcp"}
THROUGHPUT_GOAL = 50.0  # shipcode-mcp / its framework, requests/s over stdio
STARTUP_GOAL = 0.5  # shipcode-mcp / its framework, spawn to the initialize answer
#: What ``uvicorn[standard]`` and ``shipcode-mcp[http]`` add to uvicorn, linked into every HTTP server's path.
ACCELERATORS = ("httptools", "uvloop")

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
    b'"clientInfo":{"name":"bench","version":"1"}}}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)
CALL = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quote","arguments":{"items":'
    b'[{"name":"tea","qty":%d,"price":2.5},{"name":"cake","qty":"2","price":4.25}],"discount":0.1}}}\n'
)


def environment_python(name: str) -> tuple[Path | None, str]:
    """The interpreter of a framework's pinned environment (made on first use), or None and why not."""
    sys.path.insert(0, str(ROOT / "tests" / "compat"))
    import environments

    try:
        return environments.python(name), ""
    except environments.RegistryUnreachable as error:
        return None, str(error)


def linked_folder(names: tuple[str, ...]) -> Path:
    """A folder of links to this interpreter's packages ``names`` (those installed), for a framework's
    environment's ``PYTHONPATH``."""
    folder = Path(tempfile.mkdtemp(prefix="shipcode-path-"))
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            (folder / name).symlink_to(Path(spec.origin).parent)
    return folder


def command(python: Path, app: str, shipcode: bool) -> list[str]:
    return [str(python), *(("-m", "shipcode_mcp") if shipcode else ()), str(HERE / app)]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session(argv: list[str], env: dict[str, str], n: int) -> dict:
    """One server process: its start-up, then ``n`` pipelined calls; their results by id."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        while b'"id":0' not in (line := process.stdout.readline()):
            if not line:
                raise RuntimeError(f"{argv}: no initialize answer: {process.stderr.read()[-800:]!r}")
        startup = time.perf_counter() - started
        cpu_before = startup_cpu = cpu_seconds(process.pid)
        data = b"".join(CALL % (rid, rid % 7 + 1) for rid in range(1, n + 1))
        began = time.perf_counter()
        writer = threading.Thread(target=lambda: (process.stdin.write(data), process.stdin.flush()))
        writer.start()
        results = {}
        while len(results) < n:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv}: ended after {len(results)} answers: {process.stderr.read()[-800:]!r}")
            message = orjson.loads(line)
            if "id" in message:
                results[message["id"]] = message.get("result", message.get("error"))
        elapsed = time.perf_counter() - began
        cpu = cpu_seconds(process.pid) - cpu_before
        writer.join()
    finally:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
    return {"startup": startup, "startup_cpu": startup_cpu, "rate": n / elapsed, "cpu": cpu / n, "results": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run.py compat", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="3 rounds of fewer calls over stdio, one 4 s wrk run per server over HTTP (under a minute)",
    )
    parser.add_argument("--check-targets", action="store_true", help="exit 2 when a target is missed")
    parser.add_argument("--rounds", type=int, help="rounds (default 3 quick, 5 otherwise)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 5)
    counts = {False: 100 if args.quick else 1000, True: 3000 if args.quick else 20000}  # framework, shipcode-mcp
    pythons = {}
    for name in sorted({environment for environment, _, _ in SERVERS.values()}):
        python, problem = environment_python(name)
        if python is None:
            print(f"compat benchmark skipped: the {name} environment could not be made: {problem}")
            return 0
        pythons[name] = python
    path = linked_folder(("shipcode_mcp", "orjson", *ACCELERATORS))
    base = {key: value for key, value in os.environ.items() if not key.startswith(("SHIPCODE_MCP_", "PYTHON"))}
    shipcode_env = {**base, "PYTHONPATH": str(path), "SHIPCODE_MCP_REQUIRE_EXTENSIONS": "1"}
    runs: dict[str, list[dict]] = {name: [] for name in SERVERS}
    for round_number in range(rounds):
        for name, (environment, app, shipcode) in SERVERS.items():
            env = shipcode_env if shipcode else base
            print(f"round {round_number + 1}/{rounds}: {name}", file=sys.stderr, flush=True)
            runs[name].append(session(command(pythons[environment], app, shipcode), env, counts[shipcode]))
    failures = []
    for name, framework in PAIRS.items():
        theirs = runs[framework][0]["results"]
        for run in runs[name]:
            differing = [rid for rid in theirs if run["results"].get(rid) != theirs[rid]]
            if differing:
                failures.append(f"{name}: answer {differing[0]} differs from {framework}'s")
    figures = {
        name: {key: statistics.median(run[key] for run in rows) for key in ("startup", "startup_cpu", "rate", "cpu")}
        for name, rows in runs.items()
    }
    print("| server | calls/s (stdio) | CPU µs per call | start-up ms | start-up CPU ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, figure in figures.items():
        cells = f"{figure['rate']:,.0f} | {figure['cpu'] * 1e6:,.0f} | {figure['startup'] * 1e3:,.0f}"
        cells += f" | {figure['startup_cpu'] * 1e3:,.0f}"
        print(f"| {name} (n={counts[SERVERS[name][2]]}) | {cells} |")
    targets = []
    for name, framework in PAIRS.items():
        rate = figures[name]["rate"] / figures[framework]["rate"]
        startup = figures[name]["startup"] / figures[framework]["startup"]
        targets += [
            (f"{name} / {framework}, calls/s", rate, f">= {THROUGHPUT_GOAL:g}x", rate >= THROUGHPUT_GOAL),
            (f"{framework} / {name}, CPU per call", figures[framework]["cpu"] / figures[name]["cpu"], "", None),
            (f"{name} / {framework}, start-up", startup, f"<= {STARTUP_GOAL:g}x", startup <= STARTUP_GOAL),
            (
                f"{name} / {framework}, start-up CPU",
                figures[name]["startup_cpu"] / figures[framework]["startup_cpu"],
                "",
                None,
            ),
        ]
    missing = overhttp.wrk_missing()
    if missing:
        print(f"\nHTTP part skipped: {missing}")
    else:
        environments = {
            name: {
                False: (python, {**base, "PYTHONPATH": str(linked_folder(ACCELERATORS))}),
                True: (python, shipcode_env),
            }
            for name, python in pythons.items()
        }
        http_rounds, seconds = (1, 4) if args.quick else (3, 10)
        http_runs, http_failures = overhttp.measure(SERVERS, PAIRS, environments, http_rounds, seconds)
        failures += http_failures
        http = {
            name: {key: statistics.median(run[key] for run in rows) for key in ("rate", "cpu")}
            for name, rows in http_runs.items()
        }
        print(
            f"\n| server, over HTTP (wrk, {overhttp.CONNECTIONS} connections, {http_rounds} x {seconds} s) "
            "| calls/s | server CPU µs per call |\n| --- | ---: | ---: |"
        )
        for name, figure in http.items():
            print(f"| {name} | {figure['rate']:,.0f} | {figure['cpu'] * 1e6:,.0f} |")
        for name, framework in PAIRS.items():
            rate = http[name]["rate"] / http[framework]["rate"]
            goal = overhttp.THROUGHPUT_GOAL
            targets += [
                (f"{name} / {framework}, calls/s over HTTP", rate, f">= {goal:g}x", rate >= goal),
                (f"{framework} / {name}, CPU per call over HTTP", http[framework]["cpu"] / http[name]["cpu"], "", None),
            ]
    print("\n| target | measured | goal | status |\n| --- | ---: | ---: | --- |")
    for label, value, goal, met in targets:
        status = "" if met is None else "ok" if met else "MISSED"
        print(f"| {label} | {value:,.2f}x | {goal or '(information)'} | {status} |")
    missed = any(met is False for *_, met in targets)
    for failure in failures:
        print(f"FAIL: {failure}")
    if failures:
        return 1
    return 2 if args.check_targets and missed else 0
