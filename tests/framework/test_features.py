"""Prompts, resource templates, completions and resource subscriptions on both engines.

Apps built with ``Server`` are served in-process through the ``run`` fixture, and as a real
subprocess where the concurrent server matters (answers of async handlers, notifications
sent from worker threads). Every answer is compared whole, byte for byte.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import orjson
import pytest
from support import wire
from support.serverproc import ServerProcess
from support.wire import call, default_catalogue, error, not_found, notification, read, request, result, text

from shipcode_mcp import Context, RpcError, Server

app = Server("feature-tests", version="3.1.0", resource_subscriptions=True)

# -- prompts ---------------------------------------------------------------------------------


@app.prompt
def greet() -> str:
    """Say hello.

    Indented second paragraph.
    """
    return "Hello!"


@app.prompt(name="review", title="Code review", description="Review some code")
def review_code(
    code: Annotated[str, "the code to review"],
    language: Optional[str] = None,  # noqa: UP045
    tone: Annotated[str | None, "how to say it"] = "kind",
    *,
    focus: str = "bugs",
) -> dict:
    return {
        "role": "user",
        "content": {"type": "text", "text": f"Review this {language or 'code'} ({tone}, {focus}):\n{code}"},
    }


@app.prompt()
def untyped(topic, detail="short"):
    return f"{topic}/{detail}"


class Boom(Exception):
    """A prompt's failure."""


