#!/usr/bin/env python3
"""Benchmark stdio MCP servers: shipcode-mcp's two engines, the official SDKs, two floors, or any command.

    python benchmarks/run.py --quick              # every default server; prints the report
    python benchmarks/run.py --quick --save       # ... and writes the committed benchmarks/results/latest.*
    python benchmarks/run.py --full               # more rounds, longer runs, every optional peer
    python benchmarks/run.py --smoke              # CI-sized check of shipcode-mcp's engines, exits 1 on a mismatch
    python benchmarks/run.py --server "node their-server.js" --servers compiled

Every figure is taken over real pipes from a real child process, after a real `initialize` handshake and the
`notifications/initialized` notification. Every response of every run is checked: exact bytes for shipcode-mcp
and the naive loop, parsed and compared field by field for everything else. Progress goes to stderr, the
report to stdout. The harness itself lives in benchmarks/harness/; benchmarks/README.md says what each figure
means and how long each mode takes.

Needs only the standard library and orjson; matplotlib draws the chart when it is installed.
"""

import sys

from harness.cli import main

if __name__ == "__main__":
    sys.exit(main())
