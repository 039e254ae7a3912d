"""MCP Apps (``io.modelcontextprotocol/ui``): a tool names the ``ui://`` resource that draws its result.

A :class:`UiResource` is an HTML page (``text/html;profile=mcp-app``) read once and served from
memory, its listing and its ``resources/read`` contents carrying ``_meta.ui`` (CSP domains,
permissions, a dedicated domain, the border preference). A :class:`UiTool` lists ``_meta.ui``
(``resourceUri``, ``visibility``) and the flat ``_meta["ui/resourceUri"]`` older hosts read.
:class:`Apps` advertises the extension and checks, per catalogue, that every interface a tool
names is served (a change while serving is logged). Hosts render the page and enforce visibility
(``docs/extensions.md``).
"""

from __future__ import annotations

import os
import weakref

from ._log import log
from .extensions import Extension
from .handlers import Resource, Tool
from .jsontext import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from .catalogue import Catalogue

UI = "io.modelcontextprotocol/ui"
#: The type of an MCP App's page.
MCP_APP = "text/html;profile=mcp-app"
#: The flat key of a tool's interface that hosts read before ``_meta.ui.resourceUri`` (kept by the specification).
FLAT_RESOURCE_URI = "ui/resourceUri"
SCHEME = "ui://"
VISIBILITIES = ("model", "app")
CSP_MEMBERS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")


def check_uri(uri: object) -> str:
    """``uri`` if it is a ``ui://`` uri; ValueError."""
    if type(uri) is not str or not uri.startswith(SCHEME) or len(uri) == len(SCHEME):
        raise ValueError(f"an interface's uri begins with 'ui://', not {uri!r}")
    return uri


def tool_ui(resource_uri: str | None, visibility: Sequence[str] | None) -> dict[str, Any]:
    """A tool's ``_meta.ui``: the interface it names and who may call it; ValueError."""
    ui: dict[str, Any] = {}
    if resource_uri is not None:
        ui["resourceUri"] = check_uri(resource_uri)
    if visibility is not None:
        seen = list(visibility) if not isinstance(visibility, str) else [visibility]
        if not seen or any(who not in VISIBILITIES for who in seen) or len(set(seen)) != len(seen):
            raise ValueError(f"visibility lists 'model' and/or 'app' once each, not {visibility!r}")
        ui["visibility"] = seen
    return ui


class UiTool(Tool):
    """A tool whose listing names its interface (``_meta.ui``, and ``_meta["ui/resourceUri"]``)."""

    __slots__ = ("ui",)

    def __init__(
        self, func: Callable[..., Any], *args: Any, ui: str | None, visibility: Sequence[str] | None, **options: Any
    ) -> None:
        super().__init__(func, *args, **options)
        #: The tool's ``_meta.ui``.
        self.ui = tool_ui(ui, visibility)

    def listing(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"ui": self.ui}
        if "resourceUri" in self.ui:
            meta[FLAT_RESOURCE_URI] = self.ui["resourceUri"]
        return {**super().listing(), "_meta": meta}


def _domains(member: str, value: object) -> list[str]:
    if type(value) not in (list, tuple) or not all(type(domain) is str and domain for domain in value):  # type: ignore[union-attr]
        raise ValueError(f"csp {member} is a list of origins, not {value!r}")
    return list(value)  # type: ignore[call-overload]


def resource_ui(
    csp: dict[str, Sequence[str]] | None,
    permissions: Sequence[str] | None,
    domain: str | None,
    prefers_border: bool | None,
) -> dict[str, Any]:
    """A resource's ``_meta.ui``, in the specification's names; ValueError."""
    ui: dict[str, Any] = {}
    if csp is not None:
        unknown = set(csp) - set(CSP_MEMBERS)
        if unknown:
            raise ValueError(f"csp members are {', '.join(CSP_MEMBERS)}, not {', '.join(sorted(unknown))}")
        ui["csp"] = {member: _domains(member, csp[member]) for member in CSP_MEMBERS if member in csp}
    if permissions is not None:
        asked = [permissions] if isinstance(permissions, str) else list(permissions)
        if any(name not in PERMISSIONS for name in asked):
            raise ValueError(f"permissions are among {', '.join(PERMISSIONS)}, not {permissions!r}")
        ui["permissions"] = {name: {} for name in PERMISSIONS if name in asked}
    if domain is not None:
        if type(domain) is not str or not domain:
            raise ValueError(f"domain is a host name, not {domain!r}")
        ui["domain"] = domain
    if prefers_border is not None:
        if type(prefers_border) is not bool:
            raise ValueError(f"prefers_border is True or False, not {prefers_border!r}")
        ui["prefersBorder"] = prefers_border
    return ui


def read_page(path: str | os.PathLike[str]) -> str:
    """The HTML text of the file ``path`` (UTF-8); OSError, or ValueError when it is not UTF-8."""
    with open(path, "rb") as file:
        data = file.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{os.fspath(path)}: an interface's HTML is UTF-8 text") from None


class UiResource(Resource):
    """An interface: HTML served from memory, its ``resources/read`` answer encoded once."""

    __slots__ = ("html", "ui", "answered")

    def __init__(self, uri: str, html: str, ui: dict[str, Any], **options: Any) -> None:
        super().__init__(check_uri(uri), lambda: html, mime_type=MCP_APP, **options)
        self.html = html
        #: The resource's ``_meta.ui`` (empty when it declares nothing).
        self.ui = ui
        entry: dict[str, Any] = {"uri": uri, "mimeType": MCP_APP, "text": html}
        if ui:
            entry["_meta"] = {"ui": ui}
        #: The ``resources/read`` result body.
        self.answered = b'{"contents":[' + dumps(entry) + b"]}"

    def listing(self) -> dict[str, Any]:
        entry = super().listing()
        if self.ui:
            entry["_meta"] = {"ui": self.ui}
        return entry

    def answer(self, params: dict[str, Any] | None, uri: str | None = None, values: dict[str, str] | None = None):
        return self.answered


class Apps(Extension):
    """The MCP Apps extension: advertised with the page type it serves; each named interface checked."""

    name = UI

    def __init__(self) -> None:
        #: The catalogues already built once: a change while serving is logged, not raised.
        self.built: weakref.WeakSet[Catalogue] = weakref.WeakSet()

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [MCP_APP]}

    def methods(self, catalogue: Catalogue) -> dict[str, Callable[[Any], Any]]:
        served = catalogue.resources.keys() | catalogue.templates.keys()
        for tool in catalogue.tools.values():
            uri = tool.ui.get("resourceUri") if isinstance(tool, UiTool) else None
            if uri is not None and uri not in served:
                problem = f"tool {tool.name!r} names the interface {uri!r}, which the app does not serve"
                if catalogue not in self.built:
                    raise ValueError(problem)
                log("warning", problem)
        self.built.add(catalogue)
        return {}
