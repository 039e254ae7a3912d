"""The Markdown report, and its copy in benchmarks/README.md."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from common import HERE, ROOT, log
from common.fmt import fmt_num, fmt_rate, fmt_size, med

from .targets import CAT_GOALS, PURE_MIX_GOAL, REST_RSS_GOAL, STARTUP_GOAL
from .workloads import SLOW_MS, WORKLOADS


def fmt_ratio(row: dict) -> str:
    """A target row's value: ``2.50x``, ``1,072x``, ``> 33x`` for a bound, ``n/a``."""
    v = row["value"]
    if v is None:
        return "n/a"
    text = f"{v:,.0f}x" if v >= 100 else f"{v:.2f}x"
    return f"{row['bound']} {text}" if row.get("bound") else text


def slow_section(res: dict, names: list, labels: dict) -> list:
    """The slow workload's table: wall time and server CPU per call at each size."""
    slow = res.get("slow") or {}
    sizes = sorted(int(k) for k in slow)
    shown = [name for name in names if any(name in slow[str(k)] for k in sizes)]
    if not shown:
        return []
    limit = res["config"]["slow_limit"]
    L = [
        f"## Slow tool calls (pipelined calls to an async tool that awaits {SLOW_MS} ms)",
        "",
        "Wall time from the `initialize` answer to the last answer (ms, median [min–max]), and the server's user +"
        " system CPU per call (µs, median).",
        "",
        "| server | " + " | ".join(f"{k:,} calls: wall (ms) | CPU/call (µs)" for k in sizes) + " |",
        "|---|" + "---:|---:|" * len(sizes),
    ]
    notes = []
    for name in shown:
        cells = []
        for k in sizes:
            cell = slow[str(k)].get(name)
            if cell and "runs" in cell:
                st = cell["wall_ms"]
                mark = "†" if cell.get("reordered") else ""
                cells.append(f"**{fmt_num(st['median'])}**{mark} [{fmt_num(st['min'])}–{fmt_num(st['max'])}]")
                cells.append(fmt_num(med(cell, "cpu_us_per_call")))
            elif cell and "limited_s" in cell:
                cells += [f"> {cell['limited_s'] * 1e3:,.0f} (cut)", "n/a"]
            elif cell:
                cells += ["skipped", "n/a"]
                notes.append(f"{labels[name]} at {k:,} calls: {cell['skipped']}")
            else:
                failed = any(f.startswith(f"{name} / slow x{k}:") for f in res["failures"])
                cells += ["FAIL" if failed else "n/a", "n/a"]
        L.append(f"| {labels[name]} | " + " | ".join(cells) + " |")
    L.append("")
    if any(c.get("reordered") for per in slow.values() for c in per.values()):
        L.append("† answered some calls out of order (allowed by JSON-RPC; every id was answered exactly once).")
        L.append("")
    if any("limited_s" in c for per in slow.values() for c in per.values()):
        L.append(f"cut: not done {limit:g} s after the `initialize` answer (`--slow-limit`): the run was stopped.")
        L.append("")
    if notes:
        L.append("skipped: " + "; ".join(notes) + ".")
        L.append("")
    return L


def floors_section(res: dict, labels: dict) -> list:
    """The compiled engine against the floors: ``cat`` for throughput, the naive loop for start-up and memory."""
    thr, lat, up = res["throughput"], res["latency"], res["startup_ms"]
    have = {name for per in thr.values() for name in per} | set(lat)
    if "compiled" not in have or not have & {"cat", "naive", "naive-batch"}:
        return []

    def rps(wl, name):
        return med(thr.get(wl, {}).get(name), "rps")

    def row(figure, ours, floor_label, floor, goal, fmt):
        ratio = None if ours is None or not floor else ours / floor
        return f"| {figure} | {fmt(ours)} | {floor_label} {fmt(floor)} | {fmt_num(ratio, 2)} | {goal} |"

    L = [
        "## The compiled engine against the floors",
        "",
        "| figure | shipcode-mcp | floor | ratio | goal |",
        "|---|---:|---:|---:|---|",
    ]
    L.extend(
        row(f"{WORKLOADS[wl]} (requests/s)", rps(wl, "compiled"), "`cat`", rps(wl, "cat"), f">= {goal:g}", fmt_rate)
        for wl, goal in CAT_GOALS.items()
    )
    L.append(
        row(
            "mix (requests/s), **pure** engine",
            rps("mix", "pure"),
            "chunked naive loop",
            rps("mix", "naive-batch"),
            f">= {PURE_MIX_GOAL:g}",
            fmt_rate,
        )
    )
    L.append(
        row(
            "start-up to the `initialize` answer (ms)",
            (up.get("compiled") or {}).get("median"),
            "naive loop",
            (up.get("naive") or {}).get("median"),
            f"<= {STARTUP_GOAL:g}",
            fmt_num,
        )
    )
    L.append(
        row(
            "peak RSS at rest: a ping-pong session (MiB)",
            med(lat.get("compiled"), "rss_mib"),
            "naive loop",
            med(lat.get("naive"), "rss_mib"),
            f"<= {REST_RSS_GOAL:g}",
            fmt_num,
        )
    )
    L.append("")
    slow = res.get("slow") or {}
    cpu = [
        f"{fmt_num(med(per['compiled'], 'cpu_us_per_call'))} µs at {int(k):,} calls"
        for k, per in sorted(slow.items(), key=lambda item: int(item[0]))
        if "runs" in per.get("compiled", {})
    ]
    if cpu:
        L.append(f"Server CPU per call of the slow workload, {labels['compiled']}: " + ", ".join(cpu) + ".")
        L.append("")
    return L


