"""Helpers for the hostile-input tests: the real server over pipes, expected bytes, the corpus.

Imported by ``process/test_hostile_stdio.py``, ``engine/test_differential.py`` and the standalone ``fuzz_engine.py``
beside it; it imports nothing from the tests' conftest, only from ``wire``.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

from support.wire import HELLO, PARSE, SERVER_COMMAND, TOOLS, engine_env, error, ping, pong, result

CORPUS = Path(__file__).parents[1] / "corpus"

# -- expected bytes ------------------------------------------------------------------------

INTERNAL = b',"error":{"code":-32603,"message":"Internal error"}}\n'


def echo_call(rid: int, text: bytes) -> bytes:
    """An echo request whose JSON text argument is ``text`` (already escaped), without newline."""
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"' % rid
        + text
        + b'"}}}'
    )


def echo_answer(rid: int, text: bytes) -> bytes:
    return result(b'{"content":[{"type":"text","text":"' + text + b'"}]}', rid)


def mixed_requests(count: int, seed: int = 1) -> tuple[bytes, bytes]:
    """``count`` requests of every common kind, and the exact answers expected, in order.

    Notifications, client responses and blank lines (which get no answer) are mixed in too.
    """
    rng = random.Random(seed)
    lines = []
    answers = []
    for rid in range(1, count + 1):
        kind = rng.randrange(10)
        if kind < 3:
            lines.append(ping(rid))
            answers.append(pong(rid))
        elif kind == 3:
            lines.append(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % rid)
            answers.append(result(TOOLS, rid))
        elif kind == 4:
            text = b"x%d \xc3\xa9\xe6\x97\xa5" % rid
            lines.append(echo_call(rid, text) + b"\n")
            answers.append(echo_answer(rid, text))
        elif kind == 5:
            lines.append(
                b'{"jsonrpc":"2.0","id":"s%d","method":"tools/call","params":{"name":"add","arguments":'
                b'{"a":%d,"b":0.5}}}\n' % (rid, rid)
            )
            answers.append(result(b'{"content":[{"type":"text","text":"%d.5"}]}' % rid, f"s{rid}"))
        elif kind == 6:
            lines.append(
                b'{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"file:///hello.txt"}}\r\n' % rid
            )
            answers.append(result(HELLO, rid))
        elif kind == 7:
            lines.append(b'{"jsonrpc":"2.0","id":%d,"method":"nope"}\n' % rid)
            answers.append(error(-32601, "Method not found", rid))
        elif kind == 8:
            errors = (
                (b"not json %d\n" % rid, PARSE),
                (
                    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call"}\n' % rid,
                    error(-32602, "Invalid params", rid),
                ),
                (
                    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nope"}}\n' % rid,
                    error(-32602, "Unknown tool", rid),
                ),
                (
                    b'{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"file:///x"}}\n' % rid,
                    error(-32002, "Resource not found", rid),
                ),
            )
            line, answer = errors[rid % 4]
            lines.append(line)
            answers.append(answer)
        else:
            silent = (
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}\n' % rid,
                b'{"jsonrpc":"2.0","id":%d,"result":{}}\n' % rid,
                b" \t\r\n",
                b"\n",
            )
            lines.append(silent[rid % 4])
    return b"".join(lines), b"".join(answers)


def corpus_files() -> list[Path]:
    return sorted(path for path in CORPUS.iterdir() if path.is_file())


def corpus_messages() -> list[bytes]:
    """Every non-empty line of every corpus file (without its newline)."""
    lines = []
    for path in corpus_files():
        lines.extend(line for line in path.read_bytes().split(b"\n") if line)
    return lines


# -- the real server -----------------------------------------------------------------------


class Exit:
    """How a server process ended."""

    def __init__(self, status: int, cpu_seconds: float) -> None:
        self.status = status
        self.cpu_seconds = cpu_seconds

    def __repr__(self) -> str:
        return f"Exit(status={self.status}, cpu_seconds={self.cpu_seconds:.2f})"


class ServerProcess:
    """``shipcode-mcp`` as a subprocess over pipes, driven step by step.

    stderr is collected by a thread (so the server never blocks on it); stdin can be fed
    by a thread that records how far it got (:meth:`start_writer`); stdout is read with
    timeouts. Peak memory is the kernel's high-water mark of the server's own address space
    (``VmHWM``), read while the server is still running: ``ru_maxrss`` from ``wait4`` would
    also count the test process, whose address space the child shares until it execs.
    """

    def __init__(self, engine_name: str, *args: str, command: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*(command or SERVER_COMMAND), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=engine_env(engine_name),
            bufsize=0,
        )
        self.pid = self.proc.pid
        self.exit: Exit | None = None
        self._stderr = bytearray()
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()
        self.written = 0  # bytes of stdin the writer thread got into the pipe
        self.writer_error: BaseException | None = None
        self._writer: threading.Thread | None = None

    # stdin
    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)

    def start_writer(self, data: bytes, piece: int = 65536, close: bool = True) -> None:
        """Write ``data`` from a thread (closing stdin after, unless told not to)."""

        def write() -> None:
            view = memoryview(data)
            try:
                for start in range(0, len(view), piece):
                    self.proc.stdin.write(view[start : start + piece])
                    self.written = start + len(view[start : start + piece])
                if close:
                    self.proc.stdin.close()
            except (BrokenPipeError, ValueError, OSError) as error:
                self.writer_error = error

        self._writer = threading.Thread(target=write, daemon=True)
        self._writer.start()

    def wait_writer(self, timeout: float = 120) -> None:
        assert self._writer is not None
        self._writer.join(timeout)
        assert not self._writer.is_alive(), "the writer is stuck"

    def wait_until_stalled(self, quiet: float = 0.5, timeout: float = 30) -> int:
        """Wait until the writer has made no progress for ``quiet`` seconds; return bytes written."""
        deadline = time.monotonic() + timeout
        last = -1
        since = time.monotonic()
        while time.monotonic() < deadline:
            now = self.written
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return now
            time.sleep(0.02)
        raise AssertionError(f"the writer never stalled (wrote {self.written} bytes)")

    def close_stdin(self) -> None:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass

    # stdout
    def read_some(self, size: int = 1 << 20, timeout: float = 60) -> bytes:
        """Whatever stdout has (at most ``size`` bytes), waiting up to ``timeout``; b"" at EOF."""
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise AssertionError(f"no output within {timeout} s")
        return os.read(fd, size)

    def read_exactly(self, size: int, timeout: float = 60) -> bytes:
        deadline = time.monotonic() + timeout
        got = bytearray()
        while len(got) < size:
            chunk = self.read_some(size - len(got), max(0.0, deadline - time.monotonic()))
            if not chunk:
                break
            got += chunk
        return bytes(got)

    def read_to_eof(self, timeout: float = 120) -> bytes:
        deadline = time.monotonic() + timeout
        got = bytearray()
        while True:
            chunk = self.read_some(1 << 20, max(0.0, deadline - time.monotonic()))
            if not chunk:
                return bytes(got)
            got += chunk

    def close_stdout(self) -> None:
        self.proc.stdout.close()

    # the process
    def peak_rss_mib(self) -> float:
        """High-water mark of the server's resident memory so far, in MiB."""
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        raise AssertionError("no VmHWM in /proc status")

    def cpu_seconds(self) -> float:
        """CPU time the running server has used so far."""
        with open(f"/proc/{self.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def signal(self, signum: int = signal.SIGTERM) -> None:
        os.kill(self.pid, signum)

    def wait(self, timeout: float = 60) -> Exit:
        """Wait for the exit (polling ``wait4``, so the wait is bounded); kill it if it does not come."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"the server did not exit within {timeout} s")
            time.sleep(0.01)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.exit = Exit(self.proc.returncode, usage.ru_utime + usage.ru_stime)
        return self.exit

    def stderr(self, timeout: float = 10) -> bytes:
        """Everything the server wrote on stderr (call after it exited)."""
        self._stderr_thread.join(timeout)
        return bytes(self._stderr)

    def kill(self) -> None:
        if self.proc.returncode is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
            self.proc.wait()

    def _drain_stderr(self) -> None:
        fd = self.proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._stderr += chunk

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        if self._writer is not None:
            # The server is gone, so the writer's next write fails: let it end before its
            # descriptor is closed, or a later server's stdin could reuse the number under it.
            self._writer.join(10)
            assert not self._writer.is_alive(), "the writer is stuck"
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._stderr_thread.join(10)
        self.proc.stderr.close()


def baseline_rss_mib(engine_name: str, *args: str) -> float:
    """Peak RSS of a server that answered one ping: the yardstick for memory bounds."""
    with ServerProcess(engine_name, *args) as server:
        server.send(ping(1))
        assert server.read_exactly(len(pong(1))) == pong(1)
        peak = server.peak_rss_mib()
        server.close_stdin()
        assert server.wait().status == 0
    return peak