SHAPES: dict[str, Any] = {
    "text": "héllo\n😀",
    "message": {"role": "assistant", "content": {"type": "text", "text": "I can help."}},
    "block": {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    "list": [
        "first",
        {"role": "assistant", "content": {"type": "text", "text": "second"}},
        {"type": "resource", "resource": {"uri": "items://a/1", "mimeType": "text/plain", "text": "a|1"}},
    ],
    "empty": [],
    # not a prompt result
    "number": 5,
    "none": None,
    "tuple": ("a", "b"),
    "bare dict": {"text": "no role, no type"},
    "list with a number": ["ok", 5],
}


@app.prompt(description="")
def shape(kind: str) -> Any:
    if kind == "raise":
        raise Boom("the kitchen is on fire")
    if kind == "rpc":
        raise RpcError(-32000, "Busy, try again")
    if kind == "exit":
        raise SystemExit(3)
    return SHAPES[kind]


@app.prompt
async def summarize(text: str, style: str = "plain") -> list:
    """Summarize a text (async)"""
    await asyncio.sleep(0)
    if text == "raise":
        raise Boom("async failure")
    if text == "rpc":
        raise RpcError(-32001, "Not today")
    if text == "exit":
        raise SystemExit(4)
    return [f"Summarize ({style}):", text]


@app.prompt
async def brief(topic: str, ctx: Context) -> str:
    """Brief on a topic, logging as it goes"""
    await ctx.info(f"briefing on {topic}")
    return f"Brief me on {topic}."


# -- resources and templates -------------------------------------------------------------------


@app.resource("items://{kind}/{item_id}", title="Item", description="One item")
def item(kind: str, item_id: str) -> str:
    if kind == "missing":
        raise RpcError(-32002, "Resource not found")
    if kind == "broken":
        raise RuntimeError("disk on fire")
    if kind == "exit":
        raise SystemExit(5)
    return f"{kind}|{item_id}"


@app.resource("items://{kind}/{name}.json")  # never wins: items://{kind}/{item_id} comes first
def item_json(name: str, kind: str) -> str:
    return "json"


@app.resource("items://fixed/one")  # a static resource beats every template
def fixed() -> str:
    return "static"


@app.resource("files://{path}.md", name="doc")
def doc(path: str) -> bytes:
    return path.encode()


@app.resource("later://{n}")
async def later(n: str) -> str:
    await asyncio.sleep(0)
    return f"later {n}"


@app.resource("ctx://{key}", mime_type="application/json")
def keyed(key: str, ctx: Context) -> str:
    return orjson.dumps({"key": key, "request": ctx.request_id}).decode()


# -- completions -------------------------------------------------------------------------------

LANGUAGES = ["c", "cython", "go", "python", "rust"]


@app.completion(prompt="review")
def complete_review(argument: str, value: str, context: dict) -> Any:
    if value == "many":
        return [f"v{number:03}" for number in range(150)]
    if value == "hundred":
        return [f"v{number:03}" for number in range(100)]
    if value == "tuple":
        return ("x", "y")
    if value == "number":
        return 5
    if value == "numbers":
        return ["x", 5]
    if value == "rpc":
        raise RpcError(-32000, "Busy, try again")
    if value == "exit":
        raise SystemExit(6)
    if argument == "language":
        return [language for language in LANGUAGES if language.startswith(value)]
    return [f"{argument}={value}", *(f"{key}={chosen}" for key, chosen in context.items())]


@app.completion(resource="items://{kind}/{item_id}")
async def complete_item(argument: str, value: str, context: dict) -> list[str]:
    await asyncio.sleep(0)
    return [f"{argument}:{value}", orjson.dumps(context).decode()]


# -- tools that change resources ---------------------------------------------------------------


@app.tool()
def touch(uri: str) -> str:
    """Tell subscribers that a resource changed"""
    app.notify_resource_updated(uri)
    return f"touched {uri}"


@app.tool()
def touch_in_thread(uri: str) -> str:
    """Tell subscribers that a resource changed, from a thread of its own"""
    thread = threading.Thread(target=app.notify_resource_updated, args=(uri,))
    thread.start()
    thread.join()
    return f"touched {uri} from a thread"


@app.tool(blocking=True)
def touch_blocking(uri: str) -> str:
    """Tell subscribers that a resource changed, from a worker thread"""
    app.notify_resource_updated(uri)
    return f"touched {uri} while blocking"


CATALOGUE = app.catalogue()

# -- expected bytes --------------------------------------------------------------------------

PROMPTS = (
    '{"prompts":['
    '{"name":"greet","description":"Say hello.\\n\\nIndented second paragraph."},'
    '{"name":"review","title":"Code review","description":"Review some code","arguments":['
    '{"name":"code","description":"the code to review","required":true},'
    '{"name":"language","required":false},'
    '{"name":"tone","description":"how to say it","required":false},'
    '{"name":"focus","required":false}]},'
    '{"name":"untyped","description":"","arguments":[{"name":"topic","required":true},'
    '{"name":"detail","required":false}]},'
    '{"name":"shape","description":"","arguments":[{"name":"kind","required":true}]},'
    '{"name":"summarize","description":"Summarize a text (async)","arguments":[{"name":"text","required":true},'
    '{"name":"style","required":false}]},'
    '{"name":"brief","description":"Brief on a topic, logging as it goes","arguments":'
    '[{"name":"topic","required":true}]}'
    "]}"
)
TEMPLATES = (
    '{"resourceTemplates":['
    '{"uriTemplate":"items://{kind}/{item_id}","name":"item","title":"Item","description":"One item",'
    '"mimeType":"text/plain"},'
    '{"uriTemplate":"items://{kind}/{name}.json","name":"item_json","mimeType":"application/json"},'
    '{"uriTemplate":"files://{path}.md","name":"doc","mimeType":"text/markdown"},'
    '{"uriTemplate":"later://{n}","name":"later","mimeType":"text/plain"},'
    '{"uriTemplate":"ctx://{key}","name":"keyed","mimeType":"application/json"}'
    "]}"
)
RESOURCES = '{"resources":[{"uri":"items://fixed/one","name":"fixed","mimeType":"text/plain"}]}'
INIT = (
    '{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{"subscribe":true},'
    '"prompts":{},"completions":{},"logging":{}},"serverInfo":{"name":"feature-tests","version":"3.1.0"}}'
)


def get(name: object, arguments: object = None, rid: object = 1) -> bytes:
    return request("prompts/get", {"name": name} if arguments is None else {"name": name, "arguments": arguments}, rid)


def messages(*items: dict[str, Any], description: str | None = None, rid: object = 1) -> bytes:
    body: dict[str, Any] = {} if description is None else {"description": description}
    body["messages"] = list(items)
    return result(orjson.dumps(body).decode(), rid)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": {"type": "text", "text": text}}


def contents(uri: str, mime_type: str, rid: object = 1, **data: str) -> bytes:
    return result(orjson.dumps({"contents": [{"uri": uri, "mimeType": mime_type, **data}]}).decode(), rid)


def complete(
    ref: object, name: object = "language", value: object = "", context: object = None, rid: object = 1
) -> bytes:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = context
    return request("completion/complete", params, rid)


def completion(*values: str, total: int | None = None, has_more: bool = False, rid: object = 1) -> bytes:
    total = len(values) if total is None else total
    body = {"completion": {"values": list(values), "total": total, "hasMore": has_more}}
    return result(orjson.dumps(body).decode(), rid)


def updated(uri: str) -> bytes:
    return b'{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":' + orjson.dumps(uri) + b"}}\n"


PROMPT_REF = {"type": "ref/prompt", "name": "review"}
ITEM_REF = {"type": "ref/resource", "uri": "items://{kind}/{item_id}"}
INVALID_PARAMS = error(-32602, "Invalid params")
INTERNAL = error(-32603, "Internal error")
NOT_FOUND = not_found()
NO_METHOD = error(-32601, "Method not found")


# -- listings and capabilities -----------------------------------------------------------------


def test_initialize_declares_every_feature_in_use(run) -> None:
    assert run(request("initialize", {"protocolVersion": "2025-06-18"}), catalogue=CATALOGUE) == result(INIT)


def test_prompts_list(run) -> None:
    assert run(request("prompts/list"), catalogue=CATALOGUE) == result(PROMPTS)


def test_templates_are_listed_apart_from_resources(run) -> None:
    data = request("resources/templates/list") + request("resources/list", rid=2)
    assert run(data, catalogue=CATALOGUE) == result(TEMPLATES) + result(RESOURCES, 2)


def test_listings_take_a_cursor_and_ignore_it(run) -> None:
    data = request("prompts/list", {"cursor": "x"}) + request("resources/templates/list", {"cursor": "x"}, 2)
    assert run(data, catalogue=CATALOGUE) == result(PROMPTS) + result(TEMPLATES, 2)


def only_prompts() -> Server:
    local = Server("p")
    local.prompt(lambda: "hi")
    return local


def only_completions() -> Server:
    local = Server("c")
    local.resource("t://{x}")(lambda x: x)
    local.completion(resource="t://{x}")(lambda argument, value, context: [])
    return local


def only_subscriptions() -> Server:
    local = Server("s", resource_subscriptions=True)
    local.resource("t://a")(lambda: "a")
    return local


def prompt_with_context() -> Server:
    local = Server("l")

    @local.prompt
    def hello(ctx: Context) -> str:
        return "hi"

    return local


def only_templates() -> Server:
    local = Server("t")
    local.resource("t://{x}")(lambda x: x)
    return local


CAPABILITIES = [
    ("nothing", lambda: Server("n"), '{"tools":{},"resources":{}}'),
    ("templates", only_templates, '{"tools":{},"resources":{}}'),
    ("prompts", only_prompts, '{"tools":{},"resources":{},"prompts":{}}'),
    ("completions", only_completions, '{"tools":{},"resources":{},"completions":{}}'),
    ("subscriptions", only_subscriptions, '{"tools":{},"resources":{"subscribe":true}}'),
    ("context", prompt_with_context, '{"tools":{},"resources":{},"prompts":{},"logging":{}}'),
]


@pytest.mark.parametrize(("make", "capabilities"), [c[1:] for c in CAPABILITIES], ids=[c[0] for c in CAPABILITIES])
def test_capabilities_follow_use(run, make, capabilities: str) -> None:
    local = make()
    expected = (
        f'{{"protocolVersion":"2025-11-25","capabilities":{capabilities},'
        f'"serverInfo":{{"name":"{local.name}","version":"0.1.0"}}}}'
    )
    # A client that names no version gets the newest legacy one.
    assert run(request("initialize"), catalogue=local.catalogue()) == result(expected)


UNUSED_METHODS = [
    ("prompts/list", None),
    ("prompts/get", {"name": "x"}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
    ("resources/subscribe", {"uri": "t://a"}),
    ("resources/unsubscribe", {"uri": "t://a"}),
    ("logging/setLevel", {"level": "info"}),
]


@pytest.mark.parametrize(("method", "params"), UNUSED_METHODS, ids=[m[0] for m in UNUSED_METHODS])
def test_methods_of_unused_features_are_not_found(run, method: str, params: object) -> None:
    local = only_templates()  # templates, but no prompts, completions, subscriptions or logging
    assert run(request(method, params), catalogue=local.catalogue()) == NO_METHOD


def test_the_default_catalogue_answers_as_before(run) -> None:
    data = (
        request("initialize", {"protocolVersion": "2025-06-18"}, 1)
        + request("tools/list", rid=2)
        + request("resources/list", rid=3)
        + request("resources/templates/list", rid=4)
        + request("prompts/list", rid=5)
        + request("prompts/get", {"name": "echo"}, 6)
        + complete({"type": "ref/prompt", "name": "echo"}, rid=7)
        + request("resources/subscribe", {"uri": "file:///hello.txt"}, 8)
        + request("resources/unsubscribe", {"uri": "file:///hello.txt"}, 9)
        + request("logging/setLevel", {"level": "info"}, 10)
    )
    expected = (
        result(wire.INIT_RESULT, 1)
        + result(wire.TOOLS, 2)
        + result('{"resources":[{"uri":"file:///hello.txt","name":"hello.txt","mimeType":"text/plain"}]}', 3)
        + result('{"resourceTemplates":[]}', 4)
        + b"".join(error(-32601, "Method not found", rid) for rid in range(5, 11))
    )
    assert run(data, catalogue=default_catalogue()) == expected


# -- prompts/get -------------------------------------------------------------------------------

GETS: list[tuple[str, bytes, bytes]] = [
    ("no arguments", get("greet"), messages(user("Hello!"), description="Say hello.\n\nIndented second paragraph.")),
    (
        "empty arguments",
        get("greet", {}),
        messages(user("Hello!"), description="Say hello.\n\nIndented second paragraph."),
    ),
    (
        "required only",
        get("review", {"code": "x = 1"}),
        messages(user("Review this code (kind, bugs):\nx = 1"), description="Review some code"),
    ),
    (
        "all arguments",
        get("review", {"code": "fn main() {}", "language": "rust", "tone": "blunt", "focus": "style"}),
        messages(user("Review this rust (blunt, style):\nfn main() {}"), description="Review some code"),
    ),
    ("untyped", get("untyped", {"topic": "t"}), messages(user("t/short"), description=None)),
    ("untyped all", get("untyped", {"topic": "t", "detail": "long"}), messages(user("t/long"))),
    ("str: a user message", get("shape", {"kind": "text"}), messages(user("héllo\n😀"))),
    ("message as is", get("shape", {"kind": "message"}), messages(SHAPES["message"])),
    ("content block", get("shape", {"kind": "block"}), messages({"role": "user", "content": SHAPES["block"]})),
    (
        "list",
        get("shape", {"kind": "list"}),
        messages(user("first"), SHAPES["list"][1], {"role": "user", "content": SHAPES["list"][2]}),
    ),
    ("empty list", get("shape", {"kind": "empty"}), messages()),
    (
        "async",
        get("summarize", {"text": "long text"}),
        messages(user("Summarize (plain):"), user("long text"), description="Summarize a text (async)"),
    ),
    (
        "async all arguments",
        get("summarize", {"text": "t", "style": "terse"}),
        messages(user("Summarize (terse):"), user("t"), description="Summarize a text (async)"),
    ),
    ("async rpc error", get("summarize", {"text": "rpc"}), error(-32001, "Not today")),
    ("rpc error", get("shape", {"kind": "rpc"}), error(-32000, "Busy, try again")),
    ("unknown prompt", get("nope", {}), error(-32602, "Unknown prompt")),
    ("unknown prompt, case", get("Greet"), error(-32602, "Unknown prompt")),
    ("missing required", get("review", {"language": "go"}), error(-32602, "Invalid arguments for review")),
    ("missing arguments", get("review"), error(-32602, "Invalid arguments for review")),
    ("unknown argument", get("review", {"code": "x", "lang": "go"}), error(-32602, "Invalid arguments for review")),
    ("argument of no parameters", get("greet", {"x": "1"}), error(-32602, "Invalid arguments for greet")),
    ("number", get("review", {"code": 1}), error(-32602, "Invalid arguments for review")),
    (
        "null for optional",
        get("review", {"code": "x", "language": None}),
        error(-32602, "Invalid arguments for review"),
    ),
    ("list", get("review", {"code": ["x"]}), error(-32602, "Invalid arguments for review")),
    ("arguments a list", get("greet", []), error(-32602, "Invalid arguments for greet")),
    ("arguments a string", get("greet", "x"), error(-32602, "Invalid arguments for greet")),
    (
        "arguments null",
        request("prompts/get", {"name": "greet", "arguments": None}),
        error(-32602, "Invalid arguments for greet"),
    ),
    (
        "context is not an argument",
        get("brief", {"topic": "t", "ctx": "x"}),
        error(-32602, "Invalid arguments for brief"),
    ),
    ("no name", request("prompts/get", {"arguments": {}}), INVALID_PARAMS),
    ("name not a string", get(["greet"]), INVALID_PARAMS),
    ("no params", request("prompts/get"), INVALID_PARAMS),
]


@pytest.mark.parametrize(("line", "expected"), [g[1:] for g in GETS], ids=[g[0] for g in GETS])
def test_prompts_get(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=CATALOGUE) == expected


FAILED_SHAPES = ["number", "none", "tuple", "bare dict", "list with a number", "raise"]


@pytest.mark.parametrize("kind", FAILED_SHAPES)
def test_a_prompt_that_fails_is_an_internal_error_and_serving_goes_on(run, capsys, kind: str) -> None:
    data = get("shape", {"kind": kind}) + request("ping", rid=2)
    assert run(data, catalogue=CATALOGUE) == INTERNAL + result("{}", 2)
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err


def test_an_async_prompt_that_fails_is_an_internal_error(run, capsys) -> None:
    data = get("summarize", {"text": "raise"}) + request("ping", rid=2)
    assert run(data, catalogue=CATALOGUE) == INTERNAL + result("{}", 2)
    assert "Boom: async failure" in capsys.readouterr().err


SYSTEM_EXITS = [
    ("prompt", get("shape", {"kind": "exit"})),
    ("async prompt", get("summarize", {"text": "exit"})),
    ("template", read("items://exit/1")),
    ("completion", complete(PROMPT_REF, "code", "exit")),
]


@pytest.mark.parametrize("line", [s[1] for s in SYSTEM_EXITS], ids=[s[0] for s in SYSTEM_EXITS])
def test_system_exit_in_a_handler_is_an_internal_error_and_serving_goes_on(run, capsys, line: bytes) -> None:
    assert run(line + request("ping", rid=2), catalogue=CATALOGUE) == INTERNAL + result("{}", 2)
    assert "SystemExit: " in capsys.readouterr().err


def test_a_prompt_taking_a_context_logs_before_its_answer(run) -> None:
    log = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"briefing on tea"}}\n'
    assert run(get("brief", {"topic": "tea"}), catalogue=CATALOGUE) == log + messages(
        user("Brief me on tea."), description="Brief on a topic, logging as it goes"
    )


