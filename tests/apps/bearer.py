"""An app for the bearer-token HTTP tests: a tool that asks the caller's name, served with a ``verify``
that knows four tokens of three callers (``uvicorn --factory bearer:served``)."""

from __future__ import annotations

from shipcode_mcp import Context, Server

app = Server("bearer", version="1.0.0")
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ISSUER = "https://auth.example"
#: Two tokens of one subject (JWT claims differing in ``jti``), another subject, and a caller named by a string.
TOKENS = {
    "ada-1": {"iss": ISSUER, "sub": "ada", "jti": "1"},
    "ada-2": {"iss": ISSUER, "sub": "ada", "jti": "2"},
    "bob": {"iss": ISSUER, "sub": "bob", "jti": "3"},
    "carol": "carol",
}


@app.tool()
async def greet(ctx: Context) -> str:
    """Ask the user's name, then greet"""
    answer = await ctx.elicit("What is your name?", SCHEMA, key="name")
    return f"Hello, {answer['content']['name']}!"


def verify(token: str):
    return TOKENS.get(token)


def served():  # -> the ASGI app
    return app.http_app(auth=verify)
