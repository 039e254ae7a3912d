"""The compiled engine's fast path against the pure engine, on the shapes it takes and the ones near them.

The fast path answers common lines straight from the bytes; every line here must get the same
bytes from both engines, whether the fast path takes it or hands it to the slow path, and
those bytes must be what the independent model of the contract predicts (``oracle.py``): a
bug shared by both paths cannot pass as agreement.
"""

from __future__ import annotations

import base64
import math
import random
import struct

import orjson
import pytest
from support.oracle import predict
from support.wire import HEAD, default_catalogue, engine, error, request, result, text
from support.wire import read as wire_read

from shipcode_mcp import Server
from shipcode_mcp.jsontext import number_text

pytestmark = pytest.mark.compiled  # compares the two engines: deselected when only one is under test


@pytest.fixture
def both():
    engines = (engine("compiled"), engine("pure"))

    def both(data: bytes) -> tuple[bytes, bytes]:
        outs = []
        for module in engines:
            engine = module.Engine(default_catalogue())
            outs.append(engine.feed(data) + engine.finish())
        assert outs[1] == predict(data), "the pure engine departs from the contract"
        return outs[0], outs[1]

    return both


def number_literals(rng: random.Random, count: int) -> list[str]:
    literals = [
        "0", "-0", "0.0", "-0.0", "1", "-1", "1.5", "1e2", "1E2", "1e+2", "1e-2", "-1.25e-3", "0.1", "0.2",
        "123456789012345678", "1234567890123456789", "-123456789012345678", "12345678901234567890",
        "9223372036854775807", "18446744073709551615", "18446744073709551616", "1e308", "1e309", "-1e309",
        "1e400", "4.9e-324", "2e-324", "1.7976931348623157e308", "1.7976931348623159e308", "01", "1.", ".5",
        "1e", "1e+", "--1", "+1", "0x10", "1.0e0", "100000000000000000000", "9007199254740993.0",
        "0.30000000000000004", "2.5e-7", "1e21", "1e-7",
    ]
    for _ in range(count):
        mantissa = str(rng.randint(0, 10 ** rng.randint(1, 20)))
        if rng.random() < 0.7:
            cut = rng.randint(1, len(mantissa))
            mantissa = mantissa[:cut] + "." + (mantissa[cut:] or "0")
        exponent = f"e{rng.randint(-330, 330)}" if rng.random() < 0.5 else ""
        literals.append(("-" if rng.random() < 0.3 else "") + mantissa + exponent)
    return literals


def test_add_with_number_literals(both) -> None:
    rng = random.Random(7)
    literals = number_literals(rng, 3000)
    lines = []
    for i, literal in enumerate(literals):
        other = rng.choice(literals)
        lines.append(f'{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"add",'
                     f'"arguments":{{"a":{literal},"b":{other}}}}}}}\n')
    data = "".join(lines).encode()
    compiled, pure = both(data)
    assert compiled == pure
    assert compiled.count(b"\n") == len(lines)


def test_ids(both) -> None:
    ids = ["0", "-0", "7", "-7", "123456789012345678", "1234567890123456789", "-9223372036854775808",
           "18446744073709551615", "18446744073709551616", "1.0", "1e3", '""', '"a"', '"é"', '"\\u00e9"',
           '"a\\"b"', '"\x7f"', '"\xf0\x9f\x98\x80"', "null", "true", "[]", "{}", '"\xed\xa0\x80"', '"\xc3"']
    data = b"".join(
        b'{"jsonrpc":"2.0","id":' + literal.encode("utf-8", "surrogateescape") + b',"method":"ping"}\n'
        for literal in ids
    )
    compiled, pure = both(data)
    assert compiled == pure


STRINGS = ["", "x", "hello world", "é", "日本", "😀", "a\\nb", 'a\\"b', "\x7f", "\\u0000", "\\ud83d\\ude00", "/",
           "\\/", "a" * 1000]
