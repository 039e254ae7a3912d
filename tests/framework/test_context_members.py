"""``Context`` as apps written for the official SDK and FastMCP use it, and ``Server(lifespan=...)``: both
engines, both eras, stdio and HTTP."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from http.client import HTTPConnection
from pathlib import Path

import orjson
import pytest
from pydantic import BaseModel
from support.httpserver import free_port
from support.httpwire import POST_HEADERS, Call, events, http, modern_body, modern_headers, within
from support.wire import SERVER_COMMAND, call, engine_env, notification, request, result, text

from shipcode_mcp import Context, Server

V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
META = {V: "2026-07-28", CAPS: {"elicitation": {}}}
SERVER_META = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"members","version":"0.1.0"}}'


class Party(BaseModel):
    size: int
    vegan: bool = False


@pytest.fixture(autouse=True)
def http_engine(engine_module, monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP bodies judged by the engine under test."""
    from shipcode_mcp.transports.http import served

    monkeypatch.setattr(served, "Engine", engine_module.Engine)


def members_app(**options) -> Server:
    app = Server("members", state_key="members-key-of-thirty-two-bytes!!", **options)

    @app.resource("file:///notes.txt", mime_type="text/plain")
    def notes() -> str:
        return "remember"

    @app.resource("data://{name}/raw")
    async def raw(name: str) -> bytes:
        return name.encode() + b"\x00"

    @app.tool()
    def members(ctx: Context) -> str:
        context = ctx.request_context
        return orjson.dumps(
            [
                ctx.server.name,
                ctx.lifespan_context,
                context.lifespan_context,
                ctx.client_id,
                context.meta,
                context.meta.progressToken if context.meta is not None else "no meta",
                context.request_id,
                context.request is None,
                ctx.headers,
            ]
        ).decode()

    @app.tool()
    async def reads(uri: str, ctx: Context) -> str:
        return repr(await ctx.read_resource(uri))

    @app.tool()
    def logs(ctx: Context) -> str:
        ctx.info("hi", logger_name="app", extra={"k": 1})
        ctx.warning("careful", "plain")
        return "logged"

    @app.tool()
    async def party(ctx: Context) -> str:
        answer = await ctx.elicit("How many?", Party)
        return f"{answer.action}:{answer.data!r}" if answer.action == "accept" else answer.action

    @app.tool()
    async def count(ctx: Context) -> str:
        answer = await ctx.elicit("How many?", int)
        return f"{answer.action}:{answer.data!r}"

    return app


def members_line(rid: int = 1, meta: dict | None = None) -> bytes:
    return call("members", {}, rid, meta)


def test_members_on_stdio_legacy(run) -> None:
    meta = {"progressToken": 7, "client_id": "desk"}
    out = run(members_line(1) + members_line(2, meta), catalogue=members_app().catalogue())
    assert out == text('["members",{},{},null,null,"no meta",1,true,{}]', 1) + text(
        '["members",{},{},"desk",{"progressToken":7,"client_id":"desk"},7,2,true,{}]', 2
    )


def test_read_resource_returns_contents(run) -> None:
    catalogue = members_app().catalogue()
    lines = (
        call("reads", {"uri": "file:///notes.txt"}, 1)
        + call("reads", {"uri": "data://ab/raw"}, 2)
        + call("reads", {"uri": "file:///none"}, 3)
    )
    assert run(lines, catalogue=catalogue) == (
        text("[ReadResourceContents(content='remember', mime_type='text/plain', meta=None)]", 1)
        + text("[ReadResourceContents(content=b'ab\\x00', mime_type='text/plain', meta=None)]", 2)
        + text("Unknown resource: file:///none", 3, is_error=True)
    )


def test_log_forms_of_the_sdks(run) -> None:
    assert run(call("logs", {}), catalogue=members_app().catalogue()) == (
        notification(
            "notifications/message", {"level": "info", "logger": "app", "data": {"msg": "hi", "extra": {"k": 1}}}
        )
        + notification("notifications/message", {"level": "warning", "logger": "plain", "data": "careful"})
        + text("logged")
    )


