"""Where shipcode-mcp's CPU goes under the realistic load: py-spy samples its processes during a k6 run, and each
sample is given to the part of the server it was spent in.

    python benchmarks/run.py realistic-profile [--variants legacy,stateless] [--http-clients httpx,aiohttp]

Each run is the realistic workload's (``run.py realistic``: Redis, the API service, k6 with 50 virtual users,
``--processes 2``, every answer checked) on shipcode-mcp's compiled engine, with ``py-spy record
--subprocesses --nonblocking`` on the server for the measured run. A sample belongs to the innermost frame of its
stack that comes from a known place (:data:`PARTS`); frames of the standard library's helpers (json, the
import system, asyncio's streams, locks and timeouts, ...) pass the sample on to their caller, so that a
``json.loads`` inside httpx counts for httpx and one inside the tool for the tool. A sample whose innermost known
frame is the loop's own run (``asyncio/runners.py``: uvloop's C code below it has no Python frame) is the event
loop's. Shares of the samples times the server's CPU per MCP request of the same run (from /proc) give each
part's CPU per MCP request.

Results go to ``results/realistic-profile-last.{md,json}`` (``--save``: ``realistic-profile-latest``).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
#: (group, part, path fragments): the first part with a fragment in "/" + a frame's file names the frame.
PARTS = (
    ("HTTP server", "uvicorn and httptools", ("/uvicorn/", "/httptools/")),
    (
        "session handling",
        "legacy sessions (shipcode_mcp)",
        (
            "/shipcode_mcp/transports/http/sessions.py",
            "/shipcode_mcp/transports/http/relay.py",
            "/shipcode_mcp/session.py",
            "/shipcode_mcp/asking/",
        ),
    ),
    ("HTTP server", "HTTP transport (shipcode_mcp/transports/http)", ("/shipcode_mcp/transports/",)),
    ("MCP framework", "engine, catalogue, handlers (shipcode_mcp)", ("/shipcode_mcp/",)),
    (
        "tool code",
        "the tools (tools.py, served.py, tool_clients.py)",
        (
            "/tools.py",
            "/served.py",
            "/tool_clients.py",
        ),
    ),
    ("the tools' I/O clients", "redis-py and hiredis", ("/redis/", "/hiredis/")),
    (
        "the tools' I/O clients",
        "httpx, httpcore, h11, anyio",
        (
            "/httpx/",
            "/httpcore/",
            "/h11/",
            "/anyio/",
            "/sniffio/",
            "/idna/",
            "/certifi/",
        ),
    ),
    (
        "the tools' I/O clients",
        "aiohttp, yarl, multidict",
        (
            "/aiohttp/",
            "/yarl/",
            "/multidict/",
            "/aiohappyeyeballs/",
            "/aiosignal/",
            "/frozenlist/",
            "/propcache/",
        ),
    ),
    (
        "event loop",
        "asyncio's loop, uvloop",
        (
            "/asyncio/runners.py",
            "/asyncio/base_events.py",
            "/asyncio/events.py",
            "/asyncio/selector_events.py",
            "/asyncio/unix_events.py",
            "/uvloop/",
        ),
    ),
)
GROUPS = ("HTTP server", "MCP framework", "session handling", "the tools' I/O clients", "tool code", "event loop")
OTHER = ("other", "no known frame (start-up, threads)")
#: A process makes its clients on its first call (importing them): once, however long the run, so apart.
FIRST_CALL = "Clients.__init__ (tool_clients.py:"
MAKING_CLIENTS = ("other", "the clients made on a process's first call")
#: Frames that say an import is being made: counted apart, whatever part the sample goes to.
IMPORTING = "importlib._bootstrap"
FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def part_of(stack: str) -> tuple:
    """(group, part) of one sample's stack ("outer;...;inner", as py-spy's raw format writes it)."""
    if FIRST_CALL in stack:
        return MAKING_CLIENTS
    for frame in reversed(stack.split(";")):
        found = FRAME.match(frame)
        if not found:
            continue
        where = "/" + found.group("file")  # py-spy names files from their package: "httpx/_client.py"
        for group, part, fragments in PARTS:
            if any(fragment in where for fragment in fragments):
                return group, part
    return OTHER


PROCESS = re.compile(r"^process (\d+):")


def hot_spots(raw: str, count: int = 5) -> dict:
    """{part: [(its innermost frame in a sample, share of the part's samples), ...]}: the ``count`` most sampled."""
    spots: dict = collections.defaultdict(collections.Counter)
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        key = part_of(stack)
        frame = next((f for f in reversed(stack.split(";")) if part_of(f) == key), "")
        spots[key[1]][frame.split(" (")[0] + " (" + frame.rpartition("(")[2]] += int(n)
    return {
        part: [(frame, n / sum(frames.values())) for frame, n in frames.most_common(count)]
        for part, frames in spots.items()
    }


def split(raw: str) -> dict:
    """{pid: Counter of samples per (group, part), with (IMPORTING, group, part) keys for those of them spent
    importing}, from py-spy's raw output (each stack begins with its process and the processes above it)."""
    found: dict = collections.defaultdict(collections.Counter)
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        pids = [m.group(1) for m in map(PROCESS.match, stack.split(";")) if m]
        samples = found[int(pids[-1]) if pids else 0]
        key = part_of(stack)
        samples[key] += int(count)
        if IMPORTING in stack:
            samples[(IMPORTING, *key)] += int(count)
    return found


def weighted(found: dict, cpu: dict) -> dict:
    """CPU seconds per (group, part) and per (IMPORTING, group, part): each process's CPU seconds (``cpu``:
    {pid: seconds}) shared out in the proportions of its samples (py-spy's idle test is a guess; /proc is not).
    A process that used CPU but gave no sample counts as OTHER."""
    out: collections.Counter = collections.Counter()
    for pid, seconds in cpu.items():
        samples = found.get(pid)
        total = sum(n for key, n in samples.items() if key[0] != IMPORTING) if samples else 0
        if not total:
            out[OTHER] += seconds
            continue
        for key, n in samples.items():
            out[key] += seconds * n / total
    return out


def py_spy() -> str:
    """The py-spy program (next to this Python, or on the PATH); exits with how to install it when missing."""
    beside = Path(sys.executable).with_name("py-spy")
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if not found:
        sys.exit("run.py: py-spy is needed: pip install -r benchmarks/requirements.txt")
    return found


def options(argv: list | None) -> argparse.Namespace:
    import peers
    from tool_clients import HTTP_CLIENTS, REDIS_PARSERS

    parser = argparse.ArgumentParser(prog="run.py realistic-profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="legacy,stateless", help="legacy, stateless or both (default both)")
    parser.add_argument("--http-clients", default=",".join(HTTP_CLIENTS), help="httpx, aiohttp or both (default)")
    parser.add_argument("--redis-parser", choices=REDIS_PARSERS, default="hiredis", help="default hiredis")
    parser.add_argument("--seconds", type=float, default=20, help="length of one profiled run (default 20)")
    parser.add_argument("--warmup", type=float, default=3, help="seconds of load before it (default 3)")
    parser.add_argument("--vus", type=int, default=50, help="k6 virtual users (default 50)")
    parser.add_argument("--processes", type=int, default=2, help="server processes (default 2)")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second (default 200)")
    parser.add_argument(
        "--save",
        action="store_true",
        help="write the committed results/realistic-profile-latest.* (refused with uncommitted changes)",
    )
    args = parser.parse_args(argv)
    args.variants = [v for v in args.variants.split(",") if v]
    args.http_clients = [c for c in args.http_clients.split(",") if c]
    for name, known in (("variant", peers.VARIANTS), ("HTTP client", HTTP_CLIENTS)):
        for value in args.variants if name == "variant" else args.http_clients:
            if value not in known:
                parser.error(f"unknown {name} {value!r} (known: {', '.join(known)})")
    return args


def profiled_run(args, binary: str, spy: str, peer, cases: Path, others: dict, variant: str, raw: Path) -> dict:
    """One k6 run on the started server with py-spy recording its stacks into ``raw``; the run's figures and
    its split."""
    import cli
    import measure
    from httpbench import servers

    port, pid = peer.server.port, peer.server.process.pid
    if args.warmup:
        measure.k6(binary, port, cases, variant, max(args.vus, cli.WARMUP_VUS), args.warmup)
    command = [spy, "record", "--pid", str(pid), "--subprocesses", "--nonblocking", "--rate", str(args.rate)]
    command += ["--format", "raw", "--output", str(raw), "--duration", f"{args.seconds + 1:g}"]
    pids = servers.process_tree(pid)
    before = {p: servers.cpu_seconds([p]) for p in pids}
    spying = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        run = measure.measured_run(binary, pid, others, port, cases, variant, args.vus, args.seconds)
    finally:
        _, complaint = spying.communicate(timeout=args.seconds + 60)
    cpu = {p: servers.cpu_seconds([p]) - before[p] for p in pids}
    if not raw.exists():
        raise RuntimeError(f"py-spy wrote nothing: {complaint.decode(errors='replace')[-400:]}")
    text = raw.read_text()
    found = split(text)
    run["hot_spots"] = hot_spots(text)
    seconds = weighted(found, cpu)
    total_cpu = sum(cpu.values())
    requests = max(run["requests"], 1)
    parts = []
    for key, part_cpu in seconds.most_common():
        if key[0] == IMPORTING:
            continue
        group, part = key
        parts.append(
            {
                "group": group,
                "part": part,
                "share": part_cpu / total_cpu,
                "ms_per_request": part_cpu / requests * 1e3,
                "importing_share": seconds[(IMPORTING, group, part)] / total_cpu,
            }
        )
    total = sum(n for samples in found.values() for key, n in samples.items() if key[0] != IMPORTING)
    run["cpu_by_process"] = {str(p): c for p, c in cpu.items()}
    run.update(variant=variant, parts=parts, samples=total)
    return run


def main(argv: list | None = None) -> int:
    import cli
    import environments
    import peers
    from common import RESULTS, log
    from common.machine import machine_info, uncommitted_changes
    from httpbench import servers

    args = options(argv)
    if args.save and uncommitted_changes():
        sys.exit("run.py: --save refused: tracked files have uncommitted changes (commit first)")
    stem = "realistic-profile-latest" if args.save else "realistic-profile-last"
    RESULTS.mkdir(exist_ok=True)
    spy = py_spy()
    problem = environments.system_tools()
    binary, k6_problem = environments.k6()
    if problem or k6_problem:
        sys.exit(f"run.py: {problem or k6_problem}")
    given = sys.argv[2:] if argv is None else argv
    result: dict = {
        "machine": machine_info([]),
        "command": shlex.join(["python", "benchmarks/run.py", "realistic-profile", *given]),
        "config": {"vus": args.vus, "seconds": args.seconds, "processes": args.processes, "rate": args.rate},
        "runs": [],
        "failures": [],
    }
    with cli.backends("realistic-profile-") as started:
        others = {"redis": started.store.process.pid, "api": started.api.process.pid}
        for client in args.http_clients:
            environ = peers.environ(started.store.url, started.api_url, client)
            environ["REALISTIC_REDIS_PARSER"] = args.redis_parser
            peer = peers.prepare("shipcode", args.processes, environ)
            if peer.server.note:
                sys.exit(f"run.py: {peer.server.note}")
            result.setdefault("versions", peer.versions)
            started.store.seed()
            servers.start(peer.server)
            try:
                for variant in args.variants:
                    problem = peers.probe(peer.server.port, variant, started.case_list)
                    if problem:
                        result["failures"].append(f"{client}, {variant}: the probe failed: {problem}")
                        continue
                    log(f"{client} {variant}: {args.vus} VUs for {args.seconds:g} s under py-spy")
                    raw = RESULTS / f"{stem}.{client}-{variant}.stacks"
                    run = profiled_run(args, binary, spy, peer, started.cases, others, variant, raw)
                    run.update(http_client=client, redis_parser=args.redis_parser)
                    if run["failed_checks"] or not run["iterations"]:
                        result["failures"].append(f"{client}, {variant}: {run['failed_checks']} failed checks")
                    result["runs"].append(run)
                    log(f"{client} {variant}: {run['server_cpu_ms_per_request']:.3f} ms per MCP request")
            finally:
                peers.stop(peer.server)
    result["machine"]["loadavg_end"] = round(os.getloadavg()[0], 2)
    text = markdown(result)
    print(text)
    (RESULTS / f"{stem}.md").write_text(text + "\n")
    (RESULTS / f"{stem}.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    log(f"wrote {RESULTS / stem}.{{md,json}}")
    return 1 if result["failures"] else 0


def markdown(result: dict) -> str:
    """Per run: the groups' CPU per MCP request and share, then the parts within them."""
    import report

    machine = result["machine"]
    config = result["config"]
    lines = [
        report.machine_line(machine),
        "",
        f"Command: `{result['command']}` · {config['vus']} virtual users · {config['seconds']:g} s per run · "
        f"{config['processes']} server processes · py-spy at {config['rate']} samples/s per process",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in result.get("versions", {}).items()),
    ]
    for run in result["runs"]:
        per_request = run["server_cpu_ms_per_request"]
        lines += [
            "",
            f"### {run['variant']}, HTTP client {run['http_client']}, Redis parser {run['redis_parser']}",
            "",
            f"{run['requests_per_s']:.0f} MCP requests/s, {run['iterations_per_s']:.0f} calls/s, "
            f"{run['failed_checks']} failed checks; server CPU {per_request:.3f} ms per MCP request, "
            f"{run['server_cpu_ms_per_call']:.3f} ms per call; {run['samples']:,} samples",
            "",
            "| part of the server | CPU per MCP request (ms) | share | of it importing |",
            "|---|---:|---:|---:|",
        ]
        by_group: dict = collections.defaultdict(list)
        for part in run["parts"]:
            by_group[part["group"]].append(part)
        for group in (*GROUPS, OTHER[0]):
            parts = by_group.get(group, [])
            share = sum(p["share"] for p in parts)
            importing = sum(p["importing_share"] for p in parts)
            lines.append(f"| **{group}** | **{share * per_request:.3f}** | **{share:.0%}** | {_share(importing)} |")
            for part in parts if len(parts) > 1 else ():
                lines.append(
                    f"| &nbsp; {part['part']} | {part['ms_per_request']:.3f} | {part['share']:.0%} | "
                    f"{_share(part['importing_share'])} |"
                )
        framework = sum(p["share"] for p in run["parts"] if p["group"] in GROUPS[:3]) * per_request
        lines += [
            "",
            f"The HTTP server, the MCP framework and session handling together: {framework:.3f} ms per MCP request.",
        ]
    if result["runs"]:
        lines += ["", "### Where in each part (the first run): its most sampled innermost frames", ""]
        for part, frames in result["runs"][0]["hot_spots"].items():
            lines.append(f"- {part}: " + "; ".join(f"`{frame}` {share:.0%}" for frame, share in frames))
    lines += [f"\n**Failure**: {failure}" for failure in result["failures"]]
    return "\n".join(lines)


def _share(value: float) -> str:
    return f"{value:.0%}" if value else ""
