"""``run.py``'s options, the order of the runs, the files written and the exit status."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import answers
import chart
import environments
import measure
import orjson
import peers
import report
from common import RESULTS, log
from common.machine import machine_info, uncommitted_changes
from httpbench import servers
from store import Store
from tool_clients import HTTP_CLIENTS

HERE = Path(__file__).resolve().parent
#: Fewest virtual users of a warm-up: enough connections that every server process makes its clients (a
#: process's first call imports and connects them) before the measured run.
WARMUP_VUS = 10


def _names(text: str, known: tuple, what: str) -> list:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return names


def options(argv: list | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="run.py realistic",
        description="MCP servers serving tools that wait on Redis and an HTTP API, loaded by k6 through a 2025 "
        "session per call and through stateless 2026-07-28 calls; every answer checked.",
    )
    parser.add_argument(
        "--servers",
        type=lambda t: _names(t, tuple(peers.PEERS), "servers"),
        help="comma-separated servers (default: "
        + ",".join(peers.DEFAULT_PEERS)
        + "; --smoke: shipcode); known: "
        + ", ".join(peers.PEERS),
    )
    parser.add_argument(
        "--variants",
        type=lambda t: _names(t, peers.VARIANTS, "variants"),
        default=list(peers.VARIANTS),
        help="legacy (a session per call), stateless (2026-07-28), or both (default)",
    )
    parser.add_argument("--seconds", type=float, help="length of one measured run (default 20, --smoke 3)")
    parser.add_argument("--warmup", type=float, help="seconds of load before each measured run (default 3, --smoke 1)")
    parser.add_argument("--vus", type=int, help="k6 virtual users (default 50, --smoke 2)")
    parser.add_argument("--processes", type=int, default=2, help="processes (workers) of each server (default 2)")
    parser.add_argument(
        "--http-client", choices=HTTP_CLIENTS, default="httpx", help="the Python tools' HTTP client (default httpx)"
    )
    parser.add_argument("--smoke", action="store_true", help="CI-sized: 3 s runs, 2 VUs, shipcode-mcp only")
    parser.add_argument("--note", help="a line printed in bold at the top of the report (say how busy the machine was)")
    parser.add_argument(
        "--save",
        action="store_true",
        help="write the committed results/realistic-latest.* (realistic-aiohttp-latest.* with --http-client aiohttp; "
        "refused with uncommitted changes) instead of results/realistic-last.*",
    )
    args = parser.parse_args(argv)
    args.servers = args.servers or (["shipcode"] if args.smoke else list(peers.DEFAULT_PEERS))
    args.seconds = args.seconds or (3 if args.smoke else 20)
    args.warmup = args.warmup if args.warmup is not None else (1 if args.smoke else 3)
    args.vus = args.vus or (2 if args.smoke else 50)
    args.api_seconds = 1 if args.smoke else 3
    return args


def run_server(peer: peers.Peer, args, binary: str, cases: Path, case_list: list, others: dict, result: dict) -> None:
    """Every variant on one started server."""
    port = peer.server.port
    for variant in args.variants:
        problem = peers.probe(port, variant, case_list)
        if problem and variant == "stateless" and not peer.speaks_modern:
            result["skipped"].append(f"{peer.label}, stateless 2026-07-28: not spoken ({problem[:200]})")
            continue
        if problem:
            result["failures"].append(f"{peer.label}, {variant}: the probe failed: {problem}")
            continue
        if variant == "legacy" and not peers.opens_sessions(port):
            result["notes"].append(
                f"{peer.label} opens no session for a 2025 client (stateless serving): its legacy calls are "
                "initialize, notifications/initialized and tools/call answered without one, and a DELETE refused 405"
            )
        if args.warmup:
            log(f"{peer.name} {variant}: warming up {args.warmup:g} s")
            measure.k6(binary, port, cases, variant, max(args.vus, WARMUP_VUS), args.warmup)
        log(f"{peer.name} {variant}: {args.vus} VUs for {args.seconds:g} s")
        run = measure.measured_run(
            binary, peer.server.process.pid, others, port, cases, variant, args.vus, args.seconds
        )
        run.update(server=peer.name, label=peer.label, variant=variant)
        log(
            f"{peer.name} {variant}: {run['requests_per_s']:.0f} MCP requests/s, "
            f"{run['iterations_per_s']:.0f} calls/s, {run['failed_checks']} failed checks, "
            f"{run['server_cpu_ms_per_request']:.2f} ms server CPU per request"
        )
        if run["failed_checks"] or not run["iterations"]:
            result["failures"].append(
                f"{peer.label}, {variant}: {run['failed_checks']} failed checks of "
                f"{run['failed_checks'] + run['passed_checks']} ({run['checks']}); k6 said: {run['k6_log']}"
            )
        result["runs"].append(run)


@dataclasses.dataclass
class Backends:
    """What the servers' tools talk to, started: Redis and the API service; and the cases (a file for k6)."""

    cases: Path
    case_list: list
    store: Store
    api: servers.Server

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api.port}"