def modern_call(name: str, extra: dict | None = None, rid: int = 1) -> bytes:
    return request("tools/call", {"name": name, **(extra or {}), "_meta": META}, rid)


def input_required_of(line: bytes) -> tuple[dict, str]:
    body = orjson.loads(line)["result"]
    assert body["resultType"] == "input_required"
    return body["inputRequests"], body["requestState"]


def test_elicit_a_model_in_rounds(run) -> None:
    catalogue = members_app().catalogue()
    asked, state = input_required_of(run(modern_call("party"), catalogue=catalogue))
    assert asked == {
        "elicit-1": {
            "method": "elicitation/create",
            "params": {"message": "How many?", "requestedSchema": Party.model_json_schema()},
        }
    }
    answers = [
        ({"action": "accept", "content": {"size": "3"}}, "accept:Party(size=3, vegan=False)"),
        ({"action": "decline"}, "decline"),
        ({"action": "cancel"}, "cancel"),
    ]
    for answer, shown in answers:
        retry = modern_call("party", {"inputResponses": {"elicit-1": answer}, "requestState": state}, 2)
        assert run(retry, catalogue=catalogue) == result(
            b'{"content":[{"type":"text","text":"'
            + shown.encode()
            + b'"}],"resultType":"complete",'
            + SERVER_META
            + b"}",
            2,
        )


def test_elicit_a_primitive_as_one_value(run) -> None:
    catalogue = members_app().catalogue()
    asked, state = input_required_of(run(modern_call("count"), catalogue=catalogue))
    assert asked["elicit-1"]["params"]["requestedSchema"] == {
        "properties": {"value": {"title": "Value", "type": "integer"}},
        "required": ["value"],
        "title": "Elicitation",
        "type": "object",
    }
    answer = {"action": "accept", "content": {"value": 4}}
    retry = modern_call("count", {"inputResponses": {"elicit-1": answer}, "requestState": state}, 2)
    assert run(retry, catalogue=catalogue) == result(
        b'{"content":[{"type":"text","text":"accept:4"}],"resultType":"complete",' + SERVER_META + b"}", 2
    )


# -- lifespan --------------------------------------------------------------------------------------

LIFESPAN_APP = """
import os
import sys
from contextlib import asynccontextmanager
from http.client import HTTPConnection

from shipcode_mcp import Context, Server


@asynccontextmanager
async def lifespan(server):
    sys.stderr.write(f"open {server.name}\\n")
    if os.environ.get("FAIL_AT") == "start":
        raise ConnectionError("no database at db:5432\\nretrying will not help")
    yield {"pool": "db-pool"}
    sys.stderr.write("closed\\n")
    if os.environ.get("FAIL_AT") == "end":
        raise RuntimeError("pool leaked")


app = Server("lively", lifespan=lifespan)


@app.tool()
def plain(a: int) -> int:
    return a


@app.tool()
async def pool(ctx: Context) -> str:
    return ctx.lifespan_context["pool"] + " " + str(ctx.request_context.lifespan_context is ctx.lifespan_context)


@app.tool()
def session(ctx: Context) -> str:
    return ctx.session_id
"""


def serve(engine_name: str, data: bytes, app: Path, **env: str) -> subprocess.CompletedProcess:
    """``shipcode-mcp app`` on ``engine_name`` with ``data`` as its whole input."""
    return subprocess.run(
        [*SERVER_COMMAND, str(app)], input=data, capture_output=True, env={**engine_env(engine_name), **env}, timeout=60
    )


