"""Loading the app named on the command line: ``path/to/file.py[:ATTR]`` or ``package.module[:ATTR]``."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .app import Server


class TargetError(Exception):
    """The app named on the command line cannot be served (exit status 2)."""


def load_target(target: str, hosts: bool = False) -> Server:
    """The :class:`~shipcode_mcp.app.Server` named ``path/to/file.py[:ATTR]`` or ``package.module[:ATTR]``.

    With ``hosts``, an ASGI application named by ``:ATTR`` (a Starlette or FastAPI app that mounts a
    server's ``streamable_http_app()``) is returned as it is, for ``--http`` to serve.

    ``ATTR`` defaults to ``app`` and may be dotted (``module:holder.app``). A file is run as a
    module named after its stem, with its folder first on ``sys.path`` (so it can import its
    neighbours); a module is imported with the working directory first on ``sys.path``, as
    ``python -m`` does. Raises :class:`TargetError` with a one-line reason; for an exception
    raised by the app's own code it names where, and ``--log-level debug`` logs the traceback.
    """
    import importlib

    from .app import Server

    spec, colon, attribute = target.rpartition(":")
    if not colon:
        spec, attribute = target, "app"
    named = bool(colon)
    if not spec or not attribute or not all(part.isidentifier() for part in attribute.split(".")):
        raise TargetError(f"invalid target {target!r}: expected path/to/file.py[:ATTR] or package.module[:ATTR]")
    is_file = spec.endswith(".py") or os.sep in spec or "/" in spec
    if not is_file and os.path.isdir(spec) and not os.path.isfile(os.path.join(spec, "__init__.py")):
        is_file = True  # a plain folder, not a package: reported as a folder below
    try:
        if is_file:
            module = _load_file(spec)
        else:
            if not all(part.isidentifier() for part in spec.split(".")):
                raise TargetError(f"invalid module name {spec!r} in target {target!r}")
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(spec)
    except TargetError:
        raise
    except ModuleNotFoundError as error:
        if not is_file and error.name and (spec == error.name or spec.startswith(error.name + ".")):
            raise TargetError(f"cannot import {spec!r}: no module named {error.name!r}") from None
        raise app_failure("load", target, error) from None
    except (Exception, SystemExit) as error:
        raise app_failure("load", target, error) from None
    value: object = module if named else find_server(module)
    for part in attribute.split(".") if value is module else ():
        try:
            value = getattr(value, part)
        except AttributeError:
            found = sorted(name for name, item in vars(module).items() if isinstance(item, Server))
            hint = f" (it has: {', '.join(found)})" if found else ""
            raise TargetError(f"{spec!r} has no attribute {attribute!r}{hint}") from None
    if isinstance(value, _FUNCTION) and not isinstance(value, Server):
        value = call_factory(value, f"{spec}:{attribute}")
    if hosts and named and is_host_app(value):
        return value  # type: ignore[return-value]
    if not isinstance(value, Server):
        raise TargetError(f"{spec}:{attribute} is a {type(value).__name__}, not a shipcode_mcp.Server")
    return value


#: The names the server object of an app usually has, in the order they are looked for.
SERVER_NAMES = ("app", "mcp", "server")
#: The names of factories that build it.
FACTORY_NAMES = ("create_server", "create_app", "create_mcp", "make_server", "get_server", "build_server")
_FUNCTION = type(load_target)


def find_server(module: object) -> object:
    """The server of a module loaded without ``:ATTR``: ``app``, ``mcp`` or ``server`` when one is a
    :class:`~shipcode_mcp.app.Server`, else the only one there is, else a factory's (a function named like
    ``create_server``, or the only one annotated to return a server), else the module itself (to report)."""
    from .app import Server

    items = vars(module)
    for name in SERVER_NAMES:
        if isinstance(items.get(name), Server):
            return items[name]
    servers = [item for item in items.values() if isinstance(item, Server)]
    if len(servers) == 1:
        return servers[0]
    for name in FACTORY_NAMES:
        if isinstance(items.get(name), _FUNCTION):
            return items[name]
    factories = [
        item
        for item in items.values()
        if isinstance(item, _FUNCTION)
        and item.__module__ == getattr(module, "__name__", None)
        and _returns_server(item, items)
    ]
    return factories[0] if len(factories) == 1 else module


def _returns_server(func: object, names: dict[str, object]) -> bool:
    """Whether a function is annotated to return a server (the annotation a class or the name of one)."""
    from .app import Server

    hint = getattr(func, "__annotations__", {}).get("return")
    if isinstance(hint, str):
        hint = names.get(hint)
    return isinstance(hint, type) and issubclass(hint, Server)


def is_host_app(value: object) -> bool:
    """Whether ``value`` is an ASGI application of its own (an instance with ``__call__``, not a server)."""
    from .app import Server

    return not isinstance(value, (Server, type, _FUNCTION)) and callable(value)


def call_factory(factory: object, where: str) -> object:
    """What a factory returns (awaited when it is ``async def``); TargetError if it needs arguments or raises."""
    import inspect

    try:
        made = factory()
        if inspect.iscoroutine(made):
            import asyncio

            made = asyncio.run(made)
    except Exception as error:
        raise app_failure("call", where, error) from None
    return made


def _load_file(path: str):  # -> ModuleType
    """Run a Python file as a fresh module."""
    import importlib.util

    if os.path.isdir(path):
        raise TargetError(
            f"{path!r} is a folder: name a Python file in it (path/to/file.py[:ATTR]) "
            "or a module (package.module[:ATTR])"
        )
    if not os.path.isfile(path):
        raise TargetError(f"no such file: {path!r}")
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    # A stem that names a standard module (json.py, concurrent.py) must not shadow it.
    shadows = stem in sys.modules or stem in sys.stdlib_module_names
    name = stem if stem.isidentifier() and not shadows else "shipcode_mcp_target"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot load {path!r} as Python")
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def app_failure(action: str, target: str, error: BaseException) -> TargetError:
    """The one-line error for an app whose own code raised ``error`` while being loaded or compiled.

    The line names the exception and the last place outside this package where it was raised;
    ``--log-level debug`` logs the whole traceback first.
    """
    import traceback

    from ._log import log

    log("debug", "".join(traceback.format_exception(error)).rstrip())
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith(("<", here + os.sep))
    ]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames and not isinstance(error, SyntaxError) else ""
    return TargetError(f"cannot {action} {target!r}: {type(error).__name__}: {error}{where}")
