"""Diagnostics on stderr, filtered by ``--log-level``; stdout is never touched."""

from __future__ import annotations

import sys

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "off": 100}
_threshold = LEVELS["warning"]


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


def log_exception(message: str) -> None:
    """Log an error with the traceback of the exception being handled."""
    if LEVELS["error"] >= _threshold:
        import traceback

        log("error", f"{message}\n{traceback.format_exc().rstrip()}")
