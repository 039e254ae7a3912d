"""Started by hand at a terminal, the server says on stderr what it is and how to end it."""

from __future__ import annotations

import os
import pty
import subprocess

from support.wire import SERVER_COMMAND, engine_env

import shipcode_mcp


def test_a_terminal_gets_a_one_line_banner_on_stderr(engine_name: str) -> None:
    controller, terminal = pty.openpty()
    # Typed at the terminal before the server starts: a ping, then Ctrl-D at the start of a line.
    os.write(controller, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n\x04')
    try:
        done = subprocess.run(
            SERVER_COMMAND,
            stdin=terminal,
            capture_output=True,
            env=engine_env(engine_name),
            timeout=60,
            check=False,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    banner = (
        f"shipcode-mcp {shipcode_mcp.__version__} (engine: {engine_name}) serving shipcode-mcp: "
        "one JSON-RPC message per line on stdin; end with Ctrl-D\n"
    )
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        0,
        b'{"jsonrpc":"2.0","id":1,"result":{}}\n',
        banner,
    )


def test_piped_input_gets_no_banner(engine_name: str) -> None:
    done = subprocess.run(
        SERVER_COMMAND, input=b"", capture_output=True, env=engine_env(engine_name), timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
