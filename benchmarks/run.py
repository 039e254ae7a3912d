#!/usr/bin/env python3
"""Benchmark stdio MCP servers: shipcode-mcp's two engines, the official SDKs, two floors, or any command.

    python benchmarks/run.py --quick              # about a minute and a half; writes benchmarks/results/latest.*
    python benchmarks/run.py --full               # more rounds, longer runs, every optional peer
    python benchmarks/run.py --smoke              # CI-sized check of shipcode-mcp's engines, exits 1 on a mismatch
    python benchmarks/run.py --server "node their-server.js" --servers compiled

Every figure is taken over real pipes from a real child process, after a real `initialize` handshake and the
`notifications/initialized` notification. Every response of every run is checked: exact bytes for shipcode-mcp
and the naive loop, parsed and compared field by field for everything else. Progress goes to stderr, the
summary table to stdout. See benchmarks/README.md for what each figure means.

Needs only the standard library and orjson; matplotlib draws the chart when it is installed.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import math
import os
import platform
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODE_DIR = HERE / ".node"
RESULTS = HERE / "results"
PROTOCOL = "2025-06-18"
READ_CHUNK = 1 << 18
EXIT_GRACE = 10.0  # seconds a server may take to exit after EOF
WRITE_CHUNK = 1 << 20
T0 = time.perf_counter()

# ----------------------------------------------------------------------------------------------------------
# The catalogue every benchmarked server serves, as shipcode-mcp writes it (exact bytes).

TOOLS_RESULT = (
    b'{"tools":[{"name":"echo","description":"Echo back the given text","inputSchema":{"type":"object",'
    b'"properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},'
    b'{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":'
    b'{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}}]}'
)
READ_RESULT = b'{"contents":[{"uri":"file:///hello.txt","mimeType":"text/plain","text":"Hello, world!"}]}'
INIT_REQUEST = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"shipcode-mcp-benchmark","version":"1.0.0"}}}\n'
)
INIT_EXPECTED = (
    b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},'
    b'"resources":{}},"serverInfo":{"name":"shipcode-mcp","version":"1.0.0"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'

REQ = {
    "ping": b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n',
    "list": b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n',
    "read": b'{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"file:///hello.txt"}}\n',
    "echo": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}\n',
    "add": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%s}}}\n',
}
EXP = {
    "ping": b'{"jsonrpc":"2.0","id":%d,"result":{}}\n',
    "list": b'{"jsonrpc":"2.0","id":%d,"result":' + TOOLS_RESULT + b"}\n",
    "read": b'{"jsonrpc":"2.0","id":%d,"result":' + READ_RESULT + b"}\n",
    "text": b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}\n',
}

# Texts are ASCII letters and digits (no JSON escaping): request i's text starts with i, zero-padded.
_FILL = (b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" * 70000)[: 4 * 1024 * 1024]


def echo_text(i: int, size: int) -> bytes:
    if size <= 10:
        return (b"%010d" % i)[10 - size :]
    return b"%010d" % i + _FILL[: size - 10]


def add_args(i: int) -> tuple[int, bytes, bytes]:
    """(a, b as sent, expected text): integers on even requests, an integer plus 0.25 on odd ones."""
    if i & 1:
        return i, b"0.25", repr(i + 0.25).encode()
    return i, b"3", b"%d" % (i + 3)


# The mix: 40% echo of ~100 B, 30% add, 20% tools/list, 10% resources/read, in a fixed shuffled order.
_MIX_PATTERN = ["echo"] * 40 + ["add"] * 30 + ["list"] * 20 + ["read"] * 10
random.Random(20250618).shuffle(_MIX_PATTERN)

WORKLOADS = OrderedDict(
    [
        ("ping", "ping"),
        ("add", "add"),
        ("echo100", "echo 100 B"),
        ("echo64k", "echo 64 KiB"),
        ("tools/list", "tools/list"),
        ("mix", "mix"),
    ]
)
NEEDS = {  # what a server must serve for a workload to make sense
    "ping": set(),
    "add": {"add"},
    "echo100": {"echo"},
    "echo64k": {"echo"},
    "tools/list": set(),
    "mix": {"echo", "add", "read"},
}


def wl_kinds(wl: str):
    """('single', kind, echo size) or ('mix', None, 100)."""
    if wl == "mix":
        return "mix", None, 100
    if wl.startswith("echo"):
        return "single", "echo", echo_size_of(wl)
    return "single", {"ping": "ping", "add": "add", "tools/list": "list", "read": "read"}[wl], 0


def echo_size_of(wl: str) -> int:
    if wl == "echo100":
        return 100
    if wl == "echo64k":
        return 65536
    return int(wl.split(":", 1)[1])  # "echo:<bytes>" for the size sweep


def kind_at(wl: str, i: int) -> str:
    shape, kind, _ = wl_kinds(wl)
    return _MIX_PATTERN[i % 100] if shape == "mix" else kind


def build_requests(wl: str, n: int, first_id: int = 2) -> bytes:
    shape, kind, size = wl_kinds(wl)
    ids = range(first_id, first_id + n)
    if shape == "single" and kind in ("ping", "list", "read"):
        tpl = REQ[kind]
        return b"".join([tpl % j for j in ids])
    parts = []
    for i, j in enumerate(ids):
        k = kind if shape == "single" else _MIX_PATTERN[i % 100]
        if k == "echo":
            parts.append(REQ["echo"] % (j, echo_text(i, size)))
        elif k == "add":
            a, b, _ = add_args(i)
            parts.append(REQ["add"] % (j, a, b))
        else:
            parts.append(REQ[k] % j)
    return b"".join(parts)


def build_expected(wl: str, n: int, first_id: int = 2) -> bytes:
    """The exact bytes shipcode-mcp answers with, all n responses concatenated."""
    shape, kind, size = wl_kinds(wl)
    ids = range(first_id, first_id + n)
    if shape == "single" and kind in ("ping", "list", "read"):
        tpl = EXP[kind]
        return b"".join([tpl % j for j in ids])
    parts = []
    tpl = EXP["text"]
    for i, j in enumerate(ids):
        k = kind if shape == "single" else _MIX_PATTERN[i % 100]
        if k == "echo":
            parts.append(tpl % (j, echo_text(i, size)))
        elif k == "add":
            parts.append(tpl % (j, add_args(i)[2]))
        else:
            parts.append(EXP[k] % j)
    return b"".join(parts)


def build_semantic(wl: str, n: int, first_id: int = 2) -> list:
    """Per request: (id, kind, expected value) for the field-by-field check of servers that are not byte-exact."""
    _, _, size = wl_kinds(wl)
    out = []
    for i in range(n):
        k = kind_at(wl, i)
        if k == "echo":
            out.append((first_id + i, "echo", echo_text(i, size).decode()))
        elif k == "add":
            a, b, _ = add_args(i)
            out.append((first_id + i, "add", a + float(b)))
        else:
            out.append((first_id + i, k, None))
    return out


class BlobCache:
    """Request and expected-response blobs, keyed by (what, workload, n), bounded in bytes."""

    def __init__(self, limit: int = 2 << 30):
        self.limit = limit
        self.items: OrderedDict = OrderedDict()
        self.size = 0

    def get(self, what: str, wl: str, n: int):
        key = (what, wl, n)
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = {"req": build_requests, "exp": build_expected, "sem": build_semantic}[what](wl, n)
        size = len(value) if isinstance(value, bytes) else 64 * len(value)
        while self.items and self.size + size > self.limit:
            _, old = self.items.popitem(last=False)
            self.size -= len(old) if isinstance(old, bytes) else 64 * len(old)
        self.items[key] = value
        self.size += size
        return value


BLOBS = BlobCache()

# ----------------------------------------------------------------------------------------------------------
# Semantic checking (for servers whose bytes differ from shipcode-mcp's: SDKs, other servers).


def _norm_tools(result):
    out = []
    for tool in result["tools"]:
        schema = tool.get("inputSchema") or {}
        props = {k: (v or {}).get("type") for k, v in (schema.get("properties") or {}).items()}
        out.append((tool["name"], tool.get("description"), props, sorted(schema.get("required") or [])))
    return out


CANON_TOOLS = _norm_tools(orjson.loads(TOOLS_RESULT))
CANON_READ = [("file:///hello.txt", "text/plain", "Hello, world!")]


def _norm_read(result):
    return [(c.get("uri"), c.get("mimeType"), c.get("text")) for c in result["contents"]]


def _texts(result):
    return [(c.get("type"), c.get("text")) for c in result["content"]], bool(result.get("isError"))


class Expect:
    """What a server's answers must mean. Built-in peers serve the standard catalogue; an outside server's
    tools/list and resources/read answers are taken from the probe (so they only have to stay consistent)."""

    def __init__(self, tools=None, read=None, supports=("echo", "add", "read")):
        self.tools = CANON_TOOLS if tools is None else tools
        self.read = CANON_READ if read is None else read
        self.supports = set(supports)

    def check(self, kind: str, value, result) -> str | None:
        """None when `result` is right, else a short reason."""
        try:
            if not isinstance(result, dict):
                return "result is not an object"
            if kind == "ping":
                return None
            if kind == "echo":
                got = _texts(result)
                return None if got == ([("text", value)], False) else f"echo gave {str(got)[:120]}"
            if kind == "add":
                (items, is_error) = _texts(result)
                if is_error or len(items) != 1 or items[0][0] != "text":
                    return f"add gave {str((items, is_error))[:120]}"
                got = float(items[0][1])
                return None if math.isclose(got, value, rel_tol=1e-12) else f"add gave {items[0][1]!r}, want {value!r}"
            if kind == "list":
                return None if _norm_tools(result) == self.tools else "tools/list differs"
            if kind == "read":
                return None if _norm_read(result) == self.read else "resources/read differs"
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return f"malformed {kind} result ({exc!r})"
        return f"unknown kind {kind}"


def check_init(line: bytes, spec) -> str | None:
    if spec.check == "lines":
        return None
    if spec.check == "exact":
        return None if line == INIT_EXPECTED else f"initialize answer differs: {line[:300]!r}"
    try:
        msg = orjson.loads(line)
        result = msg["result"]
        if msg.get("id") != 1:
            return f"initialize answer has id {msg.get('id')!r}"
        if spec.custom:
            return None if isinstance(result.get("protocolVersion"), str) else "no protocolVersion"
        caps = result["capabilities"]
        if result["protocolVersion"] != PROTOCOL or "tools" not in caps or "resources" not in caps:
            return f"initialize answer: {line[:300]!r}"
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return f"initialize answer is not a result: {line[:300]!r}"
    return None


def check_semantic(lines: list, expectations: list, expect: Expect) -> tuple[list, int]:
    """(problems, reordered) for parsed responses vs (id, kind, value) expectations. Responses may come in any
    order (JSON-RPC allows it; some SDK servers answer concurrently): the count of out-of-place ones is returned."""
    problems = []
    pending = {e[0]: e for e in expectations}
    reordered = 0
    for pos, msg in enumerate(lines):
        rid = msg.get("id") if isinstance(msg, dict) else None
        exp = pending.pop(rid, None) if isinstance(rid, int) else None
        if exp is None:
            problems.append(f"response {pos + 1}: unexpected id {rid!r}: {orjson.dumps(msg)[:200]!r}")
            if len(problems) > 5:
                break
            continue
        if pos < len(expectations) and expectations[pos][0] != rid:
            reordered += 1
        if "result" not in msg:
            problems.append(f"id {rid}: error {orjson.dumps(msg.get('error'))[:200]!r}")
        else:
            why = expect.check(exp[1], exp[2], msg["result"])
            if why:
                problems.append(f"id {rid}: {why}")
        if len(problems) > 5:
            break
    if pending and len(problems) <= 5:
        problems.append(f"{len(pending)} requests got no answer (first id {min(pending)})")
    return problems, reordered


# ----------------------------------------------------------------------------------------------------------
# Servers.


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

    def environ(self) -> dict:
        env = dict(os.environ)
        if not self.custom:
            for var in ("SHIPCODE_MCP_NO_EXTENSIONS", "PYTHONUNBUFFERED", "PYTHONDEVMODE", "PYTHONMALLOC"):
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
    return [
        Spec("compiled", ship, "exact", "shipcode", label="shipcode-mcp compiled"),
        Spec("pure", ship, "exact", "shipcode", env={"SHIPCODE_MCP_NO_EXTENSIONS": "1"}, label="shipcode-mcp pure"),
        Spec(
            "compiled-unbuffered",
            ship,
            "exact",
            "shipcode",
            env={"PYTHONUNBUFFERED": "1"},
            only=("ping", "mix"),
            label="compiled, PYTHONUNBUFFERED=1",
        ),
        Spec("naive", [py, str(HERE / "naive_loop.py")], "exact", "floor", label="naive loop, flush per line"),
        Spec(
            "naive-batch",
            [py, str(HERE / "naive_loop.py"), "--batch"],
            "exact",
            "floor",
            label="naive loop, chunked I/O",
        ),
        Spec("cat", ["cat"], "lines", "floor", label="cat (pipe floor)"),
        Spec(
            "sdk-lowlevel", [py, str(HERE / "peer_sdk_lowlevel.py")], "semantic", "peer", label="Python SDK low-level"
        ),
        Spec(
            "sdk-fastmcp", [py, str(HERE / "peer_fastmcp.py")], "semantic", "peer", label="Python SDK FastMCP/MCPServer"
        ),
        Spec(
            "fastmcp",
            [py, str(HERE / "peer_fastmcp.py"), "--standalone"],
            "semantic",
            "peer",
            label="fastmcp (standalone)",
        ),
        Spec("ts-sdk", ["node", str(HERE / "peer_ts_sdk.mjs")], "semantic", "peer", label="TypeScript SDK Server"),
        Spec(
            "ts-sdk-mcpserver",
            ["node", str(HERE / "peer_ts_sdk.mjs"), "--mcpserver"],
            "semantic",
            "peer",
            label="TypeScript SDK McpServer",
        ),
    ]


QUICK_SERVERS = [
    "compiled",
    "compiled-unbuffered",
    "pure",
    "naive",
    "naive-batch",
    "cat",
    "sdk-lowlevel",
    "sdk-fastmcp",
    "ts-sdk",
]
SMOKE_SERVERS = ["compiled", "pure"]


def custom_label(cmd: str, taken: set) -> str:
    words = [w for w in shlex.split(cmd) if not w.startswith("-") and "=" not in w]
    base = Path(words[-1]).name if words else "server"
    label, k = base, 2
    while label in taken:
        label, k = f"{base}#{k}", k + 1
    return label


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def run_quiet(argv, env=None, timeout=60, cwd=None) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, str(exc)


def ts_sdk_version() -> str:
    try:
        meta = json.loads((NODE_DIR / "node_modules/@modelcontextprotocol/sdk/package.json").read_text())
        return meta["version"]
    except (OSError, ValueError, KeyError):
        return ""


def ensure_node_peers() -> str | None:
    """Install the pinned TypeScript SDK into benchmarks/.node/ once. Returns a reason when it cannot."""
    if not shutil.which("node") or not shutil.which("npm"):
        return "node and npm not found: TypeScript SDK peer skipped"
    wanted = json.loads((HERE / "package.json").read_text())["dependencies"]["@modelcontextprotocol/sdk"]
    if ts_sdk_version() == wanted:
        return None
    log(f"installing @modelcontextprotocol/sdk {wanted} into {NODE_DIR.relative_to(ROOT)} (npm)")
    NODE_DIR.mkdir(exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        if (HERE / name).exists():
            shutil.copyfile(HERE / name, NODE_DIR / name)
    cmd = ["npm", "ci" if (NODE_DIR / "package-lock.json").exists() else "install", "--no-audit", "--no-fund"]
    code, out = run_quiet(cmd, cwd=NODE_DIR, timeout=600)
    if code != 0 or ts_sdk_version() != wanted:
        return "npm could not install the TypeScript SDK: " + out[-300:]
    return None


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
            elif spec.name != "pure" and spec.engine != "compiled":
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
                node_note = ensure_node_peers() or ""
            if node_note:
                spec.available, spec.note = False, node_note
        elif spec.name == "cat" and not shutil.which("cat"):
            spec.available, spec.note = False, "no cat on PATH"
    if args.require_compiled:
        for spec in chosen:
            if spec.name == "compiled" and (not spec.available or spec.engine != "compiled"):
                sys.exit(f"--require-compiled: {spec.note or 'compiled engine not available'}")
    return chosen


# ----------------------------------------------------------------------------------------------------------
# One child process over pipes.


def _proc_cpu(pid: int) -> float | None:
    """User+system CPU seconds the process has used so far (Linux /proc).

    /proc/<pid>/stat counts every thread, exited ones too, but in 10 ms ticks (truncated); the threads' own
    schedstat is exact to the nanosecond but misses threads that already exited. Both are lower bounds: take
    the larger."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        ticks = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None
    exact = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                exact += int(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        exact = 0
    return max(ticks, exact / 1e9)


def _proc_hwm_mib(pid: int) -> float | None:
    """Peak resident set of the process's current image (VmHWM), in MiB.

    Not ru_maxrss: Linux carries the high-water mark of the image a process had before exec() into ru_maxrss,
    and a child forked (or vforked) from this driver starts with the driver's own pages, blobs included."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return None


class Failure(Exception):
    pass


class Session:
    """A child server with raw pipe fds, a watchdog, and exact accounting of its CPU and peak RSS."""

    def __init__(self, spec: Spec, timeout: float):
        self.spec = spec
        self.errfile = tempfile.TemporaryFile()
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(
            spec.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errfile,
            env=spec.environ(),
            bufsize=0,
            close_fds=True,
        )
        self.pid = self.proc.pid
        self.fin = self.proc.stdin.fileno()
        self.fout = self.proc.stdout.fileno()
        self.pending = b""
        self.lock = threading.Lock()
        self.reaped = False
        self.killed = False
        self.exit_killed = False
        self.rusage = None
        self.exit_code = None
        self.watchdog = threading.Timer(timeout, self._timeout)
        self.watchdog.daemon = True
        self.watchdog.start()
        self.t_init = None
        self.cpu_at_init = None
        self.hwm_mib = None

    def _timeout(self, at_exit: bool = False) -> None:
        with self.lock:
            if not self.reaped:
                self.killed = True
                self.exit_killed = at_exit
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass

    def stderr_tail(self) -> str:
        try:
            self.errfile.seek(0)
            text = self.errfile.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return "\n".join(text.strip().splitlines()[-12:])

    def write(self, data: bytes) -> None:
        mv = memoryview(data)
        off = 0
        while off < len(mv):
            off += os.write(self.fin, mv[off : off + WRITE_CHUNK])

    def read_line(self) -> bytes:
        buf = self.pending
        while True:
            nl = buf.find(b"\n")
            if nl >= 0:
                self.pending = buf[nl + 1 :]
                return buf[: nl + 1]
            chunk = os.read(self.fout, READ_CHUNK)
            if not chunk:
                raise Failure(self._eof_reason("before a full line"))
            buf += chunk

    def _eof_reason(self, where: str) -> str:
        if self.killed:
            return f"timed out {where}"
        return f"server closed its stdout {where}"

    def initialize(self) -> None:
        self.write(INIT_REQUEST)
        line = self.read_line()
        self.t_init = time.perf_counter()
        self.cpu_at_init = _proc_cpu(self.pid)
        why = check_init(line, self.spec)
        if why:
            raise Failure(why)
        self.init_line = line

    def finish(self) -> bytes:
        """Close stdin (EOF), read whatever else the server writes, reap it. Returns the extra output.

        A server gets EXIT_GRACE seconds to exit after EOF; then it is killed and `exit_killed` is set."""
        self.watchdog.cancel()
        self.watchdog = threading.Timer(EXIT_GRACE, self._timeout, kwargs={"at_exit": True})
        self.watchdog.daemon = True
        self.watchdog.start()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        extra = [self.pending]
        self.pending = b""
        while True:
            try:
                chunk = os.read(self.fout, READ_CHUNK)
            except OSError:
                break
            if not chunk:
                break
            extra.append(chunk)
        self.reap()
        return b"".join(extra)

    def reap(self) -> None:
        with self.lock:
            if self.reaped:
                return
        _, status, rusage = os.wait4(self.pid, 0)
        with self.lock:
            self.reaped = True
        self.watchdog.cancel()
        self.rusage = rusage
        self.exit_code = os.waitstatus_to_exitcode(status)
        self.proc.returncode = self.exit_code
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass

    def abort(self) -> None:
        with self.lock:
            if not self.reaped:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.reap()

    @property
    def startup_ms(self) -> float:
        return (self.t_init - self.t_spawn) * 1e3

    def sample_rss(self) -> None:
        """Take the peak RSS now, while the process still runs (call after its last answer)."""
        self.hwm_mib = _proc_hwm_mib(self.pid)

    @property
    def max_rss_mib(self) -> float:
        if self.hwm_mib is not None:
            return self.hwm_mib
        # Without /proc: the exit rusage, which can include pages inherited from this driver (see above).
        kib = self.rusage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)
        return kib / 1024

    def cpu_since_init(self) -> float:
        total = self.rusage.ru_utime + self.rusage.ru_stime
        return total - (self.cpu_at_init or 0.0)


def _writer(session: Session, data: bytes, errors: list, start: threading.Event | None = None) -> None:
    if start is not None:
        start.wait()
    try:
        session.write(data)
    except OSError as exc:
        errors.append(f"writing requests failed: {exc!r}")


def _locate(expected: bytes, off: int, got: bytes) -> str:
    """Describe the first difference between `got` (received at byte offset `off`) and `expected`."""
    j = 0
    limit = min(len(got), len(expected) - off)
    while j < limit and got[j] == expected[off + j]:
        j += 1
    pos = off + j
    line_no = expected.count(b"\n", 0, pos) + 1
    start = expected.rfind(b"\n", 0, pos) + 1
    end = expected.find(b"\n", pos)
    want = expected[start : end if end >= 0 else len(expected)]
    have = got[max(0, j - (pos - start)) : j + 200].split(b"\n", 1)[0]
    if pos >= len(expected):
        return f"response {line_no}: more output than expected: {got[j : j + 200]!r}"
    return f"response {line_no} differs at byte {pos - start}:\n    want {want[:300]!r}\n    got  {have[:300]!r}"


def _read_exact(s: Session, expected: bytes) -> None:
    total = len(expected)
    off = 0
    data = s.pending
    s.pending = b""
    fd = s.fout
    while True:
        if data:
            if not expected.startswith(data, off):
                raise Failure(_locate(expected, off, data))
            off += len(data)
            if off == total:
                return
        data = os.read(fd, READ_CHUNK)
        if not data:
            nl = b"\n"
            raise Failure(s._eof_reason(f"after {expected.count(nl, 0, off)} of {expected.count(nl)} responses"))


def _read_lines(s: Session, count: int) -> None:
    """Count newlines only (for cat, whose output is its input)."""
    seen = s.pending.count(b"\n")
    s.pending = b""
    fd = s.fout
    while seen < count:
        data = os.read(fd, READ_CHUNK)
        if not data:
            raise Failure(s._eof_reason(f"after {seen} of {count} lines"))
        seen += data.count(b"\n")
    if seen > count:
        raise Failure(f"{seen - count} lines more than expected")


def _read_messages(s: Session, count: int) -> tuple[list, int, float]:
    """Read until `count` responses came: (responses, server-initiated messages, time of the last response).

    While the server runs, only newlines are counted; lines are parsed once enough of them came, so the
    parsing does not compete with the server for CPU. Messages with a `method` (notifications or requests from
    the server) are set aside, and the reading goes on for as many lines as they took."""
    responses: list = []
    others = 0
    chunks = [s.pending]
    s.pending = b""
    seen = chunks[0].count(b"\n")
    fd = s.fout
    loads = orjson.loads
    needed = count
    while True:
        while seen < needed:
            data = os.read(fd, READ_CHUNK)
            if not data:
                raise Failure(s._eof_reason(f"after {len(responses) + seen} of {count} responses"))
            chunks.append(data)
            seen += data.count(b"\n")
        t_last = time.perf_counter()
        buf = b"".join(chunks)
        cut = buf.rfind(b"\n") + 1
        for line in buf[:cut].split(b"\n")[:-1]:
            if not line.strip():
                continue
            try:
                msg = loads(line)
            except orjson.JSONDecodeError:
                raise Failure(f"response {len(responses) + 1} is not JSON: {line[:200]!r}") from None
            if isinstance(msg, dict) and "method" in msg:
                others += 1
            else:
                responses.append(msg)
        chunks = [buf[cut:]]
        seen = 0
        if len(responses) >= count:
            s.pending = chunks[0]
            return responses, others, t_last
        needed = count - len(responses)


@dataclasses.dataclass
class RunResult:
    n: int
    seconds: float
    rps: float
    cpu_s_per_m: float | None
    rss_mib: float
    startup_ms: float
    reordered: int = 0
    server_messages: int = 0


def _conclude(s: Session, spec: Spec, wl: str, n: int, responses: list | None) -> int:
    """After the timed part: EOF, leftovers, exit status, and the semantic check. Returns the reordered count."""
    extra = s.finish()
    reordered = 0
    if s.exit_killed:
        if spec.check == "exact":
            raise Failure(f"did not exit within {EXIT_GRACE:.0f} s of EOF")
        note = f"did not always exit within {EXIT_GRACE:.0f} s of EOF (killed)"
        if note not in spec.note:
            spec.note = (spec.note + "; " if spec.note else "") + note
            log(f"note {spec.name}: {note}")
    if spec.check == "exact":
        if extra:
            raise Failure(f"unexpected output after the last response: {extra[:200]!r}")
        if s.exit_code != 0:
            raise Failure(f"exit status {s.exit_code} at EOF; stderr: {s.stderr_tail()}")
    elif spec.check == "semantic":
        lines = [orjson.loads(x) for x in extra.splitlines() if x.strip()]
        stray = [m for m in lines if not (isinstance(m, dict) and "method" in m)]
        if stray:
            raise Failure(f"{len(stray)} responses more than requests: {orjson.dumps(stray[0])[:200]!r}")
        problems, reordered = check_semantic(responses, BLOBS.get("sem", wl, n), spec.expect)
        if problems:
            raise Failure("; ".join(problems))
    return reordered


def pipelined(spec: Spec, wl: str, n: int, timeout: float) -> RunResult:
    """Spawn, initialize, then stream n requests from a writer thread while this thread checks the answers."""
    requests = INITIALIZED + BLOBS.get("req", wl, n)
    expected = BLOBS.get("exp", wl, n) if spec.check == "exact" else None
    s = Session(spec, timeout)
    try:
        s.initialize()
        errors: list = []
        writer = threading.Thread(target=_writer, args=(s, requests, errors), daemon=True)
        t0 = s.t_init
        writer.start()
        responses = None
        others = 0
        if spec.check == "exact":
            _read_exact(s, expected)
        elif spec.check == "lines":
            _read_lines(s, n + 1)  # cat also echoes the notification
        else:
            responses, others, t1 = _read_messages(s, n)
        if spec.check != "semantic":
            t1 = time.perf_counter()
        s.sample_rss()
        writer.join()
        if errors:
            raise Failure(errors[0])
        reordered = _conclude(s, spec, wl, n, responses)
    except BaseException as exc:
        tail = ""
        try:
            s.abort()
            tail = s.stderr_tail()
        except Exception:
            pass
        if isinstance(exc, Exception):
            why = str(exc) if isinstance(exc, Failure) else repr(exc)
            raise Failure(why + (f"\n    stderr: {tail}" if tail else "")) from None
        raise
    seconds = t1 - t0
    cpu = s.cpu_since_init() if s.cpu_at_init is not None else None
    return RunResult(
        n=n,
        seconds=seconds,
        rps=n / seconds,
        cpu_s_per_m=None if cpu is None else cpu / n * 1e6,
        rss_mib=s.max_rss_mib,
        startup_ms=s.startup_ms,
        reordered=reordered,
        server_messages=others,
    )


def pingpong(spec: Spec, samples: int, budget: float, timeout: float) -> dict:
    """One ping, wait for its answer, the next: per-request round-trip times in microseconds."""
    s = Session(spec, timeout)
    times = []
    try:
        s.initialize()
        s.write(INITIALIZED)
        if spec.check == "lines":
            s.read_line()  # cat echoes the notification too
        warm = 20
        deadline = time.perf_counter() + budget
        perf = time.perf_counter_ns
        for i in range(samples + warm):
            rid = 2 + i
            req = REQ["ping"] % rid
            t = perf()
            s.write(req)
            line = s.read_line()
            dt = perf() - t
            if spec.check == "exact":
                if line != EXP["ping"] % rid:
                    raise Failure(f"ping {rid}: got {line[:200]!r}")
            elif spec.check == "semantic":
                msg = orjson.loads(line)
                if msg.get("id") != rid or "result" not in msg:
                    raise Failure(f"ping {rid}: got {line[:200]!r}")
            if i >= warm:
                times.append(dt / 1e3)
                if len(times) >= 200 and time.perf_counter() > deadline:
                    break
        extra = s.finish()
        if spec.check == "exact" and (extra or s.exit_code != 0):
            raise Failure(f"after ping-pong: exit {s.exit_code}, extra output {extra[:200]!r}")
    except BaseException as exc:
        try:
            s.abort()
        except Exception:
            pass
        if isinstance(exc, Exception):
            raise Failure(str(exc) if isinstance(exc, Failure) else repr(exc)) from None
        raise
    times.sort()
    return {
        "samples": len(times),
        "p50_us": times[len(times) // 2],
        "p99_us": times[min(len(times) - 1, int(len(times) * 0.99))],
        "startup_ms": s.startup_ms,
    }


def parallel(spec: Spec, wl: str, n: int, k: int, timeout: float) -> float:
    """k sessions (one process each) fed at the same time; aggregate requests/s over the common window."""
    requests = INITIALIZED + BLOBS.get("req", wl, n)
    expected = BLOBS.get("exp", wl, n) if spec.check == "exact" else None
    sessions = []
    errors: list = []
    try:
        for _ in range(k):
            s = Session(spec, timeout)
            sessions.append(s)
        for s in sessions:
            s.initialize()
        go = threading.Event()
        writers = [threading.Thread(target=_writer, args=(s, requests, errors, go), daemon=True) for s in sessions]
        results: list = [None] * k

        def reader(idx: int, s: Session) -> None:
            try:
                got = None
                if spec.check == "exact":
                    _read_exact(s, expected)
                elif spec.check == "lines":
                    _read_lines(s, n + 1)
                else:
                    got, _, t_last = _read_messages(s, n)
                results[idx] = (time.perf_counter() if got is None else t_last, got)
            except Failure as exc:
                errors.append(str(exc))
            except OSError as exc:
                errors.append(repr(exc))

        readers = [threading.Thread(target=reader, args=(i, s), daemon=True) for i, s in enumerate(sessions)]
        for t in writers + readers:
            t.start()
        t0 = time.perf_counter()
        go.set()
        for t in readers + writers:
            t.join()
        if errors:
            raise Failure(errors[0])
        t1 = max(r[0] for r in results)
        for s, (_, got) in zip(sessions, results, strict=True):
            _conclude(s, spec, wl, n, got)
    except BaseException as exc:
        for s in sessions:
            try:
                s.abort()
            except Exception:
                pass
        if isinstance(exc, Exception):
            raise Failure(str(exc) if isinstance(exc, Failure) else repr(exc)) from None
        raise
    return k * n / (t1 - t0)


def calibrate(spec: Spec, workloads: list, burst_seconds: float, timeout: float) -> dict:
    """One session: probe what an outside server serves, then time growing bursts of each workload in the warm
    process. Returns estimated requests/s per workload (also for the echo size model)."""
    s = Session(spec, timeout)
    rates = {}
    next_id = 2
    try:
        s.initialize()
        s.write(INITIALIZED)
        if spec.check == "lines":
            s.read_line()  # cat echoes the notification too
        if spec.custom:
            next_id = _probe(s, spec)
        for wl in workloads:
            if not spec.serves(wl):
                continue
            n = 20
            while True:
                blob = build_requests(wl, n, next_id)
                t = time.perf_counter()
                errors: list = []
                w = threading.Thread(target=_writer, args=(s, blob, errors), daemon=True)
                w.start()
                if spec.check == "semantic":
                    _read_messages(s, n)
                else:
                    _read_lines(s, n)
                dt = time.perf_counter() - t
                w.join()
                if errors:
                    raise Failure(errors[0])
                next_id += n
                cap = 20_000 if spec.check == "lines" else 100_000  # cat's rate only needs to be "huge"
                if dt >= burst_seconds or n >= cap or (wl == "echo64k" and n * 65536 > 128 << 20):
                    break
                n = int(n * min(8.0, max(2.0, 1.5 * burst_seconds / max(dt, 1e-6))))
            rates[wl] = n / dt
        s.finish()
    except BaseException as exc:
        try:
            s.abort()
        except Exception:
            pass
        if isinstance(exc, Exception):
            why = str(exc) if isinstance(exc, Failure) else repr(exc)
            raise Failure(why + (f"\n    stderr: {s.stderr_tail()}" if s.stderr_tail() else "")) from None
        raise
    return rates


def _probe(s: Session, spec: Spec) -> int:
    """Ask an outside server for its catalogue; decide which workloads apply and what its answers must be."""
    asks = [
        (REQ["list"] % 2, "list"),
        (REQ["echo"] % (3, b"hi"), "echo"),
        (REQ["add"] % (4, 2, b"3"), "add"),
        (REQ["read"] % 5, "read"),
    ]
    s.write(b"".join(a for a, _ in asks))
    got = _read_messages(s, len(asks))[0]
    by_id = {m.get("id"): m for m in got if isinstance(m, dict)}
    supports, tools, read, notes = set(), None, None, []
    try:
        tools = _norm_tools(by_id[2]["result"])
    except (KeyError, TypeError, AttributeError):
        notes.append("tools/list failed")
        tools = []
    names = {t[0] for t in tools}
    if "echo" in names and Expect().check("echo", "hi", (by_id.get(3) or {}).get("result")) is None:
        supports.add("echo")
    if "add" in names and Expect().check("add", 5.0, (by_id.get(4) or {}).get("result")) is None:
        supports.add("add")
    try:
        read = _norm_read(by_id[5]["result"])
        supports.add("read")
    except (KeyError, TypeError, AttributeError):
        pass
    spec.expect = Expect(tools=tools, read=read, supports=supports)
    missing = {"echo", "add", "read"} - supports
    if missing:
        spec.note = (spec.note + "; " if spec.note else "") + (
            "does not serve " + ", ".join(sorted(missing)) + " like the benchmark catalogue: those workloads are n/a"
        )
    return 6


# ----------------------------------------------------------------------------------------------------------
# Plan, sizing and the run itself.

MODES = {
    #            rounds  seconds/run  latency samples  echo sizes (bytes)                               rss counts
    "quick": dict(
        rounds=3,
        seconds=0.2,
        burst=0.04,
        lat=2000,
        lat_budget=0.2,
        scale_rounds=1,
        sizes=[10, 1024, 65536, 1 << 20, 4 << 20],
        scale_seconds=0.15,
        lat_rounds=2,
        rss_counts=[1_000, 100_000, 1_000_000],
        rss_cap=8.0,
        par=[1, 2, 4],
        par_rounds=1,
        scale_servers=["compiled", "pure", "naive"],
        n_min=30,
        n_max=1_000_000,
    ),
    "full": dict(
        rounds=5,
        seconds=1.0,
        burst=0.1,
        lat=10000,
        lat_budget=1.0,
        scale_rounds=2,
        sizes=[10, 100, 1024, 10240, 65536, 102400, 1 << 20, 4 << 20],
        scale_seconds=0.5,
        lat_rounds=3,
        rss_counts=[1_000, 10_000, 100_000, 1_000_000],
        rss_cap=60.0,
        par=[1, 2, 4],
        par_rounds=2,
        scale_servers=None,
        n_min=100,
        n_max=5_000_000,
    ),
    "smoke": dict(
        rounds=1,
        seconds=0.0,
        burst=0.0,
        lat=200,
        lat_budget=0.0,
        scale_rounds=1,
        sizes=[10, 65536, 1 << 20],
        scale_seconds=0.0,
        lat_rounds=1,
        rss_counts=[1_000],
        rss_cap=5.0,
        par=[1, 2],
        par_rounds=1,
        scale_servers=None,
        n_min=1,
        n_max=10_000,
    ),
}
SMOKE_N = {"ping": 1500, "add": 700, "echo100": 700, "echo64k": 40, "tools/list": 300, "mix": 1000}
SMOKE_ECHO_N = {10: 300, 65536: 20, 1 << 20: 3}


def nice(n: float, lo: int, hi: int) -> int:
    """Round down to 1, 1.5, 2, 3, 5 or 7 times a power of ten, within [lo, hi]."""
    n = max(lo, min(hi, n))
    p = 10 ** int(math.floor(math.log10(max(n, 1))))
    best = p
    for m in (1, 1.5, 2, 3, 5, 7):
        if m * p <= n:
            best = int(m * p)
    return max(lo, min(hi, best))


def _stats(values: list) -> dict | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


class Bench:
    def __init__(self, args, specs: list):
        self.args = args
        self.mode = args.mode
        self.cfg = dict(MODES[args.mode])
        if args.rounds:
            self.cfg["rounds"] = args.rounds
        if args.seconds:
            self.cfg["seconds"] = args.seconds
        self.specs = specs
        self.live = [s for s in specs if s.available]
        self.workloads = [w for w in WORKLOADS if not args.workloads or w in args.workloads.split(",")]
        self.skip = set((args.skip or "").split(",")) - {""}
        self.rates: dict = {}
        self.failures: list = []
        self.passed = 0  # sessions whose every response was checked and right
        self.failed: set = set()
        self.out = {
            "throughput": {},
            "latency": {},
            "startup_ms": {},
            "echo_scaling": {},
            "rss_vs_requests": {},
            "parallel": {},
        }
        self._startups: dict = {}

    # --- helpers
    def timeout(self, expected_seconds: float) -> float:
        return 60.0 + 10 * expected_seconds

    def fail(self, spec: Spec, what: str, exc: Exception) -> None:
        msg = f"{spec.name} / {what}: {exc}"
        self.failures.append(msg)
        self.failed.add((spec.name, what))
        log("FAIL " + msg)

    def n_for(self, spec: Spec, wl: str, seconds: float) -> int:
        if self.mode == "smoke":
            if wl.startswith("echo:"):
                return SMOKE_ECHO_N.get(echo_size_of(wl), 5)
            return SMOKE_N[wl]
        rate = self.rate(spec, wl)
        if rate is None:
            return 0
        lo = self.cfg["n_min"]
        hi = self.cfg["n_max"] // (4 if spec.check == "lines" else 1)  # cat: a floor, not a contender
        if wl.startswith("echo:"):
            lo = 3
        if wl == "echo64k" or wl.startswith("echo:"):
            hi = max(3, min(hi, (512 << 20) // (echo_size_of(wl) + 100)))
        return nice(rate * seconds, min(lo, hi), hi)

    def rate(self, spec: Spec, wl: str) -> float | None:
        r = self.rates.get(spec.name, {})
        if wl in r:
            return r[wl]
        if wl.startswith("echo:") and "echo100" in r and "echo64k" in r:
            # time per request ~ a + b * size, fitted through the two calibrated echo sizes
            t1, t2 = 1 / r["echo100"], 1 / r["echo64k"]
            b = max((t2 - t1) / (65536 - 100), 1e-12)
            a = max(t1 - b * 100, 1e-9)
            return 1 / (a + b * echo_size_of(wl))
        return None

    def order(self, r: int, specs: list | None = None) -> list:
        specs = self.live if specs is None else specs
        if not specs:
            return []
        k = r % len(specs)
        return specs[k:] + specs[:k]

    # --- phases
    def run(self) -> None:
        if self.mode != "smoke":
            self.phase_calibrate()
        elif any(s.custom for s in self.live):
            for spec in [s for s in self.live if s.custom]:
                self._calibrate_one(spec, [])
        self.phase_throughput()
        if "latency" not in self.skip:
            self.phase_latency()
        if "scaling" not in self.skip:
            self.phase_echo_sizes()
            self.phase_rss_counts()
        if "parallel" not in self.skip:
            self.phase_parallel()
        for name, values in self._startups.items():
            self.out["startup_ms"][name] = _stats(values)

    def _calibrate_one(self, spec: Spec, workloads: list) -> None:
        try:
            self.rates[spec.name] = calibrate(spec, workloads, self.cfg["burst"], self.timeout(10))
        except (Failure, OSError) as exc:
            self.fail(spec, "calibration", exc)
            spec.available = False
            self.live = [s for s in self.live if s.available]

    def phase_calibrate(self) -> None:
        need = [w for w in self.workloads]
        for wl in ("echo100", "echo64k"):
            if wl not in need and "scaling" not in self.skip:
                need.append(wl)
        for spec in list(self.live):
            log(f"calibrating {spec.name}")
            self._calibrate_one(spec, need)
            if spec.name in self.rates:
                rates = self.rates[spec.name]
                log("  " + ", ".join(f"{w} ~{rates[w]:,.0f}/s" for w in rates))

    def phase_throughput(self) -> None:
        rounds = self.cfg["rounds"]
        for r in range(rounds):
            for wl in self.workloads:
                for spec in self.order(r):
                    if not spec.serves(wl) or (spec.name, wl) in self.failed:
                        continue
                    n = self.n_for(spec, wl, self.cfg["seconds"])
                    if n <= 0:
                        continue
                    try:
                        res = pipelined(spec, wl, n, self.timeout(self.cfg["seconds"] * 4))
                    except (Failure, OSError) as exc:
                        self.fail(spec, wl, exc)
                        continue
                    self._startups.setdefault(spec.name, []).append(res.startup_ms)
                    cell = self.out["throughput"].setdefault(wl, {}).setdefault(spec.name, {"runs": []})
                    cell["runs"].append(dataclasses.asdict(res))
                    self.passed += 1
                    log(
                        f"round {r + 1}/{rounds} {wl:<10} {spec.name:<20} {res.rps:>12,.0f} req/s"
                        f"  n={n:,}  cpu {res.cpu_s_per_m or 0:,.2f} s/M  rss {res.rss_mib:.1f} MiB"
                        + (f"  reordered {res.reordered}" if res.reordered else "")
                    )
        for per in self.out["throughput"].values():
            for cell in per.values():
                runs = cell["runs"]
                cell["rps"] = _stats([x["rps"] for x in runs])
                cell["cpu_s_per_m"] = _stats([x["cpu_s_per_m"] for x in runs])
                cell["rss_mib"] = _stats([x["rss_mib"] for x in runs])
                cell["n"] = runs[-1]["n"]
                cell["reordered"] = max(x["reordered"] for x in runs)

    def phase_latency(self) -> None:
        rounds = max(1, min(self.cfg["rounds"], self.cfg["lat_rounds"]))
        per: dict = {}
        for r in range(rounds):
            for spec in self.order(r):
                if (spec.name, "latency") in self.failed:
                    continue
                try:
                    res = pingpong(spec, self.cfg["lat"], self.cfg["lat_budget"], self.timeout(5))
                except (Failure, OSError) as exc:
                    self.fail(spec, "latency", exc)
                    continue
                per.setdefault(spec.name, []).append(res)
                self.passed += 1
                self._startups.setdefault(spec.name, []).append(res["startup_ms"])
                log(
                    f"latency {r + 1}/{rounds} {spec.name:<20} p50 {res['p50_us']:8.1f} us  p99 {res['p99_us']:8.1f} us"
                )
        for name, runs in per.items():
            self.out["latency"][name] = {
                "p50_us": _stats([x["p50_us"] for x in runs]),
                "p99_us": _stats([x["p99_us"] for x in runs]),
                "samples": sum(x["samples"] for x in runs),
            }

    def _scale_specs(self) -> list:
        names = self.cfg["scale_servers"]
        if names is None or self.args.servers or self.args.server:
            return [s for s in self.live if s.name != "compiled-unbuffered"]
        return [s for s in self.live if s.name in names]

    def phase_echo_sizes(self) -> None:
        specs = self._scale_specs()
        for r in range(self.cfg["scale_rounds"]):
            for size in self.cfg["sizes"]:
                wl = f"echo:{size}"
                for spec in self.order(r, specs):
                    if not spec.serves(wl) or (spec.name, wl) in self.failed:
                        continue
                    n = self.n_for(spec, wl, self.cfg["scale_seconds"])
                    if n <= 0:
                        continue
                    try:
                        res = pipelined(spec, wl, n, self.timeout(self.cfg["scale_seconds"] * 4))
                    except (Failure, OSError) as exc:
                        self.fail(spec, wl, exc)
                        continue
                    mbs = n * size / res.seconds / 1e6
                    cell = self.out["echo_scaling"].setdefault(spec.name, {}).setdefault(str(size), {"runs": []})
                    cell["runs"].append({"n": n, "mb_s": mbs, "rps": res.rps, "rss_mib": res.rss_mib})
                    self.passed += 1
                    log(
                        f"echo {fmt_size(size):>8} {spec.name:<20} {mbs:10.1f} MB/s  n={n:,}  rss {res.rss_mib:.1f} MiB"
                    )
        for per in self.out["echo_scaling"].values():
            for cell in per.values():
                cell["mb_s"] = _stats([x["mb_s"] for x in cell["runs"]])
                cell["rss_mib"] = _stats([x["rss_mib"] for x in cell["runs"]])

    def phase_rss_counts(self) -> None:
        for spec in self._scale_specs():
            if not spec.serves("ping"):
                continue
            row = self.out["rss_vs_requests"].setdefault(spec.name, {})
            for count in self.cfg["rss_counts"]:
                rate = self.rate(spec, "ping") or 0
                est = count / rate if rate else 0
                if self.mode != "smoke" and est > self.cfg["rss_cap"]:
                    row[str(count)] = {"skipped": f"would take ~{est:.0f} s"}
                    continue
                try:
                    res = pipelined(spec, "ping", count, self.timeout(est))
                except (Failure, OSError) as exc:
                    if spec.group in ("peer", "custom") and str(exc).startswith("timed out"):
                        row[str(count)] = {"skipped": f"timed out after {self.timeout(est):.0f} s"}
                        log(f"rss  {count:>9,} pings {spec.name:<20} timed out (not counted as a failure for a peer)")
                        continue
                    self.fail(spec, f"ping x{count}", exc)
                    continue
                row[str(count)] = {"rss_mib": res.rss_mib, "rps": res.rps}
                self.passed += 1
                log(f"rss  {count:>9,} pings {spec.name:<20} {res.rss_mib:7.1f} MiB  ({res.rps:,.0f} req/s)")

    def phase_parallel(self) -> None:
        specs = self._scale_specs()
        wl = "mix" if "mix" in self.workloads else self.workloads[0]
        for r in range(self.cfg["par_rounds"]):
            for k in self.cfg["par"]:
                for spec in self.order(r, specs):
                    if not spec.serves(wl) or (spec.name, f"parallel {k}") in self.failed:
                        continue
                    n = self.n_for(spec, wl, self.cfg["seconds"])
                    if n <= 0:
                        continue
                    try:
                        agg = parallel(spec, wl, n, k, self.timeout(self.cfg["seconds"] * 4 * k))
                    except (Failure, OSError) as exc:
                        self.fail(spec, f"parallel {k}", exc)
                        continue
                    cell = self.out["parallel"].setdefault(spec.name, {}).setdefault(str(k), {"runs": []})
                    cell["runs"].append(agg)
                    self.passed += k
                    log(f"parallel x{k} {wl} {spec.name:<20} {agg:12,.0f} req/s aggregate (n={n:,} each)")
        self.out["parallel_workload"] = wl
        for per in self.out["parallel"].values():
            for cell in per.values():
                cell["rps"] = _stats(cell["runs"])


# ----------------------------------------------------------------------------------------------------------
# Checker self-test: the harness must notice wrong answers, or its "all responses checked" means nothing.


def self_test() -> None:
    exp = build_expected("mix", 200)
    assert exp.count(b"\n") == 200
    bad = bytearray(exp)
    bad[len(exp) // 2] ^= 0x01
    assert not exp.startswith(bytes(bad), 0)
    assert "differs" in _locate(exp, 0, bytes(bad))
    sem = build_semantic("mix", 200)
    good = [orjson.loads(x) for x in exp.splitlines()]
    assert check_semantic(good, sem, Expect()) == ([], 0)
    swapped = good[:]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    assert check_semantic(swapped, sem, Expect())[1] == 2
    wrong = [dict(m) for m in good]
    for m in wrong:
        if "content" in m["result"]:
            m["result"] = {"content": [{"type": "text", "text": "nope"}]}
            break
    assert check_semantic(wrong, sem, Expect())[0]
    assert check_semantic(good[:-1], sem, Expect())[0]
    assert nice(1234, 1, 10**6) == 1000 and nice(1600, 1, 10**6) == 1500


# ----------------------------------------------------------------------------------------------------------
# Machine and version information.


def machine_info(specs: list) -> dict:
    info = {
        "date_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.release()}",
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        mem = Path("/proc/meminfo").read_text().split("\n", 1)[0].split()
        info["memory_gib"] = round(int(mem[1]) / 1024 / 1024, 1)
    except (OSError, IndexError, ValueError):
        pass
    try:
        info["loadavg_start"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    versions = {"orjson": orjson.__version__}
    from importlib import metadata

    for dist in ("shipcode-mcp", "mcp", "fastmcp", "matplotlib", "Cython"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    if shutil.which("node"):
        versions["node"] = run_quiet(["node", "--version"])[1]
    if ts_sdk_version():
        versions["@modelcontextprotocol/sdk"] = ts_sdk_version()
    info["engines"] = {spec.name: spec.engine for spec in specs if spec.group == "shipcode" and spec.available}
    code, commit = run_quiet(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    if code == 0:
        dirty = run_quiet(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])[1]
        info["git_commit"] = commit + ("-dirty" if dirty else "")
    else:
        info["git_commit"] = "none"
    info["versions"] = versions
    return info


# ----------------------------------------------------------------------------------------------------------
# Report.


def fmt_size(b: int) -> str:
    if b >= 1 << 20:
        return f"{b >> 20} MiB"
    if b >= 1024:
        return f"{b // 1024} KiB"
    return f"{b} B"


def fmt_rate(v: float | None) -> str:
    if v is None:
        return "n/a"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e4:
        return f"{v / 1e3:.0f}k"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def fmt_num(v: float | None, digits: int = 1) -> str:
    if v is None:
        return "n/a"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def med(cell: dict | None, key: str) -> float | None:
    if not cell or not cell.get(key):
        return None
    return cell[key]["median"]


def ratio_rows(res: dict) -> list:
    thr = res["throughput"]
    lat = res["latency"]
    up = res["startup_ms"]
    rssc = res["rss_vs_requests"]

    def rps(wl, name):
        return med(thr.get(wl, {}).get(name), "rps")

    def rss(wl, name):
        return med(thr.get(wl, {}).get(name), "rss_mib")

    def div(a, b):
        return None if a is None or b is None or b == 0 else a / b

    rows = []

    def add(label, value, op, target):
        if value is None:
            status = "n/a"
        elif op == ">=":
            status = "ok" if value >= target else "MISSED"
        elif op == "<=":
            status = "ok" if value <= target else "MISSED"
        else:  # within
            status = "ok" if abs(value - 1) <= target else "MISSED"
        tgt = f"within ±{target:.0%}" if op == "~" else f"{op} {target:g}"
        rows.append({"figure": label, "value": value, "target": tgt, "status": status})

    def floor(wl):
        """The faster naive loop: line by line with a flush each, or chunked I/O."""
        rates = [r for r in (rps(wl, "naive"), rps(wl, "naive-batch")) if r is not None]
        return max(rates) if rates else None

    for wl in ("ping", "mix"):
        add(f"{wl}: compiled / pure", div(rps(wl, "compiled"), rps(wl, "pure")), ">=", 2.0 if wl == "ping" else 1.5)
        add(
            f"{wl}: compiled / fastest naive loop",
            div(rps(wl, "compiled"), floor(wl)),
            ">=",
            1.3 if wl == "ping" else 1.2,
        )
    add("mix: pure / fastest naive loop", div(rps("mix", "pure"), floor("mix")), ">=", 0.6)
    for wl in ("ping", "mix"):
        add(
            f"{wl}: compiled / Python SDK low-level",
            div(rps(wl, "compiled"), rps(wl, "sdk-lowlevel")),
            ">=",
            300 if wl == "mix" else 0,
        )
        add(
            f"{wl}: compiled / TypeScript SDK",
            div(rps(wl, "compiled"), rps(wl, "ts-sdk")),
            ">=",
            15 if wl == "mix" else 0,
        )
        add(f"{wl}: PYTHONUNBUFFERED=1 / compiled", div(rps(wl, "compiled-unbuffered"), rps(wl, "compiled")), "~", 0.15)
    add(
        "mix peak RSS: compiled / Python SDK low-level",
        div(rss("mix", "compiled"), rss("mix", "sdk-lowlevel")),
        "<=",
        0.30,
    )
    add("mix peak RSS: compiled / naive loop", div(rss("mix", "compiled"), rss("mix", "naive")), "<=", 1.5)
    c = rssc.get("compiled", {})
    lo, hi = c.get("1000", {}).get("rss_mib"), c.get("1000000", {}).get("rss_mib")
    add("peak RSS compiled: 1e6 pings / 1e3 pings", div(hi, lo), "<=", 1.1)
    add(
        "latency p50: compiled / naive loop",
        div(med(lat.get("compiled"), "p50_us"), med(lat.get("naive"), "p50_us")),
        "<=",
        1.5,
    )
    add(
        "start-up: compiled / naive loop",
        div((up.get("compiled") or {}).get("median"), (up.get("naive") or {}).get("median")),
        "<=",
        1.5,
    )
    for row in rows:
        if row["target"] == ">= 0":
            row["target"], row["status"] = "(information)", ""
    return rows


def to_markdown(res: dict, specs: list) -> str:
    m = res["machine"]
    names = [s.name for s in specs if s.available]
    labels = {s.name: s.label or s.name for s in specs}
    L = []
    L.append(f"# shipcode-mcp benchmark — {res['mode']} mode")
    L.append("")
    L.append(
        f"{m['date_utc']} UTC · {m['cpu']} · {m['cores']} cores · {m.get('memory_gib', '?')} GiB · {m['os']} · "
        f"Python {m['python']} · git {m['git_commit']} · load average {m.get('loadavg_start', '?')} at start, "
        f"{m.get('loadavg_end', '?')} at end"
    )
    L.append("")
    L.append("Versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    L.append("")
    L.append(f"Command: `{res['command']}` · {res['rounds']} interleaved rounds · {res['duration_s']:.0f} s in all")
    L.append("")
    thr = res["throughput"]
    wls = [w for w in WORKLOADS if w in thr]
    rounds_note = "median of the rounds, [min–max]"
    L.append(f"## Pipelined throughput (requests/s, {rounds_note})")
    L.append("")
    L.append("| server | " + " | ".join(WORKLOADS[w] for w in wls) + " |")
    L.append("|---|" + "---:|" * len(wls))
    for name in names:
        cells = []
        for wl in wls:
            cell = thr[wl].get(name)
            if not cell:
                cells.append("FAIL" if any(f.startswith(f"{name} / {wl}:") for f in res["failures"]) else "n/a")
                continue
            st = cell["rps"]
            mark = "†" if cell.get("reordered") else ""
            cells.append(f"**{fmt_rate(st['median'])}**{mark} [{fmt_rate(st['min'])}–{fmt_rate(st['max'])}]")
        L.append(f"| {labels[name]} | " + " | ".join(cells) + " |")
    L.append("")
    if any(c.get("reordered") for per in thr.values() for c in per.values()):
        L.append("† answered some requests out of order (allowed by JSON-RPC; every id was answered exactly once).")
        L.append("")
    for key, title, digits in (
        ("cpu_s_per_m", "CPU seconds per million requests (server process, median)", 2),
        ("rss_mib", "Peak RSS (MiB, median)", 1),
    ):
        L.append(f"## {title}")
        L.append("")
        L.append("| server | " + " | ".join(WORKLOADS[w] for w in wls) + " |")
        L.append("|---|" + "---:|" * len(wls))
        L.extend(
            f"| {labels[name]} | " + " | ".join(fmt_num(med(thr[w].get(name), key), digits) for w in wls) + " |"
            for name in names
        )
        L.append("")
    L.append("## Interactive latency and start-up")
    L.append("")
    L.append("| server | ping-pong p50 (µs) | p99 (µs) | start-up to `initialize` answer (ms) [min–max] |")
    L.append("|---|---:|---:|---:|")
    for name in names:
        lat = res["latency"].get(name) or {}
        up = res["startup_ms"].get(name)
        ups = f"{up['median']:.1f} [{up['min']:.1f}–{up['max']:.1f}]" if up else "n/a"
        L.append(f"| {labels[name]} | {fmt_num(med(lat, 'p50_us'))} | {fmt_num(med(lat, 'p99_us'))} | {ups} |")
    L.append("")
    es = res["echo_scaling"]
    if es:
        sizes = sorted({int(k) for per in es.values() for k in per})
        L.append("## Echo throughput by text size (MB/s of echoed text, median)")
        L.append("")
        L.append("| server | " + " | ".join(fmt_size(s) for s in sizes) + " |")
        L.append("|---|" + "---:|" * len(sizes))
        L.extend(
            f"| {labels[name]} | " + " | ".join(fmt_num(med(es[name].get(str(s)), "mb_s")) for s in sizes) + " |"
            for name in names
            if name in es
        )
        L.append("")
    rc = res["rss_vs_requests"]
    if rc:
        counts = sorted({int(k) for per in rc.values() for k in per})
        L.append("## Peak RSS by number of pipelined pings (MiB)")
        L.append("")
        L.append("| server | " + " | ".join(f"{c:,}" for c in counts) + " |")
        L.append("|---|" + "---:|" * len(counts))
        for name in names:
            if name in rc:
                row = []
                for c in counts:
                    cell = rc[name].get(str(c), {})
                    row.append(f"{cell['rss_mib']:.1f}" if "rss_mib" in cell else ("skipped" if cell else "n/a"))
                L.append(f"| {labels[name]} | " + " | ".join(row) + " |")
        L.append("")
        if any("skipped" in cell for per in rc.values() for cell in per.values()):
            L.append(
                f"skipped: would take more than {res['config']['rss_cap']:.0f} s at the server's measured rate, "
                "or timed out."
            )
            L.append("")
    par = res["parallel"]
    if par:
        ks = sorted({int(k) for per in par.values() for k in per})
        L.append(
            f"## Parallel sessions (aggregate requests/s, {res.get('parallel_workload', 'mix')}, one process each)"
        )
        L.append("")
        L.append("| server | " + " | ".join(f"{k} session{'s' if k > 1 else ''}" for k in ks) + " |")
        L.append("|---|" + "---:|" * len(ks))
        L.extend(
            f"| {labels[name]} | " + " | ".join(fmt_rate(med(par[name].get(str(k)), "rps")) for k in ks) + " |"
            for name in names
            if name in par
        )
        L.append("")
    L.append("## Ratios and targets")
    L.append("")
    L.append("| figure | value | target | |")
    L.append("|---|---:|---|---|")
    for row in res["ratios"]:
        v = row["value"]
        vs = "n/a" if v is None else (f"{v:,.0f}x" if v >= 100 else f"{v:.2f}x")
        L.append(f"| {row['figure']} | {vs} | {row['target']} | {row['status']} |")
    L.append("")
    L.append("## Servers")
    L.append("")
    for s in specs:
        status = "" if s.available else " — **not run**"
        extra = f" (engine: {s.engine})" if s.engine else ""
        env = " ".join(f"{k}={v}" for k, v in s.env.items() if v is not None)
        cmd = " ".join(shlex.quote(a) for a in s.argv).replace(str(ROOT) + "/", "")
        cmd = cmd.replace(str(Path(sys.executable).with_name("shipcode-mcp")), "shipcode-mcp")
        cmd = cmd.replace(sys.executable, "python")
        note = f" — {s.note}" if s.note else ""
        L.append(f"- `{s.name}`: {env + ' ' if env else ''}`{cmd}`{extra}, checked {s.check}{status}{note}")
    L.append("")
    L.append(
        "Requests per run (pipelined): "
        + "; ".join(
            f"{WORKLOADS[w]}: " + ", ".join(f"{n} {fmt_rate(thr[w][n]['n'])}" for n in names if n in thr[w])
            for w in wls
        )
    )
    L.append("")
    if res["failures"]:
        L.append("## Failures")
        L.append("")
        L.extend(f"- {f.splitlines()[0]}" for f in res["failures"])
        L.append("")
    return "\n".join(L)


def draw_chart(res: dict, specs: list, path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart (pip install -r benchmarks/requirements.txt)"
    thr = res["throughput"]
    wls = [w for w in WORKLOADS if w in thr]
    names = [s.name for s in specs if s.available and any(s.name in thr[w] for w in wls)]
    labels = {s.name: s.label or s.name for s in specs}
    es = res["echo_scaling"]
    fig, axes = plt.subplots(
        1, 2 if es else 1, figsize=(16 if es else 11, 6.5), gridspec_kw={"width_ratios": [2.2, 1]} if es else None
    )
    ax = axes[0] if es else axes
    width = 0.8 / max(1, len(names))
    cmap = plt.get_cmap("tab10")
    for k, name in enumerate(names):
        xs, ys, lo, hi = [], [], [], []
        for i, wl in enumerate(wls):
            cell = thr[wl].get(name)
            if not cell:
                continue
            st = cell["rps"]
            xs.append(i - 0.4 + width * (k + 0.5))
            ys.append(st["median"])
            lo.append(st["median"] - st["min"])
            hi.append(st["max"] - st["median"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=labels[name], color=cmap(k % 10))
    ax.set_yscale("log")
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels([WORKLOADS[w] for w in wls])
    ax.set_ylabel("requests / s (log scale; median, min–max bars)")
    ax.set_title("Pipelined throughput over stdio pipes")
    ax.grid(axis="y", which="both", alpha=0.3)
    handles, names_ = ax.get_legend_handles_labels()
    fig.legend(handles, names_, loc="lower center", ncol=min(6, len(names_)), fontsize=9, frameon=False)
    if es:
        ax2 = axes[1]
        for k, name in enumerate(names):
            if name not in es:
                continue
            sizes = sorted(int(s) for s in es[name])
            vals = [med(es[name][str(s)], "mb_s") for s in sizes]
            ax2.plot(sizes, vals, marker="o", label=labels[name], color=cmap(k % 10))
        ax2.set_xscale("log")
        ax2.set_yscale("log")
        ax2.set_xlabel("echoed text size (bytes)")
        ax2.set_ylabel("MB/s of echoed text")
        ax2.set_title("Echo throughput by text size")
        ax2.grid(which="both", alpha=0.3)
    m = res["machine"]
    fig.suptitle(
        f"shipcode-mcp benchmark ({res['mode']}) — {m['cpu']}, {m['cores']} cores, "
        f"Python {m['python']}, git {m['git_commit']}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.08 if len(names) > 6 else 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def update_readme(md: str) -> None:
    readme = HERE / "README.md"
    text = readme.read_text()
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    if start not in text or end not in text:
        log("README.md has no results markers; not updated")
        return
    body = md.split("\n", 1)[1].replace("\n## ", "\n### ")
    text = (
        text.split(start)[0]
        + start
        + "\n"
        + body.strip()
        + "\n\n![chart](results/latest.png)\n"
        + end
        + text.split(end, 1)[1]
    )
    readme.write_text(text)
    log("updated benchmarks/README.md")


# ----------------------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark stdio MCP servers (shipcode-mcp, the official SDKs, floors, or any command).",
        epilog="Known servers: " + ", ".join(s.name for s in builtin_specs()),
    )
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick", dest="mode", action="store_const", const="quick", help="about a minute and a half (default)"
    )
    mode.add_argument(
        "--full", dest="mode", action="store_const", const="full", help="more rounds, longer runs, all peers"
    )
    mode.add_argument(
        "--smoke",
        dest="mode",
        action="store_const",
        const="smoke",
        help="CI-sized: a few thousand requests per engine, shipcode-mcp only, every response checked, writes nothing",
    )
    ap.add_argument(
        "--servers", help="comma-separated built-in servers to run ('all' for every one, 'none' for only --server)"
    )
    ap.add_argument(
        "--server",
        action="append",
        metavar="CMD",
        help='any stdio MCP server command, e.g. "node their-server.js" (repeatable)',
    )
    ap.add_argument("--name", action="append", metavar="LABEL", help="label for the matching --server (in order)")
    ap.add_argument("--workloads", help="comma-separated subset of: " + ",".join(WORKLOADS))
    ap.add_argument("--skip", help="comma-separated phases to skip: latency, scaling, parallel")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (quick 3, full 5)")
    ap.add_argument("--seconds", type=float, help="target seconds per pipelined run (quick 0.25, full 1.0)")
    ap.add_argument(
        "--out", type=Path, help="results folder (default benchmarks/results; smoke writes nothing unless given)"
    )
    ap.add_argument("--tag", default="latest", help="file name stem of the results (default: latest)")
    ap.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    ap.add_argument("--update-readme", action="store_true", help="copy the results table into benchmarks/README.md")
    ap.add_argument("--check-targets", action="store_true", help="exit 2 when a ratio target is missed")
    ap.add_argument("--require-compiled", action="store_true", help="fail unless the compiled engine is live")
    ap.add_argument("--list", action="store_true", help="list the servers and whether they can run, then exit")
    args = ap.parse_args(argv)
    args.mode = args.mode or "quick"
    t_start = time.perf_counter()

    self_test()
    specs = resolve_servers(args)
    if args.list:
        for s in specs:
            print(f"{s.name:<22} {'ok ' if s.available else 'no '} {' '.join(s.argv)}  {s.note}")
        return 0
    for s in specs:
        if not s.available:
            log(f"skipping {s.name}: {s.note}")
        elif s.note:
            log(f"note {s.name}: {s.note}")
    if not any(s.available for s in specs):
        log("no server can run")
        return 1

    bench = Bench(args, specs)
    machine = machine_info(specs)
    log(f"{args.mode} mode: {', '.join(s.name for s in bench.live)}")
    bench.run()

    res = {
        "schema": 1,
        "mode": args.mode,
        "command": "python benchmarks/run.py "
        + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
        "rounds": bench.cfg["rounds"],
        "config": {k: v for k, v in bench.cfg.items()},
        "machine": machine,
        "servers": {
            s.name: {
                "label": s.label,
                "argv": s.argv,
                "env": s.env,
                "check": s.check,
                "group": s.group,
                "available": s.available,
                "engine": s.engine,
                "note": s.note,
            }
            for s in specs
        },
        **bench.out,
        "failures": bench.failures,
    }
    try:
        res["machine"]["loadavg_end"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    res["duration_s"] = time.perf_counter() - t_start
    res["ratios"] = ratio_rows(res)
    md = to_markdown(res, specs)
    print(md)

    out = args.out if args.out else (None if args.mode == "smoke" else RESULTS)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{args.tag}.json").write_bytes(orjson.dumps(res, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
        (out / f"{args.tag}.md").write_text(md + "\n")
        written = [f"{args.tag}.json", f"{args.tag}.md"]
        if not args.no_chart:
            why = draw_chart(res, specs, out / f"{args.tag}.png")
            if why:
                log(why)
            else:
                written.append(f"{args.tag}.png")
        log(f"wrote {', '.join(str(out / w) for w in written)}")
        if args.update_readme and out.resolve() == RESULTS.resolve():
            update_readme(md)

    # One closing line that CI log readers understand: checked sessions passed, failed.
    print(f"{args.mode}: {bench.passed} passed, {len(bench.failures)} failed")
    if bench.failures:
        log(f"{len(bench.failures)} failure(s): see the Failures section")
        return 1
    log(f"every response of {bench.passed} sessions checked, no mismatch ({res['duration_s']:.0f} s)")
    if args.check_targets and any(r["status"] == "MISSED" for r in res["ratios"]):
        log("some targets were missed")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
