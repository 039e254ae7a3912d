"""How a tool's return value becomes a ``tools/call`` result body (compact JSON bytes).

- ``str`` -> one text block; ``int``/``float`` -> one text block written as ECMAScript writes
  numbers (``3.0`` -> ``3``); ``bool`` -> ``true``/``false``; ``None`` -> no content.
- a list of content blocks (dicts with a ``type``) -> those blocks as given; any other list
  -> its compact JSON as one text block.
- a ``dict`` -> its compact JSON as one text block, plus ``structuredContent`` when the tool
  declares an output schema.
- anything else -> :class:`TypeError` (the tool call fails with an ``isError`` result).
"""

from __future__ import annotations

from .jsontext import dumps, number_text

#: A result body holding one text block is TEXT_HEAD + the JSON string + TEXT_TAIL.
TEXT_HEAD = b'{"content":[{"type":"text","text":'
TEXT_TAIL = b"}]}"
_ERROR_TAIL = b'}],"isError":true}'
#: The result body of an integer: one format, its digits need no escaping.
_INT_RESULT = TEXT_HEAD + b'"%d"' + TEXT_TAIL
EMPTY_CONTENT = b'{"content":[]}'


def text_result(text: str) -> bytes:
    """A successful result holding one text block."""
    return TEXT_HEAD + dumps(text) + TEXT_TAIL


def error_result(text: str) -> bytes:
    """A failed tool call (``isError``) holding one text block."""
    return TEXT_HEAD + dumps(text) + _ERROR_TAIL


def tool_result(value: object, structured: bool = False) -> bytes:
    """Encode a tool function's return value as a result body.

    Compiled twin, for the values C writes itself: ``Engine._emit_value`` in ``pyx/_engine_c.pyx``.
    """
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
        return text_result(dumps(value).decode())
    raise TypeError(f"a tool returned {kind.__name__}, which is not a tool result")
