"""The official Python SDK client over HTTP against ``shipcode-mcp --http``: both eras, a round of questions.

``mode="auto"`` discovers the 2026-07-28 era and answers ``input_required`` rounds itself;
``mode="legacy"`` opens a session and answers the server's elicitation request on the stream.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.httpserver import HttpServer


async def session(url: str, mode: str) -> dict[str, Any]:
    from mcp import Client
    from mcp_types import ElicitResult

    async def answer(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": f"Ada ({params.message})"})

    async with Client(url, mode=mode, elicitation_callback=answer) as client:
        tools = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "héllo"})
        greeted = await client.call_tool("greet", {})
        return {
            "tools": [tool.name for tool in tools.tools],
            "echo": [block.text for block in echoed.content],
            "greet": [block.text for block in greeted.content],
            "errors": [echoed.is_error, greeted.is_error],
        }


@pytest.mark.parametrize("mode", ["auto", "2026-07-28", "legacy"])
def test_the_python_sdk_client_lists_calls_and_answers_questions(engine_name: str, mode: str) -> None:
    server = HttpServer(engine_name)
    try:
        seen = asyncio.run(asyncio.wait_for(session(f"http://127.0.0.1:{server.port}/mcp", mode), 60))
    finally:
        assert server.stop() == 0
    assert seen == {
        "tools": ["echo", "greet"],
        "echo": ["héllo"],
        "greet": ["Hello, Ada (What is your name?)!"],
        "errors": [False, False],
    }
