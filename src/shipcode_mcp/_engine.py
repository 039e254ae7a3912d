"""Engine selector: the compiled engine when it is built and allowed, else the pure one.

``SHIPCODE_MCP_NO_EXTENSIONS`` (any non-empty value) forces the pure engine, as does any
Python other than CPython. ``SHIPCODE_MCP_REQUIRE_EXTENSIONS`` (any non-empty value) refuses
the fallback: when the compiled engine cannot be imported, importing this module raises
:class:`ImportError` instead of selecting the pure engine (``SHIPCODE_MCP_NO_EXTENSIONS``
still wins: asking for the pure engine is never an error). ``IMPLEMENTATION`` names the live
engine: ``"compiled"`` or ``"pure"``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False

NO_EXTENSIONS = bool(os.environ.get("SHIPCODE_MCP_NO_EXTENSIONS")) or sys.implementation.name != "cpython"
REQUIRE_EXTENSIONS = bool(os.environ.get("SHIPCODE_MCP_REQUIRE_EXTENSIONS"))

if TYPE_CHECKING or NO_EXTENSIONS:
    from ._engine_py import Engine
else:
    try:
        from ._engine_c import Engine
    except ImportError as error:
        if REQUIRE_EXTENSIONS:
            raise ImportError(
                f"SHIPCODE_MCP_REQUIRE_EXTENSIONS is set, but the compiled engine cannot be imported ({error}); "
                "reinstall with a C compiler, or unset SHIPCODE_MCP_REQUIRE_EXTENSIONS to allow the pure engine"
            ) from error
        from ._engine_py import Engine

IMPLEMENTATION: str = Engine.implementation

__all__ = ["IMPLEMENTATION", "NO_EXTENSIONS", "REQUIRE_EXTENSIONS", "Engine"]
