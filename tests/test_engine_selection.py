"""Which engine runs: the compiled one by default, the pure one on request."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import SERVER_COMMAND, compiled_skipped, engine_env

import shipcode_mcp


def version_line(env: dict[str, str]) -> bytes:
    done = subprocess.run([*SERVER_COMMAND, "--version"], capture_output=True, env=env, timeout=60, check=True)
    assert done.stderr == b""
    return done.stdout


def test_compiled_engine_is_loaded_by_default(request: pytest.FixtureRequest) -> None:
    """A normal install must run compiled: an optional build must not ship pure silently."""
    if compiled_skipped(request.config):
        pytest.skip("compiled engine deselected")
    from shipcode_mcp import _engine

    assert _engine.IMPLEMENTATION == "compiled"
    assert _engine.Engine.__module__ == "shipcode_mcp._engine_c"
    expected = f"shipcode-mcp {shipcode_mcp.__version__} (engine: compiled)\n".encode()
    assert version_line(engine_env("compiled")) == expected


def test_no_extensions_forces_the_pure_engine() -> None:
    assert version_line(engine_env("pure")) == f"shipcode-mcp {shipcode_mcp.__version__} (engine: pure)\n".encode()


def test_console_script_and_module_agree(engine_name: str) -> None:
    env = engine_env(engine_name)
    script = os.path.join(os.path.dirname(sys.executable), "shipcode-mcp")
    if not os.path.exists(script):
        pytest.skip("console script not installed next to this interpreter")
    by_script = subprocess.run([script, "--version"], capture_output=True, env=env, timeout=60, check=True)
    assert by_script.stdout == version_line(env)


def test_both_engines_expose_the_same_interface(engine_module) -> None:
    from conftest import default_catalogue

    engine = engine_module.Engine(default_catalogue())
    public = {name for name in dir(engine) if not name.startswith("_")}
    assert public == {
        "feed",
        "finish",
        "serve",
        "initialized",
        "implementation",
        "attach",
        "take",
        "resume",
        "end_input",
        "emit",
        "flush",
        "flush_soon",
    }
