"""``Context``: what a handler can do beyond returning its result.

A handler parameter annotated ``Context`` (any name) receives one; it never appears in the
input schema. ``log``/``report_progress`` and the level shortcuts take effect when called
and may be awaited (so they work in sync handlers too); ``sample``, ``elicit``,
``elicit_url`` and ``list_roots`` ask the client and must be awaited, in async handlers.

Asking works in both eras (see :mod:`shipcode_mcp.asking`): a 2026-07-28 request's handler gets
the retry's answer for the ask's key, or ends the round; an earlier revision's client is
asked at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar

from orjson import OPT_SORT_KEYS, dumps, loads

from .asking.rounds import InputRequired, elicitation_request, roots_request, sampling_request, url_elicitation_request
from .errors import ClientError, ResourceError, RpcError
from .protocol import LOG_LEVELS, LOG_RANK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .asking.rounds import Round
    from .context_values import ReadResourceContents, RequestContext
    from .session import Session

_NO_RESPONSES: dict = {}
#: Who is calling, as the transport's authentication established it (None: no one said).
CALLER: ContextVar[Any] = ContextVar("shipcode_mcp_caller", default=None)
#: The ASGI scope of the HTTP request being answered (None on stdio).
HTTP_SCOPE: ContextVar[Any] = ContextVar("shipcode_mcp_http_scope", default=None)
#: ``ctx.lifespan_context`` of an app without a lifespan (the official SDK's default lifespan yields ``{}``).
_NO_LIFESPAN: dict = {}


def caller_identity(caller: Any) -> bytes | None:
    """Who ``caller`` (what the HTTP app's ``verify`` returned) is, as bytes equal for the same subject
    in every request and every process; None when it cannot be told.

    - a ``str``: the text itself;
    - a mapping whose ``sub`` is a ``str`` (JWT claims): its ``iss`` and ``sub`` (the other claims,
      ``exp`` and ``jti`` say, change with every token);
    - any other value orjson encodes (a mapping without ``sub``, a list, a number, a dataclass):
      its JSON with sorted keys;
    - anything else: None.

    Each kind has its own prefix, so values of two kinds never give the same bytes.
    """
    if isinstance(caller, str):
        return b"s" + caller.encode("utf-8", "surrogatepass")
    if isinstance(caller, Mapping) and isinstance(caller.get("sub"), str):
        issuer = caller.get("iss")
        return b"c" + dumps([issuer if isinstance(issuer, str) else None, caller["sub"]])
    try:
        return b"j" + dumps(caller, option=OPT_SORT_KEYS)
    except TypeError:  # orjson's JSONEncodeError included
        return None


class _Done:
    """An awaitable that is already complete: ``await`` returns None at once."""

    __slots__ = ()

    def __await__(self):
        return iter(())


_DONE = _Done()


class Context:
    """One request's way back to the client."""

    #: Whether a form elicitation says ``"mode": "form"`` (the native one does not: the bytes of 2025-06-18).
    FORM_MODE_NAMED = False

    __slots__ = ("_session", "_id_bytes", "_progress_token", "_round", "_meta", "_scope", "_session_id")

    def __init__(
        self,
        session: Session,
        id_bytes: bytes,
        progress_token: object = None,
        round_: Round | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self._session = session
        self._id_bytes = id_bytes
        self._progress_token = progress_token
        self._round = round_
        self._meta = meta
        self._scope = HTTP_SCOPE.get()
        self._session_id: str | None = None

    @property
    def request_id(self) -> int | str:
        """The request's id, as the client sent it."""
        return loads(self._id_bytes)

    @property
    def server(self) -> Any:
        """The :class:`~shipcode_mcp.app.Server` being served."""
        catalogue = self._session.catalogue
        return catalogue.app if catalogue is not None else None

    @property
    def lifespan_context(self) -> Any:
        """What the app's lifespan yielded (``{}`` without a lifespan; see :mod:`shipcode_mcp.lifespan`)."""
        server = self.server
        running = server.running_lifespan if server is not None else None
        return running.value if running is not None else _NO_LIFESPAN

    @property
    def request_context(self) -> RequestContext:
        """The request's context as the official SDK shapes it: ``request_id``, ``meta``,
        ``lifespan_context`` and ``request`` (the HTTP request, with its ``headers``; None on stdio)."""
        from .context_values import HttpRequest, Meta, RequestContext

        meta = Meta(self._meta) if self._meta is not None else None
        request = HttpRequest(self._scope) if self._scope is not None else None
        return RequestContext(self.request_id, meta, self.lifespan_context, request)

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP request's headers by lower-case name (``{}`` on stdio)."""
        if self._scope is None:
            return {}
        from .context_values import HttpRequest

        return HttpRequest(self._scope).headers

    @property
    def client_id(self) -> str | None:
        """The ``client_id`` of the request's ``_meta``, as the official SDK reads it (None when absent)."""
        found = self._meta.get("client_id") if self._meta is not None else None
        return found if type(found) is str else None

    @property
    def session_id(self) -> str:
        """The session's id: the ``Mcp-Session-Id`` of a legacy HTTP session, else one made for the session
        (a stdio server's client); a 2026-07-28 request has no session, so each gets an id of its own."""
        if self._session_id is None:
            given = self.headers.get("mcp-session-id") if self._scope is not None else None
            if given is None:
                import uuid

                if self._round is not None and self._round.modern:
                    given = uuid.uuid4().hex
                else:
                    session = self._session
                    if session.generated_id is None:
                        session.generated_id = uuid.uuid4().hex
                    given = session.generated_id
            self._session_id = given
        return self._session_id

    @property
    def auth(self) -> Any:
        """Who is calling: what the HTTP app's ``auth=`` function returned for this request's bearer
        token (None without authentication, and on stdio)."""
        return CALLER.get()

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The client's capabilities: from this request's ``_meta`` (2026-07-28) or from ``initialize``."""
        if self._round is not None and self._round.modern:
            return self._round.capabilities
        return self._session.client_capabilities

    @property
    def input_responses(self) -> dict[str, Any]:
        """The client's answers to the previous round's questions, by key (``{}`` in a first round)."""
        return self._round.responses if self._round is not None else _NO_RESPONSES

    @property
    def request_state(self) -> Any:
        """The ``state`` the handler gave :class:`~shipcode_mcp.asking.rounds.InputRequired` last round, or None."""
        return self._round.state if self._round is not None else None

    # -- notifications ---------------------------------------------------------------------

    def log(
        self,
        level: str,
        data: Any,
        logger: str | None = None,
        *,
        logger_name: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> _Done:
        """Send ``notifications/message`` when ``level`` is at or above the client's chosen level.

        ``level`` is one of debug, info, notice, warning, error, critical, alert, emergency
        (ValueError otherwise); ``data`` is any JSON value. Until the client sends
        ``logging/setLevel``, every level is sent. A 2026-07-28 request gets log messages only
        when its ``_meta`` names a level (``io.modelcontextprotocol/logLevel``).
        ``logger_name`` is another spelling of ``logger`` (the SDKs'); with ``extra``, the data sent
        is ``{"msg": data, "extra": extra}``, as FastMCP sends it.
        """
        if logger_name is not None:
            logger = logger_name
        if extra is not None:
            data = {"msg": data, "extra": dict(extra)}
        rank = LOG_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
        session = self._session
        round_ = self._round
        if round_ is not None and round_.modern:
            threshold = round_.log_rank
            if threshold is None:
                return _DONE
        else:
            threshold = session.log_threshold
        if rank >= threshold:
            params: dict[str, Any] = {"level": level}
            if logger is not None:
                params["logger"] = logger
            params["data"] = data
            session.notify("notifications/message", params)
        return _DONE

    def debug(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("debug", data, logger, **spelled)

    def info(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("info", data, logger, **spelled)

    def notice(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("notice", data, logger, **spelled)

    def warning(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("warning", data, logger, **spelled)

    def error(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("error", data, logger, **spelled)

    def critical(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("critical", data, logger, **spelled)

    def alert(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("alert", data, logger, **spelled)

    def emergency(self, data: Any, logger: str | None = None, **spelled: Any) -> _Done:
        return self.log("emergency", data, logger, **spelled)

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> _Done:
        """Send ``notifications/progress`` when the request carried ``_meta.progressToken``; else nothing."""
        if self._progress_token is not None:
            params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            self._session.notify("notifications/progress", params)
        return _DONE

    # -- requests to the client --------------------------------------------------------------

    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int = 512,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        include_context: str | None = None,
        metadata: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage``); returns the client's result dict.

        A ``str`` is sent as one user text message; ``max_tokens`` defaults to 512, as FastMCP's does.
        """
        request = sampling_request(
            messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_preferences=model_preferences,
            include_context=include_context,
            metadata=metadata,
        )
        return await self._ask(request, key, "sample")

    async def elicit(self, message: str, schema: Any = None, key: str | None = None) -> Any:
        """Ask the client's user (``elicitation/create``, form mode).

        With a JSON Schema (a ``dict``), returns the client's result dict. With a type (a pydantic model,
        a dataclass, a ``TypedDict``; or ``int``, ``str``, a ``Literal``..., asked as one field ``value``;
        or None, an empty form), returns an :data:`~shipcode_mcp.context_values.ElicitationResult`:
        ``action`` ("accept", "decline" or "cancel") and, accepted, ``data`` validated as that type
        (``pydantic.ValidationError`` when the answer does not fit).
        """
        if type(schema) is dict:
            return await self._ask(elicitation_request(message, schema, self.FORM_MODE_NAMED), key, "elicit")
        from .context_values import ElicitationType

        asked = ElicitationType(schema)
        return asked(await self._ask(elicitation_request(message, asked.schema, self.FORM_MODE_NAMED), key, "elicit"))

    async def elicit_url(self, message: str, url: str, key: str | None = None) -> dict[str, Any]:
        """Send the client's user to ``url`` (``elicitation/create``, URL mode); returns the client's result dict."""
        return await self._ask(url_elicitation_request(message, url), key, "elicit")

    async def read_resource(self, uri: str) -> list[ReadResourceContents]:
        """The contents of one of the app's resources (a template's included), read as ``resources/read``
        reads them: :class:`~shipcode_mcp.context_values.ReadResourceContents` with ``content`` (``str``
        or ``bytes``) and ``mime_type``; :class:`~shipcode_mcp.errors.ResourceError` when no resource has
        that uri."""
        from .context_values import resource_contents

        session = self._session
        try:
            body = session.catalogue.read_resource({"uri": str(uri)})
        except RpcError:
            raise ResourceError(f"Unknown resource: {uri}") from None
        if type(body) is not bytes:  # deferred work: run here, for this request
            body = await session.finish(body, self._id_bytes)
        return resource_contents(body)

    async def list_roots(self, key: str | None = None) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``)."""
        result = await self._ask(roots_request(), key, "roots")
        roots = result.get("roots")
        if type(roots) is not list:
            raise ClientError("roots/list: the client answered with an invalid result")
        return roots

    async def _ask(self, request: dict[str, Any], key: str | None, kind: str) -> dict[str, Any]:
        """The client's answer to ``request``: from this round's answers, or asked now.

        Keys default to one per ask, in call order (``elicit-1``, ``sample-2``, ...), so a
        handler run again from the start finds its earlier answers under the same keys.
        """
        round_ = self._round
        if round_ is not None:
            round_.asked += 1
            if key is None:
                key = f"{kind}-{round_.asked}"
            answer = round_.answers.get(key)
            if answer is None:
                answer = round_.responses.get(key)  # a first request's answer: asked now, so carried on
                if answer is not None:
                    round_.answers[key] = answer
            if answer is not None:
                return answer
            if round_.modern:
                raise InputRequired({key: request}, state=round_.state)
        return await self._session.ask(request)
