"""Every fixture the MCP conformance suite's server scenarios ask for, with the public API only.

The scenarios of 2025-06-18, of 2025-11-25 and of 2026-07-28: each fixture is one handler
serving every protocol era (a handler that asks the client does so with real requests in the
eras with ``initialize``, and with ``input_required`` results in 2026-07-28).

Serve it with ``shipcode-mcp tests/conformance/app.py``; ``conformance.py`` runs the suite against it.
Each fixture's name and behaviour is the one its scenario describes.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import struct
import wave
import zlib
from typing import Annotated, Any

from shipcode_mcp import (
    Context,
    InputRequired,
    RpcError,
    Server,
    ToolError,
    elicitation_request,
    roots_request,
    sampling_request,
)
from shipcode_mcp.redisstore import RedisTaskStore
from shipcode_mcp.tasks import Tasks

app = Server("shipcode-mcp-conformance", version="1.0.0", resource_subscriptions=True, list_changed=True)
if os.environ.get("CONFORMANCE_TASKS_REDIS"):  # the tasks kept in Redis instead of this process's memory
    app.add_extension(Tasks(RedisTaskStore(os.environ["CONFORMANCE_TASKS_REDIS"])))


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


@app.tool(name="test_tool_with_logging")
@app.tool(name="test_logging_tool")
async def log_three_messages(ctx: Context) -> str:
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


def completed(result: dict[str, Any]) -> str:
    """The text an elicitation fixture answers with: the client's action and content."""
    return f"Elicitation completed: action={result.get('action')}, content={json.dumps(result.get('content', {}))}"


@app.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks the client's user for five values, each with a default"""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        },
    }
    return completed(await ctx.elicit("Please review your details", schema))


@app.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks the client's user to choose, in each of the five enum forms"""
    options = ["option1", "option2", "option3"]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    return completed(await ctx.elicit("Please choose", schema))


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@app.tool(description="Tool with JSON Schema 2020-12 features", input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True)


REGION = {
    "type": "object",
    "properties": {"region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"}},
    "required": ["region"],
}


@app.tool(input_schema=REGION)
def test_header_parameter(region: str) -> str:
    """Names its region, a parameter HTTP clients mirror in the Mcp-Param-Region header"""
    return f"Region: {region}"


# -- asking the client: one handler for every era ------------------------------------------

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
CONTEXT = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}