class Point:
    """Not a string."""


@pytest.mark.parametrize(
    "hint",
    [int, Point, list[str], int | None, str | int, Annotated[int, "a number"], Literal["a"], Optional[int]],  # noqa: UP045
)
def test_prompt_arguments_other_than_strings_are_refused_at_registration(hint: object) -> None:
    local = Server("hints")

    def prompt(x) -> str:
        return x

    prompt.__annotations__["x"] = hint
    with pytest.raises(TypeError, match=r"^prompt argument 'x': arguments are strings; annotate it str or str \| None"):
        local.prompt(prompt)
    assert local.prompts == {}


@pytest.mark.parametrize("hint", [str, str | None, Optional[str], Annotated[Optional[str], "d"], Any])  # noqa: UP045
def test_string_hints_are_accepted(hint: object) -> None:
    local = Server("hints")

    def prompt(x=None) -> str:
        return x

    prompt.__annotations__["x"] = hint
    local.prompt(prompt)
    assert list(local.prompts) == ["prompt"]


def test_prompt_registration() -> None:
    local = Server("registration")

    def plain() -> str:
        return ""

    assert local.prompt(plain) is plain
    assert local.prompt(name="other")(plain) is plain
    with pytest.raises(ValueError, match="^a prompt named 'plain' is already registered$"):
        local.prompt()(plain)


