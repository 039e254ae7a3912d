"""An independent model of the server contract, and input mutators for fuzzing.

The model (:class:`Model`) is docs/contract.md, the stdio contract of the default catalogue
(tools ``echo`` and ``add``, resource ``file:///hello.txt``), written again from the text with
the standard library only: no code of the package, no orjson. For each input line it predicts
the exact answer bytes, or silence, and whether the session is initialized afterwards. The
differential tests and ``fuzz_engine.py`` require every engine, whole and chunked, to write
exactly what the model predicts, so the fast path and the slow path it hands lines to are
both checked against the contract, not only against each other.
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
from collections.abc import Iterable
from decimal import Decimal
from itertools import accumulate
from types import ModuleType

DEFAULT_LIMIT = 16 * 1024 * 1024
MAX_DEPTH = 1024
INT_MIN = -(2**63)
UINT_MAX = 2**64 - 1
BLANK = b" \t\r"


# -- running engines against the model -----------------------------------------------------


def run_engine(module: ModuleType, catalogue, data: bytes, cuts: Iterable[int] = (), limit: int | None = None):
    """Feed ``data`` (split at ``cuts``) to a fresh engine; return (output, engine)."""
    kwargs = {} if limit is None else {"max_message_bytes": limit}
    engine = module.Engine(catalogue, **kwargs)
    out = []
    start = 0
    for cut in sorted(set(cuts)):
        if 0 < cut < len(data):
            out.append(engine.feed(data[start:cut]))
            start = cut
    out.append(engine.feed(data[start:]))
    out.append(engine.finish())
    return b"".join(out), engine


def check_engines(engines: list, catalogue, data: bytes, cuts: Iterable[int] = (), limit: int = DEFAULT_LIMIT):
    """Every engine, whole and chunked at ``cuts``, writes what the model predicts, byte for byte.

    ``catalogue`` must be the default one (the model knows no other). The engines are also
    compared with each other first, for a clearer report when they disagree. Returns the output.
    """
    expected = Model(limit).session(data)
    reference = None
    for module in engines:
        for chunking in ((), cuts):
            out, engine = run_engine(module, catalogue, data, chunking, limit)
            if reference is None:
                reference = out
            assert out == reference, (module.__name__, data, sorted(chunking), out, reference)
            check_session(expected, out, engine.initialized, module.__name__)
    return reference


def check_session(expected: Session, out: bytes, initialized: bool, label: str = "") -> None:
    """Assert that ``out`` is the predicted answers, and the initialized flag the predicted one."""
    if out != expected.output:
        got = out.split(b"\n")
        want = expected.output.split(b"\n")
        index = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
        line = expected.line_of_answer(index)
        raise AssertionError(
            f"{label}: answer {index} differs from the contract\n"
            f"  input line: {line!r}\n"
            f"  expected:   {want[index : index + 1]!r}\n"
            f"  got:        {got[index : index + 1]!r}"
        )
    assert initialized is expected.initialized, (label, initialized, expected.initialized)


# -- JSON as the contract reads it ---------------------------------------------------------


class _Refused(Exception):
    pass


def _parse_int(text: str) -> int | float:
    # Integers outside the signed/unsigned 64-bit range are doubles (overflowing ones infinite).
    value = float(text) if len(text) > 40 else int(text)
    if type(value) is int and not INT_MIN <= value <= UINT_MAX:
        return float(value)
    return value


def _refuse(name: str) -> None:
    raise _Refused(name)  # NaN, Infinity, -Infinity are not JSON


# A JSON string literal (in text already known to be valid JSON), and an escape that may be half a surrogate pair.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")


def _unpaired_surrogate(text: str) -> bool:
    """Whether any string literal of the text escapes half a surrogate pair (keys included)."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return False
    for literal in _STRING.findall(text):
        try:
            json.loads(literal).encode("utf-8")
        except UnicodeEncodeError:
            return True
    return False


def _depth(text: str) -> int:
    """How deep arrays and objects nest in the text (brackets inside strings do not count)."""
    brackets = _NOT_A_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(1 if bracket in "[{" else -1 for bracket in brackets), default=0)


def parse(line: bytes) -> tuple[bool, object]:
    """(True, value) for a line that is one JSON text in UTF-8 within the nesting limit, else (False, None).

    What is refused is read from the text, so a member overwritten by a duplicate key counts too.
    """
    try:
        text = line.decode("utf-8")  # strict: no overlong forms, no encoded surrogates
    except UnicodeDecodeError:
        return False, None
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 2 * MAX_DEPTH)
    try:
        value = json.loads(text, parse_int=_parse_int, parse_constant=_refuse)
    except (ValueError, _Refused, RecursionError):
        return False, None
    finally:
        sys.setrecursionlimit(limit)
    if _unpaired_surrogate(text) or _depth(text) > MAX_DEPTH:
        return False, None
    return True, value