def user_message(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": {"type": "text", "text": text}}]


@app.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the client's user for their name and greets them"""
    answer = await ctx.elicit("What is your name?", NAME, key="user_name")
    return f"Hello, {answer['content']['name']}!"


@app.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model for the capital of France"""
    answer = await ctx.sample(user_message("What is the capital of France?"), max_tokens=100, key="capital_question")
    return f"The model answered: {answer['content']['text']}"


@app.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client for its roots and names them"""
    roots = await ctx.list_roots(key="client_roots")
    return "Client roots: " + ", ".join(root["uri"] for root in roots)


@app.tool()
def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation, with a state it wants back; answers state-ok when both return"""
    state = {"asked": "confirm"}
    if ctx.request_state != state or "confirm" not in ctx.input_responses:
        raise InputRequired({"confirm": elicitation_request("Please confirm", CONFIRM)}, state=state)
    return f"state-ok: confirmed={json.dumps(ctx.input_responses['confirm']['content']['ok'])}"


MULTIPLE = {
    "user_name": elicitation_request("What is your name?", NAME),
    "greeting": sampling_request(user_message("Generate a greeting"), max_tokens=50),
    "client_roots": roots_request(),
}


@app.tool()
def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks the client's user, its model and its roots at once"""
    answers = ctx.input_responses
    if ctx.request_state != {"asked": sorted(MULTIPLE)} or not all(key in answers for key in MULTIPLE):
        raise InputRequired(MULTIPLE, state={"asked": sorted(MULTIPLE)})
    name = answers["user_name"]["content"]["name"]
    greeting = answers["greeting"]["content"]["text"]
    roots = ", ".join(root["uri"] for root in answers["client_roots"]["roots"])
    return f"{greeting} {name}; roots: {roots}"


@app.tool()
def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks for a name, then for a favourite colour, carrying the name in its state"""
    state, answers = ctx.request_state, ctx.input_responses
    if isinstance(state, dict) and "name" in state and "step2" in answers:
        return f"Hello, {state['name']}! Your favorite color is {answers['step2']['content']['color']}."
    if state == {"step": 1} and "step1" in answers:
        name = answers["step1"]["content"]["name"]
        step2 = elicitation_request("Step 2: What is your favorite color?", COLOR)
        raise InputRequired({"step2": step2}, state={"step": 2, "name": name})
    raise InputRequired({"step1": elicitation_request("Step 1: What is your name?", NAME)}, state={"step": 1})


@app.tool()
def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks for a confirmation with a state; answers once the state comes back intact"""
    if ctx.request_state != {"asked": "confirm"} or "confirm" not in ctx.input_responses:
        raise InputRequired({"confirm": elicitation_request("Please confirm", CONFIRM)}, state={"asked": "confirm"})
    return "state intact"


@app.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks the client only what its declared capabilities let it answer"""
    answers = []
    if "sampling" in ctx.client_capabilities:
        answer = await ctx.sample(user_message("Say hello"), max_tokens=20, key="hello")
        answers.append(f"model: {answer['content']['text']}")
    if "elicitation" in ctx.client_capabilities:
        answer = await ctx.elicit("What is your name?", NAME, key="user_name")
        answers.append(f"user: {answer['content']['name']}")
    return "; ".join(answers) or "nothing to ask"


@app.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability"""
    answer = await ctx.sample(user_message("Say hello"), max_tokens=20)
    return f"The model answered: {answer['content']['text']}"


@app.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Reports progress, logs, then asks the client's user for their name"""
    await ctx.report_progress(0, 1)
    await ctx.info("Asking for a name")
    answer = await ctx.elicit("What is your name?", NAME)
    return f"Hello, {answer['content']['name']}!"


@app.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt built from context the client's user gives"""
    answer = await ctx.elicit("What context should the prompt use?", CONTEXT, key="user_context")
    return f"Answer in this context: {answer['content']['context']}"


# -- list changes --------------------------------------------------------------------------


def dynamic_tool() -> str:
    """A tool test_trigger_tool_change adds and removes"""
    return "dynamic"


def dynamic_prompt() -> str:
    """A prompt test_trigger_prompt_change adds and removes"""
    return "dynamic"


def toggle(served: dict, name: str, add: Any, remove: Any, func: Any) -> str:
    """Remove ``name`` if the app serves it (``served`` holds what it serves), else add ``func`` as ``name``."""
    if name in served:
        remove(name)
        return f"removed {name}"
    add(func, name=name)
    return f"added {name}"


@app.tool()
def test_trigger_tool_change() -> str:
    """Adds the tool test_dynamic_tool, or removes it when it is there"""
    return toggle(app.tools, "test_dynamic_tool", app.add_tool, app.remove_tool, dynamic_tool)


@app.tool()
def test_trigger_prompt_change() -> str:
    """Adds the prompt test_dynamic_prompt, or removes it when it is there"""
    return toggle(app.prompts, "test_dynamic_prompt", app.add_prompt, app.remove_prompt, dynamic_prompt)


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


# -- tasks (io.modelcontextprotocol/tasks) ----------------------------------------------------


@app.tool()
def greet(name: str) -> str:
    """Greets by name, at once (never a task)"""
    return f"Hello, {name}!"


@app.tool(task=True)
async def slow_compute(seconds: float, label: str = "") -> str:
    """Sleeps for the given seconds, then answers (a task for clients with the tasks extension)"""
    await asyncio.sleep(seconds)
    return f"Computed {label} after {seconds} seconds"


@app.tool(task="required")
async def failing_job() -> str:
    """Fails as a tool after a moment (always a task)"""
    await asyncio.sleep(0.5)
    raise ToolError("failing_job failed, as it always does")


@app.tool(task=True)
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error: its task ends failed"""
    await asyncio.sleep(0.1)
    raise RpcError(-32603, "protocol_error_job raised a protocol error")


@app.tool(task=True)
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks the user to confirm, then deletes (pretends to)"""
    answer = await ctx.elicit(f"Delete {filename}?", {"type": "object", "properties": {"confirm": {"type": "boolean"}}})
    return f"{filename}: {answer['action']}"


@app.tool(task=True)
def multi_input(ctx: Context) -> str:
    """Asks two questions at once, answers when both are answered"""
    questions = {
        "first": elicitation_request("First name?", NAME),
        "second": elicitation_request("Second name?", NAME),
    }
    missing = {key: request for key, request in questions.items() if key not in ctx.input_responses}
    if missing:
        raise InputRequired(missing)
    return " and ".join(ctx.input_responses[key]["content"]["name"] for key in questions)


async def ask_name_first(arguments: dict[str, Any], ctx: Context) -> bool:
    """Before the task: the user's name (asked while answering the call); then always a task."""
    await ctx.elicit("What is your name?", NAME, key="user_name")
    return True


@app.tool(task=ask_name_first)
async def test_tool_with_task(ctx: Context) -> str:
    """Asks for the user's name, then greets them from a task"""
    answer = await ctx.elicit("What is your name?", NAME, key="user_name")
    return f"Hello from the task, {answer['content']['name']}!"
