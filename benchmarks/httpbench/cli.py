"""``run.py http``'s options, the interleaved rounds, the files written and the exit status."""

from __future__ import annotations

import argparse
import os
import sys
import time

import orjson
from common import RESULTS, log, node
from common.machine import machine_info, uncommitted_changes

from . import chart, exchange, report, servers, sessionlife, wrk
from .servers import VARIANTS

#: Variants measured at 1 connection by --quick (the targets need these; the rest run at 64 only).
QUICK_SINGLE = ("compiled", "compiled-legacy", "floor")
WARMUP_SECONDS = 1


def options(argv: list | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="run.py http",
        description="shipcode-mcp over Streamable HTTP against a bare ASGI floor, the official SDKs and Go servers, "
        "measured with wrk at 1 and 64 keep-alive connections, every answer checked.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="3 rounds of 2 s runs; 1 connection for shipcode-mcp compiled and the floor only (about 4 min)",
    )
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 3)")
    parser.add_argument("--seconds", type=int, help="length of one run in whole seconds (default 3, --quick 2)")
    parser.add_argument(
        "--variants",
        help="comma-separated variants to run (default: all but "
        + ", ".join(v.name for v in VARIANTS if v.asked_for)
        + "): "
        + ", ".join(v.name for v in VARIANTS),
    )
    parser.add_argument(
        "--workloads",
        default=",".join(exchange.DEFAULT_WORKLOADS),
        help="comma-separated workloads (default: %(default)s): "
        + ", ".join(exchange.WORKLOADS)
        + " (ping in the 2025 era only, tools/list in 2026-07-28 only)",
    )
    parser.add_argument(
        "--before",
        metavar="PYTHON",
        help="also serve the shipcode-mcp of this interpreter's install (e.g. an older tree's venv/bin/python), "
        "in the same interleaved rounds: the before-* variants, answers held to this install's bytes",
    )
    parser.add_argument("--check-targets", action="store_true", help="exit 2 when a target is missed or not measured")
    parser.add_argument(
        "--save",
        action="store_true",
        help="write the committed results/http-latest.{json,md} "
        "(refused with uncommitted changes) instead of results/http-last.*",
    )
    parser.add_argument(
        "--session-life",
        action="store_true",
        help="measure instead the server CPU of a legacy session's life against a stateless call (no wrk)",
    )
    parser.add_argument("--lives", type=int, default=2000, help="session lives per round of --session-life")
    parser.add_argument("--engines", default="compiled,pure", help="engines --session-life measures")
    parser.add_argument("--processes", type=int, default=1, help="server processes for --session-life")
    args = parser.parse_args(argv)
    args.workloads = [name.strip() for name in args.workloads.split(",")]
    unknown = set(args.workloads) - set(exchange.WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    args.rounds = args.rounds or (3 if args.quick else 5)
    args.seconds = args.seconds or (2 if args.quick else 3)
    return args


def measures(variant: servers.Variant, workload: str, catalogue: bool) -> bool:
    """Whether the variant is measured with the workload: in one of its eras, and a tool its server serves."""
    asked = exchange.WORKLOADS[workload]
    return variant.era in asked.eras + ("fixed",) and (catalogue or not asked.tool)


def measures_any(variant: servers.Variant, workloads: list, catalogue: bool) -> bool:
    return any(measures(variant, workload, catalogue) for workload in workloads)


def connection_counts(args: argparse.Namespace, variant: str) -> tuple:
    return (64, 1) if not args.quick or variant in QUICK_SINGLE else (64,)


def sample(server: servers.Server, variant: servers.Variant, workload: str) -> tuple:
    """Ask once and check the answer: (request, expected bytes) for wrk, or (None, problem)."""
    session, version = None, exchange.LEGACY
    if variant.era == "legacy" and variant.session:
        session, version = exchange.open_session(server.port, stateless=variant.check != "exact")
    request = exchange.workload_post(workload, "legacy" if variant.era == "fixed" else variant.era, session, version)
    status, headers, body = exchange.post(server.port, request.body, request.headers)
    if status != 200:
        return None, f"HTTP {status}: {body[:200]!r}"
    if variant.check == "exact":
        stdio = exchange.stdio_answer([servers.SHIPCODE, servers.APP], server.environ(), request, variant.era)
        if body != stdio:
            return None, f"HTTP body {body[:300]!r} is not the stdio line {stdio[:300]!r}"
        if headers.get("content-type") != "application/json":
            return None, f"content-type {headers.get('content-type')!r}"
        return (request, body), None
    try:
        message = exchange.message_of(headers.get("content-type", ""), body)
    except ValueError:
        return None, f"not JSON: {body[:200]!r}"
    problem = (
        exchange.floor_problem(message) if variant.check == "floor" else exchange.meaning_problem(workload, message)
    )
    return ((request, body), None) if problem is None else (None, problem)


def checker_catches(server: servers.Server, request: exchange.Request, expected: bytes) -> str | None:
    """Run wrk once expecting bytes the server never sends: every answer must count as wrong, or the checks
    of this run mean nothing. The problem, or None."""
    out = wrk.run(server.port, request.spec(), expected + b" ", 1, WARMUP_SECONDS)
    if out["requests"] and out["wrong_body"] == out["requests"]:
        return None
    return f"post.lua counted {out['wrong_body']} of {out['requests']} wrong answers as wrong"


def main(argv: list | None = None) -> int:
    args = options(argv)
    if args.session_life:
        return sessionlife.main(args.lives, args.engines.split(","), args.processes)
    started = time.monotonic()
    if args.save and uncommitted_changes():
        sys.exit("run.py http: --save refused: tracked files have uncommitted changes (commit first)")
    missing = wrk.ensure_wrk()
    if missing:
        sys.exit(f"run.py http: {missing}")
    listed = servers.servers(args.before)
    offered = [v for v in VARIANTS if any(v.server == s.name for s in listed)]  # before-* only with --before
    default = [v.name for v in offered if not v.asked_for]
    chosen_names = [n.strip() for n in args.variants.split(",")] if args.variants else default
    unknown = set(chosen_names) - {v.name for v in offered}
    if unknown:
        sys.exit(f"run.py http: unknown variants (before-* need --before): {', '.join(sorted(unknown))}")
    catalogues = {s.name: s.catalogue for s in listed}
    variants = [v for v in offered if v.name in chosen_names and measures_any(v, args.workloads, catalogues[v.server])]
    asked = ", ".join(args.workloads)
    notes = [
        f"{v.label}: not measured (it serves none of the workloads {asked})"
        for v in offered
        if v.name in chosen_names and v not in variants
    ]
    failures: list = []
    by_server = {s.name: s for s in listed if any(v.server == s.name for v in variants)}
    servers.prepare(list(by_server.values()))
    for server in by_server.values():
        if server.note:
            notes.append(f"{server.label}: not measured ({server.note})")
            log(f"{server.name}: skipped: {server.note}")
    info = machine_info([])
    info["versions"].update(
        {
            "wrk": wrk.version(),
            "uvicorn": servers.module_version("uvicorn"),
            "httptools": servers.module_version("httptools"),
            "@modelcontextprotocol/server": node.version("@modelcontextprotocol/server"),
        }
    )
    for name in servers.GO_PEERS:
        if name in by_server and not by_server[name].note:
            info["versions"][f"mcp-grafana ({name})"] = servers.go_versions(name)
    info["versions"] = {
        k: v
        for k, v in info["versions"].items()
        if v and k not in ("matplotlib", "Cython", "@modelcontextprotocol/sdk")
    }
    info["command"] = "python benchmarks/run.py http " + " ".join(sys.argv[1:] if argv is None else argv)
    info.update(rounds=args.rounds, seconds=args.seconds)

    runs: dict = {}
    answer_bytes: dict = {}  # {variant: {workload: the size of its checked answer}}
    cells: list = []  # (variant, workload, connections, request, expected)
    try:
        for server in by_server.values():
            if not server.note:
                log(f"starting {server.name}")
                servers.start(server)
        for variant in variants:
            server = by_server[variant.server]
            if server.note:
                continue
            for workload in args.workloads:
                if not measures(variant, workload, server.catalogue):
                    continue
                checked, problem = sample(server, variant, workload)
                if problem:
                    if variant.check == "exact" or variant.server == "floor" or not problem.startswith("HTTP "):
                        failures.append(f"{variant.label}, {workload}: {problem}")
                    else:
                        notes.append(f"{variant.label}, {workload}: not served ({problem})")
                    continue
                request, expected = checked
                answer_bytes.setdefault(variant.name, {})[workload] = len(expected)
                stateless = f"{variant.label}: its initialize opened no session (no Mcp-Session-Id): stateless"
                if variant.session and "Mcp-Session-Id" not in request.headers and stateless not in notes:
                    notes.append(stateless)
                if not cells:
                    problem = checker_catches(server, request, expected)
                    if problem:
                        sys.exit(f"run.py http: the answer check does not work: {problem}")
                log(f"warming {variant.name} {workload}")
                wrk.run(server.port, request.spec(), expected, 64, WARMUP_SECONDS)
                for connections in connection_counts(args, variant.name):
                    cells.append((variant, workload, connections, request, expected))
                    runs[(variant.name, workload, connections)] = []
        groups = sorted({(c[1], c[2]) for c in cells}, key=lambda g: (-g[1], g[0]))
        for round_index in range(args.rounds):
            log(f"round {round_index + 1}/{args.rounds}")
            for workload, connections in groups:
                group = [c for c in cells if c[1] == workload and c[2] == connections]
                shift = round_index % len(group)
                for variant, _, _, request, expected in group[shift:] + group[:shift]:
                    server = by_server[variant.server]
                    with servers.Watch(server.process.pid) as watch:
                        out = wrk.run(server.port, request.spec(), expected, connections, args.seconds)
                    out["rss_kib"] = watch.peak_kib
                    out["cpu_us"] = watch.cpu / max(out["requests"], 1) * 1e6
                    out["round"] = round_index + 1
                    if out["failed"]:
                        failures.append(
                            f"{variant.label}, {workload}, {connections} conn.: {out['failed']} failed "
                            f"(errors {out['errors']}, wrong status {out['wrong_status']}, wrong body "
                            f"{out['wrong_body']}, of {out['requests']})"
                        )
                    runs[(variant.name, workload, connections)].append(out)
    finally:
        for server in by_server.values():
            servers.stop(server)
            if server.process is not None and server.process.returncode not in (0, -15):
                notes.append(f"{server.label} exited with {server.process.returncode}: {servers.stderr_tail(server)}")

    try:
        info["loadavg_end"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    info["elapsed_s"] = time.monotonic() - started
    table = report.medians(runs)
    rows = report.targets(table)
    text = report.markdown(info, table, rows, notes, failures, variants, answer_bytes)
    print(text)
    stem = "http-latest" if args.save else "http-last"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.md").write_text(text + "\n")
    data = {
        "machine": info,
        "runs": [{"variant": k[0], "workload": k[1], "connections": k[2], "runs": v} for k, v in runs.items()],
        "medians": table,
        "answer_bytes": answer_bytes,
        "targets": [{"figure": r[0], "value": r[1], "goal": r[2], "status": r[3]} for r in rows],
        "notes": notes,
        "failures": failures,
    }
    (RESULTS / f"{stem}.json").write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    why_not = chart.draw_chart(table, info, RESULTS / f"{stem}.png")
    log(f"wrote {RESULTS / stem}.{{md,json{'' if why_not else ',png'}}}" + (f" ({why_not})" if why_not else ""))
    if failures:
        return 1
    if args.check_targets and any(status in ("MISSED", "n/a") for _, _, _, status in rows):
        return 2
    return 0
