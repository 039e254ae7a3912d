"""The default catalogue served by ``shipcode-mcp``: echo, add and the hello resource.

Written with the public API, exactly as a user would write an app. No ``from __future__ import
annotations``: hints that are strings would take ``typing.get_type_hints`` at every start-up.
"""

from .app import Server

#: The ``serverInfo`` version the default catalogue reports: part of its wire contract, so it
#: stays "1.0.0" whatever the package version (``shipcode_mcp.__version__``) is.
CATALOGUE_VERSION = "1.0.0"

#: The default catalogue speaks 2025-06-18 only: that is its fixed contract.
app = Server("shipcode-mcp", version=CATALOGUE_VERSION, protocol_versions=("2025-06-18",))


@app.tool()
def echo(text: str) -> str:
    """Echo back the given text"""
    return text


@app.tool()
def add(a: float, b: float) -> float:
    """Add two numbers"""
    return a + b


@app.resource("file:///hello.txt", name="hello.txt", mime_type="text/plain")
def hello() -> str:
    return "Hello, world!"
