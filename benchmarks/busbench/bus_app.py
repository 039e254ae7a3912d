"""The app of ``run.py bus``: a resource listeners subscribe to, and a tool that says it was updated.

``stamp(uri)`` reads the monotonic clock (one clock for every process of the machine), publishes the update of
``uri`` on the bus, and answers with the instant it published, in nanoseconds.
"""

import time

from shipcode_mcp import Server

app = Server("bus-bench", version="1.0.0", resource_subscriptions=True)


@app.resource("bench://news")
def news() -> str:
    """What the listeners follow"""
    return "news"


@app.tool()
def stamp(uri: str) -> int:
    """Publishes the update of ``uri``; the instant it did, in nanoseconds of the monotonic clock"""
    published = time.monotonic_ns()
    app.notify_resource_updated(uri)
    return published
