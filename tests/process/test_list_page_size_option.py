"""``shipcode-mcp --list-page-size N``: the lists in pages of N, as ``Server(list_page_size=N)`` serves them.

The command's bytes are the in-process engine's for the same app with ``list_page_size=N``, and they are pages: the
default catalogue's two tools in two pages, the first naming the second by its cursor. A value that is not a whole
number of 1 or more is a usage error: one line, exit status 2, nothing on stdout.
"""

from __future__ import annotations

import copy

import orjson
import pytest
from support.wire import request, run_server


def paged_default_app(size: int):  # -> Server
    from shipcode_mcp.defaults import app

    paged = copy.copy(app)
    paged.list_page_size = size
    return paged


def test_the_option_serves_the_lists_in_pages(engine_name: str, run) -> None:
    first = request("tools/list", None, 1)
    cursor = orjson.loads(run(first, catalogue=paged_default_app(1).catalogue()))["result"]["nextCursor"]
    lines = first + request("tools/list", {"cursor": cursor}, 2)
    served = run_server(engine_name, lines, "--list-page-size", "1")
    pages = [orjson.loads(line)["result"] for line in served.stdout.splitlines()]
    assert (served.returncode, served.stderr) == (0, b"")
    assert served.stdout == run(lines, catalogue=paged_default_app(1).catalogue())
    assert [([tool["name"] for tool in page["tools"]], page.get("nextCursor")) for page in pages] == [
        (["echo"], cursor),
        (["add"], None),
    ]
    whole = run_server(engine_name, lines, "--list-page-size", "2")
    assert whole.stdout == run(lines, catalogue=paged_default_app(2).catalogue())
    assert [len(orjson.loads(line)["result"]["tools"]) for line in whole.stdout.splitlines()[:1]] == [2]


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "two", ""])
def test_a_page_size_that_is_not_1_or_more_is_a_usage_error(value: str) -> None:
    served = run_server("pure", b"", "--list-page-size", value)
    line = f"shipcode-mcp: error: argument --list-page-size: invalid positive integer value: '{value}'\n"
    assert (served.returncode, served.stdout, served.stderr) == (2, b"", line.encode())