def to_markdown(res: dict, specs: list) -> str:
    m = res["machine"]
    names = [s.name for s in specs if s.available]
    labels = {s.name: s.label or s.name for s in specs}
    L = []
    L.append(f"# shipcode-mcp benchmark — {res['mode']} mode")
    L.append("")
    L.append(
        f"{m['date_utc']} UTC · {m['cpu']} · {m['cores']} cores · {m.get('memory_gib', '?')} GiB · {m['os']} · "
        f"Python {m['python']} · git {m['git_commit']} · load average {m.get('loadavg_start', '?')} at start, "
        f"{m.get('loadavg_end', '?')} at end"
    )
    L.append("")
    L.append("Versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    L.append("")
    rounds = f"{res['rounds']} interleaved rounds"
    if res["mode"] == "smoke":
        rounds = f"{res['config']['guard_rounds']} interleaved rounds of ping and mix, 1 of the rest"
    L.append(f"Command: `{res['command']}` · {rounds} · {res['duration_s']:.0f} s in all")
    L.append("")
    thr = res["throughput"]
    wls = [w for w in WORKLOADS if w in thr]
    rounds_note = "median of the rounds, [min–max]"
    L.append(f"## Pipelined throughput (requests/s, {rounds_note})")
    L.append("")
    L.append("| server | " + " | ".join(WORKLOADS[w] for w in wls) + " |")
    L.append("|---|" + "---:|" * len(wls))
    for name in names:
        cells = []
        for wl in wls:
            cell = thr[wl].get(name)
            if not cell:
                cells.append("FAIL" if any(f.startswith(f"{name} / {wl}:") for f in res["failures"]) else "n/a")
                continue
            st = cell["rps"]
            mark = "†" if cell.get("reordered") else ""
            cells.append(f"**{fmt_rate(st['median'])}**{mark} [{fmt_rate(st['min'])}–{fmt_rate(st['max'])}]")
        L.append(f"| {labels[name]} | " + " | ".join(cells) + " |")
    L.append("")
    if any(c.get("reordered") for per in thr.values() for c in per.values()):
        L.append("† answered some requests out of order (allowed by JSON-RPC; every id was answered exactly once).")
        L.append("")
    for key, title, digits in (
        ("cpu_s_per_m", "CPU seconds per million requests (server process, median)", 2),
        ("rss_mib", "Peak RSS (MiB, median)", 1),
    ):
        L.append(f"## {title}")
        L.append("")
        L.append("| server | " + " | ".join(WORKLOADS[w] for w in wls) + " |")
        L.append("|---|" + "---:|" * len(wls))
        L.extend(
            f"| {labels[name]} | " + " | ".join(fmt_num(med(thr[w].get(name), key), digits) for w in wls) + " |"
            for name in names
        )
        L.append("")
    L.extend(slow_section(res, names, labels))
    L.append("## Interactive latency and start-up")
    L.append("")
    L.append(
        "| server | ping-pong p50 (µs) | p99 (µs) | start-up to `initialize` answer (ms) [min–max]"
        " | peak RSS at rest (MiB) |"
    )
    L.append("|---|---:|---:|---:|---:|")
    for name in names:
        lat = res["latency"].get(name) or {}
        up = res["startup_ms"].get(name)
        ups = f"{up['median']:.1f} [{up['min']:.1f}–{up['max']:.1f}]" if up else "n/a"
        L.append(
            f"| {labels[name]} | {fmt_num(med(lat, 'p50_us'))} | {fmt_num(med(lat, 'p99_us'))} | {ups}"
            f" | {fmt_num(med(lat, 'rss_mib'))} |"
        )
    L.append("")
    es = res["echo_scaling"]
    if es:
        sizes = sorted({int(k) for per in es.values() for k in per})
        L.append("## Echo throughput by text size (MB/s of echoed text, median)")
        L.append("")
        L.append("| server | " + " | ".join(fmt_size(s) for s in sizes) + " |")
        L.append("|---|" + "---:|" * len(sizes))
        L.extend(
            f"| {labels[name]} | " + " | ".join(fmt_num(med(es[name].get(str(s)), "mb_s")) for s in sizes) + " |"
            for name in names
            if name in es
        )
        L.append("")
    rc = res["rss_vs_requests"]
    if rc:
        counts = sorted({int(k) for per in rc.values() for k in per})
        L.append("## Peak RSS by number of pipelined pings (MiB)")
        L.append("")
        L.append("| server | " + " | ".join(f"{c:,}" for c in counts) + " |")
        L.append("|---|" + "---:|" * len(counts))
        for name in names:
            if name in rc:
                row = []
                for c in counts:
                    cell = rc[name].get(str(c), {})
                    row.append(f"{cell['rss_mib']:.1f}" if "rss_mib" in cell else ("skipped" if cell else "n/a"))
                L.append(f"| {labels[name]} | " + " | ".join(row) + " |")
        L.append("")
        if any("skipped" in cell for per in rc.values() for cell in per.values()):
            L.append(
                f"skipped: would take more than {res['config']['rss_cap']:.0f} s at the server's measured rate, "
                "or timed out."
            )
            L.append("")
    par = res["parallel"]
    if par:
        ks = sorted({int(k) for per in par.values() for k in per})
        L.append(
            f"## Parallel sessions (aggregate requests/s, {res.get('parallel_workload', 'mix')}, one process each)"
        )
        L.append("")
        L.append("| server | " + " | ".join(f"{k} session{'s' if k > 1 else ''}" for k in ks) + " |")
        L.append("|---|" + "---:|" * len(ks))
        L.extend(
            f"| {labels[name]} | " + " | ".join(fmt_rate(med(par[name].get(str(k)), "rps")) for k in ks) + " |"
            for name in names
            if name in par
        )
        L.append("")
    L.extend(floors_section(res, labels))
    L.append("## Ratios and targets")
    L.append("")
    L.append("| figure | value | target | |")
    L.append("|---|---:|---|---|")
    for row in res["ratios"]:
        status = row["status"] + (f" ({row['why']})" if row.get("why") else "")
        L.append(f"| {row['figure']} | {fmt_ratio(row)} | {row['target']} | {status} |")
    L.append("")
    L.append("A missed target leaves the exit status at 0 unless `--check-targets` is given (then it is 2).")
    L.append("")
    L.append("## Servers")
    L.append("")
    for s in specs:
        status = "" if s.available else " — **not run**"
        extra = f" (engine: {s.engine})" if s.engine else ""
        env = " ".join(f"{k}={v}" for k, v in s.env.items() if v is not None)
        cmd = " ".join(shlex.quote(a) for a in s.argv).replace(str(ROOT) + "/", "")
        cmd = cmd.replace(str(Path(sys.executable).with_name("shipcode-mcp")), "shipcode-mcp")
        cmd = cmd.replace(sys.executable, "python")
        note = f" — {s.note}" if s.note else ""
        L.append(f"- `{s.name}`: {env + ' ' if env else ''}`{cmd}`{extra}, checked {s.check}{status}{note}")
    L.append("")
    L.append(
        "Requests per run (pipelined): "
        + "; ".join(
            f"{WORKLOADS[w]}: " + ", ".join(f"{n} {fmt_rate(thr[w][n]['n'])}" for n in names if n in thr[w])
            for w in wls
        )
    )
    L.append("")
    if res["failures"]:
        L.append("## Failures")
        L.append("")
        L.extend(f"- {f.splitlines()[0]}" for f in res["failures"])
        L.append("")
    return "\n".join(L)


def update_readme(md: str) -> None:
    readme = HERE / "README.md"
    text = readme.read_text()
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    if start not in text or end not in text:
        log("README.md has no results markers; not updated")
        return
    body = md.split("\n", 1)[1].replace("\n## ", "\n### ")
    text = (
        text.split(start)[0]
        + start
        + "\n"
        + body.strip()
        + "\n\n![chart](results/latest.png)\n"
        + end
        + text.split(end, 1)[1]
    )
    readme.write_text(text)
    log("updated benchmarks/README.md")