RAW_STRINGS = [b"\xc3\xa9", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80",
               b"\xf4\x8f\xbf\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xf0\x8f\xbf\xbf",
               b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\x01", b"\t",
               b"abcdefg\x1fhijklmnop", b'abcdefghijklmno\\"pq', b"abcdefghijkl\xc3\xa9mnopqrstuvw\xe2\x82xyz",
               b"abcdefghijkl\xc3\xa9mnopqrstuvw\xed\xa0\x80xyz", b"\xf0\x9f\x98\x80" * 5 + b"abcdefgh\xff"]


def test_echo_strings(both) -> None:
    texts = [s.encode() for s in STRINGS] + RAW_STRINGS
    data = b"".join(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"' + t + b'"}}}\n'
        for t in texts
    )
    compiled, pure = both(data)
    assert compiled == pure


def test_special_bytes_at_every_position(both) -> None:
    """Long texts with one byte that is not plain ASCII somewhere: scanned in words and blocks, each must be seen."""
    specials = [
        b"\x01",
        b"\x1f",
        b"\\n",
        b'\\"',
        b"\\\\",
        b"\xc3\xa9",
        b"\xe2\x82\xac",
        b"\xf0\x9f\x98\x80",
        b"\xc3",
        b"\xff",
    ]
    data = b"".join(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'
        + b"a" * at
        + special
        + b"b" * (70 - at)
        + b'"}}}\n'
        for special in specials
        for at in range(70)
    )
    compiled, pure = both(data)
    assert compiled == pure


SHAPES = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"id":1,"jsonrpc":"2.0","method":"ping"}',
    '{"method":"ping","id":1,"jsonrpc":"2.0"}',
    ' { "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" } ',
    '\t{"jsonrpc":"2.0",\t"id":1,"method":"ping"}\r',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":{ }}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1}}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":null}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","id":2}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}',
    '{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.00","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping"',
    '{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    '{"jsonrpc":"2.0","id":1,"method":"ping",}',
    '{"jsonrpc":"2.0","id":1,"method":"pi\\u006eg"}',
    '{"jsonrpc":"2.0","id":1,"method":"nope"}',
    '{"jsonrpc":"2.0","method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":3}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":null}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":"x"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[]}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"text":"a"},"name":"echo"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":{"a":1}}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":true}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"txt":"a"}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"_meta":{}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":false}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":null}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"b":2,"a":1}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2,"c":3}}}',
    '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///hello.txt"}}',
    '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///nope"}}',
    '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":5}}',
    '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///hello.txt","x":1}}',
    '{"jsonrpc":"2.0","id":1,"method":"resources/read"}',
]


def test_shapes(both) -> None:
    data = "".join(line + "\n" for line in SHAPES).encode()
    compiled, pure = both(data)
    assert compiled == pure
    # and each line alone, without a final newline
    for line in SHAPES:
        assert both(line.encode())[0] == both(line.encode())[1], line


def test_truncations_of_every_shape(both) -> None:
    """Every prefix of every shape: the fast path must hand each broken line to the slow path."""
    data = b"".join(line.encode()[:cut] + b"\n" for line in SHAPES for cut in range(len(line)))
    compiled, pure = both(data)
    assert compiled == pure


# -- user tools: how the fast path calls them and writes what they return -----------------------------------------

user_app = Server("user-tools")


@user_app.tool()
def value(kind: str, text: str = "", number: float = 0) -> object:
    """Return a value of the named kind, built from the arguments."""
    return {
        "upper": lambda: text.upper(),
        "same": lambda: text,
        "chars": lambda: "".join(chr(int(code)) for code in text.split()),
        "subclass": lambda: type("Text", (str,), {})(text),
        "surrogate": lambda: text + "\ud800",
        "number": lambda: number,
        "huge": lambda: number * 10.0,
        "nan": lambda: math.nan,
        "int": lambda: int(number),
        "square": lambda: int(number) ** 2,
        "low": lambda: -(2**63),
        "high": lambda: 2**63,
        "true": lambda: True,
        "false": lambda: False,
        "none": lambda: None,
        "list": lambda: [text, number],
        "bytes": lambda: text.encode(),
    }[kind]()


@user_app.tool()
def bind(a: int, b: int = 0, c: int = 0) -> str:
    """Say which value each parameter got."""
    return f"a={a} b={b} c={c}"


@user_app.tool()
def keywords(*, a: int, b: int = 0) -> str:
    """Keyword-only parameters."""
    return f"a={a} b={b}"


