"""A ``completion/complete`` request as the official SDK's objects, which an app's completion handler receives."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Named:
    """A stand-in for an SDK object (``PromptReference``, ``CompletionArgument``) when the SDK is not installed."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def completion_objects(params: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The reference, argument and context of a ``completion/complete`` request, as the SDK's objects."""
    ref, argument, context = params.get("ref") or {}, params.get("argument") or {}, params.get("context")
    try:
        from mcp import types
    except ImportError:
        return _Named(**ref), _Named(**argument), None if context is None else _Named(**context)
    kind = types.PromptReference if ref.get("type") == "ref/prompt" else types.ResourceTemplateReference
    made = types.CompletionContext.model_validate(context) if context is not None else None
    return kind.model_validate(ref), types.CompletionArgument.model_validate(argument), made
