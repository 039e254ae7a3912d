"""Requests answered below ASGI: what the ASGI app answers at once, given whole (head and body) by the HTTP
connection (:mod:`.connection`), answered without an ASGI scope, receive or send.

:meth:`DirectPath.answer` asks what the ASGI app asks of such a request, in its order and by its own functions,
and answers only when every check lets the request pass and the answer needs no waiting: a POST the engine's
fast path answers, and the rest of a legacy session's plain life (its ``initialize`` when that is answered
at once, its ``notifications/initialized`` while it has no catalogue of its own, its ``DELETE``). At anything
else it gives None having changed nothing (a session looked up is only marked used, as the ASGI app marks it
again), and the connection hands the request to the ASGI app as it came, which judges it from the start: every
refusal, every session held by another process (:mod:`.relay`) and every answer not given at once is the ASGI
app's own. An app has a direct path only when its engine has a fast path (the compiled one) and it checks no
bearer tokens (``auth``: their check may wait).

The functions called, and only here: :class:`~.headers.RequestHeaders`, :meth:`Guard.refusal
<.guard.Guard.refusal>`, :func:`~.guard.post_verdict`, :class:`~.posts.Post`, :func:`~.sessions.client_of`,
the session table's ``open``, ``get`` and ``close``, and the app's ``shared()``, ``at_once()``,
``speaks_legacy()``, ``reads_nothing()`` and ``legacy_served()``.
"""

from __future__ import annotations

from ...lines import REQUEST
from .guard import post_verdict
from .headers import RequestHeaders
from .posts import Post
from .replies import error_code
from .sessions import NoRoom, client_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: A direct answer: its HTTP status, its body (JSON, or empty) and the header fields it adds.
    Answer = tuple[int, bytes, list[tuple[bytes, bytes]] | None]


class DirectPath:
    """What an app (:class:`~.asgi.McpHttpApp`) answers below ASGI."""

    __slots__ = ("app", "target")

    def __init__(self, app: Any) -> None:
        self.app = app
        #: The request target answered here: the endpoint's path exactly (a query or an escape goes to ASGI).
        self.target = app.path.encode("latin-1")

    def answer(
        self,
        method: bytes,
        raw: list[tuple[bytes, bytes]],
        body: bytes,
        address: str | None,
        scheme: str,
        client: tuple[str, int] | None,
    ) -> Answer | None:
        """``(status, body, extra headers)`` of a POST or DELETE to the endpoint (``raw``: its header fields,
        names in lower case; ``address``: where the connection arrived; ``scheme``: ``http`` or ``https``;
        ``client``: the peer's address), a body being ``application/json``; None when the ASGI app is to serve
        it."""
        app = self.app
        headers = RequestHeaders(raw)
        if headers.repeated is not None or len(body) > app.max or app.gate.full():
            return None
        first = headers.first
        if app.guard.refusal(first.get(b"host"), first.get(b"origin"), address, scheme):
            return None
        if method == b"DELETE":
            return self.delete(first.get(b"mcp-session-id"))
        refused, json_ok, stream_ok = post_verdict(
            first.get(b"content-type"), first.get(b"content-encoding"), first.get(b"accept")
        )
        if refused is not None or not json_ok:
            return None
        quick = app.at_once(app.shared(), first, body, None)
        if quick is not None:
            return 200, *quick
        if not app.speaks_legacy(first.get(b"mcp-protocol-version")):
            return None
        post = Post(None, None, headers, body, json_ok, stream_ok, None, app.max)
        return None if post.refusal is not None else self.legacy(post, client)

    def legacy(self, post: Post, client: tuple[str, int] | None) -> Answer | None:
        """A legacy session's ``initialize`` answered at once (a constant, or the catalogue's own handler), or a
        message of a session that the shared catalogue judges (``McpHttpApp.reads_nothing``): judged as
        ``McpHttpApp.legacy_post`` judges it."""
        app = self.app
        sessions = app.sessions
        session_id = post.headers.get(b"mcp-session-id")
        opening = post.method == "initialize" and session_id is None
        if opening:
            catalogue = sessions.shared.catalogue
            route = catalogue.routes.get("initialize")
            if type(route) is not bytes and route != catalogue.initialize:  # else perhaps not answered at once
                return None
            try:
                session = sessions.open(None, client_of(None, client))
            except NoRoom:  # refused by the ASGI app, which makes room the same way
                return None
        else:
            session = None if session_id is None else sessions.get(session_id, None)
            if session is None or not app.reads_nothing(session, post):
                return None
        extra = [(b"mcp-session-id", session.id.encode())]
        served = app.legacy_served(session, post, opening)
        try:
            answer = served.judge(post.parsed, served.exchange())
        except BaseException:  # a fault: the ASGI app meets it anew, with no session opened here
            if opening:
                sessions.close(session.id)
            raise
        if post.kind != REQUEST:
            session.touch()
            return 202, b"", extra
        if error_code(answer, post.rid) is not None:  # an initialize refused: no session
            sessions.close(session.id)
            return 200, answer, None
        return 200, answer, extra

    def delete(self, session_id: bytes | None) -> Answer | None:
        """``DELETE`` of a session open here: ended, as ``McpHttpApp.delete`` ends it."""
        app = self.app
        if session_id is None or not app.legacy:
            return None
        text = session_id.decode("latin-1")
        if app.sessions.get(text, None) is None:
            return None
        app.sessions.close(text)
        return 200, b"", None
