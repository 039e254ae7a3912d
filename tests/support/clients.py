"""What the real-client tests share: outcomes as a client decodes them, step events, session checks.

The tests drive the example apps with the official Python and TypeScript SDK clients; each
session yields the server's identity and one outcome (with the events seen) per step.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TS_SDK = "@modelcontextprotocol/sdk@1"


def load_example(name: str) -> Any:
    """The ``app`` of ``examples/<name>.py``, loaded in this process to compare listings."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


# -- outcomes as the client decodes them ------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def failure(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": True}


def ok(result: dict[str, Any]) -> dict[str, Any]:
    return {"ok": result}


def ts_outcome(outcome: dict[str, Any]) -> dict[str, Any]:
    """The TypeScript SDK prefixes error messages with ``MCP error <code>: ``; strip it."""
    if "error" in outcome:
        code, message = outcome["error"]["code"], outcome["error"]["message"]
        return {"error": {"code": code, "message": message.removeprefix(f"MCP error {code}: ")}}
    return outcome


# -- sessions with events -----------------------------------------------------------------------


def check_session(out: dict[str, Any], identity: dict[str, Any], steps: list, outcome=lambda outcome: outcome) -> None:
    """The session's identity, then each step's outcome and events, in order, whole."""
    assert {
        "serverInfo": out["serverVersion"],
        "capabilities": out["capabilities"],
        "instructions": out["instructions"],
    } == identity
    for (kind, params, expected, events), got in zip(steps, out["steps"], strict=True):
        assert {"outcome": outcome(got["outcome"]), "events": got["events"]} == {
            "outcome": expected,
            "events": events,
        }, (kind, params)


class Events:
    """What the client saw during the current step, with a way to wait for more."""

    def __init__(self, wait_limit: float) -> None:
        self.seen: list[dict[str, Any]] = []
        self._wake: Any = None
        self._wait_limit = wait_limit

    def record(self, event: dict[str, Any]) -> None:
        self.seen.append(event)
        if self._wake is not None:
            self._wake.set()

    async def wait_for(self, count: int) -> bool:
        """Wait until ``count`` events were seen; False if they did not come within the guard."""
        import anyio

        with anyio.move_on_after(self._wait_limit):
            while len(self.seen) < count:
                self._wake = anyio.Event()
                await self._wake.wait()
        self._wake = None
        return len(self.seen) >= count

    def take(self) -> list[dict[str, Any]]:
        seen, self.seen = self.seen, []
        return seen
