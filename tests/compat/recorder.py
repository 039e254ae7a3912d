"""The recorder: an app served over stdio or Streamable HTTP, driven by raw JSON-RPC, kept as a transcript.

A transcript holds, for each protocol version the client offers, every message of one session:
``initialize``, the listings, then the app's scripted calls (``apps/TOPIC.calls.json`` beside
``apps/TOPIC_API.py``), each with the notifications and requests the server sent before its
answer, and how the process ended when asked to (end of input, or SIGTERM over HTTP).
``normalize`` is the one place that says what may legitimately differ between two servers of the
same app.

    python tests/compat/recorder.py apps/quickstart_sdk1.py mcp1          # print a normalized transcript
    python tests/compat/recorder.py apps/quickstart_sdk1.py mcp1 --http   # the same over Streamable HTTP
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import environments

APPS = environments.HERE / "apps"
TRANSCRIPTS = environments.CACHE / "transcripts"
PROTOCOL_VERSIONS = ("2025-06-18", "2025-11-25")
LISTINGS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
#: Lines an app writes to stderr to show what it did (its lifespan opening and closing), kept in transcripts.
APP_LINE = b"app: "
#: Seconds to wait for one answer (a framework's first answer includes its start-up), and for the exit.
ANSWER_TIMEOUT = 60
EXIT_TIMEOUT = 30

#: The API an app is written for, told by what it imports.
API_IMPORTS = {
    "sdk-fastmcp": re.compile(r"^from mcp\.server\.fastmcp[ .]", re.M),
    "sdk-mcpserver": re.compile(r"^from mcp\.server\.mcpserver[ .]", re.M),
    "fastmcp": re.compile(r"^(from fastmcp[ .]|import fastmcp$)", re.M),
}

Message = dict[str, Any]


class RecordingFailed(Exception):
    """The server did not answer in time, or closed its output early; the message says what it last did."""


def api_of(app: Path) -> str:
    """The one API ``app`` is written for."""
    source = app.read_text()
    apis = [api for api, pattern in API_IMPORTS.items() if pattern.search(source)]
    if len(apis) != 1:
        raise ValueError(f"{app.name} imports {apis or 'none'} of the three APIs; an app is written for one")
    return apis[0]


def sidecar_of(app: Path) -> Path:
    """The file of scripted calls of ``app``: ``TOPIC.calls.json`` for ``TOPIC_API.py``."""
    return app.parent / f"{app.stem.rsplit('_', 1)[0]}.calls.json"


def script_of(app: Path) -> dict[str, Any]:
    """The sidecar of ``app``: its ``calls`` and ``routes``, and by app file name ``factories`` and ``frameworks``."""
    return json.loads(sidecar_of(app).read_text())


def apps() -> list[Path]:
    """Every app of the corpus."""
    return sorted(APPS.glob("*.py"))


def frameworks_of(app: Path) -> list[str]:
    """The environments that referee ``app``: all of its API's, unless its sidecar names fewer."""
    served = environments.frameworks_for(api_of(app))
    wanted = script_of(app).get("frameworks", {}).get(app.stem)
    return [name for name in served if wanted is None or name in wanted]


#: The command that serves an app: over stdio when given ``None``, else over Streamable HTTP on that port.
Command = Callable[[int | None], list[str]]


