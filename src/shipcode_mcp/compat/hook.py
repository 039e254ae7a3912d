"""The import hook of ``shipcode-mcp app.py``: the three APIs' modules resolve to shipcode-mcp's.

:func:`install` (called only by the command line, before it loads an app) puts a finder first on
``sys.meta_path``: ``mcp.server.fastmcp``, ``mcp.server.mcpserver`` and ``fastmcp``, with every
submodule of theirs an app imports (``mcp.server.fastmcp.prompts.base``, ``fastmcp.exceptions``,
``fastmcp.utilities.types`` ...), become modules holding the names of the compatible module of
:mod:`shipcode_mcp.compat`. Everything else (``mcp.types``, ``mcp.server.session``) is the installed
package. A process that does not call :func:`install` is not touched.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

#: Each API's package, the module of :mod:`shipcode_mcp.compat` that stands in for it and its submodules.
STAND_INS = {
    "mcp.server.fastmcp": "shipcode_mcp.compat.fastmcp_sdk1",
    "mcp.server.mcpserver": "shipcode_mcp.compat.mcpserver",
    "fastmcp": "shipcode_mcp.compat.fastmcp",
}


#: The parents of stand-ins that are the installed packages, made lazy: their ``__init__`` (the whole SDK, client
#: included: most of a framework app's start-up) runs when the app first asks one of them for a name, and
#: their submodules (``mcp.types``) are the installed ones meanwhile.
LAZY_PARENTS = ("mcp", "mcp.server")


class LazyParent(importlib.abc.Loader):
    """Loads an installed package without running its ``__init__`` until a name of it is asked for."""

    def __init__(self, real: importlib.machinery.ModuleSpec) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        real = self.real
        module.__file__ = real.origin
        module.__path__ = list(real.submodule_search_locations or [])

        def __getattr__(name: str) -> object:
            del module.__getattr__
            module.__spec__ = real
            module.__loader__ = real.loader
            real.loader.exec_module(module)  # the package's own __init__, in this very module
            return getattr(module, name)

        module.__getattr__ = __getattr__


class StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an API's modules and makes each one hold the names of its stand-in; notes which APIs were asked."""

    def __init__(self) -> None:
        #: The stand-in modules an app imported, in order.
        self.used: list[str] = []

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in LAZY_PARENTS:
            real = importlib.machinery.PathFinder.find_spec(fullname, path)
            if real is None or real.loader is None:
                return None
            return importlib.machinery.ModuleSpec(fullname, LazyParent(real), origin=real.origin, is_package=True)
        for package, stand_in in STAND_INS.items():
            # A submodule's name is lower-case: fastmcp.tools.tool.ToolResult is a name to look up, not a module.
            if fullname == package or (fullname.startswith(package + ".") and fullname.islower()):
                spec = importlib.machinery.ModuleSpec(fullname, self, is_package=True)
                spec.loader_state = stand_in
                return spec
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        stand_in = module.__spec__.loader_state
        source = importlib.import_module(stand_in)
        names = getattr(source, "__all__", None) or [name for name in vars(source) if not name.startswith("_")]
        module.__dict__.update({name: getattr(source, name) for name in names})
        module.__path__ = []  # a package: its submodules resolve here too
        if stand_in not in self.used:
            self.used.append(stand_in)


#: The finder installed in this process, or None.
installed: StandIn | None = None


def install() -> StandIn:
    """Put the finder first on ``sys.meta_path`` (once)."""
    global installed
    if installed is None:
        installed = StandIn()
        sys.meta_path.insert(0, installed)
    return installed


def api_used() -> str | None:
    """The API the loaded app was written for (its stand-in's ``FrameworkServer.API``), or None."""
    if installed is None or not installed.used:
        return None
    module = importlib.import_module(installed.used[0])
    return getattr(module, "API", None)