def talking(engine_name: str, app: Path) -> subprocess.Popen:
    """``shipcode-mcp app`` on ``engine_name`` with pipes to talk to it line by line."""
    return subprocess.Popen(
        [*SERVER_COMMAND, str(app)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=engine_env(engine_name),
    )


def lifespan_file(tmp_path: Path) -> Path:
    path = tmp_path / "lively.py"
    path.write_text(LIFESPAN_APP)
    return path


def test_lifespan_on_stdio(engine_name: str, tmp_path: Path) -> None:
    app = lifespan_file(tmp_path)
    lines = call("plain", {"a": 5}, 1) + call("pool", {}, 2) + call("session", {}, 3) + call("session", {}, 4)
    done = serve(engine_name, lines, app)
    out = sorted(done.stdout.splitlines(keepends=True), key=lambda line: orjson.loads(line)["id"])  # async: any order
    assert out[:2] == [text("5", 1), text("db-pool True", 2)]
    first, second = (orjson.loads(line)["result"]["content"][0]["text"] for line in out[2:])
    assert len(out) == 4 and first == second and len(first) == 32
    assert (done.returncode, done.stderr) == (0, b"open lively\nclosed\n")


def test_a_lifespan_that_raises_stops_the_server(engine_name: str, tmp_path: Path) -> None:
    app = lifespan_file(tmp_path)
    done = serve(engine_name, call("plain", {"a": 5}), app, FAIL_AT="start")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        b"",
        b"open lively\nshipcode-mcp: error: the lifespan of lively failed at start-up: "
        b"ConnectionError: no database at db:5432\n",
    )
    done = serve(engine_name, call("plain", {"a": 5}), app, FAIL_AT="end")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        text("5"),
        b"open lively\nclosed\n"
        b"shipcode-mcp: error: the lifespan of lively failed at shutdown: RuntimeError: pool leaked\n",
    )


def test_lifespan_and_headers_over_http(engine_name: str) -> None:
    seen: list[str] = []

    @asynccontextmanager
    async def lifespan(server: Server):
        seen.append("open " + server.name)
        yield {"user": "from lifespan"}
        seen.append("closed")

    app = members_app(lifespan=lifespan)
    asgi = app.http_app()

    async def session() -> list[bytes]:
        await asgi.start()
        headers = modern_headers("tools/call", "members", **{"x-user": "ada"})
        answer = await http(asgi, body=modern_body("tools/call", {"name": "members"}, meta=META), headers=headers)
        await asgi.stop()
        return [answer.body]

    (body,) = within(session())
    shown = orjson.loads(body)["result"]["content"][0]["text"]
    assert orjson.loads(shown) == [
        "members",
        {"user": "from lifespan"},
        {"user": "from lifespan"},
        None,
        META,
        None,
        1,
        False,
        {**modern_headers("tools/call", "members"), "x-user": "ada"},
    ]
    assert seen == ["open members", "closed"]
    assert app.running_lifespan is None


def test_lifespan_left_on_a_stop_signal(engine_name: str, tmp_path: Path) -> None:
    app = lifespan_file(tmp_path)
    with talking(engine_name, app) as server:
        server.stdin.write(call("pool", {}))
        server.stdin.flush()
        assert server.stdout.readline() == text("db-pool True")
        server.send_signal(signal.SIGTERM)
        assert (server.wait(30), server.stderr.read()) == (0, b"open lively\nclosed\n")


def http_server(engine_name: str, app: Path, log: Path, *options: str, **env: str) -> tuple[subprocess.Popen, int]:
    """``shipcode-mcp app --http`` with its stderr in ``log``, once it accepts connections (or has exited)."""
    port = free_port()
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [*SERVER_COMMAND, str(app), "--http", f"127.0.0.1:{port}", *options],
            stdout=subprocess.DEVNULL,
            stderr=sink,
            env={**engine_env(engine_name), **env},
        )
    deadline = time.monotonic() + 30
    while server.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return server, port


def shipcode_lines(log: Path) -> list[str]:
    """The lines of ``log`` the app and shipcode-mcp wrote (not uvicorn's)."""
    return [line for line in log.read_text().splitlines() if not line.startswith(("INFO:", "ERROR:", "WARNING:"))]


