"""Asking the client lives in one package, ``shipcode_mcp.asking``: no module outside it builds a
request to the client, numbers one, or names one by its method (its docstrings aside)."""

from __future__ import annotations

import ast
from pathlib import Path

from shipcode_mcp.asking.rounds import REQUEST_CAPABILITY

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "shipcode_mcp"
#: What only asking/ may write: the methods of the requests to the client, and the form of their ids.
ASKING_TEXT = {*REQUEST_CAPABILITY, b'"s%d"'}


def asking_text_outside(package: Path) -> list[str]:
    """``module:line`` of each string outside ``asking/`` that is one of :data:`ASKING_TEXT`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] == "asking":
            continue
        found.extend(
            f"{path.relative_to(package)}:{node.lineno}"
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and type(node.value) in (str, bytes) and node.value in ASKING_TEXT
        )
    return sorted(found)


def test_requests_to_the_client_are_built_only_in_the_asking_package() -> None:
    assert asking_text_outside(PACKAGE) == []


def test_a_request_to_the_client_built_elsewhere_is_found(tmp_path: Path) -> None:
    (tmp_path / "asking").mkdir()
    (tmp_path / "asking" / "rounds.py").write_text('ROOTS = {"method": "roots/list"}\n')
    (tmp_path / "session.py").write_text('"""Asks roots/list."""\n\nkey = b\'"s%d"\' % 1\nMETHOD = "roots/list"\n')
    assert asking_text_outside(tmp_path) == ["session.py:3", "session.py:4"]
