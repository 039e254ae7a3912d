"""The line rules hand on each message of a run of lines (``lines.envelopes``, how the pure engine judges
what it frames): told apart as ``lines.envelope`` tells one body, blank lines not handed on, and the run
stopped where an answer asks input to pause, to go on from the next line when handed the rest."""

from __future__ import annotations

import pytest
from support.wire import default_catalogue, notification, request

from shipcode_mcp import lines

MAX = 64
_MISSING = lines._MISSING

PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
#: Lines of every kind, each with the parts it is handed on as (None: a blank line, not handed on).
TOLD = [
    (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', (lines.REQUEST, b"7", "ping", _MISSING, PING)),
    (b"", None),
    (
        b'{"jsonrpc":"2.0","id":"a","method":"x","params":[1]}',
        (lines.REQUEST, b'"a"', "x", [1], {**PING, "id": "a", "method": "x", "params": [1]}),
    ),
    (b" \t\r", None),
    (
        b'{"jsonrpc":"2.0","method":"n","params":{}}',
        (lines.NOTIFICATION, None, "n", {}, {"jsonrpc": "2.0", "method": "n", "params": {}}),
    ),
    (b'{"id":3,"result":{}}', (lines.RESPONSE, b"3", None, _MISSING, {"id": 3, "result": {}})),
    (
        b'{"jsonrpc":"1.0","id":6,"method":"ping"}',
        (lines.INVALID, b"6", None, _MISSING, {**PING, "jsonrpc": "1.0", "id": 6}),
    ),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', (lines.INVALID, None, None, _MISSING, {**PING, "id": True})),
    (b"[1]", (lines.INVALID, None, None, _MISSING, [1])),
    (b"{", (lines.NOT_JSON, None, None, _MISSING, None)),
    (
        b'{"jsonrpc":"2.0","id":8,"method":"x","params":{"n":1e400}}',
        (lines.REQUEST, b"8", "x", {"n": 1e400}, {**PING, "id": 8, "method": "x", "params": {"n": 1e400}}),
    ),
    (b"1e400x", (lines.NOT_JSON, None, None, _MISSING, None)),  # refused for its number, then not JSON
    (b" " * (MAX + 9), None),
    (b"x" * (MAX + 9), (lines.INVALID, None, None, _MISSING, None)),
    (b'{"jsonrpc":"2.0","id":9,"method":"ping"}\r', (lines.REQUEST, b"9", "ping", _MISSING, {**PING, "id": 9})),
]


def test_each_line_is_handed_on_told_apart_and_a_blank_one_is_not() -> None:
    handed: list = []
    ran_through = lines.envelopes(iter([line for line, _ in TOLD]), MAX, lambda *parts: handed.append(parts))
    assert (ran_through, handed) == (False, [told for _, told in TOLD if told is not None])


@pytest.mark.parametrize("stop", [b"2", None])  # a request, or the refused line with no id
def test_handing_on_stops_where_an_answer_pauses_and_goes_on_from_the_next_line(stop: bytes | None) -> None:
    remaining = iter([request("ping", rid=1), b"", b"[2]" if stop is None else request("ping", rid=2), b"x", b"ok"])
    seen: list = []

    def then(kind: int, id_bytes: bytes | None, *_: object) -> bool:
        seen.append((kind, id_bytes))
        return id_bytes == stop and kind != lines.NOT_JSON

    assert lines.envelopes(remaining, MAX, then) is True
    stopped = (lines.REQUEST if stop else lines.INVALID, stop)
    assert seen == [(lines.REQUEST, b"1"), stopped]
    assert lines.envelopes(remaining, MAX, then) is False
    assert seen == [(lines.REQUEST, b"1"), stopped, (lines.NOT_JSON, None), (lines.NOT_JSON, None)]


def test_one_body_is_told_apart_as_a_run_of_lines_hands_it_on() -> None:
    """``lines.envelope`` gives what ``envelopes`` hands on, and a blank body as BLANK."""
    for line, told in TOLD:
        parts = lines.envelope(line, MAX)
        assert parts == (told or (lines.BLANK, None, None, _MISSING, None))


def test_an_engine_judges_the_lines_of_a_read_as_it_judges_each_line_alone(engine_module) -> None:
    data = b"".join(line + b"\n" for line, _ in TOLD) + notification("notifications/initialized") + request("ping")
    fed, alone = (engine_module.Engine(default_catalogue(), MAX) for _ in range(2))
    expected = b"".join(alone.message(line) for line in data.split(b"\n"))
    assert fed.feed(data) == expected
    assert expected.count(b"\n") == 11  # every request and every refused line answered, and nothing else
