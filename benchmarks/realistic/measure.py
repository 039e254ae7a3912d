"""One measured k6 run against a server, with the CPU of everything that shares the machine: the server's
process tree (and its peak RSS), k6 itself (from wait4), Redis and the API service; and the API service's own
load figure, measured with wrk.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import orjson
from httpbench.servers import Watch, cpu_seconds

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "load.js"


def k6(binary: str, port: int, cases: Path, variant: str, vus: int, seconds: float) -> dict:
    """Run load.js; its summary's figures and k6's own CPU seconds. Raises RuntimeError when k6 fails."""
    with tempfile.TemporaryDirectory(prefix="realistic-k6-") as folder:
        summary = Path(folder, "summary.json")
        env = dict(
            os.environ,
            MCP_URL=f"http://127.0.0.1:{port}/mcp",
            CASES=str(cases),
            VARIANT=variant,
            VUS=str(vus),
            DURATION=f"{seconds:g}s",
            SUMMARY=str(summary),
            K6_NO_USAGE_REPORT="true",
        )
        log = Path(folder, "k6.log")
        with log.open("wb") as out:
            process = subprocess.Popen(
                [binary, "run", "--quiet", "--no-color", "--no-usage-report", str(SCRIPT)],
                env=env,
                stdout=out,
                stderr=out,
            )
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
        text = log.read_text(errors="replace")
        if not summary.exists():
            raise RuntimeError(f"k6 exited with {process.returncode} and no summary: {text[-600:]}")
        figures = figures_of(orjson.loads(summary.read_bytes()))
    figures["k6_cpu_s"] = usage.ru_utime + usage.ru_stime
    figures["k6_log"] = [line for line in text.splitlines() if "level=warning" in line][:6]
    return figures


def _trend(metrics: dict, name: str) -> dict:
    values = metrics.get(name, {}).get("values", {})
    return {"p50_ms": values.get("med"), "p95_ms": values.get("p(95)"), "p99_ms": values.get("p(99)")}


def figures_of(summary: dict) -> dict:
    """What a k6 summary says: counts, rates, latency percentiles (ms), and each check's passes and fails."""
    metrics = summary["metrics"]
    seconds = summary["state"]["testRunDurationMs"] / 1000
    requests = metrics.get("http_reqs", {}).get("values", {}).get("count", 0)
    iterations = metrics.get("iterations", {}).get("values", {}).get("count", 0)
    checks = {c["name"]: {"passes": c["passes"], "fails": c["fails"]} for c in summary["root_group"]["checks"]}
    return {
        "seconds": seconds,
        "requests": requests,
        "iterations": iterations,
        "requests_per_s": requests / seconds,
        "iterations_per_s": iterations / seconds,
        "request": _trend(metrics, "http_req_duration"),
        "iteration": _trend(metrics, "iteration_duration"),
        "checks": checks,
        "failed_checks": sum(c["fails"] for c in checks.values()),
        "passed_checks": sum(c["passes"] for c in checks.values()),
    }


def measured_run(
    binary: str, server_pid: int, others: dict, port: int, cases: Path, variant: str, vus: int, seconds: float
) -> dict:
    """A k6 run with the CPU seconds of the server's process tree and of each of ``others`` ({name: pid})."""
    before = {name: cpu_seconds([pid]) for name, pid in others.items()}
    with Watch(server_pid) as watch:
        figures = k6(binary, port, cases, variant, vus, seconds)
    for name, pid in others.items():
        figures[f"{name}_cpu_s"] = cpu_seconds([pid]) - before[name]
    figures["server_cpu_s"] = watch.cpu
    figures["server_peak_rss_mib"] = watch.peak_kib / 1024
    figures["server_cpu_ms_per_request"] = watch.cpu / max(figures["requests"], 1) * 1e3
    figures["server_cpu_ms_per_call"] = watch.cpu / max(figures["iterations"], 1) * 1e3
    return figures


def api_capacity(port: int, api_pid: int, seconds: float) -> dict:
    """The API service alone under wrk (64 connections, one thread): requests/s of a product read and of a
    search, and its CPU seconds per thousand requests."""
    out = {}
    for name, path in (("product", "/products/509"), ("search", "/products?q=steel&category=kitchen&limit=5")):
        before = cpu_seconds([api_pid])
        done = subprocess.run(
            ["wrk", "-t1", "-c64", f"-d{seconds:g}s", f"http://127.0.0.1:{port}{path}"],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
        cpu = cpu_seconds([api_pid]) - before
        found = re.search(r"Requests/sec:\s*([\d.]+)", done.stdout)
        total = re.search(r"(\d+) requests in", done.stdout)
        if done.returncode != 0 or not found or not total:
            raise RuntimeError(f"wrk against the API service failed: {(done.stdout + done.stderr)[-300:]}")
        out[name] = {"requests_per_s": float(found.group(1)), "cpu_ms_per_1k": cpu / int(total.group(1)) * 1e6}
    return out
