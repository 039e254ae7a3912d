"""Engine selector: the compiled engine when it is built and allowed, else the pure one.

``SHIPCODE_MCP_NO_EXTENSIONS`` (any non-empty value) forces the pure engine, as does any
Python other than CPython. ``IMPLEMENTATION`` names the live engine: ``"compiled"`` or
``"pure"``.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

NO_EXTENSIONS = bool(os.environ.get("SHIPCODE_MCP_NO_EXTENSIONS")) or sys.implementation.name != "cpython"

if TYPE_CHECKING or NO_EXTENSIONS:
    from ._engine_py import Engine
else:
    try:
        from ._engine_c import Engine
    except ImportError:
        from ._engine_py import Engine

IMPLEMENTATION: str = Engine.implementation

__all__ = ["IMPLEMENTATION", "NO_EXTENSIONS", "Engine"]
