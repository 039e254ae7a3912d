"""The ``shipcode-mcp`` command as a real subprocess: targets, load errors, --resources, stdout guard."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from support.wire import HELLO, call, engine_env, not_found, request, result, run_server, text

from shipcode_mcp import __version__

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXIT_USAGE = 2


def serve(
    *args: str, data: bytes = b"", engine: str = "pure", cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """Run the command over pipes with ``data`` as its whole input."""
    return run_server(engine, data, *args, cwd=cwd, timeout=timeout)


def init_result(name: str, version: str, instructions: str | None = None, protocol: str = "2025-11-25") -> str:
    """An app's ``initialize`` result; a client that names no version gets the newest legacy one."""
    body = (
        f'{{"protocolVersion":"{protocol}","capabilities":{{"tools":{{}},"resources":{{}}}},'
        f'"serverInfo":{{"name":"{name}","version":"{version}"}}'
    )
    if instructions is not None:
        body += f',"instructions":{orjson.dumps(instructions).decode()}'
    return body + "}"


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


# -- help and version --------------------------------------------------------------------------


def test_version_names_the_engine(engine_name: str) -> None:
    done = serve("--version", engine=engine_name)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"shipcode-mcp {__version__} (engine: {engine_name})\n".encode(),
        b"",
    )


def test_help_documents_every_option() -> None:
    done = serve("--help")
    assert done.returncode == 0
    assert done.stderr == b""
    usage = done.stdout.decode()
    for option in (
        "target",
        "--resources DIR",
        "--max-resource-bytes N",
        "--max-message-bytes N",
        "--log-level",
        "--version",
    ):
        assert option in usage
    assert "path/to/file.py[:ATTR]" in usage
    assert "package.module[:ATTR]" in usage
    assert "default: 16777216, i.e. 16 MiB" in usage


# -- targets -----------------------------------------------------------------------------------

UNITS_SESSION = request("initialize", {"protocolVersion": "2025-06-18"}, rid=1) + call(
    "convert", {"value": 100, "from_unit": "C", "to_unit": "F"}, rid=2
)
UNITS_ANSWERS = result(
    init_result("units", "1.0.0", "Convert lengths, masses, volumes and temperatures.", "2025-06-18"), rid=1
) + text("212", rid=2)


def test_file_target_with_the_default_attribute(engine_name: str) -> None:
    done = serve(str(EXAMPLES / "units.py"), data=UNITS_SESSION, engine=engine_name)
    assert (done.returncode, done.stdout) == (0, UNITS_ANSWERS)


def test_relative_file_target_with_an_attribute(engine_name: str) -> None:
    done = serve("examples/units.py:app", data=UNITS_SESSION, engine=engine_name, cwd=EXAMPLES.parent)
    assert (done.returncode, done.stdout) == (0, UNITS_ANSWERS)