def referee_command(app: Path, framework: str) -> Command:
    """How the framework's docs start ``app``: ``python app.py`` (``fastmcp run app.py:factory`` for a factory)
    over stdio; over HTTP, ``serve_http.py`` calls its server's ``run`` with the HTTP transport."""
    interpreter = str(environments.python(framework))
    factory = script_of(app).get("factories", {}).get(app.stem)
    target = f"{app}:{factory}" if factory else str(app)

    def command(port: int | None) -> list[str]:
        if port is not None:
            return [interpreter, str(environments.HERE / "serve_http.py"), target, str(port)]
        if factory:
            return [str(Path(interpreter).with_name("fastmcp")), "run", target]
        return [interpreter, str(app)]

    return command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Session:
    """One server process: messages in, messages out with a deadline, then how it ended."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, cwd=APPS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.messages: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        self.pumps = [self._pump(self.process.stderr, self.stderr.append)]

    def _pump(self, stream, put: Callable[[bytes], None]) -> threading.Thread:
        """A thread that hands each line of ``stream`` to ``put``, then ``b""`` at its end."""

        def pump() -> None:
            for line in stream:
                put(line)
            put(b"")

        thread = threading.Thread(target=pump, daemon=True)
        thread.start()
        return thread

    def send(self, message: Message) -> None:
        raise NotImplementedError

    def stop(self) -> str:
        """Ask the server to end as a client or host would; the words the ending is recorded with."""
        raise NotImplementedError

    def visit(self, path: str) -> dict[str, Any] | None:
        """What a plain GET of the app's own route ``path`` gives (``custom_route``); None without HTTP."""
        return None

    def receive(self) -> Message:
        try:
            line = self.messages.get(timeout=ANSWER_TIMEOUT)
        except queue.Empty:
            raise RecordingFailed(f"no answer within {ANSWER_TIMEOUT}s; stderr ends: {self._stderr_tail()}") from None
        if not line:
            raise RecordingFailed(f"the server closed its output; stderr ends: {self._stderr_tail()}")
        return json.loads(line)

    def _stderr_tail(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")[-2000:]

    def close(self) -> dict[str, Any]:
        """End the server; how it ended (its exit code, or that it was killed) and the app's own lines."""
        asked = self.stop()
        try:
            code = self.process.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = f"killed: still running {EXIT_TIMEOUT}s after {asked}"
        for pump in self.pumps:
            pump.join(EXIT_TIMEOUT)  # the last lines, read to the end
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()
        return {"exit": code, "app said": [line.decode().rstrip() for line in self.stderr if line.startswith(APP_LINE)]}


class StdioSession(Session):
    """A server over pipes: one JSON-RPC message a line each way; it ends when its input closes."""

    def __init__(self, command: list[str]) -> None:
        super().__init__(command)
        self.pumps.append(self._pump(self.process.stdout, self.messages.put))

    def send(self, message: Message) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def stop(self) -> str:
        self.process.stdin.close()
        return "its input closed"


class HttpSession(Session):
    """A server over Streamable HTTP on ``port``: each message a POST, answers as JSON or an event stream.

    A POST's answer is read on its own thread, so the server's requests that arrive on that stream
    (elicitation, sampling) are answered by further POSTs meanwhile; after ``initialize`` the
    session's GET stream is open too, for requests the server sends outside a request. Events
    without data (a stream's priming event) carry no message and are not recorded. It ends on
    SIGTERM, as a host stops it.
    """

    def __init__(self, command: list[str], port: int) -> None:
        super().__init__(command)
        self.pumps.append(self._pump(self.process.stdout, lambda line: None))
        self.port = port
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while True:  # until it listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RecordingFailed(f"not listening on {port}; stderr ends: {self._stderr_tail()}") from None
                time.sleep(0.1)

    def send(self, message: Message) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=ANSWER_TIMEOUT)
        connection.request("POST", "/mcp", json.dumps(message).encode(), self.headers)
        response = connection.getresponse()  # the headers: a session id to keep before the next message
        if "mcp-session-id" in response.headers:
            self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        if message.get("method") == "initialize":
            self.headers["mcp-protocol-version"] = message["params"]["protocolVersion"]
        threading.Thread(target=self._read, args=(connection, response), daemon=True).start()
        if message.get("method") == "notifications/initialized":
            self._listen()

    def _listen(self) -> None:
        """Open the session's own event stream (GET), as clients do, for what the server sends outside a request."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port)
        connection.request("GET", "/mcp", headers={**self.headers, "Accept": "text/event-stream"})
        response = connection.getresponse()
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            threading.Thread(target=self._read, args=(connection, response), daemon=True).start()
        else:  # a server without one (405) has nothing to send there
            connection.close()

    def _read(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            data: list[bytes] = []
            try:
                for line in response:
                    if line.startswith(b"data:"):
                        data.append(line[5:].strip())
                    elif not line.strip():
                        if b"".join(data):
                            self.messages.put(b"\n".join(data))
                        data = []
            except OSError:  # the server went away with the stream open (SIGTERM)
                pass
        elif response.status != 202:  # an answer as JSON, or a refusal of HTTP's own
            body = response.read()
            if not (kind.startswith("application/json") and response.status == 200):
                body = json.dumps({"http status": response.status, "body": body.decode(errors="replace")}).encode()
            self.messages.put(body)
        connection.close()

    def stop(self) -> str:
        self.process.send_signal(signal.SIGTERM)
        return "SIGTERM"

    def visit(self, path: str) -> dict[str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=ANSWER_TIMEOUT)
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read().decode(errors="replace")
        connection.close()
        kind = response.headers["content-type"]
        return {"route": path, "status": response.status, "content-type": kind, "body": body}


def exchange(session: Session, request: Message, answers: dict[str, Any]) -> list[Message]:
    """Send ``request``; every message up to its answer, and the replies given to the server's own requests."""
    session.send(request)
    seen: list[Message] = []
    while True:
        message = session.receive()
        seen.append(message)
        if "method" in message and "id" in message:  # the server asks (elicitation, sampling, roots)
            reply: Message = {"jsonrpc": "2.0", "id": message["id"]}
            if message["method"] in answers:
                reply["result"] = answers[message["method"]]
            else:
                reply["error"] = {"code": -32601, "message": f"the client does not answer {message['method']}"}
            session.send(reply)
            seen.append({"client replies": reply})
        elif "method" not in message and message.get("id") == request["id"] or "http status" in message:
            return seen


