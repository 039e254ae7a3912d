"""Each engine alone against the independent model of the contract (``oracle.Model``).

``test_differential.py`` compares the two engines with each other and with the model; these
tests hold one engine at a time to the model, so a pure-engine run (``--no-compiled``) still
checks the pure engine's answers, codes, messages and results, not only their shape: every
corpus file, and seeded streams of mutated corpus lines, whole and chunked, with the default
limit and with small ones.
"""

from __future__ import annotations

import random

import pytest
from support.oracle import DEFAULT_LIMIT, check_engines, mutated_stream
from support.serverproc import corpus_files, corpus_messages
from support.wire import default_catalogue

CATALOGUE = default_catalogue()
MESSAGES = corpus_messages()


@pytest.mark.parametrize("path", corpus_files(), ids=lambda path: path.stem)
def test_corpus_file(engine_module, path) -> None:
    data = path.read_bytes()
    check_engines([engine_module], CATALOGUE, data, range(1, len(data), 7))


@pytest.mark.parametrize("limit", [DEFAULT_LIMIT, 64, 41, 8, 1])
def test_mutated_streams(engine_module, limit: int) -> None:
    rng = random.Random(limit)
    for _ in range(40):
        data = mutated_stream(rng, MESSAGES, 12)
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 10))) if len(data) > 1 else []
        check_engines([engine_module], CATALOGUE, data, cuts, limit)


#: A member overwritten by a duplicate key is still part of the text: an unpaired surrogate
#: escape or nesting deeper than 1024 levels in it makes the line a parse error (rule 3).
OVERWRITTEN = {
    "surrogate": b'"z":"\\ud800","z":1',
    "depth": b'"z":' + b"[" * 1024 + b"]" * 1024 + b',"z":1',
}


@pytest.mark.parametrize("members", OVERWRITTEN.values(), ids=OVERWRITTEN.keys())
def test_overwritten_members_are_read(engine_module, members: bytes) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping",' + members + b"}\n"
    check_engines([engine_module], CATALOGUE, line)


@pytest.mark.parametrize("members", OVERWRITTEN.values(), ids=OVERWRITTEN.keys())
def test_overwritten_members_are_read_after_an_overflowing_number(engine_module, members: bytes) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping","y":1e400,' + members + b"}\n"
    check_engines([engine_module], CATALOGUE, line)
