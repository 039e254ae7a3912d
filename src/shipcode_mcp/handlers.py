"""Tools and resources: what an app registers, and how a call becomes an answer body.

A sync tool without a ``Context`` is called at once, in order. Any other call (an ``async
def`` function, ``blocking=True``, a ``Context`` parameter) becomes a
:class:`~shipcode_mcp.session.Deferred` that the session runs (see :mod:`shipcode_mcp.session`).
"""

from __future__ import annotations

from collections.abc import Callable

from .context import Context
from .deferred import ASYNC, INLINE, THREAD, Deferred
from .errors import HANDLER_FAULTS, ToolError
from .jsontext import dumps
from .results import declares_content, error_result, tool_result
from .schema import (
    FlatShape,
    NeedsPydantic,
    compile_output_check,
    compile_validator,
    infer_input_schema,
    schema_for_hint,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, without importing inspect


def docstring(func: Callable[..., Any]) -> str:
    """A function's docstring with common indentation removed (``""`` when it has none)."""
    doc = func.__doc__ or ""
    lines = doc.expandtabs().strip().splitlines()
    if len(lines) > 1:
        indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
        margin = min(indents, default=0)
        lines[1:] = [line[margin:] for line in lines[1:]]
    return "\n".join(lines)


def is_coroutine_function(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is an ``async def`` function."""
    code = getattr(func, "__code__", None)
    return code is not None and bool(code.co_flags & _CO_COROUTINE)


def context_parameter(func: Callable[..., Any]) -> str | None:
    """The name of the parameter annotated :class:`~shipcode_mcp.context.Context`, if any."""
    for name, hint in getattr(func, "__annotations__", {}).items():
        if name == "return":
            continue
        if isinstance(hint, str):  # a postponed hint, maybe subscripted: Context[ServerSession, Lifespan]
            hint = hint.partition("[")[0]
            if hint == "Context" or hint.endswith(".Context"):
                return name
            continue
        origin = getattr(hint, "__origin__", hint)  # Context[...] of a subclass that takes parameters
        if origin is Context or (isinstance(origin, type) and issubclass(origin, Context)):
            return name
    return None


def load_typed(what: str, reason: BaseException) -> Any:
    """:mod:`shipcode_mcp.typed`, for ``what`` (a tool) that needs it for ``reason``; a TypeError
    saying how to install pydantic when it is missing."""
    try:
        import shipcode_mcp.typed as typed
    except ImportError as error:
        if not (error.name or "").startswith("pydantic"):
            raise
        raise TypeError(f'{what}: {reason}; that needs pydantic: pip install "shipcode-mcp[pydantic]"') from None
    return typed


def needs_structured_output(func: Callable[..., Any]) -> bool:
    """Whether a native tool's return annotation turns structured output on by itself: when it is a
    type the plain inference has no schema for (a model, a ``TypedDict``, a dataclass,
    ``list[Model]``...), other than content blocks and classes without fields."""
    hint = getattr(func, "__annotations__", {}).get("return")
    if hint is None:
        return False
    if isinstance(hint, str):
        import typing

        try:
            hint = typing.get_type_hints(func, include_extras=True).get("return")
        except NameError:  # a name only type checkers see: as before, no structured output
            return False
    try:
        schema_for_hint(hint)
    except NeedsPydantic:
        if declares_content(hint):
            return False
        return not isinstance(hint, type) or bool(getattr(hint, "__annotations__", None))
    return False


def progress_token(params: dict[str, Any] | None) -> object:
    """``params._meta.progressToken`` when it is a string or an integer, else None."""
    meta = params.get("_meta") if params is not None else None
    if type(meta) is dict:
        token = meta.get("progressToken")
        if type(token) is str or type(token) is int or (type(token) is float and token == token):
            return token
    return None


def request_meta(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """``params._meta`` when it is an object, else None."""
    meta = params.get("_meta") if params is not None else None
    return meta if type(meta) is dict else None


class Tool:
    """One tool: its listing, its argument validator and its function.

    ``strict`` and ``structured_output`` are the options of typed tools (see :mod:`shipcode_mcp.typed`).
    ``validator`` (a :class:`~shipcode_mcp.typed.Arguments`, or any callable returning the keyword
    arguments or raising :class:`~shipcode_mcp.schema.InvalidArguments`, with its ``schema``) and
    ``structured`` (a :class:`~shipcode_mcp.typed.StructuredResult`) are prepared ones, used as given:
    a framework with rules of its own builds them.
    """

    __slots__ = (
        "name",
        "title",
        "description",
        "input_schema",
        "output_schema",
        "annotations",
        "func",
        "validate",
        "check_arguments",
        "is_async",
        "blocking",
        "context_name",
        "check_output",
        "plain",
        "deferred",
        "icons",
        "strict",
        "structured",
        "task",
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
        blocking: bool = False,
        icons: list[dict[str, Any]] | None = None,
        strict: bool = True,
        structured_output: bool | None = None,
        *,
        validator: Any = None,
        structured: Any = None,
        task: Any = None,
    ) -> None:
        self.func = func
        #: Whether a call may become a task (see :mod:`shipcode_mcp.tasks`): None (never), True, ``"required"``,
        #: or a function deciding per call.
        if task is not None and task is not True and task is not False and task != "required" and not callable(task):
            raise ValueError(f'tool {name or func.__name__!r}: task is True, False, "required" or a function')
        self.task = None if task is False else task
        self.icons = icons
        self.name = name or func.__name__
        self.title = title
        self.description = docstring(func) if description is None else description
        self.is_async = is_coroutine_function(func)
        if blocking and self.is_async:
            raise TypeError(f"tool {self.name!r}: blocking=True is for sync functions; an async one already waits")
        self.blocking = blocking
        self.context_name = context_parameter(func)
        #: Whether arguments are validated without conversion (pydantic's strict mode on the typed path).
        self.strict = strict
        validate = validator
        if validator is not None:
            input_schema = validator.schema
        elif input_schema is None:
            try:
                if not strict:
                    raise NeedsPydantic("lax validation (strict=False)")
                input_schema = infer_input_schema(func, skip=self.context_name)
            except NeedsPydantic as reason:
                typed = load_typed(f"tool {self.name!r}", reason)
                validate = typed.Arguments(func, self.name, self.context_name, strict, text_descriptions=True)
                input_schema = validate.schema
        #: The result body of a returned value with structured output (see :mod:`shipcode_mcp.typed`), or None.
        self.structured = structured
        if structured is not None:
            output_schema = structured.output_schema
        elif output_schema is None and (
            structured_output or (structured_output is None and needs_structured_output(func))
        ):
            typed = load_typed(f"tool {self.name!r}", "structured output")
            self.structured = typed.StructuredResult.of(func, self.name, structured_output)
            if self.structured is not None:
                output_schema = self.structured.output_schema
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.annotations = annotations
        self.validate = compile_validator(self.input_schema) if validate is None else validate
        #: ``validate`` in the form cheapest to call: a flat shape's bound ``check`` method,
        #: which the interpreter calls inline (the instance is called through ``__call__`` from C).
        self.check_arguments = self.validate.check if type(self.validate) is FlatShape else self.validate
        self.check_output = None
        if output_schema is not None and self.structured is None:
            self.check_output = compile_output_check(output_schema)
        #: True when a call is just ``func(**arguments)`` then :func:`tool_result`: callers
        #: may then call ``func`` themselves (and :meth:`failed` if it raises).
        self.plain = (
            not self.is_async
            and not blocking
            and self.context_name is None
            and self.check_output is None
            and self.structured is None
            and self.task is None
        )
        #: Whether calls are handed to the session instead of answered at once.
        self.deferred = self.is_async or blocking or self.context_name is not None

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
        if self.icons is not None:
            entry["icons"] = self.icons
        return entry

    def call(self, arguments: dict[str, Any], params: dict[str, Any] | None) -> bytes | Deferred:
        """The result body of a call with validated arguments, or the deferred work giving it.

        A :class:`ToolError` shows its message; any other exception (``SystemExit`` included:
        a tool cannot stop the server) shows ``Tool <name> failed`` and logs the traceback, as
        does a tool with an output schema that returns anything but a dict matching it.
        """
        if not self.deferred:
            try:
                return self.encode(self.func(**arguments))
            except HANDLER_FAULTS as error:
                return self.failed(error)
        takes_context = self.context_name is not None
        token = progress_token(params) if takes_context else None
        meta = request_meta(params) if takes_context else None
        if self.is_async:
            return Deferred(self.run_async, ASYNC, token, True, (arguments,), takes_context, meta)
        return Deferred(self.run, THREAD if self.blocking else INLINE, token, False, (arguments,), takes_context, meta)

    def run(self, arguments: dict[str, Any], ctx: Context | None = None) -> bytes:
        """The result body of a deferred call of a sync function (it takes ``ctx`` if it asks for one)."""
        context_name = self.context_name
        try:
            kwargs = arguments if context_name is None else {**arguments, context_name: ctx}
            return self.encode(self.func(**kwargs))
        except HANDLER_FAULTS as error:
            return self.failed(error)

    async def run_async(self, arguments: dict[str, Any], ctx: Context | None = None) -> bytes:
        """The result body of a call of an ``async def`` function (it takes ``ctx`` if it asks for one)."""
        context_name = self.context_name
        try:
            kwargs = arguments if context_name is None else {**arguments, context_name: ctx}
            return self.encode(await self.func(**kwargs))
        except HANDLER_FAULTS as error:
            return self.failed(error)

    def encode(self, value: object) -> bytes:
        """The result body of a value the function returned (checked against the output schema)."""
        if self.structured is not None:
            return self.structured(value)
        if self.check_output is None:
            return tool_result(value)
        self.check_output(value)
        return tool_result(value, True)

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

    The function may be ``async def`` and may take a ``Context``. Whatever it raises is a
    JSON-RPC error: an :class:`~shipcode_mcp.protocol.RpcError` as given, anything else
    -32603 ``Internal error``.
    """

    __slots__ = (
        "uri",
        "name",
        "title",
        "description",
        "mime_type",
        "read",
        "is_async",
        "context_name",
        "deferred",
        "icons",
    )

    def __init__(
        self,
        uri: str,
        read: Callable[..., Any],
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> None:
        self.uri = uri
        self.read = read
        self.icons = icons
        self.is_async = is_coroutine_function(read)
        self.context_name = context_parameter(read)
        #: Whether reads are handed to the session instead of answered at once.
        self.deferred = self.is_async or self.context_name is not None
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
        if self.icons is not None:
            entry["icons"] = self.icons
        return entry

    def answer(self, params: dict[str, Any] | None, uri: str | None = None, values: dict[str, str] | None = None):
        """The ``resources/read`` result body, or the deferred work giving it.

        ``values`` are keyword arguments for the function (a template's matched parts) and
        ``uri`` the uri read (default: this resource's).
        """
        read = self.read
        uri = self.uri if uri is None else uri
        if not self.deferred:
            return self.body(uri, read() if values is None else read(**values))
        kwargs = {} if values is None else values
        context_name = self.context_name
        if self.is_async:

            async def run_async(ctx: Context) -> bytes:
                return self.body(uri, await read(**(kwargs if context_name is None else {**kwargs, context_name: ctx})))

            return Deferred(run_async, ASYNC, progress_token(params))

        def run(ctx: Context) -> bytes:
            return self.body(uri, read(**{**kwargs, context_name: ctx}))

        return Deferred(run, INLINE, progress_token(params))

    def body(self, uri: str, data: object) -> bytes:
        """The result body holding what the function read: ``text`` or base64 ``blob``.

        Compiled twin, for a ``str`` or ``bytes``: ``_emit_contents`` in ``pyx/fastpath.pxi``.
        """
        entry: dict[str, Any] = {"uri": uri, "mimeType": self.mime_type}
        if isinstance(data, str):
            entry["text"] = data
        elif isinstance(data, (bytes, bytearray, memoryview)):
            import base64

            entry["blob"] = base64.b64encode(data).decode("ascii")
        else:
            raise TypeError(f"resource {uri} read {type(data).__name__}, not str or bytes")
        return b'{"contents":[' + dumps(entry) + b"]}"

    @property
    def direct(self) -> bool:
        """Whether a read is one call of the function at once, its result written by :meth:`body`:
        an engine may then make the call and write the result itself."""
        kind = type(self)
        return not self.deferred and kind.answer is Resource.answer and kind.body is Resource.body
