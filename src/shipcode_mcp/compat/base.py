"""What the three frameworks share: a native :class:`~shipcode_mcp.app.Server` built by their decorators.

:class:`FrameworkServer` is the base of ``FastMCP`` (the official SDK's, mcp 1.x), ``MCPServer`` (mcp 2.x)
and the ``fastmcp`` package's ``FastMCP``: their decorators register native tools, resources, templates
and prompts whose checks and answers follow that framework's rules (lax pydantic validation, its error
texts, its content and structured output), and its catalogue answers what the native one would answer
otherwise (an unknown tool as an ``isError`` result, its capabilities). A subclass states one framework's
rules by overriding the methods and constants marked *rule*.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable

import pydantic
import pydantic_core

from ..app import Server
from ..catalogue import LAX_FLAT_HINTS, Catalogue, FastTool, constant_answer, route_kinds
from ..context import Context as NativeContext
from ..errors import ClientError, ToolError
from ..handlers import Resource, Tool, context_parameter, docstring, is_coroutine_function
from ..jsontext import dumps
from ..media import Media, jsonable
from ..prompts import Prompt
from ..protocol import LEGACY_VERSIONS, RpcError
from ..results import CONTENT_CLASSES, RESULT_CLASS
from ..schema import InvalidArguments
from ..templates import ResourceTemplate, is_template
from ..typed import Arguments, StructuredResult
from .completions import completion_objects
from .fast import fast_tool
from .messages import Message

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The protocol versions the three frameworks speak (none speaks 2026-07-28).
FRAMEWORK_VERSIONS = LEGACY_VERSIONS


class ResourceError(Exception):
    """Raised by a resource to fail its read with this message."""


class Context(NativeContext):
    """The ``Context`` a handler asks for (``ctx: Context`` or ``ctx: Context[ServerSession, State]``): the native
    one with the frameworks' own members; a handler gets one made from the native context of its request."""

    def __class_getitem__(cls, parameters: Any) -> Any:
        return cls

    @classmethod
    def of(cls, native: NativeContext | None) -> Any:
        """The context of the framework for a request's native context (sharing its state)."""
        if native is None or type(native) is cls:
            return native
        made = cls.__new__(cls)
        for klass in type(native).__mro__:
            for slot in getattr(klass, "__slots__", ()):
                if hasattr(native, slot):
                    object.__setattr__(made, slot, getattr(native, slot))
        return made

    @property
    def session(self) -> ClientSession:
        """The official SDK's ``ctx.session``: requests to the client with the SDK's objects."""
        return ClientSession(self)

    #: The frameworks name the form mode of an elicitation at every revision (2025-06-18 included).
    FORM_MODE_NAMED = True


class ClientSession:
    """``ctx.session`` of the official SDK: ``create_message`` (sampling) with its message objects."""

    def __init__(self, context: Context) -> None:
        self.context = context

    async def create_message(self, messages: list[Any], *, max_tokens: int, **options: Any) -> Any:
        """Ask the client's model; the SDK's ``CreateMessageResult`` when the SDK is installed, else the dict."""
        wanted = {
            name: options[name]
            for name in ("system_prompt", "temperature", "stop_sequences", "include_context", "metadata")
            if options.get(name) is not None
        }
        if options.get("model_preferences") is not None:
            wanted["model_preferences"] = jsonable(options["model_preferences"])
        plain = [jsonable(message) for message in messages]
        result = await self.context.sample(plain, max_tokens=max_tokens, **wanted)
        try:
            from mcp.types import CreateMessageResult
        except ImportError:
            return result
        return CreateMessageResult.model_validate(result)


def signature_without(func: Callable[..., Any], skip: str | None) -> Callable[..., dict[str, Any]]:
    """A function with ``func``'s names, signature and resolved hints (``skip`` left out) returning its
    keyword arguments: what pydantic validates a call of ``func`` with, without calling it."""
    hints = typing.get_type_hints(func, include_extras=True)
    signature = inspect.signature(func)
    parameters = [parameter for parameter in signature.parameters.values() if parameter.name != skip]

    def arguments(**kwargs: Any) -> dict[str, Any]:
        return kwargs

    arguments.__name__ = func.__name__
    arguments.__qualname__ = func.__qualname__
    arguments.__module__ = func.__module__
    arguments.__signature__ = signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty)
    arguments.__annotations__ = {name: hint for name, hint in hints.items() if name != skip and name != "return"}
    return arguments


