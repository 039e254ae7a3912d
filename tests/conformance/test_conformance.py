"""The official MCP conformance suite, pinned in ``package.json``, passes whole against ``app.py``, on both engines.

The suite speaks only Streamable HTTP: ``bridge.mjs`` serves ``shipcode-mcp app.py`` to it,
one server process per session. Installed on first use (``harness.install``); skipped, with
the reason, only when npm cannot reach its registry.
"""

from __future__ import annotations

from pathlib import Path

import harness
import pytest
from wire import engine_env

# Every server scenario of the suite for 2025-06-18 (``conformance list --server --spec-version 2025-06-18``).
SCENARIOS = (
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
)


@pytest.fixture(scope="module")
def node() -> Path:
    try:
        return harness.install()
    except harness.RegistryUnreachable as error:
        pytest.skip(str(error))


def test_every_scenario_passes(engine_name: str, node: Path, tmp_path: Path) -> None:
    run = harness.run_suite(harness.server_command(), engine_env(engine_name), tmp_path)
    verdicts = {name: "; ".join(failed) or "passed" for name, failed in run.failures.items()}
    failing = [name for name in SCENARIOS if verdicts.get(name) != "passed"]
    report = "\n".join(
        [f"{len(failing)} of {len(SCENARIOS)} scenarios fail: {', '.join(failing)}"]
        + [f"  {name}: {verdicts.get(name, 'not run')}" for name in failing]
        + ["bridge log (with the servers' stderr), last lines:", *run.bridge_log.splitlines()[-30:]]
    )
    assert verdicts == dict.fromkeys(SCENARIOS, "passed"), report
    assert run.returncode == 0, run.output
