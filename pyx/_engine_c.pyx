# cython: language_level=3
"""The compiled engine: the pure engine's twin, byte for byte, with a C fast path.

Framing (memchr over a reusable buffer), output (one growable C buffer, one write per
chunk read) and a fast path for the common request shapes run in C. The fast path
accepts only a strict subset of JSON for which it can prove its answer equals the pure
engine's: objects with the keys ``jsonrpc``/``id``/``method``/``params``, strings without
escapes or control characters (valid UTF-8, so their JSON text is exactly what orjson would
write), integers of at most 18 digits, finite numbers, ``true``/``false``/``null``, and one
level of nested ``arguments``. Any other line goes to the slow path: the line rules of
:mod:`shipcode_mcp.lines`, which the pure engine runs for every line, so the rules are
written once. The public methods are the pure engine's, :class:`shipcode_mcp._engine_py.Engine`
(see its docstring); each method here that has a twin there has its name.

One extension module in parts, as a table of contents (``docs/architecture.md`` says what each holds):
``python_api.pxd``, ``system.pxd``, ``scan.pxd`` (with ``scan.h``) and ``tables.pxd`` declare; the
``include`` lines below bring in the scanner, escaping, number text, fd I/O, the tables and the fast
path; ``Engine`` is here. HTTP headers are not the engine's: the transport reads them
(``shipcode_mcp.transports.http._headerscan``) and gives ``http_modern`` the values to compare.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_New, PyDict_SetItem
from cpython.exc cimport PyErr_CheckSignals, PyErr_SetFromErrno
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromLongLong
from cpython.mem cimport PyMem_Free
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.errno cimport EAGAIN, EINTR, errno
from libc.math cimport copysign, fabs, floor, frexp, isfinite, isinf, ldexp, llround, log10
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from posix.unistd cimport read, write

from python_api cimport (
    PY_VECTORCALL_ARGUMENTS_OFFSET,
    PyObject,
    PyObject_Vectorcall,
    PyOS_double_to_string,
    PyOS_string_to_double,
    PyUnicode_DATA,
    PyUnicode_New,
)
from scan cimport *
from system cimport EWOULDBLOCK, POLLIN, POLLOUT, poll, pollfd
from tables cimport *

from shipcode_mcp.asking.rounds import InputRequired
from shipcode_mcp.catalogue import RouteKind as CatalogueKind
from shipcode_mcp.errors import HANDLER_FAULTS, failure_tail
from shipcode_mcp.jsontext import dumps
from shipcode_mcp.lines import LineRules
from shipcode_mcp.methods import UNKNOWN_TOOL
from shipcode_mcp.protocol import (
    MODERN_VERSION,
    BLANK_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    FLUSH_DELAY,
    INVALID_PARAMS,
    METHOD_NOT_FOUND_TAIL,
    READ_SIZE,
    RESPONSE_HEAD,
    RESULT_MID,
    RESULT_TAIL,
    STOP_FLUSH_IDLE_MS,
    STOP_FLUSH_PIECE,
    error_tail,
)
from shipcode_mcp.results import TEXT_HEAD, TEXT_TAIL, tool_result
from shipcode_mcp.schema import FLAT_TYPE_ADMITS

IMPLEMENTATION = "compiled"

cdef bytes _HEAD = RESPONSE_HEAD
cdef bytes _RESULT_MID = RESULT_MID
cdef bytes _RESULT_TAIL = RESULT_TAIL
cdef bytes _METHOD_NOT_FOUND_TAIL = METHOD_NOT_FOUND_TAIL
cdef double _FLUSH_DELAY = FLUSH_DELAY
cdef int _STOP_FLUSH_IDLE_MS = STOP_FLUSH_IDLE_MS
cdef Py_ssize_t _STOP_FLUSH_PIECE = STOP_FLUSH_PIECE
cdef bytes _MODERN_VERSION = MODERN_VERSION.encode("ascii")
cdef bytes _UNKNOWN_TOOL_TAIL = error_tail(INVALID_PARAMS, UNKNOWN_TOOL)
# A tool result of one text block, around the JSON string's characters.
cdef bytes _TEXT_OPEN = RESULT_MID + TEXT_HEAD + b'"'
cdef bytes _TEXT_CLOSE = b'"' + TEXT_TAIL + RESULT_TAIL
# The bodies of the results that never vary, as the Python encoder writes them.
cdef bytes _TRUE_BODY = tool_result(True)
cdef bytes _FALSE_BODY = tool_result(False)
cdef bytes _NONE_BODY = tool_result(None)

include "scanner.pxi"
include "escape.pxi"
include "number_text.pxi"
include "fdio.pxi"
include "tables.pxi"
include "fastpath.pxi"


cdef class Engine:
    """Line processor over a :class:`~shipcode_mcp.catalogue.Catalogue` (compiled); the twin of
    :class:`shipcode_mcp._engine_py.Engine`."""

    # The catalogue, and the line rules: the slow path, written once for both engines.
    cdef object _catalogue
    cdef object _rules
    cdef object _rules_line
    cdef list _rules_out

    # The legacy era's routes (tables.pxi): _Route objects, the first MAX_ROUTES also as C arrays.
    cdef dict _routes
    cdef list _route_table
    cdef int _route_count
    cdef const char* _method_text[MAX_ROUTES]
    cdef Py_ssize_t _method_len[MAX_ROUTES]
    cdef int _route_kind[MAX_ROUTES]
    cdef const char* _answer_text[MAX_ROUTES]  # R_CONST: the bytes after the id
    cdef Py_ssize_t _answer_len[MAX_ROUTES]

    # 2026-07-28: the catalogue's side of it (or None), its routes as above, how a one-text result is
    # framed, and the last _meta object seen.
    cdef object _modern
    cdef list _modern_table
    cdef int _modern_count
    cdef const char* _modern_text[MAX_ROUTES]
    cdef Py_ssize_t _modern_len[MAX_ROUTES]
    cdef bytes _modern_text_open   # before and after the text
    cdef bytes _modern_text_close
    cdef MetaCache _meta_cache
    cdef bint _modern_only         # every request judged by 2026-07-28's rules (see modern_only())

    # Tools: the plain ones C calls itself (_FastTool objects), and every tool by name.
    cdef list _tools
    cdef object _tool_lookup
    cdef bint _unknown_tool_is_error  # the catalogue's: C may answer a call of an unknown tool itself

    # Resources and templates C reads itself (_Read objects); the first MAX_LISTED_READS uris also in C.
    cdef object _resources         # the catalogue's resources by uri
    cdef dict _direct_reads        # uri -> _Read
    cdef list _read_table          # the same _Read objects when they are few
    cdef int _read_count
    cdef const char* _read_uri[MAX_LISTED_READS]
    cdef Py_ssize_t _read_uri_len[MAX_LISTED_READS]
    cdef list _template_reads      # _Read per template, in order; None unless C reads them all

    # An HTTP body being judged, and the header values that must match it (see http_modern()).
    cdef bint _http
    cdef const char* _h_version
    cdef Py_ssize_t _h_version_len
    cdef const char* _h_method
    cdef Py_ssize_t _h_method_len
    cdef const char* _h_name       # NULL: no Mcp-Name header
    cdef Py_ssize_t _h_name_len

    # Framing: the longest line the fast path takes and the longest one worth keeping (the line rules'
    # size rule), the start of a line held across reads, an oversized line being skipped, and input
    # left unread while paused (this object from _stash_at on).
    cdef Py_ssize_t _max
    cdef Py_ssize_t _limit
    cdef unsigned char* _partial
    cdef Py_ssize_t _partial_len
    cdef Py_ssize_t _partial_cap
    cdef bint _skipping
    cdef bint _skipped_blank
    cdef object _stash
    cdef Py_ssize_t _stash_at

    # Output: one growable buffer, written to _fd while serving (else -1); _since is when the oldest
    # unwritten answer may have been computed.
    cdef char* _out
    cdef Py_ssize_t _out_len
    cdef Py_ssize_t _out_sent
    cdef Py_ssize_t _out_cap
    cdef int _fd
    cdef double _since

    implementation = IMPLEMENTATION
    #: What it can do beyond the line rules (the pure engine says False): answer from the bytes
    #: (``fast``, ``http_modern``).
    fast_path = True

    def __cinit__(self):
        self._partial = NULL
        self._out = NULL
        self._meta_cache.len = 0

    def __init__(self, catalogue, Py_ssize_t max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES):
        if max_message_bytes < 1:
            raise ValueError("max_message_bytes must be at least 1")
        self._max = max_message_bytes
        self._skipping = False
        self._skipped_blank = True
        self._partial_len = 0
        self._out_len = 0
        self._out_sent = 0
        self._stash = None
        self._fd = -1
        self._since = 0
        self._rules = LineRules(catalogue, max_message_bytes)
        self._limit = self._rules.limit
        self._rules_line = self._rules.line
        self._rules_out = self._rules.out
        catalogue.session.emit = self.emit
        self._catalogue = catalogue
        self.refresh()
        catalogue.on_refresh.append(self.refresh)

    def refresh(self):
        """Read the catalogue's routes, plain tools, resources and templates again (after the app changed them)."""
        catalogue = self._catalogue
        cdef _Route route
        cdef int i
        self._modern_only = self._rules.all_modern
        self._routes = catalogue.routes
        self._route_table = _routes_of(catalogue.routes, catalogue.route_kinds, _LEGACY_KINDS)
        self._route_count = min(len(self._route_table), MAX_ROUTES)
        for i in range(self._route_count):  # more routes than that: the slow path serves the rest
            route = self._route_table[i]
            self._method_text[i] = PyBytes_AS_STRING(route.method)
            self._method_len[i] = PyBytes_GET_SIZE(route.method)
            self._route_kind[i] = route.kind
            if route.kind == R_CONST:
                self._answer_text[i] = PyBytes_AS_STRING(route.answer)
                self._answer_len[i] = PyBytes_GET_SIZE(route.answer)
        self._tool_lookup = catalogue.tools
        self._unknown_tool_is_error = catalogue.unknown_tool_is_error
        self._modern = catalogue.modern
        self._modern_table = []
        self._modern_count = 0
        if self._modern is not None:
            self._modern_table = _routes_of(self._modern.routes, self._modern.route_kinds, _MODERN_KINDS)
            self._modern_count = min(len(self._modern_table), MAX_ROUTES)
            for i in range(self._modern_count):
                route = self._modern_table[i]
                self._modern_text[i] = PyBytes_AS_STRING(route.method)
                self._modern_len[i] = PyBytes_GET_SIZE(route.method)
            # The text between the two marks is where a result's text goes: framed as the line rules frame it.
            framed = self._modern.finish(TEXT_HEAD + b'"\x00"' + TEXT_TAIL, False)
            opening, closing = framed.split(b"\x00")
            self._modern_text_open = _RESULT_MID + opening
            self._modern_text_close = closing + _RESULT_TAIL
        tools = [_fast_tool_of(spec) for spec in catalogue.fast_tools]
        self._tools = [tool for tool in tools if tool is not None]
        self._resources = catalogue.resources
        direct_reads = {uri: _read_of(resource, False) for uri, resource in catalogue.resources.items()
                        if resource.direct}
        self._direct_reads = {uri: read for uri, read in direct_reads.items() if read is not None}
        self._read_table = list(self._direct_reads.values()) if len(self._direct_reads) <= MAX_LISTED_READS else []
        self._read_count = len(self._read_table)
        cdef _Read read
        for i in range(self._read_count):
            read = self._read_table[i]
            self._read_uri[i] = PyBytes_AS_STRING(read.uri)
            self._read_uri_len[i] = PyBytes_GET_SIZE(read.uri)
        templates = list(catalogue.templates.values())
        template_reads = [_read_of(template, True) if template.direct else None for template in templates]
        self._template_reads = None if None in template_reads else template_reads

    def fast(self, data):
        """The answer to one whole message when the fast path gives one (an HTTP body in a session); else
        None, and nothing was judged."""
        cdef const unsigned char* p
        cdef Py_ssize_t n
        if not _bytes_of(data, &p, &n) or n == 0 or not _fast(self, p, n):
            return None
        return self._drain()

    def http_modern(self, data, version, method, name):
        """The answer to the body of a 2026-07-28 HTTP request, when the fast path gives one with HTTP
        status 200 and the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` header values equal
        the body's (bytes as the transport compares them, name None when absent:
        ``shipcode_mcp.transports.http._headerscan.fast_fields``); else None, and nothing was judged.
        The engine's one HTTP entry point."""
        cdef const unsigned char* p
        cdef Py_ssize_t n
        cdef int fast
        if not _bytes_of(data, &p, &n) or n == 0 \
                or not _bytes_of(version, <const unsigned char**>&self._h_version, &self._h_version_len) \
                or not _bytes_of(method, <const unsigned char**>&self._h_method, &self._h_method_len):
            return None
        if name is None:
            self._h_name = NULL
        elif not _bytes_of(name, <const unsigned char**>&self._h_name, &self._h_name_len):
            return None
        self._http = True
        try:
            fast = _fast(self, p, n)
        finally:
            self._http = False
        return self._drain() if fast else None

    def modern_only(self):
        """Judge every request by 2026-07-28's rules, whatever its ``_meta`` holds (a stateless HTTP endpoint)."""
        self._rules.all_modern = True
        self._modern_only = True

    @property
    def initialized(self):
        """True once ``notifications/initialized`` has arrived."""
        return self._rules.initialized

    def __dealloc__(self):
        free(self._partial)
        free(self._out)

    # -- output buffer -------------------------------------------------------------------

    cdef inline char* _room(self, Py_ssize_t n) except NULL:
        """Where the next n bytes of output go (the caller then adds what it wrote to _out_len)."""
        cdef Py_ssize_t need = self._out_len + n
        cdef Py_ssize_t cap
        cdef char* grown
        if need > self._out_cap:
            cap = self._out_cap * 2 if self._out_cap else 65536
            while cap < need:
                cap *= 2
            grown = <char*>realloc(self._out, cap)
            if grown == NULL:
                raise MemoryError()
            self._out = grown
            self._out_cap = cap
        return self._out + self._out_len

    cdef int _emit(self, const char* p, Py_ssize_t n) except -1:
        memcpy(self._room(n), p, n)
        self._out_len += n
        return 0

    cdef inline int _emit_bytes(self, bytes data) except -1:
        return self._emit(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))

    cdef inline int _emit_answer(self, const char* rid, Py_ssize_t rid_len, bytes tail) except -1:
        return self._emit_answer_text(rid, rid_len, PyBytes_AS_STRING(tail), PyBytes_GET_SIZE(tail))

    cdef int _emit_answer_text(self, const char* rid, Py_ssize_t rid_len, const char* tail, Py_ssize_t rest) except -1:
        cdef Py_ssize_t head = PyBytes_GET_SIZE(_HEAD)
        cdef char* out = self._room(head + rid_len + rest)
        memcpy(out, PyBytes_AS_STRING(_HEAD), head)
        memcpy(out + head, rid, rid_len)
        memcpy(out + head + rid_len, tail, rest)
        self._out_len += head + rid_len + rest
        return 0

    cdef int _emit_result(self, const char* rid, Py_ssize_t rid_len, bytes body) except -1:
        self._emit_answer(rid, rid_len, _RESULT_MID)
        self._emit_bytes(body)
        self._emit(PyBytes_AS_STRING(_RESULT_TAIL), PyBytes_GET_SIZE(_RESULT_TAIL))
        return 0

    cdef int _emit_text(self, const char* rid, Py_ssize_t rid_len, const char* text, Py_ssize_t n,
                        bint modern) except -1:
        """The answer of a tool call whose result is one text block; text needs no escape."""
        cdef bytes text_open = self._modern_text_open if modern else _TEXT_OPEN
        cdef bytes text_close = self._modern_text_close if modern else _TEXT_CLOSE
        cdef Py_ssize_t head = PyBytes_GET_SIZE(_HEAD)
        cdef Py_ssize_t opening = PyBytes_GET_SIZE(text_open)
        cdef Py_ssize_t closing = PyBytes_GET_SIZE(text_close)
        cdef char* out = self._room(head + rid_len + opening + n + closing)
        memcpy(out, PyBytes_AS_STRING(_HEAD), head)
        out += head
        memcpy(out, rid, rid_len)
        out += rid_len
        memcpy(out, PyBytes_AS_STRING(text_open), opening)
        out += opening
        memcpy(out, text, n)
        out += n
        memcpy(out, PyBytes_AS_STRING(text_close), closing)
        self._out_len += head + rid_len + opening + n + closing
        return 0

    cdef int _emit_body(self, const char* rid, Py_ssize_t rid_len, bytes body, bint modern) except -1:
        """The answer of a tool call with this result body (framed for 2026-07-28 when ``modern``)."""
        if modern:
            body = self._modern.finish(body, False)
        return self._emit_result(rid, rid_len, body)

    cdef int _emit_value(self, const char* rid, Py_ssize_t rid_len, object value, bint modern) except -1:
        """The answer of a plain tool's return value, when it is one that C writes: 1 if written.

        The same bytes as :func:`~shipcode_mcp.results.tool_result`: a ``str`` without escapes, an
        ``int`` of 64 bits, a ``float``, a ``bool`` or ``None``; 0 for anything else.
        """
        cdef char number[32]
        cdef const char* text
        cdef Py_ssize_t n = 0
        cdef int overflow = 0
        cdef long long integer
        kind = type(value)
        if kind is str:
            text = _utf8(value, &n)
            if text == NULL or not _escape_free(<const unsigned char*>text, n):
                return 0
            self._emit_text(rid, rid_len, text, n, modern)
            return 1
        if kind is int:
            integer = PyLong_AsLongLongAndOverflow(value, &overflow)
            if overflow:
                return 0
            if integer < 0:
                number[0] = 45
                n = 1 + _decimal(-<unsigned long long>integer, number + 1)
            else:
                n = _decimal(integer, number)
            self._emit_text(rid, rid_len, number, n, modern)
            return 1
        if kind is float:
            n = _number_text(value, number)
            self._emit_text(rid, rid_len, number, n, modern)
            return 1
        if value is True:
            self._emit_body(rid, rid_len, _TRUE_BODY, modern)
        elif value is False:
            self._emit_body(rid, rid_len, _FALSE_BODY, modern)
        elif value is None:
            self._emit_body(rid, rid_len, _NONE_BODY, modern)
        else:
            return 0
        return 1

    cdef bytes _drain(self):
        cdef bytes out = PyBytes_FromStringAndSize(self._out, self._out_len)
        self._release_out()
        return out

    cdef void _release_out(self) noexcept:
        self._out_len = 0
        if self._out_cap > 4 * 1024 * 1024:  # do not keep a huge buffer after a huge answer
            free(self._out)
            self._out = NULL
            self._out_cap = 0

    cdef int _flush(self, int fd) except -1:
        """Write every pending answer (blocking while the reader is slow)."""
        cdef Py_ssize_t done = 0
        while self._out_sent < self._out_len:
            # A signal that arrives during a partial write does not make write(2) fail: look.
            PyErr_CheckSignals()
            _write_some(fd, self._out + self._out_sent, self._out_len - self._out_sent, &done)
            self._out_sent += done
        self._out_sent = 0
        self._release_out()
        return 0

    cdef int _flush_soon(self, int fd) except -1:
        """Best effort on the way out: write pending answers while the reader takes them.

        Twin: ``shipcode_mcp._engine_py.flush_on_stop``.
        """
        cdef Py_ssize_t done = 0
        cdef Py_ssize_t n
        try:
            while self._out_sent < self._out_len and _wait(fd, POLLOUT, _STOP_FLUSH_IDLE_MS):
                # At most PIPE_BUF bytes once writable: the write cannot block.
                n = min(self._out_len - self._out_sent, _STOP_FLUSH_PIECE)
                _write_some(fd, self._out + self._out_sent, n, &done)
                self._out_sent += done
        except OSError:
            pass
        self._out_sent = 0
        self._release_out()
        return 0

    # -- framing -------------------------------------------------------------------------

    def feed(self, data):
        """Take the next chunk of input; return the answers it completes."""
        cdef const unsigned char[:] view = data
        if view.shape[0]:
            self._take(&view[0], view.shape[0])
        return self._drain()

    def finish(self):
        """End of input: judge the unterminated last line, if any; return its answer."""
        self._finish()
        return self._drain()

    def message(self, data):
        """Judge one whole message without framing (a newline is whitespace); its answers."""
        cdef const unsigned char[:] view = data
        if view.shape[0]:
            self._line(&view[0], view.shape[0])
        return self._drain()

    def judge(self, parsed):
        """Judge one whole message already parsed and told apart (``shipcode_mcp.lines.envelope``: an
        HTTP body, parsed once); its answers."""
        self._rules.judge(parsed)
        self._take_rules_out()
        return self._drain()

    cdef int _finish(self) except -1:
        cdef Py_ssize_t n
        if self._skipping:
            self._end_skip()
        elif self._partial_len:
            n = self._partial_len
            self._partial_len = 0
            self._line(self._partial, n)
            self._release_partial()
        return 0

    cdef void _release_partial(self) noexcept:
        if self._partial_cap > 1024 * 1024:
            free(self._partial)
            self._partial = NULL
            self._partial_cap = 0

    cdef int _hold(self, const unsigned char* p, Py_ssize_t n) except -1:
        """Keep the start of an unterminated line, or discard it once it is too long."""
        cdef Py_ssize_t need
        cdef Py_ssize_t cap
        cdef unsigned char* grown
        if self._skipping:
            self._skip(p, n)
            return 0
        need = self._partial_len + n
        if need > self._limit:
            self._skipping = True
            self._skipped_blank = True
            self._skip(self._partial, self._partial_len)
            self._skip(p, n)
            self._partial_len = 0
            self._release_partial()
            return 0
        if need > self._partial_cap:
            cap = self._partial_cap * 2 if self._partial_cap else 65536
            while cap < need:
                cap *= 2
            grown = <unsigned char*>realloc(self._partial, cap)
            if grown == NULL:
                raise MemoryError()
            self._partial = grown
            self._partial_cap = cap
        memcpy(self._partial + self._partial_len, p, n)
        self._partial_len = need
        return 0

    cdef inline void _skip(self, const unsigned char* p, Py_ssize_t n) noexcept:
        if self._skipped_blank and not _blank(p, n):
            self._skipped_blank = False

    cdef int _end_skip(self) except -1:
        self._skipping = False
        self._rules.skipped(self._skipped_blank)
        return self._take_rules_out()

    cdef Py_ssize_t _take(self, const unsigned char* data, Py_ssize_t n) except -2:
        """Frame lines and judge them; -1 when all were taken, else the offset where input
        paused (the caller keeps the rest)."""
        cdef const unsigned char* p = data
        cdef const unsigned char* end = data + n
        cdef const unsigned char* nl
        cdef Py_ssize_t held
        cdef int paused
        if self._skipping or self._partial_len:
            nl = <const unsigned char*>memchr(p, 10, end - p)
            if nl == NULL:
                self._hold(p, end - p)
                return -1
            if self._skipping:
                self._skip(p, nl - p)
                self._end_skip()
            else:
                self._hold(p, nl - p)
                if self._skipping:  # the line just went over the limit
                    self._end_skip()
                else:
                    held = self._partial_len
                    self._partial_len = 0
                    paused = self._line(self._partial, held)
                    self._release_partial()
                    if paused:
                        return nl + 1 - data
            p = nl + 1
        while p < end:
            nl = <const unsigned char*>memchr(p, 10, end - p)
            if nl == NULL:
                self._hold(p, end - p)
                return -1
            if self._line(p, nl - p):
                return nl + 1 - data
            p = nl + 1
        return -1

    # -- one line ------------------------------------------------------------------------

    cdef int _line(self, const unsigned char* p, Py_ssize_t n) except -1:
        """Judge one line; 1 when input must pause."""
        cdef int fast
        if n == 0:
            return 0
        fast = _fast(self, p, n)
        if fast:
            return fast - 1
        # The slow path: the line rules, written once for both engines.
        pause = self._rules_line(PyBytes_FromStringAndSize(<const char*>p, n))
        self._take_rules_out()
        return 1 if pause else 0

    cdef int _take_rules_out(self) except -1:
        for answer in self._rules_out:
            self._emit_bytes(<bytes>answer)
        self._rules_out.clear()
        return 0

    cdef inline int _due(self) except -1:
        """While serving: write answers that waited FLUSH_DELAY, before a handler runs."""
        cdef double now
        if self._fd >= 0 and self._out_len > self._out_sent:
            now = _now()
            if now - self._since >= _FLUSH_DELAY:
                self._flush(self._fd)
                self._since = _now()
        return 0

    def _before_handler(self):
        """A slow-path handler is about to run: write answers that waited FLUSH_DELAY."""
        if self._out_len > self._out_sent:
            self._due()
        else:
            self._since = _now()  # nothing waits: the clock starts with the next answer
        self._rules.flush_deadline = self._since + _FLUSH_DELAY

    # -- serving -----------------------------------------------------------------------

    def serve(self, int fd_in, int fd_out):
        """Answer ``fd_in`` on ``fd_out`` until EOF; answers due are written before returning.

        For apps whose handlers all answer at once (no deferred work). A closed output raises
        :class:`BrokenPipeError`; a :class:`~shipcode_mcp.protocol.ServerStop` from a signal
        handler stops the loop.
        """
        cdef Py_ssize_t size = READ_SIZE
        cdef unsigned char* buffer = <unsigned char*>malloc(size)
        cdef Py_ssize_t got
        if buffer == NULL:
            raise MemoryError()
        self.attach(fd_out)
        try:
            while True:
                PyErr_CheckSignals()
                with nogil:
                    got = read(fd_in, buffer, size)
                if got < 0:
                    if errno == EINTR:
                        continue
                    if errno == EAGAIN or errno == EWOULDBLOCK:
                        _wait(fd_in, POLLIN, -1)
                        continue
                    PyErr_SetFromErrno(OSError)
                if got == 0:
                    self._finish()
                    self._flush(fd_out)
                    return
                self._since = _now()
                self._rules.flush_deadline = self._since + _FLUSH_DELAY
                self._take(buffer, got)
                self._flush(fd_out)
        except BaseException:
            self._flush_soon(fd_out)
            raise
        finally:
            free(buffer)

    def attach(self, int fd_out):
        """Serve on ``fd_out``: answers kept too long are written before the next handler runs."""
        self._fd = fd_out
        self._rules.before_handler = self._before_handler

    def take(self, data):
        """Judge the lines of the next chunk; true when input must pause (see :meth:`resume`)."""
        self._since = _now()
        self._rules.flush_deadline = self._since + _FLUSH_DELAY
        return self._take_from(data, 0)

    def resume(self):
        """Judge the lines left when input paused; true when it must pause again."""
        data = self._stash
        self._stash = None
        self._since = _now()
        self._rules.flush_deadline = self._since + _FLUSH_DELAY
        return self._take_from(data, self._stash_at) if data is not None else False

    cdef bint _take_from(self, data, Py_ssize_t start) except -1:
        cdef const unsigned char[:] view = data
        cdef Py_ssize_t at
        if view.shape[0] <= start:
            return False
        at = self._take(&view[start], view.shape[0] - start)
        if at < 0:
            return False
        self._stash = data  # resumed where it stopped: nothing copied
        self._stash_at = start + at
        return True

    def end_input(self):
        """End of input: judge the unterminated last line, if any."""
        self._finish()

    def emit(self, bytes data):
        """Queue whole lines (an answer or a notification completed outside the line order)."""
        self._emit_bytes(data)

    def flush(self):
        """Write every queued line to the output (blocking while the reader is slow)."""
        self._flush(self._fd)

    def flush_soon(self):
        """On the way out: write what is queued while the reader takes it."""
        self._flush_soon(self._fd)
