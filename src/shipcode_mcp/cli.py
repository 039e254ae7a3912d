"""The ``shipcode-mcp`` command: guard stdout, build the app, pick the engine, serve.

``shipcode-mcp [TARGET] [--resources DIR]... [options]``: see ``--help``. Heavy modules are
imported only by the branches that need them, so start-up stays fast.
"""

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


_protocol_fd: int | None = None


def guard_stdout() -> int:
    """Keep a private descriptor on the real stdout and point fd 1 and ``sys.stdout`` at stderr.

    From then on a ``print`` in user code, or a C library writing to fd 1, lands on stderr
    and can never corrupt the protocol stream. Returns the protocol's descriptor; a second
    call returns the same descriptor.
    """
    global _protocol_fd
    if _protocol_fd is not None:
        return _protocol_fd
    protocol_fd = _protocol_fd = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no usable stderr: send stray output nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = sys.stderr
    return protocol_fd


_STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


PIPE_SIZE = 1024 * 1024


def enlarge_pipes(fds: tuple[int, ...]) -> None:
    """Ask Linux for 1 MiB pipe buffers on ``fds`` that are pipes (the default is 64 KiB).

    Fewer, larger reads and writes: about twice the throughput for large answers. Where it
    is not allowed (another OS, a lower ``/proc/sys/fs/pipe-max-size``) nothing changes.
    """
    try:
        import fcntl

        set_size = fcntl.F_SETPIPE_SZ
    except (ImportError, AttributeError):
        return
    for fd in fds:
        try:
            fcntl.fcntl(fd, set_size, PIPE_SIZE)
        except OSError:
            pass


def _stop(signum: int, frame: object) -> None:
    ignore_stop_signals()  # a second signal must not interrupt the way out
    raise ServerStop(signum)


def handle_stop_signals() -> None:
    """Make SIGTERM, SIGINT and SIGHUP stop serving: pending answers are flushed, exit 0."""
    import signal

    for name in _STOP_SIGNALS:
        signal.signal(getattr(signal, name), _stop)


def ignore_stop_signals() -> None:
    """From now on the server is on its way out: further stop signals change nothing."""
    import signal

    for name in _STOP_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_IGN)


