"""Argument and result types through pydantic (v2): imported only by a tool that needs it.

- :class:`Arguments`: a tool's parameters as a pydantic model built from its signature (models,
  ``TypedDict``, dataclasses, ``Enum``, dates and times, ``UUID``, ``Decimal``, ``tuple``, unions,
  nested containers, ``Annotated[T, Field(...)]`` and ``Field(...)`` defaults): the input schema
  is the model's JSON Schema, and a call's arguments reach the function converted (a model
  instance, an ``Enum`` member, a ``date``). ``strict=True`` validates in pydantic's strict mode
  (JSON semantics: a ``date`` from its ISO text, never ``"2"`` for an ``int``; a number that
  overflows a double is refused); ``strict=False`` in its lax mode, as the official SDK does.
- :class:`StructuredResult`: ``structuredContent`` and ``outputSchema`` from a return annotation,
  as the official SDK derives them (models, ``TypedDict``, dataclasses and other annotated
  classes, ``dict[str, T]`` as they are; anything else wrapped as ``{"result": ...}``).

Invalid arguments answer ``Invalid arguments for <tool>: <where>: <pydantic's message>``, one
``<where>: <message>`` per error joined by ``"; "`` (at most :data:`MAX_REASONS`), ``<where>`` the
dotted path of the value (``items.0.qty``), left out for the arguments as a whole.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from math import isfinite
from types import GenericAlias

import orjson
import pydantic
import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, WithJsonSchema, create_model
from pydantic.json_schema import GenerateJsonSchema

from .jsontext import dumps
from .results import RESULT_CLASS, declares_content, text_result, tool_result
from .schema import InvalidArguments, floats, parameter_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: At most this many of pydantic's errors are named in an ``Invalid arguments`` result.
MAX_REASONS = 5
_BUILD_ERRORS = (pydantic.PydanticUserError, pydantic_core.SchemaError, TypeError, ValueError, NameError)
_PLAIN_RESULTS = (str, int, float, bool, type(None))


def first_line(error: BaseException) -> str:
    """The first line of an error's text (pydantic's run on with advice and links)."""
    return str(error).strip().partition("\n")[0]


def _culprit(fields: dict[str, Any], names: list[tuple[str, str]]) -> str | None:
    """``"cannot infer a JSON Schema from the type hint of 'p' (hint)"`` for the first parameter
    pydantic has no schema for, or None."""
    for name, field in names:
        hint = fields[field][0] if type(fields[field]) is tuple else fields[field]
        try:
            TypeAdapter(hint).json_schema()
        except _BUILD_ERRORS:
            shown = typing.get_args(hint)[0]
            return f"cannot infer a JSON Schema from the type hint of {name!r} ({shown!r})"
    return None


def described_by_text(hint: Any, default: Any) -> str | None:
    """The first text of an ``Annotated[T, "text", ...]`` hint, unless a ``Field`` there or as the
    default has a description of its own."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    texts = [item for item in hint.__metadata__ if type(item) is str]
    if not texts or any(getattr(item, "description", None) for item in (*hint.__metadata__, default)):
        return None
    return texts[0]


def reasons(found: list[Any]) -> str:
    """pydantic's errors, trimmed: ``where: message`` each, without the input values or links."""
    parts = [
        ".".join(str(step) for step in item["loc"]) + ": " + item["msg"] if item["loc"] else item["msg"]
        for item in found[:MAX_REASONS]
    ]
    if len(found) > MAX_REASONS:
        parts.append(f"and {len(found) - MAX_REASONS} more")
    return "; ".join(parts)


