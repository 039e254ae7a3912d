"""The fixture the tests here share: the pinned npm packages, installed on first use."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import conformance


@pytest.fixture(scope="session")
def node() -> Path:
    """The Node 22 of the pinned install; skips, with the reason, when npm cannot reach its registry."""
    try:
        return conformance.install()
    except conformance.RegistryUnreachable as error:
        pytest.skip(str(error))