def standard_descriptors_ready() -> bool:
    """Put /dev/null on a closed stdin or stderr; False when stdout is closed (no one to answer)."""
    for fd, mode in ((0, os.O_RDONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, mode)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            if fd == 2 and sys.stderr is None:
                sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    try:
        os.fstat(1)
    except OSError:
        return False
    return True


def serve_app(app: Server, max_message_bytes: int | None = None) -> int:
    """Serve ``app`` on stdin/stdout until EOF, a closed stdout, SIGTERM or SIGINT; return 0."""
    from . import _log
    from ._engine import IMPLEMENTATION, Engine

    protocol_fd = guard_stdout()
    enlarge_pipes((0, protocol_fd))
    engine = Engine(app.catalogue(), max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES)
    handle_stop_signals()
    _log.log("info", f"serving {app.name} {app.version} (engine: {IMPLEMENTATION})")
    try:
        engine.serve(0, protocol_fd)
    except BrokenPipeError:
        _log.log("info", "stdout closed by the client; exiting")
    except ServerStop as stop:
        _log.log("info", f"stopped by signal {stop.args[0]}")
    else:
        _log.log("info", "end of input; exiting")
    finally:
        ignore_stop_signals()
    return EXIT_OK


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_positive_int.__name__ = "positive integer"


def _size(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


_size.__name__ = "size in bytes"


class TargetError(Exception):
    """The app named on the command line cannot be served (exit status 2)."""


def load_target(target: str) -> Server:
    """The :class:`~shipcode_mcp.app.Server` named ``path/to/file.py[:ATTR]`` or ``package.module[:ATTR]``.

    ``ATTR`` defaults to ``app`` and may be dotted (``module:holder.app``). A file is run as a
    module named after its stem, with its folder first on ``sys.path`` (so it can import its
    neighbours); a module is imported with the working directory first on ``sys.path``, as
    ``python -m`` does. Raises :class:`TargetError` with a one-line reason; an exception
    raised by the app's own code is logged with its traceback first.
    """
    import importlib

    from .app import Server

    spec, colon, attribute = target.rpartition(":")
    if not colon:
        spec, attribute = target, "app"
    if not spec or not attribute or not all(part.isidentifier() for part in attribute.split(".")):
        raise TargetError(f"invalid target {target!r}: expected path/to/file.py[:ATTR] or package.module[:ATTR]")
    is_file = spec.endswith(".py") or os.sep in spec or "/" in spec
    try:
        if is_file:
            module = _load_file(spec)
        else:
            if not all(part.isidentifier() for part in spec.split(".")):
                raise TargetError(f"invalid module name {spec!r} in target {target!r}")
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(spec)
    except TargetError:
        raise
    except ModuleNotFoundError as error:
        if not is_file and error.name and (spec == error.name or spec.startswith(error.name + ".")):
            raise TargetError(f"cannot import {spec!r}: no module named {error.name!r}") from None
        _log_load_failure(target)
        raise TargetError(f"cannot load {target!r}: {type(error).__name__}: {error}") from None
    except (Exception, SystemExit) as error:
        _log_load_failure(target)
        raise TargetError(f"cannot load {target!r}: {type(error).__name__}: {error}") from None
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            found = sorted(name for name, item in vars(module).items() if isinstance(item, Server))
            hint = f" (it has: {', '.join(found)})" if found else ""
            raise TargetError(f"{spec!r} has no attribute {attribute!r}{hint}") from None
    if not isinstance(value, Server):
        raise TargetError(f"{spec}:{attribute} is a {type(value).__name__}, not a shipcode_mcp.Server")
    return value


def _load_file(path: str):  # -> ModuleType
    """Run a Python file as a fresh module."""
    import importlib.util

    if not os.path.isfile(path):
        raise TargetError(f"no such file: {path!r}")
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "shipcode_mcp_target"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot load {path!r} as Python")
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _log_load_failure(target: str) -> None:
    import traceback

    sys.stderr.write(f"shipcode-mcp: error while loading {target!r}:\n{traceback.format_exc()}")


def build_parser():  # -> argparse.ArgumentParser
    """The command-line parser (every option documented in ``--help``)."""
    import argparse

    from . import __version__, _log
    from ._engine import IMPLEMENTATION
    from .folder import DEFAULT_MAX_RESOURCE_BYTES

    parser = argparse.ArgumentParser(
        prog="shipcode-mcp",
        description=(
            "Serve the Model Context Protocol (2025-06-18) over stdio: newline-delimited "
            "JSON-RPC 2.0 on stdin, one compact JSON answer per line on stdout, diagnostics on "
            "stderr, exit 0 at end of input. Without a target it serves the default catalogue: "
            "the tools echo and add and the resource file:///hello.txt."
        ),
        epilog=(
            "Output written by the app (print, sys.stdout, or a C library writing to file "
            "descriptor 1) goes to stderr: stdout carries protocol messages only. "
            "Exit status: 0 at end of input or on SIGTERM/SIGINT, 2 for a usage error or a "
            "target that cannot be loaded. "
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
    parser.add_argument(
        "target",
        nargs="?",
        help=(
            "the app to serve: path/to/file.py[:ATTR] or package.module[:ATTR], where ATTR "
            "(default: app) names a shipcode_mcp.Server; a module is looked up from the current "
            "directory first. Default: the built-in catalogue"
        ),
    )
    parser.add_argument(
        "--resources",
        action="append",
        default=[],
        metavar="DIR",
        help=(
            "also serve every regular file under DIR as a resource (repeatable): uri "
            "file:///<real path>, name the path relative to DIR, mimeType guessed from the name; "
            "text files are read as text, others as base64 blobs. Files are listed at start-up "
            "and re-checked on every read: nothing outside DIR is ever listed or read (symlinks "
            "leading out of DIR included)"
        ),
    )
    parser.add_argument(
        "--max-resource-bytes",
        type=_size,
        default=None,
        metavar="N",
        help=(
            "largest file served from a --resources folder; reading a larger one is answered "
            f"-32603 'Resource too large' without reading it (default: {DEFAULT_MAX_RESOURCE_BYTES}, i.e. 16 MiB)"
        ),
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``shipcode-mcp`` and ``python -m shipcode_mcp``."""
    handle_stop_signals()  # from the start: a stop during start-up is quiet too
    try:
        return _main(argv)
    except ServerStop:
        return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    if not standard_descriptors_ready():
        return EXIT_OK
    from . import _log

    args = build_parser().parse_args(argv)
    _log.set_level(args.log_level)
    guard_stdout()  # before any user code runs: even an import-time print must not reach stdout
    try:
        if args.target is None:
            from .defaults import app
        else:
            app = load_target(args.target)
        if args.resources:
            import copy

            app = copy.copy(app)  # the app object itself stays as its module defined it
            app.resources = dict(app.resources)
        for directory in args.resources:
            try:
                app.add_resource_folder(directory, args.max_resource_bytes)
            except OSError as error:
                raise TargetError(f"--resources {directory}: {error.strerror or error}") from None
    except TargetError as error:
        sys.stderr.write(f"shipcode-mcp: error: {error}\n")
        return EXIT_USAGE
    return serve_app(app, args.max_message_bytes)


if __name__ == "__main__":
    raise SystemExit(main())