def test_an_example_runs_on_its_own_with_app_run(engine_name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "units.py")],
        input=UNITS_SESSION,
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, UNITS_ANSWERS)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A package ``demo_pkg`` in ``tmp_path`` whose ``servers`` module holds two apps."""
    write(tmp_path / "demo_pkg" / "__init__.py", "")
    write(
        tmp_path / "demo_pkg" / "servers.py",
        """
        from shipcode_mcp import Server

        from .helpers import double

        app = Server("pkg-default", version="0.0.1")
        other = Server("pkg-other", version="0.0.2")
        not_a_server = 42


        @other.tool()
        def twice(n: int) -> int:
            return double(n)
        """,
    )
    write(tmp_path / "demo_pkg" / "helpers.py", "def double(n):\n    return 2 * n\n")
    return tmp_path


def test_module_target_default_attribute(package: Path, engine_name: str) -> None:
    done = serve("demo_pkg.servers", data=request("initialize", rid=1), engine=engine_name, cwd=package)
    assert (done.returncode, done.stdout) == (0, result(init_result("pkg-default", "0.0.1"), rid=1))


def test_module_target_with_an_attribute(package: Path, engine_name: str) -> None:
    data = request("initialize", rid=1) + call("twice", {"n": 21}, rid=2)
    done = serve("demo_pkg.servers:other", data=data, engine=engine_name, cwd=package)
    assert (done.returncode, done.stdout) == (0, result(init_result("pkg-other", "0.0.2"), rid=1) + text("42", rid=2))


def test_file_target_imports_its_neighbours(tmp_path: Path) -> None:
    write(tmp_path / "app" / "neighbour.py", "GREETING = 'hello from next door'\n")
    write(
        tmp_path / "app" / "main.py",
        """
        from neighbour import GREETING

        from shipcode_mcp import Server

        server = Server("neighbourly")


        @server.tool()
        def greet() -> str:
            return GREETING
        """,
    )
    done = serve(str(tmp_path / "app" / "main.py:server"), data=call("greet", {}, rid=1))
    assert (done.returncode, done.stdout) == (0, text("hello from next door", rid=1))


def test_file_target_with_string_annotations_and_a_taken_module_name(tmp_path: Path) -> None:
    write(
        tmp_path / "json.py",
        """
        from __future__ import annotations

        from shipcode_mcp import Server

        app = Server("named-json")


        @app.tool()
        def size(items: list[int] | None = None) -> int:
            return len(items or [])
        """,
    )
    done = serve(str(tmp_path / "json.py"), data=call("size", {"items": [1, 2, 3]}, rid=1))
    assert (done.returncode, done.stdout) == (0, text("3", rid=1))


# -- load errors: exit 2, one clear line on stderr, nothing on stdout ----------------------------


def load_error(*args: str, cwd: Path | None = None) -> str:
    done = serve(*args, data=request("ping", rid=1), cwd=cwd)
    assert done.returncode == EXIT_USAGE
    assert done.stdout == b""
    return done.stderr.decode()


def last_line(stderr: str) -> str:
    return stderr.rstrip("\n").rsplit("\n", 1)[-1]


def test_missing_file(tmp_path: Path) -> None:
    err = load_error(str(tmp_path / "nope.py"))
    assert err == f"shipcode-mcp: error: no such file: {str(tmp_path / 'nope.py')!r}\n"


def test_missing_module(tmp_path: Path) -> None:
    err = load_error("no_such_module_here:app", cwd=tmp_path)
    assert err == "shipcode-mcp: error: cannot import 'no_such_module_here': no module named 'no_such_module_here'\n"


def test_missing_submodule(package: Path) -> None:
    err = load_error("demo_pkg.nope", cwd=package)
    assert err == "shipcode-mcp: error: cannot import 'demo_pkg.nope': no module named 'demo_pkg.nope'\n"


def test_missing_attribute_lists_the_servers_found(package: Path) -> None:
    err = load_error("demo_pkg.servers:missing", cwd=package)
    assert err == "shipcode-mcp: error: 'demo_pkg.servers' has no attribute 'missing' (it has: app, other)\n"


def test_attribute_that_is_not_a_server(package: Path) -> None:
    err = load_error("demo_pkg.servers:not_a_server", cwd=package)
    assert err == "shipcode-mcp: error: demo_pkg.servers:not_a_server is a int, not a shipcode_mcp.Server\n"


def test_file_without_an_app(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.py", "x = 1\n")
    err = load_error(str(path))
    assert err == f"shipcode-mcp: error: {str(path)!r} has no attribute 'app'\n"


def test_exception_while_importing_is_one_line_naming_where(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.py", "import shipcode_mcp\nraise RuntimeError('config missing')\n")
    err = load_error(f"{path}:app")
    assert err == f"shipcode-mcp: error: cannot load '{path}:app': RuntimeError: config missing (at {path}:2)\n"


def test_log_level_debug_shows_the_traceback_first(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.py", "def fail():\n    raise RuntimeError('config missing')\nfail()\n")
    lines = load_error("--log-level", "debug", str(path)).splitlines(keepends=True)
    assert lines[0] == "shipcode-mcp: debug: Traceback (most recent call last):\n"
    assert "".join(lines[-6:]) == (
        f'  File "{path}", line 3, in <module>\n'
        "    fail()\n"
        f'  File "{path}", line 2, in fail\n'
        "    raise RuntimeError('config missing')\n"
        "RuntimeError: config missing\n"
        f"shipcode-mcp: error: cannot load {str(path)!r}: RuntimeError: config missing (at {path}:2)\n"
    )


def test_broken_import_inside_the_target_module_is_not_a_missing_target(tmp_path: Path) -> None:
    write(tmp_path / "uses_missing.py", "import not_installed_anywhere\n")
    err = load_error("uses_missing", cwd=tmp_path)
    assert err == (
        "shipcode-mcp: error: cannot load 'uses_missing': ModuleNotFoundError: "
        f"No module named 'not_installed_anywhere' (at {tmp_path / 'uses_missing.py'}:1)\n"
    )


def test_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.py", "def (:\n")
    err = load_error(str(path))
    assert err == f"shipcode-mcp: error: cannot load {str(path)!r}: SyntaxError: invalid syntax (bad.py, line 1)\n"


def test_exit_during_import(tmp_path: Path) -> None:
    path = write(tmp_path / "quits.py", "raise SystemExit(7)\n")
    assert load_error(str(path)) == f"shipcode-mcp: error: cannot load {str(path)!r}: SystemExit: 7 (at {path}:1)\n"


@pytest.mark.parametrize(
    ("registration", "problem"),
    [
        ('@app.completion(prompt="nope")', "the unknown prompt 'nope'"),
        ('@app.completion(resource="notes://{title}")', "the unknown resource template 'notes://{title}'"),
    ],
)
def test_an_app_that_cannot_be_compiled_is_one_line_and_exit_2(tmp_path: Path, registration: str, problem: str) -> None:
    write(
        tmp_path / "app.py",
        f"""\
        from shipcode_mcp import Server

        app = Server("broken")


        {registration}
        def complete(argument, value, context):
            return []
        """,
    )
    err = load_error("app.py", cwd=tmp_path)
    assert err == (
        f"shipcode-mcp: error: cannot serve 'app.py': ValueError: a completion is registered for {problem}\n"
    )


@pytest.mark.parametrize("spelling", ["examples", "../{here}/examples", "examples/"])
def test_a_folder_is_not_a_target(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "examples").mkdir()
    target = spelling.format(here=tmp_path.name)
    err = load_error(target, cwd=tmp_path)
    assert err == (
        f"shipcode-mcp: error: {target!r} is a folder: name a Python file in it "
        "(path/to/file.py[:ATTR]) or a module (package.module[:ATTR])\n"
    )


def test_a_package_folder_is_imported_as_a_module(package: Path) -> None:
    assert load_error("demo_pkg", cwd=package) == "shipcode-mcp: error: 'demo_pkg' has no attribute 'app'\n"


@pytest.mark.parametrize("target", ["app.py:", ":app", "app.py:1x", "pkg..mod:app", "bad-name:app"])
def test_malformed_targets(target: str) -> None:
    err = load_error(target)
    assert err.startswith("shipcode-mcp: error: invalid ")


def test_missing_resources_folder(tmp_path: Path) -> None:
    err = load_error("--resources", str(tmp_path / "nope"))
    assert err == f"shipcode-mcp: error: --resources {tmp_path / 'nope'}: no such folder\n"


def test_resources_must_be_a_folder(tmp_path: Path) -> None:
    path = write(tmp_path / "file.txt", "x")
    assert load_error("--resources", str(path)) == f"shipcode-mcp: error: --resources {path}: not a folder\n"


@pytest.mark.parametrize("value", ["-1", "many"])
def test_bad_max_resource_bytes(value: str) -> None:
    err = load_error("--max-resource-bytes", value)
    assert err == f"shipcode-mcp: error: argument --max-resource-bytes: invalid size in bytes value: '{value}'\n"


ORIGIN_FORMS = "is not http(s)://host[:port], http(s)://host:* or *"
HOST_FORMS = "is not host, host:port, host:* or *"
#: Option values no server could serve with, and the one line each is refused with.
BAD_HTTP_OPTIONS = [
    (["--allowed-origins", "app.example"], f"argument --allowed-origins: allowed origin 'app.example' {ORIGIN_FORMS}"),
    (
        ["--allowed-origins", "https://app.example,http://[::1"],
        f"argument --allowed-origins: allowed origin 'http://[::1' {ORIGIN_FORMS}",
    ),
    (
        ["--allowed-origins", "https://user@app.example"],
        f"argument --allowed-origins: allowed origin 'https://user@app.example' {ORIGIN_FORMS}",
    ),
    (
        ["--allowed-origins", " , "],
        "argument --allowed-origins: allowed origins: the list is empty (it would refuse every request)",
    ),
    (
        ["--allowed-hosts", " , "],
        "argument --allowed-hosts: allowed hosts: the list is empty (it would refuse every request)",
    ),
    (
        ["--allowed-hosts", "localhost:@evil.example"],
        f"argument --allowed-hosts: allowed host 'localhost:@evil.example' {HOST_FORMS}",
    ),
    (["--allowed-hosts", "localhost:0"], f"argument --allowed-hosts: allowed host 'localhost:0' {HOST_FORMS}"),
    (["--allowed-hosts", 'a"b'], f"argument --allowed-hosts: allowed host 'a\"b' {HOST_FORMS}"),
    (["--public-url", "mcp.example"], "argument --public-url: public URL 'mcp.example' is not http(s)://host[:port]"),
    (
        ["--public-url", "https://mcp.example/mcp"],
        "argument --public-url: public URL 'https://mcp.example/mcp' is not http(s)://host[:port]",
    ),
    *(
        (
            ["--body-timeout", value],
            f"argument --body-timeout: invalid finite positive number of seconds value: '{value}'",
        )
        for value in ("inf", "nan", "-1", "0", "soon")
    ),
    (["--eof-grace", "inf"], "argument --eof-grace: invalid finite number of seconds value: 'inf'"),
]


@pytest.mark.parametrize("processes", [[], ["--processes", "2"]], ids=["one-process", "two-processes"])
@pytest.mark.parametrize(("args", "message"), BAD_HTTP_OPTIONS)
def test_a_bad_http_option_value_is_one_line_and_exit_2(args: list[str], message: str, processes: list[str]) -> None:
    command = [sys.executable, "-m", "shipcode_mcp", "--http", "127.0.0.1:0", *processes, *args]
    # In a session of its own: were the value let through, the server (and its workers) would serve until killed.
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"{args} started a server") from None
    assert (process.returncode, out, err.decode()) == (EXIT_USAGE, b"", f"shipcode-mcp: error: {message}\n")


# -- stdout is sacred --------------------------------------------------------------------------

NOISY_APP = """
import ctypes
import os
import subprocess
import sys

