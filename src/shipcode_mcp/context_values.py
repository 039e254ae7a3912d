"""What :class:`~shipcode_mcp.context.Context` members return, in the shapes apps written for the official
SDK and FastMCP read: the request's context, its HTTP request, a resource's contents and the result of
an elicitation with a typed schema (validated through pydantic, imported only then).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Meta(dict):
    """A request's ``params._meta``: a dict whose keys also read as attributes (``meta.progressToken``,
    None when absent), as the official SDK's model of it does."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


class HttpRequest:
    """The HTTP request a message came in: ``headers`` by lower-case name (the first value of a repeated
    one), ``method``, ``path`` and ``query_params``; ``scope`` is the ASGI scope itself."""

    __slots__ = ("scope", "_headers")

    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self._headers: dict[str, str] | None = None

    @property
    def headers(self) -> dict[str, str]:
        if self._headers is None:
            headers: dict[str, str] = {}
            for name, value in self.scope.get("headers", ()):
                headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
            self._headers = headers
        return self._headers

    @property
    def method(self) -> str:
        return self.scope.get("method", "")

    @property
    def path(self) -> str:
        return self.scope.get("path", "")

    @property
    def query_params(self) -> dict[str, str]:
        from urllib.parse import parse_qsl

        return dict(parse_qsl(self.scope.get("query_string", b"").decode("latin-1")))


class RequestContext:
    """``ctx.request_context``: the request's id and ``meta``, the app's ``lifespan_context`` and its
    HTTP ``request`` (an :class:`HttpRequest`; None on stdio)."""

    __slots__ = ("request_id", "meta", "lifespan_context", "request")

    def __init__(self, request_id: Any, meta: Meta | None, lifespan_context: Any, request: HttpRequest | None) -> None:
        self.request_id = request_id
        self.meta = meta
        self.lifespan_context = lifespan_context
        self.request = request


class ReadResourceContents:
    """One of the contents ``ctx.read_resource`` returns: ``content`` (``str`` text or ``bytes`` of a blob),
    ``mime_type`` (None when the resource names none) and ``meta`` (its ``_meta``, or None)."""

    __slots__ = ("content", "mime_type", "meta")

    def __init__(self, content: str | bytes, mime_type: str | None, meta: dict[str, Any] | None = None) -> None:
        self.content = content
        self.mime_type = mime_type
        self.meta = meta

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReadResourceContents):
            return NotImplemented
        return (self.content, self.mime_type, self.meta) == (other.content, other.mime_type, other.meta)

    def __repr__(self) -> str:
        return f"ReadResourceContents(content={self.content!r}, mime_type={self.mime_type!r}, meta={self.meta!r})"


def resource_contents(body: bytes) -> list[ReadResourceContents]:
    """The contents of a ``resources/read`` result body."""
    import base64

    from orjson import loads

    found = []
    for item in loads(body)["contents"]:
        text = item.get("text")
        content = text if text is not None else base64.b64decode(item.get("blob", ""))
        found.append(ReadResourceContents(content, item.get("mimeType"), item.get("_meta")))
    return found


class AcceptedElicitation:
    """The user accepted: ``data`` is their answer, validated (a model instance, a dataclass, a value)."""

    __slots__ = ("data",)
    action = "accept"

    def __init__(self, data: Any) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AcceptedElicitation) and self.data == other.data

    def __repr__(self) -> str:
        return f"AcceptedElicitation(action='accept', data={self.data!r})"


class DeclinedElicitation:
    """The user declined to answer."""

    __slots__ = ()
    action = "decline"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeclinedElicitation)

    def __repr__(self) -> str:
        return "DeclinedElicitation(action='decline')"


class CancelledElicitation:
    """The user dismissed the question."""

    __slots__ = ()
    action = "cancel"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CancelledElicitation)

    def __repr__(self) -> str:
        return "CancelledElicitation(action='cancel')"


#: What ``ctx.elicit`` with a type, and ``ctx.elicit_url``, return.
ElicitationResult = AcceptedElicitation | DeclinedElicitation | CancelledElicitation


class ElicitationType:
    """A type asked for in ``ctx.elicit(message, T)``: its ``schema`` (``requestedSchema``) and the result of
    the client's answer (call the instance).

    A pydantic model, a dataclass or a ``TypedDict`` is asked for as it is and its fields answered; any other
    type (``int``, ``str``, a ``Literal``, an ``Enum``...) as one field ``value`` whose value is the data; None
    as an empty form whose data is None. Answers validate in pydantic's lax mode, as the SDKs do.
    """

    __slots__ = ("schema", "adapter", "wrapped")

    def __init__(self, kind: Any) -> None:
        import dataclasses
        import typing

        from pydantic import BaseModel, TypeAdapter, create_model

        self.wrapped = not (
            kind is None
            or (isinstance(kind, type) and issubclass(kind, BaseModel))
            or dataclasses.is_dataclass(kind)
            or typing.is_typeddict(kind)
        )
        self.adapter: Any = None
        if kind is None:
            self.schema: dict[str, Any] = {"type": "object", "properties": {}}
            return
        if self.wrapped:
            kind = create_model("Elicitation", value=(kind, ...))
        self.adapter = TypeAdapter(kind)
        self.schema = self.adapter.json_schema()

    def __call__(self, answer: dict[str, Any]) -> ElicitationResult:
        action = answer.get("action")
        if action == "decline":
            return DeclinedElicitation()
        if action != "accept":
            return CancelledElicitation()
        if self.adapter is None:
            return AcceptedElicitation(None)
        content = answer.get("content")
        data = self.adapter.validate_python({} if content is None else content)
        return AcceptedElicitation(data.value if self.wrapped else data)


def url_elicitation_result(answer: dict[str, Any]) -> ElicitationResult:
    """The result of a URL elicitation: accepted (data None), declined or cancelled."""
    action = answer.get("action")
    if action == "accept":
        return AcceptedElicitation(None)
    return DeclinedElicitation() if action == "decline" else CancelledElicitation()
