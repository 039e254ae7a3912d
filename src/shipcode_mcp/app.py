"""The public framework: ``Server`` and its ``tool``/``resource`` decorators.

An app is compiled into a :class:`~shipcode_mcp.catalogue.Catalogue`, the plain data both
engines read. Apps never see JSON-RPC: a tool is a plain function of its arguments (and,
when it asks for one, a :class:`~shipcode_mcp.context.Context`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

from .bus import LISTS, RESOURCE, Bus
from .errors import ToolError
from .handlers import Resource, Tool
from .protocol import ALL_VERSIONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from typing import Any

    from .catalogue import Catalogue
    from .extensions import Extension
    from .prompts import Prompt
    from .session import Session
    from .templates import ResourceTemplate

__all__ = ["Resource", "Server", "Tool", "ToolError"]


def check_versions(versions: Sequence[str]) -> tuple[str, ...]:
    """The protocol versions an app speaks, newest first; ValueError for any not implemented."""
    if isinstance(versions, str):
        raise TypeError("protocol_versions is a sequence of versions, not one string")
    chosen = set(versions)
    unknown = sorted(chosen.difference(ALL_VERSIONS))
    if unknown or not chosen:
        raise ValueError(
            f"protocol versions {', '.join(unknown) or '(none)'} not implemented; choose from {', '.join(ALL_VERSIONS)}"
        )
    return tuple(version for version in ALL_VERSIONS if version in chosen)


def _tool(
    func: Callable[..., Any], ui: str | None, visibility: Sequence[str] | None, *args: Any, **options: Any
) -> Tool:
    """A :class:`Tool`, or one naming its interface (MCP Apps) when given ``ui`` or ``visibility``."""
    if ui is None and visibility is None:
        return Tool(func, *args, **options)
    from .apps import UiTool

    return UiTool(func, *args, ui=ui, visibility=visibility, **options)


class Server:
    """An MCP app: its identity, tools and resources.

    >>> app = Server("notes", version="0.1.0")
    >>> @app.tool()
    ... def shout(text: str) -> str:
    ...     '''Upper-case the text'''
    ...     return text.upper()
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        instructions: str | None = None,
        resource_subscriptions: bool = False,
        protocol_versions: Sequence[str] | None = None,
        state_key: str | bytes | Sequence[str | bytes] | None = None,
        icons: list[dict[str, Any]] | None = None,
        ttl_ms: int = 0,
        cache_scope: str = "private",
        server_info_meta: bool = True,
        list_changed: bool = False,
        strict: bool = True,
        extensions: Sequence[Extension] = (),
        lifespan: Callable[[Server], Any] | None = None,
        list_page_size: int | None = None,
        redis: str | None = None,
    ) -> None:
        self.name = name
        #: ``lifespan(server)``: an async context manager entered once per process before the first
        #: request and left when serving ends; handlers see its value as ``ctx.lifespan_context``
        #: (see :mod:`shipcode_mcp.lifespan`).
        self.lifespan = lifespan
        #: The lifespan while it runs in this process (a :class:`~shipcode_mcp.lifespan.Lifespan`), else None.
        self.running_lifespan: Any = None
        if list_page_size is not None and (type(list_page_size) is not int or list_page_size < 1):
            raise ValueError("list_page_size must be a whole number, 1 or more (None: lists in one page)")
        #: How many items a page of ``tools/list`` and the other lists holds (None: one page).
        self.list_page_size = list_page_size
        #: The tools' default validation: True converts nothing; False is pydantic's lax mode (see :meth:`tool`).
        self.strict = strict
        self.version = version
        self.instructions = instructions
        #: Whether clients may subscribe to resources (see :meth:`notify_resource_updated`).
        self.resource_subscriptions = resource_subscriptions
        #: The protocol versions the app speaks, newest first (default: every one implemented).
        self.protocol_versions = check_versions(ALL_VERSIONS if protocol_versions is None else protocol_versions)
        #: The key sealing 2026-07-28 request states, or a ring of keys, the first sealing and all opening (see
        #: :mod:`shipcode_mcp.asking.state`).
        self.state_key = state_key
        #: The server's icons (``serverInfo.icons``).
        self.icons = icons
        if type(ttl_ms) is not int or ttl_ms < 0:
            raise ValueError("ttl_ms must be a whole number of milliseconds, 0 or more")
        if cache_scope not in ("public", "private"):
            raise ValueError('cache_scope must be "public" or "private"')
        #: Caching hints of 2026-07-28 list and read results.
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        #: Whether each 2026-07-28 result names the server in its ``_meta``.
        self.server_info_meta = server_info_meta
        #: Whether the app declares ``listChanged`` (set by the first change while serving).
        self.list_changed = list_changed
        self._catalogues: weakref.WeakSet[Catalogue] = weakref.WeakSet()
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        #: Completion functions by reference: ``("ref/prompt", name)`` or ``("ref/resource", uri template)``.
        self.completions: dict[tuple[str, str], Callable[..., Any]] = {}
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        #: The app's extensions by name (see :meth:`add_extension`).
        self.extensions: dict[str, Extension] = {}
        #: What tells every listener of every process of resource updates, list changes and task
        #: notifications (:mod:`shipcode_mcp.bus`): in-process, or shared through Redis (:meth:`use_redis`).
        self.bus: Bus = Bus()
        self.bus.on(RESOURCE, self._resource_updated)
        self.bus.on(LISTS, self._lists_changed)
        #: The url of the Redis the bus (and the tasks' default store) goes through, if any.
        self.redis: str | None = None
        if redis is not None:
            self.use_redis(redis)
        for extension in extensions:
            self.add_extension(extension)

    def add_extension(self, extension: Extension) -> Extension:
        """Serve an :class:`~shipcode_mcp.extensions.Extension`: advertised under ``capabilities.extensions``,
        its methods and claims added to what is served (see ``docs/extensions.md``). Before serving."""
        from .extensions import check_extension

        self.extensions[extension.name] = check_extension(extension, set(self.extensions))
        extension.added(self)
        for catalogue in list(self._catalogues):
            catalogue.refresh()
        return extension

    def use_redis(self, url: str) -> None:
        """Share the bus through the Redis at ``url`` (``Server(redis=url)``, ``--redis URL``): resource updates,
        list changes and task notifications reach the listeners of every process and machine sharing it; the
        tasks extension keeps its tasks there unless it was given a store. Before serving."""
        from .redisbus import RedisBus

        bus = RedisBus(url)
        bus.handlers.update(self.bus.handlers)
        self.bus = bus
        self.redis = url
        if self.extensions:
            from .tasks import TASKS

            tasks = self.extensions.get(TASKS)
            if tasks is not None:
                tasks.share(url)

    def tasks(self) -> Any:
        """The app's tasks extension (:class:`~shipcode_mcp.tasks.Tasks`), added with the memory store if
        there is none yet."""
        from .tasks import TASKS, Tasks

        extension = self.extensions.get(TASKS)
        return extension if extension is not None else self.add_extension(Tasks())

    def apps(self) -> Any:
        """The app's MCP Apps extension (:class:`~shipcode_mcp.apps.Apps`), added if there is none yet."""
        from .apps import UI, Apps

        extension = self.extensions.get(UI)
        return extension if extension is not None else self.add_extension(Apps())

    def tool(
        self,
        name: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        blocking: bool = False,
        icons: list[dict[str, Any]] | None = None,
        strict: bool | None = None,
        structured_output: bool | None = None,
        task: bool | str | Callable[..., Any] = False,
        ui: str | None = None,
        visibility: Sequence[str] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as a tool; the function is returned unchanged.

        The name defaults to the function's name, the description to its docstring and the
        input schema to one inferred from its type hints (a ``Context`` parameter is left
        out). ``async def`` tools run concurrently on the server's event loop;
        ``blocking=True`` marks a sync function that blocks (sync I/O): it runs in the
        worker thread pool, concurrently. ``strict`` (default: the server's) chooses the
        validation of inferred schemas: True converts nothing, False is pydantic's lax mode
        (``"2"`` is an ``int``). ``structured_output`` True or False turns structured output
        from the return annotation on or off; by default it is on for annotations that need
        pydantic (models, ``TypedDict``, dataclasses...). See ``docs/framework.md``.

        ``task=True`` lets a call become a task (``io.modelcontextprotocol/tasks``: answered at once
        with a task the client polls) when the client declares the extension; ``task="required"``
        refuses clients that do not (-32021); a function ``decide(arguments, ctx) -> bool`` (sync or
        async, may ask the client) chooses per call. See ``docs/extensions.md``.

        ``ui="ui://..."`` names the interface that draws the tool's result (MCP Apps,
        ``io.modelcontextprotocol/ui``: see :meth:`ui_resource`); ``visibility=["app"]`` lists a tool
        only the app's interface should call (default: the model and the app).
        """
        if callable(name):  # used bare: @app.tool
            return self.tool()(name)
        chosen = self.strict if strict is None else strict

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(
                _tool(
                    func,
                    ui,
                    visibility,
                    name,
                    description,
                    input_schema,
                    output_schema,
                    title,
                    annotations,
                    blocking,
                    icons,
                    chosen,
                    structured_output,
                    task=task,
                )
            )
            return func

        return register

    def add_tool(self, tool: Tool | Callable[..., Any], **options: Any) -> Tool:
        """Register a :class:`Tool`, or a function with the options of :meth:`tool`; at any time.

        While the app is served, clients learn of the change (``listChanged``).
        """
        if not isinstance(tool, Tool):
            ui, visibility = options.pop("ui", None), options.pop("visibility", None)
            tool = _tool(tool, ui, visibility, **{"strict": self.strict, **options})
        elif options:
            raise TypeError("add_tool() takes options only with a function, not with a Tool")
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        if tool.task is not None:
            self.tasks()
        if getattr(tool, "ui", None) is not None:
            self.apps()
        self.tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        """Stop serving a tool (KeyError if there is none of that name)."""
        del self.tools[name]
        self._changed("tools")

    def resource(
        self,
        uri: str,
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> Callable[[Callable[[], str | bytes]], Callable[[], str | bytes]]:
        """Register a function returning ``str`` (text) or ``bytes`` (blob) as a resource.

        A uri with ``{name}`` parts registers a template (see :mod:`shipcode_mcp.templates`):
        the function's parameters must be exactly those names.
        """

        def register(func: Callable[..., str | bytes]) -> Callable[..., str | bytes]:
            self.add_resource(func, uri, name, mime_type, description, title, icons)
            return func

        return register

    def prompt(
        self,
        name: str | Callable[..., Any] | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> Any:
        """Register a function as a prompt (also usable bare: ``@app.prompt``).

        Its parameters are the prompt's arguments (strings: hint ``str``, ``str | None`` or
        nothing; ``Annotated[str, "text"]`` describes one); one without a default is
        required. The description defaults to the docstring. See :mod:`shipcode_mcp.prompts`.
        """
        if callable(name):
            return self.prompt()(name)

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add_prompt(func, name, title, description, icons)
            return func

        return register

    def add_prompt(
        self,
        func: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> Prompt:
        """Register a function as a prompt with the options of :meth:`prompt`; at any time."""
        from .prompts import Prompt

        prompt = Prompt(func, name, title, description, icons)
        if prompt.name in self.prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self.prompts[prompt.name] = prompt
        self._changed("prompts")
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Stop serving a prompt (KeyError if there is none of that name)."""
        del self.prompts[name]
        self._changed("prompts")

    def completion(self, prompt: str | None = None, resource: str | None = None) -> Any:
        """Register ``fn(argument, value, context) -> list[str]`` completing a prompt's or a
        resource template's arguments: the argument's name, its partial value, and the other
        arguments already chosen (``{}`` when the client sent none). Sync or async."""
        if (prompt is None) == (resource is None):
            raise TypeError("completion() takes exactly one of prompt= or resource=")
        key = ("ref/prompt", prompt) if prompt is not None else ("ref/resource", resource)

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            if key in self.completions:
                raise ValueError(f"a completion for {key[1]!r} is already registered")
            self.completions[key] = func
            return func

        return register

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to clients subscribed to ``uri``.

        Callable from any handler or thread while the app is served; needs
        ``Server(..., resource_subscriptions=True)``. Published on the bus: with Redis, the clients of
        every process sharing it are told.
        """
        self.bus.publish(RESOURCE, uri.encode())

    def _resource_updated(self, payload: bytes) -> None:
        """The bus's resource updates: to this process's sessions subscribed to the uri."""
        uri = payload.decode()
        for session in list(self._sessions):
            session.resource_updated(uri)

    def add_resource(
        self,
        resource: Resource | Callable[..., Any],
        uri: str | None = None,
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> Resource:
        """Register a :class:`Resource`, or a function with a ``uri`` and the options of :meth:`resource`.

        A uri with ``{name}`` parts registers a template. At any time: while the app is
        served, clients learn of the change (``listChanged``).
        """
        if not isinstance(resource, Resource):
            if uri is None:
                raise TypeError("add_resource() needs the uri of the function's resource")
            if "{" in uri:  # maybe a template: only then is its module imported
                from .templates import ResourceTemplate, is_template

                if is_template(uri):
                    if uri in self.templates:
                        raise ValueError(f"a resource template {uri!r} is already registered")
                    template = self.templates[uri] = ResourceTemplate(
                        uri, resource, name, mime_type, description, title, icons
                    )
                    self._changed("resources")
                    return template
            resource = Resource(uri, resource, name, mime_type, description, title, icons)
        if resource.uri in self.resources:
            raise ValueError(f"a resource with uri {resource.uri!r} is already registered")
        self.resources[resource.uri] = resource
        self._changed("resources")
        return resource

    def remove_resource(self, uri: str) -> None:
        """Stop serving a resource or resource template (KeyError if there is none with that uri)."""
        if uri in self.resources:
            del self.resources[uri]
        else:
            del self.templates[uri]
        self._changed("resources")

    def _changed(self, kind: str) -> None:
        """The app's ``kind`` (tools, prompts, resources) changed: refresh what is served, notify clients."""
        catalogues = list(self._catalogues)
        if not catalogues:
            return
        self.list_changed = True
        for catalogue in catalogues:
            catalogue.refresh()
        self.bus.publish(LISTS, kind.encode())

    def _lists_changed(self, payload: bytes) -> None:
        """The bus's list changes (here or in another process, whose catalogue is its own): this process's
        clients told to list again; the first one makes the app declare ``listChanged``."""
        from .eras import LIST_CHANGED_FILTERS

        kind = payload.decode()
        member = LIST_CHANGED_FILTERS.get(kind)
        if member is None:
            return
        catalogues = list(self._catalogues)
        if not self.list_changed:
            self.list_changed = True
            for catalogue in catalogues:
                catalogue.refresh()
        for catalogue in catalogues:
            catalogue.session.list_changed(kind, member)

    def ui_resource(
        self,
        uri: str,
        html: str | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: dict[str, Sequence[str]] | None = None,
        permissions: Sequence[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> Resource:
        """Serve an MCP App's interface: the HTML page ``html`` (or the UTF-8 file at ``path``, read now,
        once) as the resource ``uri`` (``ui://...``, type ``text/html;profile=mcp-app``), which a tool names
        with ``@app.tool(ui=uri)``. ``csp`` (``connectDomains``, ``resourceDomains``, ``frameDomains``,
        ``baseUriDomains``: lists of origins), ``permissions`` (among ``camera``, ``microphone``,
        ``geolocation``, ``clipboardWrite``), ``domain`` and ``prefers_border`` are its ``_meta.ui``, which
        hosts apply when they render it. See ``docs/extensions.md``.
        """
        from .apps import UiResource, read_page, resource_ui

        if (html is None) == (path is None):
            raise TypeError("ui_resource() takes the page as html= or as path=, one of them")
        if path is not None:
            html = read_page(path)
        elif type(html) is not str:
            raise TypeError(f"html is the page's text, not {type(html).__name__}")
        ui = resource_ui(csp, permissions, domain, prefers_border)
        resource = UiResource(
            uri, html, ui, name=uri if name is None else name, title=title, description=description, icons=icons
        )
        self.apps()
        return self.add_resource(resource)

    def add_resource_folder(self, directory: str | os.PathLike[str], max_bytes: int | None = None) -> list[Resource]:
        """Serve every regular file under ``directory`` as a resource (see :mod:`shipcode_mcp.folder`).

        Files are listed now, once; each read re-checks that the file is still inside the
        folder. ``max_bytes`` caps the size of a file that is read (default 16 MiB). A file
        whose uri is already registered (from another folder, say) is skipped. Returns the
        resources added.
        """
        from .folder import DEFAULT_MAX_RESOURCE_BYTES, scan_folder

        added = []
        for resource in scan_folder(directory, DEFAULT_MAX_RESOURCE_BYTES if max_bytes is None else max_bytes):
            if resource.uri not in self.resources:
                self.resources[resource.uri] = resource
                added.append(resource)
        if added:
            self._changed("resources")
        return added

    def add_skills(self, directory: str | os.PathLike[str]) -> list[Any]:
        """Serve the skills of ``directory`` (the ``io.modelcontextprotocol/skills`` extension, see
        :mod:`shipcode_mcp.skills`): each file read now, once, as a ``skill://`` resource. Returns the skills."""
        from .skills import SKILLS, Skills, load_skills

        skills = load_skills(directory)
        files = [file for skill in skills for file in skill.files]
        for file in files:
            if file.uri in self.resources:
                raise ValueError(f"a resource with uri {file.uri!r} is already registered")
        extension = self.extensions.get(SKILLS)
        if extension is None:
            extension = self.add_extension(Skills())
        extension.add(skills)
        self.resources.update((file.uri, file) for file in files)
        self._changed("resources")
        return skills

    def catalogue(self) -> Catalogue:
        """Compile the app into the data the engines serve."""
        from .catalogue import Catalogue

        catalogue = Catalogue(self)
        self._sessions.add(catalogue.session)
        self._catalogues.add(catalogue)
        return catalogue

    def http_app(
        self,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_message_bytes: int | None = None,
        auth: Callable[[str], Any] | None = None,
        **options: Any,
    ) -> Any:
        """This app as an ASGI 3 application speaking Streamable HTTP at ``path`` (see ``docs/http.md``).

        Serve it with uvicorn (``pip install shipcode-mcp[http]``), hypercorn or granian, or mount it
        in Starlette or FastAPI. On a loopback address only localhost Host and Origin values pass
        unless ``allowed_hosts``/``allowed_origins`` say otherwise. ``auth(token)`` (sync or async)
        returns who is calling, or None to refuse the bearer token (401); handlers see it as
        ``ctx.auth``. Further options: ``resource``, ``authorization_servers``, ``scopes`` (the
        protected resource metadata), ``max_sessions``, ``session_idle_seconds``,
        ``max_sessions_per_client``, ``unconfirmed_idle_seconds``, ``max_concurrency``, ``workers``,
        ``body_timeout``, ``public_url`` (the server's origin as clients see it). A value it cannot
        serve with is a ValueError, raised here.
        """
        from .transports.http import http_app

        return http_app(
            self,
            path,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            max_message_bytes=max_message_bytes,
            auth=auth,
            **options,
        )

    def run(
        self,
        max_message_bytes: int | None = None,
        max_concurrency: int | None = None,
        workers: int | None = None,
        eof_grace: float | None = None,
    ) -> None:
        """Serve this app on stdin/stdout with the best engine until EOF or a stop signal.

        ``max_concurrency`` bounds the handlers in flight (default 2000), ``workers`` the
        threads for ``blocking=True`` tools (default 32), ``eof_grace`` the seconds handlers
        in flight at end of input may still take (default 30). See
        docs/concurrency.md.
        """
        from .transports.stdio import serve_app

        status = serve_app(
            self,
            max_message_bytes=max_message_bytes,
            max_concurrency=max_concurrency,
            workers=workers,
            eof_grace=eof_grace,
        )
        if status:  # the lifespan failed: said on stderr
            raise SystemExit(status)
