"""An app for the hostile HTTP tests: a plain tool, one that reports progress then waits until it is
cancelled, and one that says how many of those were cancelled.

``short_sessions()`` builds its HTTP app with legacy sessions that end after 0.2 s idle, ``bearer()`` one
that wants a bearer token (``verify`` raises on any token but ``good``); both are served with
``uvicorn --factory``.
"""

from __future__ import annotations

import asyncio

from shipcode_mcp import Context, Server

app = Server("hostile", version="1.0.0")
#: Calls of ``drip`` that ended cancelled.
CANCELLED = []


@app.tool()
def echo(text: str) -> str:
    """Echo back the given text"""
    return text


@app.tool()
async def drip(ctx: Context) -> str:
    """Report progress, then wait until cancelled"""
    ctx.report_progress(1, 2)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        CANCELLED.append(ctx.request_id)
        raise
    return "never"


@app.tool()
def cancelled() -> int:
    """How many drip calls were cancelled"""
    return len(CANCELLED)


def short_sessions():  # -> the ASGI app
    return app.http_app(session_idle_seconds=0.2)


def verify(token: str):
    """As ``jwt.decode`` does: who the token names, or an exception for any token it cannot read."""
    if token == "good":
        return {"sub": "ada"}
    raise ValueError("Not enough segments")


def bearer():  # -> the ASGI app
    return app.http_app(auth=verify, scopes=["notes"])
