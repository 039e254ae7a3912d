"""Requests answered below ASGI: a POST to the endpoint that the engine's fast path answers at once, given
whole (head and body) by the HTTP connection (:mod:`.connection`), answered without an ASGI scope, receive
or send.

:meth:`DirectPath.answer` asks what the ASGI app asks of such a POST, in its order and by its own functions,
and answers only when every check lets the request pass and the fast path gives a result. At anything else it
gives None, and the connection hands the request to the ASGI app as it came, which judges it from the start:
every refusal and every answer not given at once is the ASGI app's own. An app has a direct path only when its
engine has a fast path (the compiled one) and it checks no bearer tokens (``auth``: their check may wait).

The functions called, and only here: :class:`~.headers.RequestHeaders`, :meth:`Guard.refusal
<.guard.Guard.refusal>`, :func:`~.guard.post_verdict`, and the app's ``shared()`` and ``at_once()``.
"""

from __future__ import annotations

from .guard import post_verdict
from .headers import RequestHeaders

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class DirectPath:
    """What an app (:class:`~.asgi.McpHttpApp`) answers below ASGI."""

    __slots__ = ("app", "target")

    def __init__(self, app: Any) -> None:
        self.app = app
        #: The request target answered here: the endpoint's path exactly (a query or an escape goes to ASGI).
        self.target = app.path.encode("latin-1")

    def answer(
        self, raw: list[tuple[bytes, bytes]], body: bytes, address: str | None, scheme: str
    ) -> tuple[bytes, list[tuple[bytes, bytes]] | None] | None:
        """``(answer, extra headers)`` of a POST to the endpoint (``raw``: its header fields, names in lower
        case; ``address``: where the connection arrived; ``scheme``: ``http`` or ``https``), answered 200 as
        ``application/json``; None when the ASGI app is to serve it."""
        app = self.app
        headers = RequestHeaders(raw)
        if headers.repeated is not None or len(body) > app.max or app.gate.full():
            return None
        first = headers.first
        if app.guard.refusal(first.get(b"host"), first.get(b"origin"), address, scheme):
            return None
        refused, json_ok, _ = post_verdict(
            first.get(b"content-type"), first.get(b"content-encoding"), first.get(b"accept")
        )
        if refused is not None or not json_ok:
            return None
        return app.at_once(app.shared(), first, body, None)
