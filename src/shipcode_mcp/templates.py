"""Resource templates: ``@app.resource("scheme://items/{id}")`` serves every uri that matches.

A ``{name}`` part matches one or more characters other than ``/``; the function receives
each matched part as the keyword argument of that name, exactly as it appears in the uri
(not percent-decoded). The function's parameters (a ``Context`` aside) must be exactly the
template's names.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .handlers import Resource
from .schema import parameter_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PART = re.compile(r"\{([^{}/]*)\}")


def is_template(uri: str) -> bool:
    """Whether a resource uri has ``{name}`` parts."""
    return _PART.search(uri) is not None


class ResourceTemplate(Resource):
    """A resource whose uri is a template; ``uri`` holds the template."""

    __slots__ = ("names", "pattern")

    def __init__(
        self,
        uri_template: str,
        read: Callable[..., Any],
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(uri_template, read, name, mime_type, description, title, icons)
        names = _PART.findall(uri_template)
        if not all(part.isidentifier() for part in names) or len(set(names)) != len(names):
            raise ValueError(f"resource template {uri_template!r}: each {{part}} must be a distinct Python name")
        parameters = [parameter for parameter in parameter_names(read) if parameter != self.context_name]
        if sorted(parameters) != sorted(names):
            raise TypeError(
                f"resource template {uri_template!r}: the function's parameters {parameters} "
                f"must be exactly the template's parts {names}"
            )
        self.names = names
        pieces = _PART.split(uri_template)  # literal, name, literal, name, ..., literal
        self.pattern = re.compile(
            "".join(re.escape(piece) if index % 2 == 0 else "([^/]+)" for index, piece in enumerate(pieces))
        )

    def match(self, uri: str) -> dict[str, str] | None:
        """The values of the template's parts in ``uri``, or None when it does not match."""
        found = self.pattern.fullmatch(uri)
        return None if found is None else dict(zip(self.names, found.groups(), strict=True))

    def listing(self) -> dict[str, Any]:
        """The template's entry in ``resources/templates/list``."""
        entry: dict[str, Any] = {"uriTemplate": self.uri, "name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description is not None:
            entry["description"] = self.description
        entry["mimeType"] = self.mime_type
        if self.icons is not None:
            entry["icons"] = self.icons
        return entry
