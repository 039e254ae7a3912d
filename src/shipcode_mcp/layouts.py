"""A tool's result bytes laid out around its returned value's text, for an engine that writes them itself.

A framework's tool (``compat/``) writes its result by its own rules (``isError: false``, structured output
``{"result": ...}``, its own text of a number), through its ``encode(value)``. For the values whose text is
plain (a ``str`` needing no escape, an ``int`` of 64 bits, a ``float`` that ``repr`` writes without an
exponent), that body is constant bytes with the value's text at fixed places: :class:`ResultLayout` finds
those places by encoding probes, and keeps a kind only when other probes come out laid out the same way.
``True``, ``False`` and ``None`` give one body each. Any other value is the tool's own ``encode``'s.
"""

from __future__ import annotations

from .errors import HANDLER_FAULTS
from .protocol import RESULT_MID, RESULT_TAIL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: Per kind, the probe whose text splits a body, then the probes the layout must also hold for.
_PROBES: dict[type, tuple[Any, ...]] = {
    str: ("qZ7jXv", "", "a b", "-1"),
    int: (7038495162, 0, -1, 42),
    float: (7038.25, 0.5, -1.0, 1234567.0, 0.0001),
}


def plain_text(value: object) -> str:
    """The text of a value as it stands in a laid-out body: the string itself, ``repr`` of a number.

    Compiled twin, for the floats C writes itself: ``_repr_text`` in ``pyx/number_text.pxi``.
    """
    return value if type(value) is str else repr(value)


class ResultLayout:
    """How a tool's result body is laid out, per kind of returned value.

    ``pieces[kind]``: the bytes after the id, as a tuple whose items go around the value's text (its text
    written between each two); a kind is left out where the layout does not hold, or when ``kinds`` (the
    kinds whose every value the body depends on only through its text) does not name it. ``constants``:
    the bytes after the id for ``True``, ``False`` and ``None``, each encoded once.
    """

    __slots__ = ("pieces", "constants")

    def __init__(self, encode: Callable[[Any], bytes], kinds: tuple[type, ...]) -> None:
        self.pieces: dict[type, tuple[bytes, ...]] = {}
        for kind in kinds:
            pieces = _pieces(encode, _PROBES[kind])
            if pieces is not None:
                self.pieces[kind] = pieces
        self.constants: dict[Any, bytes] = {}
        for value in (True, False, None):
            body = _encoded(encode, value)
            if body is not None:
                self.constants[value] = RESULT_MID + body + RESULT_TAIL


def _encoded(encode: Callable[[Any], bytes], value: object) -> bytes | None:
    try:
        return encode(value)
    except HANDLER_FAULTS:
        return None


def _pieces(encode: Callable[[Any], bytes], probes: tuple[Any, ...]) -> tuple[bytes, ...] | None:
    """The bytes around the first probe's text in its answer, when every probe's answer is laid out so."""
    first = _encoded(encode, probes[0])
    if first is None:
        return None
    pieces = tuple((RESULT_MID + first + RESULT_TAIL).split(plain_text(probes[0]).encode()))
    for probe in probes[1:]:
        body = _encoded(encode, probe)
        if body is None or RESULT_MID + body + RESULT_TAIL != plain_text(probe).encode().join(pieces):
            return None
    return pieces
