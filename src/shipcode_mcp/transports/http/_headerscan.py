"""Header scan selector: the compiled scan (``_headerscan_c``, built from ``pyx/_headerscan_c.pyx``) or
its pure twin (``_headerscan_py``), by the engine's rule (:func:`shipcode_mcp._engine.twin`:
``SHIPCODE_MCP_NO_EXTENSIONS``, ``SHIPCODE_MCP_REQUIRE_EXTENSIONS``, CPython only).

A module of its own, not a method of the engine: the engines know nothing of HTTP headers, and a
function here costs a request what a static method of the engine did (one call).
"""

from __future__ import annotations

from ..._engine import twin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._headerscan_py import (
        HEADERS_READ,
        IMPLEMENTATION,
        fast_fields,
        header_value,
        plain_headers,
        whole_request,
    )
else:
    _scan = twin(
        "shipcode_mcp.transports.http._headerscan_c",
        "shipcode_mcp.transports.http._headerscan_py",
        "the compiled header scan",
    )
    HEADERS_READ = _scan.HEADERS_READ
    IMPLEMENTATION: str = _scan.IMPLEMENTATION
    fast_fields = _scan.fast_fields
    header_value = _scan.header_value
    plain_headers = _scan.plain_headers
    whole_request = _scan.whole_request

__all__ = ["HEADERS_READ", "IMPLEMENTATION", "fast_fields", "header_value", "plain_headers", "whole_request"]
