"""The package's structure: imports run one way, the framework never reaches the command line,
and serving imports only what it uses.

Every import counts, including those inside functions and under ``TYPE_CHECKING`` blocks
excepted (they never run). The compiled engine's imports are read from its sources in ``pyx/``: one
extension module whose parts are checked too (their size, their listing, their twins). The other
extension modules built from ``pyx/`` (:data:`EXTENSIONS`) are one ``.pyx`` each, checked the same way.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from support.wire import INIT_RESULT, engine_env, request, result

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "shipcode_mcp"
PYX_DIR = ROOT / "pyx"
PYX = PYX_DIR / "_engine_c.pyx"
#: The kinds of files the compiled engine is made of (generated .c and .html files are not among them).
PART_SUFFIXES = (".pyx", ".pxd", ".pxi", ".h")
#: The extension modules of ``pyx/`` other than the engine, each one file, by the module it builds.
EXTENSIONS = {"_headerscan_c.pyx": "transports.http._headerscan_c"}
#: Modules that make up the framework an app is written with.
FRAMEWORK = {
    "app", "handlers", "prompts", "templates", "catalogue", "methods", "context", "session", "deferred", "errors",
    "asking.rounds", "asking.legacy", "asking.state",
}  # fmt: skip


def _runtime_imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Dotted names (below ``shipcode_mcp``) imported by ``tree`` outside ``if TYPE_CHECKING:`` blocks.

    ``module`` is the importing module's dotted name (``transports.http.asgi``); a relative import
    is resolved from its package. Each import yields the module imported from and, for
    ``from X import y``, ``X.y`` too (``y`` may be a module); the graph keeps the names that are modules.
    ``from . import y`` imports the package it names as well (``__init__`` for the top one): a module
    that binds a sibling that way depends on its package, and the package importing it is a cycle.
    """
    found: set[str] = set()
    parts = module.split(".") if module else []
    package = parts if is_package else parts[:-1]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif (node.module or "").startswith("shipcode_mcp"):
                base = node.module.split(".")[1:]
            else:
                base = None
            if base is not None:
                found.add(".".join(base) or "__init__")
                found.update(".".join([*base, alias.name]) for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("shipcode_mcp."):
                    found.add(alias.name.split(".", 1)[1])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module or "__init__")
    return found


def engine_parts() -> list[Path]:
    """The files of the compiled engine, by name."""
    return sorted(path for path in PYX_DIR.iterdir() if path.suffix in PART_SUFFIXES and path.name not in EXTENSIONS)


def engine_source() -> str:
    """The text of every part of the compiled engine (its imports may stand in any of them)."""
    return "\n".join(path.read_text() for path in engine_parts())


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    graph = {}
    for path in package.rglob("*.py"):
        relative = path.relative_to(package).with_suffix("")
        is_package = relative.name == "__init__"
        name = ".".join(relative.parent.parts if is_package else relative.parts) or "__init__"
        graph[name] = _runtime_imports(ast.parse(path.read_text()), "" if name == "__init__" else name, is_package)
    modules = set(graph)
    pyx_imports = set(re.findall(r"^from shipcode_mcp\.([\w.]+) import", engine_source(), re.MULTILINE))
    graph["_engine_c"] = pyx_imports
    for name, module in EXTENSIONS.items():
        graph[module] = set(re.findall(r"^from shipcode_mcp\.([\w.]+) import", (PYX_DIR / name).read_text(), re.M))
    return {name: {target for target in targets if target in modules} for name, targets in graph.items()}


def cycles_in(graph: dict[str, set[str]]) -> list[str]:
    """Every cycle of the import graph, from each module on it."""
    cycles = []

    def walk(node: str, path: list[str]) -> None:
        for target in sorted(graph.get(node, ())):
            if target == path[0]:
                cycles.append(" -> ".join([*path, target]))
            elif target not in path and len(path) < 12:
                walk(target, [*path, target])

    for start in sorted(graph):
        walk(start, [start])
    return cycles


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert cycles_in(import_graph()) == []


