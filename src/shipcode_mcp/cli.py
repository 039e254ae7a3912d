"""The ``shipcode-mcp`` command: build the app, guard stdout, pick the engine, serve."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from .protocol import DEFAULT_MAX_MESSAGE_BYTES, ServerStop

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .app import Server

EXIT_OK = 0
EXIT_USAGE = 2


def guard_stdout() -> int:
    """Keep a private descriptor on the real stdout and point fd 1 and ``sys.stdout`` at stderr.

    From then on a ``print`` in user code, or a C library writing to fd 1, lands on stderr
    and can never corrupt the protocol stream. Returns the protocol's descriptor.
    """
    protocol_fd = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no usable stderr: send stray output nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = sys.stderr
    return protocol_fd


def _stop(signum: int, frame: object) -> None:
    raise ServerStop(signum)


def serve_app(app: Server, max_message_bytes: int | None = None) -> int:
    """Serve ``app`` on stdin/stdout until EOF, a closed stdout, SIGTERM or SIGINT; return 0."""
    import signal

    from . import _log
    from ._engine import IMPLEMENTATION, Engine

    engine = Engine(app.catalogue(), max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES)
    protocol_fd = guard_stdout()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _stop)
    _log.log("info", f"serving {app.name} {app.version} (engine: {IMPLEMENTATION})")
    try:
        engine.serve(0, protocol_fd)
    except BrokenPipeError:
        _log.log("info", "stdout closed by the client; exiting")
    except ServerStop as stop:
        _log.log("info", f"stopped by signal {stop.args[0]}")
    else:
        _log.log("info", "end of input; exiting")
    return EXIT_OK


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_positive_int.__name__ = "positive integer"


def build_parser():  # -> argparse.ArgumentParser
    """The command-line parser (every option documented in ``--help``)."""
    import argparse

    from . import __version__, _log
    from ._engine import IMPLEMENTATION

    parser = argparse.ArgumentParser(
        prog="shipcode-mcp",
        description=(
            "Serve the Model Context Protocol (2025-06-18) over stdio: newline-delimited "
            "JSON-RPC 2.0 on stdin, one compact JSON answer per line on stdout, diagnostics on "
            "stderr, exit 0 at end of input. Without a target it serves the default catalogue: "
            "the tools echo and add and the resource file:///hello.txt."
        ),
        epilog=(
            "Environment: SHIPCODE_MCP_NO_EXTENSIONS=1 forces the pure-Python engine "
            "(the compiled engine is used when it is installed)."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"shipcode-mcp {__version__} (engine: {IMPLEMENTATION})",
        help="print the version and the live engine (compiled or pure), then exit",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metavar="N",
        help=(
            "longest accepted input line in bytes, not counting its line ending; a longer line "
            "is answered -32600 Invalid Request and discarded as it streams in "
            f"(default: {DEFAULT_MAX_MESSAGE_BYTES}, i.e. 16 MiB)"
        ),
    )
    parser.add_argument(
        "--log-level",
        choices=list(_log.LEVELS),
        default="warning",
        help="what to log on stderr (default: warning); stdout carries protocol messages only",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``shipcode-mcp`` and ``python -m shipcode_mcp``."""
    from . import _log

    args = build_parser().parse_args(argv)
    _log.set_level(args.log_level)
    from .defaults import app

    return serve_app(app, args.max_message_bytes)


if __name__ == "__main__":
    raise SystemExit(main())
