"""The catalogue publishes each route's kind, in both eras; the compiled engine builds its tables from
them, and each engine says whether it has a fast path."""

from __future__ import annotations

import re
from pathlib import Path

from shipcode_mcp import Context, Server
from shipcode_mcp.catalogue import RouteKind

PYX = Path(__file__).resolve().parents[2] / "pyx"
C, T, R, H = RouteKind.CONSTANT, RouteKind.TOOL_CALL, RouteKind.READ, RouteKind.HANDLER


def every_kind_of_route() -> Server:
    """An app serving every method there is: prompts, completions, subscriptions, logging and both eras."""
    app = Server(
        "kinds",
        resource_subscriptions=True,
        protocol_versions=("2026-07-28", "2025-11-25", "2025-06-18"),
        state_key="route-kinds-key-of-thirty-two-bytes",
    )

    @app.tool()
    def echo(text: str, ctx: Context) -> str:
        return text

    @app.prompt()
    def hello(name: str) -> str:
        return f"Hello {name}"

    @app.completion(prompt="hello")
    def names(argument: str, value: str, chosen: dict) -> list[str]:
        return ["Ada"]

    @app.resource("note://a")
    def note() -> str:
        return "a"

    return app


def test_a_catalogue_gives_every_route_of_either_era_its_kind() -> None:
    catalogue = every_kind_of_route().catalogue()
    assert catalogue.route_kinds == {
        "initialize": H,
        "ping": C,
        "tools/list": C,
        "tools/call": T,
        "resources/list": C,
        "resources/read": R,
        "resources/templates/list": C,
        "prompts/list": C,
        "prompts/get": H,
        "completion/complete": H,
        "resources/subscribe": H,
        "resources/unsubscribe": H,
        "logging/setLevel": H,
    }
    assert catalogue.modern.route_kinds == {
        "server/discover": C,
        "tools/list": C,
        "resources/list": C,
        "resources/templates/list": C,
        "prompts/list": C,
        "tools/call": T,
        "resources/read": R,
        "prompts/get": H,
        "completion/complete": H,
    }
    assert list(catalogue.route_kinds) == list(catalogue.routes)


def test_the_kinds_follow_the_app_when_it_changes() -> None:
    app = Server("kinds")
    catalogue = app.catalogue()
    kinds = (catalogue.route_kinds, catalogue.modern.route_kinds)
    assert [era.get("prompts/get") for era in kinds] == [None, None]

    @app.prompt()
    def hello() -> str:
        return "Hello"

    catalogue.refresh()
    kinds = (catalogue.route_kinds, catalogue.modern.route_kinds)
    assert [era.get("prompts/get") for era in kinds] == [H, H]


def test_the_compiled_engine_reads_the_kinds_it_is_given() -> None:
    """Its tables map the catalogue's kinds, each one, and compare no handler to find one."""
    tables = (PYX / "tables.pxi").read_text()
    assert re.findall(r"CatalogueKind\.(\w+): R_\w+", tables) == ["CONSTANT", "TOOL_CALL", "READ", "HANDLER", "READ"]
    assert re.findall(r"== catalogue\.|\.handler ==", tables) == []


def test_each_engine_says_whether_it_has_a_fast_path(engine_name: str) -> None:
    from support.wire import engine

    assert engine(engine_name).Engine.fast_path is (engine_name == "compiled")
