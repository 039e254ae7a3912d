"""An MCP App built with shipcode-mcp: a vote tally whose result a host draws as a bar chart.

The tool ``tally`` names its interface, the ``ui://`` page in ``tally.html`` beside this file
(MCP Apps, ``io.modelcontextprotocol/ui``); hosts that render MCP Apps show the chart, the others
show the text. ``add_vote`` is for the chart's own buttons only (``visibility=["app"]``).
Run it with ``shipcode-mcp examples/tally.py``; see README.md beside this file.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from shipcode_mcp import Server

app = Server("tally", version="1.0.0", instructions="Count votes; hosts with MCP Apps draw the tally as a chart.")

CHART = "ui://tally/chart.html"
app.ui_resource(
    CHART,
    path=Path(__file__).with_name("tally.html"),
    name="tally chart",
    description="The votes for each option as a bar chart",
    prefers_border=True,
)

TALLY_SCHEMA = {
    "type": "object",
    "properties": {
        "total": {"type": "integer"},
        "options": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"option": {"type": "string"}, "votes": {"type": "integer"}},
                "required": ["option", "votes"],
            },
        },
    },
    "required": ["total", "options"],
}


@app.tool(ui=CHART, output_schema=TALLY_SCHEMA)
def tally(votes: list[str]) -> dict:
    """Count the votes for each option: most votes first, ties in the order first voted for"""
    ranked = sorted(Counter(votes).items(), key=lambda item: -item[1])
    return {"total": len(votes), "options": [{"option": option, "votes": count} for option, count in ranked]}


@app.tool(ui=CHART, visibility=["app"], output_schema=TALLY_SCHEMA)
def add_vote(votes: list[str], option: str) -> dict:
    """The tally with one more vote for an option (called by the chart's buttons)"""
    return tally([*votes, option])


if __name__ == "__main__":
    app.run()
