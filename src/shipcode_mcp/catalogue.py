"""The seam between an app and the engines.

A :class:`Catalogue` is what an engine serves, as plain data and named callables:

- ``routes`` maps each served method name to either the pre-encoded bytes that follow the id
  in its answer (constant results such as ``ping`` or ``tools/list``), or to a handler
  ``handler(params) -> result body bytes | Deferred`` that may raise
  :class:`~shipcode_mcp.protocol.RpcError`. ``params`` is the request's params object, or
  ``None`` when it has none. Methods not in ``routes`` are answered ``Method not found``.
- ``route_kinds`` gives each route its :class:`RouteKind`: a constant answer, ``tools/call``,
  ``resources/read`` or another handler (the handlers are in :mod:`shipcode_mcp.methods`).
  ``fast_tools`` describes the tools whose calls are plain (see :class:`FastTool`), so the
  compiled engine can check their arguments from the input bytes.
- ``session`` is the client's session (:mod:`shipcode_mcp.session`); ``concurrent`` tells
  whether any handler defers work, i.e. whether serving needs the concurrent scheduler.
- ``modern`` is the 2026-07-28 side (:class:`~shipcode_mcp.eras.ModernEra`, with routes and
  route kinds of its own), or None for an app that speaks only legacy versions.

An app that adds or removes tools, prompts or resources while serving calls
:meth:`Catalogue.refresh`: the tables are built again in place and the engines told.
"""

from __future__ import annotations

from .handlers import context_parameter, is_coroutine_function
from .jsontext import dumps
from .methods import MethodHandlers
from .protocol import (
    LEGACY_VERSIONS,
    MODERN_VERSION,
    RESULT_MID,
    RESULT_TAIL,
)
from .results import error_result
from .schema import FlatShape, header_parameters, parameter_defaults, positional_count
from .session import Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .app import Server
    from .eras import ModernEra
    from .handlers import Tool
    from .layouts import ResultLayout

#: The member of a list's items its cursors name them by (see :mod:`shipcode_mcp.pagination`).
LISTED_BY = {"tools": "name", "resources": "uri", "resourceTemplates": "uriTemplate", "prompts": "name"}


def _keep(body: bytes) -> bytes:
    """A legacy list page's body, as it is."""
    return body


def constant_answer(result: dict[str, Any]) -> bytes:
    """The bytes after the id for a method whose result never changes."""
    return RESULT_MID + dumps(result) + RESULT_TAIL


class RouteKind:
    """How a route is served: the kind ``Catalogue.route_kinds`` gives each method. The compiled
    engine builds its tables from it (the pure engine runs every route through the line rules)."""

    #: Pre-encoded bytes after the id: the answer never changes.
    CONSTANT = 1
    #: ``tools/call``: :meth:`~shipcode_mcp.methods.MethodHandlers.call_tool`, whose plain tools
    #: (``Catalogue.fast_tools``) an engine may call itself.
    TOOL_CALL = 2
    #: ``resources/read``: :meth:`~shipcode_mcp.methods.MethodHandlers.read_resource`, whose direct
    #: resources an engine may read itself.
    READ = 3
    #: Any other handler.
    HANDLER = 4


#: The handlers an engine may stand in for, by method; every other handler is a ``RouteKind.HANDLER``.
HANDLER_KINDS = {"tools/call": RouteKind.TOOL_CALL, "resources/read": RouteKind.READ}


def route_kinds(routes: dict[str, Any], own: dict[str, Any]) -> dict[str, int]:
    """The :class:`RouteKind` of each route of ``routes`` (method -> answer bytes or handler): an engine may
    stand in for a handler of :data:`HANDLER_KINDS` only while the route is still the catalogue's own
    (``own``: method -> handler, served as it is or by an era's route); a route an extension or a framework
    put in its place is a ``RouteKind.HANDLER``."""
    kinds = {}
    for method, target in routes.items():
        if type(target) is bytes:
            kinds[method] = RouteKind.CONSTANT
        elif method in own and getattr(target, "handler", target) == own[method]:
            kinds[method] = HANDLER_KINDS[method]
        else:
            kinds[method] = RouteKind.HANDLER
    return kinds


