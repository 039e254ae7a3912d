"""A folder served as resources, on both engines: listing, reading, and nothing outside it.

The folder is built in a temporary directory; expected answers are computed from its real
path and compared whole.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import orjson
import pytest
from support.wire import error, not_found, read, request, result

from shipcode_mcp import Server
from shipcode_mcp.folder import DEFAULT_MAX_RESOURCE_BYTES, guess_mime_type, scan_folder

FILES: dict[str, bytes] = {
    "a.txt": b"alpha\n",
    "notes.md": "# Notes – été\n".encode(),
    "data.json": b'{"k":1}',
    "README": b"plain text without an extension\n",
    "blob.bin": b"\x00\x01\x02binary",
    "latin.txt": b"caf\xe9",
    "image.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "sub/deep/c.txt": b"deep",
    "with space é.txt": b"spaced",
    ".hidden": b"dot file",
}
# (relative name, mimeType, text or None for a blob), in listing order.
LISTING = [
    (".hidden", "text/plain", "dot file"),
    ("README", "text/plain", "plain text without an extension\n"),
    ("a.txt", "text/plain", "alpha\n"),
    ("blob.bin", "application/octet-stream", None),
    ("data.json", "application/json", '{"k":1}'),
    ("image.png", "image/png", None),
    ("latin.txt", "text/plain", None),
    ("notes.md", "text/markdown", "# Notes – été\n"),
    ("sub/deep/c.txt", "text/plain", "deep"),
    ("with space é.txt", "text/plain", "spaced"),
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``tmp_path/root`` (the served folder) beside ``tmp_path/outside``."""
    root = tmp_path / "root"
    for name, data in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_bytes(b"secret")
    (outside / "deep" / "c.txt").write_bytes(b"not deep")
    (root / "link-inside.txt").symlink_to("a.txt")
    (root / "link-out.txt").symlink_to(outside / "secret.txt")
    (root / "link-out-relative.txt").symlink_to("../outside/secret.txt")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    (root / "dangling").symlink_to(root / "nowhere")
    os.mkfifo(root / "fifo")
    return root


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def contents(path: Path, mime_type: str, text: str | None) -> dict:
    entry = {"uri": uri(path), "mimeType": mime_type}
    if text is None:
        entry["blob"] = base64.b64encode(path.read_bytes()).decode()
    else:
        entry["text"] = text
    return {"contents": [entry]}


def folder_app(*folders: Path, max_bytes: int | None = None) -> Server:
    app = Server("folder-tests")
    for folder in folders:
        app.add_resource_folder(folder, max_bytes)
    return app


def test_listing(run, tree: Path) -> None:
    expected = {"resources": [{"uri": uri(tree / name), "name": name, "mimeType": mime} for name, mime, _ in LISTING]}
    assert run(request("resources/list", rid=1), catalogue=folder_app(tree).catalogue()) == result(
        orjson.dumps(expected), rid=1
    )


def test_uris_are_percent_encoded_real_paths(tree: Path) -> None:
    resources = {resource.name: resource for resource in scan_folder(tree)}
    assert resources["with space é.txt"].uri == Path(tree, "with space é.txt").resolve().as_uri()
    assert resources["with space é.txt"].uri.endswith("/root/with%20space%20%C3%A9.txt")


@pytest.mark.parametrize(("name", "mime_type", "text"), LISTING, ids=[entry[0] for entry in LISTING])
def test_reading_each_file(run, tree: Path, name: str, mime_type: str, text: str | None) -> None:
    out = run(read(uri(tree / name), rid=7), catalogue=folder_app(tree).catalogue())
    assert out == result(orjson.dumps(contents(tree / name, mime_type, text)), rid=7)


def test_the_folder_given_through_a_symlink_is_served_by_its_real_path(run, tree: Path) -> None:
    alias = tree.parent / "alias"
    alias.symlink_to(tree, target_is_directory=True)
    catalogue = folder_app(alias).catalogue()
    out = run(
        read(uri(tree / "a.txt"), rid=1) + read((alias / "a.txt").absolute().as_uri(), rid=2), catalogue=catalogue
    )
    assert out == result(orjson.dumps(contents(tree / "a.txt", "text/plain", "alpha\n")), rid=1) + not_found(2)


OUTSIDE_URIS = [
    "secret",
    "dotdot",
    "dotdot encoded",
    "symlink out",
    "symlink dir",
    "relative",
    "etc passwd",
    "no scheme",
    "fifo",
]


def outside_uri(kind: str, tree: Path) -> str:
    return {
        "secret": uri(tree.parent / "outside" / "secret.txt"),
        "dotdot": uri(tree) + "/../outside/secret.txt",
        "dotdot encoded": uri(tree) + "/%2E%2E/outside/secret.txt",
        "symlink out": (tree / "link-out.txt").absolute().as_uri(),
        "symlink dir": (tree / "linkdir" / "secret.txt").absolute().as_uri(),
        "relative": "file:a.txt",
        "etc passwd": "file:///etc/passwd",
        "no scheme": str(tree / "a.txt"),
        "fifo": (tree / "fifo").absolute().as_uri(),
    }[kind]


@pytest.mark.parametrize("kind", OUTSIDE_URIS)
def test_nothing_outside_the_folder_is_read(run, tree: Path, kind: str) -> None:
    assert run(read(outside_uri(kind, tree), rid=3), catalogue=folder_app(tree).catalogue()) == not_found(3)


# -- re-checked at read time -------------------------------------------------------------------


