"""The tools' clients alone, without any MCP server: the CPU one tool call costs in its client libraries.

    python benchmarks/run.py realistic-clients [--calls 3000] [--concurrency 25]

The workload's three tools (tools.py) are called straight from an event loop (uvloop's when installed), cycling
through answers.py's cases with ``--concurrency`` calls in flight, every answer checked, against the same Redis
and API service as ``run.py realistic``. Each setup runs in a fresh process; the figure is that process's CPU
(user + system) per call, which the machine's load does not change much, and the calls per second of that one
process. The setups differ in one thing at a time:

- Redis: redis-py's asyncio client with hiredis's C parser, or with its pure-Python parser (as without hiredis);
- HTTP: httpx (with and without ``sniffio`` importable: httpcore tries ``import sniffio`` on every request and
  takes the slow way when it fails) or aiohttp, both with a pool of keep-alive connections.

Results go to ``results/realistic-clients-last.{md,json}`` (``--save``: ``realistic-clients-latest``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.machinery
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
#: (label, HTTP client, Redis parser, sniffio importable)
SETUPS = (
    ("redis-py without hiredis, httpx without sniffio", "httpx", "python", False),
    ("redis-py + hiredis, httpx without sniffio", "httpx", "hiredis", False),
    ("redis-py + hiredis, httpx with sniffio", "httpx", "hiredis", True),
    ("redis-py without hiredis, aiohttp", "aiohttp", "python", True),
    ("redis-py + hiredis, aiohttp", "aiohttp", "hiredis", True),
)


class NoSniffio:
    """A finder, first on ``sys.meta_path``, that makes ``import sniffio`` fail as it does where sniffio is not
    installed: after the same search of ``sys.path``."""

    #: sys.path without the folders that hold sniffio: what a failed search goes through.
    path: list = []

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "sniffio":
            return None
        importlib.machinery.PathFinder.find_spec(name, cls.path)
        raise ModuleNotFoundError("No module named 'sniffio'", name=name)


async def _calls(count: int, concurrency: int, cases: list, clients) -> int:
    """Make ``count`` tool calls, ``concurrency`` at a time; the number of wrong answers."""
    import tools

    functions = {"search_products": tools.search_products, "get_product": tools.get_product}
    functions["calculate_cart"] = tools.calculate_cart
    wrong = 0
    todo = iter(range(count))

    async def worker() -> None:
        nonlocal wrong
        for n in todo:
            case = cases[n % len(cases)]
            if await functions[case["tool"]](clients, **case["arguments"]) != case["text"]:
                wrong += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return wrong


def child(argv: list) -> None:
    """One setup in this process: warm up, then time the calls; prints its figures as JSON."""
    cases_file, count, concurrency, http_client, redis_parser, sniffio = argv
    if sniffio != "1":
        sys.modules.pop("sniffio", None)
        NoSniffio.path = [p for p in sys.path if not os.path.exists(os.path.join(p, "sniffio"))]
        sys.meta_path.insert(0, NoSniffio)
    sys.path.insert(0, str(HERE))
    import tool_clients

    cases = orjson.loads(Path(cases_file).read_bytes())
    try:
        import uvloop

        new_loop = uvloop.new_event_loop
    except ImportError:
        new_loop = asyncio.new_event_loop

    async def main() -> dict:
        clients = tool_clients.Clients(
            os.environ["REALISTIC_REDIS_URL"], os.environ["REALISTIC_API_URL"], http_client, redis_parser
        )
        await _calls(len(cases), int(concurrency), cases, clients)  # connections made, code warm
        cpu, wall = time.process_time(), time.perf_counter()
        wrong = await _calls(int(count), int(concurrency), cases, clients)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return {"calls": int(count), "wrong": wrong, "cpu_s": cpu, "wall_s": wall}

    loop = new_loop()
    try:
        print(orjson.dumps(loop.run_until_complete(main())).decode())
    finally:
        loop.close()


def options(argv: list | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="run.py realistic-clients", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000, help="timed calls per setup (default 3000)")
    parser.add_argument("--concurrency", type=int, default=25, help="calls in flight (default 25: 50 VUs, 2 processes)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median is shown (default 3)")
    parser.add_argument(
        "--save",
        action="store_true",
        help="write the committed results/realistic-clients-latest.* (refused with uncommitted changes)",
    )
    return parser.parse_args(argv)


def main(argv: list | None = None) -> int:
    import cli
    import environments
    from common import RESULTS, log
    from common.machine import machine_info, uncommitted_changes

    args = options(argv)
    if args.save and uncommitted_changes():
        sys.exit("run.py: --save refused: tracked files have uncommitted changes (commit first)")
    clients_dir, problem = environments.shipcode_clients()
    problem = problem or environments.system_tools()
    if problem:
        sys.exit(f"run.py: {problem}")
    machine = machine_info([])
    figures: dict = {label: [] for label, *_ in SETUPS}
    failures = []
    with cli.backends("realistic-clients-") as started:
        env = dict(os.environ, PYTHONPATH=str(clients_dir), REALISTIC_REDIS_URL=started.store.url)
        env["REALISTIC_API_URL"] = started.api_url
        for round_ in range(args.rounds):
            for label, http_client, redis_parser, sniffio in SETUPS:
                log(f"round {round_ + 1}: {label}")
                command = [sys.executable, __file__, "--child", str(started.cases), str(args.calls)]
                command += [str(args.concurrency), http_client, redis_parser, "1" if sniffio else "0"]
                done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    failures.append(f"{label}: exit {done.returncode}: {done.stderr[-400:]}")
                    continue
                run = orjson.loads(done.stdout.splitlines()[-1])
                if run["wrong"]:
                    failures.append(f"{label}: {run['wrong']} wrong answers of {run['calls']}")
                figures[label].append(run)
    result = {
        "machine": machine,
        "command": shlex.join(
            ["python", "benchmarks/run.py", "realistic-clients", *(sys.argv[2:] if argv is None else argv)]
        ),
        "calls": args.calls,
        "concurrency": args.concurrency,
        "rounds": args.rounds,
        "setups": figures,
        "failures": failures,
    }
    result["machine"]["loadavg_end"] = round(os.getloadavg()[0], 2)
    text = markdown(result)
    print(text)
    stem = "realistic-clients-latest" if args.save else "realistic-clients-last"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.md").write_text(text + "\n")
    (RESULTS / f"{stem}.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    log(f"wrote {RESULTS / stem}.{{md,json}}")
    return 1 if failures else 0


def _median(values: list) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")


def markdown(result: dict) -> str:
    """The report: per setup, the median CPU per call and calls/s, and each against the first setup."""
    import report

    machine = result["machine"]
    lines = [
        report.machine_line(machine),
        "",
        f"Command: `{result['command']}` · {result['calls']} calls per run, {result['concurrency']} in flight, "
        f"{result['rounds']} interleaved rounds (median shown), every answer checked",
        "",
        "| the tools' clients | CPU per call (ms) | calls/s, one process | CPU per call / the first row's |",
        "|---|---:|---:|---:|",
    ]
    base = None
    for label, runs in result["setups"].items():
        if not runs:
            lines.append(f"| {label} | failed | | |")
            continue
        cpu = _median([r["cpu_s"] / r["calls"] * 1e3 for r in runs])
        rate = _median([r["calls"] / r["wall_s"] for r in runs])
        base = base or cpu
        lines.append(f"| {label} | {cpu:.3f} | {rate:,.0f} | {cpu / base:.2f}x |")
    lines += [f"\n**Failure**: {failure}" for failure in result["failures"]]
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        sys.exit(main())