def test_lifespan_in_every_http_process(engine_name: str, tmp_path: Path) -> None:
    app, log = lifespan_file(tmp_path), tmp_path / "stderr.txt"
    server, port = http_server(engine_name, app, log, "--processes", "2")
    try:
        connection = HTTPConnection("127.0.0.1", port, timeout=30)
        body = modern_body("tools/call", {"name": "pool"}, meta=META)
        connection.request("POST", "/mcp", body, modern_headers("tools/call", "pool", host=f"127.0.0.1:{port}"))
        answer = connection.getresponse().read()
        connection.close()
    finally:
        server.send_signal(signal.SIGTERM)
        status = server.wait(30)
    assert orjson.loads(answer)["result"]["content"] == [{"type": "text", "text": "db-pool True"}]
    assert (status, sorted(shipcode_lines(log))) == (0, ["closed", "closed", "open lively", "open lively"])


def test_a_lifespan_that_raises_stops_the_http_server(engine_name: str, tmp_path: Path) -> None:
    app, log = lifespan_file(tmp_path), tmp_path / "stderr.txt"
    line = "shipcode-mcp: error: the lifespan of lively failed at start-up: ConnectionError: no database at db:5432"
    for processes in ("1", "2"):
        server, _ = http_server(engine_name, app, log, "--processes", processes, FAIL_AT="start")
        assert server.wait(30) == 2
        assert set(shipcode_lines(log)) == {"open lively", line}


# -- the legacy era: asked at once, over stdio and in an HTTP session -------------------------------------

INIT = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}\n'
)
PARTY_QUESTION = (
    b'{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"How many?","requestedSchema":'
    + orjson.dumps(Party.model_json_schema())
    + b"}}\n"
)
PARTY_ANSWER = b'{"jsonrpc":"2.0","id":"s1","result":{"action":"accept","content":{"size":"3","vegan":true}}}\n'


#: An app file serving :func:`members_app`.
MEMBERS_FILE = """import sys
sys.path[:0] = [{here!r}, {tests!r}]
from test_context_members import members_app
app = members_app()
"""


def test_elicit_a_model_of_a_legacy_client_on_stdio(engine_name: str, tmp_path: Path) -> None:
    app = tmp_path / "members.py"
    app.write_text(MEMBERS_FILE.format(here=str(Path(__file__).parent), tests=str(Path(__file__).parents[1])))
    with talking(engine_name, app) as server:
        server.stdin.write(INIT + call("party", {}, 1))
        server.stdin.flush()
        initialized = server.stdout.readline()
        question = server.stdout.readline()
        server.stdin.write(PARTY_ANSWER)
        server.stdin.close()
        rest = server.stdout.read()
        assert server.wait(30) == 0
    assert orjson.loads(initialized)["id"] == 0
    assert (question, rest) == (PARTY_QUESTION, text("accept:Party(size=3, vegan=True)"))


def test_an_http_session_gives_its_id_headers_and_typed_elicitation() -> None:
    app = members_app()

    @app.tool()
    async def visit(ctx: Context) -> str:
        answer = await ctx.elicit("How many?", Party)
        same = ctx.session_id == ctx.request_context.request.headers["mcp-session-id"]
        return f"{answer.data!r} {same} {ctx.headers['x-user']} {ctx.session_id == ctx.session_id}"

    async def scenario():
        endpoint = app.http_app()
        session_id = (await http(endpoint, "POST", INIT.strip())).header("mcp-session-id")
        headers = {**POST_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
        asking = Call(endpoint, "POST", call("visit", {}, 9).strip(), {**headers, "x-user": "ada"}).start()
        question = await asking.chunk(0)
        await http(endpoint, "POST", PARTY_ANSWER.strip(), headers)
        await asking.finish()
        return question, asking.chunks[1:]

    question, rest = within(scenario())
    assert question == events(PARTY_QUESTION)
    assert rest == [events(text("Party(size=3, vegan=True) True ada True", 9))]


def test_app_run_exits_2_when_the_lifespan_raises(engine_name: str, tmp_path: Path) -> None:
    app = lifespan_file(tmp_path)
    app.write_text(app.read_text() + "\napp.run()\n")
    done = subprocess.run(
        [sys.executable, str(app)],
        input=b"",
        capture_output=True,
        env={**engine_env(engine_name), "FAIL_AT": "start"},
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        b"",
        b"open lively\nshipcode-mcp: error: the lifespan of lively failed at start-up: "
        b"ConnectionError: no database at db:5432\n",
    )
