"""The servers: the built-in ones, outside commands, and whether each can run here."""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

from common import HERE, node, run_quiet

from .checks import Expect
from .workloads import MODERN, NEEDS, SLOW, TASKS_GET, TASKS_INIT_EXPECTED

STDIO = Path(__file__).resolve().parent
PEERS = HERE / "peers"

#: Variables the built-in servers run without, whatever the environment says.
VARIANT_VARS = (
    "SHIPCODE_MCP_NO_EXTENSIONS",
    "PYTHONUNBUFFERED",
    "PYTHONDEVMODE",
    "PYTHONMALLOC",
    "PYTHONDONTWRITEBYTECODE",
)


@dataclasses.dataclass
class Spec:
    name: str
    argv: list
    check: str  # "exact" (shipcode-mcp's bytes), "semantic" (parsed), "lines" (count only: cat)
    group: str  # "shipcode", "floor", "peer", "custom"
    env: dict = dataclasses.field(default_factory=dict)  # overrides; None removes the variable
    only: tuple = ()  # restrict to these workloads (empty: all)
    label: str = ""
    available: bool = True
    note: str = ""
    custom: bool = False
    engine: str = ""
    expect: Expect = dataclasses.field(default_factory=Expect)
    slow_argv: list | None = None  # the command that also serves the slow workload's `sleep` tool
    init: bytes = b""  # an exact server's initialize answer, when it is not the default catalogue's

    def environ(self) -> dict:
        env = dict(os.environ)
        if not self.custom:
            # PYTHONDONTWRITEBYTECODE too: an installed package has its bytecode cached, and with it set an
            # edited checkout would compile every changed module at each start-up (the calibration writes it).
            for var in VARIANT_VARS:
                env.pop(var, None)
        for key, value in self.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def serves(self, wl: str) -> bool:
        if self.only and wl not in self.only:
            return False
        if wl == SLOW:
            return self.slow_argv is not None
        base = "echo64k" if wl.startswith("echo:") else wl
        return NEEDS[base] <= self.expect.supports


def shipcode_argv() -> list:
    script = Path(sys.executable).with_name("shipcode-mcp")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "shipcode_mcp"]


def _have_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def builtin_specs() -> list:
    py = sys.executable
    ship = shipcode_argv()
    ship_slow = ship + [str(HERE / "common" / "slow_app.py")]
    lowlevel = [py, str(PEERS / "sdk_lowlevel.py")]
    fast = [py, str(PEERS / "fastmcp_server.py")]
    ts = ["node", str(PEERS / "ts_sdk_stdio.mjs")]
    return [
        Spec("compiled", ship, "exact", "shipcode", label="shipcode-mcp compiled", slow_argv=ship_slow),
        Spec(
            "pure",
            ship,
            "exact",
            "shipcode",
            env={"SHIPCODE_MCP_NO_EXTENSIONS": "1"},
            label="shipcode-mcp pure",
            slow_argv=ship_slow,
        ),
        *(
            Spec(
                f"{engine}-2026",
                ship + ["--protocol-versions", "2026-07-28,2025-06-18"],
                "exact",
                "shipcode",
                env=env,
                only=("add", "echo100", "add" + MODERN, "echo100" + MODERN),
                label=f"shipcode-mcp {engine}, 2026-07-28 too",
                expect=Expect(supports=("echo", "add", "read", "2026-07-28")),
            )
            for engine, env in (("compiled", {}), ("pure", {"SHIPCODE_MCP_NO_EXTENSIONS": "1"}))
        ),
        *(
            Spec(
                f"{engine}-tasks",
                ship + [str(HERE / "common" / "tasks_app.py")],
                "exact",
                "shipcode",
                env=env,
                only=("add" + MODERN, TASKS_GET),
                label=f"shipcode-mcp {engine}, add a task tool",
                expect=Expect(supports=("add", "2026-07-28", "tasks")),
                init=TASKS_INIT_EXPECTED,
            )
            for engine, env in (("compiled", {}), ("pure", {"SHIPCODE_MCP_NO_EXTENSIONS": "1"}))
        ),
        Spec(
            "compiled-unbuffered",
            ship,
            "exact",
            "shipcode",
            env={"PYTHONUNBUFFERED": "1"},
            only=("ping", "mix"),
            label="compiled, PYTHONUNBUFFERED=1",
        ),
        Spec("naive", [py, str(STDIO / "naive_loop.py")], "exact", "floor", label="naive loop, flush per line"),
        Spec(
            "naive-batch",
            [py, str(STDIO / "naive_loop.py"), "--batch"],
            "exact",
            "floor",
            label="naive loop, chunked I/O",
        ),
        Spec("cat", ["cat"], "lines", "floor", label="cat (pipe floor)"),
        Spec(
            "sdk-lowlevel",
            lowlevel,
            "semantic",
            "peer",
            label="Python SDK low-level",
            slow_argv=lowlevel + ["--slow"],
        ),
        Spec(
            "sdk-fastmcp",
            fast,
            "semantic",
            "peer",
            label="Python SDK FastMCP/MCPServer",
            slow_argv=fast + ["--slow"],
        ),
        Spec(
            "fastmcp",
            fast + ["--standalone"],
            "semantic",
            "peer",
            label="fastmcp (standalone)",
            slow_argv=fast + ["--standalone", "--slow"],
        ),
        Spec("ts-sdk", ts, "semantic", "peer", label="TypeScript SDK Server", slow_argv=ts + ["--slow"]),
        Spec(
            "ts-sdk-mcpserver",
            ts + ["--mcpserver"],
            "semantic",
            "peer",
            label="TypeScript SDK McpServer",
            slow_argv=ts + ["--mcpserver", "--slow"],
        ),
    ]


