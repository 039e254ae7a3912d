"""The benchmark catalogue shared by the Python peer servers (not by shipcode-mcp itself).

Every peer serves the same two tools and one resource as shipcode-mcp, with the same texts, so the driver can
check their answers semantically; with ``--slow`` also the ``sleep`` tool of the slow workload (an async tool
that awaits ``asyncio.sleep``), as ``benchmarks/common/slow_app.py`` does for shipcode-mcp. Kept free of any SDK
import so each peer pays only for its own SDK.
"""

from __future__ import annotations

import math

ECHO_DESCRIPTION = "Echo back the given text"
ADD_DESCRIPTION = "Add two numbers"
ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
SLEEP_DESCRIPTION = "Wait ms milliseconds, then answer ok"
SLEEP_SCHEMA = {
    "type": "object",
    "properties": {"ms": {"type": "integer"}},
    "required": ["ms"],
    "additionalProperties": False,
}
HELLO_URI = "file:///hello.txt"
HELLO_NAME = "hello.txt"
HELLO_MIME = "text/plain"
HELLO_TEXT = "Hello, world!"


def is_number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def echo_args_ok(args: object) -> bool:
    return isinstance(args, dict) and len(args) == 1 and type(args.get("text")) is str


def add_args_ok(args: object) -> bool:
    return isinstance(args, dict) and len(args) == 2 and is_number(args.get("a")) and is_number(args.get("b"))


def sleep_args_ok(args: object) -> bool:
    return isinstance(args, dict) and len(args) == 1 and type(args.get("ms")) is int and args["ms"] >= 0


def number_text(value: float) -> str:
    """The sum as JavaScript's Number-to-String would print it, for the values the benchmark sends."""
    if type(value) is int:
        return str(value)
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def add_text(a: float, b: float) -> str:
    return number_text(a + b)
