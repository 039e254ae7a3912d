"""What every benchmark shares: paths, the progress log on stderr, quiet subprocess calls; the machine and versions
(``machine``), number formats (``fmt``), the chart's bars (``chart``), the one Node project (``node``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # benchmarks/
ROOT = HERE.parent
NODE_DIR = HERE / ".node"
RESULTS = HERE / "results"
PROTOCOL = "2025-06-18"
T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def run_quiet(argv, env=None, timeout=60, cwd=None) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, str(exc)
