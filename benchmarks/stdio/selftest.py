"""The checker's self-test: the harness must notice wrong answers, or "every response checked" means nothing."""

from __future__ import annotations

import orjson

from .checks import Expect, check_exact_any_order, check_semantic
from .plan import nice
from .session import locate_difference
from .targets import ratio_rows, unmet
from .workloads import EXP, SLOW, build_expected, build_semantic


def self_test() -> None:
    exp = build_expected("mix", 200)
    assert exp.count(b"\n") == 200
    bad = bytearray(exp)
    bad[len(exp) // 2] ^= 0x01
    assert not exp.startswith(bytes(bad), 0)
    assert "differs" in locate_difference(exp, 0, bytes(bad))
    sem = build_semantic("mix", 200)
    good = [orjson.loads(x) for x in exp.splitlines()]
    assert check_semantic(good, sem, Expect()) == ([], 0)
    swapped = good[:]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    assert check_semantic(swapped, sem, Expect())[1] == 2
    wrong = [dict(m) for m in good]
    for m in wrong:
        if "content" in m["result"]:
            m["result"] = {"content": [{"type": "text", "text": "nope"}]}
            break
    assert check_semantic(wrong, sem, Expect())[0]
    assert check_semantic(good[:-1], sem, Expect())[0]
    assert nice(1234, 1, 10**6) == 1000 and nice(1600, 1, 10**6) == 1500
    nothing = {"throughput": {}, "latency": {}, "startup_ms": {}, "rss_vs_requests": {}}
    rows = ratio_rows(nothing)
    assert rows and unmet(rows) == [row for row in rows if row["status"]], "a target without a figure must fail"
    answers = build_expected(SLOW, 50).splitlines(keepends=True)
    assert check_exact_any_order(b"".join(answers), EXP["sleep"], 2, 50) == ([], 0)
    answers[0], answers[1] = answers[1], answers[0]
    assert check_exact_any_order(b"".join(answers), EXP["sleep"], 2, 50) == ([], 2)
    assert check_exact_any_order(b"".join(answers[:-1]), EXP["sleep"], 2, 50)[0]  # one missing
    assert check_exact_any_order(b"".join(answers[:-1] + answers[:1]), EXP["sleep"], 2, 50)[0]  # one twice
    assert check_exact_any_order(b"".join(answers).replace(b'"ok"', b'"OK"', 1), EXP["sleep"], 2, 50)[0]
