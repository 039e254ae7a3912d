"""Under the import hook, ``mcp`` and ``mcp.server`` (the installed parents of the stand-in
``mcp.server.fastmcp``) do not run their ``__init__`` (the whole SDK, its client included) until the app
asks one of them for a name; their submodules and names stay the installed package's."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from shipcode_mcp.compat import hook
hook.install()
from mcp.server.fastmcp import FastMCP
import mcp.types
print(FastMCP.__module__, "mcp.client.session" in sys.modules, mcp.types.__name__)
from mcp import ClientSession
from mcp.server import Server
print(ClientSession.__module__, Server.__module__, sys.modules["mcp"].__spec__.origin == sys.modules["mcp"].__file__)
"""


def test_the_parents_run_their_init_on_the_first_name_asked() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr, done.stdout) == (
        0,
        "",
        "shipcode_mcp.compat.fastmcp_sdk1 False mcp.types\nmcp.client.session mcp.server.lowlevel.server True\n",
    )
