"""One measured run each: pipelined throughput, slow tool calls, ping-pong latency, parallel sessions,
calibration."""

from __future__ import annotations

import dataclasses
import threading
import time

import orjson
from common import log

from .checks import Expect, check_exact_any_order, check_semantic, norm_read, norm_tools
from .servers import Spec
from .session import (
    EXIT_GRACE,
    Failure,
    Session,
    feed,
    read_answer_lines,
    read_exact,
    read_lines,
    read_messages,
)
from .workloads import BLOBS, EXP, INITIALIZED, REQ, SLOW, TASK_CREATE, TASK_CREATED, TASKS_GET, build_requests


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


#: How long a task of the ``tasks/get`` workload may take to complete before the run fails (seconds).
TASK_DONE_SECONDS = 10.0


def finish_a_task(s: Session) -> None:
    """The ``tasks/get`` workload's prelude, after ``notifications/initialized``: make the task, then poll it
    (id 0) until it is ``completed``. Unmeasured: the clock restarts once it is done."""
    s.write(TASK_CREATE)
    line = read_answer_lines(s, 1)
    if line != TASK_CREATED:
        raise Failure(f"making the task answered {line[:300]!r}")
    done = EXP["taskget"] % 0
    deadline = time.perf_counter() + TASK_DONE_SECONDS
    while True:
        s.write(REQ["taskget"] % 0)
        line = read_answer_lines(s, 1)
        if line == done:
            break
        if b'"status":"working"' not in line or time.perf_counter() > deadline:
            raise Failure(f"the task did not complete: {line[:300]!r}")
        time.sleep(0.001)
    s.restart_clock()


def pipelined(spec: Spec, wl: str, n: int, timeout: float) -> RunResult:
    """Spawn, initialize (and run the workload's prelude), then stream n requests from a writer thread while
    this thread checks the answers."""
    requests = INITIALIZED + BLOBS.get("req", wl, n)
    expected = BLOBS.get("exp", wl, n) if spec.check == "exact" else None
    s = Session(spec, timeout)
    try:
        s.initialize()
        if wl == TASKS_GET:
            s.write(INITIALIZED)
            finish_a_task(s)
            requests = requests[len(INITIALIZED) :]
        errors: list = []
        writer = threading.Thread(target=feed, args=(s, requests, errors), daemon=True)
        t0 = s.t_start
        writer.start()
        responses = None
        others = 0
        if spec.check == "exact":
            read_exact(s, expected)
        elif spec.check == "lines":
            read_lines(s, n + 1)  # cat also echoes the notification
        else:
            responses, others, t1 = read_messages(s, n)
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


@dataclasses.dataclass
class SlowResult:
    n: int
    wall_ms: float | None  # None: cut at the time limit
    cpu_us_per_call: float | None
    rss_mib: float | None
    startup_ms: float
    reordered: int = 0
    limited: bool = False


def slow_calls(spec: Spec, n: int, limit: float) -> SlowResult:
    """Spawn the server's slow-workload command, initialize, then pipeline n calls to its async ``sleep`` tool.

    Timed from the ``initialize`` answer to the last answer. Answers may come in any order; shipcode-mcp's are
    still compared byte for byte, each with the one its id must get. A run not done ``limit`` seconds after the
    ``initialize`` answer is killed and returned as cut (``limited``), not failed: a server that runs async
    tools one at a time needs n x 20 ms."""
    requests = INITIALIZED + BLOBS.get("req", SLOW, n)
    s = Session(spec, 60.0, argv=spec.slow_argv)
    try:
        s.initialize()
        s.rearm(limit)
        errors: list = []
        writer = threading.Thread(target=feed, args=(s, requests, errors), daemon=True)
        writer.start()
        data = responses = None
        try:
            if spec.check == "exact":
                data = read_answer_lines(s, n)
                t1 = time.perf_counter()
            else:
                responses, _, t1 = read_messages(s, n)
        except Failure:
            if not s.killed:
                raise
            writer.join(EXIT_GRACE)  # the killed server's pipe is broken: the writer stops
            s.abort()
            return SlowResult(n, None, None, None, s.startup_ms, limited=True)
        s.sample_rss()
        writer.join()
        if errors:
            raise Failure(errors[0])
        reordered = 0
        if data is not None:
            problems, reordered = check_exact_any_order(data, EXP["sleep"], 2, n)
            if problems:
                raise Failure("; ".join(problems))
        reordered = max(reordered, _conclude(s, spec, SLOW, n, responses))
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
    cpu = s.cpu_since_init() if s.cpu_at_init is not None else None
    return SlowResult(
        n=n,
        wall_ms=(t1 - s.t_init) * 1e3,
        cpu_us_per_call=None if cpu is None else cpu / n * 1e6,
        rss_mib=s.max_rss_mib,
        startup_ms=s.startup_ms,
        reordered=reordered,
    )


def pingpong(spec: Spec, samples: int, budget: float, timeout: float) -> dict:
    """One ping, wait for its answer, the next: round-trip times in microseconds, and the peak RSS of a server
    that never holds more than one request (its footprint at rest, start-up included)."""
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
        s.sample_rss()
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
        "rss_mib": s.max_rss_mib,
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
        writers = [threading.Thread(target=feed, args=(s, requests, errors, go), daemon=True) for s in sessions]
        results: list = [None] * k

        def reader(idx: int, s: Session) -> None:
            try:
                got = None
                if spec.check == "exact":
                    read_exact(s, expected)
                elif spec.check == "lines":
                    read_lines(s, n + 1)
                else:
                    got, _, t_last = read_messages(s, n)
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
        if spec.serves(TASKS_GET) and TASKS_GET in workloads:
            finish_a_task(s)
        for wl in workloads:
            if not spec.serves(wl):
                continue
            n = 20
            while True:
                blob = build_requests(wl, n, next_id)
                t = time.perf_counter()
                errors: list = []
                w = threading.Thread(target=feed, args=(s, blob, errors), daemon=True)
                w.start()
                if spec.check == "semantic":
                    read_messages(s, n)
                else:
                    read_lines(s, n)
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
    got = read_messages(s, len(asks))[0]
    by_id = {m.get("id"): m for m in got if isinstance(m, dict)}
    supports, tools, read, notes = set(), None, None, []
    try:
        tools = norm_tools(by_id[2]["result"])
    except (KeyError, TypeError, AttributeError):
        notes.append("tools/list failed")
        tools = []
    names = {t[0] for t in tools}
    if "echo" in names and Expect().check("echo", "hi", (by_id.get(3) or {}).get("result")) is None:
        supports.add("echo")
    if "add" in names and Expect().check("add", 5.0, (by_id.get(4) or {}).get("result")) is None:
        supports.add("add")
    try:
        read = norm_read(by_id[5]["result"])
        supports.add("read")
    except (KeyError, TypeError, AttributeError):
        pass
    spec.expect = Expect(tools=tools, read=read, supports=supports)
    if "sleep" in names:  # a tool of that name is taken to be the slow workload's (its answers are checked)
        spec.slow_argv = spec.argv
    missing = {"echo", "add", "read"} - supports
    if missing:
        spec.note = (spec.note + "; " if spec.note else "") + (
            "does not serve " + ", ".join(sorted(missing)) + " like the benchmark catalogue: those workloads are n/a"
        )
    return 6
