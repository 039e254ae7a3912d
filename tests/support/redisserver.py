"""A real ``redis-server`` for tests: on a free loopback port, no persistence, its database emptied on demand."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

#: Why a test needing Redis is skipped when there is none.
NO_REDIS = "redis-server is not installed (apt-get install -y redis-server)"
READY_SECONDS = 30


def have_redis() -> bool:
    """Whether ``redis-server`` is on the PATH."""
    return shutil.which("redis-server") is not None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _command(port: int, *words: str) -> bytes:
    """Send one command; the first line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
        connection.sendall(b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w.encode()) for w in words))
        return connection.recv(64)


class RedisServer:
    """One ``redis-server`` process on loopback; ``url`` names its database 0."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.start()

    def start(self) -> None:
        """Start it (again, after :meth:`stop`: on the same port, empty)."""
        self.folder = tempfile.TemporaryDirectory(prefix="shipcode-redis-")
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.folder.name]
        argv += ["--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", f"{self.folder.name}/log"]
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + READY_SECONDS
        while True:
            try:
                if _command(self.port, "PING") == b"+PONG\r\n":
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def flush(self) -> None:
        """Empty the database."""
        assert _command(self.port, "FLUSHDB") == b"+OK\r\n"

    def keys(self) -> int:
        """How many keys the database holds."""
        return int(_command(self.port, "DBSIZE")[1:].strip())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.folder.cleanup()
