#!/usr/bin/env python3
"""Instructions per request of the compiled engine's ``Engine.feed``, counted by valgrind's callgrind.

    python benchmarks/instructions.py                                   # this Python's build
    python benchmarks/instructions.py --python OLD/bin/python --python NEW/bin/python   # before, after, ratio

Counts are exact and repeatable where timings are not: they do not move with the machine's load. Each
workload runs in its own process under ``valgrind --tool=callgrind``, which counts only inside
``Engine.feed`` (``--toggle-collect``): the catalogue, the handshake and the check of the answers are left
out. The requests are the benchmark's own (harness/workloads.py), fed in chunks of ``READ_SIZE`` bytes as
``serve`` reads them, and every answer is compared with the benchmark's expected bytes. Needs valgrind.

A count is exact for one memory layout, but ``memcpy`` costs a little more or less with the alignment of the
buffers it copies, which moves with everything allocated before: each workload is counted with a few sizes of
one block allocated first, and the median is reported (the spread is a percent or two).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The workloads measured, by the benchmark's names; ``@2026`` ones are 2026-07-28 requests.
WORKLOADS = ("ping", "tools/list", "add", "echo100", "add@2026", "echo100@2026")
MODERN_VERSIONS = ("2026-07-28", "2025-06-18")
FEED = "__pyx_pw_12shipcode_mcp_9_engine_c_6Engine_*feed"  # the C name of Engine.feed's Python entry


def child(workload: str, count: int, padding: int) -> None:
    """Answer ``count`` requests of one workload through ``Engine.feed``, and check every answer; ``padding``
    bytes are allocated first, to shift the engine's buffers in memory."""
    sys.path.insert(0, str(HERE))
    from harness.workloads import INIT_EXPECTED, INIT_REQUEST, INITIALIZED, MODERN, build_expected, build_requests
    from shipcode_mcp._engine_c import Engine

    from shipcode_mcp.defaults import app
    from shipcode_mcp.protocol import READ_SIZE

    layout = bytes(padding)  # noqa: F841 (kept alive while the engine runs)
    if workload.endswith(MODERN):
        app.protocol_versions = MODERN_VERSIONS  # as the benchmark serves it: --protocol-versions
    engine = Engine(app.catalogue())
    # The handshake goes through message(), not feed(), so that only the requests are counted.
    handshake = engine.message(INIT_REQUEST) + engine.message(INITIALIZED)
    assert handshake == INIT_EXPECTED, handshake
    data = build_requests(workload, count)
    out = [engine.feed(data[at : at + READ_SIZE]) for at in range(0, len(data), READ_SIZE)]
    if b"".join(out) != build_expected(workload, count):
        sys.exit(f"{workload}: an answer differs from the benchmark's expected bytes")


def count_instructions(python: str, workload: str, count: int, layouts: int) -> float:
    """The median over ``layouts`` memory layouts of the instructions executed inside Engine.feed while
    answering ``count`` requests of ``workload``."""
    return statistics.median(count_once(python, workload, count, 4099 * layout) for layout in range(layouts))


def count_once(python: str, workload: str, count: int, padding: int) -> int:
    """Instructions inside Engine.feed in one run, ``padding`` bytes allocated before the engine."""
    with tempfile.TemporaryDirectory() as scratch:
        out_file = Path(scratch) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--collect-atstart=no",
            f"--toggle-collect={FEED}",
            f"--callgrind-out-file={out_file}",
            python,
            __file__,
            "--child",
            workload,
            "--requests",
            str(count),
            "--padding",
            str(padding),
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        env.pop("SHIPCODE_MCP_NO_EXTENSIONS", None)
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode:
            sys.exit(f"{python} {workload}: exit {done.returncode}\n{done.stderr[-2000:]}")
        totals = [line for line in out_file.read_text().splitlines() if line.startswith(("totals:", "summary:"))]
        total = int(totals[0].split()[1])
        print(f"{workload} {python} +{padding}: {total / count:,.0f}", file=sys.stderr, flush=True)
        return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", help="an interpreter whose build to measure (repeatable)")
    parser.add_argument("--requests", type=int, default=2000, help="requests per workload (default 2000)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated benchmark workloads")
    parser.add_argument("--layouts", type=int, default=5, help="memory layouts per count, median kept (default 5)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--padding", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.requests, args.padding)
        return
    pythons = args.python or [sys.executable]
    heads = [f"`{python}`" for python in pythons] + (["ratio"] if len(pythons) == 2 else [])
    print(
        f"instructions per request in Engine.feed ({args.requests} requests each, median of {args.layouts} layouts)\n"
    )
    print("| workload | " + " | ".join(heads) + " |")
    print("| --- |" + " ---: |" * len(heads))
    for workload in args.workloads.split(","):
        counts = [
            count_instructions(python, workload, args.requests, args.layouts) / args.requests for python in pythons
        ]
        cells = [f"{value:,.0f}" for value in counts] + ([f"{counts[1] / counts[0]:.4f}"] if len(counts) == 2 else [])
        print(f"| {workload} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