def _swapped(a: int, b: int) -> str:
    return f"a={a} b={b}"


# The schema lists b before a: only names can bind the arguments.
user_app.tool(
    name="swapped",
    input_schema={
        "type": "object",
        "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
)(_swapped)


class _Offset:
    def __init__(self, base: int) -> None:
        self.base = base

    def plus(self, by: int) -> str:
        return f"{self.base}+{by}"

    def __call__(self, by: int) -> str:
        return self.plus(by)


user_app.tool(name="method")(_Offset(10).plus)
user_app.tool(
    name="callable",
    input_schema={
        "type": "object",
        "properties": {"by": {"type": "integer"}},
        "required": ["by"],
        "additionalProperties": False,
    },
)(_Offset(20))


def call(tool: str, arguments: str, request_id: int = 1) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{"name":"{tool}",'
        f'"arguments":{arguments}}}}}\n'
    ).encode()


def text_answer(request_id: int, json_text: str) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"result":{{"content":[{{"type":"text","text":{json_text}}}]}}}}\n'
    ).encode()


@pytest.fixture
def user_both():
    """Feed the user app to both engines (fresh ones each time); their answers must agree."""

    def both(data: bytes) -> bytes:
        outs = []
        for name in ("compiled", "pure"):
            served = engine(name).Engine(user_app.catalogue())
            outs.append(served.feed(data) + served.finish())
        assert outs[0] == outs[1]
        return outs[0]

    return both


RETURNED = [
    ('"upper","text":"abc"', '"ABC"'),
    ('"upper","text":"déjà vu 日本"', '"DÉJÀ VU 日本"'),
    ('"upper","text":"tab\\there"', '"TAB\\tHERE"'),
    ('"chars","text":"49 50 51 52 53 54 55 31"', '"1234567\\u001f"'),
    ('"chars","text":"49 50 51 52 53 54 55 56 1"', '"12345678\\u0001"'),
    ('"chars","text":"97 98 99 100 101 102 103 34"', '"abcdefg\\""'),
    ('"chars","text":"97 98 99 100 101 102 103 104 34"', '"abcdefgh\\""'),
    ('"chars","text":"97 98 99 100 101 102 103 92"', '"abcdefg\\\\"'),
    ('"chars","text":"97 92"', '"a\\\\"'),
    ('"chars","text":"10 13 9 8 12"', '"\\n\\r\\t\\b\\f"'),
    ('"chars","text":"127 126 233 26085 128512 97 98 99"', '"\x7f~é日😀abc"'),
    ('"same","text":"as sent"', '"as sent"'),
    ('"number","number":0.1', '"0.1"'),
    ('"number","number":-2.5e-7', '"-2.5e-7"'),
    ('"number","number":1e21', '"1e+21"'),
    ('"number","number":123e18', '"123000000000000000000"'),
    ('"number","number":0.000001', '"0.000001"'),
    ('"number","number":-0.0', '"0"'),
    ('"number","number":5e-324', '"5e-324"'),
    ('"number","number":1.7976931348623157e308', '"1.7976931348623157e+308"'),
    ('"number","number":42', '"42"'),
    ('"huge","number":1e308', '"Infinity"'),
    ('"huge","number":-1e308', '"-Infinity"'),
    ('"nan"', '"NaN"'),
    ('"int","number":-9.75', '"-9"'),
    ('"square","number":3037000500', '"9223372037000250000"'),
    ('"low"', '"-9223372036854775808"'),
    ('"high"', '"9223372036854775808"'),
    ('"true"', '"true"'),
    ('"false"', '"false"'),
    ('"list","text":"x","number":2', '"[\\"x\\",2]"'),
]


@pytest.mark.parametrize(("arguments", "json_text"), RETURNED, ids=[case[0] for case in RETURNED])
def test_what_a_user_tool_returns(user_both, arguments: str, json_text: str) -> None:
    assert user_both(call("value", '{"kind":' + arguments + "}")) == text_answer(1, json_text)


