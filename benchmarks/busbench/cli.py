"""``run.py bus``: how long an update published on one server takes to reach a listener on another.

Two servers sharing one Redis (``--redis``), standing for two machines: a ``subscriptions/listen`` stream on
each, ``--count`` updates published one after the other by a tool of the first (``bus_app.py``), which answers
with the instant it published (the monotonic clock, one for every process of the machine); each listener's
thread notes the instant each notification arrives. With ``--processes``: one server of two processes without
Redis, which tell each other over their relay sockets; the listeners are legacy sessions' streams, one held by
each process, the updates published by a session of the second. Every notification is checked, whole bytes.
"""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import statistics
import sys
import threading
import time

import orjson
from common import HERE, log
from httpbench import exchange, servers

sys.path.insert(0, os.path.join(HERE, "realistic"))  # its modules import each other by their bare names
from store import Store, missing  # noqa: E402

APP = str(HERE / "busbench" / "bus_app.py")
URI = "bench://news"
#: The goal: the median time from publishing on one server to arriving at a listener on the other (ms).
GOAL_MS = 50.0
WARMUP = 20
MODERN = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
MODERN |= {"mcp-protocol-version": "2026-07-28"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
EVENT = b"event: message\ndata: "


def options(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="run.py bus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="updates measured (default 1000)")
    parser.add_argument("--engine", choices=("compiled", "pure"), default="compiled", help="default compiled")
    parser.add_argument(
        "--processes", action="store_true", help="one server of two processes without Redis instead of two servers"
    )
    parser.add_argument("--check-targets", action="store_true", help=f"exit 2 when the median misses {GOAL_MS:g} ms")
    return parser.parse_args(argv)


class EmptyStore(Store):
    """A redis-server holding nothing: the bus only publishes."""

    def seed(self) -> None:
        pass


class Listener(threading.Thread):
    """A stream of notifications read in a thread: each event's bytes and the instant it arrived."""

    def __init__(self, port: int, method: str, body: bytes, headers: dict) -> None:
        super().__init__(daemon=True)
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.connection.request(method, "/mcp", body, headers)
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise RuntimeError(f"the stream was refused: {self.response.status} {self.response.read()!r}")
        self.arrivals: queue.Queue = queue.Queue()
        self.start()

    def run(self) -> None:
        pending = b""
        try:
            while True:
                chunk = self.response.read1(65536)
                arrived = time.monotonic_ns()
                if not chunk:
                    return
                pending += chunk
                while b"\n\n" in pending:
                    event, _, pending = pending.partition(b"\n\n")
                    if event != b":":  # a keep-alive comment
                        self.arrivals.put((arrived, event + b"\n\n"))
        except (OSError, http.client.HTTPException):  # the server stopped
            return

    def next(self) -> tuple[int, bytes]:
        return self.arrivals.get(timeout=10)


class Session:
    """A legacy session: its requests, its stream."""

    def __init__(self, port: int) -> None:
        self.port = port
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        _, headers, _ = self.post(rpc("initialize", hello, 1), LEGACY)
        self.id = headers["mcp-session-id"]
        self.headers = {**LEGACY, "mcp-session-id": self.id, "mcp-protocol-version": "2025-06-18"}
        self.post(rpc("notifications/initialized", None), self.headers)

    def post(self, body: bytes, headers: dict) -> tuple[int, dict, bytes]:
        return exchange.post(self.port, body, headers)

    def end(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request("DELETE", "/mcp", headers=self.headers)
            connection.getresponse().read()
        finally:
            connection.close()

    def listener(self) -> Listener:
        self.post(rpc("resources/subscribe", {"uri": URI}, 2), self.headers)
        get = {"accept": "text/event-stream", "mcp-session-id": self.id, "mcp-protocol-version": "2025-06-18"}
        return Listener(self.port, "GET", b"", get)


def rpc(method: str, params: dict | None, rid: int | None = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        message["id"] = rid
    if params is not None:
        message["params"] = params
    return orjson.dumps(message)


def modern_listener(port: int) -> Listener:
    params = {"notifications": {"resourceSubscriptions": [URI]}, "_meta": META}
    body = orjson.dumps({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": params})
    listener = Listener(port, "POST", body, {**MODERN, "mcp-method": "subscriptions/listen"})
    listener.next()  # the acknowledgement
    return listener


def expected(listener_kind: str) -> bytes:
    meta = b'"_meta":{"io.modelcontextprotocol/subscriptionId":"l"},' if listener_kind == "modern" else b""
    line = b'{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{%s"uri":"%s"}}\n\n'
    return EVENT + line % (meta, URI.encode())


def measure(publish, listeners: dict, kind: str, count: int) -> dict:
    """``count`` updates (after a warm-up): each listener's delays in ms, every notification checked."""
    delays: dict = {name: [] for name in listeners}
    want = expected(kind)
    for round_ in range(WARMUP + count):
        published = publish()
        for name, listener in listeners.items():
            arrived, event = listener.next()
            if event != want:
                raise RuntimeError(f"{name}: unexpected event {event!r}")
            if round_ >= WARMUP:
                delays[name].append((arrived - published) / 1e6)
    return delays


def two_servers(engine_env: dict, count: int) -> tuple[str, dict]:
    store = EmptyStore(servers.free_port())
    store.start()
    started = []
    try:
        for name in ("one", "other"):
            argv = [servers.SHIPCODE, APP, "--http", "127.0.0.1:{port}", "--redis", store.url]
            server = servers.Server(name, name, argv)
            server.env = engine_env
            servers.start(server)
            started.append(server)
        one, other = started
        listeners = {"other server, through Redis": modern_listener(other.port)}
        listeners["same server"] = modern_listener(one.port)
        connection = http.client.HTTPConnection("127.0.0.1", one.port, timeout=60)
        params = {"name": "stamp", "arguments": {"uri": URI}, "_meta": META}
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        headers = {**MODERN, "mcp-method": "tools/call", "mcp-name": "stamp"}

        def publish() -> int:
            connection.request("POST", "/mcp", body, headers)
            return int(orjson.loads(connection.getresponse().read())["result"]["content"][0]["text"])

        return "two servers sharing one Redis", measure(publish, listeners, "modern", count)
    finally:
        for server in started:
            servers.stop(server)
        store.stop()


def two_processes(engine_env: dict, count: int) -> tuple[str, dict]:
    server = servers.Server("processes", "processes", [servers.SHIPCODE, APP, "--http", "127.0.0.1:{port}"])
    server.argv += ["--processes", "2"]
    server.env = engine_env
    servers.start(server)
    try:
        sessions: dict = {}
        while len(sessions) < 2:  # one held by each process: a session's id begins with its process's index
            session = Session(server.port)
            index = session.id.partition(".")[0]
            if index in sessions:  # ended: while the other process starts, sessions must not pile up on one
                session.end()
            else:
                sessions[index] = session
        listeners = {"other process": sessions["0"].listener(), "same process": sessions["1"].listener()}
        body = rpc("tools/call", {"name": "stamp", "arguments": {"uri": URI}}, 3)

        def publish() -> int:
            answer = sessions["1"].post(body, sessions["1"].headers)[2]
            return int(orjson.loads(answer)["result"]["content"][0]["text"])

        return "one server of two processes, without Redis", measure(publish, listeners, "legacy", count)
    finally:
        servers.stop(server)


def main(argv: list) -> int:
    args = options(argv)
    engine_env = {"SHIPCODE_MCP_NO_EXTENSIONS": "1"} if args.engine == "pure" else {}
    if args.processes:
        setup, delays = two_processes(engine_env, args.count)
    else:
        problem = missing()
        if problem:
            log(problem)
            return 2
        setup, delays = two_servers(engine_env, args.count)
    print(f"The bus: {args.count} updates, {setup}, {args.engine} engine (ms from publishing to arriving)\n")
    print("| listener | median | p99 | max |\n| --- | --- | --- | --- |")
    for name, values in delays.items():
        values.sort()
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(f"| {name} | {statistics.median(values):.2f} | {p99:.2f} | {values[-1]:.2f} |")
    far = statistics.median(next(iter(delays.values())))
    met = far <= GOAL_MS
    print(
        f"\nGoal: median within {GOAL_MS:g} ms on the other {'process' if args.processes else 'server'}: "
        f"{'met' if met else 'missed'} ({far:.2f} ms)"
    )
    return 2 if args.check_targets and not met else 0
