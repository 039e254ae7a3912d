"""Hostile input and faults, on both engines: nothing crashes, nothing is lost, memory stays bounded.

Every check compares whole output bytes. The real server runs as a subprocess over pipes
where the operating system matters (giant lines, floods, closed pipes, signals); the line
processor runs in-process where only bytes matter (chunking, pathological lines).

Tests marked ``soak`` take minutes: the default run deselects them (``-m 'not soak'`` in
pyproject's addopts), and they skip themselves unless ``-m`` selects ``soak`` or
``SHIPCODE_MCP_SOAK=1`` is set. The soak command: ``python -m pytest -m soak tests/process/test_hostile_stdio.py``.
"""

from __future__ import annotations

import os
import random
import select
import signal
import threading
import time

import pytest
from support.serverproc import (
    INTERNAL,
    ServerProcess,
    baseline_rss_mib,
    corpus_messages,
    echo_answer,
    echo_call,
    mixed_requests,
)
from support.wire import (
    HEAD,
    INVALID_NULL,
    PARSE,
    SERVER_COMMAND,
    default_catalogue,
    engine_env,
    ping,
    pong,
    result,
    text,
)

from shipcode_mcp.catalogue import RouteKind

MiB = 1024 * 1024
#: Generous bound for one pathological line, on a shared and noisy machine.
BOUNDED_SECONDS = 30


def answers_and_peak(engine_name: str, data: bytes, length: int, *args: str) -> tuple[bytes, float]:
    """Send ``data``, read ``length`` bytes of answers, then end the session cleanly.

    Returns the answers and the server's peak RSS (MiB) while it answered.
    """
    with ServerProcess(engine_name, *args) as server:
        server.start_writer(data, close=False)
        out = server.read_exactly(length, timeout=300)
        peak = server.peak_rss_mib()
        server.wait_writer()
        server.close_stdin()
        assert server.read_to_eof() == b""
        assert server.wait().status == 0
        assert server.stderr() == b""
    return out, peak


def timed(run, data: bytes, **kwargs) -> tuple[bytes, float]:
    start = time.monotonic()
    out = run(data, **kwargs)
    return out, time.monotonic() - start


# -- giant lines -------------------------------------------------------------------------


def giant_line_session(limit: int, size: int, at_limit: bool = True) -> tuple[bytes, bytes]:
    """Input with oversize lines of ``size`` bytes (and lines at the limit), and its answers."""
    at_limit_text = b"y" * (limit - len(echo_call(3, b"")))
    at_limit_line = echo_call(3, at_limit_text)
    assert len(at_limit_line) == limit
    data = [
        ping(1),
        echo_call(2, b"x" * size) + b"\n",  # oversize: looks like a real request
        ping(2),
        b" " * size + b"\r\n",  # oversize but blank: silence
        b"[" * size + b"\n",  # oversize and pathological
        ping(5),
    ]
    expected = [pong(1), INVALID_NULL, pong(2), INVALID_NULL, pong(5)]
    if at_limit:
        data[4:4] = [
            at_limit_line + b"\r\n",  # exactly at the limit (the \r does not count)
            echo_call(4, at_limit_text + b"z") + b"\n",  # one byte over
        ]
        expected[3:3] = [echo_answer(3, at_limit_text), INVALID_NULL]
    return b"".join(data), b"".join(expected)


def check_giant_lines(engine_name: str, limit: int, size: int, extra_mib: float, at_limit: bool = True) -> float:
    data, expected = giant_line_session(limit, size, at_limit)
    args = () if limit == 16 * MiB else ("--max-message-bytes", str(limit))
    baseline = baseline_rss_mib(engine_name, *args)
    out, peak = answers_and_peak(engine_name, data, len(expected), *args)
    assert out == expected
    assert peak < baseline + extra_mib, f"peak RSS {peak:.1f} MiB, baseline {baseline:.1f} MiB"
    return peak


def test_giant_lines_are_refused_as_they_stream(engine_name: str) -> None:
    # 20 MiB lines against a 1 MB limit: a server holding such a line would need 20 MiB more.
    check_giant_lines(engine_name, 1_000_000, 20 * MiB, extra_mib=10)


