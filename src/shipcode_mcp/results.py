"""How a tool's return value becomes a ``tools/call`` result body (compact JSON bytes).

- ``str`` -> one text block; ``int``/``float`` -> one text block written as ECMAScript writes
  numbers (``3.0`` -> ``3``); ``bool`` -> ``true``/``false``; ``None`` -> no content.
- a list of content blocks (dicts with a ``type``) -> those blocks as given; any other list
  -> its compact JSON as one text block.
- a ``dict`` -> its compact JSON as one text block, plus ``structuredContent`` when the tool
  declares an output schema.
- an :class:`~shipcode_mcp.media.Image`, ``Audio`` or ``File`` -> its content block; a content object
  of the official SDK (``TextContent``, ``ImageContent``, ``AudioContent``, ``EmbeddedResource``,
  ``ResourceLink``) -> that block, and its ``CallToolResult`` -> that result (its ``resultType`` left
  to the protocol era), each dumped by alias without ``None`` members (no module of the SDK is
  imported: any object with pydantic's ``model_dump`` and one of those class names); a list of
  content blocks, these objects among them -> those blocks.
- any other object with pydantic's ``model_dump`` (a model of the app's) -> the compact JSON of
  its dump as one text block.
- anything else -> :class:`TypeError` (the tool call fails with an ``isError`` result).
"""

from __future__ import annotations

from .jsontext import dumps, number_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: A result body holding one text block is TEXT_HEAD + the JSON string + TEXT_TAIL.
TEXT_HEAD = b'{"content":[{"type":"text","text":'
TEXT_TAIL = b"}]}"
_ERROR_TAIL = b'}],"isError":true}'
#: The result body of an integer: one format, its digits need no escaping.
_INT_RESULT = TEXT_HEAD + b'"%d"' + TEXT_TAIL
EMPTY_CONTENT = b'{"content":[]}'
#: The official SDK's classes of content blocks, and of a whole tool result, by name.
CONTENT_CLASSES = frozenset({"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink"})
RESULT_CLASS = "CallToolResult"


def text_result(text: str) -> bytes:
    """A successful result holding one text block."""
    return TEXT_HEAD + dumps(text) + TEXT_TAIL


def error_result(text: str) -> bytes:
    """A failed tool call (``isError``) holding one text block."""
    return TEXT_HEAD + dumps(text) + _ERROR_TAIL


def tool_result(value: object, structured: bool = False) -> bytes:
    """Encode a tool function's return value as a result body."""
    kind = type(value)
    if kind is str:
        return TEXT_HEAD + dumps(value) + TEXT_TAIL
    if kind is int:
        return _INT_RESULT % value
    if kind is float:
        return TEXT_HEAD + dumps(number_text(value)) + TEXT_TAIL
    if kind is bool:
        return text_result("true" if value else "false")
    if value is None:
        return EMPTY_CONTENT
    if kind is dict:
        body = dumps(value)
        if structured:
            return TEXT_HEAD + dumps(body.decode()) + b'}],"structuredContent":' + body + b"}"
        return TEXT_HEAD + dumps(body.decode()) + TEXT_TAIL
    if kind is list:
        if all(type(block) is dict and "type" in block for block in value):
            return b'{"content":' + dumps(value) + b"}"
        if value and all(is_content(item) or type(item) is dict and "type" in item for item in value):
            return b'{"content":' + dumps([content_block(item) for item in value]) + b"}"
        return text_result(dumps(value).decode())
    if is_content(value):
        return b'{"content":[' + dumps(content_block(value)) + b"]}"
    if hasattr(value, "model_dump"):
        if kind.__name__ == RESULT_CLASS:
            from .media import jsonable

            whole = jsonable(value)
            whole.pop("resultType", None)  # the protocol era's to say (the SDK's 2.x models carry one)
            return dumps(whole)
        return text_result(dumps(value.model_dump(mode="json", by_alias=True)).decode())
    raise TypeError(f"a tool returned {kind.__name__}, which is not a tool result")


def is_content(value: object) -> bool:
    """Whether ``value`` is an ``Image``, ``Audio`` or ``File``, or a content object of the official SDK."""
    from .media import Media

    return isinstance(value, Media) or (type(value).__name__ in CONTENT_CLASSES and hasattr(value, "model_dump"))


def content_block(item: Any) -> dict[str, Any]:
    """The content block (a dict) of a dict, an ``Image``/``Audio``/``File`` or an SDK content object."""
    from .media import Media, jsonable

    return item.content_block() if isinstance(item, Media) else jsonable(item)


def declares_content(hint: Any) -> bool:
    """Whether a return annotation declares content blocks or a whole result (bare, in a list or
    tuple, or in a union): such a tool's result is what it returns, never structured output."""
    import typing

    from .media import Media

    origin = typing.get_origin(hint)
    if origin is None:
        return isinstance(hint, type) and (
            issubclass(hint, Media)
            or ((hint.__name__ in CONTENT_CLASSES or hint.__name__ == RESULT_CLASS) and hasattr(hint, "model_dump"))
        )
    if origin is typing.Annotated:
        return declares_content(typing.get_args(hint)[0])
    return any(declares_content(arg) for arg in typing.get_args(hint) if arg is not type(None))
