"""The official suite's 10 ``tasks-*`` scenarios (the tasks extension, ``io.modelcontextprotocol/tasks``) pass
against ``app.py`` over HTTP on both engines, with its tasks kept in Redis and served by two processes
(``--processes 2``): a task made by one process is read, answered and cancelled by whichever process the
next request reaches. (``test_conformance.py`` runs them with the memory store, within the 2026-07-28 run.)

Each scenario runs alone (``--scenario NAME --force``: the suite runs extension scenarios only when asked).
``tasks-status-notifications`` is skipped by the suite itself (its harness waits for a rewrite): its one
``SKIPPED`` check is all it may report.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import conformance as harness
from support.redisserver import NO_REDIS, RedisServer, have_redis
from support.wire import engine_env
from test_conformance import TASK_SCENARIOS

#: What the suite skips, and why.
SKIPPED_BY_THE_SUITE = {
    "tasks-status-notifications": ["SKIPPED tasks-status-notifications"],
}


@pytest.mark.skipif(not have_redis(), reason=NO_REDIS)
def test_the_task_scenarios_pass_with_redis_and_two_processes(engine_name: str, node: Path, tmp_path: Path) -> None:
    pytest.importorskip("redis", reason="redis-py is not installed (pip install -e '.[test]')")
    redis = RedisServer()
    env = {**engine_env(engine_name), "CONFORMANCE_TASKS_REDIS": redis.url}
    results = tmp_path / "results"
    try:
        with harness.http_server([*harness.server_command(), "--processes", "2"], env, tmp_path / "server.log") as url:
            for scenario in TASK_SCENARIOS:
                command = [node, harness.SUITE, "server", "--url", url, "--scenario", scenario, "--force"]
                subprocess.run([*command, "--output-dir", results], capture_output=True, timeout=300, check=False)
        stored = redis.keys()
    finally:
        redis.stop()
    failures = harness.read_results(results)
    got = {name: sorted({failure.split(":")[0] for failure in failed}) for name, failed in failures.items()}
    assert got == {name: SKIPPED_BY_THE_SUITE.get(name, []) for name in TASK_SCENARIOS}, (
        "\n".join(f"{name}: {failed}" for name, failed in failures.items() if failed)
        + "\nserver log:\n"
        + (tmp_path / "server.log").read_text(errors="replace")[-3000:]
    )
    assert stored > 0  # the tasks were kept in Redis