@pytest.mark.soak
def test_soak_200_mib_lines_with_the_default_limit(engine_name: str, soak: None) -> None:
    # Oversize lines only: a 16 MiB request at the limit is served, and costs what it costs.
    peak = check_giant_lines(engine_name, 16 * MiB, 200 * MiB, extra_mib=80, at_limit=False)
    assert peak < 80, f"peak RSS {peak:.1f} MiB"


LIMIT = 48


def limit_cases() -> list[tuple[bytes, bytes]]:
    """Lines around a limit of LIMIT bytes, and their answers."""
    exact = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    exact += b" " * (LIMIT - len(exact))
    assert len(exact) == LIMIT
    return [
        (exact, pong(1)),
        (exact + b"\r", pong(1)),
        (exact + b" ", INVALID_NULL),
        (exact + b" \r", INVALID_NULL),
        (exact + b"\r\r", INVALID_NULL),
        (b" " + exact, INVALID_NULL),
        (b" " * (LIMIT * 5), b""),
        (b"\r" * (LIMIT * 5), b""),
        (b" \t\r" * (LIMIT * 3), b""),
        (b" " * (LIMIT * 5) + b"x", INVALID_NULL),
        (b"x" + b" " * (LIMIT * 5), INVALID_NULL),
        (b" " * LIMIT + b"x", INVALID_NULL),
        (b"x" * (LIMIT + 1), INVALID_NULL),
        (b"x" * LIMIT, PARSE),
        (b"[" * (LIMIT * 10), INVALID_NULL),
        (b"\xff" * (LIMIT + 1), INVALID_NULL),
        ("é".encode() * (LIMIT // 2), PARSE),
        # a two-byte character straddling the limit
        (b"x" + "é".encode() * (LIMIT // 2), INVALID_NULL),
    ]


@pytest.mark.parametrize("last", [False, True], ids=["followed", "last-without-newline"])
def test_lines_around_the_limit_under_every_split(run, last: bool) -> None:
    for line, answer in limit_cases():
        if last:
            data, expected = ping(9) + line, pong(9) + answer
        else:
            data, expected = line + b"\n" + ping(9), answer + pong(9)
        assert run(data, max_message_bytes=LIMIT) == expected, line
        for cut in range(1, len(data)):
            assert run(data, chunks=[cut], max_message_bytes=LIMIT) == expected, (line, cut)
        rng = random.Random(len(line))
        for _ in range(20):
            cuts = sorted(rng.sample(range(1, len(data)), min(6, len(data) - 1)))
            assert run(data, chunks=cuts, max_message_bytes=LIMIT) == expected, (line, cuts)


def test_multibyte_text_at_the_limit(run) -> None:
    """The limit counts bytes, not characters: a character straddling it makes the line too long."""
    text = "é日😀".encode() * 10
    line = echo_call(7, text)
    limit = len(line)
    over = echo_call(7, text + "é".encode())
    data = line + b"\n" + over + b"\n" + line
    expected = echo_answer(7, text) + INVALID_NULL + echo_answer(7, text)
    for cut in range(1, len(data)):
        assert run(data, chunks=[cut], max_message_bytes=limit) == expected, cut
    assert run(data, max_message_bytes=limit - 1) == INVALID_NULL * 3


def test_oversize_lines_byte_by_byte(run) -> None:
    data = b"".join(line + b"\n" for line, _ in limit_cases())
    expected = b"".join(answer for _, answer in limit_cases())
    assert run(data, chunks=range(1, len(data)), max_message_bytes=LIMIT) == expected


# -- chunking ----------------------------------------------------------------------------


def corpus_stream() -> bytes:
    return b"".join(line + b"\n" for line in corpus_messages())


def test_chunking_does_not_change_the_answers(run) -> None:
    data = corpus_stream()
    whole = run(data)
    assert whole.count(b"\n") > 50
    assert run(data, chunks=range(1, len(data))) == whole  # one byte per read
    for cut in range(1, len(data), 7):  # one line split across two reads, at every position
        assert run(data, chunks=[cut]) == whole
    rng = random.Random(3)
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randrange(1, 40)))
        assert run(data, chunks=cuts) == whole


def test_many_lines_per_read_and_lines_across_reads(engine_name: str) -> None:
    data, expected = mixed_requests(3000, seed=5)
    rng = random.Random(5)
    pieces = []
    position = 0
    while position < len(data):
        size = rng.choice((1, 2, 7, 40, 333, 4096, 70000))
        pieces.append(data[position : position + size])
        position += size
    with ServerProcess(engine_name) as server:

        def send() -> None:
            for piece in pieces:
                server.send(piece)
                if rng.random() < 0.05:
                    time.sleep(0.002)  # let the server read what is there: a line split across reads
            server.close_stdin()

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        out = server.read_to_eof()
        sender.join(30)
        assert server.wait().status == 0
        assert server.stderr() == b""
    assert out == expected


# -- floods and slow readers -------------------------------------------------------------


def check_flood(engine_name: str, count: int, extra_mib: float) -> None:
    data, expected = mixed_requests(count, seed=count)
    baseline = baseline_rss_mib(engine_name)
    with ServerProcess(engine_name) as server:
        server.start_writer(data, close=False)
        # The client reads nothing: the server must block, not buffer the backlog.
        written = server.wait_until_stalled()
        assert written < min(len(data) // 2, 8 * MiB), f"{written} of {len(data)} bytes taken while nobody read"
        # Then it reads slowly, a little at a time...
        out = bytearray()
        for _ in range(200):
            out += server.read_some(4096)
            time.sleep(0.001)
        # ...and finally as fast as it can.
        out += server.read_exactly(len(expected) - len(out), timeout=600)
        server.wait_writer()
        peak = server.peak_rss_mib()
        server.close_stdin()
        assert server.read_to_eof() == b""
        assert server.wait().status == 0
        assert server.stderr() == b""
    assert len(out) == len(expected)
    assert out == expected  # every answer, in order, none lost, none duplicated
    assert peak < baseline + extra_mib, f"peak RSS {peak:.1f} MiB, baseline {baseline:.1f} MiB"


def test_flood_with_a_slow_reader(engine_name: str) -> None:
    check_flood(engine_name, 200_000, extra_mib=12)


@pytest.mark.soak
def test_soak_million_request_flood(engine_name: str, soak: None) -> None:
    check_flood(engine_name, 1_000_000, extra_mib=12)


def test_memory_stays_flat_under_a_flood_of_errors(engine_name: str) -> None:
    """Error answers raised by handlers (Invalid params, Unknown tool, Resource not found) cost nothing lasting."""
    requests = (
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n', b"-32602", b"Invalid params"),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}\n', b"-32602", b"Unknown tool"),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}\n',
            b"-32002",
            b"Resource not found",
        ),
    )
    count = 60_000
    data = b"".join(line for line, _, _ in requests) * count
    expected = (
        b"".join(HEAD + b'1,"error":{"code":%s,"message":"%s"}}\n' % (code, text) for _, code, text in requests) * count
    )
    baseline = baseline_rss_mib(engine_name)
    out, peak = answers_and_peak(engine_name, data, len(expected))
    assert out == expected
    assert peak < baseline + 12, f"peak RSS {peak:.1f} MiB, baseline {baseline:.1f} MiB"


