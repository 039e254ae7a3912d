"""A legacy session's life against one stateless call, in server CPU seconds.

    python benchmarks/run.py http --session-life [--lives N] [--engines compiled,pure] [--processes 2]

A *session life* is what a 2025-era client does for one tool call: ``initialize``,
``notifications/initialized``, the ``tools/call`` and ``DELETE``, four requests on one keep-alive
connection. A *stateless call* is the same ``tools/call`` in the 2026-07-28 era, one POST. The server's
CPU seconds (its processes' user + system time, from /proc) are read before and after ``N`` of each,
interleaved in rounds; the figure is the median round's CPU per life and per call, and their ratio (the
goal: a life costs at most 2 calls). Every answer is checked: the call's body byte for byte against the
stdio server's line, the others by status and session header. The bare ASGI floor on the same uvicorn
(``floor_app.py``) is measured too: four of its requests are the least a life's four requests can cost.

Lives and calls are also run with a new connection for every request (a client without keep-alive), a
quarter as many. With ``--processes N`` the server runs N processes on one socket, where such a request
lands on whichever process accepts it and must still be served by the one holding its session: the lives
whose requests were answered ``Session not found`` are counted, and calls in one session are measured on
a keep-alive connection to the process holding it and on one to another process (every call relayed).
"""

from __future__ import annotations

import socket
import statistics
import time

from common import log

from . import exchange, servers

#: The workload whose tool is called.
WORKLOAD = "add"
ROUNDS = 5