class ModelArguments:
    """A tool's arguments checked by a model of its parameters, as the official SDK does (lax, extra
    arguments ignored, JSON text read for non-string parameters); pydantic's whole message on failure."""

    def __init__(self, func: Callable[..., Any], tool_name: str, skip: str | None, server: FrameworkServer) -> None:
        self.arguments = Arguments(func, tool_name, skip, strict=False, closed=False, json_strings=True)
        self.schema = self.arguments.schema
        self.tool_name = tool_name
        self.server = server

    def __call__(self, given: object) -> dict[str, Any]:
        arguments = self.arguments
        if type(given) is dict and arguments.json_fields:
            given = arguments.read_json_strings(given)
        try:
            instance = arguments.model.model_validate(given)
        except pydantic.ValidationError as error:
            raise InvalidArguments(self.server.tool_error_text(self.tool_name, error)) from None
        return {name: getattr(instance, field) for name, field in arguments.names}

    def lax_arguments(self) -> Arguments:
        """The model of the parameters, judged by :func:`~shipcode_mcp.catalogue.lax_flat_shape`."""
        return self.arguments


class CallArguments:
    """A tool's arguments checked as pydantic checks a call of the function (fastmcp's way): unknown
    arguments refused, ``call[<function>]`` in the message."""

    def __init__(self, func: Callable[..., Any], skip: str | None, schema: Callable[[dict], dict]) -> None:
        self.adapter = pydantic.TypeAdapter(signature_without(func, skip))
        self.schema = schema(self.adapter.json_schema())
        self.func = func
        self.skip = skip

    def lax_arguments(self) -> Arguments | None:
        """A model of the parameters, judged by :func:`~shipcode_mcp.catalogue.lax_flat_shape` (a lax call and
        a lax model judge plain scalars alike); None, without building one, when a hint is not a plain scalar."""
        hints = typing.get_type_hints(self.func, include_extras=True)
        if any(hint not in LAX_FLAT_HINTS for name, hint in hints.items() if name not in ("return", self.skip)):
            return None
        return Arguments(self.func, self.func.__name__, self.skip, strict=False)

    def __call__(self, given: object) -> dict[str, Any]:
        try:
            return self.adapter.validate_python(given)
        except pydantic.ValidationError as error:
            raise InvalidArguments(str(error)) from None


def _model_dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


class FrameworkTool(Tool):
    """A tool answering by its framework's rules (``server``): content, structured output, error texts."""

    __slots__ = ("server", "meta", "tags", "wrap")

    def __init__(self, server: FrameworkServer, func: Callable[..., Any], **options: Any) -> None:
        self.server = server
        self.meta = options.pop("meta", None)
        self.tags = options.pop("tags", None) or set()
        super().__init__(func, **options)

    def run(self, arguments: dict[str, Any], ctx: Any = None) -> bytes:
        return super().run(arguments, self.server.context_class.of(ctx))

    async def run_async(self, arguments: dict[str, Any], ctx: Any = None) -> bytes:
        return await super().run_async(arguments, self.server.context_class.of(ctx))

    def encode(self, value: object) -> bytes:
        return dumps(self.server.tool_result(self, value))

    def failed(self, error: BaseException) -> bytes:
        try:
            return dumps(self.server.failed_result(self, error))
        finally:
            error.__traceback__ = None

    def listing(self) -> dict[str, Any]:
        return self.server.tool_listing(self, super().listing())


def with_framework_context(server: FrameworkServer, func: Callable[..., Any], name: str | None) -> Callable[..., Any]:
    """``func`` (a resource's or a prompt's) handed its framework's ``Context`` in parameter ``name`` where the
    native one is passed, as a tool's is (``FrameworkTool.run``); ``func`` itself when it takes none."""
    if name is None:
        return func
    framework_context = server.context_class.of
    if is_coroutine_function(func):

        async def call_async(**kwargs: Any) -> Any:
            kwargs[name] = framework_context(kwargs[name])
            return await func(**kwargs)

        return call_async

    def call(**kwargs: Any) -> Any:
        kwargs[name] = framework_context(kwargs[name])
        return func(**kwargs)

    return call