def test_memory_stays_flat_while_the_reader_is_away(engine_name: str) -> None:
    data, expected = mixed_requests(100_000, seed=11)
    with ServerProcess(engine_name) as server:
        server.start_writer(data, close=True)
        written = server.wait_until_stalled()
        stalled_peak = server.peak_rss_mib()
        time.sleep(1.0)  # nobody reads: nothing moves, nothing grows
        assert server.written - written < MiB
        assert server.peak_rss_mib() - stalled_peak < 2
        out = server.read_to_eof()
        assert server.wait().status == 0
    assert out == expected


# -- the client goes away ----------------------------------------------------------------


def test_stdout_closed_with_requests_queued(engine_name: str) -> None:
    data, _ = mixed_requests(100_000, seed=2)
    with ServerProcess(engine_name) as server:
        server.start_writer(data, close=False)  # stdin stays open
        server.wait_until_stalled()
        server.close_stdout()
        exit_info = server.wait(timeout=30)
        assert exit_info.status == 0
        assert exit_info.cpu_seconds < 10
        assert server.stderr() == b""


def test_stdout_closed_while_idle_then_a_request(engine_name: str) -> None:
    with ServerProcess(engine_name) as server:
        server.send(ping(1))
        assert server.read_exactly(len(pong(1))) == pong(1)
        server.close_stdout()
        before = server.cpu_seconds()
        time.sleep(1.0)  # no busy loop while nothing happens
        assert server.cpu_seconds() - before < 0.5
        server.send(ping(2) * 1000)
        exit_info = server.wait(timeout=30)
        assert exit_info.status == 0
        assert server.stderr() == b""


