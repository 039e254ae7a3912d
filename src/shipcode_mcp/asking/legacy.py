"""Asking the client in the legacy era (2024-11-05 to 2025-11-25): the server sends the requests itself.

A handler asks as it does in either era (``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``, or
raising :class:`~shipcode_mcp.asking.rounds.InputRequired`). In a legacy session the server sends
each request to the client through the session's runtime (:func:`ask`; ids ``"s1"``, ``"s2"``, ...:
:class:`ClientRequests`), waits for the answers and, when the handler raised, runs it again with
them (:class:`LegacyWork`), for at most :data:`MAX_ROUNDS` rounds.
"""

from __future__ import annotations

from ..deferred import ASYNC, INLINE, THREAD, Deferred
from ..errors import ClientError
from ..jsontext import dumps
from ..results import error_result
from .rounds import REQUEST_CAPABILITY, InputRequired, Round, declares

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..session import Session

#: How many rounds of questions one legacy request may take before it fails.
MAX_ROUNDS = 16


async def ask(session: Session, request: dict[str, Any]) -> Any:
    """Send one request of an :class:`~shipcode_mcp.asking.rounds.InputRequired` to a legacy client; its result."""
    method = request["method"]
    params = request.get("params")
    if not declares(session.client_capabilities, request):
        raise ClientError(f"{method}: the client did not declare the {REQUEST_CAPABILITY[method]} capability")
    if method == "elicitation/create" and type(params) is dict and params.get("mode") == "url":
        import uuid

        params = {**params, "elicitationId": uuid.uuid4().hex}  # 2025-11-25 requires one
    return await send_request(session, method, params, REQUEST_CAPABILITY[method])


async def send_request(session: Session, method: str, params: dict[str, Any] | None, capability: str) -> Any:
    """Send a request to the client and return its ``result``; :class:`ClientError` if it fails."""
    if capability not in session.client_capabilities:
        raise ClientError(f"{method}: the client did not declare the {capability} capability")
    if session.runtime is None:
        raise ClientError(f"{method}: no client connection to ask")
    result = await session.runtime.request(method, params)
    if type(result) is not dict:
        raise ClientError(f"{method}: the client answered with an invalid result")
    return result


class ClientRequests:
    """The server's requests to one client awaiting their answers; ids ``"s1"``, ``"s2"``, ..."""

    def __init__(self) -> None:
        self.pending: dict[bytes, tuple[Any, str]] = {}
        self.count = 0

    async def ask(self, loop: Any, send: Callable[[bytes], object], method: str, params: dict[str, Any] | None) -> Any:
        """Send the request (a whole line, through ``send``) and wait for the client's ``result``."""
        self.count += 1
        key = b'"s%d"' % self.count
        line = b'{"jsonrpc":"2.0","id":' + key + b',"method":' + dumps(method)
        if params is not None:
            line += b',"params":' + dumps(params)
        future = loop.create_future()
        self.pending[key] = (future, method)
        try:
            send(line + b"}\n")
            return await future
        finally:
            self.pending.pop(key, None)

    def resolve(self, id_bytes: bytes, message: dict[str, Any]) -> None:
        """A client's response: resolves the matching request; any other is ignored."""
        waiting = self.pending.pop(id_bytes, None)
        if waiting is None:
            return
        future, method = waiting
        if future.done():
            return
        if "error" not in message:
            future.set_result(message.get("result"))
            return
        error = message.get("error")
        if type(error) is dict:
            reason = f"error {error.get('code')}: {error.get('message')}"
        else:
            reason = "an invalid error"
            error = None
        future.set_exception(ClientError(f"{method}: the client answered with {reason}", error))

    def fail(self, why: str) -> None:
        """Fail every request still waiting: ``ClientError("<method>: <why>")``."""
        for future, method in self.pending.values():
            if not future.done():
                future.set_exception(ClientError(f"{method}: {why}"))
        self.pending.clear()


class LegacyWork:
    """A legacy request's deferred work: if its handler asks, the server asks the client and
    runs the handler again (in a task), until it answers."""

    __slots__ = ("func", "mode", "session", "id_bytes", "method", "route", "params")

    def __init__(
        self,
        deferred: Deferred,
        session: Session,
        id_bytes: bytes,
        method: str,
        route: Callable[[Any], Any],
        params: Any,
    ) -> None:
        self.func = deferred.func
        self.mode = deferred.mode
        self.session = session
        self.id_bytes = id_bytes
        self.method = method
        self.route = route
        self.params = params

    def __call__(self, *args: Any) -> Any:
        if self.mode != INLINE:
            return self._run_async(args)
        try:
            return self.func(*args)
        except InputRequired as ask:  # the rounds go on in a task
            return Deferred(self.rounds, ASYNC, None, False, (ask,), False)

    async def _run_async(self, args: tuple) -> bytes:
        try:
            if self.mode == ASYNC:
                return await self.func(*args)
            return await self.session.run_blocking(self.func, *args)
        except InputRequired as ask:
            return await self.rounds(ask)

    async def rounds(self, ask: InputRequired) -> bytes:
        """Ask the client what the handler asked, run the handler again with the answers; repeat."""
        session = self.session
        answers: dict[str, Any] = {}
        for _ in range(MAX_ROUNDS):
            responses = {}
            try:
                for key, request in ask.requests.items():
                    responses[key] = await session.ask(request)
            except ClientError as error:
                if self.method != "tools/call":
                    raise
                return error_result(str(error))  # as when the tool's own ctx.elicit fails
            answers.update(responses)
            round_ = Round(False, session.client_capabilities, None, responses, ask.state, dict(answers))
            try:
                body = self.route(self.params)
                if type(body) is Deferred:
                    body.round = round_
                    args = body.arguments(session, self.id_bytes)
                    if body.mode == ASYNC:
                        body = await body.func(*args)
                    elif body.mode == THREAD:
                        body = await session.run_blocking(body.func, *args)
                    else:
                        body = body.func(*args)
                return body
            except InputRequired as again:
                ask = again
        raise RuntimeError(f"a handler asked for input more than {MAX_ROUNDS} times")


def asking_deferred(
    session: Session, id_bytes: bytes, method: str, route: Callable[[Any], Any], params: Any, deferred: Deferred
) -> Deferred:
    """A legacy request's deferred work, ready for its handler to ask (blocking work then runs from a task)."""
    deferred.func = LegacyWork(deferred, session, id_bytes, method, route, params)
    if deferred.mode == THREAD:
        deferred.mode = ASYNC
    return deferred
