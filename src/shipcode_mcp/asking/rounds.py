"""Asking the client while answering it: ``InputRequired`` and the requests it carries.

One handler serves both eras. It raises :class:`InputRequired` with the requests it needs
answered (or calls ``ctx.elicit``/``ctx.sample``/``ctx.list_roots``, which raise it for it);
then it is run again from the start with the answers in ``ctx.input_responses``.

- 2026-07-28: the answer is ``resultType: "input_required"`` with ``inputRequests`` and a
  sealed ``requestState`` (:mod:`.state`); the client retries the request with ``inputResponses``.
- Earlier revisions: the server sends the requests to the client itself, waits for the
  answers and runs the handler again (:mod:`.legacy`).

Only ``tools/call``, ``prompts/get`` and ``resources/read`` may ask.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["InputRequired", "elicitation_request", "roots_request", "sampling_request"]

#: The methods whose handlers may raise :class:`InputRequired`.
ASKING_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Each request a server may ask of a client: the client capability it needs.
REQUEST_CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


class InputRequired(BaseException):
    """Raised by a handler that needs the client's input before it can answer.

    ``requests`` maps keys of the handler's choosing to requests built with
    :func:`elicitation_request`, :func:`sampling_request`, :func:`roots_request` (or the
    wire's ``{"method", "params"}`` dicts). ``state`` is any JSON value the handler wants
    back as ``ctx.request_state`` in the next round (integrity-protected on the way).

    A ``BaseException``, as :class:`asyncio.CancelledError` is: an ``except Exception``
    around an ``await ctx.elicit(...)`` does not swallow the end of a round.
    """

    def __init__(self, requests: dict[str, dict[str, Any]] | None = None, state: Any = None) -> None:
        super().__init__(requests, state)
        self.requests = dict(requests or {})
        self.state = state
        for key, request in self.requests.items():
            if type(key) is not str or type(request) is not dict or request.get("method") not in REQUEST_CAPABILITY:
                raise TypeError(
                    f"InputRequired: {key!r} must map to an elicitation, sampling or roots request, not {request!r:.80}"
                )


def elicitation_request(message: str, schema: dict[str, Any], mode_named: bool = False) -> dict[str, Any]:
    """An ``elicitation/create`` request (form mode): ask the user for data of this schema (``mode_named``:
    with ``"mode": "form"``, as the other frameworks send it at every revision)."""
    params = {"mode": "form", "message": message} if mode_named else {"message": message}
    params["requestedSchema"] = schema
    return {"method": "elicitation/create", "params": params}


def url_elicitation_request(message: str, url: str) -> dict[str, Any]:
    """An ``elicitation/create`` request in URL mode: send the user to ``url``.

    Sent to a 2025-11-25 client, it gets the ``elicitationId`` that revision requires.
    """
    return {"method": "elicitation/create", "params": {"mode": "url", "message": message, "url": url}}


def sampling_request(
    messages: str | list[dict[str, Any]],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    temperature: float | None = None,
    stop_sequences: list[str] | None = None,
    model_preferences: dict[str, Any] | None = None,
    include_context: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``sampling/createMessage`` request; a ``str`` is sent as one user text message."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
    params: dict[str, Any] = {"messages": messages}
    optional = (
        ("modelPreferences", model_preferences),
        ("systemPrompt", system_prompt),
        ("includeContext", include_context),
        ("temperature", temperature),
        ("maxTokens", max_tokens),
        ("stopSequences", stop_sequences),
        ("metadata", metadata),
    )
    params.update((key, value) for key, value in optional if value is not None)
    return {"method": "sampling/createMessage", "params": params}


def roots_request() -> dict[str, Any]:
    """A ``roots/list`` request."""
    return {"method": "roots/list"}


def required_capability(request: dict[str, Any]) -> dict[str, Any]:
    """The client capabilities object a request needs, e.g. ``{"sampling": {}}``."""
    name = REQUEST_CAPABILITY[request["method"]]
    params = request.get("params")
    if name == "elicitation" and type(params) is dict and params.get("mode") == "url":
        return {"elicitation": {"url": {}}}
    return {name: {}}


def declares(capabilities: dict[str, Any], request: dict[str, Any]) -> bool:
    """Whether the client declared what ``request`` needs (URL elicitation needs ``elicitation.url``)."""
    needed = required_capability(request)
    for name, detail in needed.items():
        declared = capabilities.get(name)
        if type(declared) is not dict:
            return False
        if "url" in detail and type(declared.get("url")) is not dict:
            return False
    return True


class Round:
    """What one request knows of its client and of the rounds before it.

    ``modern`` tells the era; ``capabilities`` are the client's (from ``initialize`` or from
    this request's ``_meta``); ``log_rank`` is the lowest level sent (None: no log messages);
    ``responses`` the ``inputResponses`` (a retry's: those the previous round asked for); ``state``
    what the previous round's handler passed as ``state``; ``answers`` every answer so far, by key
    (earlier rounds' included); ``caller`` who is calling (a modern request's ``ctx.auth``), to
    whom the next round's state is bound.
    """

    __slots__ = ("modern", "capabilities", "log_rank", "responses", "state", "answers", "asked", "caller")

    def __init__(
        self,
        modern: bool,
        capabilities: dict[str, Any],
        log_rank: int | None,
        responses: dict[str, Any] | None = None,
        state: Any = None,
        answers: dict[str, Any] | None = None,
    ) -> None:
        self.modern = modern
        self.capabilities = capabilities
        self.log_rank = log_rank
        self.responses = responses if responses is not None else {}
        self.state = state
        self.answers = answers if answers is not None else {}
        #: How many times this run of the handler asked (``ctx.elicit`` and the like): default keys.
        self.asked = 0
        self.caller: Any = None
