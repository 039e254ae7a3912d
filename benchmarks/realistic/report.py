"""The workload's report in Markdown, and the ratios it ends with."""

from __future__ import annotations

from common.fmt import fmt_num, fmt_rate

TITLES = {
    "legacy": "A 2025 session per call: initialize (2024-11-05), notifications/initialized, tools/call, DELETE",
    "stateless": "Stateless 2026-07-28: one POST per call",
}


def _ms(value: float | None) -> str:
    return "n/a" if value is None else fmt_num(value, 1)


def _row(run: dict) -> str:
    request, call = run["request"], run["iteration"]
    cells = [
        run["label"],
        f"**{fmt_rate(run['requests_per_s'])}**",
        fmt_rate(run["iterations_per_s"]),
        " / ".join(_ms(request[k]) for k in ("p50_ms", "p95_ms", "p99_ms")),
        " / ".join(_ms(call[k]) for k in ("p50_ms", "p95_ms", "p99_ms")),
        f"{run['failed_checks']:,} of {run['failed_checks'] + run['passed_checks']:,}",
        f"{run['server_cpu_ms_per_request']:.2f}",
        f"{run['server_cpu_ms_per_call']:.2f}",
        f"{run['server_peak_rss_mib']:.0f}",
        f"{run['k6_cpu_s']:.1f} / {run['redis_cpu_s']:.1f} / {run['api_cpu_s']:.1f}",
    ]
    return "| " + " | ".join(cells) + " |"


#: The goals of shipcode-mcp on this workload, by peer, for the legacy variant: MCP requests/s at least this many
#: times the peer's (a p99 of a whole call below the peer's is asked of each of them).
RATE_GOALS = {"fastmcp": 10, "node": 3}
#: Server CPU per MCP request, at most (ms): 2 vCPU / 4,845 requests/s, the fastest published MCP server.
CPU_GOAL_MS = 0.4
#: A legacy session's server CPU, at most this many times a stateless call's.
SESSION_GOAL = 2


def _goal(figure: str, value: float, unit: str, goal: str = "", met: bool | None = None) -> tuple:
    return (figure, value, unit, goal, "" if met is None else ("ok" if met else "MISSED"))


def ratios(runs: list) -> list:
    """(figure, value, unit, goal, status) rows: shipcode-mcp against each peer per variant, its CPU per request,
    and its stateless calls against its legacy sessions. Goals are shown, never enforced."""
    by = {(r["server"], r["variant"]): r for r in runs}
    rows = []
    for variant in TITLES:
        ours = by.get(("shipcode", variant))
        if not ours:
            continue
        cpu = ours["server_cpu_ms_per_request"]
        rows.append(
            _goal(
                f"{variant}: shipcode-mcp's server CPU per MCP request",
                cpu,
                " ms",
                f"<= {CPU_GOAL_MS}",
                cpu <= CPU_GOAL_MS,
            )
        )
        for (server, other_variant), run in by.items():
            if other_variant != variant or server.startswith("shipcode"):
                continue
            peer, goal = run["label"], RATE_GOALS.get(server) if variant == "legacy" else None
            rate = ours["requests_per_s"] / run["requests_per_s"]
            rows.append(
                _goal(
                    f"{variant}: MCP requests/s, shipcode-mcp / {peer}",
                    rate,
                    "x",
                    f">= {goal}" if goal else "",
                    None if goal is None else rate >= goal,
                )
            )
            p99 = ours["iteration"]["p99_ms"] / run["iteration"]["p99_ms"]
            rows.append(
                _goal(
                    f"{variant}: p99 of a call, shipcode-mcp / {peer}",
                    p99,
                    "x",
                    "< 1" if goal else "",
                    None if goal is None else p99 < 1,
                )
            )
            rows.append(
                _goal(
                    f"{variant}: server CPU per MCP request, shipcode-mcp / {peer}",
                    cpu / run["server_cpu_ms_per_request"],
                    "x",
                )
            )
    legacy, stateless = by.get(("shipcode", "legacy")), by.get(("shipcode", "stateless"))
    if legacy and stateless:
        faster = stateless["iterations_per_s"] / legacy["iterations_per_s"]
        rows.append(_goal("shipcode-mcp: calls/s, stateless / legacy", faster, "x", ">= 1", faster >= 1))
        life = legacy["server_cpu_ms_per_call"] / stateless["server_cpu_ms_per_call"]
        rows.append(
            _goal(
                "shipcode-mcp: server CPU, legacy session / stateless call",
                life,
                "x",
                f"<= {SESSION_GOAL}",
                life <= SESSION_GOAL,
            )
        )
    return rows


