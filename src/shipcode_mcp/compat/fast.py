"""A framework's flat-scalar tools on the compiled engine's fast path.

A sync tool without a ``Context`` whose parameters are plain scalars has its arguments checked by the
engine where that judges as the framework's lax validation does (anything else goes to the framework's
``tools/call``), and its result written as the framework writes it (:class:`~shipcode_mcp.layouts.ResultLayout`).
"""

from __future__ import annotations

import typing

from ..catalogue import FastTool, fast_record, lax_flat_shape
from ..layouts import ResultLayout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..catalogue import Catalogue
    from ..handlers import Tool


def fast_tool(catalogue: Catalogue, name: str, tool: Tool) -> FastTool | None:
    """The fast path's record of a framework's tool (its check has ``lax_arguments()``), or None."""
    if tool.is_async or tool.blocking or tool.context_name is not None or tool.task is not None:
        return None
    lax_arguments = getattr(tool.validate, "lax_arguments", None)
    arguments = lax_arguments() if lax_arguments is not None else None
    shape = lax_flat_shape(arguments, tool.func) if arguments is not None else None
    if shape is None:
        return None
    return fast_record(
        name, tool, shape, catalogue.invalid_arguments[name], True, ResultLayout(tool.encode, laid_out_kinds(tool))
    )


def laid_out_kinds(tool: Tool) -> tuple[type, ...]:
    """The kinds of returned values whose result body depends on nothing but their text: all plain ones
    without structured output; with it, the return annotation's when that is a plain scalar itself (a value
    of another kind is validated against it, a conversion its text does not show)."""
    if tool.structured is None:
        return (str, int, float)
    hint = typing.get_type_hints(tool.func, include_extras=True).get("return")
    return (hint,) if hint in (str, int, float) else ()