def test_a_module_binding_a_sibling_through_its_package_is_a_cycle(tmp_path: Path) -> None:
    """A package whose ``__init__`` imports a module that writes ``from . import sibling``."""
    root = tmp_path / "pkg"
    (root / "http").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "http" / "__init__.py").write_text("def app():\n    from .asgi import App\n")
    (root / "http" / "asgi.py").write_text("from . import replies\nfrom .replies import reply\n")
    (root / "http" / "replies.py").write_text("")
    assert cycles_in(import_graph(root)) == ["http -> http.asgi -> http", "http.asgi -> http -> http.asgi"]


def test_the_framework_never_imports_the_command_line() -> None:
    graph = import_graph()
    reach = {}
    for start in FRAMEWORK:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for target in graph.get(node, ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        reach[start] = seen
    assert {name: "cli" in seen for name, seen in reach.items()} == dict.fromkeys(FRAMEWORK, False)


def test_the_compiled_engine_imports_no_private_name_of_the_pure_engine() -> None:
    source = engine_source()
    # Its comments name their pure twins (see below); no line of it imports the pure engine.
    assert re.findall(r"^.*\bimport\b.*_engine_py.*$", source, re.MULTILINE) == []
    imported = re.findall(r"^from shipcode_mcp\.\w+ import \(?([^)]*?)\)?$", source, re.MULTILINE | re.DOTALL)
    names = [name.strip() for group in imported for name in group.replace("\n", ",").split(",") if name.strip()]
    assert [name for name in names if name.startswith("_")] == []


def test_no_file_of_the_package_or_the_compiled_engine_is_over_800_lines() -> None:
    files = [*PACKAGE.rglob("*.py"), *engine_parts(), *(PYX_DIR / name for name in EXTENSIONS)]
    sizes = {str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in files}
    assert {name: size for name, size in sizes.items() if size > 800} == {}


def test_the_compiled_engine_is_one_module_whose_parts_the_layout_page_lists() -> None:
    """docs/architecture.md lists every part: the declarations (.pxd, .h) first, then the included
    parts in the order the .pyx includes them, then the .pyx; each .pxd is cimported, each header
    declared in a .pxd, and nothing else is brought in."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page.split("## The compiled engine in parts", 1)[1].split("\n| part | its job |\n| --- | --- |\n", 1)[1]
    rows = table.split("\n\n", 1)[0].splitlines()
    listed = [name for row in rows for name in re.findall(r"`([^`]+)`", row.split(" | ", 1)[0])]
    parts = [f"pyx/{path.name}" for path in engine_parts()]
    declarations = [name for name in listed if name.endswith((".pxd", ".h"))]
    source = PYX.read_text()
    included = [f"pyx/{name}" for name in re.findall(r'^include "([\w.]+)"$', source, re.MULTILINE)]
    cimported = {f"pyx/{name}.pxd" for name in re.findall(r"^from (\w+) cimport", source, re.MULTILINE)}
    pxds = [path.read_text() for path in PYX_DIR.glob("*.pxd")]
    headers = [name for text in pxds for name in re.findall(r'extern from "(\w+\.h)"', text)]
    declared = {f"pyx/{name}" for name in headers if (PYX_DIR / name).exists()}  # not Python.h and the like
    assert sorted(listed) == parts
    assert listed == [*declarations, *included, "pyx/_engine_c.pyx"]
    assert (cimported & set(parts), declared) == (
        {name for name in parts if name.endswith(".pxd")},
        {name for name in parts if name.endswith(".h")},
    )


def test_the_compiled_engine_keeps_no_DEF_and_no_C_in_strings() -> None:
    """Constants are typed or enums (Cython 3 deprecates DEF); C that Cython cannot express is in a header."""
    source = engine_source()
    assert re.findall(r"^\s*DEF\b.*$", source, re.MULTILINE) == []
    assert re.findall(r"extern from \*", source) == []


#: Compiled functions and their pure twins: each names the other (the compiled in its docstring or the
#: comment above it, the pure in its docstring or the comment above it). ``Engine``'s methods bear their
#: twins' names, as its docstring says.
TWINS = (
    ("pyx/_engine_c.pyx", "Engine", "shipcode_mcp._engine_py.Engine"),
    ("pyx/_engine_c.pyx", "_flush_soon", "shipcode_mcp._engine_py.flush_on_stop"),
    ("pyx/_engine_c.pyx", "_emit_value", "shipcode_mcp.results.tool_result"),
    ("pyx/fastpath.pxi", "_emit_contents", "shipcode_mcp.handlers.Resource.body"),
    ("pyx/number_text.pxi", "_number_text", "shipcode_mcp.jsontext.number_text"),
    ("pyx/number_text.pxi", "_repr_text", "shipcode_mcp.layouts.plain_text"),
    ("pyx/escape.pxi", "_write_escaped", "shipcode_mcp.jsontext.dumps"),
    ("pyx/escape.pxi", "_escaped_size", "shipcode_mcp.jsontext.dumps"),
    ("pyx/fdio.pxi", "_wait", "shipcode_mcp._engine_py._wait"),
    ("pyx/_headerscan_c.pyx", "plain_headers", "shipcode_mcp.transports.http._headerscan_py.plain_headers"),
    ("pyx/_headerscan_c.pyx", "_header_value", "shipcode_mcp.transports.http._headerscan_py.header_value"),
    ("pyx/_headerscan_c.pyx", "fast_fields", "shipcode_mcp.transports.http._headerscan_py.fast_fields"),
)


def _compiled_doc(path: str, name: str) -> str:
    """The docstring of a compiled function or class (its first lines after the signature)."""
    text = (ROOT / path).read_text()
    signature = rf"^\s*(?:cdef (?:class |[\w* ]+ )|def ){name}\b[^\"]*?:\n"  # over one line or more
    found = re.search(signature + r'\s*"""(.*?)"""', text, re.MULTILINE | re.DOTALL)
    assert found, f"{name} in {path}"
    return " ".join(found.group(1).split())


def _pure_doc(dotted: str) -> str:
    """The docstring of a pure function, class or method, or the ``#:`` comment above a module name."""
    module_name, _, name = dotted.rpartition(".")
    owner = None
    if module_name.count(".") > 1 and module_name.rpartition(".")[2][:1].isupper():  # a method
        module_name, _, owner = module_name.rpartition(".")
    path = PACKAGE.joinpath(*module_name.split(".")[1:]).with_suffix(".py")
    source = path.read_text()
    tree = ast.parse(source)
    scope = tree
    if owner:
        scope = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == owner)
    for node in scope.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return " ".join((ast.get_docstring(node) or "").split())
        if isinstance(node, ast.Assign) and [getattr(target, "id", None) for target in node.targets] == [name]:
            above = source.splitlines()[: node.lineno - 1]
            comments = []
            while above and above[-1].startswith("#:"):
                comments.insert(0, above.pop()[2:])
            return " ".join(" ".join(comments).split())
    raise AssertionError(dotted)


