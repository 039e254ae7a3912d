"""Every fenced block of the README, ``docs/`` and ``examples/README.md`` runs as shown; every link resolves.

The convention (also in docs/testing.md, "How the documentation is tested"):

- ``python`` / ``js`` blocks start with a comment naming a file (``# shop.py``, ``// client.mjs``); it is
  written into the page's scratch folder, and a command on the page must name it.
- ``console`` blocks: ``$ `` lines are commands (a trailing ``\\`` continues one). A command followed by the
  server's banner is a terminal session, replayed on a pseudo-terminal: lines with a ``method`` and lines that
  are not JSON are typed; stdout must be exactly the other lines, stderr exactly the banner. Any other command
  runs with empty input, and its stdout and stderr together must be exactly the lines shown.
- ``sh`` blocks: every line is run by ``.ci/run`` (it must appear there), or is an install the suite already
  makes (:data:`PROVIDED`).
- ``json`` blocks are parsed; every server of an ``mcpServers`` entry is started as a client would.
- Any other block fails: a page cannot show what nobody runs.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from shipcode_mcp._engine import IMPLEMENTATION

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
CI_SCRIPT = ROOT / ".ci" / "run"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
BANNER = re.compile(r"^shipcode-mcp \S+ \(engine: \w+\) serving .*: one JSON-RPC message per line on stdin; end with")
#: Commands of ``sh`` blocks that the suite already runs for itself: the command, and the fixture doing it.
PROVIDED = {"npm install @modelcontextprotocol/sdk@1": "ts_client"}
#: In ``mcpServers`` entries: what the placeholders stand for.
PLACEHOLDERS = {"/path/to/shipcode-mcp/.venv": sys.prefix, "/path/to/shipcode-mcp": None}  # None: the checkout
LIVE_ENGINE = f"(engine: {IMPLEMENTATION})"


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    source = page.read_text()
    return [
        Block(page, source.count("\n", 0, match.start()) + 1, match.group(1).strip(), match.group(2))
        for match in FENCE.finditer(source)
    ]


BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def commands(block: Block) -> list[tuple[str, list[str]]]:
    """A console block's commands, each with the lines shown after it."""
    out: list[tuple[str, list[str]]] = []
    lines = block.text.splitlines()
    index = 0
    assert lines and lines[0].startswith("$ "), f"{block}: a console block starts with a '$ ' command"
    while index < len(lines):
        command = lines[index][2:]
        while command.endswith("\\"):
            index += 1
            command = command + "\n" + lines[index]
        index += 1
        shown = []
        while index < len(lines) and not lines[index].startswith("$ "):
            shown.append(lines[index])
            index += 1
        out.append((command, shown))
    return out


def named_file(block: Block) -> str:
    comment = {"python": "# ", "js": "// "}[block.kind]
    first = block.text.split("\n", 1)[0]
    assert first.startswith(comment) and " " not in first[len(comment) :], (
        f"{block}: a {block.kind} block starts with '{comment}<file name>'"
    )
    return first[len(comment) :]


def page_commands(page: Path) -> str:
    """Everything the page runs: its console commands and its mcpServers arguments."""
    text = []
    for block in blocks_of(page):
        if block.kind == "console":
            text += [command for command, _ in commands(block)]
        elif block.kind == "json":
            text.append(block.text)
    return "\n".join(text)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory):
    """``scratch(page)``: the page's folder: links to every top-level entry of the checkout, and its named files."""
    folders: dict[Path, Path] = {}

    def folder_of(page: Path) -> Path:
        if page not in folders:
            folder = tmp_path_factory.mktemp(page.stem)
            for entry in ROOT.iterdir():
                if entry.name != ".git":
                    (folder / entry.name).symlink_to(entry)
            for block in blocks_of(page):
                if block.kind in ("python", "js"):
                    (folder / named_file(block)).write_text(block.text)
            folders[page] = folder
        return folders[page]

    return folder_of


