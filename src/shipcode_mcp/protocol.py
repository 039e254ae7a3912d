"""Wire constants of MCP over JSON-RPC 2.0 (every era), pre-encoded once.

Everything the engines write is assembled from these fragments plus the request id and a
result body, so constant bytes are never re-encoded per message.
"""

from __future__ import annotations

PROTOCOL_VERSION = "2025-06-18"
#: The stateless revision: no handshake, version and capabilities in every request's ``_meta``.
MODERN_VERSION = "2026-07-28"
#: Revisions with the ``initialize`` handshake, newest first.
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: Every revision shipcode-mcp implements, newest first.
ALL_VERSIONS = (MODERN_VERSION, *LEGACY_VERSIONS)
#: Methods that exist only in 2026-07-28: judged by its rules whatever their ``_meta`` holds.
MODERN_METHODS = frozenset({"server/discover", "subscriptions/listen"})
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
#: 2026-07-28: a request needs a client capability its ``_meta`` did not declare.
MISSING_CLIENT_CAPABILITY = -32021
#: 2026-07-28: the request's protocol version is not one the server speaks.
UNSUPPORTED_VERSION = -32022

#: Reserved ``_meta`` keys of 2026-07-28.
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"

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

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        #: The error's ``data`` member (None: none is written).
        self.data = data
        #: The bytes that follow the id in the answer: ``,"error":{...}}`` and the newline.
        self.tail = error_tail(code, message) if data is None else error_tail_with_data(code, message, data)


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


def error_tail_with_data(code: int, message: str, data: object) -> bytes:
    """Like :func:`error_tail`, with a ``data`` member (never cached: data varies)."""
    from .jsontext import dumps

    return b',"error":{"code":%d,"message":%s,"data":%s}}\n' % (code, dumps(message), dumps(data))


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
