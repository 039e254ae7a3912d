"""The package's structure: imports run one way, the framework never reaches the command line,
and serving imports only what it uses.

Every import counts, including those inside functions and under ``TYPE_CHECKING`` blocks
excepted (they never run). The compiled engine's imports are read from its ``.pyx`` source.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from wire import INIT_RESULT, engine_env, request, result

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "shipcode_mcp"
PYX = ROOT / "pyx" / "_engine_c.pyx"
#: Modules that make up the framework an app is written with.
FRAMEWORK = {"app", "handlers", "prompts", "templates", "catalogue", "context", "session", "errors", "runner"}


def _runtime_imports(tree: ast.AST, module: str, package: str = "") -> set[str]:
    """Package modules imported by ``tree`` outside ``if TYPE_CHECKING:`` blocks.

    ``package`` names the subpackage holding the module (``"http"``): its own modules are
    ``"http.<name>"``, the subpackage itself ``"http"``.
    """
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1 and package:  # the subpackage's own modules
                found.update(f"{package}.{(base or alias.name).split('.')[0]}" for alias in node.names)
                names = []
            elif node.level:
                names = [f"{base}" if base else alias.name for alias in node.names]
            elif base.startswith("shipcode_mcp"):
                rest = base[len("shipcode_mcp") :].lstrip(".")
                names = [rest] if rest else [alias.name for alias in node.names]
            else:
                names = []
            found.update(name.split(".")[0] for name in names if name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("shipcode_mcp."):
                    found.add(alias.name.split(".")[1])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    graph = {path.stem: _runtime_imports(ast.parse(path.read_text()), path.stem) for path in PACKAGE.glob("*.py")}
    for folder in sorted(path for path in PACKAGE.iterdir() if (path / "__init__.py").exists()):
        for path in folder.glob("*.py"):
            name = folder.name if path.stem == "__init__" else f"{folder.name}.{path.stem}"
            graph[name] = _runtime_imports(ast.parse(path.read_text()), name, folder.name)
    modules = set(graph)
    pyx_imports = set(re.findall(r"^from shipcode_mcp\.(\w+) import", PYX.read_text(), re.MULTILINE))
    graph["_engine_c"] = pyx_imports
    return {name: {target for target in targets if target in modules} for name, targets in graph.items()}


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph()
    cycles = []

    def walk(node: str, path: list[str]) -> None:
        for target in sorted(graph.get(node, ())):
            if target == path[0]:
                cycles.append(" -> ".join([*path, target]))
            elif target not in path and len(path) < 12:
                walk(target, [*path, target])

    for start in sorted(graph):
        walk(start, [start])
    assert cycles == []


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
    source = PYX.read_text()
    assert "_engine_py" not in source
    imported = re.findall(r"^from shipcode_mcp\.\w+ import \(?([^)]*?)\)?$", source, re.MULTILINE | re.DOTALL)
    names = [name.strip() for group in imported for name in group.replace("\n", ",").split(",") if name.strip()]
    assert [name for name in names if name.startswith("_")] == []


#: The package's modules from the command line down, as docs/architecture.md's "Where things are" lists them.
LAYERS = (
    "__main__ __init__ cli target defaults app "
    "http http.asgi http.posts http.deadlines http.auth http.sessions http.served http.exchange http.headers "
    "http.guard http.replies "
    "http.serve folder runner scheduler signals workers limits _engine _engine_py "
    "_engine_c lines catalogue eras prompts templates handlers session context mrtr requeststate schema results "
    "errors protocol "
    "jsontext _log _version"
).split()


def module_named(path: str) -> str:
    """The module a path in the layout table names: ``http/asgi.py`` is ``http.asgi``, ``http/__init__.py`` ``http``."""
    if path.startswith("pyx/"):
        return Path(path).stem
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
    "shipcode_mcp.http",
    "shipcode_mcp.workers",
    "uvicorn",
    "shipcode_mcp.limits",
    "shipcode_mcp.prompts",
    "shipcode_mcp.scheduler",
    "shipcode_mcp.templates",
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
