"""The tests' wire: messages to send, the exact bytes to expect, and how to reach each engine.

Builders take the request id last (``rid``, any JSON value, 1 unless given) and return whole
lines, newline included. The default catalogue's expected bytes are written here once.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

# -- engines and the server command ---------------------------------------------------------

ENGINE_NAMES = ("compiled", "pure")
ENGINE_MODULES = {"compiled": "shipcode_mcp._engine_c", "pure": "shipcode_mcp._engine_py"}
SERVER_COMMAND = [sys.executable, "-m", "shipcode_mcp"]


def engine(name: str) -> ModuleType:
    """The engine module called ``name`` (``"compiled"`` or ``"pure"``); import errors propagate."""
    return importlib.import_module(ENGINE_MODULES[name])


def headerscan(name: str) -> ModuleType:
    """The HTTP header scan of the engine called ``name``: its compiled or pure twin (import errors propagate)."""
    return importlib.import_module(f"shipcode_mcp.transports.http._headerscan_{'c' if name == 'compiled' else 'py'}")


def engine_env(engine_name: str) -> dict[str, str]:
    """Environment that makes ``shipcode-mcp`` run the given engine, and no other.

    For the compiled engine the server refuses to fall back to the pure one
    (``SHIPCODE_MCP_REQUIRE_EXTENSIONS``): a ``[compiled]`` test fails if the extension cannot load.
    """
    selectors = ("SHIPCODE_MCP_NO_EXTENSIONS", "SHIPCODE_MCP_REQUIRE_EXTENSIONS")
    env = {k: v for k, v in os.environ.items() if k not in selectors}
    if engine_name == "pure":
        env["SHIPCODE_MCP_NO_EXTENSIONS"] = "1"
    else:
        env["SHIPCODE_MCP_REQUIRE_EXTENSIONS"] = "1"
    return env


def run_server(
    engine_name: str, data: bytes, *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """The server on ``engine_name`` over pipes: ``data`` as its whole input, everything it wrote."""
    return subprocess.run(
        [*SERVER_COMMAND, *args],
        input=data,
        capture_output=True,
        env=engine_env(engine_name),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def default_catalogue():
    """The catalogue of the default app (tools ``echo`` and ``add``, resource ``hello.txt``)."""
    from shipcode_mcp.defaults import app

    return app.catalogue()


# -- the clock of sealed request states --------------------------------------------------------


class StateClock:
    """The clock the sealed request states read, set by the test: ``StateClock(monkeypatch, now)``.

    It stands in for the ``time`` module of :mod:`shipcode_mcp.asking.state`; ``now`` is the
    time it answers until changed.
    """

    def __init__(self, patch: Any, now: float) -> None:
        from shipcode_mcp.asking import state

        self.now = now
        patch.setattr(state, "time", self)

    def time(self) -> float:
        return self.now


# -- messages to send -----------------------------------------------------------------------


def request(method: str, params: object = None, rid: object = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return orjson.dumps(message) + b"\n"


def notification(method: str, params: object = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return orjson.dumps(message) + b"\n"


def call(name: object, arguments: object = None, rid: object = 1, meta: dict | None = None) -> bytes:
    """A ``tools/call``; ``arguments`` is left out when None."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if meta is not None:
        params["_meta"] = meta
    return request("tools/call", params, rid)


def read(uri: object, rid: object = 1) -> bytes:
    return request("resources/read", {"uri": uri}, rid)


def ping(rid: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % rid


# -- bytes to expect ------------------------------------------------------------------------

HEAD = b'{"jsonrpc":"2.0","id":'


def result(body: str | bytes, rid: object = 1) -> bytes:
    """The success line for ``rid`` whose result is the JSON text ``body``."""
    body = body.encode() if isinstance(body, str) else body
    return HEAD + orjson.dumps(rid) + b',"result":' + body + b"}\n"


def error(code: int, message: str, rid: object = 1) -> bytes:
    return HEAD + orjson.dumps(rid) + b',"error":{"code":%d,"message":%s}}\n' % (code, orjson.dumps(message))


def text(value: str, rid: object = 1, is_error: bool = False) -> bytes:
    """The result of a tool call that returned the text ``value`` (a tool error when ``is_error``)."""
    tail = b'}],"isError":true}' if is_error else b"}]}"
    return result(b'{"content":[{"type":"text","text":' + orjson.dumps(value) + tail, rid)


def not_found(rid: object = 1) -> bytes:
    return error(-32002, "Resource not found", rid)


def pong(rid: int) -> bytes:
    return HEAD + b'%d,"result":{}}\n' % rid


PARSE = HEAD + b'null,"error":{"code":-32700,"message":"Parse error"}}\n'
INVALID_NULL = HEAD + b'null,"error":{"code":-32600,"message":"Invalid Request"}}\n'

# -- the default catalogue's answers ----------------------------------------------------------

INIT_RESULT = (
    b'{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{}},'
    b'"serverInfo":{"name":"shipcode-mcp","version":"1.0.0"}}'
)
TOOLS = (
    b'{"tools":[{"name":"echo","description":"Echo back the given text","inputSchema":{"type":"object",'
    b'"properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},'
    b'{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":'
    b'{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}}]}'
)
RESOURCES = b'{"resources":[{"uri":"file:///hello.txt","name":"hello.txt","mimeType":"text/plain"}]}'
HELLO = b'{"contents":[{"uri":"file:///hello.txt","mimeType":"text/plain","text":"Hello, world!"}]}'