from shipcode_mcp import Server

print("printed while importing")
app = Server("noisy")


@app.tool()
def noisy() -> str:
    print("print()")
    sys.stdout.write("sys.stdout.write\\n")
    sys.stdout.flush()
    sys.__stdout__.write("sys.__stdout__\\n")
    sys.__stdout__.flush()
    os.write(1, b"os.write(1)\\n")
    libc = ctypes.CDLL(None)
    libc.write(1, b"libc write(1)\\n", 14)
    subprocess.run(["echo", "child process"], check=True)
    return "done"
"""
STRAY = ["printed while importing", "print()", "sys.stdout.write", "os.write(1)", "libc write(1)", "child process"]


def test_stray_output_goes_to_stderr_never_into_the_protocol(tmp_path: Path, engine_name: str) -> None:
    path = write(tmp_path / "noisy.py", NOISY_APP)
    data = request("initialize", rid=1) + call("noisy", {}, rid=2) + request("ping", rid=3)
    done = serve(str(path), data=data, engine=engine_name)
    assert done.returncode == 0
    assert done.stdout == result(init_result("noisy", "0.1.0"), rid=1) + text("done", rid=2) + result("{}", rid=3)
    err = done.stderr.decode()
    for line in STRAY:
        assert line in err


def test_app_run_at_import_time_does_not_break_the_stream(tmp_path: Path) -> None:
    path = write(
        tmp_path / "reentrant.py",
        """
        from shipcode_mcp import Server

        app = Server("reentrant")
        app.run()  # at import time, without a __main__ guard
        """,
    )
    done = serve(str(path), data=request("ping", rid=1))
    assert (done.returncode, done.stdout) == (0, result("{}", rid=1))


# -- --resources -------------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root / "guide.md", "# Guide\n")
    write(root / "nested" / "data.csv", "a\n1\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write(tmp_path / "secret.txt", "top secret")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    return root


def test_resources_folder_with_the_default_catalogue(folder: Path, engine_name: str) -> None:
    real = folder.resolve()
    data = (
        request("resources/list", rid=1)
        + request("resources/read", {"uri": (real / "guide.md").as_uri()}, rid=2)
        + request("resources/read", {"uri": (real / "logo.png").as_uri()}, rid=3)
        + request("resources/read", {"uri": (folder / "escape.txt").absolute().as_uri()}, rid=4)
        + request("resources/read", {"uri": (real.parent / "secret.txt").as_uri()}, rid=5)
        + request("resources/read", {"uri": (real / ".." / "secret.txt").as_uri()}, rid=6)
        + request("resources/read", {"uri": "file:///hello.txt"}, rid=7)
    )
    done = serve("--resources", str(folder), data=data, engine=engine_name)
    listing = {
        "resources": [
            {"uri": "file:///hello.txt", "name": "hello.txt", "mimeType": "text/plain"},
            {"uri": (real / "guide.md").as_uri(), "name": "guide.md", "mimeType": "text/markdown"},
            {"uri": (real / "logo.png").as_uri(), "name": "logo.png", "mimeType": "image/png"},
            {"uri": (real / "nested/data.csv").as_uri(), "name": "nested/data.csv", "mimeType": "text/csv"},
        ]
    }
    guide = {"contents": [{"uri": (real / "guide.md").as_uri(), "mimeType": "text/markdown", "text": "# Guide\n"}]}
    logo = {"contents": [{"uri": (real / "logo.png").as_uri(), "mimeType": "image/png", "blob": "iVBORw0KGgo="}]}
    expected = (
        result(orjson.dumps(listing).decode(), rid=1)
        + result(orjson.dumps(guide).decode(), rid=2)
        + result(orjson.dumps(logo).decode(), rid=3)
        + not_found(4)
        + not_found(5)
        + not_found(6)
        + result(HELLO, rid=7)
    )
    assert (done.returncode, done.stdout) == (0, expected)


def test_resources_folder_with_a_target_and_a_size_cap(folder: Path, engine_name: str) -> None:
    real = folder.resolve()
    data = request("resources/read", {"uri": (real / "guide.md").as_uri()}, rid=1) + request(
        "resources/read", {"uri": (real / "nested/data.csv").as_uri()}, rid=2
    )
    args = (str(EXAMPLES / "units.py"), "--resources", str(folder), "--max-resource-bytes", "7")
    done = serve(*args, data=data, engine=engine_name)
    csv = {"contents": [{"uri": (real / "nested/data.csv").as_uri(), "mimeType": "text/csv", "text": "a\n1\n"}]}
    expected = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Resource too large"}}\n' + result(
        orjson.dumps(csv).decode(), rid=2
    )
    assert (done.returncode, done.stdout) == (0, expected)


def test_log_level_info_announces_the_app_on_stderr_only(engine_name: str) -> None:
    done = serve(str(EXAMPLES / "units.py"), "--log-level", "info", data=request("ping", rid=1), engine=engine_name)
    assert (done.returncode, done.stdout) == (0, result("{}", rid=1))
    assert done.stderr.decode().splitlines() == [
        f"shipcode-mcp: info: serving units 1.0.0 (engine: {engine_name})",
        "shipcode-mcp: info: end of input; exiting",
    ]
