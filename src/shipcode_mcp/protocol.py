"""Wire constants of MCP 2025-06-18 over JSON-RPC 2.0, pre-encoded once.

Everything the engines write is assembled from these fragments plus the request id and a
result body, so constant bytes are never re-encoded per message.
"""

from __future__ import annotations

PROTOCOL_VERSION = "2025-06-18"
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

#: Start of every response, up to the id.
RESPONSE_HEAD = b'{"jsonrpc":"2.0","id":'
#: Between the id and a result body.
RESULT_MID = b',"result":'
#: After a result body.
RESULT_TAIL = b"}\n"


class RpcError(Exception):
    """A JSON-RPC error answer: raised by method handlers, written by the engines.

    Raise a new instance each time (they are cheap: the encoded tail is cached). Re-raising
    one shared instance would keep extending its traceback, and memory with it.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        #: The bytes that follow the id in the answer: ``,"error":{...}}`` and the newline.
        self.tail = error_tail(code, message)


_tails: dict[tuple[int, str], bytes] = {}
_MAX_CACHED_TAILS = 256  # handlers may build messages from data: the cache must stay small


def error_tail(code: int, message: str) -> bytes:
    """Encode `,"error":{"code":..,"message":..}}` and the newline for one error (cached)."""
    tail = _tails.get((code, message))
    if tail is None:
        from .jsontext import dumps

        tail = b',"error":{"code":%d,"message":%s}}\n' % (code, dumps(message))
        if len(_tails) < _MAX_CACHED_TAILS:
            _tails[(code, message)] = tail
    return tail


# Errors whose id is always null are written whole.
PARSE_ERROR_LINE = RESPONSE_HEAD + b"null" + error_tail(PARSE_ERROR, "Parse error")
INVALID_REQUEST_NULL_LINE = RESPONSE_HEAD + b"null" + error_tail(INVALID_REQUEST, "Invalid Request")

# Errors that carry the request id: the bytes after the id.
INVALID_REQUEST_TAIL = error_tail(INVALID_REQUEST, "Invalid Request")
METHOD_NOT_FOUND_TAIL = error_tail(METHOD_NOT_FOUND, "Method not found")
INVALID_PARAMS_TAIL = error_tail(INVALID_PARAMS, "Invalid params")
INTERNAL_ERROR_TAIL = error_tail(INTERNAL_ERROR, "Internal error")

#: The notification that completes the initialize handshake.
INITIALIZED_NOTIFICATION = "notifications/initialized"
#: Logging levels of ``notifications/message``, lowest first (RFC 5424 severities).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: Each level's rank in LOG_LEVELS.
LOG_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}
#: The notification that cancels a request in flight.
CANCELLED_NOTIFICATION = "notifications/cancelled"
#: Bytes a blank line may hold (JSON whitespace, without the newline that ends it).
BLANK_BYTES = b" \t\r"
#: Bytes asked of each read(2) on the input.
READ_SIZE = 256 * 1024
#: An answer waits at most this long (in seconds) for later lines' work before it is written.
FLUSH_DELAY = 0.001
#: On the way out after a stop, give up on a reader that takes nothing for this long (ms).
STOP_FLUSH_IDLE_MS = 1000
#: Bytes per write on the way out: at most PIPE_BUF, so a write to a pipe reported
#: writable cannot block.
STOP_FLUSH_PIECE = 4096


class ServerStop(BaseException):
    """Raised (from a signal handler) to stop serving: pending answers are flushed first."""
