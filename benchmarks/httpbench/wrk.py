"""The load generator: ``wrk`` (C, from Debian's packages), driven by ``post.lua``.

Each run keeps N connections open (keep-alive) for a whole number of seconds, POSTs one fixed request on
all of them, and compares every answer with the expected bytes inside wrk itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import log, run_quiet

SCRIPT = Path(__file__).resolve().parent / "post.lua"
#: Seconds wrk waits for an answer before counting a timeout (the slow peers' p99 is well under it).
TIMEOUT = "10s"


def ensure_wrk() -> str:
    """Install wrk with apt-get when it is missing; the reason when it cannot ("" when it is there)."""
    return ensure_debian_package("wrk", "wrk")


def ensure_debian_package(program: str, package: str) -> str:
    """Install Debian's ``package`` with apt-get when ``program`` is missing; the reason when it cannot ("" when
    it is there)."""
    if shutil.which(program):
        return ""
    if not shutil.which("apt-get"):
        return f"{program} is not installed and apt-get is not here: install the package {package} and run again"
    log(f"installing {package} (apt-get install -y {package})")
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    code, out = run_quiet(sudo + ["apt-get", "install", "-y", package], timeout=300)
    if code != 0 or not shutil.which(program):
        code, out = run_quiet(sudo + ["apt-get", "update"], timeout=300)
        code, out = run_quiet(sudo + ["apt-get", "install", "-y", package], timeout=300)
    if code != 0 or not shutil.which(program):
        return f"{package} could not be installed (apt-get install -y {package}, as root): " + out[-300:]
    return ""


def version() -> str:
    code, out = run_quiet(["wrk", "--version"])
    return out.split()[1] if out.startswith("wrk ") else ""


def run(port: int, request_spec: bytes, expected: bytes, connections: int, seconds: int) -> dict:
    """One wrk run against 127.0.0.1:port/mcp: requests, rate, latency percentiles, errors, wrong answers."""
    with tempfile.TemporaryDirectory(prefix="http-bench-") as folder:
        spec, want = Path(folder, "request"), Path(folder, "expected")
        spec.write_bytes(request_spec)
        want.write_bytes(expected)
        argv = [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds}s",
            f"--timeout={TIMEOUT}",
            "-s",
            str(SCRIPT),
            f"http://127.0.0.1:{port}/mcp",
            "--",
            str(spec),
            str(want),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({done.returncode}): {(done.stdout + done.stderr)[-400:]}")
    out = json.loads(lines[-1])
    out["rps"] = out["requests"] / (out["duration_us"] / 1e6)
    out["failed"] = sum(out["errors"].values()) + out["wrong_status"] + out["wrong_body"]
    return out
