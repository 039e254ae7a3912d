"""The handlers of the methods a catalogue serves: ``handler(params) -> result body bytes | Deferred``.

:class:`MethodHandlers` is the part of :class:`~shipcode_mcp.catalogue.Catalogue` that answers
``initialize``, ``tools/call``, ``resources/read``, ``prompts/get`` and the other methods whose
answer is not constant; the catalogue builds its tables and routes each method to one of these
(``Catalogue.routes``). What the app registered (its tools, resources, prompts) is in
:mod:`shipcode_mcp.handlers`.
"""

from __future__ import annotations

from .deferred import ASYNC, INLINE, Deferred
from .errors import HANDLER_FAULTS
from .handlers import context_parameter, is_coroutine_function, progress_token
from .jsontext import dumps
from .protocol import INVALID_PARAMS, LOG_RANK, RESOURCE_NOT_FOUND, RpcError
from .results import error_result, tool_result
from .schema import InvalidArguments

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .handlers import Resource, Tool
    from .prompts import Prompt
    from .session import Session
    from .templates import ResourceTemplate

UNKNOWN_TOOL = "Unknown tool"
_NO_ARGUMENTS: dict[str, Any] = {}  # missing "arguments" counts as {} (never mutated)
_EMPTY = b"{}"
_NO_COMPLETIONS = b'{"completion":{"values":[]}}'
#: ``completion/complete`` answers at most this many values (and says how many there are).
MAX_COMPLETIONS = 100


def completion_body(values: object) -> bytes:
    """The ``completion/complete`` result body of what a completion function returned."""
    if not isinstance(values, (list, tuple)) or not all(type(value) is str for value in values):
        raise TypeError(f"a completion returned {type(values).__name__}, not a list of str")
    shown = list(values[:MAX_COMPLETIONS])
    return dumps({"completion": {"values": shown, "total": len(values), "hasMore": len(values) > len(shown)}})


def complete_with(func: Callable[..., Any], name: str, value: str, chosen: dict[str, Any], token: object) -> Any:
    """Call a completion function: the result body, or the deferred work giving it."""
    context_name = context_parameter(func)
    if is_coroutine_function(func):

        async def run_async(ctx: Any) -> bytes:
            extra = {} if context_name is None else {context_name: ctx}
            return completion_body(await func(name, value, chosen, **extra))

        return Deferred(run_async, ASYNC, token)
    if context_name is not None:
        return Deferred(lambda ctx: completion_body(func(name, value, chosen, **{context_name: ctx})), INLINE, token)
    return completion_body(func(name, value, chosen))


class MethodHandlers:
    """The method handlers of a :class:`~shipcode_mcp.catalogue.Catalogue`, over its tables."""

    session: Session
    legacy_versions: tuple[str, ...]
    tools: dict[str, Tool]
    invalid_arguments: dict[str, bytes]
    resources: dict[str, Resource]
    templates: dict[str, ResourceTemplate]
    prompts: dict[str, Prompt]
    completions: dict[tuple[str, str], Callable[..., Any]]
    #: The ``initialize`` result body of a legacy version (the catalogue's, built with its capabilities).
    initialize_result: Callable[[str], bytes]

    def initialize(self, params: dict[str, Any] | None) -> bytes:
        """``initialize``: remember the client's capabilities; answer the version it asked for
        when the app speaks it, else the newest legacy version the app speaks."""
        self.session.initialize(params)
        requested = params.get("protocolVersion") if params is not None else None
        return self.initialize_result(requested if requested in self.legacy_versions else self.legacy_versions[0])

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
        try:
            name = params["name"]
            tool = self.tools[name]
        except (TypeError, KeyError):  # no params, no name, a name that is not a string, no such tool
            name = params.get("name") if params is not None else None
            raise RpcError(INVALID_PARAMS, UNKNOWN_TOOL if type(name) is str else "Invalid params") from None
        try:
            arguments = tool.check_arguments(params.get("arguments", _NO_ARGUMENTS))
        except InvalidArguments as invalid:  # with a text: the typed check's reasons
            return error_result(invalid.args[0]) if invalid.args else self.invalid_arguments[name]
        if tool.plain:  # the common case, without the detour through Tool.call
            try:
                return tool_result(tool.func(**arguments))
            except HANDLER_FAULTS as error:
                return tool.failed(error)
        return tool.call(arguments, params)

    def read_resource(self, params: dict[str, Any] | None) -> Any:
        """``resources/read``: the contents of one listed resource."""
        if params is None:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        uri = params.get("uri")
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        answer = self.read_answer(params, uri)
        if answer is None:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found")
        return answer

    def read_answer(self, params: dict[str, Any] | None, uri: str) -> Any:
        """The answer of the listed resource ``uri`` or of the template matching it; None when none serves it."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource.answer(params)
        for template in self.templates.values():
            values = template.match(uri)
            if values is not None:
                return template.answer(params, uri, values)
        return None

    def _served_uri(self, params: dict[str, Any] | None) -> str:
        """The ``uri`` of params naming a listed resource or one a template matches."""
        uri = params.get("uri") if params is not None else None
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        if uri not in self.resources and not any(
            template.match(uri) is not None for template in self.templates.values()
        ):
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found")
        return uri

    def subscribe(self, params: dict[str, Any] | None) -> bytes:
        """``resources/subscribe``: send ``notifications/resources/updated`` for this uri."""
        self.session.subscriptions.add(self._served_uri(params))
        return _EMPTY

    def unsubscribe(self, params: dict[str, Any] | None) -> bytes:
        """``resources/unsubscribe``: no more updates for this uri."""
        self.session.subscriptions.discard(self._served_uri(params))
        return _EMPTY

    def get_prompt(self, params: dict[str, Any] | None) -> Any:
        """``prompts/get``: the messages of one prompt filled in with the client's arguments."""
        name = params.get("name") if params is not None else None
        if type(name) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        prompt = self.prompts.get(name)
        if prompt is None:
            raise RpcError(INVALID_PARAMS, "Unknown prompt")
        return prompt.get(params)

    def complete(self, params: dict[str, Any] | None) -> Any:
        """``completion/complete``: suggested values for one argument of a prompt or template."""
        ref = params.get("ref") if params is not None else None
        argument = params.get("argument") if params is not None else None
        context = params.get("context", _NO_ARGUMENTS) if params is not None else None
        chosen = context.get("arguments", _NO_ARGUMENTS) if type(context) is dict else None
        if (
            type(ref) is not dict
            or type(argument) is not dict
            or type(argument.get("name")) is not str
            or type(argument.get("value")) is not str
            or type(chosen) is not dict
        ):
            raise RpcError(INVALID_PARAMS, "Invalid params")
        kind = ref.get("type")
        target = ref.get("name") if kind == "ref/prompt" else ref.get("uri") if kind == "ref/resource" else None
        known = self.prompts if kind == "ref/prompt" else self.templates
        if type(target) is not str or target not in known:
            raise RpcError(INVALID_PARAMS, "Invalid params")
        func = self.completions.get((kind, target))
        if func is None:
            return _NO_COMPLETIONS
        return complete_with(func, argument["name"], argument["value"], dict(chosen), progress_token(params))
