"""The servers of the HTTP benchmark: what runs each, their setup, start, readiness and memory.

A *server* is one process (or one command's processes) listening on a loopback port; a *variant* is one way of
asking it (its era, and how its answers are checked). shipcode-mcp, the official SDKs and the Go peers are
measured in both eras; the floor answers whatever it is asked.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import HERE as BENCHMARKS
from common import NODE_DIR, node, pinned, run_quiet

HERE = Path(__file__).resolve().parent
PEERS = BENCHMARKS / "peers"
SHIPCODE = str(Path(sys.executable).with_name("shipcode-mcp"))
#: The app shipcode-mcp serves: the benchmark catalogue written with the public API (tools echo and add among them).
APP = str(BENCHMARKS / "common" / "slow_app.py")
#: Variables the servers run without, whatever the environment says (each server sets what it needs).
CLEARED = (
    "SHIPCODE_MCP_NO_EXTENSIONS",
    "SHIPCODE_MCP_HTTP_ASGI_ONLY",
    "PYTHONUNBUFFERED",
    "PYTHONDEVMODE",
    "PYTHONMALLOC",
)
READY_SECONDS = 30
#: The Go peers: Grafana's MCP server from PyPI (its package ships the Go binary), one version per Go SDK, each
#: installed with ``pip install --target`` into ``.cache/NAME`` (git-ignored): name -> its requirements file.
GO_PEERS = {"mcp-go": "requirements-mcp-go.txt", "go-sdk": "requirements-go-sdk.txt"}
GO_MODULES = {"mcp-go": "github.com/mark3labs/mcp-go", "go-sdk": "github.com/modelcontextprotocol/go-sdk"}
GO_CACHE = HERE / ".cache"
GO_BINARY = Path("mcp_grafana", "bin", "mcp-grafana")
#: The tool categories the Go peers serve: one tool (``user_info``), whose tools/list answer (784 bytes in 2026-07-28)
#: is about as long as shipcode-mcp's for the benchmark's app (746 bytes, three tools).
GO_TOOLS = "user"
#: Two cores, as shipcode-mcp's ``--processes 2``; its Grafana at a loopback port nothing listens on (asked once
#: per ``initialize``); its org given, so no request logs a warning; no usage report.
GO_ENV = {"GOMAXPROCS": "2", "GRAFANA_URL": "http://127.0.0.1:9", "GRAFANA_ORG_ID": "1", "DO_NOT_TRACK": "1"}


@dataclasses.dataclass
class Server:
    name: str
    label: str
    argv: list  # "{port}" is replaced by the port
    env: dict = dataclasses.field(default_factory=dict)
    note: str = ""  # why it cannot run here ("" when it can)
    catalogue: bool = True  # serves the benchmark's tools (echo, add); the Go peers serve only their own
    process: subprocess.Popen | None = None
    port: int = 0
    stderr: object = None

    def environ(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in CLEARED}
        env.update(self.env)
        return env


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    label: str
    server: str
    era: str  # "modern" (2026-07-28), "legacy" (2025, a session for shipcode-mcp, stateless for the SDKs), "fixed"
    check: str  # "exact" (shipcode-mcp's stdio bytes), "meaning" (parsed), "floor" (a fixed result)
    sdk: str = ""  # the official SDK it configures ("" for the others)
    session: bool = False  # the 2025 era opens a session first (initialize, then its Mcp-Session-Id if one is given)
    asked_for: bool = False  # measured only when --variants names it


def shipcode_server(name: str, label: str, shipcode: str, env: dict | None = None, processes: int = 1) -> Server:
    """shipcode-mcp (the command ``shipcode``) serving the benchmark's app over HTTP."""
    more = ["--processes", str(processes)] if processes > 1 else []
    return Server(name, label, [shipcode, APP, "--http", "127.0.0.1:{port}", *more], env or {})


def go_server(name: str, label: str) -> Server:
    """A Go peer: its binary serving Streamable HTTP on the port, GO_TOOLS only, with two cores."""
    binary = str(GO_CACHE / name / GO_BINARY)
    argv = [binary, "-t", "streamable-http", "-address", "127.0.0.1:{port}", "-enabled-tools", GO_TOOLS]
    return Server(name, label, argv + ["-usage-stats", "disabled"], dict(GO_ENV), catalogue=False)


