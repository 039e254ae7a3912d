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
from .schema import FlatShape, header_parameters, positional_count
from .session import Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .app import Server
    from .eras import ModernEra
    from .handlers import Tool


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


def route_kinds(routes: dict[str, Any]) -> dict[str, int]:
    """The :class:`RouteKind` of each route of ``routes`` (method -> answer bytes or handler)."""
    return {
        method: RouteKind.CONSTANT if type(target) is bytes else HANDLER_KINDS.get(method, RouteKind.HANDLER)
        for method, target in routes.items()
    }


class FastTool:
    """A plain tool with a flat argument shape, for engines that check arguments themselves."""

    __slots__ = ("name", "func", "fields", "positional", "invalid", "failed", "mirrored")

    def __init__(
        self,
        name: str,
        func: Callable[..., Any],
        fields: tuple[tuple[str, str, bool], ...],
        positional: int,
        invalid: bytes,
        failed: Callable[[BaseException], bytes],
        mirrored: bool = False,
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
        self.fast_tools = [
            FastTool(
                name,
                tool.func,
                tool.validate.fields,
                positional_count(tool.func, tuple(field[0] for field in tool.validate.fields)),
                self.invalid_arguments[name],
                tool.failed,
                bool(header_parameters(tool.input_schema)),
            )
            for name, tool in self.tools.items()
            if tool.plain and type(tool.validate) is FlatShape
        ]
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
        routes["tools/list"] = constant_answer(listings["tools/list"])
        routes["tools/call"] = self.call_tool
        routes["resources/list"] = constant_answer(listings["resources/list"])
        routes["resources/read"] = self.read_resource
        routes["resources/templates/list"] = constant_answer(listings["resources/templates/list"])
        if serves_prompts:
            routes["prompts/list"] = constant_answer(listings["prompts/list"])
            routes["prompts/get"] = self.get_prompt
        if self.completions:
            routes["completion/complete"] = self.complete
        if app.resource_subscriptions:
            routes["resources/subscribe"] = self.subscribe
            routes["resources/unsubscribe"] = self.unsubscribe
        if uses_context:
            routes["logging/setLevel"] = self.set_log_level
        # Replaced in place: the engines hold this very dict.
        self.routes.clear()
        self.routes.update(routes)
        self.route_kinds = route_kinds(routes)
        if self.modern is not None:
            self._build_modern(listings, capabilities)

    def _build_modern(self, listings: dict[str, Any], capabilities: dict[str, Any]) -> None:
        from .eras import ModernRoute

        era = self.modern
        discover: dict[str, Any] = {"supportedVersions": list(self.versions), "capabilities": capabilities}
        if self.app.instructions is not None:
            discover["instructions"] = self.app.instructions
        routes: dict[str, Any] = {"server/discover": era.constant(discover, True)}
        for method, listing in listings.items():
            routes[method] = era.constant(listing, True)
        routes["tools/call"] = ModernRoute(era, "tools/call", self.call_tool, False)
        routes["resources/read"] = ModernRoute(era, "resources/read", self.read_resource, True)
        if "prompts/list" in listings:
            routes["prompts/get"] = ModernRoute(era, "prompts/get", self.get_prompt, False)
        if self.completions:
            routes["completion/complete"] = ModernRoute(era, "completion/complete", self.complete, False)
        era.routes.clear()
        era.routes.update(routes)
        era.route_kinds = route_kinds(routes)

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