class Arguments:
    """A tool's arguments as a pydantic model: ``schema`` to list, and a check (call the instance)
    returning the keyword arguments of the function, converted; :class:`InvalidArguments`
    carrying the whole ``isError`` text if they do not validate.

    ``skip`` names a parameter that is not an argument (the ``Context`` one). ``closed`` refuses
    arguments the function does not take (``"additionalProperties": false`` at the schema's root;
    nested types keep their own rules); otherwise they are ignored, as the official SDK does.
    ``json_strings`` reads a string given for a parameter not hinted ``str`` as JSON first when it
    holds an array or an object, as the official SDK does. ``text_descriptions`` makes the text of
    ``Annotated[T, "text"]`` the parameter's description, as the plain inference does, unless a
    ``Field`` describes it (pydantic alone, and so the SDK, ignores the text).

    A parameter named like a method of pydantic's ``BaseModel`` (``json``, ``copy``) becomes the
    field ``field_<name>`` with that alias; one without a hint is ``Any``, listed ``{"title": <name>,
    "type": "string"}``: open, lax and without ``text_descriptions``, the schema is the official
    SDK's for the same function.
    """

    __slots__ = (
        "model",
        "schema",
        "strict",
        "closed",
        "names",
        "accepted",
        "tool_name",
        "json_fields",
        "renamed",
        "_validator",
    )

    def __init__(
        self,
        func: Callable[..., Any],
        tool_name: str,
        skip: str | None = None,
        strict: bool = True,
        closed: bool = True,
        json_strings: bool = False,
        text_descriptions: bool = False,
    ) -> None:
        self.tool_name = tool_name
        self.strict = strict
        self.closed = closed
        taken = parameter_names(func)
        try:
            signature = inspect.signature(func, eval_str=True)
        except NameError as error:
            raise TypeError(f"tool {tool_name!r}: a type hint names something unknown: {error}") from None
        fields: dict[str, Any] = {}
        names: list[tuple[str, str]] = []  # (parameter, field)
        for parameter in signature.parameters.values():
            name = parameter.name
            if name == skip or name not in taken:
                continue
            if name.startswith("_"):
                raise TypeError(f"tool {tool_name!r}: parameter {name!r} starts with '_', which pydantic keeps private")
            hint = parameter.annotation
            extras: list[Any] = []
            if hint is inspect.Parameter.empty:
                hint = typing.Any
                extras.append(WithJsonSchema({"title": name, "type": "string"}))
            field_name, options = name, {}
            if callable(getattr(BaseModel, name, None)):
                field_name, options = f"field_{name}", {"alias": name}
            default = parameter.default
            text = described_by_text(hint, default) if text_descriptions else None
            if text is not None:
                options["description"] = text
            annotated = typing.Annotated[(hint, *extras, Field(**options))]
            fields[field_name] = annotated if default is inspect.Parameter.empty else (annotated, default)
            names.append((name, field_name))
        #: ``(parameter, field)`` of each argument; the names a call may give.
        self.names = tuple(names)
        self.accepted = frozenset(name for name, _ in names)
        #: Whether a field has a name other than its parameter's (``field_json``).
        self.renamed = any(name != field for name, field in names)
        try:
            self.model = create_model(f"{func.__name__}Arguments", **fields)
            schema: dict[str, Any] = self.model.model_json_schema(by_alias=True)
            self._validator = self.model.__pydantic_validator__  # what model_validate calls, without the detour
        except _BUILD_ERRORS as error:
            raise TypeError(f"tool {tool_name!r}: {_culprit(fields, names) or first_line(error)}") from None
        if closed:  # where pydantic would put it, keys sorted
            schema = dict(sorted({**schema, "additionalProperties": False}.items()))
        self.schema = schema
        #: The parameters whose string values are read as JSON first (``json_strings``).
        self.json_fields = frozenset(
            name for name, field in names if json_strings and self.model.model_fields[field].annotation is not str
        )

    def invalid(self, errors: list[Any]) -> InvalidArguments:
        return InvalidArguments(f"Invalid arguments for {self.tool_name}: {reasons(errors)}")

    def __call__(self, arguments: object) -> dict[str, Any]:
        if type(arguments) is not dict:
            raise self.invalid([{"loc": (), "msg": "Input should be an object"}])
        extra = () if not self.closed or self.accepted.issuperset(arguments) else self.extra(arguments)
        if self.json_fields:
            arguments = self.read_json_strings(arguments)
        try:
            if self.strict:
                # pydantic's strict mode reads JSON text: a date from its ISO text, an Enum from its value.
                text = dumps(arguments)
                # A number that overflowed a double (inf) is written null: only then look for one.
                if b"null" in text and not all(isfinite(value) for _, _, value in floats(arguments)):
                    raise self.invalid([{"loc": (), "msg": "A number overflows a double"}])
                instance = self._validator.validate_json(text, strict=True)
            else:
                instance = self._validator.validate_python(arguments)
        except pydantic.ValidationError as error:
            raise self.invalid([*error.errors(include_url=False, include_input=False), *extra]) from None
        if extra:
            raise self.invalid(list(extra))
        if not self.renamed:
            return instance.__dict__  # the fields' values by name: a fresh dict per call
        return {name: getattr(instance, field) for name, field in self.names}

    def extra(self, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        """pydantic's error for each argument the function does not take, in the order given."""
        return [
            {"loc": (key,), "msg": "Extra inputs are not permitted"} for key in arguments if key not in self.accepted
        ]

    def read_json_strings(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments with each string of a ``json_fields`` parameter that holds a JSON array or
        object replaced by it."""
        read = dict(arguments)
        for name in self.json_fields.intersection(arguments):
            value = arguments[name]
            if type(value) is str:
                try:
                    parsed = orjson.loads(value)
                except orjson.JSONDecodeError:
                    continue
                if (
                    type(parsed) is dict or type(parsed) is list or parsed is None
                ):  # as the SDK: not a str, number or bool
                    read[name] = parsed
        return read


def _class_model(cls: type, hints: dict[str, Any]) -> type[BaseModel]:
    """A model with the fields of an annotated class (a dataclass, say), read from its attributes."""
    fields: dict[str, Any] = {}
    for name, hint in hints.items():
        if not name.startswith("_"):
            default = getattr(cls, name, inspect.Parameter.empty)
            fields[name] = hint if default is inspect.Parameter.empty else (hint, default)
    return create_model(cls.__name__, __config__=ConfigDict(from_attributes=True), **fields)


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema whose root is a ``$ref`` (a model that refers to itself) with the definition at its root:
    ``outputSchema`` must be an object schema."""
    ref = schema.get("$ref")
    if type(ref) is not str or not ref.startswith("#/$defs/"):
        return schema
    rest = {key: value for key, value in schema.items() if key != "$ref"}
    return {**schema["$defs"][ref.removeprefix("#/$defs/")], **rest}


class _Warnings(GenerateJsonSchema):
    """A schema generator for which a part without JSON Schema is an error, not a warning."""

    def emit_warning(self, kind: Any, detail: str) -> None:
        raise ValueError(f"{kind}: {detail}")


class StructuredResult:
    """A tool's structured output: ``output_schema`` to list, and the result body of a returned
    value (call the instance): the value validated against the annotation (pydantic's lax mode,
    as the official SDK does: the function's own value), ``structuredContent`` its JSON dump by
    alias, and one text block: a ``str``, number, ``bool`` or ``None`` as an unstructured tool
    shows it, anything else the compact JSON of the structured content (unwrapped).

    A value that does not fit raises ``ValueError`` (the call is ``Tool <name> failed``); a
    ``CallToolResult`` of the official SDK is the result as it is.
    """

    __slots__ = ("adapter", "wrap", "output_schema")

    def __init__(self, adapter: TypeAdapter[Any], wrap: bool) -> None:
        self.adapter = adapter
        #: Whether the value is wrapped as ``{"result": value}``.
        self.wrap = wrap
        self.output_schema: dict[str, Any] = _inline_root(adapter.json_schema(schema_generator=_Warnings))

    @classmethod
    def of(cls, func: Callable[..., Any], tool_name: str, structured_output: bool | None) -> StructuredResult | None:
        """The structured output of ``func`` from its return annotation, or None.

        ``structured_output=None`` decides as the official SDK does: on unless the function has
        no return annotation, declares content blocks, or returns a type without a JSON Schema;
        ``True`` makes each of those a ``TypeError``; ``False`` is always None.
        """
        if structured_output is False:
            return None
        try:
            hint = typing.get_type_hints(func, include_extras=True).get("return", inspect.Parameter.empty)
        except NameError as error:
            raise TypeError(f"tool {tool_name!r}: its return annotation names something unknown: {error}") from None
        if hint is inspect.Parameter.empty or (structured_output is None and declares_content(hint)):
            if structured_output:
                raise TypeError(f"tool {tool_name!r}: structured output needs a return annotation of data")
            return None
        bare = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
        try:
            model, wrap = _output_model(hint, bare, func.__name__)
            if model is not None:
                return cls(TypeAdapter(model), wrap)
        except _BUILD_ERRORS as error:
            if structured_output:
                raise TypeError(
                    f"tool {tool_name!r}: no JSON Schema for its return type: {first_line(error)}"
                ) from None
            return None
        if structured_output:
            raise TypeError(f"tool {tool_name!r}: its return type {bare!r} has no fields for structured output")
        return None

    def __call__(self, value: object) -> bytes:
        if type(value).__name__ == RESULT_CLASS and hasattr(value, "model_dump"):
            return tool_result(value)  # a whole result, as it is
        adapter = self.adapter
        try:
            checked = adapter.validate_python({"result": value} if self.wrap else value, by_alias=True, by_name=True)
        except pydantic.ValidationError as error:
            found = error.errors(include_url=False, include_input=False)
            raise ValueError(f"the result does not match the output schema: {reasons(found)}") from None
        if isinstance(checked, BaseModel):  # its own dump: a subclass keeps its fields
            structured = checked.model_dump(mode="json", by_alias=True)
        else:
            structured = adapter.dump_python(checked, mode="json", by_alias=True)
        return self.content(value, structured)[:-1] + b',"structuredContent":' + dumps(structured) + b"}"

    def content(self, value: object, structured: Any) -> bytes:
        """The result body before ``structuredContent`` is added: its text block (a subclass may choose other
        content, a framework's own rules)."""
        if type(value) in _PLAIN_RESULTS:
            return tool_result(value)
        return text_result(dumps(structured["result"] if self.wrap else structured).decode())


def _output_model(hint: Any, bare: Any, func_name: str) -> tuple[Any, bool]:
    """What a return value is validated against, and whether it is wrapped as ``{"result": value}``."""
    if isinstance(bare, type) and not isinstance(bare, GenericAlias):
        if issubclass(bare, BaseModel) or typing.is_typeddict(bare):
            return bare, False
        if bare.__name__ == RESULT_CLASS and hasattr(bare, "model_dump"):
            return None, False  # returned as it is
        if bare not in (str, int, float, bool, bytes, type(None)):
            hints = typing.get_type_hints(bare)
            return (_class_model(bare, hints), False) if hints else (None, False)
    elif typing.get_origin(bare) is dict and typing.get_args(bare)[:1] == (str,):
        return typing.Annotated[bare, Field(title=f"{func_name}DictOutput")], False
    return create_model(f"{func_name}Output", result=hint), True
