"""``benchmarks/run.py --save`` publishes results only from a clean commit (checked before anything runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
OVERRIDE = "(--allow-dirty saves anyway; the report then names the commit with -dirty)"


def harness_copy(root: Path, in_git: bool) -> Path:
    """``root`` holding the stdio benchmark; with ``in_git``, as a git checkout with it committed."""
    for package in ("common", "stdio"):
        shutil.copytree(BENCHMARKS / package, root / "benchmarks" / package)
    shutil.copy(BENCHMARKS / "run.py", root / "benchmarks" / "run.py")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "harness"]) if in_git else ():
        subprocess.run(git + command, check=True, capture_output=True)
    return root


def refusal(root: Path, *args: str) -> list[str]:
    """The last lines of the usage error of ``run.py ARGS``, after checking it is one (exit 2, usage first)."""
    done = subprocess.run(
        [sys.executable, "benchmarks/run.py", *args], cwd=root, capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr.startswith("usage: run.py [-h] ")) == (2, "", True)
    return done.stderr.splitlines()[-3:]


def test_save_with_uncommitted_changes_is_refused(tmp_path: Path) -> None:
    root = harness_copy(tmp_path, in_git=True)
    with (root / "benchmarks" / "run.py").open("a") as file:
        file.write("# edited\n")
    assert refusal(root, "--quick", "--save") == [
        "run.py: error: --save publishes results, and published results come from a clean commit: "
        "commit (or stash) these changes first:",
        "M benchmarks/run.py",
        OVERRIDE,
    ]


def test_save_outside_git_is_refused(tmp_path: Path) -> None:
    root = harness_copy(tmp_path, in_git=False)
    assert refusal(root, "--update-readme")[-2:] == [
        "run.py: error: --save publishes results, and published results come from a clean commit: "
        "this is not a git checkout",
        OVERRIDE,
    ]
