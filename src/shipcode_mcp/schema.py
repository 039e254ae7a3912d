"""Tool input schemas: inference from type hints, and argument validators.

Inference maps ``str``/``int``/``float``/``bool``/``None`` to JSON Schema types, ``X | None``
and ``Optional[X]`` to a nullable type, ``list[X]`` to an array, ``dict[str, X]`` to an object,
``Literal[...]`` to an enum, ``Annotated[X, "text"]`` to X's schema described by the text; a
parameter with a default is not required (a JSON-representable default is shown as
``default``; a default of ``None`` also admits ``null``, as ``Optional`` would). Every inferred
schema closes the object with ``"additionalProperties": false``.

Validation follows the schema with two rules of the server contract on top: nothing is
converted (``true`` is not a number, ``"2"`` is not a number, ``2.0`` is not an integer), and a
number that overflows a double (``1e400``) never satisfies any schema. Schemas whose properties
are all plain scalar types (the common case, and the default catalogue) are checked by a small
loop kept in :class:`FlatShape`; any other schema is checked by ``jsonschema`` with JSON Schema
2020-12 semantics (the dialect of MCP 2025-11-25 on; a schema's own ``$schema`` wins).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from math import isfinite

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The one table of flat shapes: each JSON Schema scalar type -> the kinds of JSON value it
#: admits. ``FlatShape`` checks parsed values with it; the compiled engine reads it at start-up
#: to check values straight from the input bytes.
FLAT_TYPE_ADMITS: dict[str, tuple[str, ...]] = {
    "string": ("string",),
    "integer": ("integer",),
    "number": ("integer", "float"),  # floats only when finite: see FlatShape.__call__
    "boolean": ("boolean",),
    "null": ("null",),
}
#: Each JSON value kind -> the Python type a parsed value of that kind has.
VALUE_KIND_TYPES: dict[str, type] = {"string": str, "integer": int, "float": float, "boolean": bool, "null": type(None)}
_SCALAR_TYPES: dict[str, frozenset[type]] = {
    kind: frozenset(VALUE_KIND_TYPES[value_kind] for value_kind in admits) for kind, admits in FLAT_TYPE_ADMITS.items()
}
# Property keywords that do not change what is valid.
_ANNOTATION_KEYWORDS = frozenset({"type", "title", "description", "default", "examples"})

_HINT_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


class InvalidArguments(ValueError):
    """The arguments of a tool call do not match the tool's input schema.

    Raised bare by the checks of this module (the tool answers ``Invalid arguments for <tool>``);
    with one argument, the whole text of the ``isError`` result (see :mod:`shipcode_mcp.typed`).
    """


class NeedsPydantic(TypeError):
    """A hint or default that this module has no schema for, but pydantic may: a class, a
    ``Field``, a constraint (see :mod:`shipcode_mcp.typed`)."""


def is_pydantic_metadata(item: object) -> bool:
    """Whether ``item`` (an ``Annotated`` extra or a default) is a pydantic ``Field`` or a
    constraint only pydantic reads (``annotated_types.Ge(1)``, ``pydantic.StringConstraints``)."""
    module = type(item).__module__
    return module.startswith(("pydantic.", "annotated_types")) or module == "pydantic"


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
    if origin is typing.Annotated:
        if any(is_pydantic_metadata(item) for item in args[1:]):
            raise NeedsPydantic(f"the type hint {hint!r} has constraints or a Field")
        schema = schema_for_hint(args[0])
        descriptions = [item for item in args[1:] if isinstance(item, str)]
        if descriptions:
            schema["description"] = descriptions[0]
        return schema
    raise NeedsPydantic(f"cannot infer a JSON Schema from the type hint {hint!r}")


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` widened to accept ``null`` (a parameter whose default is ``None``)."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        schema["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        schema["type"] = [*kind, "null"]
    elif "anyOf" in schema and {"type": "null"} not in schema["anyOf"]:
        schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
    elif "enum" in schema and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema


def parameter_names(func: Callable[..., Any]) -> tuple[str, ...]:
    """The names a caller passes arguments by: ``self`` of a bound method left out.

    A positional-only parameter cannot take an argument by name: TypeError.
    """
    code = func.__code__
    bound = 1 if getattr(func, "__self__", None) is not None and hasattr(func, "__func__") else 0
    if code.co_posonlyargcount > bound:
        raise TypeError(f"{func.__name__}: positional-only parameters cannot take arguments by name")
    return code.co_varnames[bound : code.co_argcount + code.co_kwonlyargcount]


def positional_count(func: Callable[..., Any], names: tuple[str, ...]) -> int:
    """How many of ``names``, from the first, ``func`` also takes by position, in that order.

    0 when ``func`` is not a plain function or method (its parameters are not known).
    """
    if not hasattr(func, "__code__") or not hasattr(func, "__defaults__"):
        return 0
    code = func.__code__
    bound = 1 if getattr(func, "__self__", None) is not None and hasattr(func, "__func__") else 0
    count = 0
    for name, parameter in zip(names, code.co_varnames[bound : code.co_argcount], strict=False):
        if name != parameter:
            break
        count += 1
    return count


def parameter_defaults(func: Callable[..., Any]) -> dict[str, Any]:
    """The default value of each parameter that has one."""
    code = func.__code__
    defaults = dict(func.__kwdefaults__ or {})
    positional_defaults = func.__defaults__ or ()
    if positional_defaults:
        first = code.co_argcount - len(positional_defaults)
        defaults.update(zip(code.co_varnames[first : code.co_argcount], positional_defaults, strict=True))
    return defaults


def infer_input_schema(func: Callable[..., Any], skip: str | None = None) -> dict[str, Any]:
    """Build the object schema of a function's keyword parameters from its type hints.

    ``skip`` names a parameter that is not an argument (the ``Context`` one). A hint or default
    only pydantic understands raises :class:`NeedsPydantic`.
    """
    parameters = parameter_names(func)
    hints = {name: hint for name, hint in getattr(func, "__annotations__", {}).items() if name != skip}
    if any(isinstance(hint, str) for hint in hints.values()):
        import typing

        hints = typing.get_type_hints(func, include_extras=True)
        hints.pop(skip, None)
    defaults = parameter_defaults(func)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name in parameters:
        if name == skip:
            continue
        prop = schema_for_hint(hints[name]) if name in hints else {}
        if name in defaults:
            default = defaults[name]
            if is_pydantic_metadata(default):
                raise NeedsPydantic(f"the default of {name!r} is a pydantic Field")
            if default is None:
                prop = _nullable(prop)
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

    __slots__ = ("fields", "_types", "_count", "_required")

    def __init__(self, fields: tuple[tuple[str, str, bool], ...]) -> None:
        self.fields = fields
        self._types = {name: _SCALAR_TYPES[kind] for name, kind, _ in fields}
        self._count = len(fields)
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
            if type(kind) is not str or kind not in _SCALAR_TYPES:
                return None
            fields.append((name, kind, name in required))
        return cls(tuple(fields))

    def check(self, arguments: object) -> dict[str, Any]:
        """The arguments, when they fit the shape; :class:`InvalidArguments` if not."""
        types = self._types
        try:
            for name, value in arguments.items():  # of the JSON values, only an object has items()
                kind = type(value)
                # Only "number" admits floats, and only finite ones.
                if kind not in types[name] or (kind is float and not isfinite(value)):
                    raise InvalidArguments
        except (AttributeError, KeyError):  # not an object; not a field
            raise InvalidArguments from None
        # Every key is a distinct field: when all fields are there, so are the required ones.
        if len(arguments) != self._count:
            for name in self._required:
                if name not in arguments:
                    raise InvalidArguments
        return arguments

    __call__ = check


class _IntegralFloat(float):
    """A float with an integral value (``2.0``) that the schema library must not take for an integer."""

    __slots__ = ()

    def is_integer(self) -> bool:
        return False


def floats(arguments: dict[str, Any]) -> list[tuple[Any, Any, float]]:
    """``(container, key, value)`` of each float in the arguments, walked iteratively (they may
    nest 1000 levels deep)."""
    found = []
    stack: list[Any] = [arguments]
    while stack:
        container = stack.pop()
        for key, value in container.items() if type(container) is dict else enumerate(container):
            kind = type(value)
            if kind is float:
                found.append((container, key, value))
            elif kind is dict or kind is list:
                stack.append(value)
    return found


def _mark_integral_floats(arguments: dict[str, Any]) -> list[tuple[Any, Any, float]]:
    """Prepare the arguments for a schema check.

    A number that overflows a double makes them invalid. Floats with an integral value are
    replaced in place by :class:`_IntegralFloat`, so that ``2.0`` fails ``"type": "integer"``
    as it does for flat shapes; the spots are returned for :func:`_restore`.
    """
    found = []
    for spot in floats(arguments):
        value = spot[2]
        if not math.isfinite(value):
            raise InvalidArguments
        if value.is_integer():
            found.append(spot)
    for container, key, value in found:
        container[key] = _IntegralFloat(value)
    return found


def _restore(marked: list[tuple[Any, Any, float]]) -> None:
    for container, key, value in marked:
        container[key] = value


def compile_validator(schema: dict[str, Any]) -> Callable[[object], dict[str, Any]]:
    """A callable that returns the arguments when valid and raises InvalidArguments if not."""
    flat = FlatShape.from_schema(schema)
    if flat is not None:
        return flat
    is_valid = schema_validator(schema).is_valid

    def validate(arguments: object) -> dict[str, Any]:
        if type(arguments) is not dict:
            raise InvalidArguments
        marked = _mark_integral_floats(arguments)
        try:
            valid = is_valid(arguments)
        finally:
            if marked:
                _restore(marked)
        if not valid:
            raise InvalidArguments
        return arguments

    return validate


def schema_validator(schema: dict[str, Any]) -> Any:
    """A ``jsonschema`` validator of ``schema`` (2020-12 unless it names its dialect); a schema
    that is not valid in its dialect raises ``jsonschema.SchemaError`` at registration."""
    from jsonschema import validators

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def compile_output_check(schema: dict[str, Any]) -> Callable[[object], None]:
    """A callable that raises ValueError unless a tool's return value is a dict matching ``schema``."""
    validator = schema_validator(schema)

    def check_output(value: object) -> None:
        if type(value) is not dict:
            raise ValueError(f"a tool with an output schema returned {type(value).__name__}, not a dict")
        error = next(validator.iter_errors(value), None)
        if error is not None:
            raise ValueError(f"the result does not match the output schema: {error.message}")

    return check_output


def header_parameters(schema: Any, path: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...]]]:
    """``(header name, property path)`` of each property with ``x-mcp-header``, via ``properties`` only."""
    found = []
    properties = schema.get("properties") if type(schema) is dict else None
    if type(properties) is dict:
        for key, sub in properties.items():
            if type(sub) is dict:
                header = sub.get("x-mcp-header")
                if type(header) is str and header:
                    found.append((header, (*path, key)))
                found.extend(header_parameters(sub, (*path, key)))
    return found
