"""The seam between an app and the engines.

A :class:`Catalogue` is what an engine serves, as plain data and named callables:

- ``routes`` maps each served method name to either the pre-encoded bytes that follow the id
  in its answer (constant results such as ``ping`` or ``tools/list``), or to a handler
  ``handler(params) -> result body bytes | Deferred`` that may raise
  :class:`~shipcode_mcp.protocol.RpcError`. ``params`` is the request's params object, or
  ``None`` when it has none. Methods not in ``routes`` are answered ``Method not found``.
- ``call_tool`` and ``read_resource`` are the handlers of ``tools/call`` and
  ``resources/read``; ``fast_tools`` describes the tools whose calls are plain (see
  :class:`FastTool`), so the compiled engine can check their arguments from the input bytes.
- ``session`` is the client's session (:mod:`shipcode_mcp.session`); ``concurrent`` tells
  whether any handler defers work, i.e. whether serving needs the concurrent scheduler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import TOOL_FAULTS
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
from .schema import FlatShape, InvalidArguments
from .session import LOG_RANK, Session

if TYPE_CHECKING:
    from collections.abc import Callable

    from .app import Server
    from .handlers import Tool

UNKNOWN_TOOL = "Unknown tool"
_NO_ARGUMENTS: dict[str, Any] = {}  # missing "arguments" counts as {} (never mutated)
_EMPTY = b"{}"


def constant_answer(result: dict[str, Any]) -> bytes:
    """The bytes after the id for a method whose result never changes."""
    return RESULT_MID + dumps(result) + RESULT_TAIL


class FastTool(NamedTuple):
    """A plain tool with a flat argument shape, for engines that check arguments themselves."""

    name: str
    #: The function, called with the arguments as keywords.
    func: Callable[..., Any]
    #: ``(name, json_type, required)`` per argument (see :class:`~shipcode_mcp.schema.FlatShape`).
    fields: tuple[tuple[str, str, bool], ...]
    #: The result body of a call with invalid arguments.
    invalid: bytes
    #: ``failed(error)``: the result body of a call whose function raised ``error``.
    failed: Callable[[BaseException], bytes]


class Catalogue:
    """Plain data compiled from a :class:`~shipcode_mcp.app.Server` for the engines."""

    def __init__(self, app: Server) -> None:
        self.server_info = {"name": app.name, "version": app.version}
        self.tools: dict[str, Tool] = dict(app.tools)
        self.resources = dict(app.resources)
        self.session = Session()
        #: Per tool, the bytes of its ``Invalid arguments for <tool>`` result body.
        self.invalid_arguments = {name: error_result(f"Invalid arguments for {name}") for name in self.tools}
        self.fast_tools = [
            FastTool(name, tool.func, tool.validate.fields, self.invalid_arguments[name], tool.failed)
            for name, tool in self.tools.items()
            if tool.plain and type(tool.validate) is FlatShape
        ]
        uses_context = any(tool.context_name is not None for tool in self.tools.values()) or any(
            resource.context_name is not None for resource in self.resources.values()
        )
        self.concurrent = any(tool.deferred for tool in self.tools.values()) or any(
            resource.deferred for resource in self.resources.values()
        )
        capabilities: dict[str, Any] = {"tools": {}, "resources": {}}
        if uses_context:
            capabilities["logging"] = {}
        initialize: dict[str, Any] = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "serverInfo": self.server_info,
        }
        if app.instructions is not None:
            initialize["instructions"] = app.instructions
        self.initialize_result = dumps(initialize)
        self.routes: dict[str, bytes | Callable[[dict[str, Any] | None], Any]] = {
            "initialize": self.initialize if uses_context else constant_answer(initialize),
            "ping": constant_answer({}),
            "tools/list": constant_answer({"tools": [tool.listing() for tool in self.tools.values()]}),
            "tools/call": self.call_tool,
            "resources/list": constant_answer(
                {"resources": [resource.listing() for resource in self.resources.values()]}
            ),
            "resources/read": self.read_resource,
            "resources/templates/list": constant_answer({"resourceTemplates": []}),
        }
        if uses_context:
            self.routes["logging/setLevel"] = self.set_log_level

    def initialize(self, params: dict[str, Any] | None) -> bytes:
        """``initialize``: remember the client's capabilities; the answer is constant."""
        self.session.initialize(params)
        return self.initialize_result

    def set_log_level(self, params: dict[str, Any] | None) -> bytes:
        """``logging/setLevel``: send log messages at this level and above from now on."""
        level = params.get("level") if params is not None else None
        rank = LOG_RANK.get(level) if type(level) is str else None
        if rank is None:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        self.session.log_threshold = rank
        return _EMPTY

    def call_tool(self, params: dict[str, Any] | None) -> Any:
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
            return tool.call(arguments, params)
        try:  # Tool.call without its frame: the common case
            return tool_result(tool.func(**arguments))
        except TOOL_FAULTS as error:
            return tool.failed(error)

    def read_resource(self, params: dict[str, Any] | None) -> Any:
        """``resources/read``: the contents of one listed resource."""
        if params is None:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        uri = params.get("uri")
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        resource = self.resources.get(uri)
        if resource is None:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found")
        return resource.answer(params)
