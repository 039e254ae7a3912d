"""The official MCP conformance suite, pinned, run against shipcode-mcp over HTTP or a stdio server through a bridge.

:func:`install` puts the packages of ``package-lock.json`` (the suite, the TypeScript SDK the
session bridge uses, and the npm package ``node``, a Node 22: the suite needs 22 or later) into
the git-ignored ``tests/conformance/node_modules``, once; :func:`run_suite` runs the server scenarios of one
:class:`Selection` against an endpoint: :func:`http_server` (``shipcode-mcp app.py --http``, the
native transport) or :func:`bridge` in front of a stdio server command: ``bridge.mjs``
(sessions, one server process each) for the revisions with ``initialize``,
``stateless_bridge.mjs`` (one server process, every request forwarded) for 2026-07-28.

Run by hand (``--pure`` for the pure-Python engine; ``--stdio``, or a command, for a bridged stdio server)::

    python tests/support/conformance.py [--pure] [--run 2025-06-18|2025-11-25|2026-07-28] [--stdio]
    python tests/support/conformance.py [--pure] [--run ...] -- COMMAND [ARG...]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "conformance"  # the suite's Node project, app and bridges
LOCKFILE = FOLDER / "package-lock.json"
MODULES = FOLDER / "node_modules"
NODE = MODULES / "node" / "bin" / "node"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BRIDGE = FOLDER / "bridge.mjs"
STATELESS_BRIDGE = FOLDER / "stateless_bridge.mjs"
APP = FOLDER / "app.py"
STAMP = MODULES / ".shipcode-lock-sha256"  # the hash of the lockfile last installed
NODE_MAJOR = 22
# The statuses of a check that did not pass (the others: SUCCESS, and INFO for what is only logged).
NOT_PASSED = ("FAILURE", "WARNING", "SKIPPED")
#: Seconds a server may take to start answering, or to stop: guards against a hang, never a schedule.
START_LIMIT = 30
STOP_LIMIT = 10


@dataclass(frozen=True)
class Selection:
    """Which server scenarios one run of the suite takes: the suite's option and the revision it names."""

    option: str  # "--spec-version": every scenario of that version; "--requirements": what the revision requires
    revision: str

    @property
    def stateless(self) -> bool:
        """Whether the revision is the stateless one, served by ``stateless_bridge.mjs``."""
        return self.revision == "2026-07-28"


SELECTIONS = {
    "2025-06-18": Selection("--spec-version", "2025-06-18"),
    "2025-11-25": Selection("--requirements", "2025-11-25"),
    "2026-07-28": Selection("--requirements", "2026-07-28"),
}

# How npm reports a registry it cannot reach (its error codes, and its "network" error class).
UNREACHABLE = re.compile(
    rb"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT)\b"
    rb"|npm (?:error|ERR!) network"
)
# A scenario's results folder: server-<scenario>-<ISO time with ':' and '.' made '-'>.
RESULTS_FOLDER = re.compile(r"server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")


class RegistryUnreachable(Exception):
    """npm is missing or cannot reach its registry: the suite cannot be installed here."""


def _installed(digest: str) -> bool:
    return STAMP.is_file() and STAMP.read_text() == digest and NODE.is_file() and SUITE.is_file()


