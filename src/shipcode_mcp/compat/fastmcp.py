"""The ``fastmcp`` package's ``FastMCP`` (2.x and 4.x) on shipcode-mcp.

An unchanged app's ``from fastmcp import FastMCP, Context`` (and ``fastmcp.prompts``,
``fastmcp.exceptions``, ``fastmcp.utilities.types`` ...) resolves here under ``shipcode-mcp app.py``.
fastmcp checks a call as pydantic checks a call of the function (unknown arguments refused), lists
schemas without titles and with ``$defs`` inlined, and returns structured output unvalidated. Where
2.x and 4.x answer differently (error texts and codes, ``_meta``, capabilities), the version
installed beside the app decides (4.x when none is).
"""

from __future__ import annotations

import typing

import pydantic
import pydantic_core

from ..errors import ToolError
from ..media import Audio, File, Image
from ..protocol import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RpcError
from ..typed import StructuredResult
from .base import CallArguments, FrameworkServer, ResourceError, content_block, installed_version, is_content
from .base import Context as SdkContext
from .messages import Message

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The fastmcp major version whose answers are given: the installed one's, else 4.
MAJOR = int(installed_version("fastmcp", "4.2.3").split(".", 1)[0])


#: A dict with one of these keys is taken for a schema, whose ``title`` fastmcp drops (a ``properties``
#: mapping with a property named ``type`` too: fastmcp then drops a property named ``title``).
_SCHEMA_KEYS = ("type", "properties", "$ref", "items", "allOf", "oneOf", "anyOf", "required")


