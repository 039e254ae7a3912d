"""A small recipe book MCP server built with shipcode-mcp: prompts, resource templates,
completions and resource subscriptions.

- ``recipes://index`` lists every recipe; ``recipes://{slug}`` (a template) serves each one
  as Markdown, with its rating.
- The prompts ``cook`` and ``plan_menu`` turn recipes into messages for the model.
- Completions suggest recipe slugs for the prompt's ``dish`` and the template's ``slug``.
- ``rate_recipe`` changes a recipe: clients subscribed to its uri get
  ``notifications/resources/updated``.

Run it with ``shipcode-mcp examples/recipes.py``.
"""

from __future__ import annotations

from typing import Annotated

from shipcode_mcp import RpcError, Server, ToolError

app = Server(
    "recipes",
    version="1.0.0",
    instructions="Read recipes, rate them, and ask for cooking help with the prompts.",
    resource_subscriptions=True,
)

RECIPES = {
    "pancakes": {
        "title": "Pancakes",
        "serves": 4,
        "ingredients": ["200 g flour", "2 eggs", "300 ml milk", "1 pinch of salt"],
        "steps": ["Whisk everything into a smooth batter.", "Fry thin pancakes in a hot buttered pan."],
    },
    "pesto": {
        "title": "Basil pesto",
        "serves": 2,
        "ingredients": ["50 g basil", "30 g pine nuts", "40 g parmesan", "100 ml olive oil", "1 garlic clove"],
        "steps": ["Toast the pine nuts.", "Blend everything but the oil.", "Stir in the oil."],
    },
    "porridge": {
        "title": "Porridge",
        "serves": 1,
        "ingredients": ["50 g oats", "250 ml milk"],
        "steps": ["Simmer the oats in the milk for 5 minutes, stirring."],
    },
    "shakshuka": {
        "title": "Shakshuka",
        "serves": 2,
        "ingredients": ["400 g tomatoes", "1 pepper", "1 onion", "4 eggs", "1 tsp cumin"],
        "steps": ["Soften the onion and pepper.", "Add tomatoes and cumin; simmer.", "Poach the eggs in the sauce."],
    },
}
ratings: dict[str, int] = {}


def recipe_or_error(slug: str) -> dict:
    try:
        return RECIPES[slug]
    except KeyError:
        raise ToolError(f"no recipe named {slug!r}") from None


def markdown(slug: str) -> str:
    recipe = RECIPES[slug]
    lines = [f"# {recipe['title']}", "", f"Serves {recipe['serves']}."]
    if slug in ratings:
        lines.append(f"Rated {ratings[slug]}/5.")
    lines += ["", "## Ingredients", *(f"- {item}" for item in recipe["ingredients"]), "", "## Steps"]
    lines += [f"{number}. {step}" for number, step in enumerate(recipe["steps"], 1)]
    return "\n".join(lines) + "\n"


# -- resources -------------------------------------------------------------------------------


@app.resource("recipes://index", name="index", mime_type="text/plain", description="Every recipe: slug and title")
def index() -> str:
    return "".join(f"{slug}: {recipe['title']}\n" for slug, recipe in RECIPES.items())


@app.resource("recipes://{slug}", name="recipe", mime_type="text/markdown", description="One recipe, as Markdown")
def recipe(slug: str) -> str:
    # A static resource (recipes://index) wins over the template, so "index" never arrives here.
    if slug not in RECIPES:
        raise RpcError(-32002, "Resource not found")
    return markdown(slug)


# -- tools -----------------------------------------------------------------------------------


@app.tool()
def rate_recipe(slug: str, stars: Annotated[int, "from 1 to 5"]) -> str:
    """Rate a recipe; clients subscribed to the recipe are told it changed"""
    recipe_or_error(slug)
    if not 1 <= stars <= 5:
        raise ToolError("stars go from 1 to 5")
    ratings[slug] = stars
    app.notify_resource_updated(f"recipes://{slug}")
    return f"rated {slug} {stars}/5"


# -- prompts ---------------------------------------------------------------------------------


@app.prompt(title="Cook a recipe")
def cook(
    dish: Annotated[str, "the recipe's slug"],
    servings: Annotated[str | None, "how many people to cook for"] = None,
) -> list:
    """Step-by-step help cooking one recipe"""
    if dish not in RECIPES:
        raise RpcError(-32602, f"no recipe named {dish!r}")
    uri = f"recipes://{dish}"
    ask = f"Walk me through cooking {RECIPES[dish]['title']}, one step at a time."
    if servings is not None:
        ask += f" Scale it for {servings} people."
    return [
        {"type": "resource", "resource": {"uri": uri, "mimeType": "text/markdown", "text": markdown(dish)}},
        ask,
    ]


@app.prompt
def plan_menu(occasion: str) -> str:
    """Plan a menu from the recipe book"""
    titles = ", ".join(recipe["title"] for recipe in RECIPES.values())
    return f"Plan a menu for {occasion} using only these recipes: {titles}."


# -- completions -----------------------------------------------------------------------------


def slugs_starting_with(value: str) -> list[str]:
    return sorted(slug for slug in RECIPES if slug.startswith(value))


@app.completion(prompt="cook")
def complete_cook(argument: str, value: str, context: dict) -> list[str]:
    if argument == "dish":
        return slugs_starting_with(value)
    if argument == "servings":
        return [str(count) for count in range(1, 9) if str(count).startswith(value)]
    return []


@app.completion(resource="recipes://{slug}")
def complete_slug(argument: str, value: str, context: dict) -> list[str]:
    return slugs_starting_with(value)


if __name__ == "__main__":
    app.run()
