"""One child server over raw pipes: spawn, handshake, EOF, reaping, and its CPU and peak RSS."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import orjson

from .checks import check_init
from .servers import Spec
from .workloads import INIT_REQUEST

READ_CHUNK = 1 << 18
EXIT_GRACE = 10.0  # seconds a server may take to exit after EOF
WRITE_CHUNK = 1 << 20


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

    def __init__(self, spec: Spec, timeout: float, argv: list | None = None):
        self.spec = spec
        self.errfile = tempfile.TemporaryFile()
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(
            argv or spec.argv,
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
        self.t_start = None  # when the measured part starts: the initialize answer, or the end of a prelude
        self.cpu_at_init = None
        self.hwm_mib = None

    def rearm(self, seconds: float) -> None:
        """Restart the watchdog: the server is killed ``seconds`` from now unless it was reaped."""
        self.watchdog.cancel()
        self.watchdog = threading.Timer(seconds, self._timeout)
        self.watchdog.daemon = True
        self.watchdog.start()

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
        self.t_init = self.t_start = time.perf_counter()
        self.cpu_at_init = _proc_cpu(self.pid)
        why = check_init(line, self.spec)
        if why:
            raise Failure(why)
        self.init_line = line

    def restart_clock(self) -> None:
        """Measure from now on: the wall time and the CPU of what a workload's prelude did are not counted."""
        self.t_start = time.perf_counter()
        self.cpu_at_init = _proc_cpu(self.pid)

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


def feed(session: Session, data: bytes, errors: list, start: threading.Event | None = None) -> None:
    if start is not None:
        start.wait()
    try:
        session.write(data)
    except OSError as exc:
        errors.append(f"writing requests failed: {exc!r}")


def locate_difference(expected: bytes, off: int, got: bytes) -> str:
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


def read_exact(s: Session, expected: bytes) -> None:
    total = len(expected)
    off = 0
    data = s.pending
    s.pending = b""
    fd = s.fout
    while True:
        if data:
            if not expected.startswith(data, off):
                raise Failure(locate_difference(expected, off, data))
            off += len(data)
            if off == total:
                return
        data = os.read(fd, READ_CHUNK)
        if not data:
            nl = b"\n"
            raise Failure(s._eof_reason(f"after {expected.count(nl, 0, off)} of {expected.count(nl)} responses"))


def read_lines(s: Session, count: int) -> None:
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


def read_answer_lines(s: Session, count: int) -> bytes:
    """Read until ``count`` whole lines came; return them (whatever follows stays pending)."""
    chunks = [s.pending]
    s.pending = b""
    seen = chunks[0].count(b"\n")
    fd = s.fout
    while seen < count:
        data = os.read(fd, READ_CHUNK)
        if not data:
            raise Failure(s._eof_reason(f"after {seen} of {count} responses"))
        chunks.append(data)
        seen += data.count(b"\n")
    buf = b"".join(chunks)
    cut = 0
    for _ in range(count):
        cut = buf.index(b"\n", cut) + 1
    s.pending = buf[cut:]
    return buf[:cut]


def read_messages(s: Session, count: int) -> tuple[list, int, float]:
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
