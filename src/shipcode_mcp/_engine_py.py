"""The pure-Python engine: the reference for the compiled one (``shipcode_mcp._engine_c``, built from
``pyx/_engine_c.pyx``), byte for byte.

An engine turns input bytes into output bytes: it frames lines, runs each through the line
rules (:mod:`shipcode_mcp.lines`) and keeps the answers until they are written.

- In process: ``feed(chunk)`` takes any chunking of the input and returns the answers
  completed by it; ``finish()`` ends the input (a last line without ``\\n`` is still a line).
  ``message(body)`` judges one whole message without framing; ``judge(parsed)`` one already parsed and
  told apart by :func:`~shipcode_mcp.lines.envelope` (the HTTP transport's bodies).
- Serving a sync app: ``serve(fd_in, fd_out)`` is the whole loop: big reads, one write per
  chunk read, so an answer is out before the engine blocks on input again.
- Serving with the concurrent scheduler: ``attach(fd_out)``, then ``take(chunk)`` /
  ``resume()`` (true when input must pause), ``end_input()``, ``emit(line)`` for answers
  and notifications that complete later, ``flush()`` and ``flush_soon()``.

While serving, an answer waits at most :data:`~shipcode_mcp.protocol.FLUSH_DELAY` for the
work of later lines in the same chunk: before a handler runs, older answers are written.
"""

from __future__ import annotations

import os
from time import monotonic

