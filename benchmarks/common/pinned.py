"""Pinned benchmark-only packages installed with pip into git-ignored folders: once, and again only when a pin
changes (the pins installed are kept in a stamp file beside them)."""

from __future__ import annotations

import sys
from pathlib import Path

from common import ROOT, log, run_quiet

STAMP = ".pins"
INSTALL_SECONDS = 900


def pins(requirements: Path) -> str:
    """The pins a requirement file stands for: its text and that of the files it includes (``-r``)."""
    text = requirements.read_text()
    included = [line.split(None, 1)[1] for line in text.splitlines() if line.startswith("-r ")]
    return text + "".join(pins(requirements.parent / name) for name in included)


def pip_install(argv: list, requirements: Path, where: Path) -> str:
    """Run ``argv`` (a pip install) with ``-r requirements`` unless ``where`` already holds these pins; the
    problem ("" when done)."""
    stamp = where / STAMP
    wanted = pins(requirements)
    if stamp.is_file() and stamp.read_text() == wanted:
        return ""
    log(f"installing {requirements.relative_to(ROOT)} into {where.relative_to(ROOT)}")
    code, out = run_quiet(argv + ["-q", "-r", str(requirements)], timeout=INSTALL_SECONDS, cwd=requirements.parent)
    if code != 0:
        return f"pip install -r {requirements.name} failed: {out[-300:]}"
    stamp.write_text(wanted)
    return ""


def target_dir(requirements: Path, where: Path) -> str:
    """Install the requirements into the folder ``where`` with ``pip install --target``; the problem or ""."""
    where.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "install", "--upgrade", "--target", str(where)]
    return pip_install(argv, requirements, where)