class Book:
    """Handlers that are bound methods."""

    def chapter(self, n: str) -> str:
        return f"chapter {n}"


def test_a_bound_method_prompt_lists_its_parameters_without_self(run) -> None:
    local = Server("bound")
    local.prompt(Book().chapter)
    data = request("prompts/list") + get("chapter", {"n": "1"}, 2)
    assert run(data, catalogue=local.catalogue()) == result(
        '{"prompts":[{"name":"chapter","description":"","arguments":[{"name":"n","required":true}]}]}'
    ) + result(orjson.dumps({"messages": [user("chapter 1")]}).decode(), 2)


def test_a_positional_only_parameter_is_refused_at_registration() -> None:
    local = Server("positional")

    def echo(text: str, /) -> str:
        return text

    with pytest.raises(TypeError) as raised:
        local.prompt(echo)
    assert str(raised.value) == "echo: positional-only parameters cannot take arguments by name"
    assert local.prompts == {}


# -- resource templates ------------------------------------------------------------------------

READS: list[tuple[str, bytes, bytes]] = [
    ("matched values", read("items://tea/42"), contents("items://tea/42", "text/plain", text="tea|42")),
    (
        "values are not percent-decoded",
        read("items://a%2Fb/c%20d"),
        contents("items://a%2Fb/c%20d", "text/plain", text="a%2Fb|c%20d"),
    ),
    ("unicode values", read("items://thé/😀"), contents("items://thé/😀", "text/plain", text="thé|😀")),
    ("first template wins", read("items://a/b.json"), contents("items://a/b.json", "text/plain", text="a|b.json")),
    ("static beats template", read("items://fixed/one"), contents("items://fixed/one", "text/plain", text="static")),
    ("a part never holds a slash", read("items://a/b/c"), NOT_FOUND),
    ("a part is never empty", read("items:///b"), NOT_FOUND),
    ("a last part is never empty", read("items://a/"), NOT_FOUND),
    ("the whole uri matches", read("items://a/b?x=1#y"), contents("items://a/b?x=1#y", "text/plain", text="a|b?x=1#y")),
    ("no prefix match", read("xitems://a/b"), NOT_FOUND),
    ("literal dot", read("files://notes.md"), contents("files://notes.md", "text/markdown", blob="bm90ZXM=")),
    ("a dot is not any character", read("files://notesxmd"), NOT_FOUND),
    ("the template itself", read("later://{n}"), contents("later://{n}", "text/plain", text="later {n}")),
    ("async", read("later://7"), contents("later://7", "text/plain", text="later 7")),
    (
        "with a context",
        read("ctx://k", rid="r"),
        contents("ctx://k", "application/json", "r", text='{"key":"k","request":"r"}'),
    ),
    ("rpc error", read("items://missing/1"), NOT_FOUND),
    ("no template", read("nothing://here"), NOT_FOUND),
]