def test_results_with_a_byte_to_escape_at_every_position(user_both) -> None:
    codes = ["1", "31", "34", "92", "127", "233", "8364", "128512"]
    cases = [(code, at) for code in codes for at in range(70)]
    data = b"".join(
        call("value", f'{{"kind":"chars","text":"{" ".join(["97"] * at + [code] + ["98"] * (70 - at))}"}}', i)
        for i, (code, at) in enumerate(cases)
    )
    expected = b"".join(
        text_answer(i, orjson.dumps("a" * at + chr(int(code)) + "b" * (70 - at)).decode())
        for i, (code, at) in enumerate(cases)
    )
    assert user_both(data) == expected


def test_returns_without_one_text_block(user_both) -> None:
    failed = b',"result":{"content":[{"type":"text","text":"Tool value failed"}],"isError":true}}\n'
    kinds = ("none", "surrogate", "bytes", "subclass")
    data = b"".join(call("value", f'{{"kind":"{kind}","text":"t"}}', i) for i, kind in enumerate(kinds))
    assert user_both(data) == (
        b'{"jsonrpc":"2.0","id":0,"result":{"content":[]}}\n'
        + b"".join(b'{"jsonrpc":"2.0","id":%d' % i + failed for i in (1, 2, 3))
    )


BINDINGS = [
    ("bind", '{"a":1}', "a=1 b=0 c=0"),
    ("bind", '{"a":1,"b":2}', "a=1 b=2 c=0"),
    ("bind", '{"c":3,"b":2,"a":1}', "a=1 b=2 c=3"),
    ("bind", '{"a":1,"c":3}', "a=1 b=0 c=3"),
    ("bind", '{"c":3,"a":1}', "a=1 b=0 c=3"),
    ("keywords", '{"a":1}', "a=1 b=0"),
    ("keywords", '{"b":2,"a":1}', "a=1 b=2"),
    ("swapped", '{"a":1,"b":2}', "a=1 b=2"),
    ("swapped", '{"b":2,"a":1}', "a=1 b=2"),
    ("method", '{"by":2}', "10+2"),
    ("callable", '{"by":3}', "20+3"),
]


@pytest.mark.parametrize(("tool", "arguments", "said"), BINDINGS, ids=[f"{t}-{a}" for t, a, _ in BINDINGS])
def test_arguments_bind_by_name(user_both, tool: str, arguments: str, said: str) -> None:
    """Whether the call goes by position or by name, each argument reaches its own parameter."""
    assert user_both(call(tool, arguments)) == text_answer(1, f'"{said}"')


def doubles(rng: random.Random, count: int) -> list[float]:
    """Doubles of every kind: short exact decimals (k / 2**j), integral ones, any bit pattern, and exact
    decimals of 17 digits that repr writes with 16."""
    values = [
        0.5,
        -0.75,
        1e15 - 1,
        1e15,
        1e15 + 1,
        2.0**53,
        2.0**53 + 2,
        1e21,
        1e21 - 65536,
        2.0**-1074,
        2.0**-1022,
        1 / 3,
        0.1 + 0.2,
        123456789.125,
        0.000152587890625,
        9.5367431640625e-7,
        4.76837158203125e-7,
        899997033516837.75,
        93760769460378.125,
        975290170327191.75,
        73249111250691.625,
    ]
    for _ in range(count):
        values.append(rng.randint(-(10 ** rng.randint(1, 17)), 10 ** rng.randint(1, 17)) / 2 ** rng.randint(0, 70))
        values.append(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0])
    return [value for value in values if math.isfinite(value)]


def test_number_results(user_both) -> None:
    """Every double a tool returns is written as the pure engine writes it (jsontext.number_text)."""
    values = doubles(random.Random(11), 4000)
    data = b"".join(call("value", f'{{"kind":"number","number":{value!r}}}', i) for i, value in enumerate(values))
    expected = b"".join(text_answer(i, f'"{number_text(value)}"') for i, value in enumerate(values))
    assert user_both(data) == expected


