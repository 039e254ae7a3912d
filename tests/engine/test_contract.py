"""The server contract, rule by rule, as whole-byte comparisons on both engines."""

from __future__ import annotations

import pytest
from support import wire
from support.wire import default_catalogue

H = '{"jsonrpc":"2.0","id":'
INIT_RESULT = wire.INIT_RESULT.decode()
TOOLS = wire.TOOLS.decode()
RESOURCES = wire.RESOURCES.decode()
HELLO = wire.HELLO.decode()
PARSE = wire.PARSE.decode()
INVALID_NULL = wire.INVALID_NULL.decode()


def result(rid: str, body: str) -> str:
    return f'{H}{rid},"result":{body}}}\n'


def error(rid: str, code: int, message: str) -> str:
    return f'{H}{rid},"error":{{"code":{code},"message":"{message}"}}}}\n'


def text(rid: str, value: str) -> str:
    return result(rid, f'{{"content":[{{"type":"text","text":"{value}"}}]}}')


def invalid_args(rid: str, tool: str) -> str:
    return result(rid, f'{{"content":[{{"type":"text","text":"Invalid arguments for {tool}"}}],"isError":true}}')


def call(rid: str, name: str, arguments: str | None) -> str:
    args = "" if arguments is None else f',"arguments":{arguments}'
    return f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{{"name":"{name}"{args}}}}}'


def add(a: str, b: str, rid: str = "1") -> str:
    return call(rid, "add", f'{{"a":{a},"b":{b}}}')


