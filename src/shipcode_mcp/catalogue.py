"""The seam between an app and the engines.

A :class:`Catalogue` is what an engine serves: ``routes`` maps each served method name to
either the pre-encoded bytes that follow the id in its answer (constant results such as
``ping`` or ``tools/list``), or to a handler ``handler(params) -> result body bytes`` that may
raise :class:`~shipcode_mcp.protocol.RpcError`. ``params`` is the request's params object, or
``None`` when the request has none. Methods not in ``routes`` are answered ``Method not found``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .app import TOOL_FAULTS
from .jsontext import dumps
from .protocol import (
    INVALID_PARAMS,
    PROTOCOL_VERSION,
    RESOURCE_NOT_FOUND,
    RESULT_MID,
    RESULT_TAIL,
    RpcError,
)
from .results import error_result, tool_result
from .schema import InvalidArguments

if TYPE_CHECKING:
    from collections.abc import Callable

    from .app import Server, Tool

UNKNOWN_TOOL = "Unknown tool"
_NO_ARGUMENTS: dict[str, Any] = {}  # missing "arguments" counts as {} (never mutated)


def constant_answer(result: dict[str, Any]) -> bytes:
    """The bytes after the id for a method whose result never changes."""
    return RESULT_MID + dumps(result) + RESULT_TAIL


class Catalogue:
    """Plain data compiled from a :class:`~shipcode_mcp.app.Server` for the engines."""

    def __init__(self, app: Server) -> None:
        self.server_info = {"name": app.name, "version": app.version}
        self.tools: dict[str, Tool] = dict(app.tools)
        self.resources = dict(app.resources)
        #: Per tool, the bytes of its ``Invalid arguments for <tool>`` result body.
        self.invalid_arguments = {
            name: error_result(f"Invalid arguments for {name}") for name in self.tools
        }
        initialize: dict[str, Any] = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": self.server_info,
        }
        if app.instructions is not None:
            initialize["instructions"] = app.instructions
        self.routes: dict[str, bytes | Callable[[dict[str, Any] | None], bytes]] = {
            "initialize": constant_answer(initialize),
            "ping": constant_answer({}),
            "tools/list": constant_answer({"tools": [tool.listing() for tool in self.tools.values()]}),
            "tools/call": self.call_tool,
            "resources/list": constant_answer(
                {"resources": [resource.listing() for resource in self.resources.values()]}
            ),
            "resources/read": self.read_resource,
            "resources/templates/list": constant_answer({"resourceTemplates": []}),
        }

    def call_tool(self, params: dict[str, Any] | None) -> bytes:
        """``tools/call``: look the tool up, validate its arguments, run it."""
        if params is None:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        name = params.get("name")
        if type(name) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        tool = self.tools.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, UNKNOWN_TOOL)
        try:
            arguments = tool.validate(params.get("arguments", _NO_ARGUMENTS))
        except InvalidArguments:
            return self.invalid_arguments[name]
        if not tool.plain:
            return tool.invoke(arguments)
        try:  # Tool.invoke without its frame: the common case
            return tool_result(tool.func(**arguments))
        except TOOL_FAULTS as error:
            return tool.failed(error)

    def read_resource(self, params: dict[str, Any] | None) -> bytes:
        """``resources/read``: the contents of one listed resource."""
        if params is None:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        uri = params.get("uri")
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        resource = self.resources.get(uri)
        if resource is None:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found")
        return b'{"contents":[' + dumps(resource.contents()) + b"]}"