def start(command: Command, transport: str) -> Session:
    """A session with a server started by ``command`` over ``transport`` (``"stdio"`` or ``"http"``)."""
    if transport == "stdio":
        return StdioSession(command(None))
    port = _free_port()
    return HttpSession(command(port), port)


def record_version(session: Session, version: str, script: dict[str, Any]) -> list[dict[str, Any]]:
    """One session at ``version``: initialize, the listings, the calls, the app's routes, the server's end."""
    steps: list[dict[str, Any]] = []
    try:
        initialize = {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}, "sampling": {}, "roots": {"listChanged": True}},
            "clientInfo": {"name": "referee", "version": "1.0.0"},
        }
        requests = [("initialize", initialize, {})] + [(method, {}, {}) for method in LISTINGS]
        requests += [(call["method"], call.get("params", {}), call.get("answers", {})) for call in script["calls"]]
        for number, (method, params, answers) in enumerate(requests, start=1):
            request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
            steps.append({"request": request, "received": exchange(session, request, answers)})
            if method == "initialize":
                session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        visits = (session.visit(path) for path in script.get("routes", []))
        steps += [visit for visit in visits if visit is not None]
    finally:
        steps.append(session.close())
    return steps


def record(command: Command, app: Path, transport: str = "stdio") -> dict[str, Any]:
    """The normalized transcript of ``app`` served by ``command``, one session per protocol version (at once)."""
    script = script_of(app)
    with ThreadPoolExecutor(len(PROTOCOL_VERSIONS)) as pool:
        sessions = {
            version: pool.submit(lambda version: record_version(start(command, transport), version, script), version)
            for version in PROTOCOL_VERSIONS
        }
        return {version: normalize(session.result()) for version, session in sessions.items()}


def normalize(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One session's steps with what may legitimately differ between two servers of one app replaced by markers.

    - ``serverInfo``'s ``name`` and ``version``: the framework's own name and version when the app sets none.
    - the ids of requests the server sends (any numbering is valid), numbered in order within the session.
    - progress tokens echoed in ``notifications/progress`` (the client chose them; only their presence counts).
    - the apps folder's absolute path (in tracebacks and file URIs), which depends on the checkout.
    Nothing else is touched: texts, schemas, ordering and exit codes are compared as they are.
    """
    server_ids: dict[Any, str] = {}
    folder = str(APPS)

    def walk(value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            out = {name: walk(item, name) for name, item in value.items()}
            if key == "serverInfo":
                out.update({name: f"<{name}>" for name in ("name", "version") if name in out})
            if "method" in out and "id" in out and key != "request":  # a request of the server
                out["id"] = server_ids.setdefault(value["id"], f"<server request {len(server_ids) + 1}>")
            if key == "client replies":
                out["id"] = server_ids.get(value["id"], out["id"])
            if out.get("method") == "notifications/progress" and "progressToken" in out.get("params", {}):
                out["params"]["progressToken"] = "<progress token>"
            return out
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, str) and folder in value:
            return value.replace(folder, "<apps>")
        return value

    return walk(steps)

def fingerprint(app: Path, framework: str, transport: str) -> str:
    """What a transcript depends on: the app, its sidecar, the framework's pins and the code that records it."""
    digest = hashlib.sha256(transport.encode())
    recorders = (Path(__file__), environments.HERE / "serve_http.py")
    for path in (app, sidecar_of(app), environments.REQUIREMENTS / f"{framework}.txt", *recorders):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_of(app: Path, framework: str, transport: str) -> Path:
    """Where the referee transcript of ``app`` under ``framework`` over ``transport`` is kept."""
    return TRANSCRIPTS / framework / f"{app.stem}-{transport}-{fingerprint(app, framework, transport)}.json"


def referee_transcript(app: Path, framework: str, transport: str = "stdio") -> dict[str, Any]:
    """The app's normalized transcript under ``framework`` over ``transport``, cached by fingerprint.

    A fresh recording is made twice and kept only when both agree, so a cached transcript is a
    stable one; an unstable pair raises, both written beside the cache for inspection.
    """
    cached = cache_of(app, framework, transport)
    if cached.exists():
        return json.loads(cached.read_text())
    command = referee_command(app, framework)
    first, second = record(command, app, transport), record(command, app, transport)
    cached.parent.mkdir(parents=True, exist_ok=True)
    if first != second:
        for name, transcript in (("first", first), ("second", second)):
            cached.with_suffix(f".{name}.unstable").write_text(json.dumps(transcript, indent=1))
        raise RecordingFailed(f"{app.name} under {framework}: two recordings differ (see {cached.parent})")
    cached.write_text(json.dumps(first, indent=1))
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("app", type=Path)
    parser.add_argument("framework", choices=environments.FRAMEWORKS)
    parser.add_argument("--http", action="store_true", help="over Streamable HTTP instead of stdio")
    options = parser.parse_args()
    app = options.app.resolve()
    transport = "http" if options.http else "stdio"
    json.dump(record(referee_command(app, options.framework), app, transport), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
