"""``benchmarks/run.py --save`` publishes results only from a clean commit (checked before anything runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def checkout(tmp_path: Path) -> Path:
    """A git checkout holding the benchmark harness, committed."""
    shutil.copytree(BENCHMARKS / "harness", tmp_path / "benchmarks" / "harness")
    shutil.copy(BENCHMARKS / "run.py", tmp_path / "benchmarks" / "run.py")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "harness"]):
        subprocess.run(git + command, check=True, capture_output=True)
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "benchmarks/run.py", *args], cwd=root, capture_output=True, text=True, timeout=60, check=False
    )


USAGE_HEAD = "usage: run.py [-h] "


def test_save_with_uncommitted_changes_is_refused(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    with (root / "benchmarks" / "run.py").open("a") as file:
        file.write("# edited\n")
    done = run(root, "--quick", "--save")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(USAGE_HEAD)
    assert done.stderr.splitlines()[-3:] == [
        "run.py: error: --save publishes results, and published results come from a clean commit: "
        "commit (or stash) these changes first:",
        "M benchmarks/run.py",
        "(--allow-dirty saves anyway; the report then names the commit with -dirty)",
    ]


def test_save_outside_git_is_refused(tmp_path: Path) -> None:
    shutil.copytree(BENCHMARKS / "harness", tmp_path / "benchmarks" / "harness")
    shutil.copy(BENCHMARKS / "run.py", tmp_path / "benchmarks" / "run.py")
    done = run(tmp_path, "--update-readme")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(USAGE_HEAD)
    assert done.stderr.splitlines()[-2:] == [
        "run.py: error: --save publishes results, and published results come from a clean commit: "
        "this is not a git checkout",
        "(--allow-dirty saves anyway; the report then names the commit with -dirty)",
    ]
