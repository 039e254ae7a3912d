"""The skills extension (``io.modelcontextprotocol/skills``): a folder of skills served to clients.

A skills folder holds one directory per skill; each has a ``SKILL.md`` whose front matter (between
``---`` lines at its top, the YAML subset of :mod:`shipcode_mcp.frontmatter`) gives ``name`` (the
directory's name: lower-case letters, digits and single hyphens, at most 64) and ``description`` (at
most 1,024 characters),
and any files beside it. :func:`load_skills` reads every file once, within bounds (:data:`MAX_SKILLS`,
:data:`MAX_FILES`, :data:`MAX_FILE_BYTES`, :data:`MAX_TOTAL_BYTES`), refusing a symlink that
leads out of the folder; each file is then served from memory as the resource
``skill://<name>/<path>``, with its SHA-256. :class:`Skills` answers ``skills/list`` and
``skills/get`` (shapes in ``docs/extensions.md``).
"""

from __future__ import annotations

import os
import re
import stat
from hashlib import sha256
from urllib.parse import quote

from .extensions import Extension
from .folder import guess_mime_type, is_textual
from .frontmatter import read_front_matter
from .handlers import Resource
from .jsontext import dumps
from .protocol import INVALID_PARAMS, RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .catalogue import Catalogue

SKILLS = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
#: Bounds of one skills folder.
MAX_SKILLS = 1_000
MAX_FILES = 200  # per skill
MAX_FILE_BYTES = 1 << 20
MAX_TOTAL_BYTES = 64 << 20
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_MAX_NAME = 64
_MAX_DESCRIPTION = 1024


class SkillFile(Resource):
    """One file of a skill, read once; its listing names its SHA-256 in ``_meta``."""

    __slots__ = ("data", "digest")

    def __init__(self, uri: str, path: str, data: bytes, mime_type: str) -> None:
        text: str | bytes = data
        if is_textual(mime_type):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        super().__init__(uri, lambda: text, name=path, mime_type=mime_type)
        self.data = data
        self.digest = sha256(data).hexdigest()

    def entry(self) -> dict[str, Any]:
        """The file in ``skills/get``."""
        return {"uri": self.uri, "mimeType": self.mime_type, "size": len(self.data), "sha256": self.digest}

    def listing(self) -> dict[str, Any]:
        return {**super().listing(), "_meta": {SKILLS: {"sha256": self.digest}}}


class Skill:
    """One skill: its name, description and files (``SKILL.md`` first)."""

    __slots__ = ("name", "description", "files")

    def __init__(self, name: str, description: str, files: list[SkillFile]) -> None:
        self.name = name
        self.description = description
        self.files = files

    def summary(self) -> dict[str, Any]:
        """The skill in ``skills/list``."""
        main = self.files[0]
        return {"name": self.name, "description": self.description, "uri": main.uri, "sha256": main.digest}


def front_matter(text: str, where: str) -> dict[str, str]:
    """``name`` and ``description`` from the front matter opening ``SKILL.md`` (:mod:`shipcode_mcp.frontmatter`);
    ValueError naming ``where`` when it is missing or not in the subset read."""
    try:
        return read_front_matter(text, ("name", "description"))
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _read(path: str, where: str) -> bytes:
    """A file's bytes, at most :data:`MAX_FILE_BYTES`; ValueError when larger."""
    with open(path, "rb") as file:
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{where}: larger than {MAX_FILE_BYTES} bytes")
    return data


def _skill_files(root: str, directory: str, where: str) -> list[tuple[str, str]]:
    """``(relative path, real path)`` of a skill's regular files in path order; ValueError for a
    symlink leading out of the folder. Symlinks to directories are not followed."""
    prefix = root + os.sep
    found = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        for entry in (*dirnames, *filenames):
            path = os.path.join(dirpath, entry)
            real = os.path.realpath(path)
            if not real.startswith(prefix):
                raise ValueError(f"{where}: {os.path.relpath(path, directory)} is a symlink leading out of the folder")
            if entry in filenames and stat.S_ISREG(os.stat(real).st_mode):
                found.append((os.path.relpath(path, directory).replace(os.sep, "/"), real))
    return sorted(found, key=lambda pair: (pair[0] != SKILL_FILE, pair[0].split("/")))