class FastTool:
    """A plain tool with a flat argument shape, for engines that check arguments themselves."""

    __slots__ = (
        "name",
        "func",
        "fields",
        "positional",
        "invalid",
        "failed",
        "mirrored",
        "fallback",
        "layout",
        "encode",
    )

    def __init__(
        self,
        name: str,
        func: Callable[..., Any],
        fields: tuple[tuple[str, str, bool], ...],
        positional: int,
        invalid: bytes,
        failed: Callable[[BaseException], bytes],
        mirrored: bool = False,
        fallback: bool = False,
        layout: ResultLayout | None = None,
        encode: Callable[[Any], bytes] | None = None,
    ) -> None:
        self.name = name
        #: The function, called with the arguments by name (or by position: see ``positional``).
        self.func = func
        #: ``(name, json_type, required)`` per argument (see :class:`~shipcode_mcp.schema.FlatShape`).
        self.fields = fields
        #: How many fields, from the first, may be passed by position (see
        #: :func:`~shipcode_mcp.schema.positional_count`).
        self.positional = positional
        #: The result body of a call with invalid arguments.
        self.invalid = invalid
        #: ``failed(error)``: the result body of a call whose function raised ``error``.
        self.failed = failed
        #: Whether an argument is mirrored in an HTTP header (``x-mcp-header``): HTTP checks such calls itself.
        self.mirrored = mirrored
        #: A lax tool (see :func:`lax_flat_shape`): arguments the flat checks refuse go to the tool's own
        #: validation (the full path) instead of being answered ``invalid``, and an integer given for a
        #: ``number`` is passed as a float, as pydantic's lax mode passes it.
        self.fallback = fallback
        #: How a framework's tool writes its result (see :mod:`~shipcode_mcp.layouts`), and ``encode(value)``,
        #: its result body of any other value; None: the native result (:func:`~shipcode_mcp.results.tool_result`).
        self.layout = layout
        self.encode = encode


def fast_record(
    name: str, tool: Tool, shape: FlatShape, invalid: bytes, fallback: bool, layout: ResultLayout | None = None
) -> FastTool:
    """The :class:`FastTool` of a tool whose arguments have this flat shape (a framework's with its ``layout``)."""
    return FastTool(
        name,
        tool.func,
        shape.fields,
        positional_count(tool.func, tuple(field[0] for field in shape.fields)),
        invalid,
        tool.failed,
        bool(header_parameters(tool.input_schema)),
        fallback,
        layout,
        None if layout is None else tool.encode,
    )


#: The hints of the parameters a lax tool keeps on the fast path with (see :func:`lax_flat_shape`).
LAX_FLAT_HINTS = (int, float, str, bool)


def lax_flat_shape(validate: Any, func: Callable[..., Any]) -> FlatShape | None:
    """The flat shape of a lax typed tool (``strict=False``, its check ``validate`` of ``func``'s arguments)
    whose flat checks judge a call as pydantic's lax mode does wherever they accept it, or None.

    That holds when every parameter is hinted ``int``, ``float``, ``str`` or ``bool`` without constraints
    or validators, and any default is the function's own value (a ``Field(...)`` default is not): a call
    the checks accept then reaches the function with the values pydantic would give it (an integer for
    a ``float`` as a float); any other call goes to pydantic (a string read as JSON first included).
    """
    model = getattr(validate, "model", None)
    if getattr(validate, "strict", True) is not False or getattr(validate, "renamed", True) or model is None:
        return None
    # Open or closed: an argument the function does not take is refused by the flat checks, so pydantic judges it.
    shape = FlatShape.from_schema({**validate.schema, "additionalProperties": False})
    if shape is None:
        return None
    defaults = parameter_defaults(func)
    for name, field in model.model_fields.items():
        if field.annotation not in LAX_FLAT_HINTS or any(type(item) is not str for item in field.metadata):
            return None
        if not field.is_required() and (name not in defaults or defaults[name] is not field.default):
            return None
    return shape


