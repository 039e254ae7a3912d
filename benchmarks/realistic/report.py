"""The workload's report in Markdown, and the ratios it ends with."""

from __future__ import annotations

from harness.fmt import fmt_num, fmt_rate

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


def ratios(runs: list) -> list:
    """(figure, value) rows: shipcode-mcp's MCP requests/s and CPU per request against each peer's, per variant,
    and its stateless calls/s against its legacy ones."""
    by = {(r["server"], r["variant"]): r for r in runs}
    rows = []
    for variant in TITLES:
        ours = by.get(("shipcode", variant))
        if not ours:
            continue
        for (server, other_variant), run in by.items():
            if other_variant != variant or server.startswith("shipcode"):
                continue
            rows.append(
                (
                    f"{variant}: MCP requests/s, shipcode-mcp / {run['label']}",
                    ours["requests_per_s"] / run["requests_per_s"],
                )
            )
            rows.append(
                (
                    f"{variant}: server CPU per MCP request, shipcode-mcp / {run['label']}",
                    ours["server_cpu_ms_per_request"] / run["server_cpu_ms_per_request"],
                )
            )
    legacy, stateless = by.get(("shipcode", "legacy")), by.get(("shipcode", "stateless"))
    if legacy and stateless:
        rows.append(
            ("shipcode-mcp: calls/s, stateless / legacy", stateless["iterations_per_s"] / legacy["iterations_per_s"])
        )
        rows.append(
            (
                "shipcode-mcp: server CPU per call, legacy session / stateless call",
                legacy["server_cpu_ms_per_call"] / stateless["server_cpu_ms_per_call"],
            )
        )
    return rows


def markdown(result: dict) -> str:
    info, config = result["machine"], result["config"]
    lines = [
        f"{info['date_utc']} UTC · {info['cpu']} · {info['cores']} cores · Python {info['python']} · "
        f"git {info['git_commit']} · load average {info.get('loadavg_start', '?')} at start, "
        f"{info.get('loadavg_end', '?')} at end",
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
        lines += ["### Ratios", "", "| figure | value |", "|---|---:|"]
        lines += [f"| {name} | {value:.2f}x |" for name, value in rows] + [""]
    if result["skipped"]:
        lines += ["### Not measured", ""] + [f"- {s}" for s in result["skipped"]] + [""]
    if result["failures"]:
        lines += ["### Failures", ""] + [f"- {f}" for f in result["failures"]] + [""]
    return "\n".join(lines)
