"""``shipcode-mcp --http``: an app's ASGI application served by uvicorn, in one process or several.

uvicorn (with its C HTTP parser and uvloop) comes with the optional extra ``shipcode-mcp[http]``.
Several processes share one listening socket (uvicorn's ``workers``); each builds the app again
from the command line handed down to it (:func:`serve_processes`), and all of them seal 2026-07-28
request states with one key: the app's, ``SHIPCODE_MCP_STATE_KEY``'s, or one made here and handed
down in that variable.
"""

from __future__ import annotations

import json
import os
import secrets
import sys

from ...asking.state import STATE_KEY_VARIABLE
from ...lifespan import EXIT_LIFESPAN, FAILED_FILE_VARIABLE
from ...limits import DEFAULT_HEAD_SECONDS, DEFAULT_MAX_HEAD_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The extra that brings uvicorn.
EXTRA = "shipcode-mcp[http]"
#: Seconds open streams (subscriptions, session streams) may take to end when the server stops.
SHUTDOWN_GRACE_SECONDS = 5
#: Any non-empty value: every request goes to the ASGI app, none is answered below it (to compare the two).
ASGI_ONLY_VARIABLE = "SHIPCODE_MCP_HTTP_ASGI_ONLY"
#: uvicorn's log level for each of ``--log-level``'s.
LOG_LEVELS = {"debug": "debug", "info": "info", "warning": "warning", "error": "error", "off": "critical"}
#: Hands the command line to the processes of ``--http --processes N``: the JSON of ``[builder, argv]``.
HANDOFF_VARIABLE = "SHIPCODE_MCP_HTTP_ARGV"
#: Names the directory, private to one server, where its processes relay legacy sessions' requests to one
#: another (:mod:`.relay`).
RELAY_DIRECTORY_VARIABLE = "SHIPCODE_MCP_RELAY_DIRECTORY"


def parse_address(text: str) -> tuple[str, int]:
    """``(host, port)`` of ``[HOST:]PORT`` (host 127.0.0.1 when not given; ``[::1]:PORT`` for IPv6)."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host = "127.0.0.1"
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port.isdigit() or int(port) > 65535 or (colon and not host):
        raise ValueError(text)
    return host, int(port)


def uvicorn_missing() -> str | None:
    """Why uvicorn cannot serve (one line), or None when it can."""
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        return f"--http needs uvicorn: pip install '{EXTRA}'"
    return None


def share_state_key(configured: object) -> None:
    """Give the processes of one server one state key: make one when neither the app nor the
    environment has one."""
    if configured is None and not os.environ.get(STATE_KEY_VARIABLE):
        os.environ[STATE_KEY_VARIABLE] = secrets.token_urlsafe(32)


def serve_processes(builder: str, argv: list[str], state_key: object, *where_and_how: Any) -> int:
    """Serve as :func:`serve` does (``where_and_how``: its arguments after the app) with several processes,
    each building its ASGI app with ``builder(argv)`` (an import string ``module:function``: the command
    line's own builder), all under one state key (``state_key``: the app's, None when it has none), and
    meeting in a directory of their own (:data:`RELAY_DIRECTORY_VARIABLE`)."""
    import tempfile

    share_state_key(state_key)
    os.environ[HANDOFF_VARIABLE] = json.dumps([builder, list(argv)])
    with tempfile.TemporaryDirectory(prefix="shipcode-mcp-") as directory:
        os.environ[RELAY_DIRECTORY_VARIABLE] = directory
        return serve(f"{__name__}:worker_app", *where_and_how)


def worker_app() -> Any:
    """One process of :func:`serve_processes`: its ASGI app, built from what was handed down."""
    import importlib

    builder, argv = json.loads(os.environ[HANDOFF_VARIABLE])
    module, _, name = builder.partition(":")
    return getattr(importlib.import_module(module), name)(argv)


def protocol(max_head_bytes: int, head_timeout: float) -> dict[str, Any]:
    """uvicorn's options for its HTTP protocol: :class:`~.connection.HttpConnection` with these head limits
    (answering below ASGI unless :data:`ASGI_ONLY_VARIABLE` is set), or, without httptools, h11 with its own
    limit on a head's size (a 400, and no head timeout)."""
    try:
        from .connection import HttpConnection
    except ImportError:
        return {"http": "h11", "h11_max_incomplete_event_size": max_head_bytes}
    import functools

    # A partial of an importable class: it pickles, so uvicorn's spawned processes get it too.
    direct = not os.environ.get(ASGI_ONLY_VARIABLE)
    connection = functools.partial(
        HttpConnection, max_head_bytes=max_head_bytes, head_timeout=head_timeout, direct=direct
    )
    return {"http": connection}


def serve(
    app: Any,
    host: str,
    port: int,
    processes: int,
    log_level: str,
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES,
    head_timeout: float = DEFAULT_HEAD_SECONDS,
) -> int:
    """Serve an ASGI app (or, for several processes, the import string of a factory) until stopped; 0, or
    :data:`~shipcode_mcp.lifespan.EXIT_LIFESPAN` when the app's lifespan failed in a process (said there).

    uvicorn handles the stop signals while it serves, then raises the one it caught again: the
    command line's own handler then ends the process with status 0.
    """
    import uvicorn

    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": LOG_LEVELS[log_level],
        # An access line per request only where the log level shows it (uvicorn would format it anyway).
        "access_log": log_level in ("debug", "info"),
        "lifespan": "on",
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_SECONDS,
        "server_header": False,
        **protocol(max_head_bytes, head_timeout),
    }
    import tempfile

    with tempfile.TemporaryDirectory(prefix="shipcode-mcp-") as directory:
        # A process whose lifespan fails writes this file (see :mod:`shipcode_mcp.lifespan`).
        failed = os.environ[FAILED_FILE_VARIABLE] = os.path.join(directory, "lifespan-failed")
        try:
            if processes > 1:
                uvicorn.run(app, factory=True, workers=processes, **options)
            else:
                uvicorn.run(app, **options)
        except SystemExit:
            if not os.path.exists(failed):
                raise
        finally:
            del os.environ[FAILED_FILE_VARIABLE]
            sys.stderr.flush()
        return EXIT_LIFESPAN if os.path.exists(failed) else 0
