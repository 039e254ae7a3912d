"""The public framework: ``Server``, its ``tool``/``resource`` decorators, and ``ToolError``.

An app is compiled into a :class:`~shipcode_mcp.catalogue.Catalogue`, the plain data both
engines read. Apps never see JSON-RPC: a tool is a plain function of its arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .results import error_result, tool_result
from .schema import compile_output_check, compile_validator, infer_input_schema

if TYPE_CHECKING:
    import os

    from .catalogue import Catalogue

__all__ = ["Resource", "Server", "Tool", "ToolError"]


class ToolError(Exception):
    """Raise inside a tool to answer ``{"content":[{"type":"text","text":msg}],"isError":true}``."""


def _docstring(func: Callable[..., Any]) -> str:
    """A function's docstring with common indentation removed (``""`` when it has none)."""
    doc = func.__doc__ or ""
    lines = doc.expandtabs().strip().splitlines()
    if len(lines) > 1:
        indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
        margin = min(indents, default=0)
        lines[1:] = [line[margin:] for line in lines[1:]]
    return "\n".join(lines)


_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, without importing inspect
_loop = None


def is_coroutine_function(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is an ``async def`` function."""
    code = getattr(func, "__code__", None)
    return code is not None and bool(code.co_flags & _CO_COROUTINE)


def run_coroutine(coroutine: Any) -> Any:
    """Run an ``async def`` tool's or resource's coroutine to completion on a private loop.

    Requests are answered one at a time, in order, so one event loop serves them all.
    """
    global _loop
    if _loop is None:
        import asyncio
        import atexit

        _loop = asyncio.new_event_loop()
        atexit.register(_loop.close)
    return _loop.run_until_complete(coroutine)


#: What a tool call may raise and still get an answer (a tool cannot stop the server).
TOOL_FAULTS = (Exception, SystemExit)


class Tool:
    """One tool: its listing, its argument validator and its function."""

    __slots__ = (
        "name",
        "title",
        "description",
        "input_schema",
        "output_schema",
        "annotations",
        "func",
        "validate",
        "is_async",
        "check_output",
        "plain",
    )

    def __init__(
        self,
        func: Callable[..., Any],
        name: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> None:
        self.func = func
        self.name = name or func.__name__
        self.title = title
        self.description = _docstring(func) if description is None else description
        self.input_schema = infer_input_schema(func) if input_schema is None else input_schema
        self.output_schema = output_schema
        self.annotations = annotations
        self.validate = compile_validator(self.input_schema)
        self.is_async = is_coroutine_function(func)
        self.check_output = None if output_schema is None else compile_output_check(output_schema)
        #: True when :meth:`invoke` is just ``func(**arguments)`` then :func:`tool_result`:
        #: callers may then call ``func`` themselves (and :meth:`failed` if it raises).
        self.plain = not self.is_async and self.check_output is None

    def listing(self) -> dict[str, Any]:
        """The tool's entry in ``tools/list``."""
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        entry["description"] = self.description
        entry["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            entry["outputSchema"] = self.output_schema
        if self.annotations is not None:
            entry["annotations"] = self.annotations
        return entry

    def invoke(self, arguments: dict[str, Any]) -> bytes:
        """Call the function with validated arguments; failures become ``isError`` results.

        A :class:`ToolError` shows its message; any other exception (``SystemExit`` included:
        a tool cannot stop the server) shows ``Tool <name> failed`` and logs the traceback, as
        does a tool with an output schema that returns anything but a dict matching it.
        """
        try:
            value = self.func(**arguments)
            if self.is_async:
                value = run_coroutine(value)
            if self.check_output is None:
                return tool_result(value)
            self.check_output(value)
            return tool_result(value, True)
        except TOOL_FAULTS as error:
            return self.failed(error)

    def failed(self, error: BaseException) -> bytes:
        """The result of a call that raised ``error``; call it inside the ``except`` block."""
        try:
            if isinstance(error, ToolError):
                return error_result(str(error))
            from ._log import log_exception

            log_exception(f"tool {self.name!r} failed")
            return error_result(f"Tool {self.name} failed")
        finally:
            # A tool raising one shared instance again and again would extend its traceback
            # (keeping every frame alive) with each call.
            error.__traceback__ = None


class Resource:
    """One resource: its listing and the function that reads it (``str`` text or ``bytes``).

    The function may be ``async def``. Whatever it raises is a JSON-RPC error: an
    :class:`~shipcode_mcp.protocol.RpcError` as given, anything else -32603 ``Internal error``.
    """

    __slots__ = ("uri", "name", "title", "description", "mime_type", "read", "is_async")

    def __init__(
        self,
        uri: str,
        read: Callable[[], str | bytes],
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> None:
        self.uri = uri
        self.read = read
        self.is_async = is_coroutine_function(read)
        self.name = name or getattr(read, "__name__", uri)
        self.title = title
        self.description = description
        if mime_type is None:
            import mimetypes

            mime_type = mimetypes.guess_type(uri, strict=False)[0] or "text/plain"
        self.mime_type = mime_type

    def listing(self) -> dict[str, Any]:
        """The resource's entry in ``resources/list``."""
        entry: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description is not None:
            entry["description"] = self.description
        entry["mimeType"] = self.mime_type
        return entry

    def contents(self) -> dict[str, Any]:
        """The resource's entry in a ``resources/read`` result: ``text`` or base64 ``blob``."""
        data = self.read()
        if self.is_async:
            data = run_coroutine(data)
        entry: dict[str, Any] = {"uri": self.uri, "mimeType": self.mime_type}
        if isinstance(data, str):
            entry["text"] = data
        elif isinstance(data, (bytes, bytearray, memoryview)):
            import base64

            entry["blob"] = base64.b64encode(data).decode("ascii")
        else:
            raise TypeError(f"resource {self.uri} read {type(data).__name__}, not str or bytes")
        return entry


class Server:
    """An MCP app: its identity, tools and resources.

    >>> app = Server("notes", version="0.1.0")
    >>> @app.tool()
    ... def shout(text: str) -> str:
    ...     '''Upper-case the text'''
    ...     return text.upper()
    """

    def __init__(self, name: str, version: str = "0.1.0", instructions: str | None = None) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}

    def tool(
        self,
        name: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as a tool; the function is returned unchanged.

        The name defaults to the function's name, the description to its docstring and the
        input schema to one inferred from its type hints.
        """
        if callable(name):  # used bare: @app.tool
            return self.tool()(name)

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(Tool(func, name, description, input_schema, output_schema, title, annotations))
            return func

        return register

    def add_tool(self, tool: Tool) -> None:
        """Register a :class:`Tool` object."""
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self.tools[tool.name] = tool

    def resource(
        self,
        uri: str,
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> Callable[[Callable[[], str | bytes]], Callable[[], str | bytes]]:
        """Register a function returning ``str`` (text) or ``bytes`` (blob) as a resource."""

        def register(func: Callable[[], str | bytes]) -> Callable[[], str | bytes]:
            self.add_resource(Resource(uri, func, name, mime_type, description, title))
            return func

        return register

    def add_resource(self, resource: Resource) -> None:
        """Register a :class:`Resource` object."""
        if resource.uri in self.resources:
            raise ValueError(f"a resource with uri {resource.uri!r} is already registered")
        self.resources[resource.uri] = resource

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
        return added

    def catalogue(self) -> Catalogue:
        """Compile the app into the data the engines serve."""
        from .catalogue import Catalogue

        return Catalogue(self)

    def run(self, max_message_bytes: int | None = None) -> None:
        """Serve this app on stdin/stdout with the best engine until EOF."""
        from .cli import serve_app

        serve_app(self, max_message_bytes=max_message_bytes)