from .lines import LineRules, envelopes
from .protocol import (
    BLANK_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    FLUSH_DELAY,
    READ_SIZE,
    STOP_FLUSH_IDLE_MS,
    STOP_FLUSH_PIECE,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalogue import Catalogue
    from .lines import Envelope

IMPLEMENTATION = "pure"


def _wait(fd: int, event: int, timeout_ms: int | None = None) -> bool:
    """Wait until ``fd`` is ready for ``event`` (``select.POLLIN``/``POLLOUT``); False on timeout.

    Compiled twin: ``_wait`` in ``pyx/fdio.pxi``.
    """
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
    bytes once writable, so no write blocks. Errors (a closed output) are ignored. Compiled twin:
    ``Engine._flush_soon`` in ``pyx/_engine_c.pyx``.
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
    """Line processor over a :class:`~shipcode_mcp.catalogue.Catalogue`; the twin of the compiled
    ``shipcode_mcp._engine_c.Engine`` (``pyx/_engine_c.pyx``), whose methods have the same names."""

    implementation = IMPLEMENTATION
    #: What it can do beyond the line rules (the compiled engine says True): answer from the bytes
    #: (``fast``, ``http_modern``).
    fast_path = False

    def __init__(self, catalogue: Catalogue, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        if max_message_bytes < 1:
            raise ValueError("max_message_bytes must be at least 1")
        self._rules = LineRules(catalogue, max_message_bytes)
        self._line = self._rules.line
        self._answer = self._rules.answer
        self._max = max_message_bytes
        self._limit = self._rules.limit  # the longest line worth keeping (the line rules' size rule)
        self._partial = bytearray()  # start of a line whose \n has not arrived yet
        self._skipping = False  # inside an oversize line: discard up to its \n
        self._skipped_blank = True  # whether every byte discarded so far was blank
        self._out: list = self._rules.out  # complete answers not yet written (see _flush)
        self._stash: bytes | tuple = b""  # input left unread while paused
        self._fd = -1  # the output while serving
        catalogue.session.emit = self.emit

    @property
    def initialized(self) -> bool:
        """True once ``notifications/initialized`` has arrived."""
        return self._rules.initialized

    # -- framing -------------------------------------------------------------------------

    def refresh(self) -> None:
        """The catalogue changed: nothing to do, the line rules read its tables as they are."""

    def modern_only(self) -> None:
        """Judge every request by 2026-07-28's rules, whatever its ``_meta`` holds (a stateless HTTP endpoint)."""
        self._rules.all_modern = True

    def feed(self, data: bytes) -> bytes:
        """Take the next chunk of input; return the answers it completes."""
        self._take(data)
        return self._drain()

    def finish(self) -> bytes:
        """End of input: judge the unterminated last line, if any; return its answer."""
        self._finish()
        return self._drain()

    def message(self, data: bytes) -> bytes:
        """Judge one whole message without framing (an HTTP body: a newline is whitespace); its answers."""
        self._line(data)
        return self._drain()

    def judge(self, parsed: Envelope) -> bytes:
        """Judge one whole message already parsed and told apart (:func:`~shipcode_mcp.lines.envelope`: an
        HTTP body, parsed once); its answers."""
        self._rules.judge(parsed)
        return self._drain()

    def fast(self, data: bytes) -> None:
        """The compiled engine answers common messages at once here; this engine has no fast path, so
        every message is judged in full (:meth:`message`)."""
        return None

    def http_modern(self, data: bytes, version: bytes | None, method: bytes | None, name: bytes | None) -> None:
        """As :meth:`fast`, for a 2026-07-28 HTTP body and its headers: None, judged in full."""
        return None

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

    def _take(self, data: bytes) -> bool:
        """Frame ``data`` into lines and judge them; true when input paused (the rest stashed)."""
        if self._skipping or self._partial:
            end = data.find(b"\n")
            if end < 0:
                self._hold(data)
                return False
            if self._skipping:
                self._skip(data[:end])
                self._end_skip()
            else:
                self._partial += data[:end]
                line = bytes(self._partial)
                self._partial = bytearray()
                if self._line(line):
                    self._stash = data[end + 1 :]
                    return True
            data = data[end + 1 :]
        lines = data.split(b"\n")
        rest = lines.pop()  # after the last newline: the start of a line, or nothing
        return self._lines(iter(lines), rest)

    def _lines(self, remaining, rest: bytes) -> bool:
        # The line rules take the lines as they come (one call a line, LineRules.answer's).
        if envelopes(remaining, self._max, self._answer):
            self._stash = (remaining, rest)  # resumed where it stopped: nothing copied
            return True
        if rest:
            self._hold(rest)
        return False

    def _hold(self, data: bytes) -> None:
        """Keep the start of an unterminated line, or discard it once it is too long.

        What is held never exceeds the limit: an oversize line is discarded as it streams in.
        """
        if self._skipping:
            self._skip(data)
            return
        if len(self._partial) + len(data) > self._limit:
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
        self._rules.skipped(self._skipped_blank)

    # -- serving -----------------------------------------------------------------------

    def serve(self, fd_in: int, fd_out: int) -> None:
        """Answer ``fd_in`` on ``fd_out`` until EOF; answers due are written before returning.

        For apps whose handlers all answer at once (no deferred work). A closed output raises
        :class:`BrokenPipeError`; a :class:`~shipcode_mcp.protocol.ServerStop` from a signal
        handler stops the loop.
        """
        self.attach(fd_out)
        try:
            while True:
                data = read_some(fd_in)
                if not data:
                    self._finish()
                    self._flush(fd_out)
                    return
                self._rules.flush_deadline = monotonic() + FLUSH_DELAY
                self._take(data)
                self._flush(fd_out)
        except BaseException:
            self._flush_soon(fd_out)
            raise

    def attach(self, fd_out: int) -> None:
        """Serve on ``fd_out``: answers kept too long are written before the next handler runs."""
        self._fd = fd_out
        self._rules.before_handler = self._before_handler

    def take(self, data: bytes) -> bool:
        """Judge the lines of the next chunk; true when input must pause (see :meth:`resume`)."""
        self._rules.flush_deadline = monotonic() + FLUSH_DELAY
        return self._take(data)

    def resume(self) -> bool:
        """Judge the lines left when input paused; true when it must pause again."""
        stash = self._stash
        self._stash = b""
        self._rules.flush_deadline = monotonic() + FLUSH_DELAY
        if type(stash) is tuple:
            return self._lines(*stash)
        return self._take(stash)

    def end_input(self) -> None:
        """End of input: judge the unterminated last line, if any."""
        self._finish()

    def emit(self, data: bytes) -> None:
        """Queue whole lines (an answer or a notification completed outside the line order)."""
        self._out.append(data)

    def flush(self) -> None:
        """Write every queued line to the output (blocking while the reader is slow)."""
        self._flush(self._fd)

    def flush_soon(self) -> None:
        """On the way out: write what is queued while the reader takes it (see :func:`flush_on_stop`)."""
        self._flush_soon(self._fd)

    def _before_handler(self) -> None:
        """Answers waited FLUSH_DELAY and a handler is about to run: write them first."""
        self._flush(self._fd)
        self._rules.flush_deadline = monotonic() + FLUSH_DELAY

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
