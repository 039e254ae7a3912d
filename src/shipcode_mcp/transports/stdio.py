"""Serving an app on the process's stdin and stdout: guards, pipes, signals, engine, scheduler.

The framework (``Server.run``) and the command line both serve through :func:`serve_app`.
An app whose handlers all answer at once is served by the engine's own loop; one with
deferred work (async or blocking tools, a ``Context``) by the concurrent scheduler.
"""

from __future__ import annotations

import os
import sys

from ..protocol import DEFAULT_MAX_MESSAGE_BYTES, ServerStop
from .signals import stop_signals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..app import Server
    from ..catalogue import Catalogue

EXIT_OK = 0

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


def announce_on_terminal(name: str, engine: str) -> None:
    """One line on stderr for a person at a terminal: what serves, and how to end it."""
    from .._version import __version__

    try:
        sys.stderr.write(
            f"shipcode-mcp {__version__} (engine: {engine}) serving {name}: one JSON-RPC message per line "
            "on stdin; end with Ctrl-D\n"
        )
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def serve_app(
    app: Server,
    catalogue: Catalogue | None = None,
    max_message_bytes: int | None = None,
    max_concurrency: int | None = None,
    workers: int | None = None,
    eof_grace: float | None = None,
) -> int:
    """Serve ``app`` (compiled into ``catalogue`` unless given) on stdin/stdout until EOF, a
    closed stdout or a stop signal; return 0.

    Defaults: see :mod:`shipcode_mcp.transports.scheduler` (2000 handlers in flight, 32 worker
    threads, 30 s of grace at end of input).
    """
    from .._engine import IMPLEMENTATION, Engine
    from .._log import log

    for name, value in (("max_concurrency", max_concurrency), ("workers", workers)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be at least 1")
    if eof_grace is not None and eof_grace < 0:
        raise ValueError("eof_grace must not be negative")
    try:
        try:
            stop_signals.install()
            protocol_fd = guard_stdout()
            enlarge_pipes((0, protocol_fd))
            if catalogue is None:
                catalogue = app.catalogue()
            engine = Engine(catalogue, max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES)
            log("info", f"serving {app.name} {app.version} (engine: {IMPLEMENTATION})")
            if os.isatty(0):
                announce_on_terminal(app.name, IMPLEMENTATION)
            if catalogue.concurrent or app.lifespan is not None:  # a lifespan runs on the scheduler's loop
                from ..limits import DEFAULT_EOF_GRACE, DEFAULT_MAX_CONCURRENCY, DEFAULT_WORKERS
                from .scheduler import Scheduler

                scheduler = Scheduler(
                    engine,
                    catalogue.session,
                    0,
                    protocol_fd,
                    stop_signals,
                    max_concurrency or DEFAULT_MAX_CONCURRENCY,
                    workers or DEFAULT_WORKERS,
                    DEFAULT_EOF_GRACE if eof_grace is None else eof_grace,
                )
                if app.lifespan is None:
                    reason = scheduler.serve()
                else:
                    reason = serve_in_lifespan(app, scheduler)
                    if reason is None:
                        from ..lifespan import EXIT_LIFESPAN

                        return EXIT_LIFESPAN
            else:
                stop_signals.check()
                engine.serve(0, protocol_fd)
                reason = "end of input"
        finally:
            stop_signals.end()
    except BrokenPipeError:
        reason = "stdout closed"
    except ServerStop as stop:
        reason = f"signal {stop.args[0]}"
    log("info", f"{reason}; exiting")
    return EXIT_OK


def serve_in_lifespan(app: Server, scheduler: Any) -> str | None:
    """Serve with ``scheduler`` inside ``app``'s lifespan, entered and left on the scheduler's loop; why
    serving ended, or None when the lifespan raised (said on stderr)."""
    from ..lifespan import LifespanFailed, enter, leave, report

    try:
        scheduler.loop.run_until_complete(enter(app))
        try:
            reason = scheduler.serve()
        finally:
            scheduler.loop.run_until_complete(leave(app))
    except LifespanFailed as failed:
        report(failed.args[0])
        return None
    return reason
