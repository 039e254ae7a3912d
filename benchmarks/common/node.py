"""The benchmarks' one Node project: ``package.json`` and its lock, installed into ``benchmarks/.node/`` once.

Every Node peer (the stdio and HTTP TypeScript SDK peers, the realistic workload's Node server) runs from beside
that ``node_modules``, where node's module resolution looks.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from common import HERE, NODE_DIR, ROOT, log, run_quiet

INSTALLED = NODE_DIR / ".installed-lock"  # the lock that was installed, to install again when it changes


def install() -> str:
    """``npm ci`` of the locked packages into ``.node/`` unless done with this lock; the problem, or ""."""
    if not shutil.which("node") or not shutil.which("npm"):
        return "node and npm not found"
    lock = (HERE / "package-lock.json").read_text()
    if INSTALLED.is_file() and INSTALLED.read_text() == lock:
        return ""
    log(f"installing the Node peers' packages into {NODE_DIR.relative_to(ROOT)} (npm ci)")
    NODE_DIR.mkdir(exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / name, NODE_DIR / name)
    code, out = run_quiet(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, timeout=600)
    if code != 0:
        return "npm could not install the Node peers' packages: " + out[-300:]
    INSTALLED.write_text(lock)
    return ""


def beside_packages(script: Path) -> Path:
    """``script`` copied into ``.node/``, beside the packages it imports; its new path."""
    copy = NODE_DIR / script.name
    shutil.copyfile(script, copy)
    return copy


def version(package: str) -> str:
    """The installed version of ``package`` ("" when not installed)."""
    try:
        return json.loads((NODE_DIR / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return ""


def versions() -> dict:
    """The installed version of each package that ``package.json`` names."""
    names = json.loads((HERE / "package.json").read_text())["dependencies"]
    return {name: found for name in names if (found := version(name))}