def swap_for_escaping_symlink(tree: Path) -> None:
    target = tree / "a.txt"
    target.unlink()
    target.symlink_to(tree.parent / "outside" / "secret.txt")


def swap_directory_for_escaping_symlink(tree: Path) -> None:
    (tree / "sub" / "deep" / "c.txt").unlink()
    (tree / "sub" / "deep").rmdir()
    (tree / "sub").rmdir()
    (tree / "sub").symlink_to(tree.parent / "outside", target_is_directory=True)


def swap_for_fifo(tree: Path) -> None:
    (tree / "a.txt").unlink()
    os.mkfifo(tree / "a.txt")


def swap_for_directory(tree: Path) -> None:
    (tree / "a.txt").unlink()
    (tree / "a.txt").mkdir()


def swap_root_for_symlink(tree: Path) -> None:
    tree.rename(tree.parent / "moved")
    tree.symlink_to(tree.parent / "moved", target_is_directory=True)


CHANGES = {
    "file replaced by an escaping symlink": (swap_for_escaping_symlink, "a.txt"),
    "directory replaced by an escaping symlink": (swap_directory_for_escaping_symlink, "sub/deep/c.txt"),
    "file removed": (lambda tree: (tree / "a.txt").unlink(), "a.txt"),
    "file replaced by a fifo": (swap_for_fifo, "a.txt"),
    "file replaced by a directory": (swap_for_directory, "a.txt"),
    "folder replaced by a symlink": (swap_root_for_symlink, "a.txt"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_changes_after_start_up_are_rechecked_at_read_time(run, tree: Path, change: str) -> None:
    alter, name = CHANGES[change]
    catalogue = folder_app(tree).catalogue()
    target = uri(tree / name)
    alter(tree)
    assert run(read(target, rid=4) + request("ping", rid=5), catalogue=catalogue) == not_found(4) + result("{}", rid=5)


def test_a_file_changed_in_place_is_read_afresh(run, tree: Path) -> None:
    catalogue = folder_app(tree).catalogue()
    (tree / "a.txt").write_bytes(b"changed")
    assert run(read(uri(tree / "a.txt"), rid=1), catalogue=catalogue) == result(
        orjson.dumps(contents(tree / "a.txt", "text/plain", "changed")), rid=1
    )


# -- size cap ----------------------------------------------------------------------------------


def test_size_cap(run, tree: Path, capsys) -> None:
    catalogue = folder_app(tree, max_bytes=6).catalogue()
    data = read(uri(tree / "a.txt"), rid=1) + read(uri(tree / "data.json"), rid=2) + request("ping", rid=3)
    expected = (
        result(orjson.dumps(contents(tree / "a.txt", "text/plain", "alpha\n")), rid=1)
        + error(-32603, "Resource too large", rid=2)
        + result("{}", rid=3)
    )
    assert run(data, catalogue=catalogue) == expected
    assert "larger than the resource size cap (6 bytes)" in capsys.readouterr().err


def test_a_file_that_grows_past_the_cap_is_refused(run, tree: Path) -> None:
    catalogue = folder_app(tree, max_bytes=10).catalogue()
    (tree / "a.txt").write_bytes(b"x" * 11)
    assert run(read(uri(tree / "a.txt"), rid=1), catalogue=catalogue) == error(-32603, "Resource too large", rid=1)


def test_empty_file_and_zero_cap(run, tree: Path) -> None:
    (tree / "empty.txt").write_bytes(b"")
    catalogue = folder_app(tree, max_bytes=0).catalogue()
    data = read(uri(tree / "empty.txt"), rid=1) + read(uri(tree / "a.txt"), rid=2)
    expected = result(orjson.dumps(contents(tree / "empty.txt", "text/plain", "")), rid=1) + error(
        -32603, "Resource too large", rid=2
    )
    assert run(data, catalogue=catalogue) == expected


def test_default_cap_is_16_mib() -> None:
    assert DEFAULT_MAX_RESOURCE_BYTES == 16 * 1024 * 1024


# -- several sources ---------------------------------------------------------------------------


def test_folders_add_to_the_apps_own_resources_and_duplicates_are_listed_once(run, tree: Path) -> None:
    app = Server("mixed")

    @app.resource("mem://first", mime_type="text/plain")
    def first() -> str:
        return "first"

    app.add_resource_folder(tree / "sub")
    added = app.add_resource_folder(tree)
    assert len(added) == len(LISTING) - 1  # sub/deep/c.txt came with the first folder
    expected = {
        "resources": [
            {"uri": "mem://first", "name": "first", "mimeType": "text/plain"},
            {"uri": uri(tree / "sub/deep/c.txt"), "name": "deep/c.txt", "mimeType": "text/plain"},
            *({"uri": uri(tree / n), "name": n, "mimeType": m} for n, m, _ in LISTING if n != "sub/deep/c.txt"),
        ]
    }
    assert run(request("resources/list", rid=1), catalogue=app.catalogue()) == result(orjson.dumps(expected), rid=1)


def test_missing_or_non_folder_is_refused(tree: Path) -> None:
    with pytest.raises(FileNotFoundError):
        scan_folder(tree / "missing")
    with pytest.raises(NotADirectoryError):
        scan_folder(tree / "a.txt")


def test_mime_types_come_from_the_builtin_table() -> None:
    assert guess_mime_type("a.txt") == "text/plain"
    assert guess_mime_type("a.YAML") == "application/yaml"
    assert guess_mime_type("a.md") == "text/markdown"
    assert guess_mime_type("Makefile") is None
