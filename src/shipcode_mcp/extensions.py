"""Extensions: what an app adds to the protocol beyond its core, advertised under ``capabilities.extensions``.

An :class:`Extension` is named (``io.modelcontextprotocol/tasks``), says what it advertises
(:meth:`Extension.settings`, the value under ``capabilities.extensions[name]`` of ``initialize``
and ``server/discover``), and may add, each time a catalogue builds its tables
(:mod:`shipcode_mcp.catalogue`):

- methods (:meth:`Extension.methods`): handlers ``handler(params) -> body | Deferred``, served in
  both eras (a 2026-07-28 result is framed as any other: ``resultType: "complete"``);
- calls of tools it takes over (:meth:`Extension.claims`): ``tools/call`` of those tools goes to
  its handler; deferred work whose result body already names its ``resultType`` (a result type of
  its own) has it sent as it is;
- members of the ``subscriptions/listen`` filter (:meth:`Extension.listen_filters`);
- the params member an HTTP ``Mcp-Name`` header mirrors for its methods (:attr:`Extension.named_by`).

A client declares the extensions it supports under ``capabilities.extensions``: in the
``_meta`` of each 2026-07-28 request, or in ``initialize`` in the earlier revisions
(:func:`client_declares`).
"""

from __future__ import annotations

from .protocol import META_CAPABILITIES, META_VERSION, MISSING_CLIENT_CAPABILITY, RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .catalogue import Catalogue
    from .handlers import Tool

__all__ = ["Extension", "client_declares", "declares_extension", "missing_extension"]

#: What a result body of a result type of an extension's own begins with (see :meth:`Extension.claims`).
OWN_RESULT_TYPE = b'{"resultType":'


class Extension:
    """One extension of an app. Subclasses override what they add; each method is asked per catalogue."""

    #: The extension's identifier, e.g. ``io.modelcontextprotocol/tasks``.
    name = ""
    #: Method -> the params member its ``Mcp-Name`` HTTP header mirrors.
    named_by: dict[str, str] = {}

    def settings(self) -> dict[str, Any]:
        """What is advertised under ``capabilities.extensions[name]``."""
        return {}

    def added(self, app: Any) -> None:
        """Called once, when the extension is added to ``app``."""

    def methods(self, catalogue: Catalogue) -> dict[str, Callable[[Any], Any]]:
        """Method -> handler ``(params) -> result body | Deferred`` (params None when absent)."""
        return {}

    def claims(self, catalogue: Catalogue) -> dict[str, Callable[[Any], Any]]:
        """Tool name -> the handler of its ``tools/call`` ``(params) -> result body | Deferred``."""
        return {}

    def listen_filters(self, catalogue: Catalogue) -> dict[str, Callable[[Any], Any]]:
        """Member of the ``subscriptions/listen`` filter -> ``agree(value)``: the acknowledged value,
        or None to leave the member out; may raise :class:`RpcError` for an invalid value."""
        return {}

    def concurrent(self, tools: dict[str, Tool]) -> bool:
        """Whether serving needs the concurrent scheduler (work that outlives its request)."""
        return False


def declares_extension(capabilities: object, name: str) -> bool:
    """Whether a client capabilities object declares the extension ``name``."""
    declared = capabilities.get("extensions") if type(capabilities) is dict else None
    return type(declared) is dict and type(declared.get(name)) is dict


def client_declares(catalogue: Catalogue, params: object, name: str) -> bool:
    """Whether the client of this request declares ``name``: from a 2026-07-28 request's ``_meta``,
    else from its session's ``initialize``."""
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and META_VERSION in meta:
        return declares_extension(meta.get(META_CAPABILITIES), name)
    if catalogue.modern is not None and catalogue.modern.only:
        return False
    return declares_extension(catalogue.session.client_capabilities, name)


def missing_extension(name: str) -> RpcError:
    """-32021: the request needs the extension ``name``, which the client did not declare."""
    return RpcError(
        MISSING_CLIENT_CAPABILITY,
        f"Server requires the {name} extension for this request",
        {"requiredCapabilities": {"extensions": {name: {}}}},
    )


def claiming(call_tool: Callable[[Any], Any], claimed: dict[str, Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """``tools/call``: the claimed tools' calls to their extension's handler, the others to ``call_tool``."""

    def call(params: Any) -> Any:
        name = params.get("name") if type(params) is dict else None
        handler = claimed.get(name) if type(name) is str else None
        return call_tool(params) if handler is None else handler(params)

    return call


def check_extension(extension: object, names: set[str]) -> Extension:
    """``extension`` if it is an :class:`Extension` whose name is new among ``names``; TypeError or ValueError."""
    if not isinstance(extension, Extension):
        raise TypeError(f"an extension is an Extension, not {type(extension).__name__}")
    if type(extension.name) is not str or "/" not in extension.name:
        raise ValueError(f"an extension's name is 'prefix/name', not {extension.name!r}")
    if extension.name in names:
        raise ValueError(f"the extension {extension.name!r} is already added")
    return extension
