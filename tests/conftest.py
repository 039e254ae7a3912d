"""One fixture, two engines: every behaviour test runs on the compiled and the pure engine.

Tests that need the compiled engine carry the ``compiled`` mark (the ``compiled`` param of
``engine_name`` has it, and so have the tests that compare the two engines). They are
deselected only on request (``--no-compiled`` or ``SHIPCODE_MCP_NO_EXTENSIONS`` set), with one
summary line saying how many; otherwise a compiled engine that fails to import is an error,
and a server started for the compiled engine refuses to fall back to the pure one.

Only fixtures and hooks live here; the messages, expected bytes and engine loading they use
are in ``support/wire.py``, what the real-client tests share in ``support/clients.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from support.clients import TS_SDK
from support.redisserver import NO_REDIS, RedisServer, have_redis
from support.wire import default_catalogue, engine, headerscan, run_server


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--no-compiled", action="store_true", help="deselect the tests that need the compiled engine")


def pytest_configure(config: pytest.Config) -> None:
    # To report a failing example, hypothesis imports libcst, which warns where an old
    # mypy_extensions is installed: with warnings as errors that would abort the whole run.
    config.addinivalue_line("filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")


def compiled_skipped(config: pytest.Config) -> bool:
    return bool(config.getoption("--no-compiled") or os.environ.get("SHIPCODE_MCP_NO_EXTENSIONS"))


_DESELECTED = pytest.StashKey[int]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the ``compiled`` tests when the compiled engine is not wanted."""
    if not compiled_skipped(config):
        return
    kept = [item for item in items if item.get_closest_marker("compiled") is None]
    deselected = [item for item in items if item.get_closest_marker("compiled") is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
    config.stash[_DESELECTED] = len(deselected)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    count = config.stash.get(_DESELECTED, None)
    if count is not None:
        terminalreporter.write_line(
            f"compiled engine not under test (--no-compiled or SHIPCODE_MCP_NO_EXTENSIONS): "
            f"{count} compiled-engine tests deselected"
        )


@pytest.fixture(params=[pytest.param("compiled", marks=pytest.mark.compiled), "pure"])
def engine_name(request: pytest.FixtureRequest) -> str:
    """The engine under test: ``"compiled"`` or ``"pure"``."""
    return request.param


@pytest.fixture
def engine_module(engine_name: str) -> ModuleType:
    """The engine module under test (import errors fail the test)."""
    return engine(engine_name)


@pytest.fixture
def served_engine(engine_module: ModuleType, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """HTTP bodies judged by the engine under test, and headers read by its header scan (in-process ASGI
    apps made after it is set up)."""
    from shipcode_mcp.transports.http import asgi, headers, served

    monkeypatch.setattr(served, "Engine", engine_module.Engine)
    scan = headerscan(engine_module.IMPLEMENTATION)
    monkeypatch.setattr(headers, "plain_headers", scan.plain_headers)
    monkeypatch.setattr(asgi, "fast_fields", scan.fast_fields)
    try:
        from shipcode_mcp.transports.http import connection
    except ImportError:  # no httptools: no connection of --http's own
        pass
    else:
        monkeypatch.setattr(connection, "whole_request", scan.whole_request)
    return engine_module


@pytest.fixture
def soak(request: pytest.FixtureRequest) -> None:
    """Skip unless soak tests were asked for (``-m soak`` or ``SHIPCODE_MCP_SOAK=1``)."""
    expression = request.config.getoption("markexpr") or ""
    selected = "soak" in expression and "not soak" not in expression
    if not (selected or os.environ.get("SHIPCODE_MCP_SOAK")):
        pytest.skip("soak test: run with -m soak or SHIPCODE_MCP_SOAK=1")


@pytest.fixture
def run(engine_module: ModuleType) -> Callable[..., bytes]:
    """``run(data, chunks=None, catalogue=None, max_message_bytes=None) -> bytes`` in-process.

    Feeds ``data`` whole (or split at the offsets in ``chunks``) to a fresh engine, then
    ends the input, and returns everything the engine wrote.
    """

    def run(
        data: bytes,
        chunks: Iterable[int] | None = None,
        catalogue=None,
        max_message_bytes: int | None = None,
    ) -> bytes:
        kwargs = {} if max_message_bytes is None else {"max_message_bytes": max_message_bytes}
        engine = engine_module.Engine(catalogue or default_catalogue(), **kwargs)
        out = []
        start = 0
        for cut in sorted(chunks or ()):
            out.append(engine.feed(data[start:cut]))
            start = cut
        out.append(engine.feed(data[start:]))
        out.append(engine.finish())
        return b"".join(out)

    return run


@pytest.fixture
def run_process(engine_name: str) -> Callable[..., subprocess.CompletedProcess]:
    """``run_process(data, *args, timeout=60)``: the real server as a subprocess over pipes."""

    def run_process(data: bytes, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return run_server(engine_name, data, *args, timeout=timeout)

    return run_process


@pytest.fixture(scope="session")
def ts_client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The path of ``ts_client.mjs`` beside an npm install of the TypeScript SDK."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("the TypeScript SDK client needs node and npm, not found on PATH")
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("ts-sdk") if cache is not None else tmp_path_factory.mktemp("ts-sdk")
    if not (folder / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error", TS_SDK],
                capture_output=True,
                timeout=300,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {TS_SDK} timed out (npm registry unreachable?)")
        if done.returncode != 0:
            reason = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            pytest.skip(f"npm install {TS_SDK} failed (npm registry unreachable?): {reason[0]}")
    script = folder / "ts_client.mjs"
    clients = Path(__file__).parent / "clients"
    shutil.copyfile(clients / "ts_client.mjs", script)
    shutil.copyfile(clients / "ts_events.mjs", folder / "ts_events.mjs")  # what the scripts share
    return script


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    """A real ``redis-server`` of the test's own (skipped without it, or without redis-py)."""
    if not have_redis():
        pytest.skip(NO_REDIS)
    pytest.importorskip("redis", reason="redis-py is not installed (pip install -e '.[test]')")
    server = RedisServer()
    yield server
    server.stop()
