"""The compat layer in-process, on both engines: the three APIs' decorators build native servers that answer by
their framework's rules; the import hook exists only under the command line; the server found whatever its name.

The whole transcripts of the corpus apps against their frameworks are ``tests/compat``'s; these pin the
options and forms the corpus does not use, and the parts that are shipcode-mcp's own.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import mcp.types as sdk
import pytest
from support.wire import call, read, request, result

from shipcode_mcp.compat.fastmcp import FastMCP as FastMCPPackage
from shipcode_mcp.compat.fastmcp_sdk1 import FastMCP, UserMessage
from shipcode_mcp.compat.mcpserver import MCPServer


def sdk_app() -> FastMCP:
    mcp = FastMCP("demo")

    @mcp.tool
    def bare(a: int) -> int:
        return a * 2

    @mcp.tool("renamed", title="Renamed", annotations=sdk.ToolAnnotations(readOnlyHint=True), meta={"k": 1})
    def original(text: str) -> str:
        """Echo"""
        return text

    @mcp.tool(enabled=False)
    def hidden() -> str:
        return "no"

    @mcp.tool(structured_output=False)
    def words() -> list[str]:
        return ["a", "b"]

    @mcp.resource("items://{item_id}/price")
    def price(item_id: int) -> str:
        """The price of an item."""
        return f"{item_id + 1} EUR"

    @mcp.prompt
    def plain(topic: str) -> str:
        return f"About {topic}"

    @mcp.prompt(name="chat", description="A chat")
    def conversation(name: str) -> list:
        return [UserMessage(f"I am {name}"), {"role": "assistant", "content": {"type": "text", "text": "Hi"}}]

    return mcp


SDK_TOOLS = (
    b'{"tools":[{"name":"bare","description":"","inputSchema":{"properties":{"a":{"title":"A","type":"integer"}},'
    b'"required":["a"],"title":"bareArguments","type":"object"},"outputSchema":{"properties":{"result":{"title":'
    b'"Result","type":"integer"}},"required":["result"],"title":"bareOutput","type":"object"}},{"name":"renamed",'
    b'"title":"Renamed","description":"Echo","inputSchema":{"properties":{"text":{"title":"Text","type":"string"}},'
    b'"required":["text"],"title":"originalArguments","type":"object"},"outputSchema":{"properties":{"result":'
    b'{"title":"Result","type":"string"}},"required":["result"],"title":"originalOutput","type":"object"},'
    b'"annotations":{"readOnlyHint":true},"_meta":{"k":1}},{"name":"words","description":"","inputSchema":'
    b'{"properties":{},"title":"wordsArguments","type":"object"}}]}'
)


def test_the_sdk_decorators_bare_called_renamed_and_disabled(run) -> None:
    out = run(request("tools/list"), catalogue=sdk_app().catalogue())
    assert out == result(SDK_TOOLS)


@pytest.mark.parametrize(
    ("line", "body"),
    [
        (
            call("bare", {"a": "4"}),
            b'{"content":[{"type":"text","text":"8"}],"structuredContent":{"result":8},"isError":false}',
        ),
        (call("words", {}), b'{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":false}'),
        (call("hidden", {}), b'{"content":[{"type":"text","text":"Unknown tool: hidden"}],"isError":true}'),
        (
            read("items://41/price"),
            b'{"contents":[{"uri":"items://41/price","mimeType":"text/plain","text":"42 EUR"}]}',
        ),
        (
            request("prompts/get", {"name": "chat", "arguments": {"name": "Ada"}}),
            b'{"description":"A chat","messages":[{"role":"user","content":{"type":"text","text":"I am Ada"}},'
            b'{"role":"assistant","content":{"type":"text","text":"Hi"}}]}',
        ),
        (
            request("resources/templates/list"),
            b'{"resourceTemplates":[{"uriTemplate":"items://{item_id}/price","name":"price",'
            b'"description":"The price of an item.","mimeType":"text/plain"}]}',
        ),
    ],
)
def test_the_sdk_answers(run, line: bytes, body: bytes) -> None:
    assert run(line, catalogue=sdk_app().catalogue()) == result(body)


def test_a_tool_removed_and_added_again() -> None:
    mcp = sdk_app()
    mcp.remove_tool("bare")
    assert "bare" not in mcp.tools
    mcp.add_tool(lambda a: a, name="bare")
    assert list(mcp.tools) == ["renamed", "words", "bare"]


def test_fastmcp_lists_tags_and_refuses_unknown_arguments(run) -> None:
    mcp = FastMCPPackage("demo")

    @mcp.tool(tags={"b", "a"}, output_schema=None)
    def add(a: int, b: int = 1) -> int:
        return a + b

    out = run(request("tools/list") + call("add", {"a": 1, "c": 2}, rid=2), catalogue=mcp.catalogue())
    closed = b',"additionalProperties":false' if "4.x" in FastMCPPackage.API else b""
    assert out == result(
        b'{"tools":[{"name":"add",'
        + (b'"title":"Add",' if closed else b"")
        + b'"description":"","inputSchema":{"properties":{"a":{"type":"integer"},"b":{"default":1,'
        b'"type":"integer"}},"required":["a"],"type":"object"'
        + closed
        + b'},"_meta":{"'
        + (b"fastmcp" if closed else b"_fastmcp")
        + b'":{"tags":["a","b"]}}}]}'
    ) + result(
        b'{"content":[{"type":"text","text":"1 validation error for call[add]\\nc\\n  Unexpected keyword argument '
        b"[type=unexpected_keyword_argument, input_value=2, input_type=int]\\n    For further information visit "
        b'https://errors.pydantic.dev/2.14/v/unexpected_keyword_argument"}],"isError":true}',
        rid=2,
    )


def test_mcpserver_withholds_an_exception_s_message(run) -> None:
    mcp = MCPServer()

    @mcp.tool()
    def crash() -> str:
        raise RuntimeError("secret")

    out = run(call("crash", {}), catalogue=mcp.catalogue())
    assert out == result(b'{"content":[{"type":"text","text":"Error executing tool crash"}],"isError":true}')


def test_run_refuses_the_sse_transport() -> None:
    with pytest.raises(ValueError) as refused:
        FastMCP().run(transport="sse")
    assert (
        str(refused.value) == 'transport "sse" is not served by shipcode-mcp: use "streamable-http" (docs/migrating.md)'
    )


def test_custom_routes_beside_the_endpoint_mounted_in_starlette() -> None:
    import httpx
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount

    mcp = sdk_app()

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    host = Starlette(routes=[Mount("/", mcp.streamable_http_app())])

    async def visit() -> tuple:
        transport = httpx.ASGITransport(app=host)
        async with (
            mcp.session_manager.run(),
            httpx.AsyncClient(transport=transport, base_url="http://localhost") as client,
        ):
            health = await client.get("/health")
            refused = await client.post("/health")
            ping = await client.post(
                "/mcp",
                content=b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
                headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
            )
            return health.status_code, health.content, refused.status_code, ping.status_code

    assert asyncio.run(visit()) == (200, b'{"status":"ok"}', 405, 400)


def _python(code: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=60, check=False
    )


def test_importing_the_package_loads_no_compat_and_installs_no_hook() -> None:
    done = _python(
        "import sys, shipcode_mcp\n"
        "from shipcode_mcp import Server\n"
        "print(sorted(name for name in sys.modules if name.startswith(('shipcode_mcp.compat', 'pydantic'))))\n"
        "shipcode_mcp.FastMCP\n"
        "print(sorted(type(finder).__name__ for finder in sys.meta_path if 'StandIn' in type(finder).__name__))\n"
        "import mcp.server.mcpserver as real\n"
        "print(real.MCPServer.__module__)\n"
    )
    assert (done.stdout, done.stderr) == ("[]\n[]\nmcp.server.mcpserver.server\n", "")


APP = """from fastmcp import FastMCP
from fastmcp.exceptions import ToolError


