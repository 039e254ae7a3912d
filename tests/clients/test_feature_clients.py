"""``examples/recipes.py`` (prompts, resource templates, completions, subscriptions) driven by
the official Python and TypeScript SDK clients over stdio, on both engines.

Both clients run the same steps. For every step the test compares the whole outcome, as the
client decoded it, and every ``notifications/resources/updated`` the client received while
the step ran. The clients deliver notifications to their handlers on their own schedule, so
after each step the runner waits for as many as the step expects; a missing one fails on the
wait's guard, an extra one lands in the next step and fails it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
from support.clients import EXAMPLES, Events, check_session, ok, text, ts_outcome
from support.wire import SERVER_COMMAND, engine_env

APP = [str(EXAMPLES / "recipes.py")]
WAIT_LIMIT = 30  # seconds: a guard against a hang, never a schedule
SESSION_LIMIT = 120  # seconds for a whole session: the same kind of guard

Step = tuple[str, Any, dict[str, Any], list[dict[str, Any]]]  # kind, params, outcome, events

IDENTITY = {
    "serverInfo": {"name": "recipes", "version": "1.0.0"},
    "capabilities": {"tools": {}, "resources": {"subscribe": True}, "prompts": {}, "completions": {}},
    "instructions": "Read recipes, rate them, and ask for cooking help with the prompts.",
}
PROMPTS = {
    "prompts": [
        {
            "name": "cook",
            "title": "Cook a recipe",
            "description": "Step-by-step help cooking one recipe",
            "arguments": [
                {"name": "dish", "description": "the recipe's slug", "required": True},
                {"name": "servings", "description": "how many people to cook for", "required": False},
            ],
        },
        {
            "name": "plan_menu",
            "description": "Plan a menu from the recipe book",
            "arguments": [{"name": "occasion", "required": True}],
        },
    ]
}
TEMPLATES = {
    "resourceTemplates": [
        {
            "uriTemplate": "recipes://{slug}",
            "name": "recipe",
            "description": "One recipe, as Markdown",
            "mimeType": "text/markdown",
        }
    ]
}
RESOURCES = {
    "resources": [
        {
            "uri": "recipes://index",
            "name": "index",
            "description": "Every recipe: slug and title",
            "mimeType": "text/plain",
        }
    ]
}
INDEX = "pancakes: Pancakes\npesto: Basil pesto\nporridge: Porridge\nshakshuka: Shakshuka\n"
PORRIDGE = (
    "# Porridge\n\nServes 1.\n\n## Ingredients\n- 50 g oats\n- 250 ml milk\n\n"
    "## Steps\n1. Simmer the oats in the milk for 5 minutes, stirring.\n"
)
PESTO_INGREDIENTS = (
    "\n## Ingredients\n- 50 g basil\n- 30 g pine nuts\n- 40 g parmesan\n- 100 ml olive oil\n- 1 garlic clove\n\n"
    "## Steps\n1. Toast the pine nuts.\n2. Blend everything but the oil.\n3. Stir in the oil.\n"
)
PESTO = "# Basil pesto\n\nServes 2.\n" + PESTO_INGREDIENTS
PESTO_RATED = "# Basil pesto\n\nServes 2.\nRated 4/5.\n" + PESTO_INGREDIENTS
COOK_REF = {"type": "ref/prompt", "name": "cook"}
SLUG_REF = {"type": "ref/resource", "uri": "recipes://{slug}"}


def error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def user(value: str) -> dict[str, Any]:
    return {"role": "user", "content": {"type": "text", "text": value}}


def read(uri: str, mime_type: str, value: str) -> Step:
    return ("readResource", {"uri": uri}, ok({"contents": [{"uri": uri, "mimeType": mime_type, "text": value}]}), [])


def complete(ref: dict[str, Any], name: str, value: str, context: dict[str, str] | None, values: list[str]) -> Step:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = {"arguments": context}
    return ("complete", params, ok({"completion": {"values": values, "total": len(values), "hasMore": False}}), [])


def updated(uri: str) -> dict[str, Any]:
    return {"method": "notifications/resources/updated", "params": {"uri": uri}}


def rate(slug: str, stars: int, *events: dict[str, Any]) -> Step:
    params = {"name": "rate_recipe", "arguments": {"slug": slug, "stars": stars}}
    return ("callTool", params, ok(text(f"rated {slug} {stars}/5")), list(events))


STEPS: list[Step] = [
    ("listPrompts", None, ok(PROMPTS), []),
    (
        "getPrompt",
        {"name": "plan_menu", "arguments": {"occasion": "a picnic"}},
        ok(
            {
                "description": "Plan a menu from the recipe book",
                "messages": [
                    user(
                        "Plan a menu for a picnic using only these recipes: Pancakes, Basil pesto, Porridge, Shakshuka."
                    )
                ],
            }
        ),
        [],
    ),
    (
        "getPrompt",
        {"name": "cook", "arguments": {"dish": "porridge", "servings": "2"}},
        ok(
            {
                "description": "Step-by-step help cooking one recipe",
                "messages": [
                    {
                        "role": "user",
                        "content": {
                            "type": "resource",
                            "resource": {"uri": "recipes://porridge", "mimeType": "text/markdown", "text": PORRIDGE},
                        },
                    },
                    user("Walk me through cooking Porridge, one step at a time. Scale it for 2 people."),
                ],
            }
        ),
        [],
    ),
    ("getPrompt", {"name": "cook", "arguments": {"dish": "lasagne"}}, error(-32602, "no recipe named 'lasagne'"), []),
    ("getPrompt", {"name": "cook", "arguments": {"servings": "2"}}, error(-32602, "Invalid arguments for cook"), []),
    ("getPrompt", {"name": "bake", "arguments": {}}, error(-32602, "Unknown prompt"), []),
    ("listResourceTemplates", None, ok(TEMPLATES), []),
    ("listResources", None, ok(RESOURCES), []),
    read("recipes://index", "text/plain", INDEX),
    read("recipes://pesto", "text/markdown", PESTO),
    ("readResource", {"uri": "recipes://lasagne"}, error(-32002, "Resource not found"), []),
    ("readResource", {"uri": "recipes://pesto/extra"}, error(-32002, "Resource not found"), []),
    complete(COOK_REF, "dish", "p", None, ["pancakes", "pesto", "porridge"]),
    complete(COOK_REF, "servings", "", {"dish": "pesto"}, ["1", "2", "3", "4", "5", "6", "7", "8"]),
    complete(SLUG_REF, "slug", "s", None, ["shakshuka"]),
    (
        "complete",
        {"ref": {"type": "ref/prompt", "name": "plan_menu"}, "argument": {"name": "occasion", "value": ""}},
        ok({"completion": {"values": []}}),
        [],
    ),
    (
        "complete",
        {"ref": {"type": "ref/prompt", "name": "bake"}, "argument": {"name": "x", "value": ""}},
        error(-32602, "Invalid params"),
        [],
    ),
    ("subscribe", {"uri": "recipes://pesto"}, ok({}), []),
    ("subscribe", {"uri": "recipes://index"}, ok({}), []),
    ("subscribe", {"uri": "menus://today"}, error(-32002, "Resource not found"), []),
    rate("pesto", 4, updated("recipes://pesto")),
    rate("porridge", 5),  # not subscribed
    read("recipes://pesto", "text/markdown", PESTO_RATED),
    ("unsubscribe", {"uri": "recipes://pesto"}, ok({}), []),
    rate("pesto", 4),
    (
        "callTool",
        {"name": "rate_recipe", "arguments": {"slug": "pesto", "stars": 6}},
        ok({**text("stars go from 1 to 5"), "isError": True}),
        [],
    ),
]


# -- the Python SDK ----------------------------------------------------------------------------


async def python_sdk_session(env: dict[str, str], errlog) -> dict[str, Any]:
    """Run the steps through ``mcp.ClientSession``; the same output as ``ts_feature_client.mjs``."""
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client
    from mcp.shared import exceptions

    protocol_error = getattr(exceptions, "MCPError", None) or exceptions.McpError
    events = Events(WAIT_LIMIT)

    def wire(model: Any) -> Any:
        return model.model_dump(by_alias=True, exclude_unset=True, mode="json")

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            events.record({"method": message.method, "params": wire(message.params)})

    def reference(ref: dict[str, Any]) -> Any:
        if ref["type"] == "ref/prompt":
            return types.PromptReference(type="ref/prompt", name=ref["name"])
        return types.ResourceTemplateReference(type="ref/resource", uri=ref["uri"])

    def deprecated(method: Any, *args: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # newer SDKs mark subscriptions deprecated for a later revision
            return method(*args)

    params = StdioServerParameters(command=SERVER_COMMAND[0], args=[*SERVER_COMMAND[1:], *APP], env=env)
    out: dict[str, Any] = {"steps": []}
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, message_handler=on_message) as client,
    ):
        init = wire(await client.initialize())
        out.update(
            serverVersion=init["serverInfo"], capabilities=init["capabilities"], instructions=init.get("instructions")
        )
        calls = {
            "listPrompts": lambda _: client.list_prompts(),
            "getPrompt": lambda p: client.get_prompt(p["name"], p["arguments"]),
            "listResources": lambda _: client.list_resources(),
            "listResourceTemplates": lambda _: client.list_resource_templates(),
            "readResource": lambda p: client.read_resource(p["uri"]),
            "complete": lambda p: client.complete(
                reference(p["ref"]), p["argument"], p.get("context", {}).get("arguments")
            ),
            "subscribe": lambda p: deprecated(client.subscribe_resource, p["uri"]),
            "unsubscribe": lambda p: deprecated(client.unsubscribe_resource, p["uri"]),
            "callTool": lambda p: client.call_tool(p["name"], p["arguments"]),
        }
        for kind, step_params, _, expected_events in STEPS:
            try:
                outcome = {"ok": wire(await calls[kind](step_params))}
            except protocol_error as failure:
                outcome = error(failure.error.code, failure.error.message)
            arrived = await events.wait_for(len(expected_events))
            out["steps"].append({"outcome": outcome, "events": events.take()})
            if not arrived:
                break  # this step's comparison fails and shows what did arrive
    return out


async def guarded_session(env: dict[str, str], errlog) -> dict[str, Any]:
    import anyio

    with anyio.fail_after(SESSION_LIMIT):
        return await python_sdk_session(env, errlog)


def test_python_sdk_client(engine_name: str, tmp_path: Path) -> None:
    import anyio

    with open(tmp_path / "server-stderr.txt", "w") as errlog:
        check_session(anyio.run(guarded_session, engine_env(engine_name), errlog), IDENTITY, STEPS)


# -- the TypeScript SDK ------------------------------------------------------------------------


@pytest.fixture
def ts_feature_client(request: pytest.FixtureRequest) -> Path:
    """``ts_feature_client.mjs`` beside the npm install of the TypeScript SDK (``ts_client``)."""
    script = request.getfixturevalue("ts_client").with_name("ts_feature_client.mjs")
    shutil.copyfile(Path(__file__).with_name("ts_feature_client.mjs"), script)
    return script


def test_typescript_sdk_client(ts_feature_client: Path, engine_name: str, tmp_path: Path) -> None:
    command = json.dumps([*SERVER_COMMAND, *APP])
    plan = json.dumps([[kind, params, len(events)] for kind, params, _, events in STEPS])
    with open(tmp_path / "server-stderr.txt", "wb") as errlog:
        done = subprocess.run(
            ["node", str(ts_feature_client), command, plan],
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=engine_env(engine_name),
            timeout=SESSION_LIMIT,
            check=False,
        )
    assert done.returncode == 0, (tmp_path / "server-stderr.txt").read_text()
    check_session(json.loads(done.stdout), IDENTITY, STEPS, ts_outcome)
