"""Medians of the interleaved rounds, the targets, and the report in Markdown."""

from __future__ import annotations

import statistics

from common.fmt import fmt_rate

from .exchange import DEFAULT_WORKLOADS, WORKLOADS
from .servers import VARIANTS

CONNECTIONS = (64, 1)
BY_NAME = {v.name: v for v in VARIANTS}


def figure(runs: list, key: str) -> tuple | None:
    """(median, min, max) of one figure over a cell's runs, None when it has none."""
    values = [run[key] for run in runs]
    return (statistics.median(values), min(values), max(values)) if values else None


def medians(runs: dict) -> dict:
    """{variant: {workload: {connections: {rps, p99_us, rss_kib: (median, min, max)}}}} of the recorded runs."""
    out: dict = {}
    for (variant, workload, connections), cell in runs.items():
        if cell:
            out.setdefault(variant, {}).setdefault(workload, {})[connections] = {
                key: figure(cell, key) for key in ("rps", "p50_us", "p99_us", "cpu_us", "rss_kib")
            }
    return out


def _median(table: dict, variant: str, workload: str, connections: int, key: str) -> float | None:
    cell = table.get(variant, {}).get(workload, {}).get(connections)
    return cell[key][0] if cell else None


def _best(table: dict, sdk: str, workload: str) -> tuple:
    """(requests/s, variant) of an SDK's fastest configuration at 64 connections."""
    rates = [
        (_median(table, v.name, workload, 64, "rps"), v.name)
        for v in VARIANTS
        if v.sdk == sdk and _median(table, v.name, workload, 64, "rps") is not None
    ]
    return max(rates) if rates else (None, "")


def measured_workloads(table: dict) -> list:
    """The workloads the table has figures for, in WORKLOADS' order."""
    return [w for w in WORKLOADS if any(w in cells for cells in table.values())]


def called_tools(table: dict) -> list:
    """The ``tools/call`` workloads the targets are for: those measured, or the default ones when nothing was."""
    return [w for w in measured_workloads(table) if WORKLOADS[w].tool] if table else list(DEFAULT_WORKLOADS)


def targets(table: dict) -> list:
    """Rows (figure, value, goal text, status) for the compiled engine in each era; status ok, MISSED, n/a or
    "" (information)."""
    rows = []

    def row(name: str, value: float | None, goal: str, met) -> None:
        status = "n/a" if value is None else ("" if met is None else ("ok" if met(value) else "MISSED"))
        rows.append((name, value, goal, status))

    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a is not None and b else None

    for variant in ("compiled", "compiled-legacy"):
        era = "2026-07-28" if variant == "compiled" else "2025 session"
        for workload in called_tools(table):
            at = f"{workload}, {era}"
            m = lambda c, key, name=variant, w=workload: _median(table, name, w, c, key)  # noqa: E731
            floor = lambda c, key, w=workload: _median(table, "floor", w, c, key)  # noqa: E731
            row(
                f"{at}, 64 conn.: requests/s / floor",
                ratio(m(64, "rps"), floor(64, "rps")),
                ">= 0.7",
                lambda v: v >= 0.7,
            )
            for sdk, label in (("ts-sdk", "TypeScript SDK"), ("sdk", "Python SDK")):
                best, which = _best(table, sdk, workload)
                row(
                    f"{at}, 64 conn.: requests/s / {label} best ({which or 'not run'})",
                    ratio(m(64, "rps"), best),
                    ">= 5",
                    lambda v: v >= 5,
                )
            row(f"{at}, 64 conn.: p99 / floor's", ratio(m(64, "p99_us"), floor(64, "p99_us")), "<= 3", lambda v: v <= 3)
            row(
                f"{at}, 64 conn.: peak RSS / floor's",
                ratio(m(64, "rss_kib"), floor(64, "rss_kib")),
                "<= 1.5",
                lambda v: v <= 1.5,
            )
            row(f"{at}, 1 conn.: requests/s / floor", ratio(m(1, "rps"), floor(1, "rps")), ">= 0.7", lambda v: v >= 0.7)
            fast = max((_median(table, n, workload, 64, "rps") or 0, n) for n in ("fastmcp", "fastmcp-legacy"))
            row(
                f"{at}, 64 conn.: requests/s / FastMCP best",
                ratio(m(64, "rps"), fast[0] or None),
                "(information)",
                None,
            )
            row(
                f"{at}, 64 conn.: server CPU per request / floor's",
                ratio(m(64, "cpu_us"), floor(64, "cpu_us")),
                "(information)",
                None,
            )
            asgi = variant.replace("compiled", "compiled-asgi")
            for key, what in (("rps", "requests/s"), ("cpu_us", "server CPU per request")):
                row(
                    f"{at}, 64 conn.: {what} / through ASGI only",
                    ratio(m(64, key), _median(table, asgi, workload, 64, key)),
                    "(information)",
                    None,
                )
    go_rows(table, row, ratio)
    return rows


