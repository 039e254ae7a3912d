"""The runtime contract (``shipcode_mcp.runtime.Runtime``): both runtimes have every member it
declares, with the same parameters, coroutine or not as it says; ``Session.runtime`` is typed by it."""

from __future__ import annotations

import inspect

import pytest

from shipcode_mcp.runtime import Runtime
from shipcode_mcp.session import Session
from shipcode_mcp.transports.http.exchange import HttpRuntime
from shipcode_mcp.transports.scheduler import Scheduler

#: The members the contract declares, in the order it declares them.
MEMBERS = ["defer", "cancel", "response", "send", "run_blocking", "request"]


def shape(member: object) -> tuple[list[tuple[str, inspect._ParameterKind]], bool]:
    """A method's parameters (names and kinds, ``self`` included) and whether it is a coroutine function."""
    parameters = inspect.signature(member).parameters.values()
    return [(parameter.name, parameter.kind) for parameter in parameters], inspect.iscoroutinefunction(member)


def breaches(implementation: type) -> list[str]:
    """Where ``implementation`` falls short of :class:`Runtime`: each member missing or shaped otherwise."""
    found = []
    for name in MEMBERS:
        member = getattr(implementation, name, None)
        if not inspect.isfunction(member):
            found.append(f"{implementation.__name__}.{name} is missing")
        elif shape(member) != shape(getattr(Runtime, name)):
            found.append(f"{implementation.__name__}.{name}{inspect.signature(member)} is not {name} of Runtime")
    return found


def test_the_contract_declares_the_six_calls_a_session_makes() -> None:
    declared = [name for name, value in vars(Runtime).items() if inspect.isfunction(value) and name[0] != "_"]
    assert declared == MEMBERS


@pytest.mark.parametrize("implementation", [Scheduler, HttpRuntime])
def test_each_runtime_has_every_member_of_the_contract(implementation: type) -> None:
    assert breaches(implementation) == []


def test_a_runtime_without_one_member_breaches_the_contract() -> None:
    lacking = type("Lacking", (), {name: getattr(HttpRuntime, name) for name in MEMBERS if name != "cancel"})
    assert breaches(lacking) == ["Lacking.cancel is missing"]


def test_a_session_names_its_runtime_by_the_contract() -> None:
    source = inspect.getsource(Session.__init__)
    assert [line.strip() for line in source.splitlines() if "self.runtime" in line] == [
        "self.runtime: Runtime | None = None"
    ]
