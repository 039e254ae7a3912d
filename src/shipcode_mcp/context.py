"""``Context``: what a handler can do beyond returning its result.

A handler parameter annotated ``Context`` (any name) receives one; it never appears in the
input schema. ``log``/``report_progress`` and the level shortcuts take effect when called
and may be awaited (so they work in sync handlers too); ``sample``, ``elicit`` and
``list_roots`` ask the client and must be awaited, in async handlers.
"""

from __future__ import annotations

from orjson import loads

from .errors import ClientError
from .protocol import LOG_LEVELS, LOG_RANK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .session import Session


class _Done:
    """An awaitable that is already complete: ``await`` returns None at once."""

    __slots__ = ()

    def __await__(self):
        return iter(())


_DONE = _Done()


class Context:
    """One request's way back to the client."""

    __slots__ = ("_session", "_id_bytes", "_progress_token")

    def __init__(self, session: Session, id_bytes: bytes, progress_token: object = None) -> None:
        self._session = session
        self._id_bytes = id_bytes
        self._progress_token = progress_token

    @property
    def request_id(self) -> int | str:
        """The request's id, as the client sent it."""
        return loads(self._id_bytes)

    # -- notifications ---------------------------------------------------------------------

    def log(self, level: str, data: Any, logger: str | None = None) -> _Done:
        """Send ``notifications/message`` when ``level`` is at or above the client's chosen level.

        ``level`` is one of debug, info, notice, warning, error, critical, alert, emergency
        (ValueError otherwise); ``data`` is any JSON value. Until the client sends
        ``logging/setLevel``, every level is sent.
        """
        rank = LOG_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
        session = self._session
        if rank >= session.log_threshold:
            params: dict[str, Any] = {"level": level}
            if logger is not None:
                params["logger"] = logger
            params["data"] = data
            session.notify("notifications/message", params)
        return _DONE

    def debug(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("info", data, logger)

    def notice(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("notice", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("error", data, logger)

    def critical(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("critical", data, logger)

    def alert(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("alert", data, logger)

    def emergency(self, data: Any, logger: str | None = None) -> _Done:
        return self.log("emergency", data, logger)

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
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        include_context: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage``); returns the client's result dict.

        A ``str`` is sent as one user text message.
        """
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
        return await self._session.request("sampling/createMessage", params, "sampling")

    async def elicit(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        """Ask the client's user (``elicitation/create``); returns the client's result dict."""
        params = {"message": message, "requestedSchema": schema}
        return await self._session.request("elicitation/create", params, "elicitation")

    async def list_roots(self) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``)."""
        result = await self._session.request("roots/list", None, "roots")
        roots = result.get("roots")
        if type(roots) is not list:
            raise ClientError("roots/list: the client answered with an invalid result")
        return roots
