"""fastmcp's server composition (``mount``, ``import_server``) is not served: an app that composes servers
is refused at load with one line saying so, never served without the other server's tools."""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from support.wire import SERVER_COMMAND, engine_env

from shipcode_mcp.compat.fastmcp import FastMCP

REASON = (
    "fastmcp's server composition ({}) is not served by shipcode-mcp: register the other server's tools, "
    "resources and prompts on this one (docs/migrating.md, Every difference)"
)


def test_mount_and_import_server_are_refused_with_the_reason() -> None:
    main, other = FastMCP("main"), FastMCP("other")
    with pytest.raises(NotImplementedError) as mounted:
        main.mount(other, prefix="other")
    with pytest.raises(NotImplementedError) as imported:
        asyncio.run(main.import_server(other, prefix="other"))
    assert (str(mounted.value), str(imported.value)) == (REASON.format("mount"), REASON.format("import_server"))


def test_the_command_refuses_an_app_that_mounts_another(engine_name: str, tmp_path) -> None:
    app = tmp_path / "composed.py"
    app.write_text('from fastmcp import FastMCP\n\nmcp = FastMCP("main")\nmcp.mount(FastMCP("b"), prefix="b")\n')
    done = subprocess.run(
        [*SERVER_COMMAND, str(app)], input=b"", capture_output=True, env=engine_env(engine_name), timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        2,
        b"",
        f"shipcode-mcp: error: cannot load {str(app)!r}: NotImplementedError: {REASON.format('mount')} (at {app}:4)\n",
    )
