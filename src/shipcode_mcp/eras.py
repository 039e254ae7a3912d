"""Protocol eras: the stateless 2026-07-28 requests beside the ``initialize`` handshake.

A request whose ``params._meta`` holds ``io.modelcontextprotocol/protocolVersion`` is
*modern* (2026-07-28); any other is *legacy* (the ``initialize`` handshake of 2024-11-05 to
2025-11-25). :class:`ModernEra` judges modern requests: their ``_meta``, the methods that
exist in 2026-07-28, and their results (``resultType``, caching hints, server identity).
Handlers are the app's, shared by both eras; a handler asks the client by raising
:class:`~shipcode_mcp.asking.rounds.InputRequired`:

- modern: :class:`ModernRoute` answers ``resultType: "input_required"`` with a sealed
  ``requestState`` (:mod:`shipcode_mcp.asking.state`), and opens it on the retry;
- legacy: :class:`~shipcode_mcp.asking.legacy.LegacyWork` sends the requests to the client, waits
  for its answers and runs the handler again.
"""

from __future__ import annotations

from orjson import loads

from ._log import log
from .asking.rounds import ASKING_METHODS, InputRequired, Round, declares, required_capability
from .asking.state import StateSeal, StateTooLarge, state_keys
from .context import CALLER, caller_identity
from .deferred import ASYNC, Deferred
from .extensions import OWN_RESULT_TYPE
from .jsontext import dumps
from .protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    LOG_RANK,
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_SERVER_INFO,
    META_VERSION,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSION,
    RESOURCE_NOT_FOUND,
    RESULT_MID,
    RESULT_TAIL,
    UNSUPPORTED_VERSION,
    RpcError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from .session import Session

#: The filter members of ``subscriptions/listen``, by the list-changed notification they ask for.
LIST_CHANGED_FILTERS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}


