"""The ratios the project's issues ask for, each with its target and status."""

from __future__ import annotations

from .fmt import med


def ratio_rows(res: dict) -> list:
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

    def add(label, value, op, target):
        if value is None:
            status = "n/a"
        elif op == ">=":
            status = "ok" if value >= target else "MISSED"
        elif op == "<=":
            status = "ok" if value <= target else "MISSED"
        else:  # within
            status = "ok" if abs(value - 1) <= target else "MISSED"
        tgt = f"within ±{target:.0%}" if op == "~" else f"{op} {target:g}"
        rows.append({"figure": label, "value": value, "target": tgt, "status": status})

    def floor(wl):
        """The faster naive loop: line by line with a flush each, or chunked I/O."""
        rates = [r for r in (rps(wl, "naive"), rps(wl, "naive-batch")) if r is not None]
        return max(rates) if rates else None

    for wl in ("ping", "mix"):
        add(f"{wl}: compiled / pure", div(rps(wl, "compiled"), rps(wl, "pure")), ">=", 2.0 if wl == "ping" else 1.5)
        add(
            f"{wl}: compiled / fastest naive loop",
            div(rps(wl, "compiled"), floor(wl)),
            ">=",
            1.3 if wl == "ping" else 1.2,
        )
    add("mix: pure / fastest naive loop", div(rps("mix", "pure"), floor("mix")), ">=", 0.6)
    for wl in ("ping", "mix"):
        add(
            f"{wl}: compiled / Python SDK low-level",
            div(rps(wl, "compiled"), rps(wl, "sdk-lowlevel")),
            ">=",
            300 if wl == "mix" else 0,
        )
        add(
            f"{wl}: compiled / TypeScript SDK",
            div(rps(wl, "compiled"), rps(wl, "ts-sdk")),
            ">=",
            15 if wl == "mix" else 0,
        )
        add(f"{wl}: PYTHONUNBUFFERED=1 / compiled", div(rps(wl, "compiled-unbuffered"), rps(wl, "compiled")), "~", 0.15)
    add(
        "mix peak RSS: compiled / Python SDK low-level",
        div(rss("mix", "compiled"), rss("mix", "sdk-lowlevel")),
        "<=",
        0.30,
    )
    add("mix peak RSS: compiled / naive loop", div(rss("mix", "compiled"), rss("mix", "naive")), "<=", 1.5)
    c = rssc.get("compiled", {})
    lo, hi = c.get("1000", {}).get("rss_mib"), c.get("1000000", {}).get("rss_mib")
    add("peak RSS compiled: 1e6 pings / 1e3 pings", div(hi, lo), "<=", 1.1)
    add(
        "latency p50: compiled / naive loop",
        div(med(lat.get("compiled"), "p50_us"), med(lat.get("naive"), "p50_us")),
        "<=",
        1.5,
    )
    add(
        "start-up: compiled / naive loop",
        div((up.get("compiled") or {}).get("median"), (up.get("naive") or {}).get("median")),
        "<=",
        1.5,
    )
    for row in rows:
        if row["target"] == ">= 0":
            row["target"], row["status"] = "(information)", ""
    return rows