class FrameworkTemplate(ResourceTemplate):
    """A resource template whose parameters are converted from their hints (a Context passed on)."""

    __slots__ = ("server", "check", "meta", "tags")

    def __init__(self, server: FrameworkServer, uri: str, func: Callable[..., Any], **options: Any) -> None:
        self.server = server
        self.meta = options.pop("meta", None)
        self.tags = options.pop("tags", None) or set()
        super().__init__(uri, func, **options)
        self.check = server.template_check(func, self.context_name)
        self.read = with_framework_context(server, func, self.context_name)

    def match(self, uri: str) -> dict[str, str] | None:
        """The values of the template's parts in ``uri``; None for a template without parts, which mcp 1.x lists
        (a function taking only a ``Context``) but never reads: reading its uri is an unknown resource there."""
        return super().match(uri) or None

    def answer(self, params, uri=None, values=None):
        try:
            values = self.check(**(values or {}))
        except (ValueError, TypeError) as error:  # pydantic's ValidationError among them
            raise self.server.template_error(self, uri, error) from None
        return super().answer(params, uri, values)

    def body(self, uri: str, data: object) -> bytes:
        return self.server.resource_body(self, uri, data)

    def listing(self) -> dict[str, Any]:
        return self.server.meta_listing(self, super().listing())


class FrameworkResource(Resource):
    """A resource answering by its framework's rules."""

    __slots__ = ("server", "meta", "tags")

    def __init__(self, server: FrameworkServer, uri: str, func: Callable[..., Any], **options: Any) -> None:
        self.server = server
        self.meta = options.pop("meta", None)
        self.tags = options.pop("tags", None) or set()
        super().__init__(uri, func, **options)
        self.read = with_framework_context(server, func, self.context_name)

    def body(self, uri: str, data: object) -> bytes:
        return self.server.resource_body(self, uri, data)

    def listing(self) -> dict[str, Any]:
        return self.server.meta_listing(self, super().listing())


class FrameworkPrompt(Prompt):
    """A prompt whose arguments are checked and whose messages are written by its framework's rules."""

    __slots__ = ("server", "meta", "tags")

    def __init__(self, server: FrameworkServer, func: Callable[..., Any], **options: Any) -> None:
        self.server = server
        self.meta = options.pop("meta", None)
        self.tags = options.pop("tags", None) or set()
        super().__init__(func, **options)
        self.func = with_framework_context(server, func, self.context_name)

    def get(self, params: dict[str, Any]) -> Any:
        arguments = params.get("arguments") or {}
        missing = set(self.required) - set(arguments)
        if missing:
            raise self.server.prompt_error(self, f"Missing required arguments: {missing}")
        return super().get({**params, "arguments": {key: arguments[key] for key in arguments if key in self.names}})

    def body(self, value: object) -> bytes:
        result: dict[str, Any] = {}
        if self.description:
            result["description"] = self.description
        items = value if isinstance(value, (list, tuple)) else [value]
        result["messages"] = [prompt_message(item) for item in items]
        return dumps(result)

    def listing(self) -> dict[str, Any]:
        return self.server.meta_listing(self, super().listing())


def prompt_message(item: object) -> dict[str, Any]:
    """A prompt's message of a string, a message object (ours or the SDK's), a dict or a content block."""
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, Message):
        return item.to_dict()
    if isinstance(item, dict):
        return item if "role" in item else {"role": "user", "content": item}
    if hasattr(item, "model_dump"):
        dumped = _model_dump(item)
        return dumped if "role" in dumped else {"role": "user", "content": dumped}
    return {"role": "user", "content": {"type": "text", "text": str(item)}}


def is_content(value: object) -> bool:
    """Whether a value is a content block of its own (``Image`` and friends, or an SDK content object)."""
    return isinstance(value, Media) or (type(value).__name__ in CONTENT_CLASSES and hasattr(value, "model_dump"))


def content_block(value: object) -> dict[str, Any]:
    return value.content_block() if isinstance(value, Media) else _model_dump(value)


