"""Peers over Streamable HTTP: the official MCP Python SDK's low-level ``Server``, or with ``--fastmcp`` the
separate ``fastmcp`` package, each serving the benchmark catalogue's tools in its stateless JSON configuration
(``stateless_http=True, json_response=True``; the tools are those of ``sdk_lowlevel.py`` and
``fastmcp_server.py``) on uvicorn with httptools and uvloop.

usage: python sdk_http.py [--fastmcp] PORT
"""

from __future__ import annotations

import sys

import uvicorn


def sdk_app():
    from sdk_lowlevel import Server, build_v1, build_v2

    server = build_v1() if hasattr(Server, "call_tool") else build_v2()
    return server.streamable_http_app(stateless_http=True, json_response=True)


def fastmcp_app():
    sys.argv[1:] = ["--standalone"]  # fastmcp_server.py builds the standalone fastmcp app when its argv says so
    import fastmcp_server

    return fastmcp_server.app.http_app(stateless_http=True, json_response=True)


if __name__ == "__main__":
    port = int(sys.argv[-1])
    app = fastmcp_app() if sys.argv[1] == "--fastmcp" else sdk_app()
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        http="httptools",
        loop="uvloop",
        log_level="warning",
        server_header=False,
        lifespan="on",
    )
