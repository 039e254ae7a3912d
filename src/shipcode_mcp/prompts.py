"""Prompts: templates of messages that a client lists and fills in (``prompts/*``).

A prompt is a function whose parameters are its arguments, strings on the wire. It returns
a ``str`` (one user message with that text), a message dict (``{"role", "content"}``), a
content block dict (has a ``type``; becomes a user message with that content), or a list of
any of these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any  # read at run time: a hint of Any

from .deferred import ASYNC, INLINE, Deferred
from .handlers import context_parameter, docstring, is_coroutine_function, progress_token
from .jsontext import dumps
from .protocol import INVALID_PARAMS, RpcError
from .schema import parameter_defaults, parameter_names

_NO_ARGUMENTS: dict[str, Any] = {}


def _argument_description(name: str, hint: Any) -> str | None:
    """The description of a string argument (``Annotated[str, "text"]``); TypeError for other types."""
    import types
    import typing

    description = None
    if typing.get_origin(hint) is typing.Annotated:
        args = typing.get_args(hint)
        hint = args[0]
        description = next((item for item in args[1:] if isinstance(item, str)), None)
    if hint is str or hint is Any:
        return description
    origin = typing.get_origin(hint)
    if (origin is typing.Union or origin is types.UnionType) and set(typing.get_args(hint)) == {str, type(None)}:
        return description
    raise TypeError(f"prompt argument {name!r}: arguments are strings; annotate it str or str | None, not {hint!r}")


class Prompt:
    """One prompt: its listing and the function that writes its messages."""

    __slots__ = (
        "name",
        "title",
        "description",
        "func",
        "arguments",
        "names",
        "required",
        "is_async",
        "context_name",
        "icons",
    )

    def __init__(
        self,
        func: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> None:
        import typing

        self.func = func
        self.icons = icons
        self.name = name or func.__name__
        self.title = title
        self.description = docstring(func) if description is None else description
        self.is_async = is_coroutine_function(func)
        self.context_name = context_parameter(func)
        parameters = [name for name in parameter_names(func) if name != self.context_name]
        hints = typing.get_type_hints(func, include_extras=True) if func.__annotations__ else {}
        defaults = parameter_defaults(func)
        self.arguments: list[dict[str, Any]] = []
        for parameter in parameters:
            entry: dict[str, Any] = {"name": parameter}
            description = _argument_description(parameter, hints[parameter]) if parameter in hints else None
            if description is not None:
                entry["description"] = description
            entry["required"] = parameter not in defaults
            self.arguments.append(entry)
        self.names = frozenset(entry["name"] for entry in self.arguments)
        self.required = frozenset(entry["name"] for entry in self.arguments if entry["required"])

    def listing(self) -> dict[str, Any]:
        """The prompt's entry in ``prompts/list``."""
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        entry["description"] = self.description
        if self.arguments:
            entry["arguments"] = self.arguments
        if self.icons is not None:
            entry["icons"] = self.icons
        return entry

    def get(self, params: dict[str, Any]) -> bytes | Deferred:
        """The ``prompts/get`` result body for these params, or the deferred work giving it."""
        arguments = params.get("arguments", _NO_ARGUMENTS)
        if (
            type(arguments) is not dict
            or not self.required <= arguments.keys()
            or any(type(value) is not str for value in arguments.values())
            or not arguments.keys() <= self.names
        ):
            raise RpcError(INVALID_PARAMS, f"Invalid arguments for {self.name}")
        func = self.func
        context_name = self.context_name
        if self.is_async:

            async def run_async(ctx: Any) -> bytes:
                kwargs = arguments if context_name is None else {**arguments, context_name: ctx}
                return self.body(await func(**kwargs))

            return Deferred(run_async, ASYNC, progress_token(params))
        if context_name is not None:

            def run(ctx: Any) -> bytes:
                return self.body(func(**arguments, **{context_name: ctx}))

            return Deferred(run, INLINE, progress_token(params))
        return self.body(func(**arguments))

    def body(self, value: object) -> bytes:
        """The result body of what the function returned."""
        result: dict[str, Any] = {}
        if self.description:
            result["description"] = self.description
        result["messages"] = [_message(item) for item in (value if type(value) is list else [value])]
        return dumps(result)


def _message(item: object) -> dict[str, Any]:
    if type(item) is str:
        return {"role": "user", "content": {"type": "text", "text": item}}
    if type(item) is dict:
        if "role" in item:
            return item
        if "type" in item:
            return {"role": "user", "content": item}
    raise TypeError(f"a prompt returned {type(item).__name__} {item!r:.60}, not a str, a message or a content block")