def go_rows(table: dict, row, ratio) -> None:
    """The rows against the Go peer on mcp-go at equal cores (its GOMAXPROCS=2, shipcode-mcp's 2 processes), for
    each workload measured with it; the same at 1 process and against the Go SDK for information."""
    for workload in measured_workloads(table):
        for era, suffix in (("2026-07-28", ""), ("2025", "-legacy")):
            if f"mcp-go{suffix}" not in table or workload not in table[f"mcp-go{suffix}"]:
                continue
            at = f"{workload}, {era}, 64 conn."
            m = lambda name, key, w=workload: _median(table, name, w, 64, key)  # noqa: E731
            two, one, go = f"compiled-2p{suffix}", f"compiled{suffix}", f"mcp-go{suffix}"
            row(f"{at}: requests/s, 2 processes / mcp-go", ratio(m(two, "rps"), m(go, "rps")), ">= 1", lambda v: v >= 1)
            row(f"{at}: requests/s, 1 process / mcp-go", ratio(m(one, "rps"), m(go, "rps")), "(information)", None)
            row(f"{at}: p99, 2 processes / mcp-go's", ratio(m(two, "p99_us"), m(go, "p99_us")), "(information)", None)
            for name, what in ((two, "2 processes"), (one, "1 process")):
                row(
                    f"{at}: server CPU per request, {what} / mcp-go's",
                    ratio(m(name, "cpu_us"), m(go, "cpu_us")),
                    "(information)",
                    None,
                )
            row(
                f"{at}: requests/s, 2 processes / Go SDK",
                ratio(m(two, "rps"), m(f"go-sdk{suffix}", "rps")),
                "(information)",
                None,
            )


def _ms(us: float) -> str:
    return f"{us / 1000:.2f}" if us < 10_000 else f"{us / 1000:.0f}"


def markdown(
    info: dict, table: dict, rows: list, notes: list, failures: list, variants: list, answer_bytes: dict
) -> str:
    v = info["versions"]
    workloads = measured_workloads(table)
    lines = [
        f"{info['date_utc']} UTC · {info['cpu']} · {info['cores']} cores · Python {info['python']} · "
        f"git {info['git_commit']} · load average {info.get('loadavg_start', '?')} at start, "
        f"{info.get('loadavg_end', '?')} at end",
        "",
        "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        "",
        f"Command: `{info['command']}` · {info['rounds']} interleaved rounds of {info['seconds']} s runs per cell · "
        f"wrk -t1, keep-alive · {info['elapsed_s']:.0f} s in all",
        "",
    ]
    for connections in CONNECTIONS:
        lines += [
            f"### {connections} connection{'s' if connections > 1 else ''}: requests/s (median [min–max]), "
            "p99 latency (ms), server CPU per request (µs), peak RSS under load (MiB)",
            "",
            "| server | " + " | ".join(f"{w} req/s | p99 | CPU | RSS" for w in workloads) + " |",
            "|---|" + "---:|---:|---:|---:|" * len(workloads),
        ]
        for variant in variants:
            cells = table.get(variant.name, {})
            if not any(connections in cells.get(w, {}) for w in workloads):
                continue
            out = [variant.label]
            for workload in workloads:
                cell = cells.get(workload, {}).get(connections)
                if cell is None:
                    out += ["n/a", "", "", ""]
                    continue
                rps = cell["rps"]
                out += [
                    f"**{fmt_rate(rps[0])}** [{fmt_rate(rps[1])}–{fmt_rate(rps[2])}]",
                    _ms(cell["p99_us"][0]),
                    f"{cell['cpu_us'][0]:.0f}",
                    f"{cell['rss_kib'][0] / 1024:.1f}",
                ]
            lines.append("| " + " | ".join(out) + " |")
        lines.append("")
    lines += ["### Answer sizes (bytes of the checked answer body)", "", "| server | " + " | ".join(workloads) + " |"]
    lines.append("|---|" + "---:|" * len(workloads))
    for variant in variants:
        if variant.name in answer_bytes:
            sizes = answer_bytes[variant.name]
            lines.append(f"| {variant.label} | " + " | ".join(str(sizes.get(w, "")) for w in workloads) + " |")
    lines.append("")
    lines += ["### Targets (shipcode-mcp compiled)", "", "| figure | value | goal | |", "|---|---:|---|---|"]
    for name, value, goal, status in rows:
        lines.append(f"| {name} | {'n/a' if value is None else f'{value:.2f}x'} | {goal} | {status} |")
    lines.append("")
    if notes:
        lines += ["### Notes", ""] + [f"- {note}" for note in notes] + [""]
    if failures:
        lines += ["### Failures", ""] + [f"- {failure}" for failure in failures] + [""]
    return "\n".join(lines)