def load_skills(directory: str | os.PathLike[str]) -> list[Skill]:
    """The skills of a folder, in name order; ValueError (or OSError) naming what is wrong."""
    root = os.path.realpath(directory)
    if not os.path.isdir(root):
        raise NotADirectoryError(f"{os.fspath(directory)}: not a folder")
    skills = []
    total = 0
    names = sorted(name for name in os.listdir(root) if os.path.isdir(os.path.join(root, name)))
    if len(names) > MAX_SKILLS:
        raise ValueError(f"{os.fspath(directory)}: more than {MAX_SKILLS} skills")
    for name in names:
        where = f"skill {name!r}"
        if os.path.islink(os.path.join(root, name)):
            raise ValueError(f"{where}: a skill's directory may not be a symlink")
        paths = _skill_files(root, os.path.join(root, name), where)
        if not paths or paths[0][0] != SKILL_FILE:
            raise ValueError(f"{where}: no {SKILL_FILE}")
        if len(paths) > MAX_FILES:
            raise ValueError(f"{where}: more than {MAX_FILES} files")
        files = []
        for path, real in paths:
            data = _read(real, f"{where}: {path}")
            total += len(data)
            if total > MAX_TOTAL_BYTES:
                raise ValueError(f"{os.fspath(directory)}: more than {MAX_TOTAL_BYTES} bytes of skills")
            uri = f"skill://{name}/" + "/".join(quote(part) for part in path.split("/"))
            files.append(SkillFile(uri, f"{name}/{path}", data, guess_mime_type(path) or "application/octet-stream"))
        fields = front_matter(files[0].data.decode("utf-8", "replace"), where)
        if fields.get("name") != name or not _NAME.fullmatch(name) or len(name) > _MAX_NAME:
            raise ValueError(f"{where}: its name must be the directory's, lower-case letters, digits and hyphens")
        description = fields.get("description", "")
        if not description or len(description) > _MAX_DESCRIPTION:
            raise ValueError(f"{where}: its description must be 1 to {_MAX_DESCRIPTION} characters")
        skills.append(Skill(name, description, files))
    return skills


class Skills(Extension):
    """``skills/list`` and ``skills/get`` over the skills added (:meth:`add`); their files are the app's resources."""

    name = SKILLS
    named_by = {"skills/get": "name"}

    def __init__(self) -> None:
        self.skills: dict[str, Skill] = {}

    def add(self, skills: list[Skill]) -> None:
        """Serve these skills too; ValueError for a name already served."""
        for skill in skills:
            if skill.name in self.skills:
                raise ValueError(f"the skill {skill.name!r} is already served")
        self.skills.update((skill.name, skill) for skill in skills)

    def methods(self, catalogue: Catalogue) -> dict[str, Callable[[Any], Any]]:
        listed = dumps({"skills": [skill.summary() for skill in self.skills.values()]})
        bodies = {
            name: dumps(
                {
                    **skill.summary(),
                    "content": skill.files[0].data.decode("utf-8", "replace"),
                    "files": [file.entry() for file in skill.files],
                }
            )
            for name, skill in self.skills.items()
        }

        def get(params: Any) -> bytes:
            name = params.get("name") if type(params) is dict else None
            if type(name) is not str:
                raise RpcError(INVALID_PARAMS, "Invalid params")
            body = bodies.get(name)
            if body is None:
                raise RpcError(INVALID_PARAMS, "Unknown skill", {"name": name})
            return body

        return {"skills/list": lambda params: listed, "skills/get": get}
