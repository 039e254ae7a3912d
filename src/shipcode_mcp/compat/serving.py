"""A framework app over HTTP: its Streamable HTTP endpoint with its own routes (``custom_route``) beside it,
``run(transport="streamable-http")``, and the ``session_manager`` a host app's lifespan runs."""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from typing import Any

    from .base import FrameworkServer


class FrameworkHttpApp:
    """An ASGI app: a request for one of the app's own routes goes to its endpoint (a Starlette
    ``Request`` in, a response out), anything else to the Streamable HTTP app (``/mcp``)."""

    def __init__(self, server: FrameworkServer, endpoint: Any) -> None:
        self.server = server
        #: The native Streamable HTTP app (see :mod:`shipcode_mcp.transports.http`).
        self.endpoint = endpoint

    def __getattr__(self, name: str) -> Any:  # the endpoint's limits, for the server that serves it
        return getattr(self.endpoint, name)

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "http" and self.server.custom_routes:
            root = scope.get("root_path", "")
            path = scope["path"][len(root) :] if root and scope["path"].startswith(root) else scope["path"]
            for route, methods, endpoint in self.server.custom_routes:
                if route == path:
                    from starlette.requests import Request
                    from starlette.responses import PlainTextResponse

                    if scope["method"] in methods or (scope["method"] == "HEAD" and "GET" in methods):
                        response = await endpoint(Request(scope, receive))
                    else:
                        response = PlainTextResponse("Method Not Allowed", 405, {"Allow": ", ".join(methods)})
                    await response(scope, receive, send)
                    return
        await self.endpoint(scope, receive, send)


def framework_http_app(server: FrameworkServer, path: str = "/mcp", **options: Any) -> FrameworkHttpApp:
    """The server's HTTP app (made once: a host's lifespan runs the sessions of the one it mounted)."""
    made = getattr(server, "_http_app", None)
    if made is None or options or made.endpoint.path != path:
        from ..app import Server

        server.over_http = True  # before the endpoint makes a catalogue
        made = FrameworkHttpApp(server, Server.http_app(server, path, **options))
        server._http_app = made
    return made


class SessionManager:
    """``mcp.session_manager``: ``async with mcp.session_manager.run():`` in a host app's lifespan starts the
    mounted app's sessions and ends them (and their work) when the host shuts down."""

    def __init__(self, server: FrameworkServer) -> None:
        self.server = server

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        app = framework_http_app(self.server).endpoint
        app.shared()
        try:
            yield
        finally:
            app.sessions.close_all()


def serve_http(server: FrameworkServer, host: str, port: int) -> None:
    """``run(transport="streamable-http")``: serve the app at ``http://host:port/mcp`` with uvicorn."""
    import sys

    from ..transports.http import serve

    missing = serve.uvicorn_missing()
    if missing is not None:
        sys.stderr.write(f"shipcode-mcp: error: {missing}\n")
        raise SystemExit(2)
    app = framework_http_app(server)
    serve.serve(app, host, int(port), 1, "warning", app.max_head_bytes, app.head_timeout)
