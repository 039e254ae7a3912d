"""An independent model of the server contract's line rules, and input mutators for fuzzing.

The model does not use the package (nor orjson): it predicts, for each input line, whether
the server stays silent or answers, and with which id, using only the standard ``json``
module. The differential tests and ``fuzz_engine.py`` compare engines with each other, and
each engine with this model.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterable
from types import ModuleType

MAX_DEPTH = 1024
INT_MIN = -(2**63)
UINT_MAX = 2**64 - 1
BLANK = b" \t\r"


# -- running an engine ---------------------------------------------------------------------


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


def check_engines(engines: list, catalogue, data: bytes, cuts: Iterable[int] = (), limit: int = 16 * 1024 * 1024):
    """All engines, whole and chunked at ``cuts``, write the same bytes; the answers follow the rules.

    The last engine is the reference (the pure one). Returns its output.
    """
    reference, reference_engine = run_engine(engines[-1], catalogue, data, (), limit)
    for module in engines:
        for chunking in ((), cuts):
            out, engine = run_engine(module, catalogue, data, chunking, limit)
            assert out == reference, (module.__name__, data, sorted(chunking), out, reference)
            assert engine.initialized == reference_engine.initialized, (module.__name__, data)
    check_answers(data, reference, limit)
    return reference


# -- the model -----------------------------------------------------------------------------


class _Refused(Exception):
    pass


def _parse_int(text: str) -> int | float:
    value = float(text) if len(text) > 40 else int(text)
    if type(value) is int and not INT_MIN <= value <= UINT_MAX:
        return float(value)  # beyond 64 bits: a double
    return value


def _refuse(name: str) -> None:
    raise _Refused(name)


def _valid_json(text: str) -> tuple[bool, object]:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 2 * MAX_DEPTH)
    try:
        value = json.loads(text, parse_int=_parse_int, parse_constant=_refuse)
    except (ValueError, _Refused, RecursionError):
        return False, None
    finally:
        sys.setrecursionlimit(limit)
    # Refuse what JSON text cannot carry in UTF-8 (lone surrogates) and nesting beyond the limit.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False, None
        elif isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                return False, None
            if isinstance(item, dict):
                for key, member in item.items():
                    stack.append((key, depth))
                    stack.append((member, depth + 1))
            else:
                stack.extend((member, depth + 1) for member in item)
    return True, value


def compact(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


SILENT = None
NULL = b"null"


def predict(line: bytes, limit: int) -> bytes | None:
    """The id the answer to ``line`` carries (``b"null"`` for id-less errors), or None for silence."""
    if not line.strip(BLANK):
        return SILENT
    body = line[:-1] if line.endswith(b"\r") else line
    if len(body) > limit:
        return NULL
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return NULL
    ok, message = _valid_json(text)
    if not ok or type(message) is not dict:
        return NULL
    if "id" in message:
        rid = message["id"]
        if type(rid) is int or type(rid) is str:
            id_bytes = compact(rid)
        else:
            return NULL
    else:
        id_bytes = None
    if "method" not in message and ("result" in message or "error" in message):
        return SILENT
    params = message.get("params", {})
    if message.get("jsonrpc") != "2.0" or type(message.get("method")) is not str or type(params) not in (dict, list):
        return NULL if id_bytes is None else id_bytes
    if id_bytes is None:
        return SILENT
    return id_bytes


def split_lines(data: bytes) -> list[bytes]:
    """The lines of a stream: split at each newline; a last line without one still counts."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def check_answers(data: bytes, out: bytes, limit: int) -> None:
    """Assert that ``out`` answers ``data`` as the contract says, line by line.

    Exactly one answer per line that deserves one, in input order, each with the predicted
    id; every answer one compact JSON-RPC response on its own line.
    """
    expected_ids = [rid for rid in (predict(line, limit) for line in split_lines(data)) if rid is not SILENT]
    assert out == b"" or out.endswith(b"\n"), out[-200:]
    answers = out.split(b"\n")[:-1] if out else []
    got_ids = []
    for answer in answers:
        message = json.loads(answer)
        assert compact(message) == answer, answer  # compact, keys as written
        assert type(message) is dict
        keys = list(message)
        assert keys[:2] == ["jsonrpc", "id"] and message["jsonrpc"] == "2.0", answer
        assert keys[2:] in (["result"], ["error"]), answer
        if "error" in message:
            error = message["error"]
            assert list(error) == ["code", "message"], answer
            assert type(error["code"]) is int and type(error["message"]) is str, answer
        else:
            assert type(message["result"]) is dict, answer
        got_ids.append(compact(message["id"]))
    assert got_ids == expected_ids


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