def machine_line(info: dict) -> str:
    """The machine, the commit and its load, as a report's first line."""
    return (
        f"{info['date_utc']} UTC · {info['cpu']} · {info['cores']} cores · Python {info['python']} · "
        f"git {info['git_commit']} · load average {info.get('loadavg_start', '?')} at start, "
        f"{info.get('loadavg_end', '?')} at end"
    )


def markdown(result: dict) -> str:
    info, config = result["machine"], result["config"]
    lines = [
        machine_line(info),
        "",
        f"Command: `{config['command']}` · {config['vus']} virtual users · {config['seconds']:g} s per run after "
        f"{config['warmup']:g} s of warm-up · {config['processes']} processes per server · the tools' HTTP "
        f"client: {config['http_client']} · {result['elapsed_s']:.0f} s in all",
        "",
        "Versions: "
        + "; ".join(f"{k}: " + ", ".join(f"{d} {v}" for d, v in vs.items()) for k, vs in result["versions"].items()),
        "",
    ]
    if result.get("note"):
        lines += [f"**{result['note']}**", ""]
    for variant, title in TITLES.items():
        runs = [r for r in result["runs"] if r["variant"] == variant]
        if not runs:
            continue
        lines += (
            [
                f"### {title}",
                "",
                "| server | MCP requests/s | calls/s | request p50 / p95 / p99 (ms) | call p50 / p95 / p99 (ms) | "
                "failed checks | server CPU per MCP request (ms) | per call (ms) | server peak RSS (MiB) | "
                "CPU s of k6 / Redis / API |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            + [_row(r) for r in runs]
            + [""]
        )
    capacity = result.get("api_capacity")
    if capacity:
        asked = max((r["iterations_per_s"] for r in result["runs"]), default=0)
        slowest = min(c["requests_per_s"] for c in capacity.values())
        lines += [
            "### The API service alone (wrk, 64 keep-alive connections, one thread)",
            "",
            "| request | requests/s | CPU per 1,000 requests (ms) |",
            "|---|---:|---:|",
        ] + [f"| {name} | {fmt_rate(c['requests_per_s'])} | {c['cpu_ms_per_1k']:.1f} |" for name, c in capacity.items()]
        lines += [
            "",
            f"Each call makes one API request: the busiest run asked {fmt_rate(asked)} requests/s of it, "
            f"{asked / slowest:.0%} of its slower figure alone.",
            "",
        ]
    rows = ratios(result["runs"])
    if rows:
        lines += ["### Ratios and goals (shown, not enforced)", "", "| figure | value | goal | |", "|---|---:|---|---|"]
        lines += [f"| {name} | {value:.2f}{unit} | {goal} | {status} |" for name, value, unit, goal, status in rows]
        lines.append("")
    if result["notes"]:
        lines += ["### Notes", ""] + [f"- {n}" for n in result["notes"]] + [""]
    if result["skipped"]:
        lines += ["### Not measured", ""] + [f"- {s}" for s in result["skipped"]] + [""]
    if result["failures"]:
        lines += ["### Failures", ""] + [f"- {f}" for f in result["failures"]] + [""]
    return "\n".join(lines)