def _npm(npm: str, *args: str) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(
            [npm, *args, "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=FOLDER,
            capture_output=True,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RegistryUnreachable(f"npm {args[0]} timed out after 600 s") from None
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if UNREACHABLE.search(output):
            line = next((x for x in output.decode(errors="replace").splitlines() if x.strip()), "")
            raise RegistryUnreachable(f"npm {args[0]} cannot reach the registry: {line}")
        raise RuntimeError(f"npm {' '.join(args)} failed ({done.returncode}):\n{output.decode(errors='replace')}")
    return done


def node_version(node: Path = NODE) -> tuple[int, ...]:
    """The version of a node binary, ``()`` when it does not run."""
    try:
        text = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def install() -> Path:
    """Install the pinned packages unless already there; the path of the Node 22 binary.

    Idempotent and fast when installed (one hash of the lockfile, compared with the stamp);
    holds a lock on the lockfile so two runs cannot install at once. Raises
    :class:`RegistryUnreachable` when npm is missing or cannot reach the registry, and
    :class:`RuntimeError` for any other failure.
    """
    digest = hashlib.sha256(LOCKFILE.read_bytes() + (FOLDER / "package.json").read_bytes()).hexdigest()
    if _installed(digest):
        return NODE
    with LOCKFILE.open("rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(digest):
            return NODE
        npm = shutil.which("npm")
        if npm is None:
            raise RegistryUnreachable("npm not found on PATH")
        _npm(npm, "ci")
        # package.json's allowScripts lets npm 11 run the preinstall script that fetches the
        # node binary; an npm that skipped it anyway runs it here.
        if not node_version():
            _npm(npm, "rebuild", "node")
        version = node_version()
        if not version or version[0] < NODE_MAJOR:
            raise RuntimeError(f"{NODE} is not a Node {NODE_MAJOR} or later: version {version or 'unknown'}")
        STAMP.write_text(digest)
    return NODE


@dataclass
class SuiteRun:
    """One run of the suite: each scenario's checks that did not pass (none: passed), and its output.

    A check that did not pass reads ``"<STATUS> <check id>: <message>"``.
    """

    failures: dict[str, list[str]]
    returncode: int
    output: str
    server_log: str  # the server's stderr (through a bridge: the bridge's, the servers' included)

    @property
    def passed(self) -> list[str]:
        return sorted(name for name, failed in self.failures.items() if not failed)

    @property
    def failed(self) -> list[str]:
        return sorted(name for name, failed in self.failures.items() if failed)


def read_results(folder: Path) -> dict[str, list[str]]:
    """Scenario name -> ``"<STATUS> <check id>: <message>"`` for each check that did not pass, from ``checks.json``."""
    failures: dict[str, list[str]] = {}
    for checks in sorted(folder.glob("*/checks.json")):
        match = RESULTS_FOLDER.fullmatch(checks.parent.name)
        if match is None:
            raise RuntimeError(f"unexpected results folder {checks.parent}")
        failed = failures.setdefault(match["scenario"], [])
        for check in json.loads(checks.read_bytes()):
            if check.get("status") in NOT_PASSED:
                message = check.get("errorMessage") or check.get("description")
                failed.append(f"{check['status']} {check.get('id')}: {message}")
    return failures


@contextlib.contextmanager
def bridge(command: list[str], env: dict[str, str], log: Path, *options: str, script: Path = BRIDGE) -> Iterator[str]:
    """Serve the stdio server ``command`` through the bridge ``script``; yields its endpoint url.

    ``env`` is the environment of the bridge and so of each server process; the bridge's
    stderr (the servers' stderr included) goes to the file ``log``. ``options`` go to the
    bridge before ``--``. On leaving, the bridge's stdin is closed, which stops it.
    """
    node = install()
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [node, script, *options, "--", *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
        )
    try:
        url = process.stdout.readline().decode().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the bridge did not start:\n{log.read_text(errors='replace')}")
        yield url
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(port: int) -> bool:
    """Whether an HTTP server answers on the loopback ``port`` (any status will do)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=START_LIMIT)
    try:
        connection.request("GET", "/mcp")
        connection.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        connection.close()


@contextlib.contextmanager
def http_server(command: list[str], env: dict[str, str], log: Path) -> Iterator[str]:
    """Serve ``command --http 127.0.0.1:PORT`` (an ephemeral free port); yields its endpoint url once it answers.

    The server's stderr goes to the file ``log``; on leaving it is stopped with SIGTERM.
    """
    port = free_port()
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*command, "--http", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, env=env
        )
    try:
        deadline = time.monotonic() + START_LIMIT
        while not _answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_LIMIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_suite(
    command: list[str],
    env: dict[str, str],
    folder: Path,
    selection: Selection = SELECTIONS["2025-06-18"],
    transport: str = "http",
    timeout: float = 600,
) -> SuiteRun:
    """Run the server scenarios of ``selection`` against ``command``.

    ``transport`` ``"http"``: ``command`` is a shipcode-mcp command line, served with ``--http``;
    ``"stdio"``: ``command`` is a stdio server, served by the bridge that fits the revision.
    ``env`` is the environment of each server process; the suite's results and the server's (or
    the bridge's) log are kept in ``folder``.
    """
    results, log = folder / "results", folder / "server.log"
    if transport == "http":
        endpoint = http_server(command, env, log)
    else:
        endpoint = bridge(command, env, log, script=STATELESS_BRIDGE if selection.stateless else BRIDGE)
    with endpoint as url:
        suite = subprocess.run(
            [NODE, SUITE, "server", "--url", url, selection.option, selection.revision, "--output-dir", results],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    output = (suite.stdout + suite.stderr).decode(errors="replace")
    return SuiteRun(read_results(results), suite.returncode, output, log.read_text(errors="replace"))


def server_command(app: Path = APP) -> list[str]:
    """``shipcode-mcp <app>`` with this interpreter."""
    return [sys.executable, "-m", "shipcode_mcp", str(app)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pure", action="store_true", help="run the pure-Python engine")
    parser.add_argument("--run", choices=SELECTIONS, default="2025-06-18", help="which scenarios (default 2025-06-18)")
    parser.add_argument("--stdio", action="store_true", help="serve shipcode-mcp app.py on stdio through a bridge")
    parser.add_argument("command", nargs="*", help="a stdio server to run through a bridge (implies --stdio)")
    args = parser.parse_args(argv)
    transport = "stdio" if args.stdio or args.command else "http"
    env = dict(os.environ)
    env.pop("SHIPCODE_MCP_NO_EXTENSIONS", None)
    if args.pure:
        env["SHIPCODE_MCP_NO_EXTENSIONS"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        run = run_suite(args.command or server_command(), env, Path(folder), SELECTIONS[args.run], transport)
    for name, failed in sorted(run.failures.items()):
        print(f"{'pass' if not failed else 'FAIL'} {name}" + "".join(f"\n     {line}" for line in failed))
    print(f"{len(run.passed)}/{len(run.failures)} scenarios passed")
    return 0 if run.failures and not run.failed else 1


if __name__ == "__main__":
    sys.exit(main())
