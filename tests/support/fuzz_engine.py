"""Fuzz the line processor of both engines for a while: ``python tests/support/fuzz_engine.py --minutes 10``.

Every input goes through the compiled and the pure engine, whole and split into random
chunks, with the default or a tiny ``--max-message-bytes``. The outputs must be identical
byte for byte, and follow the contract's line rules as modelled in ``oracle.py`` (one
compact JSON-RPC answer per line that deserves one, ids in order). Any exception in an
engine is a finding too.

Drivers:
- ``atheris`` (``pip install atheris``): coverage-guided over the package's Python code,
  seeded with ``tests/corpus/`` and a dictionary of JSON-RPC tokens. New inputs and
  findings go to the work folder (``--work``; a temporary one by default).
- ``hypothesis``: mutated corpus messages, random bytes and generated requests, in rounds
  of fresh random examples until the time is up.
The default is atheris when it is installed, else hypothesis. ``--engines pure`` fuzzes the
pure engine alone (against the model) when the compiled one is not built.

Exit status 0 when nothing was found. A finding is printed (and saved by atheris as a
``crash-*`` file); add its bytes to ``REGRESSIONS`` in ``test_differential.py``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS / "engine")]  # the package support; test_differential's generators

from support.oracle import TOKENS, check_engines  # noqa: E402
from support.serverproc import CORPUS  # noqa: E402
from support.wire import default_catalogue, engine  # noqa: E402

SMALL_LIMITS = (1, 2, 8, 40, 41, 64, 100)


def load_engines(which: str) -> list:
    names = ["pure"] if which == "pure" else ["compiled", "pure"]
    return [engine(name) for name in names]


def one_input(engines: list, catalogue, data: bytes) -> None:
    """The fuzz target: the first byte picks the limit, the rest is the input; chunking is seeded by it."""
    if not data:
        return
    selector, body = data[0], data[1:]
    limit = SMALL_LIMITS[selector % len(SMALL_LIMITS)] if selector < 0x20 else 16 * 1024 * 1024
    rng = random.Random(body)
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randrange(1, 12)))) if len(body) > 1 else []
    check_engines(engines, catalogue, body, cuts, limit)


def write_dictionary(path: Path) -> None:
    """libFuzzer's dictionary format: one quoted token per line, bytes as \\xNN."""
    lines = []
    for token in TOKENS:
        if len(token) > 64:
            continue
        escaped = "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\x{b:02x}" for b in token)
        lines.append(f'"{escaped}"')
    path.write_text("\n".join(lines) + "\n")


def run_atheris(which: str, seconds: int, work: Path, extra: list[str]) -> int:
    import atheris

    with atheris.instrument_imports(include=["shipcode_mcp"]):
        engines = load_engines(which)  # the package's Python code reports coverage
        catalogue = default_catalogue()
    found = work / "inputs"
    found.mkdir(parents=True, exist_ok=True)
    dictionary = work / "tokens.dict"
    write_dictionary(dictionary)
    args = [
        sys.argv[0],
        str(found),  # new inputs are written to the first folder only
        str(CORPUS),
        f"-max_total_time={seconds}",
        f"-dict={dictionary}",
        f"-artifact_prefix={work}/",
        "-max_len=65536",
        "-timeout=60",
        "-rss_limit_mb=4096",
        "-print_final_stats=1",
        *extra,
    ]
    atheris.Setup(args, lambda data: one_input(engines, catalogue, data))
    atheris.Fuzz()  # exits the process: 0 when nothing was found
    return 0


def run_hypothesis(engines: list, catalogue, seconds: float, seed: int | None) -> int:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from test_differential import generated_requests, mutated_messages, random_bytes

    inputs = st.one_of(mutated_messages(), random_bytes(), generated_requests())
    examples = 0

    @settings(
        max_examples=500,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    @given(data=inputs, selector=st.integers(0, 255))
    def target(data: bytes, selector: int) -> None:
        nonlocal examples
        examples += 1
        one_input(engines, catalogue, bytes([selector]) + data)

    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < deadline:
        target._hypothesis_internal_use_seed = rng.getrandbits(64)
        target()  # raises on a finding, after shrinking it
        rounds += 1
    print(f"hypothesis: {rounds} rounds, {examples} examples in {seconds / 60:.1f} min, nothing found")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to fuzz (default: 10)")
    parser.add_argument("--driver", choices=["auto", "atheris", "hypothesis"], default="auto")
    parser.add_argument("--engines", choices=["both", "pure"], default="both")
    parser.add_argument("--work", type=Path, help="folder for atheris' new inputs and findings")
    parser.add_argument("--seed", type=int, help="seed for the hypothesis driver's rounds")
    args, extra = parser.parse_known_args(argv)
    seconds = max(1, int(args.minutes * 60))
    driver = args.driver
    if driver == "auto":
        try:
            import atheris  # noqa: F401

            driver = "atheris"
        except ImportError:
            driver = "hypothesis"
    print(f"fuzzing the {args.engines} engine(s) with {driver} for {seconds} s", flush=True)
    if driver == "atheris":
        work = args.work or Path(tempfile.mkdtemp(prefix="shipcode-fuzz-"))
        print(f"work folder: {work}", flush=True)
        return run_atheris(args.engines, seconds, work, extra)
    return run_hypothesis(load_engines(args.engines), default_catalogue(), seconds, args.seed)


if __name__ == "__main__":
    raise SystemExit(main())