def environment(**extra: str) -> dict[str, str]:
    """This environment, with this Python's scripts first on PATH and help text at 80 columns."""
    env = {k: v for k, v in os.environ.items() if k not in ("SHIPCODE_MCP_REQUIRE_EXTENSIONS", "COLUMNS")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return {**env, "COLUMNS": "80", **extra}


def expected(lines: list[str]) -> str:
    return "".join(line.replace("(engine: compiled)", LIVE_ENGINE) + "\n" for line in lines)


def typed(line: str) -> bool:
    """In a terminal session: a line the user types (anything but the server's answers)."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return True
    return not isinstance(message, dict) or "method" in message


def run_session(command: str, shown: list[str], folder: Path) -> tuple[str, str]:
    """Type the session's input at a pseudo-terminal, then Ctrl-D; (stdout, stderr)."""
    controller, terminal = pty.openpty()
    os.write(controller, "".join(line + "\n" for line in shown[1:] if typed(line)).encode() + b"\x04")
    try:
        done = subprocess.run(
            ["bash", "-c", command],
            stdin=terminal,
            capture_output=True,
            cwd=folder,
            env=environment(),
            timeout=60,
            check=False,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    return done.stdout.decode(), done.stderr.decode()


def run_console(block: Block, folder: Path) -> None:
    for command, shown in commands(block):
        if shown and BANNER.match(shown[0]):
            out, err = run_session(command, shown, folder)
            answers = [line for line in shown[1:] if not typed(line)]
            assert (out, err) == (expected(answers), expected(shown[:1])), f"{block}: $ {command}"
        else:
            done = subprocess.run(
                ["bash", "-c", command],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=folder,
                env=environment(),
                timeout=120,
                check=False,
            )
            assert done.stdout.decode() == expected(shown), f"{block}: $ {command}"


def check_sh(block: Block, request: pytest.FixtureRequest) -> None:
    ci = CI_SCRIPT.read_text()
    for line in block.text.splitlines():
        if line in PROVIDED:
            request.getfixturevalue(PROVIDED[line])
        else:
            assert line.strip() and line in ci, f"{block}: {line!r} is neither run by .ci/run nor provided"


def start_like_a_client(name: str, server: dict, folder: Path) -> None:
    """Start one ``mcpServers`` entry as a client does; it must answer initialize and ping."""

    def real(text: str) -> str:
        for placeholder, value in PLACEHOLDERS.items():
            text = text.replace(placeholder, str(folder) if value is None else value)
        return text

    env = {key: real(value) for key, value in server.get("env", {}).items()}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    done = subprocess.run(
        [real(server["command"]), *map(real, server.get("args", []))],
        input=orjson.dumps(initialize) + b"\n" + b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n',
        capture_output=True,
        cwd="/",
        env={"PATH": os.environ.get("PATH", ""), **env},
        timeout=60,
        check=False,
    )
    answers = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert (done.returncode, len(answers), answers[-1]) == (0, 2, {"jsonrpc": "2.0", "id": 2, "result": {}}), name
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18", name


def check_deployment(block: Block) -> None:
    """A deployment sketch (Kubernetes YAML): valid YAML whose containers run command lines
    shipcode-mcp accepts, with the state key they must share from a secret."""
    import yaml

    from shipcode_mcp.cli import parse_command_line

    commands = []
    for document in yaml.safe_load_all(block.text):
        for container in document.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            command = container["command"]
            assert command[0] == "shipcode-mcp", f"{block}: {command}"
            parse_command_line(command[1:])  # a usage error exits: the test fails
            variables = {item["name"]: item for item in container.get("env", [])}
            assert "secretKeyRef" in variables["SHIPCODE_MCP_STATE_KEY"]["valueFrom"], f"{block}: the state key"
            commands.append(command)
    assert commands, f"{block}: no container runs shipcode-mcp"


def check_proxy(block: Block) -> None:
    """A reverse-proxy sketch (nginx): directives end with ';', blocks balance, legacy sessions are
    routed by the header the server sets, and event streams are not buffered."""
    depth = 0
    for line in block.text.splitlines():
        code = line.split("#", 1)[0].strip()
        if not code:
            continue
        depth += code.count("{") - code.count("}")
        assert depth >= 0 and code[-1] in ";{}", f"{block}: {line!r}"
    assert depth == 0, f"{block}: unbalanced braces"
    assert "$http_mcp_session_id" in block.text, f"{block}: legacy sessions routed by Mcp-Session-Id"
    assert re.search(r"proxy_buffering\s+off;", block.text), f"{block}: event streams buffered"


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_every_block_runs_as_shown(block: Block, scratch, request: pytest.FixtureRequest) -> None:
    folder = scratch(block.page)
    if block.kind in ("python", "js"):
        name = named_file(block)
        assert re.search(rf"(^|[\s/\"]){re.escape(name)}\b", page_commands(block.page)), (
            f"{block}: no command on the page uses {name}"
        )
    elif block.kind == "console":
        if any(command.startswith("node ") for command, _ in commands(block)):
            sdk = request.getfixturevalue("ts_client").parent / "node_modules"
            if not (folder / "node_modules").exists():
                (folder / "node_modules").symlink_to(sdk)
        run_console(block, folder)
    elif block.kind == "sh":
        check_sh(block, request)
    elif block.kind == "json":
        document = orjson.loads(block.text)
        for name, server in document.get("mcpServers", {}).items():
            start_like_a_client(name, server, folder)
    elif block.kind == "yaml":
        check_deployment(block)
    elif block.kind == "nginx":
        check_proxy(block)
    else:
        pytest.fail(f"{block}: no rule runs a {block.kind or 'plain'!r} block (see docs/testing.md)")


# -- links -----------------------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the page's headings."""
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text()), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def relative_links(page: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(FENCE.sub("", page.read_text()))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists() or (anchor and anchor not in anchors(destination)):
            broken.append(target)
    assert broken == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in relative_links(ROOT / "README.md")}
    assert sorted(page.name for page in (ROOT / "docs").glob("*.md") if page not in linked) == []


def test_blocks_are_found_where_pages_have_fences() -> None:
    """The block reader misses nothing: every fence line of every page opens or closes a block it found."""
    for page in PAGES:
        lines = page.read_text().splitlines()
        fences = [number for number, line in enumerate(lines, 1) if line.lstrip().startswith("```")]
        assert fences[::2] == [block.line for block in blocks_of(page)], page


def test_the_readme_is_a_front_page() -> None:
    """Short, and starting with the two set-up commands that .ci/run runs."""
    readme = (ROOT / "README.md").read_text()
    start = '# shipcode-mcp\n\n```sh\npip install . && shipcode-mcp\npip install ".[test]" && python -m pytest\n```\n'
    assert (readme.startswith(start), len(readme.splitlines()) <= 250) == (True, True)
