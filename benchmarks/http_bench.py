"""shipcode-mcp over Streamable HTTP, side by side with a bare ASGI floor and the official SDKs.

    python benchmarks/http_bench.py [--quick] [--check-targets] [--save]

wrk (from Debian's packages; installed with apt-get when missing) loads every server with one POSTed
``tools/call`` at 1 and 64 keep-alive connections, in interleaved rounds, and checks every answer. The driver
is the package ``httpbench/``; what it measures is documented in benchmarks/README.md.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from httpbench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
