"""Which engine runs: the compiled one by default, the pure one on request, never pure by surprise."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.wire import SERVER_COMMAND, default_catalogue, engine_env

import shipcode_mcp


def version_line(env: dict[str, str]) -> bytes:
    done = subprocess.run([*SERVER_COMMAND, "--version"], capture_output=True, env=env, timeout=60, check=True)
    assert done.stderr == b""
    return done.stdout


@pytest.mark.compiled
def test_compiled_engine_is_loaded_by_default() -> None:
    """A normal install must run compiled: an optional build must not ship pure silently."""
    from shipcode_mcp import _engine

    assert _engine.IMPLEMENTATION == "compiled"
    assert _engine.Engine.__module__ == "shipcode_mcp._engine_c"
    expected = f"shipcode-mcp {shipcode_mcp.__version__} (engine: compiled)\n".encode()
    assert version_line(engine_env("compiled")) == expected


def test_no_extensions_forces_the_pure_engine() -> None:
    assert version_line(engine_env("pure")) == f"shipcode-mcp {shipcode_mcp.__version__} (engine: pure)\n".encode()


# A compiled engine that cannot be imported (not built, or a broken build), simulated in a
# child interpreter whatever this install has.
UNIMPORTABLE = "import sys; sys.modules['shipcode_mcp._engine_c'] = None\n"
SELECTED = "from shipcode_mcp import _engine\nprint(_engine.IMPLEMENTATION)\n"
REFUSED = (
    b"SHIPCODE_MCP_REQUIRE_EXTENSIONS is set, but the compiled engine cannot be imported "
    b"(import of shipcode_mcp._engine_c halted; None in sys.modules); reinstall with a C compiler, "
    b"or unset SHIPCODE_MCP_REQUIRE_EXTENSIONS to allow the pure engine"
)


def selector_env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHIPCODE_MCP_")}
    env.update({f"SHIPCODE_MCP_{name}": value for name, value in settings.items()})
    return env


def python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_without_the_compiled_engine_the_pure_one_serves() -> None:
    done = python(UNIMPORTABLE + SELECTED, selector_env())
    assert (done.returncode, done.stdout, done.stderr) == (0, b"pure\n", b"")


def test_require_extensions_refuses_the_fallback() -> None:
    code = UNIMPORTABLE + "try:\n    import shipcode_mcp._engine\nexcept ImportError as error:\n    print(error)\n"
    done = python(code, selector_env(REQUIRE_EXTENSIONS="1"))
    assert (done.returncode, done.stdout, done.stderr) == (0, REFUSED + b"\n", b"")


def test_require_extensions_stops_the_server_before_it_serves() -> None:
    code = UNIMPORTABLE + "from shipcode_mcp.cli import main\nraise SystemExit(main())\n"
    for args in (("--version",), ()):
        done = python(code, selector_env(REQUIRE_EXTENSIONS="1"), *args)
        assert done.returncode == 1, args
        assert done.stdout == b"", args
        assert done.stderr.splitlines()[-1] == b"ImportError: " + REFUSED, args


def test_no_extensions_wins_over_require_extensions() -> None:
    done = python(UNIMPORTABLE + SELECTED, selector_env(NO_EXTENSIONS="1", REQUIRE_EXTENSIONS="1"))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"pure\n", b"")


def test_console_script_and_module_agree(engine_name: str) -> None:
    env = engine_env(engine_name)
    script = os.path.join(os.path.dirname(sys.executable), "shipcode-mcp")
    if not os.path.exists(script):
        pytest.skip("console script not installed next to this interpreter")
    by_script = subprocess.run([script, "--version"], capture_output=True, env=env, timeout=60, check=True)
    assert by_script.stdout == version_line(env)


def test_both_engines_expose_the_same_interface(engine_module) -> None:
    engine = engine_module.Engine(default_catalogue())
    public = {name for name in dir(engine) if not name.startswith("_")}
    assert public == {
        "feed",
        "finish",
        "message",
        "serve",
        "initialized",
        "implementation",
        "fast_path",
        "attach",
        "take",
        "resume",
        "end_input",
        "emit",
        "flush",
        "flush_soon",
        "refresh",
        "modern_only",
        "fast",
        "http_modern",
        "judge",
    }
