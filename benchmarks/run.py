#!/usr/bin/env python3
"""Every benchmark of shipcode-mcp, one entry point: stdio (the default), http, realistic, instructions,
compat, bus.

    python benchmarks/run.py --quick              # stdio: every default server; prints the report
    python benchmarks/run.py --quick --save       # ... and writes the committed benchmarks/results/latest.*
    python benchmarks/run.py --full               # more rounds, longer runs, every optional peer
    python benchmarks/run.py --smoke              # CI-sized check of shipcode-mcp's engines, exits 1 on a mismatch
    python benchmarks/run.py --server "node their-server.js" --servers compiled
    python benchmarks/run.py http [--quick] [--check-targets] [--save]            # Streamable HTTP, loaded by wrk
    python benchmarks/run.py realistic [--smoke] [--servers shipcode,fastmcp,sdk,node] [--save]   # Redis, API, k6
    python benchmarks/run.py realistic-profile [--variants legacy] [--http-clients httpx,aiohttp]  # where the time goes
    python benchmarks/run.py realistic-clients     # the tools' client libraries alone: CPU per call of each choice
    python benchmarks/run.py instructions [--python OLD/bin/python --python NEW/bin/python]      # callgrind counts
    python benchmarks/run.py compat [--quick] [--check-targets]       # apps of other frameworks: theirs vs ours
    python benchmarks/run.py bus [--count 1000] [--processes] [--engine pure]  # the bus: publish to listener, ms

Every figure is taken over real pipes or sockets from a real child process, and every response of every run is
checked. Progress goes to stderr, the report to stdout. The code: ``common/`` (what every benchmark shares),
``stdio/``, ``httpbench/``, ``realistic/``, and ``peers/`` (the other servers measured); benchmarks/README.md says
what each figure means and how long each mode takes.

The stdio benchmark needs only the standard library and orjson; matplotlib draws the charts when it is installed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
#: The realistic workload's commands -> their module in realistic/.
REALISTIC = {"realistic": "cli", "realistic-profile": "timesplit", "realistic-clients": "clientbench"}


def main(argv: list[str]) -> int:
    """Run the benchmark that ``argv``'s first word names (stdio when it names none) with the rest."""
    which = argv[0] if argv and argv[0] in ("http", "instructions", "compat", "bus", *REALISTIC) else "stdio"
    rest = argv[1:] if which != "stdio" else argv
    if which == "http":
        from httpbench.cli import main as run
    elif which in REALISTIC:
        sys.path.insert(0, os.path.join(HERE, "realistic"))  # its modules import each other by their bare names
        from importlib import import_module

        run = import_module(REALISTIC[which]).main
    elif which == "instructions":
        from stdio.instructions import main as run
    elif which == "compat":
        from compatbench.cli import main as run
    elif which == "bus":
        from busbench.cli import main as run
    else:
        from stdio.cli import main as run
    return run(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