@pytest.mark.parametrize(("line", "expected"), [r[1:] for r in READS], ids=[r[0] for r in READS])
def test_templated_reads(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=CATALOGUE) == expected


def test_escaped_uris_are_decoded_before_matching(run) -> None:
    data = (
        b'{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"items:\\/\\/a\\/b"}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"items://caf\\u00e9/\\ud83d\\ude00"}}\n'
        b'{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"items://a\\nb/c"}}\n'
        b'{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"items://a/b","_meta":{}}}\n'
        b'{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{ "uri" : "items://a/b" }}\n'
    )
    expected = (
        contents("items://a/b", "text/plain", 1, text="a|b")
        + contents("items://café/😀", "text/plain", 2, text="café|😀")
        + contents("items://a\nb/c", "text/plain", 3, text="a\nb|c")
        + contents("items://a/b", "text/plain", 4, text="a|b")
        + contents("items://a/b", "text/plain", 5, text="a|b")
    )
    assert run(data, catalogue=CATALOGUE) == expected


def test_a_failing_template_is_an_internal_error(run, capsys) -> None:
    data = read("items://broken/1") + request("ping", rid=2)
    assert run(data, catalogue=CATALOGUE) == INTERNAL + result("{}", 2)
    assert "RuntimeError: disk on fire" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("uri", "func"),
    [
        ("t://{a}/{b}", lambda a: ""),
        ("t://{a}", lambda a, b: ""),
        ("t://{a}", lambda b: ""),
        ("t://{a}", lambda: ""),
        ("t://{a}", lambda a, *, b="": ""),
    ],
    ids=["missing", "extra", "renamed", "none", "extra keyword"],
)
def test_template_parameters_must_be_its_parts(uri: str, func) -> None:
    local = Server("templates")
    with pytest.raises(TypeError, match=r"^resource template 't://\{a\}.*must be exactly the template's parts"):
        local.resource(uri)(func)
    assert local.templates == {}


@pytest.mark.parametrize("uri", ["t://{}", "t://{a}/{a}", "t://{a-b}", "t://{1}"])
def test_template_parts_must_be_distinct_python_names(uri: str) -> None:
    with pytest.raises(ValueError, match="must be a distinct Python name"):
        Server("templates").resource(uri)(lambda **parts: "")


def test_template_registration() -> None:
    local = Server("templates")

    def part(x: str, ctx: Context) -> str:
        return x

    assert local.resource("t://{x}")(part) is part
    with pytest.raises(ValueError, match=r"^a resource template 't://\{x\}' is already registered$"):
        local.resource("t://{x}")(part)
    assert list(local.templates) == ["t://{x}"]
    assert local.resources == {}


def test_a_bound_method_template(run) -> None:
    local = Server("bound")
    local.resource("book://{n}")(Book().chapter)
    assert run(read("book://3"), catalogue=local.catalogue()) == contents("book://3", "text/plain", text="chapter 3")


# -- completion/complete -------------------------------------------------------------------------

