"""Prompt messages as the frameworks' apps write them: ``Message``, ``UserMessage``, ``AssistantMessage``
(``mcp.server.fastmcp.prompts.base`` and ``fastmcp.prompts``)."""

from __future__ import annotations

from ..media import Media, jsonable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Message:
    """A prompt message: a role and its content (a string becomes a text block)."""

    def __init__(self, content: Any, role: str = "user", **extra: Any) -> None:
        if isinstance(content, str):
            content = {"type": "text", "text": content}
        self.role = role
        self.content = content

    def to_dict(self) -> dict[str, Any]:
        content = self.content
        if isinstance(content, Media):
            content = content.content_block()
        return {"role": self.role, "content": jsonable(content)}


class UserMessage(Message):
    """A message from the user."""

    def __init__(self, content: Any, role: str = "user", **extra: Any) -> None:
        super().__init__(content, role)


class AssistantMessage(Message):
    """A message from the assistant."""

    def __init__(self, content: Any, role: str = "assistant", **extra: Any) -> None:
        super().__init__(content, role)
