"""Which lines are blank: only spaces, tabs and carriage returns, however long the line, on both engines.

Rule 1 of the contract makes a blank line silent, and rule 2 answers a line over
``--max-message-bytes`` with ``-32600`` (id null) unless it is blank. Any other byte makes a
line not blank: NUL, form feed, vertical tab, the other control bytes, DEL, bytes that are not
UTF-8, and the Unicode spaces. The compiled engine judges an oversize line in two places (a line
that arrives in one read, and one it discards as it streams in), so each case runs whole, byte
by byte, and split around the limit.
"""

from __future__ import annotations

import pytest
from support.wire import INVALID_NULL, PARSE, ping, pong

PING = ping(7)
PONG = pong(7)
LIMIT = 48

#: Bytes (and UTF-8 sequences) that look blank to some definition of whitespace, but not to the contract's.
NOT_BLANK = {
    "NUL": b"\x00",
    "SOH": b"\x01",
    "BEL": b"\x07",
    "BS": b"\x08",
    "VT": b"\x0b",
    "FF": b"\x0c",
    "ESC": b"\x1b",
    "FS": b"\x1c",
    "GS": b"\x1d",
    "RS": b"\x1e",
    "US": b"\x1f",
    "DEL": b"\x7f",
    "raw 0x85": b"\x85",
    "raw 0xa0": b"\xa0",
    "NEL": "\u0085".encode(),
    "NBSP": "\u00a0".encode(),
    "ideographic space": "\u3000".encode(),
    "line separator": "\u2028".encode(),
    "BOM": "\ufeff".encode(),
}
BLANK = [b" ", b"\t", b"\r"]


def oversize_lines(odd: bytes) -> list[bytes]:
    """Lines over the limit whose only non-blank bytes are ``odd`` (without their newline)."""
    return [
        odd * 100,  # the case from the field: 100 form feeds with a 48-byte limit
        odd * (LIMIT // len(odd) + 1),  # just over the limit
        b" " * 60 + odd + b" " * 39,  # one odd byte among spaces, past the limit
        odd + b"\t" * 99,  # at the start, before the limit
        b"\r" * 99 + odd,  # at the very end
        b" \t\r" * 40 + odd + b"\r",  # before the \r that does not count
    ]


def check_every_split(run, data: bytes, expected: bytes) -> None:
    assert run(data, max_message_bytes=LIMIT) == expected, "whole"
    assert run(data, chunks=range(1, len(data)), max_message_bytes=LIMIT) == expected, "byte by byte"
    for cut in (LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2, 60, 61):
        assert run(data, chunks=[cut], max_message_bytes=LIMIT) == expected, f"split at {cut}"


@pytest.mark.parametrize("odd", NOT_BLANK.values(), ids=NOT_BLANK.keys())
def test_an_oversize_line_with_any_other_byte_is_refused(run, odd: bytes) -> None:
    for line in oversize_lines(odd):
        check_every_split(run, line + b"\n" + PING, INVALID_NULL + PONG)
        check_every_split(run, PING + line, PONG + INVALID_NULL)  # the last line, without a newline


@pytest.mark.parametrize("odd", NOT_BLANK.values(), ids=NOT_BLANK.keys())
def test_a_short_line_with_any_other_byte_is_not_blank(run, odd: bytes) -> None:
    lines = [odd, b" " + odd + b" ", b"\t" + odd + b"\r", b"\r" + odd, odd * (LIMIT // len(odd))]
    data = b"".join(line + b"\n" for line in lines) + PING
    assert run(data, max_message_bytes=LIMIT) == PARSE * len(lines) + PONG


@pytest.mark.parametrize("blank", BLANK, ids=["space", "tab", "cr"])
def test_an_oversize_blank_line_is_silent(run, blank: bytes) -> None:
    for line in (blank * 100, blank * (LIMIT + 2), b" \t\r" * 100, blank * 100 + b"\r"):
        check_every_split(run, line + b"\n" + PING, PONG)
        check_every_split(run, PING + line, PONG)


def test_form_feeds_around_the_limit(run) -> None:
    """At the limit a line of form feeds is judged (not JSON); one byte over, it is refused unread."""
    cases = [
        (b"\f" * LIMIT, PARSE),
        (b"\f" * LIMIT + b"\r", PARSE),  # one trailing \r does not count
        (b"\f" * (LIMIT + 1), INVALID_NULL),
        (b"\f" * LIMIT + b"\r\r", INVALID_NULL),
        (b"\f" * (LIMIT - 1) + b"\r", PARSE),
    ]
    for line, answer in cases:
        check_every_split(run, line + b"\n" + PING, answer + PONG)


def test_control_bytes_in_oversize_lines_through_the_server(run_process) -> None:
    lines = [b"\f" * 100, b"\v" * 100, b"\x00" * 100, b" " * 100, b" " * 99 + b"\x1f", b"\x7f" * 49, b"\t\r" * 50]
    answers = [INVALID_NULL, INVALID_NULL, INVALID_NULL, b"", INVALID_NULL, INVALID_NULL, b""]
    data = b"".join(line + b"\n" for line in lines) + PING
    done = run_process(data, "--max-message-bytes", str(LIMIT))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"".join(answers) + PONG, b"")


def test_one_hundred_form_feeds_with_a_48_byte_limit(run_process) -> None:
    done = run_process(b"\f" * 100 + b"\n", "--max-message-bytes", "48")
    assert (done.returncode, done.stdout, done.stderr) == (0, INVALID_NULL, b"")
