"""Apps moved over by their imports: ``python app.py`` with the framework's imports switched to shipcode-mcp's.

Each app of the corpus that starts with ``run()`` under ``if __name__ == "__main__":`` is copied with
its framework imports rewritten as docs/migrating.md's table says, and run as ``python app.py`` in the
framework's environment (shipcode-mcp on ``PYTHONPATH``, no import hook): its transcript must be the
referee's, as the unchanged app's is under ``shipcode-mcp app.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import recorder
import test_referees

#: The import table of docs/migrating.md: a framework's module (and any submodule of it) -> shipcode-mcp's.
STAND_INS = {
    "mcp.server.fastmcp": "shipcode_mcp.compat.fastmcp_sdk1",
    "mcp.server.mcpserver": "shipcode_mcp.compat.mcpserver",
    "fastmcp": "shipcode_mcp.compat.fastmcp",
}
_IMPORT = re.compile(r"^from (mcp\.server\.fastmcp|mcp\.server\.mcpserver|fastmcp)((?:\.\w+)*) import (.+)$", re.M)


def switched(source: str) -> str:
    """``source`` with each import from a framework's module rewritten to its stand-in; a submodule imported
    by name (``from mcp.server.fastmcp.prompts import base``) becomes the stand-in module itself."""

    def rewrite(found: re.Match[str]) -> str:
        stand_in = STAND_INS[found.group(1)]
        names = found.group(3)
        if names.islower():  # a module: prompts.base
            package, _, module = stand_in.rpartition(".")
            return f"from {package} import {module} as {names}"
        return f"from {stand_in} import {names}"

    return _IMPORT.sub(rewrite, source)


def test_the_import_table_rewrites_each_form() -> None:
    source = (
        "from mcp.server.fastmcp import Context, FastMCP, Image\n"
        "from mcp.server.fastmcp.prompts import base\n"
        "from mcp.server.mcpserver.exceptions import ToolError\n"
        "from fastmcp.tools.tool import ToolResult\n"
        "from mcp.types import TextContent\n"
    )
    assert switched(source) == (
        "from shipcode_mcp.compat.fastmcp_sdk1 import Context, FastMCP, Image\n"
        "from shipcode_mcp.compat import fastmcp_sdk1 as base\n"
        "from shipcode_mcp.compat.mcpserver import ToolError\n"
        "from shipcode_mcp.compat.fastmcp import ToolResult\n"
        "from mcp.types import TextContent\n"
    )


#: One app of each API that starts itself (``run()`` under ``if __name__ == "__main__":``), with its referee; the
#: engines and the other apps are the unchanged apps' comparison's to cover.
RUN_DIRECTLY = [
    pytest.param(recorder.APPS / name, framework, id=f"{name.removesuffix('.py')}-{framework}")
    for name, framework in (
        ("quickstart_sdk1.py", "mcp1"),
        ("quickstart_sdk2.py", "mcp2"),
        ("shop_fastmcp.py", "fastmcp4"),
    )
]


@pytest.mark.parametrize(("app", "framework"), RUN_DIRECTLY)
def test_python_app_py_with_switched_imports_answers_as_the_framework_does(
    app: Path, framework: str, tmp_path: Path
) -> None:
    expected = test_referees.referee(app, framework, "stdio")
    changed = tmp_path / app.name
    changed.write_text(switched(app.read_text()))
    interpreter = test_referees.environments.python(framework)
    command = [
        *("env", "-u", "SHIPCODE_MCP_NO_EXTENSIONS", "-u", "SHIPCODE_MCP_REQUIRE_EXTENSIONS"),
        test_referees.ENGINE_SWITCHES["compiled"],
        f"PYTHONPATH={test_referees.shipcode_path()}",
        str(interpreter),
        str(changed),
    ]
    actual = recorder.record(lambda port: command, app)
    test_referees.compare(app, expected, actual)
