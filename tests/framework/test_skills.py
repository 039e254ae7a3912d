"""The skills extension (``shipcode_mcp.skills``), on both engines fed in-process (and over HTTP, with its Mcp-Name
header), whole bytes: ``skills/list``, ``skills/get`` and the ``skill://`` resources with their SHA-256 in both eras,
``--skills DIR`` on the command line; what a skills folder may not hold (a symlink leading out, too large a file, a
SKILL.md without its front matter or with a name that is not its directory's)."""

from __future__ import annotations

import os
import subprocess

import pytest
from support.httpwire import http, json_reply, modern_body, modern_headers, seen, within
from support.wire import SERVER_COMMAND, engine, engine_env, request

from shipcode_mcp import Server
from shipcode_mcp import skills as skills_module

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
SKILL_MD = "---\nname: pdf\ndescription: Fill PDF forms\n---\nRun fill.py\n"
SKILL_SHA = b"928d4517a41c0dc5ec8d88c4d2d203ab38db0a3c8f80e232067e2ff6822472ee"
FILL_SHA = b"cc42155088fca5730758db72b2a5bca33112a941dfaa2d43098ec422ce4ea213"
SUMMARY = b'{"name":"pdf","description":"Fill PDF forms","uri":"skill://pdf/SKILL.md","sha256":"%s"' % SKILL_SHA
LISTED = b'{"jsonrpc":"2.0","id":1,"result":{"skills":[' + SUMMARY + b"}]}}\n"
GOT = (
    SUMMARY + b',"content":"---\\nname: pdf\\ndescription: Fill PDF forms\\n---\\nRun fill.py\\n","files":['
    b'{"uri":"skill://pdf/SKILL.md","mimeType":"text/markdown","size":58,"sha256":"%s"},'
    % SKILL_SHA
    + b'{"uri":"skill://pdf/scripts/fill.py","mimeType":"text/x-python","size":9,"sha256":"%s"}]' % FILL_SHA
)
RESOURCES = (
    b'{"resources":[{"uri":"skill://pdf/SKILL.md","name":"pdf/SKILL.md","mimeType":"text/markdown",'
    b'"_meta":{"io.modelcontextprotocol/skills":{"sha256":"%s"}}},'
    % SKILL_SHA
    + b'{"uri":"skill://pdf/scripts/fill.py","name":"pdf/scripts/fill.py","mimeType":"text/x-python",'
    b'"_meta":{"io.modelcontextprotocol/skills":{"sha256":"%s"}}}]' % FILL_SHA
)
SERVER = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sk","version":"1.0.0"}}'


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "pdf" / "scripts").mkdir(parents=True)
    (tmp_path / "pdf" / "SKILL.md").write_text(SKILL_MD)
    (tmp_path / "pdf" / "scripts" / "fill.py").write_text("print(1)\n")
    return tmp_path


def served(engine_name: str, folder):
    app = Server("sk", version="1.0.0")
    app.add_skills(folder)
    return engine(engine_name).Engine(app.catalogue(), 1 << 20)


def test_the_legacy_era(engine_name: str, folder) -> None:
    server = served(engine_name, folder)
    assert server.feed(request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}, 0)) == (
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},'
        b'"extensions":{"io.modelcontextprotocol/skills":{}}},"serverInfo":{"name":"sk","version":"1.0.0"}}}\n'
    )
    assert server.feed(request("skills/list")) == LISTED
    assert (
        server.feed(request("skills/get", {"name": "pdf"}, 2)) == b'{"jsonrpc":"2.0","id":2,"result":' + GOT + b"}}\n"
    )
    assert server.feed(request("resources/list", None, 3)) == b'{"jsonrpc":"2.0","id":3,"result":' + RESOURCES + b"}}\n"
    assert server.feed(request("resources/read", {"uri": "skill://pdf/scripts/fill.py"}, 4)) == (
        b'{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"skill://pdf/scripts/fill.py",'
        b'"mimeType":"text/x-python","text":"print(1)\\n"}]}}\n'
    )