COMPLETIONS: list[tuple[str, bytes, bytes]] = [
    ("prefix", complete(PROMPT_REF, "language", "c"), completion("c", "cython")),
    ("nothing matches", complete(PROMPT_REF, "language", "z"), completion()),
    ("context absent is {}", complete(PROMPT_REF, "code", "x"), completion("code=x")),
    ("context without arguments", complete(PROMPT_REF, "code", "x", {}), completion("code=x")),
    (
        "context arguments",
        complete(PROMPT_REF, "tone", "b", {"arguments": {"code": "1", "language": "go"}}),
        completion("tone=b", "code=1", "language=go"),
    ),
    (
        "over 100 values",
        complete(PROMPT_REF, "code", "many"),
        completion(*(f"v{number:03}" for number in range(100)), total=150, has_more=True),
    ),
    ("exactly 100 values", complete(PROMPT_REF, "code", "hundred"), completion(*(f"v{n:03}" for n in range(100)))),
    ("a tuple", complete(PROMPT_REF, "code", "tuple"), completion("x", "y")),
    ("rpc error", complete(PROMPT_REF, "code", "rpc"), error(-32000, "Busy, try again")),
    (
        "async, for a template",
        complete(ITEM_REF, "kind", "t", {"arguments": {"item_id": "1"}}),
        completion("kind:t", '{"item_id":"1"}'),
    ),
    ("async, context absent", complete(ITEM_REF, "kind", ""), completion("kind:", "{}")),
    (
        "prompt without handler",
        complete({"type": "ref/prompt", "name": "greet"}),
        result('{"completion":{"values":[]}}'),
    ),
    (
        "template without handler",
        complete({"type": "ref/resource", "uri": "later://{n}"}),
        result('{"completion":{"values":[]}}'),
    ),
    ("unknown prompt", complete({"type": "ref/prompt", "name": "nope"}), INVALID_PARAMS),
    ("unknown template", complete({"type": "ref/resource", "uri": "nope://{x}"}), INVALID_PARAMS),
    ("a uri a template matches", complete({"type": "ref/resource", "uri": "items://a/b"}), INVALID_PARAMS),
    ("a static resource", complete({"type": "ref/resource", "uri": "items://fixed/one"}), INVALID_PARAMS),
    (
        "a prompt named as a template",
        complete({"type": "ref/prompt", "name": "items://{kind}/{item_id}"}),
        INVALID_PARAMS,
    ),
    ("a template named as a prompt", complete({"type": "ref/resource", "uri": "review"}), INVALID_PARAMS),
    ("unknown ref type", complete({"type": "ref/tool", "name": "review"}), INVALID_PARAMS),
    ("ref without type", complete({"name": "review"}), INVALID_PARAMS),
    ("ref not an object", complete("review"), INVALID_PARAMS),
    ("prompt ref by uri", complete({"type": "ref/prompt", "uri": "review"}), INVALID_PARAMS),
    ("name not a string", complete(PROMPT_REF, 1, ""), INVALID_PARAMS),
    ("value not a string", complete(PROMPT_REF, "language", 1), INVALID_PARAMS),
    ("value null", complete(PROMPT_REF, "language", None), INVALID_PARAMS),
    ("context not an object", complete(PROMPT_REF, "code", "x", []), INVALID_PARAMS),
    ("context arguments not an object", complete(PROMPT_REF, "code", "x", {"arguments": ["a"]}), INVALID_PARAMS),
    ("no argument", request("completion/complete", {"ref": PROMPT_REF}), INVALID_PARAMS),
    ("argument not an object", request("completion/complete", {"ref": PROMPT_REF, "argument": "x"}), INVALID_PARAMS),
    ("no ref", request("completion/complete", {"argument": {"name": "a", "value": ""}}), INVALID_PARAMS),
    ("no params", request("completion/complete"), INVALID_PARAMS),
]


@pytest.mark.parametrize(("line", "expected"), [c[1:] for c in COMPLETIONS], ids=[c[0] for c in COMPLETIONS])
def test_completion_complete(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=CATALOGUE) == expected


@pytest.mark.parametrize("value", ["number", "numbers"])
def test_a_completion_returning_anything_but_strings_is_an_internal_error(run, capsys, value: str) -> None:
    data = complete(PROMPT_REF, "code", value) + request("ping", rid=2)
    assert run(data, catalogue=CATALOGUE) == INTERNAL + result("{}", 2)
    assert "TypeError: a completion returned" in capsys.readouterr().err


def test_completion_registration() -> None:
    local = Server("completions")
    local.prompt(lambda: "")

    def values(argument: str, value: str, context: dict) -> list[str]:
        return []

    with pytest.raises(TypeError, match=r"^completion\(\) takes exactly one of prompt= or resource=$"):
        local.completion()
    with pytest.raises(TypeError, match=r"^completion\(\) takes exactly one of prompt= or resource=$"):
        local.completion(prompt="<lambda>", resource="t://{x}")
    assert local.completion(prompt="<lambda>")(values) is values
    with pytest.raises(ValueError, match="^a completion for '<lambda>' is already registered$"):
        local.completion(prompt="<lambda>")(values)
    local.completion(prompt="missing")(values)
    with pytest.raises(ValueError, match="^a completion is registered for the unknown prompt 'missing'$"):
        local.catalogue()


def test_a_completion_for_an_unknown_template_is_refused_when_served() -> None:
    local = Server("completions")
    local.resource("t://{x}")(lambda x: x)
    local.completion(resource="t://{y}")(lambda argument, value, context: [])
    with pytest.raises(ValueError, match=r"^a completion is registered for the unknown resource template 't://\{y\}'$"):
        local.catalogue()


# -- subscriptions -------------------------------------------------------------------------------


def subscribe(uri: object, rid: object = 1) -> bytes:
    return request("resources/subscribe", {"uri": uri}, rid)


def unsubscribe(uri: object, rid: object = 1) -> bytes:
    return request("resources/unsubscribe", {"uri": uri}, rid)


