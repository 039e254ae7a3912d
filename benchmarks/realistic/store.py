"""The workload's Redis: Debian's ``redis-server`` on a loopback port, in its own temporary folder, without
persistence, seeded with the data of dataset.py (through ``redis-cli --pipe``), stopped at the end.

Keys: ``user:<id>`` (hash: name, tier), ``cart:<id>`` (list of ``product:quantity``), ``history:<id>`` (list of
product ids bought), ``popular`` and ``popular:<category>`` (sorted sets of product ids by popularity),
``ratelimit:<id>`` (counters, from 0). The tools also write ``recent:<id>``, ``views`` and ``cart_totals``,
which no answer reads.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

import dataset
from httpbench import servers

READY_SECONDS = 10


def missing() -> str:
    """Why Redis cannot run here ("" when it can)."""
    for program in ("redis-server", "redis-cli"):
        if not shutil.which(program):
            return f"{program} is not installed (apt-get install -y redis-server)"
    return ""


def _resp(*words: object) -> bytes:
    parts = [str(word).encode() for word in words]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(part), part) for part in parts)


def seed_commands() -> bytes:
    """Every command that loads the data, in Redis's wire protocol."""
    catalogue = dataset.products()
    out = []
    for uid, user in dataset.users().items():
        out.append(_resp("HSET", f"user:{uid}", "name", user["name"], "tier", user["tier"]))
        out.append(_resp("SET", f"ratelimit:{uid}", 0))
    for uid, lines in dataset.carts().items():
        out.append(_resp("RPUSH", f"cart:{uid}", *(f"{pid}:{quantity}" for pid, quantity in lines)))
    for uid, bought in dataset.histories().items():
        if bought:
            out.append(_resp("RPUSH", f"history:{uid}", *bought))
    for key, scores in dataset.popularity(catalogue).items():
        out.append(_resp("ZADD", key, *(word for pid, score in scores.items() for word in (score, pid))))
    return b"".join(out)


class Store:
    """One redis-server process; ``url`` once started."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.folder = tempfile.TemporaryDirectory(prefix="realistic-redis-")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.folder.name]
        argv += ["--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", f"{self.folder.name}/redis.log"]
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + READY_SECONDS
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                    connection.sendall(_resp("PING"))
                    if connection.recv(64) == b"+PONG\r\n":
                        break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)
        self.seed()

    def seed(self) -> None:
        """Empty the database and load the data again (every run starts from the same state)."""
        done = subprocess.run(
            ["redis-cli", "-p", str(self.port), "--pipe"],
            input=_resp("FLUSHDB") + seed_commands(),
            capture_output=True,
            timeout=60,
        )
        if done.returncode != 0 or b"errors: 0," not in done.stdout:
            raise RuntimeError(f"seeding Redis failed: {(done.stdout + done.stderr)[-300:]!r}")

    def stop(self) -> None:
        servers.stop(self)  # terminates its process, killed when still there after 10 s
        self.folder.cleanup()
