"""Every fixture the MCP conformance suite's 2025-06-18 server scenarios ask for, with the public API only.

Serve it with ``shipcode-mcp tests/conformance/app.py``; ``harness.py`` runs the suite against it.
Each fixture's name and behaviour is the one its scenario describes.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import struct
import wave
import zlib
from typing import Annotated

from shipcode_mcp import Context, Server, ToolError

app = Server("shipcode-mcp-conformance", version="1.0.0", resource_subscriptions=True)


def red_pixel_png() -> bytes:
    """A 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # width, height, 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def silent_wav() -> bytes:
    """A WAV holding 10 ms of 8 kHz, 16-bit mono silence."""
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 80)
    return out.getvalue()


PNG = base64.b64encode(red_pixel_png()).decode()
WAV = base64.b64encode(silent_wav()).decode()
IMAGE = {"type": "image", "data": PNG, "mimeType": "image/png"}
STEP = 0.05  # the pause between the notifications of the logging and progress tools


# -- tools ---------------------------------------------------------------------------------


@app.tool()
def test_simple_text() -> str:
    """Returns one text block"""
    return "This is a simple text response for testing."


@app.tool()
def test_image_content() -> list[dict]:
    """Returns a PNG image"""
    return [IMAGE]


@app.tool()
def test_audio_content() -> list[dict]:
    """Returns a WAV sound"""
    return [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]


@app.tool()
def test_embedded_resource() -> list[dict]:
    """Returns an embedded text resource"""
    resource = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    return [{"type": "resource", "resource": resource}]


@app.tool()
def test_multiple_content_types() -> list[dict]:
    """Returns text, an image and an embedded resource"""
    resource = {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": json.dumps({"test": "data", "value": 123}),
    }
    return [{"type": "text", "text": "Multiple content types test:"}, IMAGE, {"type": "resource", "resource": resource}]


@app.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages, 50 ms apart"""
    await ctx.info("Tool execution started")
    await asyncio.sleep(STEP)
    await ctx.info("Tool processing data")
    await asyncio.sleep(STEP)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@app.tool()
def test_error_handling() -> str:
    """Always fails"""
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100, 50 ms apart"""
    await ctx.report_progress(0, 100)
    await asyncio.sleep(STEP)
    await ctx.report_progress(50, 100)
    await asyncio.sleep(STEP)
    await ctx.report_progress(100, 100)
    return "Tool with progress executed successfully"


@app.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model to answer the prompt"""
    result = await ctx.sample(prompt, max_tokens=100)
    content = result.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return f"LLM response: {text if text is not None else json.dumps(content)}"


@app.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the client's user for a username and an email address"""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await ctx.elicit(message, schema)
    return f"User response: action={result.get('action')}, content={json.dumps(result.get('content', {}))}"


# -- resources -----------------------------------------------------------------------------


@app.resource("test://static-text", mime_type="text/plain", description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource("test://static-binary", mime_type="image/png", description="A static PNG image")
def static_binary() -> bytes:
    return base64.b64decode(PNG)


@app.resource("test://watched-resource", mime_type="text/plain", description="A resource clients may subscribe to")
def watched_resource() -> str:
    return "This resource is watched for updates."


@app.resource("test://template/{id}/data", mime_type="application/json", description="The data of one id")
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts -------------------------------------------------------------------------------


@app.prompt()
def test_simple_prompt() -> str:
    """A prompt without arguments"""
    return "This is a simple prompt for testing."


@app.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"], arg2: Annotated[str, "Second test argument"]
) -> str:
    """A prompt with two required arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt()
def test_prompt_with_embedded_resource(resourceUri: Annotated[str, "URI of the resource to embed"]) -> list:
    """A prompt embedding the resource at the given uri"""
    resource = {"uri": resourceUri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}
    return [{"type": "resource", "resource": resource}, "Please process the embedded resource above."]


@app.prompt()
def test_prompt_with_image() -> list:
    """A prompt holding an image"""
    return [IMAGE, "Please analyze the image above."]


SUGGESTIONS = {"arg1": ["paris", "park", "party", "test", "testing"], "arg2": ["hello", "world"]}


@app.completion(prompt="test_prompt_with_arguments")
def complete_prompt_argument(argument: str, value: str, context: dict[str, str]) -> list[str]:
    """The suggestions for an argument of ``test_prompt_with_arguments`` that start with ``value``."""
    return [word for word in SUGGESTIONS.get(argument, []) if word.startswith(value)]