def compress(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """A schema as fastmcp lists it: ``title`` dropped where fastmcp drops it, ``$ref`` to ``$defs`` replaced by
    the definition."""
    if isinstance(schema, list):
        return [compress(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if defs is None:
        defs = schema.get("$defs", {})
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
        return compress({**defs[ref[8:]], **{key: value for key, value in schema.items() if key != "$ref"}}, defs)
    untitled = any(key in schema for key in _SCHEMA_KEYS)
    return {
        key: compress(value, defs)
        for key, value in schema.items()
        if key != "$defs" and not (key == "title" and untitled)
    }


class Context(SdkContext):
    """fastmcp's ``Context``: log messages sent as ``{"msg": ..., "extra": ...}``, ``elicit(message,
    response_type=...)``, ``sample(...)`` returning the content, ``read_resource`` as 2.x or 4.x returns it."""

    def log(self, level: str, message: Any, logger_name: str | None = None, extra: Any = None) -> Any:
        return super().log(level, {"msg": message, "extra": extra}, logger_name)

    async def elicit(self, message: str, response_type: Any = None, **options: Any) -> Any:
        return await super().elicit(message, response_type)

    async def sample(self, messages: Any, *, max_tokens: int = 512, **options: Any) -> Any:
        result = await super().sample(messages, max_tokens=max_tokens, **options)
        try:
            from mcp.types import CreateMessageResult
        except ImportError:
            return result["content"]
        return CreateMessageResult.model_validate(result).content

    async def read_resource(self, uri: str) -> Any:
        contents = await super().read_resource(uri)
        return ResourceResult(contents) if MAJOR >= 4 else contents  # 4.x wraps the list


class ResourceResult:
    """What fastmcp 4.x's ``ctx.read_resource`` returns: the ``contents`` read."""

    def __init__(self, contents: list[Any]) -> None:
        self.contents = contents


class ToolResult:
    """fastmcp's own tool result: the ``content`` blocks and the ``structured_content`` a tool chose."""

    def __init__(self, content: Any = None, structured_content: Any = None, meta: Any = None) -> None:
        self.content = content
        self.structured_content = structured_content
        self.meta = meta


def input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema as fastmcp lists it (4.x closes it: ``additionalProperties: false``)."""
    schema = compress(schema)
    schema.pop("additionalProperties", None)
    if MAJOR >= 4:
        schema["additionalProperties"] = False
    return schema


class FastMCP(FrameworkServer):
    """The ``fastmcp`` package's ``FastMCP``: ``FastMCP("name")`` and its decorators (see docs/migrating.md)."""

    API = f"the fastmcp package's FastMCP (fastmcp {MAJOR}.x)"
    DEFAULT_NAME = "FastMCP"
    bare_tool_errors = True
    context_class = Context

    def framework_version(self) -> str:
        return installed_version("fastmcp", "4.2.3")

    def capabilities(self) -> dict[str, Any]:
        if MAJOR >= 4:
            return {
                "logging": {},
                "prompts": {"listChanged": True},
                "resources": {"subscribe": False, "listChanged": True},
                "tools": {"listChanged": True},
            }
        requests = {"prompts": {"get": {}}, "resources": {"read": {}}, "tools": {"call": {}}}
        changed = self.over_http  # 2.x's HTTP app announces every list's changes, its stdio server the tools'
        return {
            "experimental": {},
            "prompts": {"listChanged": changed},
            "resources": {"subscribe": False, "listChanged": changed},
            "tasks": {"cancel": {}, "list": {}, "requests": requests},
            "tools": {"listChanged": True},
        }

    @property
    def no_completion(self) -> Any:
        def method_not_found(params: Any) -> bytes:
            raise RpcError(METHOD_NOT_FOUND, "Method not found", "completion/complete" if MAJOR >= 4 else None)

        return method_not_found

    def arguments_check(self, func: Callable[..., Any], name: str, skip: str | None) -> Any:
        return CallArguments(func, skip, input_schema)

    def structured_output(self, func: Callable[..., Any], name: str, wanted: bool | None, schema: Any) -> Any:
        found = StructuredResult.of(func, name, wanted)
        hint = typing.get_type_hints(func).get("return")
        if found is None and wanted is not False:  # fastmcp structures more than the SDK does
            if hint is dict or (MAJOR < 4 and getattr(hint, "__name__", None) == "CallToolResult"):
                found = StructuredResult(pydantic.TypeAdapter(hint), False)
            elif hint is list and MAJOR < 4:
                found = StructuredResult(pydantic.TypeAdapter(pydantic.create_model("Output", result=list)), True)
        if found is None:
            return None
        schema = found.adapter.json_schema(mode="serialization")  # what the value is written as (a Decimal: text)
        if found.wrap:
            wrapped = {"properties": {"result": compress(schema)["properties"]["result"]}}
            if MAJOR < 4:
                wrapped["description"] = "Generic wrapper for non-object return types."
            found.output_schema = {
                **wrapped,
                "required": ["result"],
                "type": "object",
                "x-fastmcp-wrap-result": True,
            }
        else:
            found.output_schema = compress(schema)
        return found

    def mount(self, server: Any = None, *args: Any, **options: Any) -> None:
        """fastmcp's server composition is not served: refused at load, saying so (docs/migrating.md)."""
        raise NotImplementedError(_NOT_COMPOSED.format("mount"))

    async def import_server(self, server: Any = None, *args: Any, **options: Any) -> None:
        """fastmcp 2.x's static composition: not served either (see :meth:`mount`)."""
        raise NotImplementedError(_NOT_COMPOSED.format("import_server"))

    def tool_error_text(self, name: str, error: BaseException) -> str:
        if MAJOR < 4 and isinstance(error, pydantic.ValidationError):  # 2.x shows pydantic's message alone
            return str(error)
        return f"Error calling tool {name!r}: {error}"

    def unknown_tool_result(self, name: object) -> dict[str, Any]:
        shown = repr(name) if MAJOR >= 4 else name
        return {"content": [{"type": "text", "text": f"Unknown tool: {shown}"}], "isError": True}

    def unknown_resource(self, uri: object) -> RpcError:
        if MAJOR >= 4:
            return RpcError(INVALID_PARAMS, f"Resource not found: {uri!r}", {"uri": uri})
        return RpcError(0, f"Unknown resource: {uri!r}")

    def template_error(self, template: Any, uri: str | None, error: BaseException) -> RpcError:
        if MAJOR >= 4:
            return RpcError(INTERNAL_ERROR, f"Error reading resource {uri!r}: {error}")
        return RpcError(0, f"Error reading resource from template {uri!r}: {error}")

    def context_resource_is_template(self, uri: str) -> bool:
        return False

    def template_check(self, func: Callable[..., Any], skip: str | None) -> Callable[..., dict[str, Any]]:
        if MAJOR < 4:
            return super().template_check(func, skip)
        hints = typing.get_type_hints(func)

        def check(**parts: str) -> dict[str, Any]:  # 4.x calls a number's type on the text
            return {
                name: hints[name](text) if hints.get(name) in (int, float) else text for name, text in parts.items()
            }

        return check

    def unknown_prompt(self, name: object) -> RpcError:
        if MAJOR >= 4:
            return RpcError(INVALID_PARAMS, f"Unknown prompt: {name!r}")
        return RpcError(0, f"Unknown prompt: {name}")

    def prompt_error(self, prompt: Any, text: str) -> RpcError:
        if MAJOR >= 4:
            return RpcError(INVALID_PARAMS, text)
        return RpcError(0, f"Error rendering prompt {prompt.name!r}: {text}")

    def content(self, value: object) -> list[dict[str, Any]]:
        if isinstance(value, (list, tuple)) and not (MAJOR >= 4 and any(map(is_content, value))):
            for item in value:
                if MAJOR < 4 and is_content(item):  # 2.x writes a list as JSON, and has no JSON for these
                    kind = f"fastmcp.utilities.types.{type(item).__name__}"
                    raise ValueError(f"Unable to serialize unknown type: <class '{kind}'>")
            return [] if not value else [{"type": "text", "text": _compact(value)}]
        if value is None or isinstance(value, (str, list, tuple)) or is_content(value):
            return super().content(value)
        return [{"type": "text", "text": _compact(value)}]

    def structured_content(self, tool: Any, value: object) -> Any:
        plain = pydantic_core.to_jsonable_python(value, fallback=str, by_alias=True)
        return {"result": plain} if tool.structured.wrap else plain

    def tool_result(self, tool: Any, value: object) -> dict[str, Any]:
        if isinstance(value, ToolResult):
            found: dict[str, Any] = {"content": [_block(item) for item in _listed(value.content)]}
            if value.structured_content is not None:
                found["structuredContent"] = value.structured_content
            if value.meta is not None:
                found["_meta"] = value.meta
            found["isError"] = False
            return found
        if MAJOR < 4 and type(value).__name__ == "CallToolResult" and tool.structured is not None:
            return {  # 2.x takes it for data
                "content": [{"type": "text", "text": _compact(value)}],
                "structuredContent": self.structured_content(tool, value),
                "isError": False,
            }
        result = super().tool_result(tool, value)
        if MAJOR >= 4 and tool.structured is not None and tool.structured.wrap and "content" in result:
            result["_meta"] = {"fastmcp": {"wrap_result": True}}
        return result

    def tool_listing(self, tool: Any, entry: dict[str, Any]) -> dict[str, Any]:
        if MAJOR >= 4 and "title" not in entry:  # 4.x titles every tool, after its name
            entry = {"name": entry.pop("name"), "title": tool.name.replace("_", " ").title(), **entry}
        return self.meta_listing(tool, entry)

    def meta_listing(self, item: Any, entry: dict[str, Any]) -> dict[str, Any]:
        own = {"tags": sorted(item.tags)}
        entry["_meta"] = {**(item.meta or {}), ("fastmcp" if MAJOR >= 4 else "_fastmcp"): own}
        return entry


_NOT_COMPOSED = (
    "fastmcp's server composition ({}) is not served by shipcode-mcp: register the other server's tools, "
    "resources and prompts on this one (docs/migrating.md, Every difference)"
)


def _compact(value: object) -> str:
    return pydantic_core.to_json(value, fallback=str, by_alias=True).decode()


def _listed(content: Any) -> list[Any]:
    return [] if content is None else content if isinstance(content, list) else [content]


def _block(item: Any) -> Any:
    if isinstance(item, str):
        return {"type": "text", "text": item}
    return content_block(item) if is_content(item) else item


#: The API this module stands in for, as the command line names it.
API = FastMCP.API

__all__ = [
    "API",
    "Audio",
    "Context",
    "FastMCP",
    "File",
    "Image",
    "Message",
    "ResourceError",
    "ToolError",
    "ToolResult",
]
