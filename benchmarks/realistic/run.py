"""The realistic workload: MCP servers whose tools wait on Redis and a product-catalogue HTTP API, loaded by k6.

    python benchmarks/realistic/run.py [--smoke] [--servers shipcode,fastmcp,sdk,node] [--save]

Redis (Debian's redis-server) and the API service (api_service.py) start from this script; each peer is installed
into its own environment under .cache/ (git-ignored). What it measures is documented in benchmarks/README.md.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

from cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
