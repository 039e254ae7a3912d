"""The ratios the project's issues ask for, each with its target, its group and its status.

A row's status is ``ok``, ``MISSED``, ``n/a`` (a figure it needs is missing) or empty (information only).
``--check-targets`` fails on ``MISSED`` and on ``n/a`` alike: a target that was asked for and not measured
is not met.
"""

from __future__ import annotations

from common.fmt import med

from .workloads import MODERN, TASKS_GET, WORKLOADS

#: The groups of targets, in report order. ``engines`` is the fast-path guard: the compiled engine at least
#: twice the pure one on ping and mix, measured side by side in the same run. ``floor``: the compiled engine's
#: throughput against ``cat`` over the same pipes. ``slow``: pipelined calls to an async tool that awaits
#: 20 ms, shipcode-mcp's wall time against the TypeScript SDK's. ``eras``: the same tool calls with the
#: ``_meta`` of 2026-07-28 against without, on one server that speaks both. ``tasks``: ``tasks/get`` of a finished
#: task on the memory store against a plain ``tools/call`` of the same tool, on one server.
GROUPS = ("engines", "floor", "eras", "tasks", "naive", "peers", "unbuffered", "memory", "latency", "slow")

#: compiled / cat throughput goals per workload.
CAT_GOALS = {
    "ping": 0.5,
    "add": 0.2,
    "echo100": 0.5,
    "echo64k": 0.9,
    "tools/list": 0.25,
    "resources/list": 0.25,
    "resources/read": 0.25,
    "add-decimals": 0.2,
    "mix": 0.25,
}
MODERN_GOAL = 0.8  # compiled: a 2026-07-28 tool call / the same legacy call, requests per second
TASKS_GOAL = 0.5  # tasks/get of a finished task / a plain tools/call of its tool, requests per second
PURE_MIX_GOAL = 0.7  # pure / the chunked naive loop, on the mix
STARTUP_GOAL = 1.15  # compiled / the naive loop: spawn to the initialize answer
REST_RSS_GOAL = 1.1  # compiled / the naive loop: peak RSS of a ping-pong session