class Catalogue(MethodHandlers):
    """Plain data compiled from a :class:`~shipcode_mcp.app.Server` for the engines, and the handlers
    of the methods it serves (:class:`~shipcode_mcp.methods.MethodHandlers`)."""

    def __init__(self, app: Server) -> None:
        self.app = app
        self.server_info: dict[str, Any] = {"name": app.name, "version": app.version}
        if app.icons is not None:
            self.server_info["icons"] = app.icons
        #: Every protocol version the app speaks, newest first.
        self.versions: tuple[str, ...] = app.protocol_versions
        #: The versions of the ``initialize`` handshake among them, newest first.
        self.legacy_versions = tuple(version for version in self.versions if version in LEGACY_VERSIONS)
        self.session = Session()
        self.session.catalogue = self
        self.modern: ModernEra | None = None
        if MODERN_VERSION in self.versions:
            from .eras import ModernEra

            self.modern = ModernEra(
                self.versions, self.server_info, app.state_key, app.ttl_ms, app.cache_scope, app.server_info_meta
            )
        self.routes: dict[str, bytes | Callable[[dict[str, Any] | None], Any]] = {}
        #: Called after :meth:`refresh` (engines that keep copies of the tables).
        self.on_refresh: list[Callable[[], object]] = []
        self._build()

    def refresh(self) -> None:
        """The app changed its tools, prompts or resources: build the tables again, tell the engines."""
        self._build()
        for callback in list(self.on_refresh):
            callback()

    def _build(self) -> None:
        app = self.app
        self.tools: dict[str, Tool] = dict(app.tools)
        self.resources = dict(app.resources)
        self.templates = dict(app.templates)
        self.prompts = dict(app.prompts)
        self.completions = dict(app.completions)
        for kind, target in self.completions:
            if target not in (self.prompts if kind == "ref/prompt" else self.templates):
                what = "prompt" if kind == "ref/prompt" else "resource template"
                raise ValueError(f"a completion is registered for the unknown {what} {target!r}")
        #: Per tool, the bytes of its ``Invalid arguments for <tool>`` result body.
        self.invalid_arguments = {name: error_result(f"Invalid arguments for {name}") for name in self.tools}
        self.fast_tools = [fast for name, tool in self.tools.items() if (fast := self.fast_tool(name, tool))]
        handlers = [*self.tools.values(), *self.resources.values(), *self.templates.values(), *self.prompts.values()]
        completions = list(self.completions.values())
        uses_context = any(handler.context_name is not None for handler in handlers) or any(
            context_parameter(func) is not None for func in completions
        )
        list_changed = app.list_changed
        #: Whether serving needs the concurrent scheduler.
        self.concurrent = (
            uses_context
            or app.resource_subscriptions
            or list_changed
            or any(handler.is_async for handler in handlers)
            or any(tool.blocking for tool in self.tools.values())
            or any(is_coroutine_function(func) for func in completions)
        )
        changes = {"listChanged": True} if list_changed else {}
        resources_capability = dict(changes)
        if app.resource_subscriptions:
            resources_capability["subscribe"] = True
        capabilities: dict[str, Any] = {"tools": dict(changes), "resources": resources_capability}
        serves_prompts = bool(self.prompts) or list_changed
        if serves_prompts:
            capabilities["prompts"] = dict(changes)
        if self.completions:
            capabilities["completions"] = {}
        if uses_context:
            capabilities["logging"] = {}
        #: Members an extension adds to the ``subscriptions/listen`` filter -> ``agree(value)``.
        self.listen_filters: dict[str, Any] = {}
        #: Method of an extension -> the params member its ``Mcp-Name`` HTTP header mirrors.
        self.named_by: dict[str, str] = {}
        added = self._extend(capabilities) if app.extensions else None
        #: What ``subscriptions/listen`` may acknowledge.
        self.offered = {
            "tools": list_changed,
            "prompts": list_changed,
            "resources": list_changed,
            "subscribe": app.resource_subscriptions,
        }
        self._initialize_results: dict[str, bytes] = {}
        self._capabilities = capabilities
        listings = {
            "tools/list": {"tools": [tool.listing() for tool in self.tools.values()]},
            "resources/list": {"resources": [resource.listing() for resource in self.resources.values()]},
            "resources/templates/list": {
                "resourceTemplates": [template.listing() for template in self.templates.values()]
            },
        }
        if serves_prompts:
            listings["prompts/list"] = {"prompts": [prompt.listing() for prompt in self.prompts.values()]}
        routes: dict[str, Any] = {}
        if self.legacy_versions:
            # Constant unless the session must learn of it (its capabilities, that it began).
            constant = len(self.legacy_versions) == 1 and not (uses_context or list_changed)
            routes["initialize"] = (
                RESULT_MID + self.initialize_result(self.legacy_versions[0]) + RESULT_TAIL
                if constant
                else self.initialize
            )
        routes["ping"] = constant_answer({})
        for method, listing in listings.items():
            routes[method] = self._listed(listing, constant_answer, _keep)
        routes["tools/call"] = self.call_tool
        routes["resources/read"] = self.read_resource
        if serves_prompts:
            routes["prompts/get"] = self.get_prompt
        if self.completions:
            routes["completion/complete"] = self.complete
        if app.resource_subscriptions:
            routes["resources/subscribe"] = self.subscribe
            routes["resources/unsubscribe"] = self.unsubscribe
        if uses_context:
            routes["logging/setLevel"] = self.set_log_level
        if added is not None:
            routes.update(added)
        # Replaced in place: the engines hold this very dict.
        self.routes.clear()
        self.routes.update(routes)
        self.route_kinds = route_kinds(routes, self.own_handlers())
        if self.modern is not None:
            self._build_modern(listings, capabilities, added)

    def fast_tool(self, name: str, tool: Tool) -> FastTool | None:
        """The record of a tool whose calls an engine may check and make itself, or None."""
        if not tool.plain:
            return None
        lax = type(tool.validate) is not FlatShape
        shape = lax_flat_shape(tool.validate, tool.func) if lax else tool.validate
        if shape is None:
            return None
        return fast_record(name, tool, shape, self.invalid_arguments[name], lax)

    #: Whether a call of a tool that does not exist is the JSON-RPC error ``Unknown tool`` (an engine may
    #: answer it itself); a framework's catalogue answers it with a result of its own.
    unknown_tool_is_error = True

    def own_handlers(self) -> dict[str, Any]:
        """The handlers of :data:`HANDLER_KINDS`, by method: where an engine may stand in for them."""
        return {"tools/call": self.call_tool, "resources/read": self.read_resource}

    def _extend(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """The app's extensions: advertised in ``capabilities``; the routes they add (``tools/call`` when
        they claim tools)."""
        from .extensions import claiming

        extensions = self.app.extensions.values()
        capabilities["extensions"] = {extension.name: extension.settings() for extension in extensions}
        routes: dict[str, Any] = {}
        claimed: dict[str, Any] = {}
        for extension in extensions:
            routes.update(extension.methods(self))
            claimed.update(extension.claims(self))
            self.listen_filters.update(extension.listen_filters(self))
            self.named_by.update(extension.named_by)
            self.concurrent = self.concurrent or extension.concurrent(self.tools)
        if claimed:
            routes["tools/call"] = claiming(self.call_tool, claimed)
        return routes

    def _build_modern(
        self, listings: dict[str, Any], capabilities: dict[str, Any], added: dict[str, Any] | None
    ) -> None:
        from .eras import ModernRoute

        era = self.modern
        discover: dict[str, Any] = {"supportedVersions": list(self.versions), "capabilities": capabilities}
        if self.app.instructions is not None:
            discover["instructions"] = self.app.instructions
        routes: dict[str, Any] = {"server/discover": era.constant(discover, True)}
        for method, listing in listings.items():
            routes[method] = self._listed(listing, lambda result: era.constant(result, True), era.finish_cacheable)
        routes["tools/call"] = ModernRoute(era, "tools/call", self.routes["tools/call"], False)
        routes["resources/read"] = ModernRoute(era, "resources/read", self.read_resource, True)
        if "prompts/list" in listings:
            routes["prompts/get"] = ModernRoute(era, "prompts/get", self.get_prompt, False)
        if self.completions:
            routes["completion/complete"] = ModernRoute(era, "completion/complete", self.complete, False)
        for method, handler in (added or {}).items():
            if method != "tools/call":
                routes[method] = ModernRoute(era, method, handler, False)
        era.routes.clear()
        era.routes.update(routes)
        era.route_kinds = route_kinds(routes, self.own_handlers())

    def _listed(
        self, listing: dict[str, Any], constant: Callable[[Any], bytes], finish: Callable[[bytes], bytes]
    ) -> Any:
        """The route of a list: its constant answer, or its pages when it is longer than the app's page size."""
        size = self.app.list_page_size
        [(member, items)] = listing.items()
        if size is None or len(items) <= size:
            return constant(listing)
        from .pagination import Pages

        return Pages(member, items, LISTED_BY[member], size, finish)

    def initialize_result(self, version: str) -> bytes:
        """The ``initialize`` result body for one legacy version."""
        result = self._initialize_results.get(version)
        if result is None:
            initialize: dict[str, Any] = {
                "protocolVersion": version,
                "capabilities": self._capabilities,
                "serverInfo": self.server_info,
            }
            if self.app.instructions is not None:
                initialize["instructions"] = self.app.instructions
            result = self._initialize_results[version] = dumps(initialize)
        return result
