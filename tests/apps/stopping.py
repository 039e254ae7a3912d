"""An app for the stopping tests: one tool, resources to subscribe to, and a lifespan that says on stderr when
it is left. ``served()`` builds its HTTP app, served with ``uvicorn --factory``."""

from __future__ import annotations

import contextlib
import sys

from shipcode_mcp import Server


@contextlib.asynccontextmanager
async def lifespan(server: Server):
    yield {}
    print("lifespan left", file=sys.stderr, flush=True)


app = Server("stopping", version="1.0.0", lifespan=lifespan)


@app.tool()
def echo(text: str) -> str:
    return text


@app.resource("note://a")
def note() -> str:
    return "a"


def served():  # -> the ASGI app
    return app.http_app()