def test_the_modern_era(engine_name: str, folder) -> None:
    server = served(engine_name, folder)
    assert server.feed(request("skills/list", {"_meta": MODERN})) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"skills":[' + SUMMARY + b'}],"resultType":"complete",' + SERVER + b"}}\n"
    )
    assert server.feed(request("skills/get", {"name": "pdf", "_meta": MODERN}, 2)) == (
        b'{"jsonrpc":"2.0","id":2,"result":' + GOT + b',"resultType":"complete",' + SERVER + b"}}\n"
    )


@pytest.mark.parametrize(
    ("params", "answer"),
    [
        ({"name": "docx"}, b'{"code":-32602,"message":"Unknown skill","data":{"name":"docx"}}'),
        ({"name": 5}, b'{"code":-32602,"message":"Invalid params"}'),
        (None, b'{"code":-32602,"message":"Invalid params"}'),
    ],
)
def test_a_skill_that_is_not_served(engine_name: str, folder, params: object, answer: bytes) -> None:
    assert served(engine_name, folder).feed(request("skills/get", params)) == (
        b'{"jsonrpc":"2.0","id":1,"error":' + answer + b"}\n"
    )


def test_no_path_leads_out_of_a_skill(engine_name: str, folder) -> None:
    server = served(engine_name, folder)
    for uri in ("skill://pdf/../../etc/passwd", "skill://pdf/scripts/../SKILL.md", "skill://pdf/SKILL.md/"):
        assert server.feed(request("resources/read", {"uri": uri})) == (
            b'{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}\n'
        )


def test_what_a_skills_folder_may_not_hold(folder, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret").write_text("x")
    os.symlink(outside / "secret", folder / "pdf" / "secret")
    with pytest.raises(ValueError, match=r"^skill 'pdf': secret is a symlink leading out of the folder$"):
        Server("sk").add_skills(folder)
    os.remove(folder / "pdf" / "secret")
    (folder / "pdf" / "big.bin").write_bytes(b"\0" * (skills_module.MAX_FILE_BYTES + 1))
    with pytest.raises(ValueError, match=r"^skill 'pdf': big.bin: larger than 1048576 bytes$"):
        Server("sk").add_skills(folder)
    os.remove(folder / "pdf" / "big.bin")
    (folder / "pdf" / "SKILL.md").write_text("# no front matter\n")
    with pytest.raises(ValueError, match=r"^skill 'pdf': SKILL.md does not begin with front matter"):
        Server("sk").add_skills(folder)
    (folder / "pdf" / "SKILL.md").write_text(SKILL_MD.replace("name: pdf", "name: docx"))
    with pytest.raises(ValueError, match=r"^skill 'pdf': its name must be the directory's"):
        Server("sk").add_skills(folder)


def test_skills_from_the_command_line(engine_name: str, folder) -> None:
    done = subprocess.run(
        [*SERVER_COMMAND, "--skills", str(folder)],
        input=request("skills/list"),
        capture_output=True,
        env=engine_env(engine_name),
        timeout=60,
    )
    assert (done.stdout, done.returncode) == (LISTED, 0)


def test_skills_get_over_http(folder) -> None:
    app = Server("sk", version="1.0.0")
    app.add_skills(folder)
    body = modern_body("skills/get", {"name": "pdf"})
    call = within(http(app.http_app(), "POST", body, modern_headers("skills/get", "pdf")))
    assert seen(call) == json_reply(
        200, b'{"jsonrpc":"2.0","id":1,"result":' + GOT + b',"resultType":"complete",' + SERVER + b"}}\n"
    )
    call = within(http(app.http_app(), "POST", body, modern_headers("skills/get", "docx")))
    assert seen(call) == json_reply(
        400,
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header value '
        b"'docx' does not match body value 'pdf'\"}}\n",
    )