class Connection:
    """One keep-alive HTTP/1.1 connection to the server, with the least client-side work."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def ask(self, method: str, headers: dict, body: bytes = b"") -> tuple[int, dict, bytes]:
        """One request: (status, lower-cased headers, body)."""
        head = f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.sock.sendall(head.encode() + b"\r\n" + body)
        while b"\r\n\r\n" not in self.buffer:
            self.more()
        raw, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        length = int(fields.get("content-length", "0"))
        while len(self.buffer) < length:
            self.more()
        answer, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, fields, answer

    def more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


class NewConnections:
    """Asks like :class:`Connection`, each request on a connection of its own (a client without keep-alive)."""

    def __init__(self, port: int) -> None:
        self.port = port

    def ask(self, method: str, headers: dict, body: bytes = b"") -> tuple[int, dict, bytes]:
        connection = Connection(self.port)
        try:
            return connection.ask(method, headers, body)
        finally:
            connection.close()

    def close(self) -> None:
        pass


class NotFound(RuntimeError):
    """A request of a life was answered 404 (its session not found)."""


def session_life(connection: Connection | NewConnections, legacy_call: exchange.Request, expected: bytes) -> None:
    """One life: initialize, initialized, the call, DELETE; every answer checked."""
    status, fields, body = connection.ask("POST", exchange.POST_HEADERS, exchange.initialize_body())
    session = fields.get("mcp-session-id")
    if status != 200 or session is None or b'"result"' not in body:
        raise RuntimeError(f"initialize: HTTP {status} {body[:200]!r}")
    ids = {"Mcp-Session-Id": session, "MCP-Protocol-Version": exchange.LEGACY}
    status, _, body = connection.ask("POST", {**exchange.POST_HEADERS, **ids}, exchange.INITIALIZED)
    if status == 404:
        raise NotFound(body)
    if status != 202 or body:
        raise RuntimeError(f"notifications/initialized: HTTP {status} {body[:200]!r}")
    status, fields, body = connection.ask("POST", {**legacy_call.headers, **ids}, legacy_call.body)
    if status == 404:
        raise NotFound(body)
    if status != 200 or body != expected or fields.get("mcp-session-id") != session:
        raise RuntimeError(f"tools/call in a session: HTTP {status} {body[:200]!r}")
    status, _, body = connection.ask("DELETE", ids)
    if status == 404:
        raise NotFound(body)
    if status != 200:
        raise RuntimeError(f"DELETE: HTTP {status} {body[:200]!r}")


def stateless_call(connection: Connection, call: exchange.Request, expected: bytes) -> None:
    status, _, body = connection.ask("POST", call.headers, call.body)
    if status != 200 or body != expected:
        raise RuntimeError(f"stateless tools/call: HTTP {status} {body[:200]!r}")


def measure(server: servers.Server, lives: int, fresh: bool = False) -> dict:
    """Median server CPU microseconds per session life and per stateless call, over interleaved rounds; with
    ``fresh``, each request on a new connection, and how many lives met ``Session not found``."""
    command = [servers.SHIPCODE, servers.APP]
    modern = exchange.workload_post(WORKLOAD, "modern")
    legacy = exchange.workload_post(WORKLOAD, "legacy")
    modern_answer = exchange.stdio_answer(command, server.environ(), modern, "modern")
    legacy_answer = exchange.stdio_answer(command, server.environ(), legacy, "legacy")
    pids = servers.process_tree(server.process.pid)
    connection = NewConnections(server.port) if fresh else Connection(server.port)
    not_found = 0

    def live() -> None:
        nonlocal not_found
        try:
            session_life(connection, legacy, legacy_answer)
        except NotFound:
            not_found += 1

    try:
        for _ in range(lives // 10):  # warm up
            live()
            stateless_call(connection, modern, modern_answer)
        not_found = 0
        per_life, per_call, wall = [], [], []
        for _ in range(ROUNDS):
            before, started = servers.cpu_seconds(pids), time.perf_counter()
            for _ in range(lives):
                live()
            middle, ended = servers.cpu_seconds(pids), time.perf_counter()
            for _ in range(lives):
                stateless_call(connection, modern, modern_answer)
            after = servers.cpu_seconds(pids)
            per_life.append((middle - before) / lives * 1e6)
            per_call.append((after - middle) / lives * 1e6)
            wall.append((ended - started) / lives * 1e6)
    finally:
        connection.close()
    life, call = statistics.median(per_life), statistics.median(per_call)
    return {
        "life_us": life,
        "call_us": call,
        "ratio": life / call if call else float("inf"),
        "life_wall_us": statistics.median(wall),
        "not_found": not_found,
        "lives": lives * ROUNDS,
    }


def relayed_call_us(server: servers.Server, calls: int) -> tuple[float, float]:
    """Median server CPU microseconds per call in one session: on a keep-alive connection to the process
    holding it, and on one to another process (each call relayed)."""
    legacy = exchange.workload_post(WORKLOAD, "legacy")
    expected = exchange.stdio_answer([servers.SHIPCODE, servers.APP], server.environ(), legacy, "legacy")
    found: dict = {}  # a keep-alive connection to each of two processes (a session opened on one says which)
    for _ in range(400):
        probe = Connection(server.port)
        _, opened, _ = probe.ask("POST", exchange.POST_HEADERS, exchange.initialize_body())
        probe.ask("DELETE", {"Mcp-Session-Id": opened["mcp-session-id"]})
        process = opened["mcp-session-id"].split(".")[0]
        if process in found:
            probe.close()
            time.sleep(0.02)
        else:
            found[process] = probe
        if len(found) == 2:
            break
    if len(found) < 2:
        raise RuntimeError("every connection landed on one process")
    home, away = found.values()
    _, fields, _ = home.ask("POST", exchange.POST_HEADERS, exchange.initialize_body())
    ids = {"Mcp-Session-Id": fields["mcp-session-id"], "MCP-Protocol-Version": exchange.LEGACY}
    home.ask("POST", {**exchange.POST_HEADERS, **ids}, exchange.INITIALIZED)
    pids = servers.process_tree(server.process.pid)
    figures: dict = {"home": [], "away": []}
    chunk = 50  # calls on one connection while the other waits: well within uvicorn's keep-alive time
    for _ in range(ROUNDS):
        spent = {"home": 0.0, "away": 0.0}
        for _ in range(max(calls // chunk, 1)):
            for name, connection in (("home", home), ("away", away)):
                before = servers.cpu_seconds(pids)
                for _ in range(chunk):
                    status, _, body = connection.ask("POST", {**legacy.headers, **ids}, legacy.body)
                    if status != 200 or body != expected:
                        raise RuntimeError(f"tools/call ({name}): HTTP {status} {body[:200]!r}")
                spent[name] += servers.cpu_seconds(pids) - before
        for name, seconds in spent.items():
            figures[name].append(seconds / (max(calls // chunk, 1) * chunk) * 1e6)
    home.close()
    away.close()
    return statistics.median(figures["home"]), statistics.median(figures["away"])


def floor_request_us(lives: int) -> float:
    """Median server CPU microseconds per request of the bare ASGI floor (one keep-alive connection)."""
    floor = next(s for s in servers.servers() if s.name == "floor")
    servers.prepare([floor])
    if floor.note:
        log(f"floor: skipped: {floor.note}")
        return float("nan")
    servers.start(floor)
    try:
        pids = servers.process_tree(floor.process.pid)
        connection = Connection(floor.port)
        request = exchange.workload_post(WORKLOAD, "modern")
        rounds = []
        for _ in range(ROUNDS):
            before = servers.cpu_seconds(pids)
            for _ in range(lives):
                status, _, _ = connection.ask("POST", request.headers, request.body)
                if status != 200:
                    raise RuntimeError(f"floor: HTTP {status}")
            rounds.append((servers.cpu_seconds(pids) - before) / lives * 1e6)
        connection.close()
    finally:
        servers.stop(floor)
    return statistics.median(rounds)


def main(lives: int, engines: list, processes: int = 1) -> int:
    """Measure each engine's server (and the floor); print a table; 1 when an answer was wrong."""
    started = time.monotonic()
    chosen = [s for s in servers.servers() if s.name in engines]
    servers.prepare(chosen)
    rows, relayed = [], []
    for server in chosen:
        if server.note:
            log(f"{server.name}: skipped: {server.note}")
            continue
        if processes > 1:
            server.argv = [*server.argv, "--processes", str(processes)]
        servers.start(server)
        try:
            time.sleep(2 if processes > 1 else 0)  # every process listening
            log(f"{server.name}: {ROUNDS} rounds of {lives} session lives and {lives} stateless calls")
            rows.append((f"{server.label}, keep-alive", measure(server, lives)))
            log(f"{server.name}: {ROUNDS} rounds of {lives // 4} of each, a new connection for every request")
            rows.append((f"{server.label}, a connection per request", measure(server, lives // 4, fresh=True)))
            if processes > 1:
                log(f"{server.name}: {ROUNDS} rounds of {lives} calls in one session, on its process and on another")
                relayed.append((server.label, *relayed_call_us(server, lives)))
        except RuntimeError as problem:
            print(f"{server.label}: {problem}")
            return 1
        finally:
            servers.stop(server)
    floor = floor_request_us(lives)
    where = f"{processes} processes" if processes > 1 else "1 process"
    print(
        f"| {where}, tool {WORKLOAD}, {lives} per round, median of {ROUNDS} | server CPU per session life | "
        "per stateless call | ratio (goal <= 2) | wall time per life | lives with Session not found |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for label, row in rows:
        print(
            f"| {label} | {row['life_us']:.0f} us | {row['call_us']:.0f} us | {row['ratio']:.2f} | "
            f"{row['life_wall_us']:.0f} us | {row['not_found']} of {row['lives']} |"
        )
    print(
        f"| bare ASGI floor, 4 requests (the least a life's 4 requests cost here) | {4 * floor:.0f} us | "
        f"{floor:.0f} us | | | |"
    )
    for label, home, away in relayed:
        print(
            f"\n{label}: server CPU per call in a session, keep-alive: {home:.0f} us on the process holding it, "
            f"{away:.0f} us on another process (relayed)"
        )
    log(f"took {time.monotonic() - started:.0f} s")
    return 0
