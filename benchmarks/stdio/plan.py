"""The plan of a run: the modes, how long each run is, and the phases with their interleaved rounds."""

from __future__ import annotations

import dataclasses
import math
import statistics

from common import log
from common.fmt import fmt_size

from .measure import calibrate, parallel, pingpong, pipelined, slow_calls
from .servers import Spec
from .session import Failure
from .workloads import SLOW, WORKLOADS, echo_size_of

MODES = {
    "quick": dict(
        rounds=3,
        seconds=0.2,
        burst=0.04,
        lat=2000,
        lat_budget=0.2,
        scale_rounds=1,
        sizes=[10, 1024, 65536, 1 << 20, 4 << 20],
        scale_seconds=0.15,
        lat_rounds=2,
        rss_counts=[1_000, 100_000, 1_000_000],
        rss_cap=8.0,
        par=[1, 2, 4],
        par_rounds=1,
        scale_servers=["compiled", "pure", "naive"],
        n_min=30,
        n_max=1_000_000,
        slow_sizes=[1_000, 10_000],
        slow_limit=30.0,  # seconds after the initialize answer; then the run is cut
        slow_rounds=3,
        slow_repeat=2.0,  # a run longer than this (seconds) is not repeated in later rounds
    ),
    "full": dict(
        rounds=5,
        seconds=1.0,
        burst=0.1,
        lat=10000,
        lat_budget=1.0,
        scale_rounds=2,
        sizes=[10, 100, 1024, 10240, 65536, 102400, 1 << 20, 4 << 20],
        scale_seconds=0.5,
        lat_rounds=3,
        rss_counts=[1_000, 10_000, 100_000, 1_000_000],
        rss_cap=60.0,
        par=[1, 2, 4],
        par_rounds=2,
        scale_servers=None,
        n_min=100,
        n_max=5_000_000,
        slow_sizes=[1_000, 10_000],
        slow_limit=120.0,
        slow_rounds=5,
        slow_repeat=10.0,
    ),
    "smoke": dict(
        rounds=1,
        guard_rounds=5,  # ping and mix: the fast-path guard's interleaved rounds
        targets=["engines"],
        seconds=0.0,
        burst=0.0,
        lat=200,
        lat_budget=0.0,
        scale_rounds=1,
        sizes=[10, 65536, 1 << 20],
        scale_seconds=0.0,
        lat_rounds=1,
        rss_counts=[1_000],
        rss_cap=5.0,
        par=[1, 2],
        par_rounds=1,
        scale_servers=None,
        n_min=1,
        n_max=10_000,
        slow_sizes=[50],
        slow_limit=10.0,
        slow_rounds=1,
        slow_repeat=0.0,
    ),
}
# Smoke run sizes. ping and mix are also the fast-path guard (compiled >= 2x pure), so their runs are long
# enough to time: ~30 ms (ping) and ~50 ms (mix) for the compiled engine, several times that for the pure one.
SMOKE_N = {
    "ping": 300_000,
    "add": 700,
    "echo100": 700,
    "echo64k": 40,
    "tools/list": 300,
    "resources/list": 300,
    "resources/read": 300,
    "add-decimals": 700,
    "mix": 60_000,
    "add@2026": 700,
    "echo100@2026": 700,
    "tasks/get": 700,
}
GUARD_WORKLOADS = ("ping", "mix")
SMOKE_PARALLEL_N = 1000  # per session: parallel sessions are checked for correctness only
SMOKE_ECHO_N = {10: 300, 65536: 20, 1 << 20: 3}


def nice(n: float, lo: int, hi: int) -> int:
    """Round down to 1, 1.5, 2, 3, 5 or 7 times a power of ten, within [lo, hi]."""
    n = max(lo, min(hi, n))
    p = 10 ** int(math.floor(math.log10(max(n, 1))))
    best = p
    for m in (1, 1.5, 2, 3, 5, 7):
        if m * p <= n:
            best = int(m * p)
    return max(lo, min(hi, best))


def _stats(values: list) -> dict | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


