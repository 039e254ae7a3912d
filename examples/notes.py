"""A small notes MCP server built with shipcode-mcp.

Notes live in memory, or in the JSON file named by the ``NOTES_FILE`` environment variable
when it is set (written after every change). Run it with ``shipcode-mcp examples/notes.py``.
"""

from __future__ import annotations

import json
import os
from typing import Annotated

from shipcode_mcp import Server, ToolError

app = Server("notes", version="1.0.0")

NOTE_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "title": {"type": "string"},
        "text": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "title", "text", "tags"],
}


class Notebook:
    """Notes by id, saved to a JSON file when one is given."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.notes: dict[int, dict] = {}
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as file:
                self.notes = {note["id"]: note for note in json.load(file)}

    def save(self) -> None:
        if self.path:
            with open(self.path, "w", encoding="utf-8") as file:
                json.dump(list(self.notes.values()), file, ensure_ascii=False, indent=1)

    def get(self, note_id: int) -> dict:
        try:
            return self.notes[note_id]
        except KeyError:
            raise ToolError(f"no note with id {note_id}") from None


notebook = Notebook(os.environ.get("NOTES_FILE"))


@app.tool(output_schema=NOTE_SCHEMA)
def add_note(title: str, text: str, tags: list[str] | None = None) -> dict:
    """Add a note; returns it with its new id"""
    if not title.strip():
        raise ToolError("a note needs a title")
    note = {"id": max(notebook.notes, default=0) + 1, "title": title, "text": text, "tags": sorted(set(tags or []))}
    notebook.notes[note["id"]] = note
    notebook.save()
    print(f"added note {note['id']}")  # a stray print: it goes to stderr, never into the protocol
    return note


@app.tool(output_schema=NOTE_SCHEMA)
def get_note(note_id: int) -> dict:
    """Read one note by id"""
    return notebook.get(note_id)


@app.tool()
def search_notes(
    query: Annotated[str, "words to look for in titles and texts (case-insensitive)"] = "",
    tag: Annotated[str | None, "only notes with this tag"] = None,
) -> str:
    """Find notes; one line per note: id, title and tags"""
    words = query.lower().split()
    lines = []
    for note in notebook.notes.values():
        haystack = f"{note['title']} {note['text']}".lower()
        if all(word in haystack for word in words) and (tag is None or tag in note["tags"]):
            lines.append(f"{note['id']}: {note['title']}" + (f" [{', '.join(note['tags'])}]" if note["tags"] else ""))
    return "\n".join(lines) if lines else "no notes found"


@app.tool()
def delete_note(note_id: int) -> str:
    """Delete a note by id"""
    note = notebook.get(note_id)
    del notebook.notes[note_id]
    notebook.save()
    return f"deleted note {note_id}: {note['title']}"


@app.resource("notes://all", name="all notes", mime_type="application/json", description="Every note, as JSON")
def all_notes() -> str:
    return json.dumps(list(notebook.notes.values()), ensure_ascii=False)


if __name__ == "__main__":
    app.run()
