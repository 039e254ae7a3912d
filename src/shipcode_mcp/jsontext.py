"""JSON text rules shared by both engines: parsing beyond orjson, and number text.

orjson parses every line first. It refuses exactly one kind of valid JSON: a number literal
that overflows a double (``1e400``). Only when orjson says so does :func:`loads_overflowing`
parse the line again, with the same results orjson would give otherwise: integers inside
the signed/unsigned 64-bit range stay ``int``, other integers and all fractions become
``float`` (overflowing ones ``inf``), unpaired surrogate escapes, ``NaN``/``Infinity``
literals, raw control characters and nesting deeper than 1024 levels are refused.
"""

from __future__ import annotations

import math

import orjson

MAX_DEPTH = 1024
_INT_MIN = -(2**63)
_UINT_MAX = 2**64 - 1
_OVERFLOW = "number is infinity"


def is_overflow_error(error: ValueError) -> bool:
    """True when orjson refused a line only because a number overflows a double."""
    return str(error).startswith(_OVERFLOW)


def _parse_int(text: str) -> int | float:
    # Short literals always fit; long ones may exceed 64 bits (and int() of very long
    # digit strings is refused by CPython), so go through float like orjson does.
    if len(text) < 19:
        return int(text)
    if len(text) > 21:
        return float(text)
    value = int(text)
    return value if _INT_MIN <= value <= _UINT_MAX else float(value)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


class _Members(list):
    """An object's members as parsed, in order, duplicates kept: what :func:`_check` reads."""

    __slots__ = ()


def _check(value: object) -> None:
    """Refuse what orjson would have refused: lone surrogates and excessive depth.

    Arrays and objects may nest :data:`MAX_DEPTH` deep (scalars inside the deepest one do
    not count), as in orjson. Objects come as :class:`_Members`, so a member that a later
    duplicate key overwrites is read too. Iterative, so the depth of the Python stack does
    not matter.
    """
    stack = [(value, 1)]
    pop = stack.pop
    append = stack.append
    while stack:
        item, depth = pop()
        kind = type(item)
        if kind is str:
            item.encode("utf-8")
        elif kind is _Members or kind is list:
            if depth > MAX_DEPTH:
                raise ValueError("depth limit exceeded")
            if kind is _Members:
                for key, member in item:
                    key.encode("utf-8")
                    append((member, depth + 1))
            else:
                for member in item:
                    append((member, depth + 1))


def loads_overflowing(line: bytes) -> object:
    """Parse a line that orjson refused for an overflowing number; ValueError if invalid.

    The result does not depend on how deep the Python stack is at the call: the parser gets
    room for :data:`MAX_DEPTH` levels (and a little more) above the caller.
    """
    import json
    import sys

    try:
        text = line.decode("utf-8")
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + MAX_DEPTH + 64)
        try:
            # Once with every member kept, to check it; then as the dicts the engines read.
            _check(json.loads(text, parse_int=_parse_int, parse_constant=_refuse_constant, object_pairs_hook=_Members))
            value = json.loads(text, parse_int=_parse_int, parse_constant=_refuse_constant)
        finally:
            sys.setrecursionlimit(limit)
    except (ValueError, RecursionError, UnicodeError) as error:
        raise ValueError(str(error)) from None
    return value


def number_text(value: int | float) -> str:
    """Write a number as ECMAScript's Number::toString does (integers exactly).

    ``3.0`` -> ``3``, ``1e21`` -> ``1e+21``, ``1e-7`` -> ``1e-7``, ``-0.0`` -> ``0``,
    overflow -> ``Infinity``. Compiled twin: ``_number_text`` in ``pyx/number_text.pxi``.
    """
    if type(value) is int:
        return str(value)
    text = repr(value)  # shortest round-trip digits, like ECMAScript
    if "e" not in text and "n" not in text:  # neither "inf" nor "nan"
        # Python writes 1e-4 <= |x| < 1e16 positionally, as ECMAScript does, but with ".0".
        if text.endswith(".0"):
            return "0" if value == 0 else text[:-2]
        return text
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.lstrip("0")
    # value == 0.<digits> x 10**point
    point = len(whole) + (int(exponent) if exponent else 0) - (len(digits) - len(stripped))
    digits = stripped.rstrip("0")
    count = len(digits)
    if count <= point <= 21:
        body = digits + "0" * (point - count)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * -point + digits
    else:
        power = point - 1
        head = digits[0] + ("." + digits[1:] if count > 1 else "")
        body = f"{head}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + body


#: Compact JSON, UTF-8 as is: the one serializer both engines use (orjson, default options). The compiled
#: engine writes strings itself as it escapes them: ``_escaped_size`` and ``_write_escaped`` in ``pyx/escape.pxi``.
dumps = orjson.dumps


def id_text(request_id: object) -> bytes | None:
    """A request id as answers write it (None: an id that is neither an integer nor a string)."""
    if type(request_id) is int:
        return b"%d" % request_id
    if type(request_id) is str:
        return dumps(request_id)
    return None
