"""Serve an app file unchanged over Streamable HTTP with its own framework, as its documentation recommends.

    python own_http.py APP.py PORT

The app's ``__main__`` block is not run (it starts stdio); its server object ``mcp`` is served with
``mcp.run(transport="streamable-http")`` on 127.0.0.1:PORT, one process, the framework's defaults otherwise
(stateful sessions; the official SDK's ``json_response`` and ``stateless_http`` stay off, as in its docs).
"""

import runpy
import sys

path, port = sys.argv[1], int(sys.argv[2])
mcp = runpy.run_path(path)["mcp"]
if type(mcp).__module__.startswith("mcp."):  # the official SDK: host and port are settings
    mcp.settings.host, mcp.settings.port = "127.0.0.1", port
    mcp.run(transport="streamable-http")
else:  # fastmcp
    mcp.run(transport="streamable-http", host="127.0.0.1", port=port)