def test_short_decimal_results(user_both) -> None:
    """Doubles read from decimals of at most 17 digits, from 1e-30 to 1e30: most are not short in binary."""
    rng = random.Random(13)
    values = [7.01, 0.1, 0.3, 1.1, 123.456, 56.25, 1e-7, 1.5e-8, 9.999999999999999e22, 1e23, 123456789012345.6,
              999999999999999.9, 0.000123, 5e-324]
    for _ in range(6000):
        digits = rng.randint(1, 17)
        values.append(float(f"{rng.randint(1, 10**digits)}e{rng.randint(-30, 30) - digits}"))
        values.append(rng.randint(0, 10**6) + float(f"{rng.randint(1, 999)}e-{rng.randint(1, 4)}"))
    data = b"".join(call("value", f'{{"kind":"number","number":{value!r}}}', i) for i, value in enumerate(values))
    expected = b"".join(text_answer(i, f'"{number_text(value)}"') for i, value in enumerate(values))
    assert user_both(data) == expected


COMMON_LINES = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"method":"ping","jsonrpc":"2.0","id":"a"}',
    ' { "jsonrpc" : "2.0" , "id" : 2 , "method" : "tools/list" } ',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}',
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"b":2.5,"a":-1e3}}}',
    '{"method":"tools/call","params":{"arguments":{"text":"d\u00e9j\u00e0 vu"},"name":"echo"},"jsonrpc":"2.0","id":6}',
    '{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file:///hello.txt"}}',
    '{"jsonrpc":"2.0","id":8,"method":"nope"}',
]


@pytest.fixture
def reached(monkeypatch) -> list:
    """What reaches the line rules from now on: each line they judge, each request they hand to a handler."""
    from shipcode_mcp.lines import LineRules

    seen: list = []
    line, handle = LineRules.line, LineRules.handle
    monkeypatch.setattr(LineRules, "line", lambda self, data: seen.append(data) or line(self, data))
    monkeypatch.setattr(LineRules, "handle", lambda self, *args: seen.append(args[1]) or handle(self, *args))
    return seen


def test_common_lines_never_reach_the_line_rules(reached) -> None:
    """The fast path answers the common shapes itself (keys at the end of a line included)."""
    served = engine("compiled").Engine(default_catalogue())
    data = "".join(line + "\n" for line in COMMON_LINES).encode()
    assert served.feed(data) == predict(data)
    assert reached == []


# -- lists and resource reads ---------------------------------------------------------------------------------------

reads_app = Server("reads", version="2.0.0")
ESCAPES = "".join(chr(code) for code in range(128)) + "\u2028\u2029é日😀"


@reads_app.prompt
def greet() -> str:
    """Say hello."""
    return "Hello!"


reads_app.resource("text://plain", name="plain")(lambda: "plain text")
reads_app.resource("text://escapes", mime_type="application/json")(lambda: ESCAPES)
reads_app.resource("text://empty")(lambda: "")
reads_app.resource("text://é")(lambda: "déjà")
reads_app.resource('text://a"b')(lambda: "quoted uri")
reads_app.resource("blob://fixed", mime_type="application/octet-stream")(lambda: bytes(range(256)))
reads_app.resource("odd://subclass")(lambda: type("Text", (str,), {})("a subclass"))
reads_app.resource("odd://bytearray")(lambda: bytearray(b"\x00\x01\xfe"))
reads_app.resource("odd://memoryview")(lambda: memoryview(b"view"))
reads_app.resource("fail://number")(lambda: 42)
reads_app.resource("fail://surrogate")(lambda: "a\ud800")


@reads_app.resource("fail://rpc")
def refused() -> str:
    from shipcode_mcp import RpcError

    raise RpcError(-32001, "Refused")


@reads_app.resource("fail://error")
def broken() -> str:
    raise ValueError("broken")


@reads_app.resource("chars://{code}/{at}")
def chars(code: str, at: str) -> str:
    """One character (by code point) after ``at`` letters, in 70 letters."""
    return "a" * int(at) + chr(int(code)) + "b" * (70 - int(at))


@reads_app.resource("blob://{size}", mime_type="application/octet-stream")
def blob(size: str) -> bytes:
    return bytes(range(256))[: int(size)]


@reads_app.resource("pair://{a}/{b}")
def pair(a: str, b: str) -> str:
    return f"{a}+{b}"


def contents(uri: str, mime_type: str, data: object) -> bytes:
    """A ``resources/read`` result body, as the contract writes it."""
    if isinstance(data, str):
        entry = {"uri": uri, "mimeType": mime_type, "text": data}
    else:
        entry = {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(data).decode()}
    return b'{"contents":[' + orjson.dumps(entry) + b"]}"


