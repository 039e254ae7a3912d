"""Number text: ECMAScript's Number::toString, checked against node when it is installed."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess

import pytest

from shipcode_mcp.jsontext import number_text

FIXED = [
    (3.0, "3"), (0.30000000000000004, "0.30000000000000004"), (1e21, "1e+21"), (1e-7, "1e-7"),
    (1e20, "100000000000000000000"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"),
    (-0.0, "0"), (0.0, "0"), (1.5e-10, "1.5e-10"), (123e-20, "1.23e-18"), (0.000001, "0.000001"),
    (1e-6, "0.000001"), (1.2345e-6, "0.0000012345"), (9.999999999999999e20, "999999999999999900000"),
    (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (-1e21, "-1e+21"),
    (123456789012345680000.0, "123456789012345680000"), (2**53 + 0.0, "9007199254740992"),
    (2**63, "9223372036854775808"), (-(2**63) - 1, "-9223372036854775809"), (10**30, "1" + "0" * 30),
]


@pytest.mark.parametrize(("value", "text"), FIXED)
def test_fixed_cases(value: float, text: str) -> None:
    assert number_text(value) == text


def random_doubles(count: int) -> list[float]:
    rng = random.Random(20251118)
    values = []
    while len(values) < count:
        bits = rng.getrandbits(64)
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if value == value and abs(value) != float("inf"):
            values.append(value)
        # and decimal-looking values around every exponent ECMAScript switches on
        values.append(round(rng.uniform(-10, 10), rng.randint(0, 17)) * 10.0 ** rng.randint(-25, 25))
    return values


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: no ECMAScript reference")
def test_matches_node_for_random_doubles() -> None:
    values = random_doubles(5000)
    script = (
        "const v=JSON.parse(require('fs').readFileSync(0,'utf8'));"
        "process.stdout.write(JSON.stringify(v.map(String)))"
    )
    done = subprocess.run(["node", "-e", script], input=json.dumps(values).encode(), capture_output=True, check=True)
    expected = json.loads(done.stdout)
    mismatches = [(v, number_text(v), e) for v, e in zip(values, expected, strict=True) if number_text(v) != e]
    assert mismatches == []