class Bench:
    def __init__(self, args, specs: list):
        self.args = args
        self.mode = args.mode
        self.cfg = dict(MODES[args.mode])
        if args.rounds:
            self.cfg["guard_rounds" if self.mode == "smoke" else "rounds"] = args.rounds
        if args.seconds:
            self.cfg["seconds"] = args.seconds
        if args.slow_sizes:
            self.cfg["slow_sizes"] = args.slow_sizes
        if args.slow_limit:
            self.cfg["slow_limit"] = args.slow_limit
        self.specs = specs
        self.live = [s for s in specs if s.available]
        self.workloads = [w for w in WORKLOADS if not args.workloads or w in args.workloads.split(",")]
        self.skip = set((args.skip or "").split(",")) - {""}
        if args.workloads and SLOW not in args.workloads.split(","):
            self.skip.add(SLOW)
        self.rates: dict = {}
        self.failures: list = []
        self.passed = 0  # sessions whose every response was checked and right
        self.failed: set = set()
        self.out = {
            "throughput": {},
            "latency": {},
            "startup_ms": {},
            "echo_scaling": {},
            "rss_vs_requests": {},
            "parallel": {},
            "slow": {},
        }
        self._startups: dict = {}

    # --- helpers
    def timeout(self, expected_seconds: float) -> float:
        return 60.0 + 10 * expected_seconds

    def fail(self, spec: Spec, what: str, exc: Exception) -> None:
        msg = f"{spec.name} / {what}: {exc}"
        self.failures.append(msg)
        self.failed.add((spec.name, what))
        log("FAIL " + msg)

    def n_for(self, spec: Spec, wl: str, seconds: float) -> int:
        if self.mode == "smoke":
            if wl.startswith("echo:"):
                return SMOKE_ECHO_N.get(echo_size_of(wl), 5)
            return SMOKE_N[wl]
        rate = self.rate(spec, wl)
        if rate is None:
            return 0
        lo = self.cfg["n_min"]
        hi = self.cfg["n_max"] // (4 if spec.check == "lines" else 1)  # cat: a floor, not a contender
        if wl.startswith("echo:"):
            lo = 3
        if wl == "echo64k" or wl.startswith("echo:"):
            hi = max(3, min(hi, (512 << 20) // (echo_size_of(wl) + 100)))
        return nice(rate * seconds, min(lo, hi), hi)

    def rate(self, spec: Spec, wl: str) -> float | None:
        r = self.rates.get(spec.name, {})
        if wl in r:
            return r[wl]
        if wl.startswith("echo:") and "echo100" in r and "echo64k" in r:
            # time per request ~ a + b * size, fitted through the two calibrated echo sizes
            t1, t2 = 1 / r["echo100"], 1 / r["echo64k"]
            b = max((t2 - t1) / (65536 - 100), 1e-12)
            a = max(t1 - b * 100, 1e-9)
            return 1 / (a + b * echo_size_of(wl))
        return None

    def rounds_of(self, wl: str) -> int:
        """Interleaved rounds of a throughput workload (smoke: several only for the fast-path guard's)."""
        if self.mode == "smoke":
            return self.cfg["guard_rounds"] if wl in GUARD_WORKLOADS else 1
        return self.cfg["rounds"]

    def order(self, r: int, specs: list | None = None) -> list:
        specs = self.live if specs is None else specs
        if not specs:
            return []
        k = r % len(specs)
        return specs[k:] + specs[:k]

    # --- phases
    def run(self) -> None:
        if self.mode != "smoke":
            self.phase_calibrate()
        elif any(s.custom for s in self.live):
            for spec in [s for s in self.live if s.custom]:
                self._calibrate_one(spec, [])
        self.phase_throughput()
        if "latency" not in self.skip:
            self.phase_latency()
        if "scaling" not in self.skip:
            self.phase_echo_sizes()
            self.phase_rss_counts()
        if "parallel" not in self.skip and self.workloads:
            self.phase_parallel()
        if SLOW not in self.skip:
            self.phase_slow()
        for name, values in self._startups.items():
            self.out["startup_ms"][name] = _stats(values)

    def _calibrate_one(self, spec: Spec, workloads: list) -> None:
        try:
            self.rates[spec.name] = calibrate(spec, workloads, self.cfg["burst"], self.timeout(10))
        except (Failure, OSError) as exc:
            self.fail(spec, "calibration", exc)
            spec.available = False
            self.live = [s for s in self.live if s.available]

    def phase_calibrate(self) -> None:
        need = [w for w in self.workloads]
        for wl in ("echo100", "echo64k"):
            if wl not in need and "scaling" not in self.skip:
                need.append(wl)
        for spec in list(self.live):
            log(f"calibrating {spec.name}")
            self._calibrate_one(spec, need)
            if spec.name in self.rates:
                rates = self.rates[spec.name]
                log("  " + ", ".join(f"{w} ~{rates[w]:,.0f}/s" for w in rates))

    def phase_throughput(self) -> None:
        rounds = max(self.rounds_of(wl) for wl in self.workloads) if self.workloads else 0
        for r in range(rounds):
            for wl in self.workloads:
                if r >= self.rounds_of(wl):
                    continue
                for spec in self.order(r):
                    if not spec.serves(wl) or (spec.name, wl) in self.failed:
                        continue
                    n = self.n_for(spec, wl, self.cfg["seconds"])
                    if n <= 0:
                        continue
                    try:
                        res = pipelined(spec, wl, n, self.timeout(self.cfg["seconds"] * 4))
                    except (Failure, OSError) as exc:
                        self.fail(spec, wl, exc)
                        continue
                    self._startups.setdefault(spec.name, []).append(res.startup_ms)
                    cell = self.out["throughput"].setdefault(wl, {}).setdefault(spec.name, {"runs": []})
                    cell["runs"].append(dataclasses.asdict(res))
                    self.passed += 1
                    log(
                        f"round {r + 1}/{rounds} {wl:<10} {spec.name:<20} {res.rps:>12,.0f} req/s"
                        f"  n={n:,}  cpu {res.cpu_s_per_m or 0:,.2f} s/M  rss {res.rss_mib:.1f} MiB"
                        + (f"  reordered {res.reordered}" if res.reordered else "")
                    )
        for per in self.out["throughput"].values():
            for cell in per.values():
                runs = cell["runs"]
                cell["rps"] = _stats([x["rps"] for x in runs])
                cell["cpu_s_per_m"] = _stats([x["cpu_s_per_m"] for x in runs])
                cell["rss_mib"] = _stats([x["rss_mib"] for x in runs])
                cell["n"] = runs[-1]["n"]
                cell["reordered"] = max(x["reordered"] for x in runs)

    def phase_latency(self) -> None:
        rounds = max(1, min(self.cfg["rounds"], self.cfg["lat_rounds"]))
        per: dict = {}
        for r in range(rounds):
            for spec in self.order(r):
                if (spec.name, "latency") in self.failed:
                    continue
                try:
                    res = pingpong(spec, self.cfg["lat"], self.cfg["lat_budget"], self.timeout(5))
                except (Failure, OSError) as exc:
                    self.fail(spec, "latency", exc)
                    continue
                per.setdefault(spec.name, []).append(res)
                self.passed += 1
                self._startups.setdefault(spec.name, []).append(res["startup_ms"])
                log(
                    f"latency {r + 1}/{rounds} {spec.name:<20} p50 {res['p50_us']:8.1f} us  p99 {res['p99_us']:8.1f} us"
                )
        for name, runs in per.items():
            self.out["latency"][name] = {
                "p50_us": _stats([x["p50_us"] for x in runs]),
                "p99_us": _stats([x["p99_us"] for x in runs]),
                "samples": sum(x["samples"] for x in runs),
                "rss_mib": _stats([x["rss_mib"] for x in runs]),
            }

    def _scale_specs(self) -> list:
        names = self.cfg["scale_servers"]
        if names is None or self.args.servers or self.args.server:
            return [s for s in self.live if s.name != "compiled-unbuffered"]
        return [s for s in self.live if s.name in names]

    def phase_echo_sizes(self) -> None:
        specs = self._scale_specs()
        for r in range(self.cfg["scale_rounds"]):
            for size in self.cfg["sizes"]:
                wl = f"echo:{size}"
                for spec in self.order(r, specs):
                    if not spec.serves(wl) or (spec.name, wl) in self.failed:
                        continue
                    n = self.n_for(spec, wl, self.cfg["scale_seconds"])
                    if n <= 0:
                        continue
                    try:
                        res = pipelined(spec, wl, n, self.timeout(self.cfg["scale_seconds"] * 4))
                    except (Failure, OSError) as exc:
                        self.fail(spec, wl, exc)
                        continue
                    mbs = n * size / res.seconds / 1e6
                    cell = self.out["echo_scaling"].setdefault(spec.name, {}).setdefault(str(size), {"runs": []})
                    cell["runs"].append({"n": n, "mb_s": mbs, "rps": res.rps, "rss_mib": res.rss_mib})
                    self.passed += 1
                    log(
                        f"echo {fmt_size(size):>8} {spec.name:<20} {mbs:10.1f} MB/s  n={n:,}  rss {res.rss_mib:.1f} MiB"
                    )
        for per in self.out["echo_scaling"].values():
            for cell in per.values():
                cell["mb_s"] = _stats([x["mb_s"] for x in cell["runs"]])
                cell["rss_mib"] = _stats([x["rss_mib"] for x in cell["runs"]])

    def phase_rss_counts(self) -> None:
        for spec in self._scale_specs():
            if not spec.serves("ping"):
                continue
            row = self.out["rss_vs_requests"].setdefault(spec.name, {})
            for count in self.cfg["rss_counts"]:
                rate = self.rate(spec, "ping") or 0
                est = count / rate if rate else 0
                if self.mode != "smoke" and est > self.cfg["rss_cap"]:
                    row[str(count)] = {"skipped": f"would take ~{est:.0f} s"}
                    continue
                try:
                    res = pipelined(spec, "ping", count, self.timeout(est))
                except (Failure, OSError) as exc:
                    if spec.group in ("peer", "custom") and str(exc).startswith("timed out"):
                        row[str(count)] = {"skipped": f"timed out after {self.timeout(est):.0f} s"}
                        log(f"rss  {count:>9,} pings {spec.name:<20} timed out (not counted as a failure for a peer)")
                        continue
                    self.fail(spec, f"ping x{count}", exc)
                    continue
                row[str(count)] = {"rss_mib": res.rss_mib, "rps": res.rps}
                self.passed += 1
                log(f"rss  {count:>9,} pings {spec.name:<20} {res.rss_mib:7.1f} MiB  ({res.rps:,.0f} req/s)")

    def phase_parallel(self) -> None:
        specs = self._scale_specs()
        wl = "mix" if "mix" in self.workloads else self.workloads[0]
        for r in range(self.cfg["par_rounds"]):
            for k in self.cfg["par"]:
                for spec in self.order(r, specs):
                    if not spec.serves(wl) or (spec.name, f"parallel {k}") in self.failed:
                        continue
                    n = SMOKE_PARALLEL_N if self.mode == "smoke" else self.n_for(spec, wl, self.cfg["seconds"])
                    if n <= 0:
                        continue
                    try:
                        agg = parallel(spec, wl, n, k, self.timeout(self.cfg["seconds"] * 4 * k))
                    except (Failure, OSError) as exc:
                        self.fail(spec, f"parallel {k}", exc)
                        continue
                    cell = self.out["parallel"].setdefault(spec.name, {}).setdefault(str(k), {"runs": []})
                    cell["runs"].append(agg)
                    self.passed += k
                    log(f"parallel x{k} {wl} {spec.name:<20} {agg:12,.0f} req/s aggregate (n={n:,} each)")
        self.out["parallel_workload"] = wl
        for per in self.out["parallel"].values():
            for cell in per.values():
                cell["rps"] = _stats(cell["runs"])

    def phase_slow(self) -> None:
        """Pipelined calls to an async tool that awaits 20 ms, at each size; runs over the limit are cut."""
        specs = [s for s in self.live if s.serves(SLOW)]
        limit = self.cfg["slow_limit"]
        for size in sorted(self.cfg["slow_sizes"]):
            row = self.out["slow"].setdefault(str(size), {})
            for r in range(self.cfg["slow_rounds"]):
                for spec in self.order(r, specs):
                    what = f"slow x{size}"
                    cell = row.get(spec.name)
                    if (spec.name, what) in self.failed or (cell and "runs" not in cell):
                        continue
                    if cell and cell["runs"][0]["wall_ms"] > self.cfg["slow_repeat"] * 1e3:
                        continue  # one long run is enough: it is dominated by the server, not by noise
                    if cell is None:
                        why = self._slow_skip(spec.name, size, limit)
                        if why:
                            row[spec.name] = {"skipped": why}
                            log(f"slow x{size:<7,} {spec.name:<20} skipped: {why}")
                            continue
                    try:
                        res = slow_calls(spec, size, limit)
                    except (Failure, OSError) as exc:
                        self.fail(spec, what, exc)
                        continue
                    if res.limited:
                        row[spec.name] = {"limited_s": limit}
                        log(f"slow x{size:<7,} {spec.name:<20} cut: not done {limit:g} s after initialize")
                        continue
                    row.setdefault(spec.name, {"runs": []})["runs"].append(dataclasses.asdict(res))
                    self.passed += 1
                    log(
                        f"slow x{size:<7,} {spec.name:<20} {res.wall_ms:10,.1f} ms"
                        f"  cpu {res.cpu_us_per_call or 0:,.1f} us/call  rss {res.rss_mib:.1f} MiB"
                        + (f"  reordered {res.reordered}" if res.reordered else "")
                    )
        for per in self.out["slow"].values():
            for cell in per.values():
                if "runs" in cell:
                    runs = cell["runs"]
                    cell["wall_ms"] = _stats([x["wall_ms"] for x in runs])
                    cell["cpu_us_per_call"] = _stats([x["cpu_us_per_call"] for x in runs])
                    cell["rss_mib"] = _stats([x["rss_mib"] for x in runs])
                    cell["reordered"] = max(x["reordered"] for x in runs)

    def _slow_skip(self, name: str, size: int, limit: float) -> str:
        """Why a server's run at ``size`` would not finish within the limit ("" when it may), judged from its
        runs at the smaller sizes: their time per call, times ``size``."""
        smaller = [(int(k), per[name]) for k, per in self.out["slow"].items() if int(k) < size and name in per]
        if not smaller:
            return ""
        n, cell = max(smaller, key=lambda item: item[0])
        if "runs" not in cell:
            return f"the {n:,}-call run was {'cut' if 'limited_s' in cell else 'skipped'}"
        estimate = statistics.median(x["wall_ms"] for x in cell["runs"]) / 1e3 * size / n
        if estimate > limit:
            return f"would take ~{estimate:,.0f} s at the {n:,}-call run's pace (limit {limit:g} s)"
        return ""
