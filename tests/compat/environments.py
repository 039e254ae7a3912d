"""The referee frameworks: one virtual environment per framework, at pinned versions, made once and reused.

``requirements/NAME.in`` names the framework at one exact version; ``requirements/NAME.txt`` pins
everything it installs (pydantic's error texts are part of what the transcripts hold, so its
version is pinned too). Environments are made into ``envs/NAME/`` (git-ignored) from the ``.txt``
file and remade when that file changes.

    python tests/compat/environments.py            # make the missing environments
    python tests/compat/environments.py --refresh  # re-resolve each .in from PyPI and rewrite the .txt pins
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements"
CACHE = HERE / "envs"

#: The environments, and the API an app is written for that each one referees.
FRAMEWORKS = {
    "mcp1": "sdk-fastmcp",  # mcp 1.x: from mcp.server.fastmcp import FastMCP
    "mcp2": "sdk-mcpserver",  # mcp 2.x: from mcp.server.mcpserver import MCPServer
    "fastmcp2": "fastmcp",  # fastmcp 2.x: from fastmcp import FastMCP
    "fastmcp4": "fastmcp",  # fastmcp 4.x: the same import, a newer API underneath
}

INSTALL_TIMEOUT = 600


class RegistryUnreachable(Exception):
    """pip could not install an environment (PyPI unreachable, or a pin withdrawn); the message says why."""


def frameworks_for(api: str) -> list[str]:
    """The environments that referee apps written for ``api``."""
    return [name for name, served in FRAMEWORKS.items() if served == api]


def _pins(name: str) -> Path:
    return REQUIREMENTS / f"{name}.txt"


def _stamp(requirements: Path) -> str:
    return hashlib.sha256(requirements.read_bytes()).hexdigest()


def _pip(python: Path, *args: str) -> None:
    try:
        done = subprocess.run(
            [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args],
            capture_output=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise RegistryUnreachable(f"pip install {' '.join(args)} timed out (PyPI unreachable?)") from error
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise RegistryUnreachable(f"pip install {' '.join(args)} failed (PyPI unreachable?): {reason[0]}")


def _make(folder: Path, requirements: Path) -> None:
    """A fresh virtual environment in ``folder`` with ``requirements`` installed."""
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    _pip(folder / "bin" / "python", "install", "-r", str(requirements))


def python(name: str) -> Path:
    """The interpreter of environment ``name``, made (or remade after a change of pins) on first use."""
    pins = _pins(name)
    folder = CACHE / name
    interpreter = folder / "bin" / "python"
    stamp_file = folder / "pins.sha256"
    CACHE.mkdir(exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once make it once
        if interpreter.exists() and stamp_file.exists() and stamp_file.read_text() == _stamp(pins):
            return interpreter
        _make(folder, pins)
        stamp_file.write_text(_stamp(pins))
    return interpreter


def version(name: str) -> str:
    """The framework's pinned version, as ``requirements/NAME.in`` names it (``mcp==1.30.0``)."""
    return (REQUIREMENTS / f"{name}.in").read_text().strip()


def refresh(name: str) -> None:
    """Resolve ``NAME.in`` afresh and write every installed distribution's exact version to ``NAME.txt``."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / name
        _make(folder, REQUIREMENTS / f"{name}.in")
        frozen = subprocess.run(
            [str(folder / "bin" / "python"), "-m", "pip", "freeze", "--exclude-editable"],
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    header = f"# {version(name)} and everything it installs: python tests/compat/environments.py --refresh\n"
    _pins(name).write_text(header + frozen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh", action="store_true", help="re-resolve the .in files and rewrite the .txt pins")
    parser.add_argument("names", nargs="*", help=f"environments (default: all of {', '.join(FRAMEWORKS)})")
    options = parser.parse_args()
    unknown = set(options.names) - FRAMEWORKS.keys()
    if unknown:
        parser.error(f"unknown environments: {', '.join(sorted(unknown))}")
    for name in options.names or FRAMEWORKS:
        if options.refresh:
            refresh(name)
        print(name, python(name))


if __name__ == "__main__":
    main()