def test_each_compiled_function_with_a_pure_twin_names_it_and_is_named_back() -> None:
    unnamed = []
    for path, compiled, pure in TWINS:
        if pure not in _compiled_doc(path, compiled):
            unnamed.append(f"{path} {compiled} does not name {pure}")
        if compiled not in _pure_doc(pure) or path not in _pure_doc(pure):
            unnamed.append(f"{pure} does not name {compiled} in {path}")
    assert unnamed == []


#: The package's modules from the command line down, as docs/architecture.md's "Where things are" lists them.
LAYERS = (
    "__main__ __init__ cli target compat compat.hook compat.fastmcp compat.mcpserver compat.fastmcp_sdk1 compat.base "
    "compat.serving compat.messages compat.completions compat.fast defaults app transports transports.http "
    "transports.http.asgi transports.http.serve transports.http.connection transports.http.direct "
    "transports.http.posts "
    "transports.http.deadlines transports.http.auth transports.http.sessions transports.http.siblings "
    "transports.http.relay "
    "transports.http.served transports.http.stopping transports.http.exchange "
    "transports.http.headers transports.http._headerscan transports.http._headerscan_c "
    "transports.http._headerscan_py transports.http.guard transports.http.replies apps skills folder frontmatter "
    "transports.stdio "
    "transports.scheduler transports.signals "
    "transports.workers limits lifespan "
    "_engine _engine_py "
    "_engine_c lines catalogue methods tasks redisstore taskstore redisbus sharedbus bus eras prompts templates "
    "handlers "
    "session runtime "
    "asking asking.legacy deferred context context_values asking.rounds asking.state extensions "
    "typed schema results pagination media "
    "layouts errors protocol "
    "jsontext _log _version"
).split()