SUBSCRIBES: list[tuple[str, bytes, bytes]] = [
    ("listed", subscribe("items://fixed/one"), result("{}")),
    ("template match", subscribe("items://a/b"), result("{}")),
    ("unknown", subscribe("items://a/b/c"), NOT_FOUND),
    ("the template itself matches", subscribe("items://{kind}/{item_id}"), result("{}")),
    ("not a string", subscribe(["items://a/b"]), INVALID_PARAMS),
    ("no uri", request("resources/subscribe", {}), INVALID_PARAMS),
    ("no params", request("resources/subscribe"), INVALID_PARAMS),
    ("unsubscribe listed", unsubscribe("items://fixed/one"), result("{}")),
    ("unsubscribe template match", unsubscribe("later://1"), result("{}")),
    ("unsubscribe unknown", unsubscribe("nothing://here"), NOT_FOUND),
    ("unsubscribe not a string", unsubscribe(1), INVALID_PARAMS),
    ("unsubscribe no params", request("resources/unsubscribe"), INVALID_PARAMS),
]


@pytest.mark.parametrize(("line", "expected"), [s[1:] for s in SUBSCRIBES], ids=[s[0] for s in SUBSCRIBES])
def test_subscribe_and_unsubscribe(run, line: bytes, expected: bytes) -> None:
    assert run(line, catalogue=app.catalogue()) == expected


def test_updates_reach_the_client_only_while_subscribed(run) -> None:
    data = (
        call("touch", {"uri": "items://a/b"}, 1)  # not subscribed yet
        + subscribe("items://a/b", 2)
        + subscribe("items://fixed/one", 3)
        + call("touch", {"uri": "items://a/b"}, 4)
        + call("touch", {"uri": "items://fixed/one"}, 5)
        + call("touch", {"uri": "items://a/c"}, 6)  # matches the same template: another uri
        + unsubscribe("items://a/b", 7)
        + unsubscribe("items://a/b", 8)  # not subscribed any more: still {}
        + call("touch", {"uri": "items://a/b"}, 9)
        + call("touch_in_thread", {"uri": "items://fixed/one"}, 10)
        + call("touch_blocking", {"uri": "items://fixed/one"}, 11)
        + subscribe("items://a/b", 12)
        + subscribe("items://a/b", 13)  # twice: still one notification per update
        + call("touch", {"uri": "items://a/b"}, 14)
    )
    expected = (
        text("touched items://a/b", 1)
        + result("{}", 2)
        + result("{}", 3)
        + updated("items://a/b")
        + text("touched items://a/b", 4)
        + updated("items://fixed/one")
        + text("touched items://fixed/one", 5)
        + text("touched items://a/c", 6)
        + result("{}", 7)
        + result("{}", 8)
        + text("touched items://a/b", 9)
        + updated("items://fixed/one")
        + text("touched items://fixed/one from a thread", 10)
        + updated("items://fixed/one")
        + text("touched items://fixed/one while blocking", 11)
        + result("{}", 12)
        + result("{}", 13)
        + updated("items://a/b")
        + text("touched items://a/b", 14)
    )
    assert run(data, catalogue=app.catalogue()) == expected


def test_a_failed_subscribe_subscribes_nothing(run) -> None:
    data = subscribe("items://a/b/c", 1) + call("touch", {"uri": "items://a/b/c"}, 2)
    assert run(data, catalogue=app.catalogue()) == NOT_FOUND + text("touched items://a/b/c", 2)


# -- hostile input on the new methods -------------------------------------------------------------

NEW_METHODS = [
    "prompts/list",
    "prompts/get",
    "resources/templates/list",
    "completion/complete",
    "resources/subscribe",
    "resources/unsubscribe",
]


@pytest.mark.parametrize("method", NEW_METHODS)
def test_array_params_are_invalid_params(run, method: str) -> None:
    data = request(method, ["greet", {}]) + request(method, [], 2)
    assert run(data, catalogue=CATALOGUE) == INVALID_PARAMS + error(-32602, "Invalid params", 2)


@pytest.mark.parametrize("method", NEW_METHODS)
@pytest.mark.parametrize("params", ["null", '"x"', "1"])
def test_params_neither_object_nor_array_are_invalid_requests(run, method: str, params: str) -> None:
    line = b'{"jsonrpc":"2.0","id":"q","method":"%s","params":%s}\n' % (method.encode(), params.encode())
    assert (
        run(line, catalogue=CATALOGUE)
        == b'{"jsonrpc":"2.0","id":"q","error":{"code":-32600,"message":"Invalid Request"}}\n'
    )


def test_notifications_of_the_new_methods_are_never_answered_nor_run(run, capsys) -> None:
    catalogue = app.catalogue()
    data = (
        notification("prompts/list")
        + notification("prompts/get", {"name": "shape", "arguments": {"kind": "raise"}})
        + notification("prompts/get", {"name": "nope"})
        + notification("prompts/get", ["greet"])
        + notification("resources/templates/list")
        + notification("completion/complete", {"ref": PROMPT_REF, "argument": {"name": "code", "value": "rpc"}})
        + notification("resources/subscribe", {"uri": "items://a/b"})
        + notification("resources/unsubscribe", {"uri": "nothing://here"})
        + call("touch", {"uri": "items://a/b"}, 1)  # the subscribe above did not subscribe
    )
    assert run(data, catalogue=catalogue) == text("touched items://a/b")
    assert capsys.readouterr().err == ""


IDS: list[tuple[str, bytes, bytes]] = [
    ("zero", b"0", b"0"),
    ("negative", b"-7", b"-7"),
    ("large", b"9007199254740993", b"9007199254740993"),
    ("unsigned 64-bit", b"18446744073709551615", b"18446744073709551615"),
    ("string", b'"p-1"', b'"p-1"'),
    ("empty string", b'""', b'""'),
    ("escaped string", b'"a\\"b\\\\c\\u00e9"', '"a\\"b\\\\cé"'.encode()),
]


