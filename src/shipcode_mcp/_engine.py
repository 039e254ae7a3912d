"""Engine selector: the compiled engine when it is built and allowed, else the pure one.

``SHIPCODE_MCP_NO_EXTENSIONS`` (any non-empty value) forces the pure engine, as does any
Python other than CPython. ``SHIPCODE_MCP_REQUIRE_EXTENSIONS`` (any non-empty value) refuses
the fallback: when the compiled engine cannot be imported, importing this module raises
:class:`ImportError` instead of selecting the pure engine (``SHIPCODE_MCP_NO_EXTENSIONS``
still wins: asking for the pure engine is never an error). ``IMPLEMENTATION`` names the live
engine: ``"compiled"`` or ``"pure"``. Every other compiled/pure pair is picked by the same rule
(:func:`twin`).
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

NO_EXTENSIONS = bool(os.environ.get("SHIPCODE_MCP_NO_EXTENSIONS")) or sys.implementation.name != "cpython"
REQUIRE_EXTENSIONS = bool(os.environ.get("SHIPCODE_MCP_REQUIRE_EXTENSIONS"))


def twin(compiled: str, pure: str, what: str) -> ModuleType:
    """The module ``compiled`` when it is built and allowed, else ``pure`` (the rule above); ``what``
    names the compiled one in the error that ``SHIPCODE_MCP_REQUIRE_EXTENSIONS`` makes of a fallback."""
    if not NO_EXTENSIONS:
        try:
            return import_module(compiled)
        except ImportError as error:
            if REQUIRE_EXTENSIONS:
                raise ImportError(
                    f"SHIPCODE_MCP_REQUIRE_EXTENSIONS is set, but {what} cannot be imported ({error}); "
                    "reinstall with a C compiler, or unset SHIPCODE_MCP_REQUIRE_EXTENSIONS to allow the pure engine"
                ) from error
    return import_module(pure)


if TYPE_CHECKING:
    from ._engine_py import Engine
else:
    Engine = twin("shipcode_mcp._engine_c", "shipcode_mcp._engine_py", "the compiled engine").Engine

IMPLEMENTATION: str = Engine.implementation

__all__ = ["IMPLEMENTATION", "NO_EXTENSIONS", "REQUIRE_EXTENSIONS", "Engine", "twin"]