def ratio_rows(res: dict, groups: tuple = GROUPS) -> list:
    """The target rows of the groups asked for, from the medians in ``res``."""
    thr = res["throughput"]
    lat = res["latency"]
    up = res["startup_ms"]
    rssc = res["rss_vs_requests"]

    def rps(wl, name):
        return med(thr.get(wl, {}).get(name), "rps")

    def rss(wl, name):
        return med(thr.get(wl, {}).get(name), "rss_mib")

    def div(a, b):
        return None if a is None or b is None or b == 0 else a / b

    rows = []

    def add(group, label, value, op, target, bound="", why=""):
        """One row; ``bound`` ">" or "<" when ``value`` is only a lower or upper bound (a run cut at its limit)."""
        if group not in groups:
            return
        if op == "info":
            status = ""
        elif value is None:
            status = "n/a"
        elif op == ">=":
            status = "ok" if value >= target else "MISSED"
        elif op == "<=":
            status = "ok" if value <= target else "MISSED"
        else:  # within
            status = "ok" if abs(value - 1) <= target else "MISSED"
        if bound and status in ("ok", "MISSED") and (status == "ok") != ((bound == "<") == (op == "<=")):
            status = "n/a"  # a bound on the wrong side decides nothing
        tgt = {"~": f"within ±{target:.0%}", "info": "(information)"}.get(op) or f"{op} {target:g}"
        row = {"figure": label, "value": value, "target": tgt, "status": status, "group": group, "bound": bound}
        if why and status == "n/a":
            row["why"] = why
        rows.append(row)

    def fastest_naive(wl):
        """The faster naive loop: line by line with a flush each, or chunked I/O."""
        rates = [r for r in (rps(wl, "naive"), rps(wl, "naive-batch")) if r is not None]
        return max(rates) if rates else None

    for wl in ("ping", "mix"):
        add("engines", f"{wl}: compiled / pure", div(rps(wl, "compiled"), rps(wl, "pure")), ">=", 2.0)
    for wl, goal in CAT_GOALS.items():
        add("floor", f"{WORKLOADS[wl]}: compiled / cat", div(rps(wl, "compiled"), rps(wl, "cat")), ">=", goal)
    for wl in ("add", "echo100"):
        for engine in ("compiled", "pure"):
            server = f"{engine}-2026"
            add(
                "eras",
                f"{WORKLOADS[wl]}: 2026-07-28 / legacy, {engine}",
                div(rps(wl + MODERN, server), rps(wl, server)),
                ">=" if engine == "compiled" else "info",
                MODERN_GOAL,
            )
    for engine in ("compiled", "pure"):
        server = f"{engine}-tasks"
        same_tool = div(rps(TASKS_GET, server), rps("add" + MODERN, server))
        add("tasks", f"tasks/get / tools/call of the same tool, {engine}", same_tool, ">=", TASKS_GOAL)
        fast = div(rps(TASKS_GET, server), rps("add" + MODERN, f"{engine}-2026"))
        add("tasks", f"tasks/get / tools/call of add when it is not a task, {engine}", fast, "info", 0)
    for wl in ("ping", "mix"):
        add(
            "naive",
            f"{wl}: compiled / fastest naive loop",
            div(rps(wl, "compiled"), fastest_naive(wl)),
            ">=",
            1.3 if wl == "ping" else 1.2,
        )
    pure_mix = div(rps("mix", "pure"), rps("mix", "naive-batch"))
    add("naive", "mix: pure / chunked naive loop", pure_mix, ">=", PURE_MIX_GOAL)
    for wl in ("ping", "mix"):
        sdk = div(rps(wl, "compiled"), rps(wl, "sdk-lowlevel"))
        ts = div(rps(wl, "compiled"), rps(wl, "ts-sdk"))
        add("peers", f"{wl}: compiled / Python SDK low-level", sdk, ">=" if wl == "mix" else "info", 300)
        add("peers", f"{wl}: compiled / TypeScript SDK", ts, ">=" if wl == "mix" else "info", 15)
    for wl in ("ping", "mix"):
        unbuffered = div(rps(wl, "compiled-unbuffered"), rps(wl, "compiled"))
        add("unbuffered", f"{wl}: PYTHONUNBUFFERED=1 / compiled", unbuffered, "~", 0.15)
    add(
        "memory",
        "mix peak RSS: compiled / Python SDK low-level",
        div(rss("mix", "compiled"), rss("mix", "sdk-lowlevel")),
        "<=",
        0.30,
    )
    add("memory", "mix peak RSS: compiled / naive loop", div(rss("mix", "compiled"), rss("mix", "naive")), "<=", 1.5)
    c = rssc.get("compiled", {})
    lo, hi = c.get("1000", {}).get("rss_mib"), c.get("1000000", {}).get("rss_mib")
    add("memory", "peak RSS compiled: 1e6 pings / 1e3 pings", div(hi, lo), "<=", 1.1)
    rest = div(med(lat.get("compiled"), "rss_mib"), med(lat.get("naive"), "rss_mib"))
    add("memory", "peak RSS at rest (ping-pong): compiled / naive loop", rest, "<=", REST_RSS_GOAL)
    add(
        "latency",
        "latency p50: compiled / naive loop",
        div(med(lat.get("compiled"), "p50_us"), med(lat.get("naive"), "p50_us")),
        "<=",
        1.5,
    )
    add(
        "latency",
        "start-up: compiled / naive loop",
        div((up.get("compiled") or {}).get("median"), (up.get("naive") or {}).get("median")),
        "<=",
        STARTUP_GOAL,
    )
    slow = res.get("slow", {})

    def wall(size, name):
        """(median wall ms or a lower bound, ">" for a bound, why it is missing)."""
        cell = slow.get(str(size), {}).get(name)
        if not cell:
            return None, "", f"{name} not run"
        if "runs" in cell:
            return cell["wall_ms"]["median"], "", ""
        if "limited_s" in cell:
            return cell["limited_s"] * 1e3, ">", ""
        return None, "", f"{name}: {cell['skipped']}"

    for size in (res.get("config") or {}).get("slow_sizes") or []:
        ts, ts_bound, ts_why = wall(size, "ts-sdk")
        for name in ("compiled", "pure"):
            ours, our_bound, our_why = wall(size, name)
            value = None if our_bound and ts_bound else div(ours, ts)  # both cut: nothing known
            bound = our_bound or ("<" if ts_bound else "")
            why = our_why or ts_why or ("both runs cut at the limit" if value is None else "only a bound was measured")
            add("slow", f"slow x{size:,}: {name} / TypeScript SDK wall time", value, "<=", 0.5, bound, why)
        cpu = {name: med(slow.get(str(size), {}).get(name), "cpu_us_per_call") for name in ("compiled", "ts-sdk")}
        add("slow", f"slow x{size:,}: compiled / TypeScript SDK, server CPU per call", div(*cpu.values()), "info", 0)
    return rows


def unmet(rows: list) -> list:
    """The rows that fail ``--check-targets``: missed, or without a figure."""
    return [row for row in rows if row["status"] in ("MISSED", "n/a")]