def create_server() -> FastMCP:
    server = FastMCP("made")

    @server.tool
    def refuse() -> str:
        raise ToolError("no")

    return server
"""


@pytest.mark.parametrize("target", ["made.py", "made.py:create_server"])
def test_the_command_serves_a_factory_of_an_app_written_for_fastmcp(run_process, tmp_path: Path, target: str) -> None:
    (tmp_path / "made.py").write_text(APP)
    done = run_process(call("refuse", {}), str(tmp_path / target))
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        result(b'{"content":[{"type":"text","text":"no"}],"isError":true}'),
        b"shipcode-mcp: serving an app written for the fastmcp package's FastMCP (fastmcp 4.x)\n",
    )


HOST = """import contextlib
import sys

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

mcp = MCPServer("hosted")


@mcp.tool()
def add(a: int, b: int) -> int:
    return a + b


@contextlib.asynccontextmanager
async def lifespan(app):
    print("host: up", file=sys.stderr, flush=True)
    async with mcp.session_manager.run():
        yield
    print("host: down", file=sys.stderr, flush=True)


async def hello(request):
    return PlainTextResponse("hello")


app = Starlette(routes=[Route("/hello", hello), Mount("/", mcp.streamable_http_app())], lifespan=lifespan)
"""


def test_a_host_app_mounting_a_server_is_served_as_uvicorn_serves_it(engine_name: str, tmp_path: Path) -> None:
    """``shipcode-mcp main.py:app --http PORT``: the host's routes and lifespan, the mounted server at /mcp."""
    import http.client
    import socket
    import time

    from support.serverproc import ServerProcess

    (tmp_path / "main.py").write_text(HOST)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with ServerProcess(engine_name, f"{tmp_path}/main.py:app", "--http", str(port)) as server:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, server.stderr()
                time.sleep(0.1)
        answers = []
        for method, path, body in (
            ("GET", "/hello", None),
            ("POST", "/mcp", request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})),
        ):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
            connection.request(method, path, body, headers)
            response = connection.getresponse()
            answers.append((response.status, response.read()))
            connection.close()
        server.signal()
        server.wait()
        said = server.stderr().decode().splitlines()
    assert answers == [
        (200, b"hello"),
        (
            200,
            b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"prompts":'
            b'{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},"tools":{"listChanged":false}},'
            b'"serverInfo":{"name":"hosted","version":"2.3.0"}}}\n',
        ),
    ]
    assert [line for line in said if not line.startswith("INFO")] == [
        "shipcode-mcp: serving an app written for the official SDK's MCPServer (mcp.server.mcpserver, mcp 2.x)",
        "host: up",
        "host: down",
    ]