class ModernEra:
    """The 2026-07-28 side of a catalogue: its checks, routes and result framing."""

    def __init__(
        self,
        versions: tuple[str, ...],
        server_info: dict[str, Any],
        key: str | bytes | Sequence[str | bytes] | None,
        ttl_ms: int,
        cache_scope: str,
        server_info_meta: bool,
    ) -> None:
        #: Every version the app speaks (``data.supported`` of -32022), newest first.
        self.versions = list(versions)
        #: Whether requests without a protocol version in ``_meta`` are modern too.
        self.only = not any(version != MODERN_VERSION for version in versions)
        self.seal = StateSeal(state_keys(key))
        meta = b',"_meta":{"%s":%s}' % (META_SERVER_INFO.encode(), dumps(server_info)) if server_info_meta else b""
        self.meta = meta
        #: What ends a complete result body, after its own members.
        self.complete = b'"resultType":"complete"' + meta + b"}"
        #: What ends a cacheable complete result body.
        self.cacheable = (
            b'"resultType":"complete","ttlMs":%d,"cacheScope":%s' % (ttl_ms, dumps(cache_scope)) + meta + b"}"
        )
        #: Method -> answer bytes after the id, or a handler ``(params) -> body | Deferred``.
        self.routes: dict[str, Any] = {}
        #: Method -> its :class:`~shipcode_mcp.catalogue.RouteKind`.
        self.route_kinds: dict[str, int] = {}

    # -- the envelope of a modern request ------------------------------------------------------

    def check(self, params: object) -> None:
        """Refuse a modern request whose ``_meta`` lacks what every request must carry."""
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict:
            raise RpcError(INVALID_PARAMS, "Missing _meta")
        version = meta.get(META_VERSION)
        if type(version) is not str:
            raise RpcError(INVALID_PARAMS, f"Missing {META_VERSION} in _meta")
        if version != MODERN_VERSION or MODERN_VERSION not in self.versions:
            raise RpcError(
                UNSUPPORTED_VERSION, "Unsupported protocol version", {"supported": self.versions, "requested": version}
            )
        if type(meta.get(META_CAPABILITIES)) is not dict:
            raise RpcError(INVALID_PARAMS, f"Missing {META_CAPABILITIES} in _meta")
        level = meta.get(META_LOG_LEVEL)
        if level is not None and (type(level) is not str or level not in LOG_RANK):
            raise RpcError(INVALID_PARAMS, f"Invalid {META_LOG_LEVEL} in _meta")

    # -- results ----------------------------------------------------------------------------

    def finish(self, body: bytes, cacheable: bool) -> bytes:
        """A handler's result body with the members every modern result carries."""
        tail = self.cacheable if cacheable else self.complete
        return b"{" + tail if body == b"{}" else body[:-1] + b"," + tail

    def finish_cacheable(self, body: bytes) -> bytes:
        """A cacheable result body (a list page) with the members every modern result carries."""
        return self.finish(body, True)

    def constant(self, result: dict[str, Any], cacheable: bool) -> bytes:
        """The bytes after the id of a modern result that never changes."""
        return RESULT_MID + self.finish(dumps(result), cacheable) + RESULT_TAIL

    def input_required(self, request: str, ask: InputRequired, round_: Round) -> bytes:
        """The ``input_required`` result body of a handler that asked (or -32021)."""
        missing: dict[str, Any] = {}
        for wanted in ask.requests.values():
            if not declares(round_.capabilities, wanted):
                for name, detail in required_capability(wanted).items():
                    missing.setdefault(name, {}).update(detail)
        if missing:
            names = " and ".join(missing)
            raise RpcError(
                MISSING_CLIENT_CAPABILITY,
                f"Server requires the {names} capability for this request",
                {"requiredCapabilities": missing},
            )
        result: dict[str, Any] = {"resultType": "input_required"}
        if ask.requests:
            result["inputRequests"] = ask.requests
        value = {"a": round_.answers, "s": ask.state}
        try:
            result["requestState"] = self.seal.seal(request, value, bound_to(round_.caller), list(ask.requests))
        except StateTooLarge as error:
            log("warning", f"{request}: {error}")
            raise RpcError(INTERNAL_ERROR, str(error)) from None
        return dumps(result)[:-1] + self.meta + b"}"

    # -- subscriptions ------------------------------------------------------------------------

    def listen(
        self,
        session: Session,
        id_bytes: bytes,
        params: dict[str, Any],
        offered: dict[str, bool],
        filters: dict[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        """``subscriptions/listen``: the session acknowledges and keeps the stream until it is cancelled.

        ``offered`` says which kinds of change the app notifies (``tools``, ``prompts``,
        ``resources`` list changes, ``subscribe`` for resource updates); the acknowledged
        filter is what was asked for among those, and what ``filters`` (the members extensions
        add, see :meth:`~shipcode_mcp.extensions.Extension.listen_filters`) agree to.
        """
        wanted = params.get("notifications", {})
        if type(wanted) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid notifications filter")
        agreed: dict[str, Any] = {}
        for kind, member in LIST_CHANGED_FILTERS.items():
            if wanted.get(member) is True and offered.get(kind):
                agreed[member] = True
        uris = wanted.get("resourceSubscriptions")
        if uris is not None:
            if type(uris) is not list or any(type(uri) is not str for uri in uris):
                raise RpcError(INVALID_PARAMS, "Invalid resourceSubscriptions")
            if offered.get("subscribe"):
                agreed["resourceSubscriptions"] = uris
        for member, agree in (filters or {}).items():
            if member in wanted:
                value = agree(wanted[member])
                if value is not None:
                    agreed[member] = value
        session.listen(id_bytes, loads(id_bytes), agreed)


def bound_to(caller: Any) -> bytes | None:
    """The identity a request state is bound to: None without a caller (no authentication).

    A caller without an identity (see :func:`~shipcode_mcp.context.caller_identity`) cannot ask:
    a server fault, logged.
    """
    if caller is None:
        return None
    identity = caller_identity(caller)
    if identity is None:
        log(
            "error",
            f"a request state cannot be bound to a caller of type {type(caller).__name__}: "
            "verify must return a str, a mapping or a JSON value to ask the client",
        )
        raise RpcError(INTERNAL_ERROR, "Internal error")
    return identity


def resource_not_found_as_invalid_params(error: RpcError, params: dict[str, Any]) -> RpcError:
    """2026-07-28 answers an unknown resource -32602 with the uri as ``data`` (the specification's
    example, SEP-2164), where earlier revisions answered -32002."""
    if error.code == RESOURCE_NOT_FOUND:
        return RpcError(INVALID_PARAMS, error.message, {"uri": params.get("uri")})
    return error


class ModernRoute:
    """A handler serving modern requests: opens the retry's state, frames the result."""

    __slots__ = ("era", "method", "handler", "cacheable", "asks")

    def __init__(self, era: ModernEra, method: str, handler: Callable[[Any], Any], cacheable: bool) -> None:
        self.era = era
        self.method = method
        self.handler = handler
        self.cacheable = cacheable
        self.asks = method in ASKING_METHODS

    def request_key(self, params: dict[str, Any]) -> str:
        """What a sealed state is bound to: the method and the tool, prompt or uri."""
        target = params.get("uri" if self.method == "resources/read" else "name")
        return f"{self.method} {target if type(target) is str else ''}"

    def round(self, params: dict[str, Any]) -> Round:
        """This request's round: its client's capabilities, log level and the answers so far."""
        meta = params["_meta"]
        level = meta.get(META_LOG_LEVEL)
        round_ = Round(True, meta[META_CAPABILITIES], None if level is None else LOG_RANK[level])
        if not self.asks:
            return round_
        round_.caller = caller = CALLER.get()
        asked: Any = ()
        if "requestState" in params:
            sealed = self.era.seal.unseal(self.request_key(params), params["requestState"], bound_to(caller))
            value = None if sealed is None else sealed.get("v")
            if type(value) is not dict or type(value.get("a")) is not dict:
                raise RpcError(INVALID_PARAMS, "Invalid requestState")
            round_.answers = value["a"]
            round_.state = value.get("s")
            asked = sealed.get("q") or ()
        responses = params.get("inputResponses")
        if responses is not None:
            if type(responses) is not dict:
                raise RpcError(INVALID_PARAMS, "Invalid inputResponses")
            # A response that is not an object counts as missing: the handler asks again. A retry's
            # answers are read only for what the previous round asked, and carried on in the state; a
            # first request's are read, and carried on only when the handler asks for them (Context._ask).
            if "requestState" not in params:
                round_.responses = {key: value for key, value in responses.items() if type(value) is dict}
            elif asked:
                asked = frozenset(asked)
                round_.responses = {
                    key: value for key, value in responses.items() if key in asked and type(value) is dict
                }
                round_.answers.update(round_.responses)
        return round_

    def __call__(self, params: dict[str, Any]) -> Any:
        round_ = self.round(params)
        try:
            body = self.handler(params)
        except InputRequired:
            raise asked_without_context(self.method) from None
        except RpcError as error:
            raise resource_not_found_as_invalid_params(error, params) from None
        if type(body) is bytes:
            return self.era.finish(body, self.cacheable)
        if type(body) is Deferred:
            body.round = round_
            # Work without a Context cannot read a round's answers: its round is None (see ModernWork).
            body.func = ModernWork(self, body.func, body.mode == ASYNC, round_ if body.takes_context else None, params)
        return body

    def asked(self, params: dict[str, Any], ask: InputRequired, round_: Round) -> bytes:
        """The answer to a handler that raised :class:`InputRequired`."""
        if not self.asks:
            log("error", f"a {self.method} handler raised InputRequired; only tools, prompts and reads may ask")
            raise RpcError(INTERNAL_ERROR, "Internal error")
        return self.era.input_required(self.request_key(params), ask, round_)


class ModernWork:
    """Deferred work of a modern request: its body framed, its questions answered as input_required.

    ``round`` is None for work without a Context: it cannot ask.
    """

    __slots__ = ("route", "func", "is_async", "round", "params")

    def __init__(
        self, route: ModernRoute, func: Callable[..., Any], is_async: bool, round_: Round, params: dict
    ) -> None:
        self.route = route
        self.func = func
        self.is_async = is_async
        self.round = round_
        self.params = params

    def __call__(self, *args: Any) -> Any:
        if self.is_async:
            return self._run_async(args)
        try:
            body = self.func(*args)
        except InputRequired as ask:
            return self._asked(ask)
        except RpcError as error:
            raise resource_not_found_as_invalid_params(error, self.params) from None
        return self.route.era.finish(body, self.route.cacheable)

    async def _run_async(self, args: tuple) -> bytes:
        try:
            body = await self.func(*args)
        except InputRequired as ask:
            return self._asked(ask)
        except RpcError as error:
            raise resource_not_found_as_invalid_params(error, self.params) from None
        if body.startswith(OWN_RESULT_TYPE):  # a result type of an extension's own, framed by it
            return body
        return self.route.era.finish(body, self.route.cacheable)

    def _asked(self, ask: InputRequired) -> bytes:
        """The answer to the handler's questions (a server fault when it takes no Context)."""
        if self.round is None:
            raise asked_without_context(self.route.method)
        return self.route.asked(self.params, ask, self.round)


def asked_without_context(method: str) -> RpcError:
    """The answer to a handler without a Context that raised :class:`InputRequired`: a server fault.

    The answers of a round reach a handler only through its Context, so such a handler could
    only ask again and again.
    """
    log("error", f"a {method} handler raised InputRequired but takes no Context to read the answers")
    return RpcError(INTERNAL_ERROR, "Internal error")
