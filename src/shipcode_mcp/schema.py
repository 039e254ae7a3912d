"""Tool input schemas: inference from type hints, and argument validators.

Inference maps ``str``/``int``/``float``/``bool``/``None`` to JSON Schema types, ``X | None``
and ``Optional[X]`` to a nullable type, ``list[X]`` to an array, ``dict[str, X]`` to an object,
``Literal[...]`` to an enum; a parameter with a default is not required. Every inferred schema
closes the object with ``"additionalProperties": false``.

Validation follows the schema with two rules of the server contract on top: nothing is
converted (``true`` is not a number, ``"2"`` is not a number, ``2.0`` is not an integer), and a
number that overflows a double (``1e400``) never satisfies any schema. Schemas whose properties
are all plain scalar types (the common case, and the default catalogue) are checked by a small
loop kept in :class:`FlatShape`; any other schema is compiled with ``fastjsonschema``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

# JSON Schema scalar type -> test on a parsed JSON value.
_SCALAR_TESTS: dict[str, Callable[[object], bool]] = {
    "string": lambda value: type(value) is str,
    "integer": lambda value: type(value) is int,
    "number": lambda value: type(value) is int or (type(value) is float and math.isfinite(value)),
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
}
# Property keywords that do not change what is valid.
_ANNOTATION_KEYWORDS = frozenset({"type", "title", "description", "default", "examples"})

_HINT_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


class InvalidArguments(ValueError):
    """The arguments of a tool call do not match the tool's input schema."""


def schema_for_hint(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one parameter's type hint (``{}`` when there is none)."""
    if hint is None or hint in _HINT_TYPES:
        return {"type": _HINT_TYPES[type(None) if hint is None else hint]}
    if hint is list:
        return {"type": "array"}
    if hint is dict:
        return {"type": "object"}
    import types
    import typing

    if hint is typing.Any or hint is object:
        return {}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = [schema_for_hint(arg) for arg in args]
        if all(list(option) == ["type"] and isinstance(option["type"], str) for option in options):
            return {"type": [option["type"] for option in options]}
        return {"anyOf": options}
    if origin is list:
        return {"type": "array", "items": schema_for_hint(args[0])} if args else {"type": "array"}
    if origin is dict:
        if len(args) == 2:
            return {"type": "object", "additionalProperties": schema_for_hint(args[1])}
        return {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    raise TypeError(f"cannot infer a JSON Schema from the type hint {hint!r}")


def infer_input_schema(func: Callable[..., Any]) -> dict[str, Any]:
    """Build the object schema of a function's keyword parameters from its type hints."""
    code = func.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    hints = dict(getattr(func, "__annotations__", {}))
    if any(isinstance(hint, str) for hint in hints.values()):
        import typing

        hints = typing.get_type_hints(func)
    defaults = dict(func.__kwdefaults__ or {})
    positional_defaults = func.__defaults__ or ()
    if positional_defaults:
        defaults.update(zip(names[code.co_argcount - len(positional_defaults) :], positional_defaults))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name in names:
        prop = schema_for_hint(hints[name]) if name in hints else {}
        if name in defaults:
            default = defaults[name]
            if default is None or isinstance(default, (str, int, float, bool)):
                prop["default"] = default
        else:
            required.append(name)
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


class FlatShape:
    """A closed object of scalar properties, checked without a schema library.

    ``fields`` lists ``(name, json_type, required)`` in schema order; the compiled engine
    reads it to validate such arguments straight from the input bytes.
    """

    __slots__ = ("fields", "_tests", "_required")

    def __init__(self, fields: tuple[tuple[str, str, bool], ...]) -> None:
        self.fields = fields
        self._tests = {name: _SCALAR_TESTS[kind] for name, kind, _ in fields}
        self._required = tuple(name for name, _, required in fields if required)

    @classmethod
    def from_schema(cls, schema: dict[str, Any]) -> FlatShape | None:
        """The flat shape of a schema, or None when the schema needs a real validator."""
        if set(schema) - {"type", "properties", "required", "additionalProperties", "title", "description"}:
            return None
        if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
            return None
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, dict) or not isinstance(required, list):
            return None
        if any(name not in properties for name in required):
            return None
        fields = []
        for name, prop in properties.items():
            if not isinstance(prop, dict) or set(prop) - _ANNOTATION_KEYWORDS:
                return None
            kind = prop.get("type")
            if kind not in _SCALAR_TESTS:
                return None
            fields.append((name, kind, name in required))
        return cls(tuple(fields))

    def __call__(self, arguments: object) -> dict[str, Any]:
        if type(arguments) is not dict:
            raise InvalidArguments
        tests = self._tests
        for name, value in arguments.items():
            test = tests.get(name)
            if test is None or not test(value):
                raise InvalidArguments
        for name in self._required:
            if name not in arguments:
                raise InvalidArguments
        return arguments


def _has_overflow(value: object) -> bool:
    if type(value) is float:
        return not math.isfinite(value)
    if type(value) is dict:
        return any(_has_overflow(item) for item in value.values())
    if type(value) is list:
        return any(_has_overflow(item) for item in value)
    return False


def compile_validator(schema: dict[str, Any]) -> Callable[[object], dict[str, Any]]:
    """A callable that returns the arguments when valid and raises InvalidArguments if not."""
    flat = FlatShape.from_schema(schema)
    if flat is not None:
        return flat
    import fastjsonschema

    check = fastjsonschema.compile(schema, use_default=False)

    def validate(arguments: object) -> dict[str, Any]:
        if type(arguments) is not dict or _has_overflow(arguments):
            raise InvalidArguments
        try:
            check(arguments)
        except fastjsonschema.JsonSchemaException:
            raise InvalidArguments from None
        return arguments

    return validate