def compact(value: object) -> bytes:
    """Compact JSON, UTF-8 as is, only control characters escaped: the contract's output form."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def number_text(value: int | float) -> str:
    """A number as ECMAScript's Number::toString writes it (ECMA-262, 6.1.6.1.20); integers exactly."""
    if type(value) is int:
        return str(value)
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + number_text(-value)
    # The shortest digits s (k of them) with s x 10**(n-k) == value: Python's repr finds them.
    _, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    s = "".join(map(str, digits))
    k = len(s)
    n = k + exponent
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    e = n - 1
    mantissa = s if k == 1 else s[0] + "." + s[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


# -- the contract --------------------------------------------------------------------------

PROTOCOL_VERSION = "2025-06-18"
INITIALIZE = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {"tools": {}, "resources": {}},
    "serverInfo": {"name": "shipcode-mcp", "version": "1.0.0"},
}


def _closed_object(properties: dict[str, str]) -> dict:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
        "additionalProperties": False,
    }


TOOLS = {
    "tools": [
        {"name": "echo", "description": "Echo back the given text", "inputSchema": _closed_object({"text": "string"})},
        {
            "name": "add",
            "description": "Add two numbers",
            "inputSchema": _closed_object({"a": "number", "b": "number"}),
        },
    ]
}
HELLO_URI = "file:///hello.txt"
RESOURCES = {"resources": [{"uri": HELLO_URI, "name": "hello.txt", "mimeType": "text/plain"}]}
HELLO = {"contents": [{"uri": HELLO_URI, "mimeType": "text/plain", "text": "Hello, world!"}]}
CONSTANT_RESULTS = {
    "initialize": INITIALIZE,
    "ping": {},
    "tools/list": TOOLS,
    "resources/list": RESOURCES,
    "resources/templates/list": {"resourceTemplates": []},
}
SERVED = {*CONSTANT_RESULTS, "tools/call", "resources/read"}

PARSE_ERROR = (-32700, "Parse error")
INVALID_REQUEST = (-32600, "Invalid Request")
METHOD_NOT_FOUND = (-32601, "Method not found")
INVALID_PARAMS = (-32602, "Invalid params")
UNKNOWN_TOOL = (-32602, "Unknown tool")
RESOURCE_NOT_FOUND = (-32002, "Resource not found")

_MISSING = object()


def success(rid: int | str, result: dict) -> bytes:
    return compact({"jsonrpc": "2.0", "id": rid, "result": result}) + b"\n"


def failure(rid: int | str | None, error: tuple[int, str]) -> bytes:
    code, message = error
    return compact({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}) + b"\n"


def text_content(text: str, is_error: bool = False) -> dict:
    result: dict = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def _finite_number(value: object) -> bool:
    return type(value) is int or (type(value) is float and math.isfinite(value))


def call_tool(params: dict | None) -> dict | tuple[int, str]:
    """``tools/call`` on the default catalogue: a result, or a JSON-RPC error."""
    if params is None or type(params.get("name")) is not str:
        return INVALID_PARAMS
    name = params["name"]
    if name not in ("echo", "add"):
        return UNKNOWN_TOOL
    arguments = params.get("arguments", {})  # missing counts as {}; null does not
    if name == "echo":
        if type(arguments) is dict and list(arguments) == ["text"] and type(arguments["text"]) is str:
            return text_content(arguments["text"])
    elif type(arguments) is dict and sorted(arguments) == ["a", "b"] and all(map(_finite_number, arguments.values())):
        return text_content(number_text(arguments["a"] + arguments["b"]))
    return text_content(f"Invalid arguments for {name}", is_error=True)


def read_resource(params: dict | None) -> dict | tuple[int, str]:
    if params is None or type(params.get("uri")) is not str:
        return INVALID_PARAMS
    return HELLO if params["uri"] == HELLO_URI else RESOURCE_NOT_FOUND


class Session:
    """The predicted output of a whole input: answers in order, and the final initialized flag."""

    def __init__(self, lines: list[bytes], answers: list[bytes | None], initialized: bool) -> None:
        self.lines = lines
        self.answers = answers
        self.output = b"".join(answer for answer in answers if answer is not None)
        self.initialized = initialized

    def line_of_answer(self, index: int) -> bytes | None:
        """The input line the ``index``-th answer answers (None past the end)."""
        answered = [line for line, answer in zip(self.lines, self.answers, strict=True) if answer is not None]
        return answered[index] if index < len(answered) else None