def servers(before: str | None = None) -> list:
    """Every server; with ``before`` (another interpreter), its install's shipcode-mcp too, for a before/after
    measured in the same interleaved rounds."""
    py = sys.executable
    pure = {"SHIPCODE_MCP_NO_EXTENSIONS": "1"}
    listed = [
        shipcode_server("compiled", "shipcode-mcp compiled", SHIPCODE),
        shipcode_server("pure", "shipcode-mcp pure", SHIPCODE, pure),
        shipcode_server("compiled-2p", "shipcode-mcp compiled, 2 processes", SHIPCODE, processes=2),
        shipcode_server(
            "compiled-asgi", "shipcode-mcp compiled, ASGI only", SHIPCODE, {"SHIPCODE_MCP_HTTP_ASGI_ONLY": "1"}
        ),
        Server("floor", "bare ASGI app (floor)", [py, str(HERE / "floor_app.py"), "{port}"]),
        Server("ts-sdk", "TypeScript SDK 2", ["node", str(NODE_DIR / "ts_sdk_http.mjs"), "{port}"]),
        Server("sdk", "Python SDK", [py, str(PEERS / "sdk_http.py"), "{port}"]),
        Server("fastmcp", "FastMCP", [py, str(PEERS / "sdk_http.py"), "--fastmcp", "{port}"]),
        go_server("mcp-go", "Go: mcp-grafana 1.6.3 on mcp-go"),
        go_server("go-sdk", "Go: mcp-grafana 2.1.1 on the Go SDK"),
    ]
    if before:
        shipcode = str(Path(before).with_name("shipcode-mcp"))
        listed += [
            shipcode_server("before", "shipcode-mcp compiled, before", shipcode),
            shipcode_server("before-pure", "shipcode-mcp pure, before", shipcode, pure),
        ]
    return listed


VARIANTS = [
    Variant("compiled", "shipcode-mcp compiled, 2026-07-28", "compiled", "modern", "exact"),
    Variant("compiled-legacy", "shipcode-mcp compiled, 2025 session", "compiled", "legacy", "exact", session=True),
    # --variants names these: shipcode-mcp at 2 processes and the Go peers, each at 2 cores.
    Variant(
        "compiled-2p",
        "shipcode-mcp compiled, 2 processes, 2026-07-28",
        "compiled-2p",
        "modern",
        "exact",
        asked_for=True,
    ),
    Variant(
        "compiled-2p-legacy",
        "shipcode-mcp compiled, 2 processes, 2025 session",
        "compiled-2p",
        "legacy",
        "exact",
        session=True,
        asked_for=True,
    ),
    Variant("compiled-asgi", "shipcode-mcp compiled through ASGI only, 2026-07-28", "compiled-asgi", "modern", "exact"),
    Variant(
        "compiled-asgi-legacy",
        "shipcode-mcp compiled through ASGI only, 2025 session",
        "compiled-asgi",
        "legacy",
        "exact",
        session=True,
    ),
    Variant("pure", "shipcode-mcp pure, 2026-07-28", "pure", "modern", "exact"),
    Variant("pure-legacy", "shipcode-mcp pure, 2025 session", "pure", "legacy", "exact", session=True),
    Variant("floor", "bare ASGI app on uvicorn (floor)", "floor", "fixed", "floor"),
    Variant("ts-sdk", "TypeScript SDK 2.4.0, 2026-07-28 JSON", "ts-sdk", "modern", "meaning", "ts-sdk"),
    Variant("ts-sdk-legacy", "TypeScript SDK 2.4.0, 2025 stateless", "ts-sdk", "legacy", "meaning", "ts-sdk"),
    Variant("sdk", "Python SDK 2.3.0, 2026-07-28 JSON", "sdk", "modern", "meaning", "sdk"),
    Variant("sdk-legacy", "Python SDK 2.3.0, 2025 stateless JSON", "sdk", "legacy", "meaning", "sdk"),
    Variant("fastmcp", "FastMCP 4.2.3, 2026-07-28 stateless JSON", "fastmcp", "modern", "meaning"),
    Variant("fastmcp-legacy", "FastMCP 4.2.3, 2025 stateless JSON", "fastmcp", "legacy", "meaning"),
    # The Go peers serve statelessly: their 2025 era's initialize opens no session (no Mcp-Session-Id).
    Variant("mcp-go", "Go mcp-go 1.1.1 (mcp-grafana 1.6.3), 2026-07-28", "mcp-go", "modern", "meaning", asked_for=True),
    Variant(
        "mcp-go-legacy",
        "Go mcp-go 1.1.1 (mcp-grafana 1.6.3), 2025",
        "mcp-go",
        "legacy",
        "meaning",
        session=True,
        asked_for=True,
    ),
    Variant("go-sdk", "Go SDK 1.8.0 (mcp-grafana 2.1.1), 2026-07-28", "go-sdk", "modern", "meaning", asked_for=True),
    Variant(
        "go-sdk-legacy",
        "Go SDK 1.8.0 (mcp-grafana 2.1.1), 2025",
        "go-sdk",
        "legacy",
        "meaning",
        session=True,
        asked_for=True,
    ),
    # --before: another install's shipcode-mcp, its answers held to this install's stdio bytes.
    Variant("before", "shipcode-mcp compiled before, 2026-07-28", "before", "modern", "exact"),
    Variant("before-legacy", "shipcode-mcp compiled before, 2025 session", "before", "legacy", "exact", session=True),
    Variant("before-pure", "shipcode-mcp pure before, 2026-07-28", "before-pure", "modern", "exact"),
    Variant(
        "before-pure-legacy", "shipcode-mcp pure before, 2025 session", "before-pure", "legacy", "exact", session=True
    ),
]
#: The servers shipcode-mcp runs as (``--before``'s included), by name: the compiled ones first.
SHIPCODE_SERVERS = {"compiled": True, "compiled-2p": True, "before": True, "pure": False, "before-pure": False}