class FrameworkCatalogue(Catalogue):
    """The native catalogue with the framework's answers where they differ: capabilities, tool calls,
    reads, prompts and completions (routed to methods of their own, so no engine answers them itself)."""

    def _build(self) -> None:
        super()._build()
        server: FrameworkServer = self.app
        self._capabilities = server.capabilities()
        self._initialize_results = {}
        routes = self.routes
        routes["initialize"] = self.initialize
        routes["tools/call"] = self.framework_call
        routes["resources/read"] = self.framework_read
        routes["prompts/list"] = routes.get("prompts/list") or constant_answer({"prompts": []})
        routes["prompts/get"] = self.framework_prompt
        if server.completion_handler is not None:
            routes["completion/complete"] = self.framework_complete
        elif server.no_completion is not None:
            routes["completion/complete"] = server.no_completion
        if "logging/setLevel" not in routes:
            routes["logging/setLevel"] = self.set_log_level
        self.route_kinds = route_kinds(routes, self.own_handlers())  # tools/call's the engines' too: fast_tool

    #: A tool that does not exist is a result of the framework's (``unknown_tool_result``).
    unknown_tool_is_error = False

    def own_handlers(self) -> dict[str, Any]:
        """``tools/call`` is the framework's: an engine makes the calls of :meth:`fast_tool`'s tools itself
        and leaves every other call to it."""
        return {**super().own_handlers(), "tools/call": self.framework_call}

    def fast_tool(self, name: str, tool: Tool) -> FastTool | None:
        return fast_tool(self, name, tool)

    def framework_call(self, params: dict[str, Any] | None) -> Any:
        params = params or {}
        name = params.get("name")
        tool = self.tools.get(name) if type(name) is str else None
        if tool is None:
            return dumps(self.app.unknown_tool_result(name))
        try:
            arguments = tool.check_arguments(params.get("arguments") or {})
        except InvalidArguments as invalid:
            return dumps({"content": [{"type": "text", "text": invalid.args[0]}], "isError": True})
        return tool.call(arguments, params)

    def framework_read(self, params: dict[str, Any] | None) -> Any:
        uri = (params or {}).get("uri")
        if type(uri) is str:
            answer = self.read_answer(params, uri)
            if answer is not None:
                return answer
        raise self.app.unknown_resource(uri)

    def framework_prompt(self, params: dict[str, Any] | None) -> Any:
        params = params or {}
        prompt = self.prompts.get(params.get("name"))
        if prompt is None:
            raise self.app.unknown_prompt(params.get("name"))
        return prompt.get(params)

    def framework_complete(self, params: dict[str, Any] | None) -> Any:
        return self.app.complete(params or {})