class Model:
    """The server contract, line by line (docs/contract.md, "How each line is judged")."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self.initialized = False

    def session(self, data: bytes) -> Session:
        lines = split_lines(data)
        return Session(lines, [self.answer(line) for line in lines], self.initialized)

    def answer(self, line: bytes) -> bytes | None:
        """The answer to one line (without its newline), or None for silence."""
        # 1. blank, however long; 2. too long, not counting one trailing \r.
        if not line.strip(BLANK):
            return None
        if len(line[:-1] if line.endswith(b"\r") else line) > self.limit:
            return failure(None, INVALID_REQUEST)
        ok, message = parse(line)
        if not ok:  # 3.
            return failure(None, PARSE_ERROR)
        if type(message) is not dict:  # 4.
            return failure(None, INVALID_REQUEST)
        rid = message.get("id", _MISSING)
        if rid is not _MISSING and type(rid) is not int and type(rid) is not str:  # 5.
            return failure(None, INVALID_REQUEST)
        if "method" not in message and ("result" in message or "error" in message):  # 6.
            return None
        method = message.get("method")
        params = message.get("params", _MISSING)
        if (
            message.get("jsonrpc") != "2.0"
            or type(method) is not str
            or (params is not _MISSING and type(params) is not dict and type(params) is not list)
        ):  # 7.
            return failure(None if rid is _MISSING else rid, INVALID_REQUEST)
        if rid is _MISSING:  # 8.
            if method == "notifications/initialized":
                self.initialized = True
            return None
        if method not in SERVED:  # 9.
            return failure(rid, METHOD_NOT_FOUND)
        if type(params) is list:  # 10.
            return failure(rid, INVALID_PARAMS)
        if method in CONSTANT_RESULTS:
            return success(rid, CONSTANT_RESULTS[method])
        handler = call_tool if method == "tools/call" else read_resource  # 11.
        outcome = handler(None if params is _MISSING else params)
        return success(rid, outcome) if type(outcome) is dict else failure(rid, outcome)


def split_lines(data: bytes) -> list[bytes]:
    """The lines of a stream: split at each newline; a last line without one still counts."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def predict(data: bytes, limit: int = DEFAULT_LIMIT) -> bytes:
    """The exact output the contract requires for ``data``."""
    return Model(limit).session(data).output


# -- mutations -----------------------------------------------------------------------------

TOKENS = [
    b"1e400",
    b"-1E400",
    b"-0",
    b"0.0",
    b"1.5",
    b"2.0",
    b"18446744073709551615",
    b"18446744073709551616",
    b"-9223372036854775808",
    b"-9223372036854775809",
    b"9007199254740993",
    b"NaN",
    b"Infinity",
    b"null",
    b"true",
    b"false",
    b"[]",
    b"{}",
    b'""',
    b'"\\ud800"',
    b'"\\ud83d\\ude00"',
    b'"\\u0000"',
    b'"\\/"',
    b'"id":',
    b'"id":1,',
    b'"id":"x",',
    b'"method":"ping",',
    b'"method":"tools/call",',
    b'"jsonrpc":"2.0",',
    b'"params":',
    b'"result":{},',
    b'"error":{},',
    b'"name":"echo",',
    b'"name":"add",',
    b'"arguments":',
    b'{"text":"hi"}',
    b'{"a":1,"b":2}',
    b'"uri":"file:///hello.txt"',
    b"\r",
    b"\t",
    b" ",
    b"\x00",
    b"\x7f",
    b"\xff",
    b"\xc3",
    b"\xc3\xa9",
    b"\xe6\x97\xa5",
    b"\xf0\x9f\x98\x80",
    b"\xed\xa0\x80",
    b"\\",
    b'"',
    b",",
    b":",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\n",
    b"\r\n",
    b"[" * 1030,
    b"]" * 1030,
]


def mutate(rng: random.Random, message: bytes, others: list[bytes]) -> bytes:
    """One to four random edits of a message: flips, insertions, deletions, splices."""
    data = bytearray(message)
    for _ in range(rng.randrange(1, 5)):
        choice = rng.randrange(8)
        position = rng.randrange(len(data) + 1)
        if choice == 0 and data:  # replace a byte
            data[min(position, len(data) - 1)] = rng.randrange(256)
        elif choice == 1:  # insert a token
            data[position:position] = rng.choice(TOKENS)
        elif choice == 2 and data:  # delete a slice
            end = min(len(data), position + rng.randrange(1, 16))
            del data[position:end]
        elif choice == 3 and data:  # duplicate a slice
            end = min(len(data), position + rng.randrange(1, 32))
            data[position:position] = data[position:end]
        elif choice == 4:  # truncate
            del data[position:]
        elif choice == 5 and others:  # splice in part of another message
            other = rng.choice(others)
            start = rng.randrange(len(other) + 1)
            data[position:position] = other[start : start + rng.randrange(1, 64)]
        elif choice == 6 and data:  # flip a bit
            index = min(position, len(data) - 1)
            data[index] ^= 1 << rng.randrange(8)
        else:  # replace a token
            for token in (b"1", b'"', b"ping", b"2.0", b"echo", b"add", b"{", b"id"):
                index = data.find(token, position)
                if index >= 0:
                    data[index : index + len(token)] = rng.choice(TOKENS)
                    break
    return bytes(data)


def mutated_stream(rng: random.Random, messages: list[bytes], count: int) -> bytes:
    """``count`` lines: corpus messages, most of them mutated, joined by newlines (or CRLF)."""
    lines = []
    for _ in range(count):
        message = rng.choice(messages)
        if rng.random() < 0.8:
            message = mutate(rng, message, messages)
        lines.append(message)
    return b"".join(line + rng.choice((b"\n", b"\n", b"\r\n")) for line in lines)
