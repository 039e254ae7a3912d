"""Diagnostics on stderr, filtered by ``--log-level``; stdout is never touched."""

from __future__ import annotations

import sys

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "off": 100}
#: The level in force until :func:`set_level` is called (``--log-level``'s default).
DEFAULT_LEVEL = "warning"
_threshold = LEVELS[DEFAULT_LEVEL]


def set_level(name: str) -> None:
    """Keep messages at ``name`` and above (one of :data:`LEVELS`)."""
    global _threshold
    _threshold = LEVELS[name]


def log(level: str, message: str) -> None:
    """Write one ``shipcode-mcp: <level>: <message>`` line to stderr if the level is on."""
    if LEVELS[level] >= _threshold:
        try:
            sys.stderr.write(f"shipcode-mcp: {level}: {message}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def log_exception(message: str, error: BaseException | None = None) -> None:
    """Log an error with the traceback of ``error`` (default: the exception being handled)."""
    if LEVELS["error"] >= _threshold:
        import traceback

        text = traceback.format_exc() if error is None else "".join(traceback.format_exception(error))
        log("error", f"{message}\n{text.rstrip()}")
