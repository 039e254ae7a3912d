"""Each message parsed once: the line rules tell it apart (``lines.envelope``), an HTTP POST is routed by
that parse and the engine judges the same parse (``Engine.judge``), with the answers a line gets."""

from __future__ import annotations

import pytest
from support.httpwire import http, json_reply, modern_body, modern_headers, seen, within
from support.wire import INIT_RESULT, default_catalogue, engine, request, result

from shipcode_mcp import Server, defaults, lines
from shipcode_mcp.protocol import DEFAULT_MAX_MESSAGE_BYTES, INVALID_REQUEST_NULL_LINE, PARSE_ERROR_LINE


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', (lines.REQUEST, b"7", "ping", lines._MISSING)),
        (b'{"jsonrpc":"2.0","id":"a","method":"x","params":[1]}', (lines.REQUEST, b'"a"', "x", [1])),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', (lines.NOTIFICATION, None, "n", lines._MISSING)),
        (b'{"jsonrpc":"2.0","id":3,"result":{}}', (lines.RESPONSE, b"3", None, lines._MISSING)),
        (b'{"id":4,"result":{}}', (lines.RESPONSE, b"4", None, lines._MISSING)),  # a response needs no jsonrpc
        (b'{"jsonrpc":"2.0","id":5}', (lines.INVALID, b"5", None, lines._MISSING)),
        (b'{"jsonrpc":"1.0","id":6,"method":"ping"}', (lines.INVALID, b"6", None, lines._MISSING)),
        (b'{"jsonrpc":"2.0","id":6,"method":"ping","params":3}', (lines.INVALID, b"6", None, lines._MISSING)),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', (lines.INVALID, None, None, lines._MISSING)),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', (lines.INVALID, None, None, lines._MISSING)),
        (b"[1]", (lines.INVALID, None, None, lines._MISSING)),
        (b"{", (lines.NOT_JSON, None, None, lines._MISSING)),
        (b" \t\r", (lines.BLANK, None, None, lines._MISSING)),
    ],
)
def test_the_line_rules_tell_a_message_apart(body: bytes, expected: tuple) -> None:
    kind, id_bytes, method, params, _ = lines.envelope(body, DEFAULT_MAX_MESSAGE_BYTES)
    if kind == lines.NOTIFICATION:
        method = method[0]
    assert (kind, id_bytes, method, params) == expected


@pytest.mark.parametrize(
    ("body", "answer"),
    [
        (
            b'{"jsonrpc":"2.0","id":5}',
            b'{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request"}}\n',
        ),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST_NULL_LINE),
        (b"{", PARSE_ERROR_LINE),
        (b"  ", b""),
    ],
)
def test_a_refused_message_is_answered_alike_on_a_line_and_by_its_parse(run, engine_module, body, answer) -> None:
    kind, id_bytes, *_ = lines.envelope(body, DEFAULT_MAX_MESSAGE_BYTES)
    judged = engine_module.Engine(default_catalogue()).judge(lines.envelope(body, DEFAULT_MAX_MESSAGE_BYTES))
    assert (lines.refusal(kind, id_bytes), judged, run(body + b"\n")) == (answer, answer, answer)


def test_the_engine_judges_a_parse_as_it_judges_the_line(engine_module) -> None:
    bodies = [request("initialize"), request("tools/list", rid=2), request("nope", rid=3)]
    judged, fed = engine_module.Engine(default_catalogue()), engine_module.Engine(default_catalogue())
    answers = [judged.judge(lines.envelope(body, DEFAULT_MAX_MESSAGE_BYTES)) for body in bodies]
    assert answers == [fed.feed(body) for body in bodies]
    assert answers[0] == result(INIT_RESULT)


def test_a_post_body_is_parsed_once(served_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A body the fast path does not answer is parsed by the line rules once, and judged from that parse."""
    parsed: list[bytes] = []
    loads = lines._loads
    monkeypatch.setattr(lines, "_loads", lambda body: parsed.append(body) or loads(body))
    app = Server("once", version="1.0.0", protocol_versions=["2026-07-28"])
    app.tool()(defaults.echo)
    body = modern_body("tools/call", {"name": "echo", "arguments": {"text": "a\nb"}})  # an escape: no fast path
    call = within(http(app.http_app(), "POST", body, modern_headers("tools/call", "echo")))
    assert parsed == [body]
    parsed.clear()
    assert seen(call) == json_reply(200, engine("pure").Engine(app.catalogue()).feed(body + b"\n"))


def test_both_engines_take_the_size_rule_from_the_line_rules(engine_module, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line skipped while it streams in past the limit, and a whole line over it in one read, are refused
    by the line rules' answer, whichever engine frames them; a trailing carriage return is not counted."""
    monkeypatch.setattr(lines, "INVALID_REQUEST_NULL_LINE", b"refused\n")
    engine = engine_module.Engine(default_catalogue(), 8)
    streamed = engine.feed(b"x" * 6) + engine.feed(b"x" * 6) + engine.feed(b"x\n")
    whole = engine.feed(b"y" * 12 + b"\n" + b" " * 12 + b"\n" + b"z" * 8 + b"\r\n" + b"w" * 9 + b"\r\n")
    assert (streamed, whole) == (b"refused\n", b"refused\n" + PARSE_ERROR_LINE + b"refused\n")


def test_an_oversize_message_is_refused_unless_blank() -> None:
    ping = request("ping").strip()
    size = len(ping)
    kinds = [lines.envelope(body, size)[0] for body in (ping, ping + b"\r", ping + b"\r\r", b" " * (size + 5))]
    assert kinds == [lines.REQUEST, lines.REQUEST, lines.INVALID, lines.BLANK]
    assert lines.envelope(ping, size - 1)[:2] == (lines.INVALID, None)  # its id unread: the null-id answer
