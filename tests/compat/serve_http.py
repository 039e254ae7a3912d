"""Serve an app of the corpus over Streamable HTTP with its own framework, without editing the app.

The apps start over stdio when run as scripts (``mcp.run()``); this loads one under another
module name, finds its server object and starts it the way its framework's documentation starts
HTTP: ``run(transport="streamable-http")`` for the official SDK (its port set in the server's
settings on mcp 1.x, passed to ``run`` on mcp 2.x), ``run(transport="http", port=...)`` for
FastMCP. A factory (``app.py:create_server``) is called first.

    python serve_http.py APP[:FACTORY] PORT
"""

from __future__ import annotations

import runpy
import sys


def server_of(namespace: dict, factory: str | None):
    """The app's server object: what ``factory`` returns, or the one global that has ``run`` and ``tool``."""
    if factory:
        return namespace[factory]()
    found = [value for value in namespace.values() if not isinstance(value, type) and hasattr(value, "tool")]
    found = [value for value in found if hasattr(value, "run")]
    if len(found) != 1:
        raise SystemExit(f"expected one server object, found {len(found)}")
    return found[0]


def main() -> None:
    target, port = sys.argv[1], int(sys.argv[2])
    path, _, factory = target.partition(":")
    server = server_of(runpy.run_path(path, run_name="app"), factory or None)
    module = type(server).__module__
    if module.startswith("fastmcp"):
        server.run(transport="http", host="127.0.0.1", port=port, show_banner=False)
    elif module.startswith("mcp.server.fastmcp"):
        server.settings.port = port
        server.run(transport="streamable-http")
    else:
        server.run(transport="streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