QUICK_SERVERS = [
    "compiled",
    "compiled-2026",
    "pure-2026",
    "compiled-tasks",
    "pure-tasks",
    "compiled-unbuffered",
    "pure",
    "naive",
    "naive-batch",
    "cat",
    "sdk-lowlevel",
    "sdk-fastmcp",
    "ts-sdk",
]
SMOKE_SERVERS = ["compiled", "pure", "compiled-2026", "pure-2026", "compiled-tasks", "pure-tasks"]


def custom_label(cmd: str, taken: set) -> str:
    words = [w for w in shlex.split(cmd) if not w.startswith("-") and "=" not in w]
    base = Path(words[-1]).name if words else "server"
    label, k = base, 2
    while label in taken:
        label, k = f"{base}#{k}", k + 1
    return label


def resolve_servers(args) -> list:
    specs = {s.name: s for s in builtin_specs()}
    if args.servers:
        names = [n.strip() for n in args.servers.split(",") if n.strip()]
        if names == ["all"]:
            names = list(specs)
        elif names == ["none"]:
            names = []
    elif args.server:
        names = []
    elif args.mode == "smoke":
        names = SMOKE_SERVERS
    elif args.mode == "full" or args.list:
        names = list(specs)
    else:
        names = QUICK_SERVERS
    unknown = [n for n in names if n not in specs]
    if unknown:
        sys.exit(f"unknown server(s) {', '.join(unknown)}; known: {', '.join(specs)}")
    chosen = [specs[n] for n in names]
    labels = list(args.name or [])
    for k, cmd in enumerate(args.server or []):
        label = labels[k] if k < len(labels) else custom_label(cmd, {s.name for s in chosen})
        chosen.append(Spec(label, shlex.split(cmd), "semantic", "custom", label=cmd, custom=True))

    ship_ok = _have_module("shipcode_mcp") or shutil.which("shipcode-mcp")
    node_note = None
    for spec in chosen:
        if spec.group == "shipcode":
            if not ship_ok:
                spec.available, spec.note = False, "shipcode-mcp is not installed (pip install -e .)"
                continue
            code, out = run_quiet(spec.argv + ["--version"], env=spec.environ())
            m = re.search(r"engine:\s*(\w+)", out)
            spec.engine = m.group(1) if m else "?"
            if code != 0:
                spec.available, spec.note = False, f"--version failed: {out[-200:]}"
            elif spec.env.get("SHIPCODE_MCP_NO_EXTENSIONS") is None and spec.engine != "compiled":
                spec.note = f"the compiled engine is not live (--version says engine: {spec.engine})"
        elif spec.name in ("sdk-lowlevel", "sdk-fastmcp") and not _have_module("mcp"):
            spec.available, spec.note = (
                False,
                "the mcp package is not installed (pip install -r benchmarks/requirements.txt)",
            )
        elif spec.name == "fastmcp" and not _have_module("fastmcp"):
            spec.available, spec.note = False, "the fastmcp package is not installed"
        elif spec.name.startswith("ts-sdk"):
            if node_note is None:
                node_note = node.install()
            if node_note:
                spec.available, spec.note = False, node_note
        elif spec.name == "cat" and not shutil.which("cat"):
            spec.available, spec.note = False, "no cat on PATH"
    if args.require_compiled:
        for spec in chosen:
            if spec.name == "compiled" and (not spec.available or spec.engine != "compiled"):
                sys.exit(f"--require-compiled: {spec.note or 'compiled engine not available'}")
    return chosen