CASES: list[tuple[str, str, str]] = [
    # -- catalogue -------------------------------------------------------------------------
    ("initialize", '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
     '"capabilities":{},"clientInfo":{"name":"tests","version":"1"}}}', result("1", INIT_RESULT)),
    ("initialize other version", '{"jsonrpc":"2.0","id":2,"method":"initialize","params":'
     '{"protocolVersion":"2024-11-05"}}', result("2", INIT_RESULT)),
    ("initialize newer version", '{"jsonrpc":"2.0","id":2,"method":"initialize","params":'
     '{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}}', result("2", INIT_RESULT)),
    ("initialize without params", '{"jsonrpc":"2.0","id":"a","method":"initialize"}', result('"a"', INIT_RESULT)),
    ("initialize without version", '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}',
     result("3", INIT_RESULT)),
    ("ping", '{"jsonrpc":"2.0","id":5,"method":"ping"}', result("5", "{}")),
    ("ping with params", '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"x":1}}}', result("5", "{}")),
    ("tools/list", '{"jsonrpc":"2.0","id":2,"method":"tools/list"}', result("2", TOOLS)),
    ("tools/list with cursor", '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"x"}}',
     result("2", TOOLS)),
    ("resources/list", '{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{}}', result("4", RESOURCES)),
    ("resources/read", '{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"file:///hello.txt"}}',
     result("6", HELLO)),
    ("templates", '{"jsonrpc":"2.0","id":7,"method":"resources/templates/list"}',
     result("7", '{"resourceTemplates":[]}')),
    # -- echo ------------------------------------------------------------------------------
    ("echo", call("3", "echo", '{"text":"hi"}'), text("3", "hi")),
    ("echo empty", call("3", "echo", '{"text":""}'), text("3", "")),
    ("echo unicode as is", call("3", "echo", '{"text":"h\\u00e9llo \\ud83d\\ude00 日本"}'), text("3", "héllo 😀 日本")),
    ("echo escapes", call("3", "echo", '{"text":"a\\"b\\\\c\\n\\t\\u0001/\\/"}'),
     text("3", 'a\\"b\\\\c\\n\\t\\u0001//')),
    ("echo missing text", call("3", "echo", "{}"), invalid_args("3", "echo")),
    ("echo no arguments", call("3", "echo", None), invalid_args("3", "echo")),
    ("echo number", call("3", "echo", '{"text":5}'), invalid_args("3", "echo")),
    ("echo null", call("3", "echo", '{"text":null}'), invalid_args("3", "echo")),
    ("echo extra", call("3", "echo", '{"text":"a","x":1}'), invalid_args("3", "echo")),
    ("echo arguments array", call("3", "echo", '["hi"]'), invalid_args("3", "echo")),
    ("echo arguments string", call("3", "echo", '"hi"'), invalid_args("3", "echo")),
    ("echo arguments null", call("3", "echo", "null"), invalid_args("3", "echo")),
    # -- add -------------------------------------------------------------------------------
    ("add", add("2", "3"), text("1", "5")),
    ("add negative", add("-2", "-3"), text("1", "-5")),
    ("add floats", add("1.5", "1.5"), text("1", "3")),
    ("add 0.1+0.2", add("0.1", "0.2"), text("1", "0.30000000000000004")),
    ("add 1e21", add("1e21", "0"), text("1", "1e+21")),
    ("add 1e-7", add("1e-7", "0"), text("1", "1e-7")),
    ("add 1e20", add("1e20", "0"), text("1", "100000000000000000000")),
    ("add 1e20 ints", add("100000000000000000000", "0"), text("1", "100000000000000000000")),
    ("add small", add("0.000001", "0"), text("1", "0.000001")),
    ("add 1.5e-10", add("1.5e-10", "0"), text("1", "1.5e-10")),
    ("add 123.456", add("123.4", "0.056"), text("1", "123.456")),
    ("add overflow", add("1.7976931348623157e308", "1.7976931348623157e308"), text("1", "Infinity")),
    ("add -overflow", add("-1.7976931348623157e308", "-1e308"), text("1", "-Infinity")),
    ("add -0", add("-0.0", "-0.0"), text("1", "0")),
    ("add -0 int", add("-0", "0"), text("1", "0")),
    ("add int64 exact", add("9223372036854775807", "9223372036854775807"), text("1", "18446744073709551614")),
    ("add uint64 exact", add("18446744073709551615", "1"), text("1", "18446744073709551616")),
    ("add int min", add("-9223372036854775808", "-1"), text("1", "-9223372036854775809")),
    ("add beyond uint64 is double", add("18446744073709551616", "0"), text("1", "18446744073709552000")),
    ("add int+float", add("2", "0.5"), text("1", "2.5")),
    ("add big int + float", add("9007199254740993", "0.0"), text("1", "9007199254740992")),
    ("add 1e400", add("1e400", "1"), invalid_args("1", "add")),
    ("add -1e400", add("1", "-1E400"), invalid_args("1", "add")),
    ("add missing b", call("1", "add", '{"a":1}'), invalid_args("1", "add")),
    ("add extra", call("1", "add", '{"a":1,"b":2,"c":3}'), invalid_args("1", "add")),
    ("add bool", add("true", "1"), invalid_args("1", "add")),
    ("add string", add('"1"', "1"), invalid_args("1", "add")),
    ("add null", add("null", "1"), invalid_args("1", "add")),
    ("add array", add("[1]", "1"), invalid_args("1", "add")),
    ("add no arguments", call("1", "add", None), invalid_args("1", "add")),
    ("add key order", call("1", "add", '{"b":1,"a":2}'), text("1", "3")),
    ("add duplicate key", call("1", "add", '{"a":1,"b":2,"a":5}'), text("1", "7")),
    # -- rule 1: blank -----------------------------------------------------------------------
    ("empty", "", ""),
    ("spaces", "  \t \r", ""),
    ("trailing cr", '{"jsonrpc":"2.0","id":5,"method":"ping"}\r', result("5", "{}")),
    ("whitespace around", ' \t{"jsonrpc":"2.0","id":5,"method":"ping"} \t', result("5", "{}")),
    ("form feed is not blank", "\f", PARSE),
    ("nul is not blank", "\x00", PARSE),
    ("vertical tab is not blank", "\v", PARSE),
    # -- rule 3: parse error -----------------------------------------------------------------
    ("not json", "not-json", PARSE),
    ("truncated", '{"jsonrpc":"2.0","id":1', PARSE),
    ("trailing garbage", '{"jsonrpc":"2.0","id":1,"method":"ping"} x', PARSE),
    ("two objects", '{"jsonrpc":"2.0","id":1,"method":"ping"}{}', PARSE),
    ("nan", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":NaN,"b":1}}}',
     PARSE),
    ("infinity", "Infinity", PARSE),
    ("raw control char", '{"jsonrpc":"2.0","id":1,"method":"ping","x":"a\x01b"}', PARSE),
    ("raw tab in string", '{"jsonrpc":"2.0","id":1,"method":"ping","x":"a\tb"}', PARSE),
    ("lone surrogate", '{"jsonrpc":"2.0","id":1,"method":"ping","x":"\\ud800"}', PARSE),
    ("lone low surrogate", '{"jsonrpc":"2.0","id":1,"method":"ping","x":"\\udc00"}', PARSE),
    ("lone surrogate with 1e400", '{"jsonrpc":"2.0","id":1,"method":"ping","x":"\\ud800","y":1e400}', PARSE),
    ("nan with 1e400", '{"jsonrpc":"2.0","id":1,"method":"ping","x":NaN,"y":1e400}', PARSE),
    ("bad escape", '{"jsonrpc":"2.0","id":1,"method":"ping","x":"\\x"}', PARSE),
    ("single quotes", "{'jsonrpc':'2.0'}", PARSE),
    ("trailing comma", '{"jsonrpc":"2.0","id":1,"method":"ping",}', PARSE),
    ("leading zero", '{"jsonrpc":"2.0","id":01,"method":"ping"}', PARSE),
    ("bom", '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}', PARSE),
    ("deep nesting", "[" * 5000 + "]" * 5000, PARSE),
    # -- rule 4: not an object ---------------------------------------------------------------
    ("batch", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID_NULL),
    ("empty array", "[]", INVALID_NULL),
    ("number", "1", INVALID_NULL),
    ("string", '"ping"', INVALID_NULL),
    ("null", "null", INVALID_NULL),
    ("true", "true", INVALID_NULL),
    ("1e400 alone", "1e400", INVALID_NULL),
    # -- rule 5: bad id ----------------------------------------------------------------------
    ("id null", '{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_NULL),
    ("id float", '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_NULL),
    ("id 2.0", '{"jsonrpc":"2.0","id":2.0,"method":"ping"}', INVALID_NULL),
    ("id 1e2", '{"jsonrpc":"2.0","id":1e2,"method":"ping"}', INVALID_NULL),
    ("id true", '{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_NULL),
    ("id object", '{"jsonrpc":"2.0","id":{},"method":"ping"}', INVALID_NULL),
    ("id array", '{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_NULL),
    ("id beyond uint64", '{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}', INVALID_NULL),
    ("id 1e400", '{"jsonrpc":"2.0","id":1e400,"method":"ping"}', INVALID_NULL),
    ("id null on a response", '{"jsonrpc":"2.0","id":null,"result":{}}', INVALID_NULL),
    ("id null bad jsonrpc", '{"jsonrpc":"1.0","id":null}', INVALID_NULL),
    # ids echoed exactly
    ("id 0", '{"jsonrpc":"2.0","id":0,"method":"ping"}', result("0", "{}")),
    ("id negative", '{"jsonrpc":"2.0","id":-7,"method":"ping"}', result("-7", "{}")),
    ("id -0", '{"jsonrpc":"2.0","id":-0,"method":"ping"}', result("0", "{}")),
    ("id uint64 max", '{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}',
     result("18446744073709551615", "{}")),
    ("id int64 min", '{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}',
     result("-9223372036854775808", "{}")),
    ("id 2^53+1", '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', result("9007199254740993", "{}")),
    ("id empty string", '{"jsonrpc":"2.0","id":"","method":"ping"}', result('""', "{}")),
    ("id string escapes", '{"jsonrpc":"2.0","id":"a\\u0041\\n\\u00e9\\/","method":"ping"}',
     result('"aA\\né/"', "{}")),
    ("id spaced", '{ "jsonrpc" : "2.0" , "id" : 12 , "method" : "ping" }', result("12", "{}")),
    ("id last", '{"method":"ping","jsonrpc":"2.0","id":"z"}', result('"z"', "{}")),
    # -- rule 6: responses from the client ---------------------------------------------------
    ("client result", '{"jsonrpc":"2.0","id":1,"result":{}}', ""),
    ("client error", '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}', ""),
    ("client result bad jsonrpc", '{"id":1,"result":{}}', ""),
    ("client result no id", '{"jsonrpc":"2.0","result":{}}', ""),
    # -- rule 7: bad envelope ----------------------------------------------------------------
    ("jsonrpc 1.0", '{"jsonrpc":"1.0","id":1,"method":"ping"}', error("1", -32600, "Invalid Request")),
    ("jsonrpc number", '{"jsonrpc":2.0,"id":1,"method":"ping"}', error("1", -32600, "Invalid Request")),
    ("jsonrpc missing", '{"id":1,"method":"ping"}', error("1", -32600, "Invalid Request")),
    ("method missing", '{"jsonrpc":"2.0","id":1}', error("1", -32600, "Invalid Request")),
    ("method number", '{"jsonrpc":"2.0","id":"q","method":1}', error('"q"', -32600, "Invalid Request")),
    ("method null", '{"jsonrpc":"2.0","id":1,"method":null}', error("1", -32600, "Invalid Request")),
    ("params string", '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}', error("1", -32600, "Invalid Request")),
    ("params null", '{"jsonrpc":"2.0","id":1,"method":"ping","params":null}', error("1", -32600, "Invalid Request")),
    ("params number", '{"jsonrpc":"2.0","id":1,"method":"nope","params":3}', error("1", -32600, "Invalid Request")),
    ("empty object", "{}", INVALID_NULL),
    ("notification bad jsonrpc", '{"jsonrpc":"1.0","method":"notifications/initialized"}', INVALID_NULL),
    ("notification bad params", '{"jsonrpc":"2.0","method":"ping","params":1}', INVALID_NULL),
    ("notification method number", '{"jsonrpc":"2.0","method":5}', INVALID_NULL),
    # -- rule 8: notifications ---------------------------------------------------------------
    ("initialized", '{"jsonrpc":"2.0","method":"notifications/initialized"}', ""),
    ("cancelled", '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}', ""),
    ("unknown notification", '{"jsonrpc":"2.0","method":"whatever","params":[1]}', ""),
    ("notification ping", '{"jsonrpc":"2.0","method":"ping"}', ""),
    ("notification tools/call", '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}', ""),
    # -- rule 9: unknown methods -------------------------------------------------------------
    ("unknown", '{"jsonrpc":"2.0","id":8,"method":"unknown"}', error("8", -32601, "Method not found")),
    ("prompts/list", '{"jsonrpc":"2.0","id":8,"method":"prompts/list"}', error("8", -32601, "Method not found")),
    ("logging/setLevel", '{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"info"}}',
     error("8", -32601, "Method not found")),
    ("subscribe", '{"jsonrpc":"2.0","id":8,"method":"resources/subscribe","params":{"uri":"file:///hello.txt"}}',
     error("8", -32601, "Method not found")),
    ("completion", '{"jsonrpc":"2.0","id":8,"method":"completion/complete"}', error("8", -32601, "Method not found")),
    ("unknown with array params", '{"jsonrpc":"2.0","id":8,"method":"nope","params":[]}',
     error("8", -32601, "Method not found")),
    ("method case", '{"jsonrpc":"2.0","id":8,"method":"PING"}', error("8", -32601, "Method not found")),
    # -- rule 10: array params ---------------------------------------------------------------
    ("ping array params", '{"jsonrpc":"2.0","id":9,"method":"ping","params":[]}', error("9", -32602, "Invalid params")),
    ("tools/call array params", '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":["echo"]}',
     error("9", -32602, "Invalid params")),
    # -- rule 11: method rules ---------------------------------------------------------------
    ("call without params", '{"jsonrpc":"2.0","id":9,"method":"tools/call"}', error("9", -32602, "Invalid params")),
    ("call without name", '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}',
     error("9", -32602, "Invalid params")),
    ("call name number", '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":1}}',
     error("9", -32602, "Invalid params")),
    ("call name array", '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":["echo"]}}',
     error("9", -32602, "Invalid params")),
    ("call name object", '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":{"echo":1}}}',
     error("9", -32602, "Invalid params")),
    ("unknown tool", call("9", "nope", "{}"), error("9", -32602, "Unknown tool")),
    ("unknown tool bad args", call("9", "nope", "3"), error("9", -32602, "Unknown tool")),
    ("read without params", '{"jsonrpc":"2.0","id":9,"method":"resources/read"}',
     error("9", -32602, "Invalid params")),
    ("read uri number", '{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":1}}',
     error("9", -32602, "Invalid params")),
    ("read unknown", '{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///nope.txt"}}',
     error("9", -32002, "Resource not found")),
    ("read traversal", '{"jsonrpc":"2.0","id":9,"method":"resources/read","params":'
     '{"uri":"file:///../etc/passwd"}}', error("9", -32002, "Resource not found")),
]


def test_the_model_reads_every_case_as_written_here() -> None:
    """The independent model that the differential and fuzz runs trust (oracle.py) agrees with each case."""
    from support.oracle import predict

    assert [name for name, line, expected in CASES if predict(line.encode() + b"\n") != expected.encode()] == []


@pytest.mark.parametrize(("line", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_line(run, line: str, expected: str) -> None:
    assert run(line.encode() + b"\n") == expected.encode()


@pytest.mark.parametrize(("line", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_line_without_newline_at_eof(run, line: str, expected: str) -> None:
    assert run(line.encode()) == expected.encode()


def test_all_cases_as_one_stream_in_order(run) -> None:
    data = b"".join(line.encode() + b"\n" for _, line, _ in CASES)
    assert run(data) == b"".join(expected.encode() for _, _, expected in CASES)


def test_crlf_stream(run) -> None:
    data = b"".join(line.encode() + b"\r\n" for _, line, _ in CASES if not line.endswith("\r"))
    expected = b"".join(e.encode() for _, line, e in CASES if not line.endswith("\r"))
    assert run(data) == expected


def test_invalid_utf8_is_a_parse_error(run) -> None:
    for bad in (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xe2\x82"):
        line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"' + bad
        assert run(line + b'"}}}\n') == PARSE.encode(), bad


def test_invalid_utf8_outside_strings_is_a_parse_error(run) -> None:
    assert run(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\xff\n') == PARSE.encode()


def test_second_initialize_is_answered_the_same(run) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n'
    assert run(line + line) == (result("1", INIT_RESULT) * 2).encode()


def test_requests_before_initialize_are_served(run) -> None:
    data = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"jsonrpc":"2.0","id":2,"method":"initialize"}\n'
    assert run(data) == (result("1", TOOLS) + result("2", INIT_RESULT)).encode()


def test_initialized_notification_marks_the_session(engine_module) -> None:
    engine = engine_module.Engine(default_catalogue())
    assert engine.initialized is False
    assert engine.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n') == b""
    assert engine.initialized is True


def test_long_echo_round_trips(run) -> None:
    payload = "x" * 100_000 + "é" * 50_000 + "\\n" * 1000
    expected_text = "x" * 100_000 + "é" * 50_000 + "\\n" * 1000
    assert run(call("1", "echo", f'{{"text":"{payload}"}}').encode() + b"\n") == text("1", expected_text).encode()


#: Lines that must leave the session uninitialized, and their answers (rule 8: only the
#: notification ``notifications/initialized`` marks the session).
NOT_INITIALIZING = [
    ('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}', ""),
    ('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}', ""),
    ('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}', ""),
    ('{"jsonrpc":"2.0","method":"notifications/initialized/"}', ""),
    ('{"jsonrpc":"2.0","method":"notifications/Initialized"}', ""),
    ('{"jsonrpc":"2.0","method":"notifications/initialized "}', ""),
    ('{"jsonrpc":"2.0","method":"notifications/"}', ""),
    ('{"jsonrpc":"2.0","method":"initialized"}', ""),
    ('{"jsonrpc":"2.0","method":"initialize"}', ""),
    ('{"jsonrpc":"2.0","method":"notifications/initialize"}', ""),
    ('{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}', error("1", -32601, "Method not found")),
    ('{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}', INVALID_NULL),
    ('{"jsonrpc":"1.0","method":"notifications/initialized"}', INVALID_NULL),
    ('{"method":"notifications/initialized"}', INVALID_NULL),
    ('{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}', INVALID_NULL),
    ('{"jsonrpc":"2.0","result":{},"params":{"method":"notifications/initialized"}}', ""),
    ('[{"jsonrpc":"2.0","method":"notifications/initialized"}]', INVALID_NULL),
    ('{"jsonrpc":"2.0","method":"notifications\\/initialized","x":NaN}', PARSE),
]


def test_only_the_initialized_notification_marks_the_session(engine_module) -> None:
    for line, expected in NOT_INITIALIZING:  # one at a time, each on a fresh engine
        engine = engine_module.Engine(default_catalogue())
        assert engine.feed(line.encode() + b"\n") + engine.finish() == expected.encode(), line
        assert engine.initialized is False, line
    engine = engine_module.Engine(default_catalogue())  # all of them in one session
    data = "".join(line + "\n" for line, _ in NOT_INITIALIZING).encode()
    assert engine.feed(data) == "".join(expected for _, expected in NOT_INITIALIZING).encode()
    assert engine.initialized is False
    assert engine.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}\n') == b""
    assert engine.initialized is True


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}',
        '{"method":"notifications\\/initialized","jsonrpc":"2.0"}',
        ' {"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{}}}\r',
    ],
)
def test_the_initialized_notification_in_any_valid_form(engine_module, line: str) -> None:
    engine = engine_module.Engine(default_catalogue())
    assert engine.feed(line.encode() + b"\n") + engine.finish() == b""
    assert engine.initialized is True
