"""The machine and the versions a report was measured with."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
from pathlib import Path

import orjson

from common import ROOT, node, run_quiet


def uncommitted_changes() -> str | None:
    """``git status`` of the tracked files that differ from the commit ("" when clean); None outside git."""
    code, changes = run_quiet(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])
    return changes if code == 0 else None


def machine_info(specs: list) -> dict:
    info = {
        "date_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.release()}",
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        mem = Path("/proc/meminfo").read_text().split("\n", 1)[0].split()
        info["memory_gib"] = round(int(mem[1]) / 1024 / 1024, 1)
    except (OSError, IndexError, ValueError):
        pass
    try:
        info["loadavg_start"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    versions = {"orjson": orjson.__version__}
    from importlib import metadata

    for dist in ("shipcode-mcp", "uvloop", "mcp", "fastmcp", "matplotlib", "Cython"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    if shutil.which("node"):
        versions["node"] = run_quiet(["node", "--version"])[1]
    if sdk := node.version("@modelcontextprotocol/sdk"):
        versions["@modelcontextprotocol/sdk"] = sdk
    info["engines"] = {spec.name: spec.engine for spec in specs if spec.group == "shipcode" and spec.available}
    code, commit = run_quiet(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    info["git_commit"] = commit + ("-dirty" if uncommitted_changes() else "") if code == 0 else "none"
    info["versions"] = versions
    return info
