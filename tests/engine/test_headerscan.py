"""HTTP headers read apart from the line engines: the header scan's twins, picked as the engine is, give the
same answers."""

from __future__ import annotations

import pytest
from support.wire import headerscan
from test_engine_selection import python, selector_env

# -- the header scan: compiled by default, the same answers from both twins ---------------------------------


@pytest.mark.compiled
def test_the_compiled_header_scan_is_loaded_by_default() -> None:
    from shipcode_mcp.transports.http import _headerscan

    assert (_headerscan.IMPLEMENTATION, _headerscan.plain_headers.__module__) == (
        "compiled",
        "shipcode_mcp.transports.http._headerscan_c",
    )


SELECTED = "from shipcode_mcp.transports.http import _headerscan\nprint(_headerscan.IMPLEMENTATION)\n"
UNIMPORTABLE = "import sys; sys.modules['shipcode_mcp.transports.http._headerscan_c'] = None\n"


def test_the_header_scan_is_picked_by_the_engines_rule() -> None:
    pure = python(SELECTED, selector_env(NO_EXTENSIONS="1"))
    fallback = python(UNIMPORTABLE + SELECTED, selector_env())
    refused = python(UNIMPORTABLE + SELECTED, selector_env(REQUIRE_EXTENSIONS="1"))
    assert (pure.returncode, pure.stdout, fallback.returncode, fallback.stdout) == (0, b"pure\n", 0, b"pure\n")
    assert (refused.returncode, refused.stdout) == (1, b"")
    assert refused.stderr.splitlines()[-1] == (
        b"ImportError: SHIPCODE_MCP_REQUIRE_EXTENSIONS is set, but the compiled header scan cannot be imported "
        b"(import of shipcode_mcp.transports.http._headerscan_c halted; None in sys.modules); reinstall with a "
        b"C compiler, or unset SHIPCODE_MCP_REQUIRE_EXTENSIONS to allow the pure engine"
    )


def test_both_twins_read_the_same_header_names() -> None:
    assert headerscan("compiled").HEADERS_READ is headerscan("pure").HEADERS_READ


MODERN = {b"mcp-protocol-version": b"2026-07-28", b"mcp-method": b"tools/call"}


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ({**MODERN, b"mcp-name": b"echo"}, (b"2026-07-28", b"tools/call", b"echo")),
        (MODERN, (b"2026-07-28", b"tools/call", None)),  # no name: compared only where a method needs none
        ({**MODERN, b"mcp-name": b" \techo\t "}, (b"2026-07-28", b"tools/call", b"echo")),  # trimmed
        ({b"mcp-protocol-version": b" 2026-07-28", b"mcp-method": b"ping "}, (b"2026-07-28", b"ping", None)),
        ({b"mcp-method": b"ping"}, None),  # no version
        ({b"mcp-protocol-version": b"2026-07-28"}, None),  # no method
        ({**MODERN, b"mcp-name": b"=?base64?ZWNobw==?="}, None),  # encoded: HTTP's checks decode it
        ({**MODERN, b"mcp-name": b"\xc3\xa9cho"}, None),  # not visible ASCII
        ({**MODERN, b"mcp-method": b"tools/\x00call"}, None),
        ({**MODERN, b"mcp-name": "echo"}, None),  # not bytes
        ({}, None),
    ],
)
def test_the_values_the_fast_path_compares(engine_name: str, first: dict, expected: tuple | None) -> None:
    assert headerscan(engine_name).fast_fields(first) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"text/html", b"text/html"),
        (b"\t a b \t", b"a b"),
        (b"   ", b""),
        (b"", b""),
        (b"caf\xc3\xa9", None),
        (b"a\x7fb", None),
        (b"a\rb", None),
        ("text", None),
        (None, None),
    ],
)
def test_a_header_value_is_trimmed_or_refused(engine_name: str, value: object, expected: bytes | None) -> None:
    assert headerscan(engine_name).header_value(value) == expected