def test_stdout_closed_and_stdin_at_eof(engine_name: str) -> None:
    data, _ = mixed_requests(20_000, seed=4)
    with ServerProcess(engine_name) as server:
        server.start_writer(data, close=True)
        server.wait_until_stalled()
        server.close_stdout()
        assert server.wait(timeout=30).status == 0
        assert server.stderr() == b""


def test_stdin_eof_flushes_everything(engine_name: str) -> None:
    data, expected = mixed_requests(5000, seed=6)
    data += ping(999_999).rstrip(b"\n")  # the last line has no newline
    expected += pong(999_999)
    with ServerProcess(engine_name) as server:
        server.start_writer(data, close=True)
        server.wait_until_stalled(quiet=0.3)  # nobody reads the answers for a while
        out = server.read_to_eof()
        server.wait_writer()
        assert server.wait().status == 0
        assert server.stderr() == b""
    assert out == expected


def test_stdin_closed_at_start(engine_name: str) -> None:
    with ServerProcess(engine_name) as server:
        server.close_stdin()
        assert server.read_to_eof() == b""
        assert server.wait().status == 0
        assert server.stderr() == b""




@pytest.mark.parametrize("redirect", ["<&-", ">&-"], ids=["stdin", "stdout"])
def test_descriptor_closed_before_start(engine_name: str, redirect: str) -> None:
    """Started with stdin or stdout already closed: exit 0 quietly (there is nothing to answer)."""
    import shlex
    import subprocess

    command = " ".join(shlex.quote(part) for part in SERVER_COMMAND)
    done = subprocess.run(
        ["sh", "-c", f"exec {command} {redirect}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr == b""


# -- signals -----------------------------------------------------------------------------

STOP_SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]


@pytest.mark.parametrize("signum", STOP_SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_when_idle(engine_name: str, signum: int) -> None:
    with ServerProcess(engine_name) as server:
        data, expected = mixed_requests(500, seed=7)
        server.send(data)
        assert server.read_exactly(len(expected)) == expected
        server.signal(signum)
        exit_info = server.wait(timeout=30)
        assert exit_info.status == 0
        assert server.read_to_eof() == b""
        assert server.stderr() == b""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=lambda s: signal.Signals(s).name)
def test_signal_while_blocked_on_a_slow_reader_flushes_whole_answers(engine_name: str, signum: int) -> None:
    """Stopped while writing to a full pipe, the server finishes the answers it computed."""
    data, expected = mixed_requests(100_000, seed=8)
    with ServerProcess(engine_name) as server:
        server.start_writer(data, close=False)
        server.wait_until_stalled()  # output pipe full, server blocked in write
        server.signal(signum)
        out = server.read_to_eof(timeout=60)
        exit_info = server.wait(timeout=30)
        assert exit_info.status == 0
        assert server.stderr() == b""
    assert out, "nothing was flushed"
    assert out.endswith(b"\n"), f"a truncated answer: ...{out[-80:]!r}"
    assert expected.startswith(out), "answers were corrupted, lost or duplicated"


def test_signal_with_a_reader_that_never_reads(engine_name: str) -> None:
    """Stopped while the client neither reads nor closes: exit promptly all the same."""
    data, expected = mixed_requests(100_000, seed=9)
    with ServerProcess(engine_name) as server:
        server.start_writer(data, close=False)
        server.wait_until_stalled()
        start = time.monotonic()
        server.signal(signal.SIGTERM)
        exit_info = server.wait(timeout=30)
        elapsed = time.monotonic() - start
        assert exit_info.status == 0
        assert elapsed < 20
        out = server.read_to_eof()
        assert server.stderr() == b""
    assert expected.startswith(out)


def check_signals_at_random_moments(engine_name: str, rounds: int) -> None:
    """Stop the server at random moments of a flood: the output is always whole answers, in order."""
    rng = random.Random(rounds)
    data, expected = mixed_requests(50_000, seed=13)
    for _ in range(rounds):
        with ServerProcess(engine_name) as server:
            server.start_writer(data, close=rng.random() < 0.5)
            out = bytearray()
            want = rng.randrange(1, len(expected) // 2)  # the server is up: its handlers are set
            while len(out) < want:
                chunk = server.read_some(rng.choice((1, 100, 4096, 1 << 20)))
                assert chunk, "the server ended before it was stopped"
                out += chunk
            if rng.random() < 0.5:
                time.sleep(rng.random() * 0.05)
            server.signal(rng.choice((signal.SIGTERM, signal.SIGINT)))
            out += server.read_to_eof()
            exit_info = server.wait(timeout=30)
            assert exit_info.status == 0
            assert server.stderr() == b""
        assert out.endswith(b"\n") or not out, f"a truncated answer: ...{bytes(out[-80:])!r}"
        assert expected.startswith(out), "answers were corrupted, lost or duplicated"


def test_signals_at_random_moments(engine_name: str) -> None:
    check_signals_at_random_moments(engine_name, 4)


@pytest.mark.soak
def test_soak_signals_at_random_moments(engine_name: str, soak: None) -> None:
    check_signals_at_random_moments(engine_name, 300)




def test_repeated_signals_exit_quietly(engine_name: str) -> None:
    """An impatient client (or process manager) signals again while the server is stopping."""
    data, expected = mixed_requests(20_000, seed=14)
    for round_ in range(5):
        with ServerProcess(engine_name) as server:
            server.start_writer(data, close=False)
            out = server.read_some(4096)
            for _ in range(3 + round_):
                server.signal(signal.SIGTERM)
                time.sleep(0.001 * round_)
            out += server.read_to_eof()
            exit_info = server.wait(timeout=30)
            assert exit_info.status == 0
            assert server.stderr() == b""
        assert expected.startswith(out)


SLOW_APP = '''
import time
from shipcode_mcp import Server

app = Server("slow")

@app.tool()
def nap(seconds: float) -> str:
    """Sleep"""
    time.sleep(seconds)
    return "rested"
'''


def nap_call(rid: int, seconds: float) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nap","arguments":{"seconds":%r}}}\n' % (
        rid,
        seconds,
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=lambda s: signal.Signals(s).name)
def test_signal_during_a_tool_call(engine_name: str, tmp_path, signum: int) -> None:
    """Answers computed before the stop are written; the interrupted call is not answered."""
    app = tmp_path / "slow_app.py"
    app.write_text(SLOW_APP)
    nap_done = text("rested")
    with ServerProcess(engine_name, str(app)) as server:
        server.send(nap_call(1, 0.01) + ping(2))
        first = nap_done + pong(2)
        assert server.read_exactly(len(first)) == first
        server.send(nap_call(3, 60) + ping(4))
        time.sleep(0.5)  # the second call is running
        server.signal(signum)
        exit_info = server.wait(timeout=30)
        assert exit_info.status == 0
        assert server.read_to_eof() == b""
        assert server.stderr() == b""


def test_answers_computed_in_the_same_read_are_flushed_on_a_stop(engine_name: str, tmp_path) -> None:
    app = tmp_path / "slow_app.py"
    app.write_text(SLOW_APP)
    with ServerProcess(engine_name, str(app)) as server:
        server.send(ping(0))
        assert server.read_exactly(len(pong(0))) == pong(0)  # up and running
        # The pings before the long call are computed but not yet written when the stop comes.
        server.send(ping(1) + ping(2) + nap_call(3, 60) + ping(4))
        time.sleep(1.0)
        server.signal(signal.SIGTERM)
        exit_info = server.wait(timeout=30)
        out = server.read_to_eof()
        assert exit_info.status == 0
        assert server.stderr() == b""
    assert out == pong(1) + pong(2)


# -- pathological lines ------------------------------------------------------------------


def pathological_lines() -> list[tuple[str, bytes, bytes]]:
    """(name, line without newline, expected answer)."""
    rng = random.Random(1)
    random_mib = rng.randbytes(MiB).replace(b"\n", b"\x00")
    deep_1024 = b"[" * 1024 + b"]" * 1024
    long_digits = b"1" + b"7" * MiB
    long_fraction = b"0." + b"0" * MiB + b"1"
    long_exponent = b"1e" + b"9" * 10000
    many_keys = b"{" + b",".join(b'"k%d":%d' % (i, i) for i in range(200_000)) + b"}"
    multibyte = ("é日😀ü" * (MiB // 4)).encode()
    escapes = b'\\u00e9\\ud83d\\ude00\\n\\"' * 100_000
    escaped_text = ('é😀\\n\\"' * 100_000).encode()
    return [
        ("200k open brackets", b"[" * 200_000, PARSE),
        ("200k nested arrays", b"[" * 200_000 + b"]" * 200_000, PARSE),
        ("200k nested objects", b'{"a":' * 200_000 + b"1" + b"}" * 200_000, PARSE),
        ("200k brackets around 1e400", b"[" * 200_000 + b"1e400" + b"]" * 200_000, PARSE),
        ("200k brackets in params", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 200_000, PARSE),
        ("200k brackets in a string", echo_call(1, b"[{" * 100_000), echo_answer(1, b"[{" * 100_000)),
        ("1024 levels", deep_1024, INVALID_NULL),
        ("1025 levels", b"[" + deep_1024 + b"]", PARSE),
        ("1024 levels around 1e400", b"[" * 1024 + b"1e400" + b"]" * 1024, INVALID_NULL),
        ("1025 levels around 1e400", b"[" * 1025 + b"1e400" + b"]" * 1025, PARSE),
        ("1 MiB of NUL", b"\x00" * MiB, PARSE),
        ("NUL inside a string", echo_call(1, b"a\x00b"), PARSE),
        ("NUL after a message", ping(1).rstrip(b"\n") + b"\x00", PARSE),
        ("1 MiB random bytes", random_mib, PARSE),
        ("1 MiB of form feeds", b"\x0c" * MiB, PARSE),
        ("DEL is text", echo_call(1, b"a\x7fb"), echo_answer(1, b"a\x7fb")),
        ("1 MiB digit id", b'{"jsonrpc":"2.0","id":' + long_digits + b',"method":"ping"}', INVALID_NULL),
        (
            "1 MiB digit number",
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":'
            + long_digits
            + b',"b":1}}}',
            text("Invalid arguments for add", is_error=True),
        ),
        (
            "1 MiB fraction",
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":'
            + long_fraction
            + b',"b":1}}}',
            text("1"),
        ),
        (
            "huge exponent",
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":'
            + long_exponent
            + b',"b":1}}}',
            text("Invalid arguments for add", is_error=True),
        ),
        (
            "200k keys",
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + many_keys + b"}",
            pong(1),
        ),
        ("4 MiB multibyte text", echo_call(1, multibyte), echo_answer(1, multibyte)),
        ("escapes", echo_call(1, escapes), echo_answer(1, escaped_text)),
        (
            "multibyte id",
            '{"jsonrpc":"2.0","id":"日本😀é\\u2028","method":"ping"}'.encode(),
            HEAD + '"日本😀é\u2028","result":{}}\n'.encode(),
        ),
        ("BOM", b"\xef\xbb\xbf" + ping(1).rstrip(b"\n"), PARSE),
    ]


@pytest.mark.parametrize("case", pathological_lines(), ids=lambda case: case[0])
def test_pathological_line(run, case: tuple[str, bytes, bytes]) -> None:
    _, line, answer = case
    out, seconds = timed(run, line + b"\n" + ping(2))
    assert out == answer + pong(2)
    assert seconds < BOUNDED_SECONDS
    assert run(line) == answer  # also as a last line without newline


def test_pathological_lines_through_the_server(engine_name: str) -> None:
    cases = pathological_lines()
    data = b"".join(line + b"\n" + ping(i) for i, (_, line, _) in enumerate(cases))
    expected = b"".join(answer + pong(i) for i, (_, _, answer) in enumerate(cases))
    with ServerProcess(engine_name) as server:
        server.start_writer(data)
        out = server.read_to_eof(timeout=120)
        assert server.wait().status == 0
        assert server.stderr() == b""
    assert out == expected


@pytest.mark.parametrize("blank", [b"", b"\r", b" \t\r"], ids=["empty", "cr", "spaces"])
def test_a_million_blank_lines(run, blank: bytes) -> None:
    out, seconds = timed(run, (blank + b"\n") * 1_000_000 + ping(1))
    assert out == pong(1)
    assert seconds < BOUNDED_SECONDS


@pytest.mark.parametrize("byte", [b for b in range(32) if b not in (9, 10, 13)])
def test_raw_control_characters(run, byte: int) -> None:
    char = bytes([byte])
    lines = [
        char,
        char * 1000,
        echo_call(1, b"a" + char + b"b"),
        ping(1).rstrip(b"\n") + char,
        char + ping(1).rstrip(b"\n"),
        b'{"jsonrpc":"2.0",' + char + b'"id":1,"method":"ping"}',
    ]
    data = b"".join(line + b"\n" for line in lines) + ping(2)
    assert run(data) == PARSE * len(lines) + pong(2)


def test_json_whitespace_is_not_a_control_character(run) -> None:
    data = b'{"jsonrpc":"2.0",\r"id":1,\t"method":"ping"}\n' + echo_call(2, b"a\tb") + b"\n" + ping(3)
    assert run(data) == pong(1) + PARSE + pong(3)


INVALID_UTF8 = [
    b"\xff",  # never valid
    b"\x80",  # a lone continuation byte
    b"\xc3",  # a truncated two-byte sequence
    b"\xe6\x97",  # a truncated three-byte sequence
    b"\xc0\xaf",  # overlong
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xf4\x90\x80\x80",  # beyond U+10FFFF
]


def test_invalid_utf8_at_every_position(run) -> None:
    message = echo_call(1, "héllo 日本 😀".encode())
    lines = []
    for position in range(len(message) + 1):
        lines.extend(message[:position] + bad + message[position:] for bad in INVALID_UTF8)  # inserted
        if position < len(message):
            lines.append(message[:position] + b"\xff" + message[position + 1 :])  # replacing a byte
    data = b"".join(line + b"\n" for line in lines) + ping(2)
    assert run(data) == PARSE * len(lines) + pong(2)


def test_random_bytes_with_newlines(run) -> None:
    """Each non-blank line of random bytes gets exactly one error answer; the next line is served."""
    rng = random.Random(2)
    data = rng.randbytes(MiB)
    lines = data.split(b"\n")
    deserving = sum(1 for line in lines if line.strip(b" \t\r"))
    out, seconds = timed(run, data + b"\n" + ping(3))
    assert seconds < BOUNDED_SECONDS
    answers = out.split(b"\n")
    assert answers.pop() == b""
    assert answers.pop() + b"\n" == pong(3)
    assert len(answers) == deserving
    assert {answer + b"\n" for answer in answers} <= {PARSE, INVALID_NULL}


# -- faults in the catalogue's handlers --------------------------------------------------


def faulty_catalogue():
    def recurse(params):
        return recurse(params)

    catalogue = default_catalogue()
    catalogue.routes.update(
        {
            "x/raise": lambda params: 1 / 0,
            "x/recurse": recurse,
            "x/str": lambda params: "{}",
            "x/none": lambda params: None,
            "x/bytearray": lambda params: bytearray(b"{}"),
            "x/memory": lambda params: (_ for _ in ()).throw(MemoryError()),
            "x/ok": lambda params: b'{"ok":true}',
        }
    )
    return catalogue


@pytest.mark.parametrize("method", ["x/raise", "x/recurse", "x/str", "x/none", "x/bytearray", "x/memory"])
def test_a_faulty_handler_is_an_internal_error(run, method: str, capfd) -> None:
    data = (
        b'{"jsonrpc":"2.0","id":1,"method":"%s"}\n' % method.encode()
        + b'{"jsonrpc":"2.0","id":2,"method":"x/ok","params":{}}\n'
        + ping(3)
    )
    expected = HEAD + b"1" + INTERNAL + result(b'{"ok":true}', 2) + pong(3)
    assert run(data, catalogue=faulty_catalogue()) == expected
    assert capfd.readouterr().err  # the fault is reported on stderr


@pytest.mark.parametrize("returned", ["{}", None, bytearray(b"{}"), 5], ids=["str", "none", "bytearray", "int"])
@pytest.mark.parametrize("method", ["tools/call", "resources/read"])
def test_a_served_method_whose_handler_returns_no_bytes(run, method: str, returned, capfd) -> None:
    catalogue = default_catalogue()
    catalogue.routes[method] = lambda params: returned
    catalogue.route_kinds[method] = RouteKind.HANDLER  # no longer the catalogue's own handler
    data = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///hello.txt"}}\n' + ping(3)
    )
    answers = run(data, catalogue=catalogue).split(b"\n")
    faulty = 0 if method == "tools/call" else 1
    assert answers[faulty] + b"\n" == HEAD + b"%d" % (faulty + 1) + INTERNAL
    assert answers[2] + b"\n" == pong(3)
    assert capfd.readouterr().err


def test_error_answers_do_not_accumulate_memory(engine_module) -> None:
    """Found by the fuzzer (out of memory): shared RpcError instances kept every raise's frames."""
    import tracemalloc

    engine = engine_module.Engine(default_catalogue())
    lines = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}\n'
        b'{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///x"}}\n'
        b'{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":5}}\n'
    )
    engine.feed(lines * 10)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            engine.feed(lines)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200_000, f"{grown} bytes kept after 8000 error answers"


