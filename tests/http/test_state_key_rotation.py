"""Rotating the ``requestState`` key across two server processes, as across machines, without downtime.

Mid-rotation one server runs with the ring ``new,old`` (sealing under ``new``) and another still with ``old``: a
round started on the old one finishes on the new one, and on itself; a round started on the new one finishes there,
but not on a server that does not have ``new`` yet (-32602 ``Invalid requestState``), which is why every server
gets the new key as a second key of its ring before any seals with it.
"""

from __future__ import annotations

from support.httpserver import HttpServer
from test_serve import round_trip

NEW, OLD = "new-key-" + "n" * 24, "old-key-" + "o" * 24
GREETED = (
    b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}],"resultType":"complete",'
    b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"web","version":"1.0.0"}}}}\n'
)
REFUSED = b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid requestState"}}\n'


def test_a_round_crosses_servers_while_the_key_rotates(engine_name: str) -> None:
    rotated = HttpServer(engine_name, env={"SHIPCODE_MCP_STATE_KEY": f"{NEW},{OLD}"})
    behind = HttpServer(engine_name, env={"SHIPCODE_MCP_STATE_KEY": OLD})
    try:
        answers = [
            round_trip(behind, rotated),
            round_trip(behind, behind),
            round_trip(rotated, rotated),
            round_trip(rotated, behind),
        ]
    finally:
        assert [rotated.stop(), behind.stop()] == [0, 0]
    assert answers == [GREETED, GREETED, GREETED, REFUSED]
