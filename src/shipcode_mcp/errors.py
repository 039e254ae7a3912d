"""Exceptions an app raises or sees: ``ToolError``, ``ClientError`` (and ``RpcError``)."""

from __future__ import annotations

from .protocol import RpcError

__all__ = ["HANDLER_FAULTS", "ClientError", "RpcError", "ToolError"]


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


#: What a handler may raise and still get an answer (an ``isError`` result for a tool, -32603
#: for any other handler): a handler cannot stop the server.
HANDLER_FAULTS = (Exception, SystemExit)
