"""``examples/tally.py``, an MCP App, really drawn: the server over stdio answers a host's requests (the tool's
``_meta.ui``, ``resources/read`` of its ``ui://`` page, the ``tools/call``), a minimal host page
(``mcp_app_host.html``) renders that page in a sandboxed iframe under the resource's CSP, does the
``ui/initialize`` handshake over postMessage and hands over the tool's input and result; headless Chromium
(Debian's ``chromium``) takes a screenshot, and the pixels drawn are compared with what that result must draw."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import orjson
import pytest
from support.png import Png
from support.wire import request, run_server

HERE = Path(__file__).resolve().parent
TALLY = HERE.parents[1] / "examples" / "tally.py"
HOST_PAGE = HERE / "mcp_app_host.html"
CHROMIUM = shutil.which("chromium")
UI = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
VOTES = ["red", "blue", "red", "green", "red", "blue", "red"]

WHITE, BLUE = (255, 255, 255), (51, 102, 204)
FIRST, SECOND, THIRD = (228, 87, 46), (23, 190, 187), (255, 201, 20)
#: Points of the 400x300 screenshot and their colours when the View drew the tally of VOTES (red 4, blue 2,
#: green 1) in the host's light theme: a 4-pixel strip per vote cast (7 votes: 28 pixels) from the tool's
#: input; from its result, bars 40 pixels apart from the top at 40, from x=10, 300 pixels for the most votes.
DRAWN = {
    (2, 8): BLUE,
    (26, 8): BLUE,
    (30, 8): WHITE,
    (12, 55): FIRST,
    (308, 55): FIRST,
    (312, 55): WHITE,
    (158, 95): SECOND,
    (162, 95): WHITE,
    (83, 135): THIRD,
    (87, 135): WHITE,
    (12, 175): WHITE,
    (200, 250): WHITE,
    (399, 299): WHITE,
}


def host_session(engine_name: str) -> list[dict]:
    """What a host asks the tally server on ``engine_name``, and its answers in order."""
    lines = [
        request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"extensions": UI},
                "clientInfo": {"name": "h", "version": "1"},
            },
            1,
        ),
        request("tools/list", None, 2),
        request("resources/read", {"uri": "ui://tally/chart.html"}, 3),
        request("tools/call", {"name": "tally", "arguments": {"votes": VOTES}}, 4),
    ]
    done = run_server(engine_name, b"".join(lines), str(TALLY))
    assert done.returncode == 0, done.stderr
    return [orjson.loads(line) for line in done.stdout.splitlines()]


@functools.cache
def screenshot(page: str) -> Png:
    """The 400x300 screenshot headless Chromium takes of ``page`` (once per page: both engines give the same)."""
    with tempfile.TemporaryDirectory() as scratch:
        host, shot = Path(scratch) / "host.html", Path(scratch) / "shot.png"
        host.write_text(page)
        subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",  # tests may run as root, where Chromium's own sandbox refuses to start
                "--disable-gpu",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                "--window-size=400,300",
                "--run-all-compositor-stages-before-draw",
                "--disable-features=IsolateSandboxedIframes,site-per-process",  # the View in the host's renderer
                "--virtual-time-budget=10000",  # scripts and messages run to their end before the shot
                f"--user-data-dir={scratch}/profile",
                f"--screenshot={shot}",
                host.as_uri(),
            ],
            capture_output=True,
            timeout=60,
            check=True,
        )
        return Png(shot.read_bytes())


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_tally_is_drawn_by_a_host(engine_name: str) -> None:
    initialized, listed, read, called = host_session(engine_name)
    assert initialized["result"]["capabilities"]["extensions"] == UI
    tool = listed["result"]["tools"][0]
    assert tool["_meta"] == {"ui": {"resourceUri": "ui://tally/chart.html"}, "ui/resourceUri": "ui://tally/chart.html"}
    contents = read["result"]["contents"]
    assert [(item["uri"], item["mimeType"], item["_meta"]) for item in contents] == [
        ("ui://tally/chart.html", "text/html;profile=mcp-app", {"ui": {"prefersBorder": True}})
    ]
    host = {
        "read": read["result"],
        "tool": tool,
        "callId": 4,
        "arguments": {"votes": VOTES},
        "result": called["result"],
    }
    data = json.dumps(host).replace("</", "<\\/")  # no "</script>" inside the page's script
    page = HOST_PAGE.read_text().replace("const HOST = null;", f"const HOST = {data};")
    image = screenshot(page)
    assert (image.width, image.height) == (400, 300)
    assert {point: image.pixel(*point) for point in DRAWN} == DRAWN