READS = [
    ("text://plain", contents("text://plain", "text/plain", "plain text")),
    ("text://escapes", contents("text://escapes", "application/json", ESCAPES)),
    ("text://empty", contents("text://empty", "text/plain", "")),
    ("text://é", contents("text://é", "text/plain", "déjà")),
    ('text://a"b', contents('text://a"b', "text/plain", "quoted uri")),
    ("blob://fixed", contents("blob://fixed", "application/octet-stream", bytes(range(256)))),
    ("odd://subclass", contents("odd://subclass", "text/plain", "a subclass")),
    ("odd://bytearray", contents("odd://bytearray", "text/plain", b"\x00\x01\xfe")),
    ("odd://memoryview", contents("odd://memoryview", "text/plain", b"view")),
    ("pair://x/y", contents("pair://x/y", "text/plain", "x+y")),
    ("pair://日本/😀", contents("pair://日本/😀", "text/plain", "日本+😀")),
    *[(f"blob://{size}", contents(f"blob://{size}", "application/octet-stream", bytes(range(size))))
      for size in (0, 1, 2, 3, 4, 5, 6, 7, 100, 256)],
]
FAILED_READS = [
    ("fail://number", -32603, "Internal error"),
    ("fail://surrogate", -32603, "Internal error"),
    ("fail://error", -32603, "Internal error"),
    ("fail://rpc", -32001, "Refused"),
    ("nope://x", -32002, "Resource not found"),
    ("pair://x/y/z", -32002, "Resource not found"),
    ("pair://x/", -32002, "Resource not found"),
]


@pytest.fixture
def reads_both():
    """Feed the reads app to both engines (fresh ones each time); their answers must agree."""

    def both(data: bytes, app: Server = reads_app) -> bytes:
        outs = []
        for name in ("compiled", "pure"):
            served = engine(name).Engine(app.catalogue())
            outs.append(served.feed(data) + served.finish())
        assert outs[0] == outs[1]
        return outs[0]

    return both


def test_reads(reads_both) -> None:
    """Static resources and templates, text (escaped as orjson escapes it) and blobs (base64, every padding)."""
    data = b"".join(wire_read(uri, i) for i, (uri, _) in enumerate(READS))
    assert reads_both(data) == b"".join(result(body, i) for i, (_, body) in enumerate(READS))


def test_failed_reads(reads_both) -> None:
    data = b"".join(wire_read(uri, i) for i, (uri, _, _) in enumerate(FAILED_READS))
    expected = b"".join(error(code, message, i) for i, (_, code, message) in enumerate(FAILED_READS))
    assert reads_both(data) == expected


def test_reads_with_a_byte_to_escape_at_every_position(reads_both) -> None:
    cases = [(code, at) for code in (1, 9, 31, 34, 92, 127, 233, 8232, 128512) for at in range(71)]
    data = b"".join(wire_read(f"chars://{code}/{at}", i) for i, (code, at) in enumerate(cases))
    expected = b"".join(
        result(contents(f"chars://{code}/{at}", "text/plain", "a" * at + chr(code) + "b" * (70 - at)), i)
        for i, (code, at) in enumerate(cases)
    )
    assert reads_both(data) == expected


LIST_METHODS = ["initialize", "ping", "tools/list", "resources/list", "resources/templates/list", "prompts/list"]
LIST_PARAMS = [
    "",
    ',"params":{}',
    ',"params":{"cursor":"abc"}',
    ',"params":{"cursor":"abc","limit":3,"deep":{"a":1}}',
    ',"params":{"_meta":{"progressToken":1}}',
    ',"params":[]',
    ',"params":null',
    ',"params":{"cursor":"a\\"b"}',
]


