"""A request read whole from one read (``whole_request``, both twins): exactly what the HTTP parser (httptools'
llhttp, with uvicorn's header callback) reads from the same bytes, or None.

The referee is the parser itself: for every input where ``whole_request`` answers, the parser must read one
complete request from the same bytes with the same method, fields and body, and nothing after it.
"""

from __future__ import annotations

import random

import httptools
import pytest
from support.wire import headerscan

HEADS = ((b"POST /mcp HTTP/1.1\r\n", b"POST"), (b"DELETE /mcp HTTP/1.1\r\n", b"DELETE"))
MAX_HEAD = 4096
BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def request(fields: list[bytes], body: bytes = BODY, line: bytes = b"POST /mcp HTTP/1.1", length: bool = True) -> bytes:
    if length:
        fields = [*fields, b"Content-Length: %d" % len(body)]
    return b"\r\n".join([line, *fields]) + b"\r\n\r\n" + body


class Parsed:
    """What llhttp reads, with uvicorn's header callback (names in lower case, trailing spaces and tabs off)."""

    def __init__(self, data: bytes) -> None:
        self.fields: list[tuple[bytes, bytes]] = []
        self.body = b""
        self.messages = 0
        self.began = 0
        parser = httptools.HttpRequestParser(self)
        try:
            parser.feed_data(data)
            self.error = None
        except httptools.HttpParserError as error:
            self.error = error
        self.method = parser.get_method()

    def on_message_begin(self) -> None:
        self.began += 1

    def on_header(self, name: bytes, value: bytes) -> None:
        self.fields.append((name.lower(), value.rstrip(b" \t")))

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.messages += 1


def read_by_parser(data: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bytes] | None:
    parsed = Parsed(data)
    if parsed.error is not None or (parsed.began, parsed.messages) != (1, 1):
        return None
    return parsed.method, parsed.fields, parsed.body


PLAIN = {
    "a POST": (
        request([b"Host: localhost:8000", b"Content-Type: application/json", b"Accept: application/json"]),
        (
            b"POST",
            [
                (b"host", b"localhost:8000"),
                (b"content-type", b"application/json"),
                (b"accept", b"application/json"),
                (b"content-length", b"40"),
            ],
            BODY,
        ),
    ),
    "spaces and tabs around values, empty value": (
        request([b"X-A:  \tone two \t", b"x-b:", b"X-C:\t"], b"{}"),
        (b"POST", [(b"x-a", b"one two"), (b"x-b", b""), (b"x-c", b""), (b"content-length", b"2")], b"{}"),
    ),
    "a DELETE without a body": (
        request([b"Mcp-Session-Id: abc"], b"", b"DELETE /mcp HTTP/1.1", length=False),
        (b"DELETE", [(b"mcp-session-id", b"abc")], b""),
    ),
    "no field at all": (b"DELETE /mcp HTTP/1.1\r\n\r\n", (b"DELETE", [], b"")),
    "a zero-padded length": (
        request([b"Content-Length: 0002"], b"{}", length=False),
        (b"POST", [(b"content-length", b"0002")], b"{}"),
    ),
    "the body holds CRLF CRLF": (
        request([], b"{\r\n\r\n}"),
        (b"POST", [(b"content-length", b"6")], b"{\r\n\r\n}"),
    ),
}

NOT_PLAIN = {
    "another target": request([], line=b"POST /other HTTP/1.1"),
    "a query": request([], line=b"POST /mcp?x=1 HTTP/1.1"),
    "HTTP/1.0": request([], line=b"POST /mcp HTTP/1.0"),
    "GET": request([], b"", line=b"GET /mcp HTTP/1.1", length=False),
    "lower-case method": request([], line=b"post /mcp HTTP/1.1"),
    "chunked": request([b"Transfer-Encoding: chunked"], b"2\r\n{}\r\n0\r\n\r\n", length=False),
    "connection close": request([b"Connection: close"]),
    "connection keep-alive": request([b"Connection: keep-alive"]),
    "expect": request([b"Expect: 100-continue"]),
    "upgrade": request([b"Upgrade: websocket"]),
    "two lengths": request([b"Content-Length: 40"]),
    "a length with a sign": request([b"Content-Length: +2"], b"{}", length=False),
    "an empty length": request([b"Content-Length:"], b"", length=False),
    "a length too long": request([b"Content-Length: 0000000000000002"], b"{}", length=False),
    "body shorter than its length": request([b"Content-Length: 41"], length=False),
    "a body without a length": request([], length=False),
    "a second request after it": request([]) * 2,
    "part of a second request after it": request([]) + b"POST /mcp",
    "head unfinished": request([])[:30],
    "space before the colon": request([b"X-A : 1"]),
    "no colon": request([b"X-A"]),
    "empty name": request([b": 1"]),
    "folded line": request([b"X-A: 1", b" 2"]),
    "a bare CR in a value": request([b"X-A: 1\r2"]),
    "a bare LF in a value": request([b"X-A: 1\n2"]),
    "a control character in a value": request([b"X-A: 1\x012"]),
    "a non-ASCII value": request([b"X-A: \xc3\xa9"]),
    "a non-token name": request([b"X(A): 1"]),
    "too many fields": request([b"X-%d: 1" % i for i in range(100)]),
    "head too large": request([b"X-Pad: " + b"p" * MAX_HEAD]),
}