class FrameworkServer(Server):
    """A native server built the way one framework's decorators build theirs (see the module's docstring)."""

    #: *rule*: the API's name, as the command line reports it.
    API = ""
    #: *rule*: the server's name when the app gives none.
    DEFAULT_NAME = "FastMCP"

    def __init__(
        self,
        name: str | None = None,
        instructions: str | None = None,
        *,
        version: str | None = None,
        lifespan: Any = None,
        icons: list[dict[str, Any]] | None = None,
        **settings: Any,
    ) -> None:
        options: dict[str, Any] = {}
        #: The app's lifespan: the native server's ``lifespan=`` enters and exits it, where it has one.
        self.lifespan = lifespan
        if lifespan is not None and "lifespan" in Server.__init__.__code__.co_varnames:
            options["lifespan"] = lifespan
        super().__init__(
            name or self.DEFAULT_NAME,
            version=version if version is not None else self.framework_version(),
            instructions=instructions,
            protocol_versions=FRAMEWORK_VERSIONS,
            icons=icons,
            strict=False,
            **options,
        )
        #: The framework's settings the app gave (host, port, log_level, ...): kept for ``run``.
        self.settings = settings
        self.completion_handler: Callable[..., Any] | None = None
        #: The app's own HTTP routes: ``(path, methods, endpoint)`` (``custom_route``).
        self.custom_routes: list[tuple[str, list[str], Callable[..., Any]]] = []

    # ------------------------------------------------------------------ the rules

    def framework_version(self) -> str:
        """*rule*: ``serverInfo.version`` when the app gives none."""
        return ""

    def capabilities(self) -> dict[str, Any]:
        """*rule*: what ``initialize`` announces."""
        capabilities: dict[str, Any] = {
            "experimental": {},
            "prompts": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
            "tools": {"listChanged": False},
        }
        if self.completion_handler is not None:
            capabilities["completions"] = {}
        return capabilities

    #: *rule*: the answer to ``completion/complete`` without a handler (None: Method not found).
    no_completion: Any = None
    #: Whether the server is served over HTTP (its HTTP app made: every HTTP way goes through
    #: ``serving.framework_http_app``), for a framework whose capabilities differ there.
    over_http = False

    def arguments_check(self, func: Callable[..., Any], name: str, skip: str | None) -> Any:
        """*rule*: how a tool's arguments are listed and checked."""
        return ModelArguments(func, name, skip, self)

    def structured_output(self, func: Callable[..., Any], name: str, wanted: bool | None, schema: Any) -> Any:
        """*rule*: the tool's structured output (a :class:`~shipcode_mcp.typed.StructuredResult`), or None."""
        if self.structures_content and wanted is not False:
            hint = typing.get_type_hints(func).get("return")
            if isinstance(hint, type) and hint.__name__ in CONTENT_CLASSES and issubclass(hint, pydantic.BaseModel):
                return StructuredResult(pydantic.TypeAdapter(hint), False)
        return StructuredResult.of(func, name, wanted)

    def tool_error_text(self, name: str, error: BaseException) -> str:
        """*rule*: the text of a failed call (invalid arguments, a raised exception)."""
        return f"Error executing tool {name}: {error}"

    def failed_result(self, tool: FrameworkTool, error: BaseException) -> dict[str, Any]:
        """*rule*: the result of a call that raised ``error``."""
        if isinstance(error, ClientError) and error.error is not None:  # the client's own message, as a failure
            error = RuntimeError(error.error.get("message", error))
        text = str(error) if isinstance(error, ToolError) and self.bare_tool_errors else None
        if text is None:
            text = self.tool_error_text(tool.name, error)
        return {"content": [{"type": "text", "text": text}], "isError": True}

    #: *rule*: whether a ``ToolError`` shows its message alone.
    bare_tool_errors = False
    #: *rule*: the ``Context`` handlers get.
    context_class: type[Context] = Context
    #: *rule*: whether a content object as return annotation (``-> TextContent``) gives structured output.
    structures_content = False

    def unknown_tool_result(self, name: object) -> dict[str, Any]:
        """*rule*: the result of calling a tool that does not exist."""
        return {"content": [{"type": "text", "text": f"Unknown tool: {name}"}], "isError": True}

    def unknown_resource(self, uri: object) -> RpcError:
        """*rule*: the error of reading a resource that does not exist."""
        return RpcError(0, f"Unknown resource: {uri}")

    def template_error(self, template: FrameworkTemplate, uri: str | None, error: BaseException) -> RpcError:
        """*rule*: the error of a template whose parameters do not convert."""
        text = f"Error creating resource from template: {error}"
        return RpcError(0, f"Error creating resource from template: {text}")

    def context_resource_is_template(self, uri: str) -> bool:
        """*rule*: whether a resource without ``{name}`` parts whose function takes a ``Context`` is listed as a
        template (mcp 1.x: any function with parameters is one), else as a resource; raises where refused."""
        return True

    def template_check(self, func: Callable[..., Any], skip: str | None) -> Callable[..., dict[str, Any]]:
        """*rule*: how a template's parameters are converted from the uri's strings (``check(**parts)``)."""
        return pydantic.validate_call(signature_without(func, skip))

    def unknown_prompt(self, name: object) -> RpcError:
        """*rule*: the error of getting a prompt that does not exist."""
        return RpcError(0, f"Unknown prompt: {name}")

    def prompt_error(self, prompt: FrameworkPrompt, text: str) -> RpcError:
        """*rule*: the error of a prompt's invalid arguments."""
        return RpcError(0, text)

    def content(self, value: object) -> list[dict[str, Any]]:
        """*rule*: the content blocks of a tool's return value (the SDK's: lists flattened, data as
        JSON indented by 2)."""
        if value is None:
            return []
        if is_content(value):
            return [content_block(value)]
        if isinstance(value, (list, tuple)):
            return [block for item in value for block in self.content(item)]
        if isinstance(value, str):
            return [{"type": "text", "text": value}]
        return [{"type": "text", "text": pydantic_core.to_json(value, fallback=str, indent=2).decode()}]

    def tool_result(self, tool: FrameworkTool, value: object) -> dict[str, Any]:
        """*rule*: the whole result of a value the tool returned."""
        if type(value).__name__ == RESULT_CLASS and hasattr(value, "model_dump"):
            whole = _model_dump(value)
            whole.pop("resultType", None)
            return whole
        result: dict[str, Any] = {"content": self.content(value)}
        if tool.structured is not None:
            result["structuredContent"] = self.structured_content(tool, value)
        result["isError"] = False
        return result

    def structured_content(self, tool: FrameworkTool, value: object) -> Any:
        """*rule*: ``structuredContent`` of a returned value, validated against the annotation."""
        structured = tool.structured
        checked = structured.adapter.validate_python({"result": value} if structured.wrap else value)
        if isinstance(checked, pydantic.BaseModel):
            return checked.model_dump(mode="json", by_alias=True)
        return structured.adapter.dump_python(checked, mode="json", by_alias=True)

    def tool_listing(self, tool: FrameworkTool, entry: dict[str, Any]) -> dict[str, Any]:
        """*rule*: a tool's ``tools/list`` entry."""
        return self.meta_listing(tool, entry)

    def meta_listing(self, item: Any, entry: dict[str, Any]) -> dict[str, Any]:
        """*rule*: a listing entry with the item's ``meta``."""
        if item.meta is not None:
            entry["_meta"] = item.meta
        return entry

    def resource_body(self, resource: Resource, uri: str, data: object) -> bytes:
        """*rule*: a resource's read result: text, bytes as a blob, anything else as JSON text."""
        if not isinstance(data, (str, bytes, bytearray, memoryview)):
            data = pydantic_core.to_json(data, fallback=str, indent=2).decode()
        return Resource.body(resource, uri, data)

    # ------------------------------------------------------------------ the decorators

    def tool(self, name_or_fn: str | Callable[..., Any] | None = None, **options: Any) -> Any:  # type: ignore[override]
        """Register a function as a tool, bare (``@mcp.tool``) or called (``@mcp.tool(name=...)``, the options
        of :meth:`add_tool`)."""
        if callable(name_or_fn):
            self.add_tool(name_or_fn, **options)
            return name_or_fn
        if isinstance(name_or_fn, str):
            options["name"] = name_or_fn

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(func, **options)
            return func

        return register

    def add_tool(  # type: ignore[override]
        self,
        fn: Any,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Any = None,
        icons: list[Any] | None = None,
        meta: dict[str, Any] | None = None,
        tags: set[str] | None = None,
        structured_output: bool | None = None,
        output_schema: Any = ...,
        enabled: bool = True,
        **ignored: Any,
    ) -> Any:
        """Register a function (or a native :class:`~shipcode_mcp.handlers.Tool`) as a tool: ``annotations`` a
        dict or the SDK's ``ToolAnnotations``; ``output_schema=None`` (fastmcp) or ``structured_output=False``
        (the SDK) turn structured output off; ``enabled=False`` registers nothing."""
        if isinstance(fn, Tool):
            return super().add_tool(fn)
        tool_name = name or fn.__name__
        skip = context_parameter(fn)
        wanted = False if output_schema is None else structured_output
        structured = self.structured_output(fn, tool_name, wanted, output_schema)
        tool = FrameworkTool(
            self,
            fn,
            name=tool_name,
            title=title,
            description=description,
            annotations=_plain(annotations),
            icons=[_plain(icon) for icon in icons] if icons else None,
            validator=self.arguments_check(fn, tool_name, skip),
            structured=structured,
            meta=meta,
            tags=tags,
        )
        tool.plain = False
        if enabled:
            super().add_tool(tool)
        return tool

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Any] | None = None,
        meta: dict[str, Any] | None = None,
        tags: set[str] | None = None,
        enabled: bool = True,
        **ignored: Any,
    ) -> Any:
        """Register a function as a resource; a uri with ``{name}`` parts registers a template."""

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            options = dict(
                name=name or func.__name__,
                title=title,
                description=docstring(func) or None if description is None else description,
                mime_type=mime_type or "text/plain",
                icons=[_plain(icon) for icon in icons] if icons else None,
                meta=meta,
                tags=tags,
            )
            if not enabled:
                return func
            if is_template(uri) or (context_parameter(func) is not None and self.context_resource_is_template(uri)):
                self.templates[uri] = FrameworkTemplate(self, uri, func, **options)
                self._changed("resources")
            else:
                self.add_resource(FrameworkResource(self, uri, func, **options))
            return func

        return register

    def prompt(  # type: ignore[override]
        self,
        name_or_fn: str | Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Any] | None = None,
        meta: dict[str, Any] | None = None,
        tags: set[str] | None = None,
        enabled: bool = True,
        **ignored: Any,
    ) -> Any:
        """Register a function as a prompt, bare or called; it returns a string, messages or a list of them."""
        options = dict(title=title, description=description, meta=meta, tags=tags)

        def register(func: Callable[..., Any], chosen: str | None) -> Callable[..., Any]:
            if enabled:
                prompt = FrameworkPrompt(self, func, name=chosen, **options)
                if icons:
                    prompt.icons = [_plain(icon) for icon in icons]
                self.prompts[prompt.name] = prompt
                self._changed("prompts")
            return func

        if callable(name_or_fn):
            return register(name_or_fn, name)
        chosen = name_or_fn if isinstance(name_or_fn, str) else name
        return lambda func: register(func, chosen)

    def completion(self) -> Any:  # type: ignore[override]
        """Register ``handler(ref, argument, context)`` completing every prompt and template argument."""

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.completion_handler = func
            self._changed("prompts")
            return func

        return register

    def complete(self, params: dict[str, Any]) -> Any:
        """``completion/complete`` through the app's handler, with the SDK's objects when it is installed."""
        ref, argument, context = completion_objects(params)
        handler = self.completion_handler

        def body(found: Any) -> bytes:
            if found is None:
                return b'{"completion":{"values":[]}}'
            return dumps({"completion": jsonable(found)})

        if inspect.iscoroutinefunction(handler):

            async def run_async(ctx: Any) -> bytes:
                return body(await handler(ref, argument, context))

            from ..deferred import ASYNC, Deferred

            return Deferred(run_async, ASYNC, None)
        return body(handler(ref, argument, context))

    def custom_route(self, path: str, methods: list[str], name: str | None = None, **ignored: Any) -> Any:
        """Register an HTTP endpoint of the app's own (a health check, say), served beside ``/mcp``."""

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.custom_routes.append((path, list(methods), func))
            return func

        return register

    def catalogue(self) -> Catalogue:
        catalogue = FrameworkCatalogue(self)
        self._sessions.add(catalogue.session)
        self._catalogues.add(catalogue)
        return catalogue

    # ------------------------------------------------------------------ serving

    def run(self, transport: str = "stdio", host: str | None = None, port: int | None = None, **options: Any) -> None:
        """Serve: ``"stdio"`` (the default), ``"streamable-http"`` or ``"http"`` (uvicorn at ``host:port``)."""
        if transport == "stdio":
            return Server.run(self)
        if transport in ("streamable-http", "http"):
            from .serving import serve_http

            host = host or self.settings.get("host", "127.0.0.1")
            return serve_http(self, host, port or self.settings.get("port", 8000))
        if transport == "sse":
            raise ValueError('transport "sse" is not served by shipcode-mcp: use "streamable-http" (docs/migrating.md)')
        raise ValueError(f'unknown transport {transport!r}: "stdio", "streamable-http" or "http"')

    def streamable_http_app(self, **options: Any) -> Any:
        """The app as an ASGI application (Streamable HTTP at ``/mcp``, the app's own routes beside it),
        to serve or to mount in Starlette or FastAPI (``Mount("/", mcp.streamable_http_app())``)."""
        from .serving import framework_http_app

        return framework_http_app(self, **options)

    def http_app(self, path: str | None = None, **options: Any) -> Any:  # type: ignore[override]
        """fastmcp's name of :meth:`streamable_http_app` (``path`` default ``/mcp``); the native options pass on."""
        from .serving import framework_http_app

        known = {name: value for name, value in options.items() if name not in ("transport", "middleware")}
        return framework_http_app(self, path or "/mcp", **known)

    @property
    def session_manager(self) -> Any:
        """What a host app's lifespan runs (``async with mcp.session_manager.run():``)."""
        from .serving import SessionManager

        return SessionManager(self)


def _plain(value: Any) -> Any:
    """A dict of a pydantic object (``ToolAnnotations``, ``Icon``), by alias without ``None``; others as they are."""
    return _model_dump(value) if hasattr(value, "model_dump") else value


def installed_version(distribution: str, otherwise: str) -> str:
    """The installed version of ``distribution`` (the framework an app was written for), else ``otherwise``."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return otherwise
