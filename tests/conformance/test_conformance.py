"""The official MCP conformance suite, pinned in ``package.json``, passes against ``app.py``, on both engines.

Over HTTP (``shipcode-mcp app.py --http 127.0.0.1:PORT``), three runs, each on both engines: every
2025-06-18 scenario (``--spec-version 2025-06-18``), and what the revisions 2025-11-25 and
2026-07-28 require (``--requirements``, which also runs, unscored, the scenarios still pending or
added after the release, and those of extensions). Over stdio, one more: what 2026-07-28 requires,
``stateless_bridge.mjs`` serving ``shipcode-mcp app.py`` to the suite, for what only the stdio
server does (one pipe carrying every request, its listen streams told apart by their
subscription id, cancelling by ``notifications/cancelled``). Installed on first use
(``conformance.install``); skipped, with the reason, only when npm cannot reach its registry.

Every scenario the suite runs must pass whole, except what :data:`EXCLUDED` lists with its reason:
the one tasks check the suite itself skips, and over stdio what judges the HTTP request headers
(which the bridge forwards without judging). An excluded check must still be the only thing its
scenario reports, so the list stays exact: a check that starts passing, or a new one that fails,
fails the test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import conformance
from support.wire import engine_env

HTTP_HEADERS = (
    "judges the HTTP request headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*) against the body: "
    "the work of an HTTP transport, which the bridge, forwarding bodies to the stdio server, does not do"
)
SKIPPED_BY_THE_SUITE = "the suite skips it: its harness waits for a rewrite around subscriptions/listen"
#: What the tasks extension's scenarios may report: the one check the suite skips.
TASK_EXCLUSIONS = {"tasks-status-notifications": {"SKIPPED tasks-status-notifications": SKIPPED_BY_THE_SUITE}}


@dataclass(frozen=True)
class Expected:
    """What one run of the suite must report: every scenario it runs, and what is excluded, with why."""

    scenarios: tuple[str, ...]
    #: Scenario -> reason: run, but its checks are not judged.
    excluded_scenarios: dict[str, str] = field(default_factory=dict)
    #: Scenario -> {"<STATUS> <check id>": reason}: the only checks of the scenario that may not pass.
    excluded_checks: dict[str, dict[str, str]] = field(default_factory=dict)


# The server scenarios of each run (conformance list --server --spec-version 2025-06-18, or
# --requirements <revision>), in groups.
EVERY_REVISION = (
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
)
WITH_INITIALIZE = (
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-call-with-logging",
    "tools-call-sampling",
    "tools-call-elicitation",
    "resources-subscribe",
    "resources-unsubscribe",
)
INPUT_REQUIRED = (
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
)
TASK_SCENARIOS = (  # the tasks extension's, run unscored with --requirements 2026-07-28
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
SCENARIOS_2025_06_18 = (*EVERY_REVISION, *WITH_INITIALIZE, "server-session-lifecycle")
SCENARIOS_2025_11_25 = (
    *EVERY_REVISION,
    *WITH_INITIALIZE,
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    # unscored: added after the release, and pending
    "server-session-lifecycle",
    "json-schema-2020-12",
    "server-sse-polling",
)
SCENARIOS_2026_07_28 = (
    *EVERY_REVISION,
    "server-stateless",
    "server-sse-multiple-streams",
    "sep-2164-resource-not-found",
    "dns-rebinding-protection",
    "caching",
    *INPUT_REQUIRED,
    # unscored: extensions, and pending
    *TASK_SCENARIOS,
    "json-schema-2020-12",
    "http-header-validation",
    "http-custom-header-server-validation",
)

# (transport, revision) -> what that run must report.
EXCLUDED = {
    ("http", "2025-06-18"): Expected(SCENARIOS_2025_06_18),
    ("http", "2025-11-25"): Expected(SCENARIOS_2025_11_25),
    ("http", "2026-07-28"): Expected(SCENARIOS_2026_07_28, excluded_checks=TASK_EXCLUSIONS),
    ("stdio", "2026-07-28"): Expected(
        SCENARIOS_2026_07_28,
        excluded_scenarios={
            "http-header-validation": HTTP_HEADERS,
            "http-custom-header-server-validation": HTTP_HEADERS,
        },
        excluded_checks={
            **TASK_EXCLUSIONS,
            "server-stateless": {"FAILURE sep-2575-http-server-header-mismatch-400": HTTP_HEADERS},
            "tasks-request-headers": {
                "FAILURE tasks-headers-reject-mismatched-method": HTTP_HEADERS,
                "FAILURE sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get": HTTP_HEADERS,
            },
        },
    ),
}


def verdicts(run: conformance.SuiteRun, expected: Expected) -> dict[str, list[str]]:
    """Scenario -> ``"<STATUS> <check id>"`` of each check that did not pass; ``["excluded"]`` if excluded."""
    return {
        name: ["excluded"] if name in expected.excluded_scenarios else sorted({f.split(":")[0] for f in failed})
        for name, failed in run.failures.items()
    }


@pytest.mark.parametrize(("transport", "revision"), list(EXCLUDED), ids=[f"{t}-{r}" for t, r in EXCLUDED])
def test_every_scenario_passes(transport: str, revision: str, engine_name: str, node: Path, tmp_path: Path) -> None:
    expected = EXCLUDED[transport, revision]
    run = conformance.run_suite(
        conformance.server_command(), engine_env(engine_name), tmp_path, conformance.SELECTIONS[revision], transport
    )
    wanted = {
        name: ["excluded"] if name in expected.excluded_scenarios else sorted(expected.excluded_checks.get(name, {}))
        for name in expected.scenarios
    }
    got = verdicts(run, expected)
    wrong = [name for name in sorted(set(wanted) | set(got)) if got.get(name) != wanted.get(name)]
    report = "\n".join(
        [f"{len(wrong)} of {len(wanted)} scenarios are not as expected: {', '.join(wrong)}"]
        + [f"  {name}: {'; '.join(run.failures.get(name, ['not run'])) or 'passed'}" for name in wrong]
        + ["server log, last lines:", *run.server_log.splitlines()[-30:]]
    )
    assert got == wanted, report
    if not expected.excluded_scenarios and not expected.excluded_checks:
        assert run.returncode == 0, run.output
