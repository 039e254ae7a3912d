"""The rules for one complete input line, written once for both engines.

:class:`LineRules` judges a line in the order of the server contract (README, "Behaviour
contract") and appends its answer, if any, to ``out``. :func:`envelopes` parses each message and tells
it apart, handing it to :meth:`LineRules.answer`: the pure engine hands it every line it frames (one
call a line), the compiled engine the lines its C fast path declines. :func:`envelope` gives one
message's parse as a value; the HTTP transport routes a body by it, and the engine judges that same
result (:meth:`LineRules.judge`): a body is parsed once. The size rule for a line is stated here once
too (in :func:`envelopes`; :attr:`LineRules.limit` and :meth:`LineRules.skipped` for framing).
"""

from __future__ import annotations

from math import inf as INFINITY
from time import monotonic

from orjson import JSONDecodeError
from orjson import loads as _loads

from ._log import log
from .asking.rounds import ASKING_METHODS, InputRequired
from .deferred import PAUSE, Deferred
from .errors import HANDLER_FAULTS, failure_tail
from .jsontext import dumps, is_overflow_error, loads_overflowing
from .protocol import (
    BLANK_BYTES,
    CANCELLED_NOTIFICATION,
    INITIALIZED_NOTIFICATION,
    INTERNAL_ERROR_TAIL,
    INVALID_PARAMS_TAIL,
    INVALID_REQUEST_NULL_LINE,
    INVALID_REQUEST_TAIL,
    META_VERSION,
    METHOD_NOT_FOUND_TAIL,
    MODERN_METHODS,
    PARSE_ERROR_LINE,
    RESPONSE_HEAD,
    RESULT_MID,
    RESULT_TAIL,
    RpcError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .catalogue import Catalogue

    #: A message parsed and told apart: ``(kind, id_bytes, method, params, message)``. ``id_bytes`` is the
    #: id as answers write it (None: none, or not the id of a refused message); ``method`` and ``params``
    #: (:data:`_MISSING` when absent) are a request's or a notification's; ``message`` is the parsed JSON.
    Envelope = tuple[int, bytes | None, str | None, object, object]


class _Missing:
    """The type of :data:`_MISSING`."""

    __slots__ = ()


#: A member the message does not have (``None`` is JSON ``null``).
_MISSING = _Missing()

#: What a message is, as :func:`envelopes` tells it apart: a request, a notification, a response from
#: the client, or refused (an invalid envelope, text that is not JSON, a blank line).
REQUEST, NOTIFICATION, RESPONSE, INVALID, NOT_JSON, BLANK = range(6)
#: The kinds of a refused message.
REFUSED = frozenset({INVALID, NOT_JSON, BLANK})


def envelopes(lines: Iterable[bytes], max_bytes: int, then: Callable[..., bool | None]) -> bool:
    """Parse each of ``lines`` and tell it apart by the rules of the server contract (README, "Behaviour
    contract"), handing it to ``then(kind, id_bytes, method, params, message)`` (:data:`Envelope`'s parts);
    what it answers is :meth:`LineRules.answer`'s. A blank line means nothing and is not handed on.

    Stops after the first line for which ``then`` returns true (the engine must pause its input, and
    resumes ``lines`` where it stopped) and returns True; False once every line was handed on. The stdio
    engine hands its lines here as it frames them, so a line costs one call (``then``), not two.

    The size rule is here once: a message over ``max_bytes`` (a trailing carriage return not counted) is
    refused unless it is blank; the engines stop keeping a line past :attr:`LineRules.limit`, and tell
    :meth:`LineRules.skipped`.
    """
    for line in lines:
        if len(line) > max_bytes and (len(line) > max_bytes + 1 or line[-1] != 13):
            if line.strip(BLANK_BYTES) and then(INVALID, None, None, _MISSING, None):
                return True
            continue
        try:
            message = _loads(line)
        except JSONDecodeError as error:
            if not line.strip(BLANK_BYTES):
                continue
            message = _overflowing(line, error)
            if message is _MISSING:
                if then(NOT_JSON, None, None, _MISSING, None):
                    return True
                continue
        try:
            request_id = message.get("id", _MISSING)
        except AttributeError:  # of the JSON values, only an object has get()
            if then(INVALID, None, None, _MISSING, message):
                return True
            continue
        if type(request_id) is int:
            id_bytes = b"%d" % request_id
        elif type(request_id) is str:
            # A copy: orjson's own output object holds a 4 KiB buffer, and ids stay in the
            # output list until it is written.
            id_bytes = b"%b" % dumps(request_id)
        elif request_id is _MISSING:
            id_bytes = None
        else:
            if then(INVALID, None, None, _MISSING, message):
                return True
            continue
        method = message.get("method", _MISSING)
        params = message.get("params", _MISSING)
        if (
            type(method) is not str
            or (params is not _MISSING and type(params) is not dict and type(params) is not list)
            or message.get("jsonrpc") != "2.0"
        ):
            kind = RESPONSE if method is _MISSING and ("result" in message or "error" in message) else INVALID
            if then(kind, id_bytes, None, _MISSING, message):
                return True
        elif then(NOTIFICATION if id_bytes is None else REQUEST, id_bytes, method, params, message):
            return True
    return False


def _overflowing(line: bytes, error: JSONDecodeError) -> object:
    """A line orjson refused only for a number that overflows a double, parsed; :data:`_MISSING` when the
    line is not JSON."""
    if is_overflow_error(error):
        try:
            return loads_overflowing(line)
        except ValueError:
            pass
    return _MISSING


#: What :func:`envelope` tells a blank message.
_BLANK_ENVELOPE = (BLANK, None, None, _MISSING, None)


def envelope(line: bytes, max_bytes: int) -> Envelope:
    """One message parsed and told apart by :func:`envelopes`' rules, as one value (an HTTP body: the
    transport routes it by this parse, and the engine judges the same one, :meth:`LineRules.judge`)."""
    told: list = []
    envelopes((line,), max_bytes, lambda *parts: told.append(parts))
    return told[0] if told else _BLANK_ENVELOPE


def refusal(kind: int, id_bytes: bytes | None) -> bytes:
    """The answer to a refused message (``b""``: a blank line has none)."""
    if kind == NOT_JSON:
        return PARSE_ERROR_LINE
    if kind == BLANK:
        return b""
    return INVALID_REQUEST_NULL_LINE if id_bytes is None else RESPONSE_HEAD + id_bytes + INVALID_REQUEST_TAIL


class LineRules:
    """Answers complete lines over a catalogue; ``line()`` is true when input must pause.

    Input pauses when a request handed to the session's scheduler fills its in-flight limit.
    """

    def __init__(self, catalogue: Catalogue, max_message_bytes: int) -> None:
        self.routes = catalogue.routes
        self.session = catalogue.session
        #: The 2026-07-28 side of the catalogue (None: the app speaks only legacy versions).
        self.modern = catalogue.modern
        #: Whether every request is judged by 2026-07-28's rules, ``_meta`` or not (an app that
        #: speaks only that version; an HTTP request whose header names it).
        self.all_modern = self.modern is not None and self.modern.only
        self.catalogue = catalogue
        self.max = max_message_bytes
        #: The longest line worth keeping while it streams in: the limit, and one byte of slack for a
        #: trailing carriage return (the size rule of :func:`envelopes`).
        self.limit = max_message_bytes + 1
        #: Answers not yet taken by the engine, in order.
        self.out: list = []
        #: True once ``notifications/initialized`` has arrived.
        self.initialized = False
        #: Called before a handler runs once ``monotonic()`` passes ``flush_deadline``: the
        #: engine writes the answers that waited (see :meth:`watch`).
        self.before_handler = None
        self.flush_deadline = INFINITY

    def line(self, line: bytes) -> bool:
        """Judge one line (without its ``\\n``); true when the engine must pause its input."""
        return envelopes((line,), self.max, self.answer)

    def skipped(self, blank: bool) -> None:
        """A line over the limit was skipped (``blank``: every byte of it was): refused unless blank."""
        if not blank:
            self.out.append(refusal(INVALID, None))

    def judge(self, parsed: Envelope) -> bool:
        """Answer one message as :func:`envelope` told it apart; true when the engine must pause its input."""
        return self.answer(*parsed)

    def answer(self, kind: int, id_bytes: bytes | None, method: str | None, params: object, message: object) -> bool:
        """Answer one message told apart by :func:`envelopes` (its parts); true when the engine must pause."""
        if kind != REQUEST:
            if kind == NOTIFICATION:
                if method == INITIALIZED_NOTIFICATION:
                    self.initialized = True
                elif method == CANCELLED_NOTIFICATION and type(params) is dict:
                    self.session.cancel(params)
            elif kind == RESPONSE:  # a response from the client
                if id_bytes is not None:
                    self.session.response(id_bytes, message)
            elif kind != BLANK:
                self.out.append(refusal(kind, id_bytes))
            return False  # only requests are answered, and refused messages
        modern = self.modern
        if modern is not None:
            # 2026-07-28 when _meta names a protocol version, for its own methods, or when the app
            # speaks only that revision.
            meta = params.get("_meta") if type(params) is dict else None
            if self.all_modern or (type(meta) is dict and META_VERSION in meta) or method in MODERN_METHODS:
                return self.modern_request(id_bytes, method, params)
        route = self.routes.get(method)
        if route is None:
            self.out.extend((RESPONSE_HEAD, id_bytes, METHOD_NOT_FOUND_TAIL))
        elif type(params) is list:
            self.out.extend((RESPONSE_HEAD, id_bytes, INVALID_PARAMS_TAIL))
        elif type(route) is bytes:
            self.out.extend((RESPONSE_HEAD, id_bytes, route))
        else:
            return self.handle(id_bytes, method, route, None if params is _MISSING else params)
        return False

    def modern_request(self, id_bytes: bytes, method: str, params: object) -> bool:
        """Answer a 2026-07-28 request; true when the engine must pause."""
        modern = self.modern
        try:
            modern.check(params)
        except RpcError as error:
            self.out.extend((RESPONSE_HEAD, id_bytes, error.tail))
            return False
        route = modern.routes.get(method)
        if route is None:
            if method == "subscriptions/listen":
                try:
                    catalogue = self.catalogue
                    modern.listen(self.session, id_bytes, params, catalogue.offered, catalogue.listen_filters)
                except RpcError as error:
                    self.out.extend((RESPONSE_HEAD, id_bytes, error.tail))
                return False  # answered only when the subscription ends
            self.out.extend((RESPONSE_HEAD, id_bytes, METHOD_NOT_FOUND_TAIL))
        elif type(route) is bytes:
            self.out.extend((RESPONSE_HEAD, id_bytes, route))
        else:
            return self.handle(id_bytes, method, route, params)
        return False

    def handle(self, id_bytes: bytes, method: str, route, params: dict | None) -> bool:
        """Answer a request with its handler's result; true when the engine must pause."""
        out = self.out
        if monotonic() >= self.flush_deadline:
            self.before_handler()
        try:
            body = route(params)
            if type(body) is not bytes:
                body = self._settle(id_bytes, method, route, params, body)
                if body is None or body is PAUSE:
                    return body is PAUSE
        except InputRequired:
            return self._asked(id_bytes, method)
        except HANDLER_FAULTS as error:
            out += (RESPONSE_HEAD, id_bytes, failure_tail(method, error))
        else:
            out += (RESPONSE_HEAD, id_bytes, RESULT_MID, body, RESULT_TAIL)
        return False

    def _settle(self, id_bytes: bytes, method: str, route, params: dict | None, body: object) -> bytes | object | None:
        """A handler's answer other than bytes: hand deferred work to the session.

        Returns the result body when the work finished at once, :data:`PAUSE` when input must
        pause, or None when the answer comes later or is already written (a handler that
        returned neither bytes nor deferred work: an internal error).
        """
        if type(body) is Deferred:
            # A legacy request whose handler takes a Context may ask the client (without one it
            # could never read the answers): only that work is wrapped for the rounds.
            if body.takes_context and body.round is None and method in ASKING_METHODS:
                from .asking.legacy import asking_deferred

                body = asking_deferred(self.session, id_bytes, method, route, params, body)
            body = self.session.defer(id_bytes, body)
            if type(body) is Deferred:  # inline work that asked: the rounds go on in a task
                body = self.session.defer(id_bytes, body)
            if body is None or body is PAUSE or type(body) is bytes:
                return body
        log("error", f"internal error answering {method!r}: the handler returned {type(body).__name__}, not bytes")
        self.out.extend((RESPONSE_HEAD, id_bytes, INTERNAL_ERROR_TAIL))
        return None

    def _asked(self, id_bytes: bytes, method: str) -> bool:
        """A handler without a Context raised :class:`InputRequired`: a server fault."""
        from .eras import asked_without_context

        self.out.extend((RESPONSE_HEAD, id_bytes, asked_without_context(method).tail))
        return False
