"""The pure-Python engine: the reference for the compiled one, byte for byte.

An engine turns input bytes into output bytes. ``feed(chunk)`` takes any chunking of the
input and returns the answers completed by it; ``finish()`` ends the input (a last line
without ``\\n`` is still a line); ``serve(fd_in, fd_out)`` is the real loop: big reads, one
write per chunk read, so an answer is out before the engine blocks on input again.

Each line is judged in the order of the server contract (README, "Behaviour contract").
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from orjson import JSONDecodeError
from orjson import loads as _loads

from ._log import log, log_exception
from .jsontext import dumps, is_overflow_error, loads_overflowing
from .protocol import (
    BLANK_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    INITIALIZED_NOTIFICATION,
    INTERNAL_ERROR_TAIL,
    INVALID_PARAMS_TAIL,
    INVALID_REQUEST_NULL_LINE,
    INVALID_REQUEST_TAIL,
    METHOD_NOT_FOUND_TAIL,
    PARSE_ERROR_LINE,
    READ_SIZE,
    RESPONSE_HEAD,
    RESULT_MID,
    RESULT_TAIL,
    RpcError,
)

if TYPE_CHECKING:
    from .catalogue import Catalogue

IMPLEMENTATION = "pure"
_MISSING = object()


#: On the way out after a stop, give up on a reader that takes nothing for this long.
STOP_FLUSH_IDLE_MS = 1000
#: Bytes per write on the way out: at most PIPE_BUF, so a write to a pipe reported
#: writable cannot block.
STOP_FLUSH_PIECE = 4096


def _wait(fd: int, event: int, timeout_ms: int | None = None) -> bool:
    """Wait until ``fd`` is ready for ``event`` (``select.POLLIN``/``POLLOUT``); False on timeout."""
    import select

    poller = select.poll()
    poller.register(fd, event)
    return bool(poller.poll(timeout_ms))


def read_some(fd: int) -> bytes:
    """One read of up to READ_SIZE bytes, waiting while a non-blocking fd is empty."""
    while True:
        try:
            return os.read(fd, READ_SIZE)
        except BlockingIOError:
            _wait(fd, 1)  # POLLIN


def flush_on_stop(fd: int, data: bytes) -> None:
    """Best effort on the way out: write ``data`` while the reader takes it.

    Gives up once the output has stayed full for :data:`STOP_FLUSH_IDLE_MS`, so a reader
    that stopped reading cannot hold the server; writes at most :data:`STOP_FLUSH_PIECE`
    bytes once writable, so no write blocks. Errors (a closed output) are ignored.
    """
    view = memoryview(data)
    try:
        while view and _wait(fd, 4, STOP_FLUSH_IDLE_MS):  # POLLOUT
            try:
                view = view[os.write(fd, view[:STOP_FLUSH_PIECE]) :]
            except BlockingIOError:
                pass
    except OSError:
        pass


class Engine:
    """Line processor over a :class:`~shipcode_mcp.catalogue.Catalogue`."""

    implementation = IMPLEMENTATION

    def __init__(self, catalogue: Catalogue, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        if max_message_bytes < 1:
            raise ValueError("max_message_bytes must be at least 1")
        self._routes = catalogue.routes
        self._max = max_message_bytes
        self._partial = bytearray()  # start of a line whose \n has not arrived yet
        self._skipping = False  # inside an oversize line: discard up to its \n
        self._skipped_blank = True  # whether every byte discarded so far was blank
        self._out: list = []  # complete answers not yet written (see _flush)
        #: True once ``notifications/initialized`` has arrived.
        self.initialized = False

    # -- framing -------------------------------------------------------------------------

    def feed(self, data: bytes) -> bytes:
        """Take the next chunk of input; return the answers it completes."""
        self._take(data)
        return self._drain()

    def finish(self) -> bytes:
        """End of input: judge the unterminated last line, if any; return its answer."""
        self._finish()
        return self._drain()

    def _finish(self) -> None:
        if self._skipping:
            self._end_skip()
        elif self._partial:
            line = bytes(self._partial)
            self._partial = bytearray()
            self._line(line)

    def _drain(self) -> bytes:
        out = b"".join(self._out)
        self._out.clear()
        return out

    def _take(self, data: bytes) -> None:
        if self._skipping or self._partial:
            end = data.find(b"\n")
            if end < 0:
                self._hold(data)
                return
            if self._skipping:
                self._skip(data[:end])
                self._end_skip()
            else:
                self._partial += data[:end]
                line = bytes(self._partial)
                self._partial = bytearray()
                self._line(line)
            data = data[end + 1 :]
        lines = data.split(b"\n")
        rest = lines.pop()  # after the last newline: the start of a line, or nothing
        line_of = self._line
        for line in lines:
            line_of(line)
        if rest:
            self._hold(rest)

    def _hold(self, data: bytes) -> None:
        """Keep the start of an unterminated line, or discard it once it is too long.

        What is held never exceeds the limit: an oversize line is discarded as it streams in.
        """
        if self._skipping:
            self._skip(data)
            return
        # One byte of slack: a trailing \r does not count towards the limit.
        if len(self._partial) + len(data) > self._max + 1:
            self._skipping = True
            self._skipped_blank = True
            self._skip(self._partial)
            self._skip(data)
            self._partial = bytearray()
            return
        self._partial += data

    def _skip(self, data: bytes | bytearray) -> None:
        if self._skipped_blank and data.strip(BLANK_BYTES):
            self._skipped_blank = False

    def _end_skip(self) -> None:
        self._skipping = False
        if not self._skipped_blank:
            self._out.append(INVALID_REQUEST_NULL_LINE)

    # -- one line ------------------------------------------------------------------------

    def _line(self, line: bytes) -> None:
        out = self._out
        if len(line) > self._max and (len(line) > self._max + 1 or line[-1] != 13):
            if line.strip(BLANK_BYTES):
                out.append(INVALID_REQUEST_NULL_LINE)
            return
        try:
            message = _loads(line)
        except JSONDecodeError as error:
            if not line.strip(BLANK_BYTES):
                return
            if not is_overflow_error(error):
                out.append(PARSE_ERROR_LINE)
                return
            try:
                message = loads_overflowing(line)
            except ValueError:
                out.append(PARSE_ERROR_LINE)
                return
        if type(message) is not dict:
            out.append(INVALID_REQUEST_NULL_LINE)
            return
        get = message.get
        request_id = get("id", _MISSING)
        if type(request_id) is int:
            id_bytes = b"%d" % request_id
        elif type(request_id) is str:
            # A copy: orjson's own output object holds a 4 KiB buffer, and ids stay in the
            # output list until it is written.
            id_bytes = b"%b" % dumps(request_id)
        elif request_id is _MISSING:
            id_bytes = None
        else:
            out.append(INVALID_REQUEST_NULL_LINE)
            return
        method = get("method", _MISSING)
        if method is _MISSING and ("result" in message or "error" in message):
            return  # a response from the client
        params = get("params", _MISSING)
        if (
            type(method) is not str
            or get("jsonrpc") != "2.0"
            or (params is not _MISSING and type(params) is not dict and type(params) is not list)
        ):
            if id_bytes is None:
                out.append(INVALID_REQUEST_NULL_LINE)
            else:
                out += (RESPONSE_HEAD, id_bytes, INVALID_REQUEST_TAIL)
            return
        if id_bytes is None:
            if method == INITIALIZED_NOTIFICATION:
                self.initialized = True
            return  # notifications are never answered
        route = self._routes.get(method)
        if route is None:
            out += (RESPONSE_HEAD, id_bytes, METHOD_NOT_FOUND_TAIL)
        elif type(params) is list:
            out += (RESPONSE_HEAD, id_bytes, INVALID_PARAMS_TAIL)
        elif type(route) is bytes:
            out += (RESPONSE_HEAD, id_bytes, route)
        else:
            try:
                body = route(None if params is _MISSING else params)
            except RpcError as error:
                out += (RESPONSE_HEAD, id_bytes, error.tail)
                # A handler raising one shared instance again and again would extend its
                # traceback (keeping every frame alive) with each answer.
                error.__traceback__ = None
            except Exception:
                log_exception(f"internal error answering {method!r}")
                out += (RESPONSE_HEAD, id_bytes, INTERNAL_ERROR_TAIL)
            else:
                if type(body) is bytes:
                    out += (RESPONSE_HEAD, id_bytes, RESULT_MID, body, RESULT_TAIL)
                else:
                    log(
                        "error",
                        f"internal error answering {method!r}: the handler returned {type(body).__name__}, not bytes",
                    )
                    out += (RESPONSE_HEAD, id_bytes, INTERNAL_ERROR_TAIL)

    # -- the loop ------------------------------------------------------------------------

    def serve(self, fd_in: int, fd_out: int) -> None:
        """Answer ``fd_in`` on ``fd_out`` until EOF; answers due are written before returning.

        A closed output raises :class:`BrokenPipeError`; a
        :class:`~shipcode_mcp.protocol.ServerStop` from a signal handler stops the loop.
        """
        try:
            while True:
                data = read_some(fd_in)
                if not data:
                    self._finish()
                    self._flush(fd_out)
                    return
                self._take(data)
                self._flush(fd_out)
        except BaseException:
            self._flush_soon(fd_out)
            raise

    def _flush(self, fd: int) -> None:
        """Write every pending answer (blocking while the reader is slow), in one write.

        Exact under a stop signal, whose handler raises at any bytecode boundary: answers
        stay in ``_out`` until written. Once its write has begun, the head of ``_out`` is
        ``[chunk, written, written, ...]``, and the byte count of each write is appended by
        ``list.extend`` over ``map(os.write, ...)``: inside C code, before any handler can
        run. So what is left to write is always known (:meth:`_unsent`), and nothing is
        lost or written twice.
        """
        out = self._out
        while out:
            head = out[0]
            if type(head) is not list:
                head = [b"".join(out)]
                out[:] = (head,)  # one step: no answer is ever in two places
            chunk = head[0]
            done = sum(head[1:])
            while done < len(chunk):
                try:
                    head.extend(map(os.write, (fd,), (memoryview(chunk)[done:] if done else chunk,)))
                except BlockingIOError:
                    _wait(fd, 4)  # POLLOUT
                done = sum(head[1:])
            del out[0]

    def _unsent(self) -> bytes:
        """The answers computed but not yet written."""
        return b"".join(item[0][sum(item[1:]) :] if type(item) is list else item for item in self._out)

    def _flush_soon(self, fd: int) -> None:
        """On the way out: write what is left while the reader takes it (see :func:`flush_on_stop`)."""
        data = self._unsent()
        self._out.clear()
        flush_on_stop(fd, data)
