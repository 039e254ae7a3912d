#!/usr/bin/env python3
"""Instructions per request of an engine's ``Engine.feed`` (the compiled one's, or with ``--pure`` the pure
one's), counted by valgrind's callgrind.

    python benchmarks/run.py instructions                                   # this Python's build
    python benchmarks/run.py instructions --python OLD/bin/python --python NEW/bin/python   # before, after, ratio
    python benchmarks/run.py instructions --workloads add,add@2026 --lax     # the same tools in a lax app
    python benchmarks/run.py instructions --workloads add,echo100 --compat fastmcp   # in an app of another API
    python benchmarks/run.py instructions --pure --workloads ping,add,blank  # the pure engine

Counts are exact and repeatable where timings are not: they do not move with the machine's load. Each
workload runs in its own process under ``valgrind --tool=callgrind``, which counts only inside ``Engine.feed``
(``--toggle-collect``; the pure engine's ``feed`` is Python code, which callgrind cannot name, so it is called
from C by ``itertools.starmap``, whose ``starmap_next`` nothing else calls): the catalogue, the handshake and
the check of the answers are left out. The requests are the benchmark's own (stdio/workloads.py), fed in
chunks of ``READ_SIZE`` bytes as ``serve`` reads them, and every answer is compared with the benchmark's
expected bytes. Needs valgrind.

A count is exact for one build, but libc's ``memcpy`` and its kin cost more or less with the alignment of what
they copy, which moves with the heap's layout (a changed docstring anywhere moves it): a few percent either
way from one build to the next, whatever the engine's code. So each figure comes twice: all instructions, and
those outside libc's ``mem*`` functions (the engine's own code and Python's), which only a change of code moves.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1]
#: The workloads measured, by the benchmark's names; ``@2026`` ones are 2026-07-28 requests. ``blank`` (not
#: measured unless named) is empty lines, which have no answer.
WORKLOADS = ("ping", "tools/list", "add", "echo100", "add@2026", "echo100@2026")
BLANK = "blank"
MODERN_VERSIONS = ("2026-07-28", "2025-06-18")
FEED = "__pyx_pw_12shipcode_mcp_9_engine_c_6Engine_*feed"  # the C name of Engine.feed's Python entry
PURE_FEED = "starmap_next"  # the C function that calls the pure Engine.feed (see child)


def lax_copy(app):  # -> Server
    """The app with its tools registered again as a lax app's (``strict=False``): typed through pydantic,
    kept on the fast path where its checks judge as pydantic does."""
    from shipcode_mcp import Server

    lax = Server(app.name, version=app.version, protocol_versions=app.protocol_versions, strict=False)
    for tool in app.tools.values():
        lax.tool(tool.name, tool.description)(tool.func)
    for resource in app.resources.values():
        lax.add_resource(resource)
    return lax


#: ``--compat``: the API whose app serves the tools, and the module of shipcode-mcp that serves it.
COMPAT_APIS = {
    "sdk-fastmcp": "shipcode_mcp.compat.fastmcp_sdk1:FastMCP",
    "sdk-mcpserver": "shipcode_mcp.compat.mcpserver:MCPServer",
    "fastmcp": "shipcode_mcp.compat.fastmcp:FastMCP",
}


def compat_copy(app, api: str):  # -> FrameworkServer
    """The app's tools and resources registered by the decorators of ``api`` (``COMPAT_APIS``), as an app
    written for that API registers them: its rules for the answers (``isError``, structured output)."""
    import importlib

    module, name = COMPAT_APIS[api].split(":")
    server = getattr(importlib.import_module(module), name)(app.name)
    for tool in app.tools.values():
        server.tool(name=tool.name, description=tool.description)(tool.func)
    for resource in app.resources.values():
        server.resource(resource.uri, name=resource.name, mime_type=resource.mime_type)(resource.read)
    return server


def child(workload: str, count: int, lax: bool = False, compat: str | None = None, pure: bool = False) -> None:
    """Answer ``count`` requests of one workload through ``Engine.feed``, and check every answer: against the
    benchmark's expected bytes, or for a lax or compat app (whose answers differ) against the pure engine's."""
    sys.path.insert(0, str(BENCHMARKS))
    from itertools import starmap

    if pure:
        from shipcode_mcp._engine_py import Engine
    else:
        from shipcode_mcp._engine_c import Engine

    from shipcode_mcp.defaults import app
    from shipcode_mcp.protocol import READ_SIZE
    from stdio.workloads import INIT_EXPECTED, INIT_REQUEST, INITIALIZED, MODERN, build_expected, build_requests

    if workload.endswith(MODERN):
        app.protocol_versions = MODERN_VERSIONS  # as the benchmark serves it: --protocol-versions
    if lax:
        app = lax_copy(app)
    if compat:
        app = compat_copy(app, compat)
    engine = Engine(app.catalogue())
    # The handshake goes through message(), not feed(), so that only the requests are counted.
    handshake = engine.message(INIT_REQUEST) + engine.message(INITIALIZED)
    assert compat or handshake == INIT_EXPECTED, handshake
    data = b"\n" * count if workload == BLANK else build_requests(workload, count)
    chunks = [(data[at : at + READ_SIZE],) for at in range(0, len(data), READ_SIZE)]
    out = list(starmap(engine.feed, chunks)) if pure else [engine.feed(*chunk) for chunk in chunks]
    if lax or compat:
        from shipcode_mcp._engine_py import Engine as PureEngine

        pure = PureEngine(app.catalogue())
        expected = pure.feed(INIT_REQUEST + INITIALIZED + data)[len(handshake) :]
    else:
        expected = b"" if workload == BLANK else build_expected(workload, count)
    if b"".join(out) != expected:
        sys.exit(f"{workload}: an answer differs from the expected bytes")


def count_instructions(
    python: str, workload: str, count: int, lax: bool = False, compat: str | None = None, pure: bool = False
) -> tuple[int, int]:
    """Instructions executed inside Engine.feed while answering ``count`` requests of ``workload``: all of
    them, and those outside libc's ``mem*`` functions."""
    with tempfile.TemporaryDirectory() as scratch:
        out_file = Path(scratch) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--collect-atstart=no",
            f"--toggle-collect={PURE_FEED if pure else FEED}",
            f"--callgrind-out-file={out_file}",
            python,
            __file__,
            "--child",
            workload,
            "--requests",
            str(count),
            *(["--lax"] if lax else []),
            *(["--compat", compat] if compat else []),
            *(["--pure"] if pure else []),
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        env.pop("SHIPCODE_MCP_NO_EXTENSIONS", None)
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode:
            sys.exit(f"{python} {workload}: exit {done.returncode}\n{done.stderr[-2000:]}")
        by_function = subprocess.run(
            ["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", str(out_file)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    total = memory = 0
    for line in by_function.splitlines():
        found = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if not found:
            continue
        cost, where = int(found.group(1).replace(",", "")), found.group(2)
        if where.startswith("PROGRAM TOTALS"):
            total = cost
        elif "libc.so" in where and re.search(r":_*mem\w*", where):
            memory += cost
    return total, total - memory


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run.py instructions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", help="an interpreter whose build to measure (repeatable)")
    parser.add_argument("--requests", type=int, default=2000, help="requests per workload (default 2000)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated benchmark workloads")
    parser.add_argument(
        "--lax", action="store_true", help="serve the tools as a lax app's (strict=False), typed through pydantic"
    )
    parser.add_argument(
        "--compat",
        choices=COMPAT_APIS,
        help="serve the tools as an app of this API does (its framework's answers); with --python once, the "
        "counts of the native app beside them, and their ratio",
    )
    parser.add_argument(
        "--pure", action="store_true", help="count the pure engine (shipcode_mcp._engine_py) instead of the compiled"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.requests, args.lax, args.compat, args.pure)
        return 0
    if args.compat:
        return compare_compat(args)
    pythons = args.python or [sys.executable]
    heads = [f"`{python}`: all / outside libc mem*" for python in pythons]
    heads += ["ratio: all / outside libc mem*"] if len(pythons) == 2 else []
    engine = "the pure engine's" if args.pure else "the compiled engine's"
    print(f"instructions per request in {engine} Engine.feed ({args.requests} requests each)\n")
    print("| workload | " + " | ".join(heads) + " |")
    print("| --- |" + " ---: |" * len(heads))
    for workload in args.workloads.split(","):
        counts = [count_instructions(python, workload, args.requests, args.lax, pure=args.pure) for python in pythons]
        cells = [f"{total / args.requests:,.0f} / {own / args.requests:,.0f}" for total, own in counts]
        if len(counts) == 2:
            (total_before, own_before), (total_after, own_after) = counts
            cells.append(f"{total_after / total_before:.4f} / {own_after / own_before:.4f}")
        print(f"| {workload} | " + " | ".join(cells) + " |", flush=True)
    return 0


def compare_compat(args: argparse.Namespace) -> int:
    """The same tools in a native app and in an app of ``args.compat``, side by side, and their ratio."""
    if args.python and len(args.python) > 1:
        sys.exit("--compat measures one build: give --python once at most")
    python = (args.python or [sys.executable])[0]
    print(f"instructions per request in Engine.feed ({args.requests} requests each), `{python}`\n")
    print(f"| workload | native: all / outside libc mem* | {args.compat}: all / outside libc mem* | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for workload in args.workloads.split(","):
        native = count_instructions(python, workload, args.requests, args.lax)
        compat = count_instructions(python, workload, args.requests, args.lax, args.compat)
        cells = [f"{total / args.requests:,.0f} / {own / args.requests:,.0f}" for total, own in (native, compat)]
        cells.append(f"{compat[0] / native[0]:.3f} / {compat[1] / native[1]:.3f}")
        print(f"| {workload} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