def module_named(path: str) -> str:
    """The module a path in the layout table names: ``transports/http/asgi.py`` is
    ``transports.http.asgi``, ``transports/http/__init__.py`` ``transports.http``."""
    if path.startswith("pyx/"):
        return EXTENSIONS.get(Path(path).name, Path(path).stem)
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def test_the_layout_page_lists_the_layers_in_order() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page.split("## Where things are", 1)[1].split("\n\n| module | its job |\n| --- | --- |\n", 1)[1]
    rows = table.split("\n\n", 1)[0].splitlines()
    listed = [module_named(name) for row in rows for name in re.findall(r"`([^`]+)`", row.split(" | ", 1)[0])]
    assert ["__main__", "__init__", *listed] == LAYERS


def test_every_import_goes_down_the_layers() -> None:
    graph = import_graph()
    assert sorted(graph) == sorted(LAYERS)
    upward = [f"{module} -> {target}" for module, targets in graph.items() for target in targets]
    upward = [edge for edge in upward if LAYERS.index(edge.split(" -> ")[1]) <= LAYERS.index(edge.split(" -> ")[0])]
    assert upward == []


#: Modules that serving the default catalogue from an empty command line has no use for: the
#: command-line parser and what it pulls in, type hints' machinery, and what only other apps need.
NOT_NEEDED_TO_SERVE = (
    "typing",
    "argparse",
    "gettext",
    "locale",
    "shutil",
    "asyncio",
    "jsonschema",
    "mimetypes",
    "shipcode_mcp.folder",
    "shipcode_mcp.transports.http",
    "shipcode_mcp.transports.workers",
    "shipcode_mcp.asking.legacy",
    "uvicorn",
    "shipcode_mcp.limits",
    "shipcode_mcp.prompts",
    "shipcode_mcp.transports.scheduler",
    "shipcode_mcp.templates",
    "shipcode_mcp.compat",
    "pydantic",
)


def test_serving_the_default_catalogue_imports_only_what_it_uses(engine_name: str) -> None:
    probe = (
        "import sys\n"
        "loaded = set(sys.modules)\n"
        "from shipcode_mcp.cli import main\n"
        "main([])\n"
        f"sys.stderr.write(repr(sorted(set({NOT_NEEDED_TO_SERVE!r}) & (set(sys.modules) - loaded))))\n"
    )
    # Without site (-S): nothing that this machine's start-up files import counts as already loaded.
    import orjson

    import shipcode_mcp

    paths = {str(Path(module.__file__).resolve().parent.parent) for module in (shipcode_mcp, orjson)}
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        input=request("initialize"),
        capture_output=True,
        env={**engine_env(engine_name), "PYTHONPATH": ":".join(sorted(paths))},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, result(INIT_RESULT), b"[]")


def test_the_framework_loads_no_transport_until_it_serves() -> None:
    """An app module (``from shipcode_mcp import ...`` and its decorators) loads neither transport;
    ``app.run()`` and ``app.http_app()`` import theirs when called."""
    probe = (
        "import sys\n"
        "from shipcode_mcp import Context, InputRequired, Server\n"
        "app = Server('probe')\n"
        "app.tool()(lambda text: text)\n"
        "app.catalogue()\n"
        "print(sorted(name for name in sys.modules if name.startswith('shipcode_mcp.transports')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert done.stdout == b"[]\n"