def test_a_shared_rpc_error_instance_does_not_accumulate_memory(engine_module) -> None:
    """A handler may raise one module-level RpcError again and again: each raise must cost nothing lasting."""
    import tracemalloc

    from shipcode_mcp.protocol import RpcError

    shared = RpcError(-32602, "Invalid params")

    def handler(params):
        raise shared

    catalogue = default_catalogue()
    catalogue.routes["x/shared"] = handler
    engine = engine_module.Engine(catalogue)
    line = b'{"jsonrpc":"2.0","id":1,"method":"x/shared","params":{"pad":"%s"}}\n' % (b"x" * 1000)
    assert engine.feed(line) == HEAD + b'1,"error":{"code":-32602,"message":"Invalid params"}}\n'
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            engine.feed(line)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200_000, f"{grown} bytes kept after 2000 raises of one RpcError"


# -- the serve loop on unusual descriptors -----------------------------------------------


def serve_in_thread(engine_module, fd_in: int, fd_out: int):
    engine = engine_module.Engine(default_catalogue())
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            engine.serve(fd_in, fd_out)
        except BaseException as error:  # reported to the test
            errors.append(error)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread, errors


def test_serve_on_non_blocking_pipes(engine_module) -> None:
    """A parent may hand over non-blocking pipes: nothing is lost, nothing spins forever."""
    data, expected = mixed_requests(20_000, seed=12)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.set_blocking(in_r, False)
    os.set_blocking(out_w, False)
    thread, errors = serve_in_thread(engine_module, in_r, out_w)

    def write() -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(in_w, view[:65536]) :]
        os.close(in_w)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    time.sleep(0.3)  # let both pipes fill while nobody reads
    out = bytearray()
    deadline = time.monotonic() + 60
    while len(out) < len(expected) and time.monotonic() < deadline:
        if select.select([out_r], [], [], 1)[0]:
            out += os.read(out_r, 1 << 20)
    writer.join(30)
    thread.join(30)
    assert not thread.is_alive()
    for fd in (in_r, out_r, out_w):
        os.close(fd)
    assert errors == []
    assert out == expected


def test_serve_raises_broken_pipe_when_the_reader_is_gone(engine_module) -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.close(out_r)
    thread, errors = serve_in_thread(engine_module, in_r, out_w)
    os.write(in_w, ping(1))
    thread.join(30)
    assert not thread.is_alive()
    for fd in (in_r, in_w, out_w):
        os.close(fd)
    assert [type(error) for error in errors] == [BrokenPipeError]


def test_answers_waiting_to_be_written_cost_little_memory(engine_module) -> None:
    """orjson's output objects hold a 4 KiB buffer each: none may wait per answer in memory."""
    import tracemalloc

    engine = engine_module.Engine(default_catalogue())
    count = 10_000
    data = b"".join(b'{"jsonrpc":"2.0","id":"s%d","method":"ping"}\n' % i for i in range(count))
    tracemalloc.start()
    try:
        out = engine.feed(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.count(b"\n") == count
    assert peak < 400 * count  # answers are ~40 bytes; 4 KiB each would be 40 MB
