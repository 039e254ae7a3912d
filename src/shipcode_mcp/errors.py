"""Exceptions an app raises or sees: ``ToolError``, ``ClientError`` (and ``RpcError``)."""

from __future__ import annotations

from ._log import log_exception
from .protocol import INTERNAL_ERROR_TAIL, RpcError

__all__ = ["HANDLER_FAULTS", "ClientError", "ResourceError", "RpcError", "ToolError"]


class ToolError(Exception):
    """Raise inside a tool to answer ``{"content":[{"type":"text","text":msg}],"isError":true}``."""


class ClientError(ToolError):
    """A request to the client failed: it answered with an error, did not declare the
    capability the request needs, or its input ended before it answered.

    A subclass of :class:`ToolError`: uncaught in a tool, it becomes the tool's ``isError``
    result with this message. ``error`` holds the client's JSON-RPC error object, if any.
    """

    def __init__(self, message: str, error: dict | None = None) -> None:
        super().__init__(message)
        self.error = error


class ResourceError(ToolError):
    """``ctx.read_resource`` of a uri no resource or template serves. A subclass of :class:`ToolError`:
    uncaught in a tool, it becomes the tool's ``isError`` result with this message."""


#: What a handler may raise and still get an answer (an ``isError`` result for a tool, -32603
#: for any other handler): a handler cannot stop the server.
HANDLER_FAULTS = (Exception, SystemExit)


def failure_tail(method: str, error: BaseException) -> bytes:
    """The bytes after the id in the answer to a request whose handler raised ``error`` (call it
    inside the ``except`` block): an :class:`RpcError` as it says, anything else -32603
    ``Internal error``, logged with its traceback."""
    if isinstance(error, RpcError):
        # A handler raising one shared instance again and again would extend its traceback
        # (keeping every frame alive) with each answer.
        error.__traceback__ = None
        return error.tail
    log_exception(f"internal error answering {method!r}")
    return INTERNAL_ERROR_TAIL