def test_lists_with_any_params(reads_both) -> None:
    """A constant answer (a list's, ping's) is the same whatever the params object holds."""
    catalogue = reads_app.catalogue()
    methods = [method for method in LIST_METHODS if type(catalogue.routes[method]) is bytes]
    assert set(LIST_METHODS) - set(methods) <= {"initialize"}  # initialize may remember the client
    lines = []
    expected = []
    for i, (method, params) in enumerate((m, p) for m in methods for p in LIST_PARAMS):
        lines.append(f'{{"jsonrpc":"2.0","id":{i},"method":"{method}"{params}}}\n'.encode())
        if params in (',"params":[]', ',"params":null'):
            expected.append(error(-32602, "Invalid params", i) if params.endswith("[]") else INVALID_REQUEST % i)
        else:
            expected.append(HEAD + b"%d" % i + catalogue.routes[method])
    assert reads_both(b"".join(lines)) == b"".join(expected)


INVALID_REQUEST = HEAD + b'%d,"error":{"code":-32600,"message":"Invalid Request"}}\n'


changed_app = Server("changed", version="3.0.0")


@changed_app.tool()
def echo(text: str) -> str:
    """Echo it twice."""
    return text * 2


changed_app.resource("text://plain", name="plain")(lambda: "changed text")
changed_app.resource("blob://{size}")(lambda size: b"#" * int(size))


def test_a_catalogue_changed_while_serving(reads_both) -> None:
    """After ``refresh()``, both engines serve the catalogue as it is now: lists, tools and reads."""
    data = (
        request("tools/list", rid=1)
        + request("resources/list", rid=2)
        + request("resources/templates/list", rid=3)
        + call("echo", '{"text":"ab"}', 4)
        + wire_read("text://plain", rid=5)
        + wire_read("text://empty", rid=6)
        + wire_read("blob://3", rid=7)
    )
    outs = []
    for name in ("compiled", "pure"):
        catalogue = reads_app.catalogue()
        served = engine(name).Engine(catalogue)
        first = served.feed(data)
        now = changed_app.catalogue()
        for part in ("tools", "fast_tools", "invalid_arguments", "resources", "templates"):
            setattr(catalogue, part, getattr(now, part))
        for method, target in now.routes.items():
            if type(target) is bytes:
                catalogue.routes[method] = target
        served.refresh()
        outs.append((first, served.feed(data) + served.finish()))
    assert outs[0] == outs[1]
    assert outs[0][0] == reads_both(data)
    assert outs[0][1] == reads_both(data, changed_app) == (
        b"".join(HEAD + b"%d" % i + now.routes[method] for i, method in
                 enumerate(("tools/list", "resources/list", "resources/templates/list"), 1))
        + text("abab", 4)
        + result(contents("text://plain", "text/plain", "changed text"), 5)
        + error(-32002, "Resource not found", 6)
        + result(contents("blob://3", "text/plain", b"###"), 7)
    )


LIST_AND_READ_LINES = [
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"cursor":"abc"}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}',
    '{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{"cursor":"abc"}}',
    '{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}',
    '{"jsonrpc":"2.0","id":6,"method":"prompts/list"}',
    '{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"text://escapes"}}',
    '{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"blob://fixed"}}',
    '{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"pair://x/y"}}',
    '{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"blob://7"}}',
    '{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"fail://rpc"}}',
]


def test_lists_and_reads_never_reach_the_line_rules(reached) -> None:
    """The fast path answers lists and reads of direct resources and templates itself: no line rule runs."""
    data = "".join(line + "\n" for line in LIST_AND_READ_LINES).encode()
    answers = engine("compiled").Engine(reads_app.catalogue()).feed(data)
    assert reached == []
    assert answers == engine("pure").Engine(reads_app.catalogue()).feed(data)


many_app = Server("many")
for _number in range(40):
    many_app.resource(f"many://{_number}")(lambda number=_number: f"resource {number}")


def test_reads_of_many_resources(reached) -> None:
    """With more resources than the fast path compares one by one, it finds them by uri all the same."""
    uris = [f"many://{number}" for number in (0, 17, 39, 31, 32)]
    data = b"".join(wire_read(uri, i) for i, uri in enumerate(uris))
    answers = engine("compiled").Engine(many_app.catalogue()).feed(data)
    assert reached == []
    assert answers == b"".join(
        result(contents(uri, "text/plain", f"resource {uri[7:]}"), i) for i, uri in enumerate(uris)
    )
    assert engine("pure").Engine(many_app.catalogue()).feed(data) == answers