@contextlib.contextmanager
def backends(prefix: str) -> Iterator[Backends]:
    """Redis (seeded) and the API service for the block, and the cases written where k6 reads them."""
    case_list = answers.cases()
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        cases = Path(folder, "cases.json")
        cases.write_bytes(orjson.dumps(case_list))
        store = Store(servers.free_port())
        api = servers.Server("api", "API service", [sys.executable, str(HERE / "api_service.py"), "{port}"])
        try:
            store.start()
            servers.start(api)
            yield Backends(cases, case_list, store, api)
        finally:
            servers.stop(api)
            store.stop()


def measure_all(args, binary: str, result: dict) -> None:
    """Start Redis and the API service, then each server in turn on a freshly seeded Redis."""
    with backends("realistic-") as started:
        cases, case_list, store, api = started.cases, started.case_list, started.store, started.api
        log("the API service alone (wrk)")
        result["api_capacity"] = measure.api_capacity(api.port, api.process.pid, args.api_seconds)
        environ = peers.environ(store.url, started.api_url, args.http_client)
        others = {"redis": store.process.pid, "api": api.process.pid}
        for name in args.servers:
            peer = peers.prepare(name, args.processes, environ)
            if peer.server.note:
                result["skipped"].append(f"{peer.label}: {peer.server.note}")
                log(f"{name}: skipped: {peer.server.note}")
                continue
            result["versions"][peer.label] = peer.versions
            store.seed()
            log(f"starting {name}")
            try:
                servers.start(peer.server)
                run_server(peer, args, binary, cases, case_list, others, result)
            except RuntimeError as error:
                result["failures"].append(f"{peer.label}: {error}")
            finally:
                peers.stop(peer.server)


def main(argv: list | None = None) -> int:
    args = options(argv)
    started = time.monotonic()
    if args.save and uncommitted_changes():
        sys.exit("run.py: --save refused: tracked files have uncommitted changes (commit first)")
    problem = environments.system_tools()
    binary, k6_problem = environments.k6()
    if problem or k6_problem:
        sys.exit(f"run.py: {problem or k6_problem}")
    info = machine_info([])
    config = {
        "command": shlex.join(["python", "benchmarks/run.py", "realistic", *(sys.argv[1:] if argv is None else argv)]),
        "vus": args.vus,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "processes": args.processes,
        "http_client": args.http_client,
    }
    result: dict = {
        "machine": info,
        "config": config,
        "runs": [],
        "skipped": [],
        "notes": [],
        "failures": [],
        "note": args.note,
    }
    result["versions"] = {"load": {"k6": environments.k6_version(binary)}}
    measure_all(args, binary, result)
    try:
        info["loadavg_end"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    result["elapsed_s"] = time.monotonic() - started
    text = report.markdown(result)
    print(text)
    client = "" if args.http_client == "httpx" else f"-{args.http_client}"
    stem = f"realistic{client}-latest" if args.save else f"realistic{client}-last"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.md").write_text(text + "\n")
    (RESULTS / f"{stem}.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    why_not = chart.draw_chart(result, RESULTS / f"{stem}.png")
    log(f"wrote {RESULTS / stem}.{{md,json{'' if why_not else ',png'}}}" + (f" ({why_not})" if why_not else ""))
    return 1 if result["failures"] else 0