@pytest.mark.parametrize(("rid", "echoed"), [i[1:] for i in IDS], ids=[i[0] for i in IDS])
def test_ids_are_echoed_by_every_new_method(run, rid: bytes, echoed: bytes) -> None:
    lines = [
        (b'"prompts/list","params":{}', PROMPTS.encode()),
        (
            b'"prompts/get","params":{"name":"untyped","arguments":{"topic":"t"}}',
            b'{"messages":[{"role":"user","content":{"type":"text","text":"t/short"}}]}',
        ),
        (b'"resources/templates/list"', TEMPLATES.encode()),
        (
            b'"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"a","value":""}}',
            b'{"completion":{"values":[]}}',
        ),
        (b'"resources/subscribe","params":{"uri":"items://a/b"}', b"{}"),
        (b'"resources/unsubscribe","params":{"uri":"items://a/b"}', b"{}"),
        (
            b'"resources/read","params":{"uri":"items://a/b"}',
            b'{"contents":[{"uri":"items://a/b","mimeType":"text/plain","text":"a|b"}]}',
        ),
    ]
    data = b"".join(b'{"jsonrpc":"2.0","id":%s,"method":%s}\n' % (rid, line) for line, _ in lines)
    expected = b"".join(b'{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (echoed, body) for _, body in lines)
    assert run(data, catalogue=app.catalogue()) == expected


@pytest.mark.parametrize("rid", [b"null", b"1.5", b"1e2", b"true", b"[1]", b"{}", b"18446744073709551616"])
def test_ids_of_other_types_are_invalid_requests(run, rid: bytes) -> None:
    line = b'{"jsonrpc":"2.0","id":%s,"method":"prompts/get","params":{"name":"greet"}}\n' % rid
    assert (
        run(line, catalogue=CATALOGUE)
        == b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}\n'
    )


def test_lines_split_anywhere_give_the_same_answers(run) -> None:
    data = (
        get("review", {"code": "x"})
        + read("items://a/b", 2)
        + complete(PROMPT_REF, "language", "c", rid=3)
        + subscribe("items://a/b", 4)
    )
    expected = (
        messages(user("Review this code (kind, bugs):\nx"), description="Review some code")
        + contents("items://a/b", "text/plain", 2, text="a|b")
        + completion("c", "cython", rid=3)
        + result("{}", 4)
    )
    assert run(data, catalogue=app.catalogue()) == expected
    for cut in range(1, len(data), 7):
        assert run(data, chunks=[cut, cut + 3], catalogue=app.catalogue()) == expected, cut


# -- the concurrent server over real pipes ---------------------------------------------------------

SERVED = [f"{__file__}:app"]


class Lockstep:
    """A server process driven one request at a time: each answer is read whole before the next line."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server

    def __call__(self, line: bytes, expected: bytes) -> None:
        self.server.send(line)
        assert self.server.read_exactly(len(expected), timeout=30) == expected


def test_the_concurrent_server_answers_every_feature(engine_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[1]))  # this file imports support
    with ServerProcess(engine_name, *SERVED) as server:
        step = Lockstep(server)
        step(request("initialize", {"protocolVersion": "2025-06-18"}), result(INIT))
        step(notification("notifications/initialized") + request("prompts/list", rid=2), result(PROMPTS, 2))
        step(
            get("summarize", {"text": "t"}, 3),
            messages(user("Summarize (plain):"), user("t"), description="Summarize a text (async)", rid=3),
        )
        step(get("summarize", {"text": "rpc"}, 4), error(-32001, "Not today", 4))
        step(get("summarize", {"text": "raise"}, 5), error(-32603, "Internal error", 5))
        step(get("summarize", {"text": "exit"}, "5b"), error(-32603, "Internal error", "5b"))
        step(read("later://9", 6), contents("later://9", "text/plain", 6, text="later 9"))
        step(read("ctx://k", "r7"), contents("ctx://k", "application/json", "r7", text='{"key":"k","request":"r7"}'))
        step(complete(ITEM_REF, "kind", "x", rid=8), completion("kind:x", "{}", rid=8))
        step(subscribe("items://a/b", 9), result("{}", 9))
        step(call("touch", {"uri": "items://a/b"}, 10), updated("items://a/b") + text("touched items://a/b", 10))
        step(
            call("touch_blocking", {"uri": "items://a/b"}, 11),
            updated("items://a/b") + text("touched items://a/b while blocking", 11),
        )
        # From a thread of its own while a sync handler waits: the handler answers first, then
        # the loop writes the notification.
        step(
            call("touch_in_thread", {"uri": "items://a/b"}, 12),
            text("touched items://a/b from a thread", 12) + updated("items://a/b"),
        )
        step(call("touch", {"uri": "items://a/c"}, 13), text("touched items://a/c", 13))
        step(unsubscribe("items://a/b", 14), result("{}", 14))
        step(call("touch_blocking", {"uri": "items://a/b"}, 15), text("touched items://a/b while blocking", 15))
        server.close_stdin()
        assert server.read_to_eof(timeout=30) == b""
        assert server.wait().status == 0
        assert b"Boom: async failure" in server.stderr()


def test_a_bound_method_tool_takes_its_arguments_without_self(run) -> None:
    local = Server("bound")
    local.tool()(Book().chapter)
    call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chapter","arguments":{"n":"4"}}}\n'
    assert run(request("tools/list") + call, catalogue=local.catalogue()) == result(
        '{"tools":[{"name":"chapter","description":"","inputSchema":{"type":"object","properties":'
        '{"n":{"type":"string"}},"required":["n"],"additionalProperties":false}}]}'
    ) + result('{"content":[{"type":"text","text":"chapter 4"}]}', 2)
