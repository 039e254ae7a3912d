"""An app for the concurrency tests: gates (asyncio events) that requests open, to drive
deterministic schedules, and tools that never return, block, or ask the client."""

from __future__ import annotations

import asyncio
import threading
import time

from shipcode_mcp import Context, RpcError, Server

app = Server("concurrency", version="1.0.0")
_gates: dict[str, asyncio.Event] = {}
_started: list[int] = []
_meeting = threading.Barrier(2, timeout=2)


def _gate(name: str) -> asyncio.Event:
    return _gates.setdefault(name, asyncio.Event())


@app.tool()
async def wait(name: str) -> str:
    """Wait until the gate opens; a cancellation opens the gate cancelled:<name>."""
    try:
        await _gate(name).wait()
    except asyncio.CancelledError:
        _gate(f"cancelled:{name}").set()
        raise
    return f"passed {name}"


@app.tool()
def open_gate(name: str) -> str:
    """Open a gate (sync: runs in line order)."""
    _gate(name).set()
    return f"opened {name}"


@app.tool()
def open_gate_noting(name: str, ctx: Context) -> str:
    """Open a gate from a sync tool that takes a Context (runs in line order too)."""
    ctx.info(f"opening {name}")
    _gate(name).set()
    return f"opened {name}"


@app.tool()
async def never() -> str:
    """Never returns."""
    await asyncio.Event().wait()
    return "unreachable"


@app.tool()
async def step(n: int) -> str:
    """Record that it started, yield to the loop once, finish."""
    _started.append(n)
    await asyncio.sleep(0)
    return f"done {n}"


@app.tool()
def started() -> str:
    """How many step calls have started."""
    return str(len(_started))


@app.tool()
async def loop() -> str:
    """Which event loop serves: "asyncio" or "uvloop"."""
    return type(asyncio.get_running_loop()).__module__.partition(".")[0]


@app.tool(blocking=True)
def meet(n: int) -> str:
    """Blocks until a second call meets it: only concurrent threads get through."""
    _meeting.wait()
    return f"met {n}"


@app.tool(blocking=True)
def report(ctx: Context, n: int) -> str:
    """Reports progress from its worker thread."""
    ctx.report_progress(n, total=2)
    return f"reported {n}"


@app.tool()
def pause_ms(ms: int) -> str:
    """A sync handler that holds the line processor."""
    time.sleep(ms / 1000)
    return "paused"


@app.tool()
def read_fifo(path: str) -> str:
    """A sync handler that blocks until someone writes to the FIFO at ``path``."""
    with open(path) as fifo:
        return fifo.read()


@app.tool()
async def sample(ctx: Context, prompt: str) -> str:
    """Ask the client's model."""
    result = await ctx.sample(prompt, max_tokens=10)
    return result["content"]["text"]


@app.tool()
async def roots(ctx: Context) -> str:
    """The client's roots, as uris."""
    return " ".join(root["uri"] for root in await ctx.list_roots())


@app.tool()
async def chatty(ctx: Context, n: int) -> str:
    """Log at every level and report progress, then answer with the request id."""
    for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
        await ctx.log(level, {"n": n}, logger="chatty")
    await ctx.report_progress(1, total=2, message="half")
    return f"id {ctx.request_id!r}"


@app.resource("test://later")
async def later() -> str:
    await asyncio.sleep(0)
    return "read later"


@app.resource("test://exits")
async def exits() -> str:
    await asyncio.sleep(0)
    raise SystemExit(3)


@app.resource("test://refused")
async def refused() -> str:
    await asyncio.sleep(0)
    raise RpcError(-32002, "Resource not found")