@pytest.mark.parametrize("twin", [pytest.param("compiled", marks=pytest.mark.compiled), "pure"])
@pytest.mark.parametrize("shape", list(PLAIN))
def test_a_plain_request_is_read_as_the_parser_reads_it(twin: str, shape: str) -> None:
    data, expected = PLAIN[shape]
    assert headerscan(twin).whole_request(data, HEADS, MAX_HEAD) == expected
    assert read_by_parser(data) == expected


@pytest.mark.parametrize("twin", [pytest.param("compiled", marks=pytest.mark.compiled), "pure"])
@pytest.mark.parametrize("shape", list(NOT_PLAIN))
def test_anything_else_is_left_to_the_parser(twin: str, shape: str) -> None:
    assert headerscan(twin).whole_request(NOT_PLAIN[shape], HEADS, MAX_HEAD) is None


def test_the_head_limit_counts_the_whole_head() -> None:
    data = request([b"X-A: 1"], b"{}")
    head = data.index(b"\r\n\r\n") + 4
    scan = headerscan("pure")
    assert scan.whole_request(data, HEADS, head) is not None
    assert scan.whole_request(data, HEADS, head - 1) is None


def test_one_hundred_fields_are_read_whole() -> None:
    data = request([b"X-%d: 1" % i for i in range(99)])
    assert len(headerscan("pure").whole_request(data, HEADS, MAX_HEAD)[1]) == 100


#: Bytes a mutation puts into a request: the ones the rules above turn on.
SPECIAL = [b"\r", b"\n", b"\r\n", b":", b" ", b"\t", b"\x00", b"\x7f", b"\x80", b"(", b"0", b"9", b"A", b"-"]


def mutants(count: int) -> list[bytes]:
    """Requests with a few bytes changed, inserted or removed, from a seeded generator."""
    chance = random.Random(20261202)
    seeds = [data for data, _ in PLAIN.values()] + list(NOT_PLAIN.values())
    found = []
    for _ in range(count):
        data = bytearray(chance.choice(seeds))
        for _ in range(chance.randint(1, 3)):
            at = chance.randrange(len(data) + 1)
            kind = chance.randrange(3)
            if kind == 0:
                data[at:at] = chance.choice(SPECIAL)
            elif kind == 1 and at < len(data):
                data[at : at + 1] = chance.choice(SPECIAL)
            elif at < len(data):
                del data[at]
        found.append(bytes(data))
    return found


TOKEN = b"!#$%&'*+.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"
VALUE = bytes(range(0x20, 0x7F)) + b"\t"


def plain_requests(count: int) -> list[bytes]:
    """Well-formed requests of random plain shapes (names, values, spaces, bodies), from a seeded generator."""
    chance = random.Random(1202)
    found = []
    for _ in range(count):
        fields = []
        for _ in range(chance.randint(0, 8)):
            name = bytes(chance.choices(TOKEN, k=chance.randint(1, 12)))
            value = bytes(chance.choices(VALUE, k=chance.randint(0, 20)))
            fields.append(name + b":" + b" " * chance.randint(0, 2) + value + b"\t" * chance.randint(0, 1))
        body = bytes(chance.choices(range(256), k=chance.randint(0, 40)))
        fields.insert(chance.randint(0, len(fields)), b"content-LENGTH: %d" % len(body))
        line = b"DELETE /mcp HTTP/1.1" if chance.random() < 0.2 else b"POST /mcp HTTP/1.1"
        found.append(request(fields, body, line, length=False))
    return found


MUTANTS = mutants(4000)
PLAIN_REQUESTS = plain_requests(2000)


@pytest.mark.parametrize("twin", [pytest.param("compiled", marks=pytest.mark.compiled), "pure"])
def test_whatever_is_read_whole_the_parser_reads_the_same(twin: str) -> None:
    scan = headerscan(twin)
    read = [(data, scan.whole_request(data, HEADS, MAX_HEAD)) for data in MUTANTS + PLAIN_REQUESTS]
    differing = [data for data, found in read if found is not None and found != read_by_parser(data)]
    assert differing == []
    # what is read whole: most plain requests (not those with a field of NOT_WHOLE), some mutants
    plain = sum(found is not None for _, found in read[len(MUTANTS) :])
    assert (plain > 1900, sum(found is not None for _, found in read[: len(MUTANTS)]) > 50) == (True, True)


@pytest.mark.compiled
def test_both_twins_read_the_same() -> None:
    compiled, pure = headerscan("compiled"), headerscan("pure")
    inputs = MUTANTS + PLAIN_REQUESTS + [data for data, _ in PLAIN.values()] + list(NOT_PLAIN.values())
    differing = [
        data
        for data in inputs
        if compiled.whole_request(data, HEADS, MAX_HEAD) != pure.whole_request(data, HEADS, MAX_HEAD)
    ]
    assert differing == []