def python_has(module: str) -> bool:
    return run_quiet([sys.executable, "-c", f"import {module}"])[0] == 0


def module_version(dist: str) -> str:
    code, out = run_quiet([sys.executable, "-c", f"from importlib.metadata import version; print(version({dist!r}))"])
    return out if code == 0 else ""


def prepare(chosen: list) -> None:
    """Say for each server whether it can run here (its ``note`` names what is missing)."""
    for server in chosen:
        if server.name in SHIPCODE_SERVERS:
            code, out = run_quiet([server.argv[0], "--version"], env=server.environ())
            engine = re.search(r"engine:\s*(\w+)", out)
            if code != 0:
                server.note = f"shipcode-mcp --version failed: {out[-200:]}"
            elif not python_has("uvicorn"):
                server.note = "uvicorn missing: pip install -e '.[http]'"
            elif SHIPCODE_SERVERS[server.name] and (not engine or engine.group(1) != "compiled"):
                server.note = f"the compiled engine is not live ({out})"
        elif server.name == "floor":
            if not python_has("uvicorn, httptools, uvloop"):
                server.note = "uvicorn, httptools or uvloop missing: pip install -e '.[http]'"
        elif server.name == "ts-sdk":
            server.note = node.install()
            if not server.note:  # run from beside its node_modules, where node's ESM resolution looks
                node.beside_packages(PEERS / "ts_sdk_http.mjs")
        elif server.name in ("sdk", "fastmcp"):
            module = "mcp" if server.name == "sdk" else "fastmcp"
            if not python_has(module):
                server.note = f"{module} not installed: pip install -r benchmarks/requirements.txt"
        elif server.name in GO_PEERS:
            server.note = pinned.target_dir(HERE / GO_PEERS[server.name], GO_CACHE / server.name)
            binary = Path(server.argv[0])
            if not server.note and not binary.is_file():
                server.note = f"the mcp-grafana package installed no binary at {binary}"
            elif not server.note:
                binary.chmod(binary.stat().st_mode | 0o111)


def go_versions(name: str) -> str:
    """The Go peer's version and its Go SDK's, from the binary's build info: "v1.6.3 on github.com/mark3labs/mcp-go
    v1.1.1" ("" when not installed)."""
    try:
        data = (GO_CACHE / name / GO_BINARY).read_bytes()
    except OSError:
        return ""
    own = re.search(rb"\nmod\t[^\t]+\t(v[^\t\n]+)", data)
    sdk = re.search(rb"\ndep\t" + re.escape(GO_MODULES[name].encode()) + rb"\t(v[^\t\n]+)", data)
    if not own or not sdk:
        return ""
    return f"{own.group(1).decode()} on {GO_MODULES[name]} {sdk.group(1).decode()}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(server: Server) -> None:
    """Start a server on a free loopback port and wait until it accepts connections."""
    server.port = free_port()
    argv = [arg.replace("{port}", str(server.port)) for arg in server.argv]
    server.stderr = tempfile.TemporaryFile()
    server.process = subprocess.Popen(
        argv, env=server.environ(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=server.stderr
    )
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}: {stderr_tail(server)}")
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{server.name} did not listen within {READY_SECONDS} s: {stderr_tail(server)}")


def stop(server: Server) -> None:
    if server.process is None or server.process.poll() is not None:
        return
    server.process.terminate()
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


def stderr_tail(server: Server) -> str:
    if server.stderr is None:
        return ""
    server.stderr.seek(0)
    return server.stderr.read()[-400:].decode(errors="replace")


def process_tree(pid: int) -> list:
    """The pid and its descendants."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                todo.extend(int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split())
        except OSError:
            pass
    return pids


def rss_kib(pids: list) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            pass
    return total


def cpu_seconds(pids: list) -> float:
    """User + system CPU seconds of the processes (all threads) so far."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


class Watch:
    """A server's processes during one measurement: the peak of their summed resident memory (sampled every
    10 ms) and the CPU seconds they used."""

    def __init__(self, pid: int) -> None:
        self.pids = process_tree(pid)
        self.peak_kib = rss_kib(self.pids)
        self.cpu = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak_kib = max(self.peak_kib, rss_kib(self.pids))

    def __enter__(self) -> Watch:
        self._cpu_start = cpu_seconds(self.pids)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = cpu_seconds(self.pids) - self._cpu_start
        self._stop.set()
        self._thread.join()
        self.peak_kib = max(self.peak_kib, rss_kib(self.pids))
