"""The recorder: an app served by a framework over stdio, driven by raw JSON-RPC lines, kept as a transcript.

A transcript holds, for each protocol version the client offers, every message exchanged after
the ``initialize`` request: the listings, then the app's scripted calls (``apps/TOPIC.calls.json``
beside ``apps/TOPIC_API.py``), each with the notifications and requests the server sent before its
answer, and how the process ended once its input closed. ``normalize`` is the one place that says
what may legitimately differ between two servers of the same app.

    python tests/compat/recorder.py apps/quickstart_sdk1.py mcp1   # print a normalized transcript
"""

from __future__ import annotations

import argparse
import hashlib
import json
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable
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
EXIT_TIMEOUT = 10

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


def script_of(app: Path) -> dict[str, Any]:
    """The sidecar of ``app``: ``TOPIC.calls.json`` for ``TOPIC_API.py``."""
    return json.loads((app.parent / f"{app.stem.rsplit('_', 1)[0]}.calls.json").read_text())


def apps() -> list[Path]:
    """Every app of the corpus."""
    return sorted(path for path in APPS.glob("*.py"))


def frameworks_of(app: Path) -> list[str]:
    """The environments that referee ``app``: all of its API's, unless its sidecar names fewer."""
    served = environments.frameworks_for(api_of(app))
    wanted = script_of(app).get("frameworks", {}).get(app.stem)
    return [name for name in served if wanted is None or name in wanted]


def framework_command(app: Path, framework: str) -> list[str]:
    """How the framework's docs start ``app`` over stdio: ``python app.py``, or the sidecar's command."""
    interpreter = environments.python(framework)
    command = script_of(app).get("commands", {}).get(app.stem)
    if command is None:
        return [str(interpreter), str(app)]
    first, *rest = (word.replace("{app}", str(app)) for word in command)
    return [str(interpreter.with_name(first)), *rest]


class Session:
    """One server process over pipes: send lines, read messages with a deadline."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, cwd=APPS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        self.pumps = [
            threading.Thread(target=self._pump, args=(self.process.stdout, self.lines.put), daemon=True),
            threading.Thread(target=self._pump, args=(self.process.stderr, self.stderr.append), daemon=True),
        ]
        for pump in self.pumps:
            pump.start()

    @staticmethod
    def _pump(stream, put: Callable[[bytes], None]) -> None:
        for line in stream:
            put(line)
        put(b"")

    def send(self, message: Message) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> Message:
        try:
            line = self.lines.get(timeout=ANSWER_TIMEOUT)
        except queue.Empty:
            raise RecordingFailed(f"no answer within {ANSWER_TIMEOUT}s; stderr ends: {self._stderr_tail()}") from None
        if not line:
            raise RecordingFailed(f"the server closed its output; stderr ends: {self._stderr_tail()}")
        return json.loads(line)

    def _stderr_tail(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")[-2000:]

    def close(self) -> dict[str, Any]:
        """Close the server's input; how it ended (its exit code, or that it was killed) and the app's own lines."""
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = "killed: still running 10s after its input closed"
        for pump in self.pumps:  # the last lines, read to the end
            pump.join(EXIT_TIMEOUT)
        return {"exit": code, "app said": [line.decode().rstrip() for line in self.stderr if line.startswith(APP_LINE)]}


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
        elif "method" not in message and message.get("id") == request["id"]:
            return seen


def record_version(command: list[str], version: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One session at ``version``: initialize, the listings, the calls, then the end of input."""
    session = Session(command)
    steps: list[dict[str, Any]] = []
    try:
        initialize = {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}, "sampling": {}, "roots": {"listChanged": True}},
            "clientInfo": {"name": "referee", "version": "1.0.0"},
        }
        requests = [("initialize", initialize, {})] + [(method, {}, {}) for method in LISTINGS]
        requests += [(call["method"], call.get("params", {}), call.get("answers", {})) for call in calls]
        for number, (method, params, answers) in enumerate(requests, start=1):
            request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
            steps.append({"request": request, "received": exchange(session, request, answers)})
            if method == "initialize":
                session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    finally:
        steps.append(session.close())
    return steps


def record(command: list[str], app: Path) -> dict[str, Any]:
    """The normalized transcript of ``app`` served by ``command``, one session per protocol version."""
    calls = script_of(app)["calls"]
    return normalize({version: record_version(command, version, calls) for version in PROTOCOL_VERSIONS})


def normalize(transcript: Any) -> Any:
    """The transcript with what may legitimately differ between two servers of one app replaced by markers.

    - ``serverInfo``'s ``name`` and ``version``: the framework's own name and version when the app sets none.
    - the ids of requests the server sends (any numbering is valid), kept consistent within a transcript.
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

    return {version: walk(steps) for version, steps in transcript.items()}

def fingerprint(app: Path, framework: str) -> str:
    """What a transcript depends on: the app, its sidecar, this recorder and the framework's pins."""
    digest = hashlib.sha256()
    for path in (app, app.parent / f"{app.stem.rsplit('_', 1)[0]}.calls.json", Path(__file__),
                 environments.REQUIREMENTS / f"{framework}.txt"):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def referee_transcript(app: Path, framework: str) -> dict[str, Any]:
    """The app's normalized transcript under ``framework``, cached by fingerprint.

    A fresh recording is made twice and kept only when both agree, so a cached transcript is a
    stable one; an unstable pair raises with both kept beside the cache for inspection.
    """
    cached = TRANSCRIPTS / framework / f"{app.stem}-{fingerprint(app, framework)}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    command = framework_command(app, framework)
    first, second = record(command, app), record(command, app)
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
    options = parser.parse_args()
    app = options.app.resolve()
    json.dump(record(framework_command(app, options.framework), app), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
