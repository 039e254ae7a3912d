"""``run.py realistic-profile`` gives each py-spy sample to the part of the server it was spent in, and shares out
each process's CPU seconds in the proportions of its samples (benchmarks/realistic/timesplit.py)."""

from __future__ import annotations

import sys
from pathlib import Path

REALISTIC = Path(__file__).resolve().parents[2] / "benchmarks" / "realistic"
sys.path[:0] = [str(REALISTIC), str(REALISTIC.parent)]  # the workload's modules import each other by bare name

import timesplit  # noqa: E402

WORKER = 'process 7:"python -c spawn_main"'
LOOP = "Runner.run (asyncio/runners.py:118)"
RAW = "\n".join(
    [
        # A worker (pid 7), below its parent (pid 5):
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP};RequestResponseCycle.send (uvicorn/protocols/http/'
        "httptools_impl.py:524) 6",
        # json inside httpx counts for httpx; json inside the tool for the tool.
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP};Tool.run_async (shipcode_mcp/handlers.py:278);'
        "get_product (tools.py:48);AsyncClient.get (httpx/_client.py:1768);Response.json (httpx/_models.py:832);"
        "loads (json/__init__.py:346) 3",
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP};Tool.run_async (shipcode_mcp/handlers.py:278);'
        "get_product (tools.py:60);dumps (json/__init__.py:238) 1",
        # A failed import under httpcore: httpx's, and counted as importing.
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP};current_async_library (httpcore/_synchronization.py:26);'
        "_find_and_load (<frozen importlib._bootstrap>:1176) 2",
        # The loop's own C code: no frame below its run.
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP} 4',
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP};McpHttpApp.legacy_post (shipcode_mcp/transports/http/'
        "asgi.py:438);SessionTable.open (shipcode_mcp/transports/http/sessions.py:193) 2",
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP};McpHttpApp.post (shipcode_mcp/transports/http/asgi.py:315)'
        ";envelope (shipcode_mcp/lines.py:81) 2",
        # The parent (pid 5): the supervisor.
        'process 5:"shipcode-mcp app.py";Multiprocess.run (uvicorn/supervisors/multiprocess.py:203) 1',
        # A process making its clients on its first call: apart, whatever it runs.
        f'process 5:"shipcode-mcp app.py";{WORKER};{LOOP};get_product (served.py:17);shared (tool_clients.py:90);'
        "Clients.__init__ (tool_clients.py:80);_find_and_load (<frozen importlib._bootstrap>:1176);"
        "exec_module (aiohttp/__init__.py:1) 2",
        # Nothing known at all.
        f'process 5:"shipcode-mcp app.py";{WORKER};<module> (<string>:1) 0',
        "not a sample line",
    ]
)
UVICORN = ("HTTP server", "uvicorn and httptools")
HTTPX = ("the tools' I/O clients", "httpx, httpcore, h11, anyio")
TOOLS = ("tool code", "the tools (tools.py, served.py, tool_clients.py)")
LOOP_PART = ("event loop", "asyncio's loop, uvloop")
SESSIONS = ("session handling", "legacy sessions (shipcode_mcp)")
FRAMEWORK = ("MCP framework", "engine, catalogue, handlers (shipcode_mcp)")


def test_each_sample_goes_to_the_innermost_known_frame_of_its_own_process() -> None:
    found = timesplit.split(RAW)
    assert {pid: dict(samples) for pid, samples in found.items()} == {
        7: {
            UVICORN: 6,
            HTTPX: 5,
            ("importlib._bootstrap", *HTTPX): 2,
            TOOLS: 1,
            LOOP_PART: 4,
            SESSIONS: 2,
            FRAMEWORK: 2,
            timesplit.MAKING_CLIENTS: 2,
            ("importlib._bootstrap", *timesplit.MAKING_CLIENTS): 2,
            timesplit.OTHER: 0,
        },
        5: {UVICORN: 1},
    }


def test_each_process_cpu_is_shared_out_by_its_samples() -> None:
    found = timesplit.split(RAW)
    # Worker: 22 samples for 2.2 s; the parent: 1 sample for 0.5 s; a process with no sample: other.
    seconds = timesplit.weighted(found, {7: 2.2, 5: 0.5, 9: 0.25})
    assert {key: round(value, 6) for key, value in seconds.items()} == {
        UVICORN: 0.6 + 0.5,
        HTTPX: 0.5,
        ("importlib._bootstrap", *HTTPX): 0.2,
        TOOLS: 0.1,
        LOOP_PART: 0.4,
        SESSIONS: 0.2,
        FRAMEWORK: 0.2,
        timesplit.MAKING_CLIENTS: 0.2,
        ("importlib._bootstrap", *timesplit.MAKING_CLIENTS): 0.2,
        timesplit.OTHER: 0.25,
    }
