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
written once. The public methods are the pure engine's (see its docstring).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_New, PyDict_SetItem
from cpython.exc cimport PyErr_CheckSignals, PyErr_SetFromErrno
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromLongLong
from cpython.mem cimport PyMem_Free
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.errno cimport EAGAIN, EINTR, errno
from libc.math cimport fabs, floor, frexp, isfinite, isinf, ldexp, llround, log10
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from posix.unistd cimport read, write

from shipcode_mcp.catalogue import UNKNOWN_TOOL
from shipcode_mcp.errors import HANDLER_FAULTS, failure_tail
from shipcode_mcp.jsontext import dumps
from shipcode_mcp.lines import LineRules
from shipcode_mcp.mrtr import InputRequired
from shipcode_mcp.protocol import (
    HTTP_HEADERS_READ,
    MODERN_VERSION,
    BLANK_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    FLUSH_DELAY,
    INVALID_PARAMS,
    INVALID_REQUEST_NULL_LINE,
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

cdef extern from "Python.h":
    ctypedef struct PyObject
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception) except? -1.0
    char* PyOS_double_to_string(double value, char format_code, int precision, int flags, int* kind) except NULL
    object PyObject_Vectorcall(object callable, PyObject** args, size_t nargsf, PyObject* kwnames)
    size_t PY_VECTORCALL_ARGUMENTS_OFFSET
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object text)

cdef extern from "errno.h":
    int EWOULDBLOCK

cdef extern from "poll.h" nogil:
    struct pollfd:
        int fd
        short events
        short revents
    int poll(pollfd* fds, unsigned long nfds, int timeout)
    enum:
        POLLIN
        POLLOUT

IMPLEMENTATION = "compiled"

cdef bytes _HEAD = RESPONSE_HEAD
cdef bytes _RESULT_MID = RESULT_MID
cdef bytes _RESULT_TAIL = RESULT_TAIL
cdef bytes _INVALID_NULL_LINE = INVALID_REQUEST_NULL_LINE
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
DEF MAX_LISTED_READS = 32  # with more resources read in C, they are looked up by a dict

# Route kinds.
DEF R_CONST = 1
DEF R_TOOLS_CALL = 2
DEF R_READ = 3
DEF R_OTHER = 4

# Value kinds seen by the fast scanner.
DEF V_STR = 1
DEF V_INT = 2
DEF V_TRUE = 3
DEF V_FALSE = 4
DEF V_NULL = 5
DEF V_OBJ = 6
DEF V_FLOAT = 7
DEF V_META = 8    # params._meta, scanned into a Meta

DEF MAX_DEPTH = 8  # nesting skipped inside _meta before the slow path decides

DEF MAX_MEMBERS = 16
DEF MAX_ROUTES = 32
DEF MAX_INT_DIGITS = 18

cdef struct Member:
    const unsigned char* key
    Py_ssize_t key_len
    int kind
    const unsigned char* val     # for V_STR: the text between the quotes; V_INT: the literal
    Py_ssize_t val_len
    bint ascii                   # V_STR holds only ASCII
    long long ival
    double fval

cdef struct Scan:
    const unsigned char* p
    const unsigned char* end

DEF MAX_META_CACHE = 1024

cdef struct MetaCache:
    # The last _meta object accepted, byte for byte: clients send the same one on every request,
    # and a line that starts the value with these bytes has this very object there.
    unsigned char text[MAX_META_CACHE]
    Py_ssize_t len                 # 0: empty
    Py_ssize_t version_at          # where the version's text starts in it (-1: no version)
    Py_ssize_t version_len
    bint capabilities

cdef struct Meta:
    MetaCache* cache
    bint present                   # params has a _meta object
    const unsigned char* version   # io.modelcontextprotocol/protocolVersion, between its quotes (NULL: absent)
    Py_ssize_t version_len
    bint capabilities              # io.modelcontextprotocol/clientCapabilities is an object


cdef inline bint _is_ws(unsigned char c) noexcept nogil:
    return c == 32 or c == 9 or c == 13 or c == 10


cdef inline void _skip_ws(Scan* s) noexcept nogil:
    while s.p < s.end and _is_ws(s.p[0]):
        s.p += 1


# The bytes a blank line may hold (protocol.BLANK_BYTES), as a lookup table.
cdef bint _BLANK_BYTE[256]
for _byte in range(256):
    _BLANK_BYTE[_byte] = _byte in BLANK_BYTES


cdef inline bint _blank(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if not _BLANK_BYTE[p[i]]:
            return False
    return True


cdef extern from *:
    """
    #include <string.h>
    #ifdef __SSE2__
    #include <emmintrin.h>
    #endif
    #define BYTE_ONES 0x0101010101010101ULL
    #define BYTE_HIGHS 0x8080808080808080ULL
    #define TRAILING_ZERO_BITS(value) __builtin_ctzll(value)
    /* The powers of ten a double holds exactly. */
    static const double EXACT_POWERS_OF_TEN[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

    /* 8 bytes as a word whose least significant byte is the first one. */
    static inline unsigned long long load_word(const unsigned char* p) {
        unsigned long long w;
        memcpy(&w, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
    #endif
        return w;
    }

    /* Masks with the high bit of each flagged byte set. The first flagged byte is always a true
       one (a borrow only ever spreads a false flag towards later bytes). */
    static inline unsigned long long zero_bytes(unsigned long long w) {
        return (w - BYTE_ONES) & ~w & BYTE_HIGHS;
    }
    static inline unsigned long long escaped_bytes(unsigned long long w) {
        unsigned long long control = (w - 0x20 * BYTE_ONES) & ~w & BYTE_HIGHS;  /* below 0x20 */
        return control | zero_bytes(w ^ (0x22 * BYTE_ONES)) | zero_bytes(w ^ (0x5C * BYTE_ONES));
    }

    /* How many bytes from p need no escape in a JSON string (no control character, quote or
       backslash) and, when ascii is set, are ASCII: up to the first one that does not, or up to
       the last 7 bytes (left to the caller). 16 bytes at a time with SSE2, then 8 at a time. */
    static inline unsigned long long flagged_bytes(unsigned long long w, int ascii) {
        return escaped_bytes(w) | (ascii ? (w & BYTE_HIGHS) : 0);
    }
    static inline Py_ssize_t plain_run(const unsigned char* p, const unsigned char* end, int ascii) {
        const unsigned char* start = p;
        unsigned long long flagged;
        if (end - p >= 8) {  /* most keys and short values end in their first word */
            flagged = flagged_bytes(load_word(p), ascii);
            if (flagged)
                return __builtin_ctzll(flagged) >> 3;
            p += 8;
        }
    #ifdef __SSE2__
        const __m128i quote = _mm_set1_epi8(0x22), backslash = _mm_set1_epi8(0x5C), control = _mm_set1_epi8(0x1F);
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i*)p);
            __m128i escaped = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                           _mm_cmpeq_epi8(_mm_min_epu8(v, control), v));
            int mask = _mm_movemask_epi8(escaped) | (ascii ? _mm_movemask_epi8(v) : 0);
            if (mask)
                return (p - start) + __builtin_ctz(mask);
            p += 16;
        }
    #endif
        while (end - p >= 8) {
            flagged = flagged_bytes(load_word(p), ascii);
            if (flagged)
                return (p - start) + (__builtin_ctzll(flagged) >> 3);
            p += 8;
        }
        return p - start;
    }
    """
    int TRAILING_ZERO_BITS(unsigned long long value) noexcept nogil  # value != 0
    const double EXACT_POWERS_OF_TEN[23]
    Py_ssize_t plain_run(const unsigned char* p, const unsigned char* end, int ascii) noexcept nogil


cdef bint _escape_free(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """True when UTF-8 text needs no escape in a JSON string: its JSON text is itself in quotes."""
    cdef const unsigned char* end = p + n
    cdef unsigned char c
    p += plain_run(p, end, 0)
    while p < end:
        c = p[0]
        if c < 0x20 or c == 34 or c == 92:
            return False
        p += 1
    return True


# The short escapes of JSON strings (\b \t \n \f \r), by control character; 0: written \u00XX.
cdef char _SHORT_ESCAPE[32]
for _byte in range(32):
    _SHORT_ESCAPE[_byte] = {8: 98, 9: 116, 10: 110, 12: 102, 13: 114}.get(_byte, 0)
cdef const char* _HEX_DIGITS = b"0123456789abcdef"
cdef const char* _BASE64_DIGITS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


cdef Py_ssize_t _escaped_size(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The length of UTF-8 text as the characters of a JSON string, escaped as orjson escapes."""
    cdef const unsigned char* end = p + n
    cdef Py_ssize_t size = n
    cdef unsigned char c
    while p < end:
        p += plain_run(p, end, 0)
        if p >= end:
            break
        c = p[0]
        if c < 0x20:
            size += 1 if _SHORT_ESCAPE[c] else 5
        elif c == 34 or c == 92:
            size += 1
        p += 1
    return size


cdef char* _write_escaped(char* out, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Write UTF-8 text as the characters of a JSON string (``_escaped_size`` bytes); the end."""
    cdef const unsigned char* end = p + n
    cdef Py_ssize_t run
    cdef unsigned char c
    while p < end:
        run = plain_run(p, end, 0)
        memcpy(out, p, run)
        out += run
        p += run
        if p >= end:
            break
        c = p[0]
        p += 1
        if c == 34 or c == 92:
            out[0] = 92
            out[1] = c
            out += 2
        elif c < 0x20:
            out[0] = 92
            if _SHORT_ESCAPE[c]:
                out[1] = _SHORT_ESCAPE[c]
                out += 2
            else:
                memcpy(out + 1, b"u00", 3)
                out[4] = _HEX_DIGITS[c >> 4]
                out[5] = _HEX_DIGITS[c & 15]
                out += 6
        else:
            out[0] = c
            out += 1
    return out


cdef char* _write_base64(char* out, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Write bytes in standard base64 with padding (``(n + 2) // 3 * 4`` bytes); the end."""
    cdef Py_ssize_t i = 0
    cdef unsigned int word
    while n - i >= 3:
        word = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2]
        out[0] = _BASE64_DIGITS[word >> 18]
        out[1] = _BASE64_DIGITS[(word >> 12) & 63]
        out[2] = _BASE64_DIGITS[(word >> 6) & 63]
        out[3] = _BASE64_DIGITS[word & 63]
        out += 4
        i += 3
    if n - i == 1:
        word = p[i] << 16
        out[0] = _BASE64_DIGITS[word >> 18]
        out[1] = _BASE64_DIGITS[(word >> 12) & 63]
        out[2] = 61  # '='
        out[3] = 61
        out += 4
    elif n - i == 2:
        word = (p[i] << 16) | (p[i + 1] << 8)
        out[0] = _BASE64_DIGITS[word >> 18]
        out[1] = _BASE64_DIGITS[(word >> 12) & 63]
        out[2] = _BASE64_DIGITS[(word >> 6) & 63]
        out[3] = 61
        out += 4
    return out


cdef inline int _string(Scan* s, Member* m) noexcept nogil:
    """Scan a plain JSON string at s.p (the opening quote); 1 if plain, 0 if not.

    Many bytes at a time up to the first one that is not plain ASCII (``plain_run``), then
    that character.
    """
    cdef const unsigned char* p = s.p + 1
    cdef const unsigned char* end = s.end
    cdef unsigned char c, c1
    cdef bint ascii = True
    m.val = p
    while p < end:
        p += plain_run(p, end, 1)
        if p >= end:
            return 0
        c = p[0]
        if c == 34:  # closing quote
            m.val_len = p - m.val
            m.ascii = ascii
            m.kind = V_STR
            s.p = p + 1
            return 1
        if c < 0x20 or c == 92:  # control character or escape: slow path
            return 0
        if c < 0x80:
            p += 1
            continue
        ascii = False
        # Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
        if 0xC2 <= c <= 0xDF:
            if end - p < 2 or (p[1] & 0xC0) != 0x80:
                return 0
            p += 2
        elif 0xE0 <= c <= 0xEF:
            if end - p < 3 or (p[1] & 0xC0) != 0x80 or (p[2] & 0xC0) != 0x80:
                return 0
            c1 = p[1]
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 > 0x9F):
                return 0
            p += 3
        elif 0xF0 <= c <= 0xF4:
            if end - p < 4 or (p[1] & 0xC0) != 0x80 or (p[2] & 0xC0) != 0x80 or (p[3] & 0xC0) != 0x80:
                return 0
            c1 = p[1]
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 > 0x8F):
                return 0
            p += 4
        else:
            return 0
    return 0


DEF MAX_EXACT_DIGITS = 15  # a decimal mantissa of this many digits is below 2**53: exact in a double
DEF MAX_EXACT_POWER = 22  # the largest power of ten a double holds exactly


cdef int _number(Scan* s, Member* m) noexcept:
    """Scan a JSON number literal: a short integer (not -0) or a finite double; 1 if accepted.

    A double with at most 15 digits and a power of ten up to 22 is one exact multiplication or
    division of two exact doubles, so it is correctly rounded, as Python's own conversion is
    (which reads every other double).
    """
    cdef const unsigned char* p = s.p
    cdef const unsigned char* start = p
    cdef const unsigned char* end = s.end
    cdef bint negative = False
    cdef bint fraction = False
    cdef long long value = 0
    cdef int digits = 0
    cdef unsigned long long mantissa = 0  # every digit, fraction included, while there are few
    cdef int places = 0  # digits after the point
    cdef int power = 0  # the exponent as written
    cdef int power_sign = 1
    cdef int power_digits = 0
    cdef char* stop = NULL
    if p < end and p[0] == 45:  # '-'
        negative = True
        p += 1
    if p >= end or not (48 <= p[0] <= 57):
        return 0
    if p[0] == 48:  # a leading zero stands alone
        p += 1
        digits = 1
    else:
        while p < end and 48 <= p[0] <= 57:
            digits += 1
            if digits <= MAX_INT_DIGITS:
                value = value * 10 + (p[0] - 48)
            p += 1
    if digits <= MAX_EXACT_DIGITS:
        mantissa = <unsigned long long>value
    if p < end and p[0] == 46:  # '.' digits
        fraction = True
        p += 1
        if p >= end or not (48 <= p[0] <= 57):
            return 0
        while p < end and 48 <= p[0] <= 57:
            digits += 1
            places += 1
            if digits <= MAX_EXACT_DIGITS:
                mantissa = mantissa * 10 + (p[0] - 48)
            p += 1
    if p < end and (p[0] == 101 or p[0] == 69):  # exponent
        fraction = True
        p += 1
        if p < end and (p[0] == 43 or p[0] == 45):
            power_sign = -1 if p[0] == 45 else 1
            p += 1
        if p >= end or not (48 <= p[0] <= 57):
            return 0
        while p < end and 48 <= p[0] <= 57:
            power_digits += 1
            if power_digits <= 4:
                power = power * 10 + (p[0] - 48)
            p += 1
    if p < end and (48 <= p[0] <= 57):
        return 0  # digits after a leading zero
    m.val = start
    m.val_len = p - start
    if not fraction:
        if digits > MAX_INT_DIGITS or (negative and value == 0):
            return 0  # long integers and -0: the slow path decides
        m.kind = V_INT
        m.ival = -value if negative else value
    else:
        power = power_sign * power - places  # value == mantissa * 10**power
        if digits <= MAX_EXACT_DIGITS and power_digits <= 4 and -MAX_EXACT_POWER <= power <= MAX_EXACT_POWER:
            m.fval = <double>mantissa
            if power >= 0:
                m.fval *= EXACT_POWERS_OF_TEN[power]
            else:
                m.fval /= EXACT_POWERS_OF_TEN[-power]
            if negative:
                m.fval = -m.fval
        else:
            # Python's own correctly rounded conversion (float(text)); it stops at the delimiter.
            try:
                m.fval = PyOS_string_to_double(<const char*>start, &stop, NULL)
            except Exception:
                return 0
            if stop != <char*>p or not isfinite(m.fval):
                return 0  # overflow to infinity: the slow path decides
        m.kind = V_FLOAT
    s.p = p
    return 1


cdef inline bint _literal(Scan* s, const char* word, Py_ssize_t n) noexcept nogil:
    if s.end - s.p >= n and memcmp(s.p, word, n) == 0:
        s.p += n
        return True
    return False


cdef int _scalar(Scan* s, Member* m) noexcept:
    """Scan a plain string, short integer, true, false or null; 1 if accepted."""
    if s.p >= s.end:
        return 0
    cdef unsigned char c = s.p[0]
    if c == 34:
        return _string(s, m)
    if c == 45 or (48 <= c <= 57):
        return _number(s, m)
    if c == 116 and _literal(s, "true", 4):
        m.kind = V_TRUE
        return 1
    if c == 102 and _literal(s, "false", 5):
        m.kind = V_FALSE
        return 1
    if c == 110 and _literal(s, "null", 4):
        m.kind = V_NULL
        return 1
    return 0


cdef inline int _key(Scan* s, Member* m) noexcept:
    """Scan ``"key" :`` with a plain ASCII key; 1 if accepted."""
    cdef const unsigned char* p
    if s.p >= s.end or s.p[0] != 34:
        return 0
    p = s.p + 1
    p += plain_run(p, s.end, 1)
    while p < s.end and 0x20 <= p[0] < 0x80 and p[0] != 34 and p[0] != 92:  # the last few bytes
        p += 1
    if p >= s.end or p[0] != 34:  # an escape, a control character or a non-ASCII byte first
        return 0
    m.key = s.p + 1
    m.key_len = p - m.key
    s.p = p + 1
    _skip_ws(s)
    if s.p >= s.end or s.p[0] != 58:  # ':'
        return 0
    s.p += 1
    _skip_ws(s)
    return 1


cdef inline bint _same(const unsigned char* p, Py_ssize_t n, const char* word, Py_ssize_t wn) noexcept nogil:
    return n == wn and memcmp(p, word, n) == 0


cdef inline int _next(Scan* s, unsigned char close) noexcept:
    """After a member or an element: 1 past a comma (another follows), 2 past the closing ``close``, 0 else."""
    _skip_ws(s)
    if s.p >= s.end:
        return 0
    if s.p[0] == 44:  # ','
        s.p += 1
        _skip_ws(s)
        return 1
    if s.p[0] == close:
        s.p += 1
        return 2
    return 0


cdef int _skip(Scan* s, int depth) noexcept:
    """Step over one JSON value of the plain kinds (no escapes, short numbers); 1 if accepted."""
    cdef Member m
    cdef int step
    if s.p >= s.end:
        return 0
    if s.p[0] != 123 and s.p[0] != 91:  # not '{' or '['
        return _scalar(s, &m)
    if depth >= MAX_DEPTH:
        return 0
    cdef bint is_object = s.p[0] == 123
    cdef unsigned char close = 125 if is_object else 93
    s.p += 1
    _skip_ws(s)
    if s.p < s.end and s.p[0] == close:
        s.p += 1
        return 1
    while True:
        if is_object and not _key(s, &m):
            return 0
        if not _skip(s, depth + 1):
            return 0
        step = _next(s, close)
        if step != 1:
            return step == 2


cdef inline bint _bytes_of(object data, const unsigned char** p, Py_ssize_t* n) noexcept:
    """The text of an HTTP body (``bytes``: what ASGI servers give); 0 for any other type."""
    if type(data) is not bytes:
        return 0
    p[0] = <const unsigned char*>PyBytes_AS_STRING(data)
    n[0] = PyBytes_GET_SIZE(data)
    return 1


# The names of HTTP_HEADERS_READ as C strings, for Engine.plain_headers.
cdef tuple _HEADERS = HTTP_HEADERS_READ
cdef int _HEADER_COUNT = min(len(_HEADERS), 16)
cdef const char* _HEADER_TEXT[16]
cdef Py_ssize_t _HEADER_LEN[16]
for _k in range(_HEADER_COUNT):
    _HEADER_TEXT[_k] = PyBytes_AS_STRING(_HEADERS[_k])
    _HEADER_LEN[_k] = PyBytes_GET_SIZE(_HEADERS[_k])


cdef bint _header_value(object value, const char** text, Py_ssize_t* n) noexcept:
    """An HTTP header value (bytes) trimmed of spaces and tabs: 0 when absent, or when it holds
    characters other than visible ASCII, space and tab (HTTP refuses those itself)."""
    cdef const char* p
    cdef Py_ssize_t size, i
    cdef unsigned char c
    if type(value) is not bytes:
        return 0
    p = PyBytes_AS_STRING(value)
    size = PyBytes_GET_SIZE(value)
    for i in range(size):
        c = p[i]
        if c != 9 and (c < 32 or c > 126):
            return 0
    while size and (p[0] == 32 or p[0] == 9):
        p += 1
        size -= 1
    while size and (p[size - 1] == 32 or p[size - 1] == 9):
        size -= 1
    text[0] = p
    n[0] = size
    return 1


cdef int _meta(Scan* s, Meta* meta) noexcept:
    """Scan ``params._meta``: its protocol version and whether it declares client capabilities.

    Anything the line rules must judge themselves (a progress token, a log level, a repeated
    key of these) declines the line.
    """
    cdef MetaCache* cache = meta.cache
    cdef const unsigned char* start = s.p
    if meta.present:  # a second _meta: the slow path decides
        return 0
    meta.present = True
    if cache.len and s.end - s.p >= cache.len and memcmp(s.p, cache.text, cache.len) == 0:
        meta.version = NULL if cache.version_at < 0 else s.p + cache.version_at
        meta.version_len = cache.version_len
        meta.capabilities = cache.capabilities
        s.p += cache.len
        return 1
    if _meta_members(s, meta) == 0:
        return 0
    if s.p - start <= MAX_META_CACHE:
        cache.len = s.p - start
        memcpy(cache.text, start, cache.len)
        cache.version_at = -1 if meta.version == NULL else meta.version - start
        cache.version_len = meta.version_len
        cache.capabilities = meta.capabilities
    return 1


cdef int _meta_members(Scan* s, Meta* meta) noexcept:
    """The members of ``_meta`` (s.p at its opening brace); 1 if accepted."""
    cdef Member m
    cdef int step
    cdef bint seen_capabilities = False
    s.p += 1
    _skip_ws(s)
    if s.p < s.end and s.p[0] == 125:
        s.p += 1
        return 1
    while True:
        if not _key(s, &m):
            return 0
        if _same(m.key, m.key_len, "io.modelcontextprotocol/protocolVersion", 39):
            if meta.version != NULL or not _scalar(s, &m) or m.kind != V_STR:
                return 0
            meta.version = m.val
            meta.version_len = m.val_len
        elif _same(m.key, m.key_len, "io.modelcontextprotocol/clientCapabilities", 42):
            if seen_capabilities:
                return 0
            seen_capabilities = True
            meta.capabilities = s.p < s.end and s.p[0] == 123
            if not _skip(s, 1):
                return 0
        elif _same(m.key, m.key_len, "io.modelcontextprotocol/logLevel", 32) \
                or _same(m.key, m.key_len, "progressToken", 13):
            return 0
        elif not _skip(s, 1):
            return 0
        step = _next(s, 125)
        if step != 1:
            return step == 2


cdef int _object(Scan* s, Member* members, int* count, Member* nested, int* nested_count, Meta* meta) noexcept:
    """Scan an object of scalar members (and, if ``nested`` is given, one object of scalars;
    if ``meta`` is given, a ``_meta`` object scanned into it).

    s.p is at the opening brace. Fills ``members``; 1 if accepted, 0 if not.
    """
    cdef int n = 0
    cdef int step
    cdef int i
    cdef Member* m
    s.p += 1
    _skip_ws(s)
    if s.p < s.end and s.p[0] == 125:  # '}'
        s.p += 1
        count[0] = 0
        return 1
    while True:
        if n == MAX_MEMBERS:
            return 0
        m = &members[n]
        if not _key(s, m):
            return 0
        for i in range(n):  # duplicate keys: the slow path decides
            if _same(members[i].key, members[i].key_len, <const char*>m.key, m.key_len):
                return 0
        if s.p < s.end and s.p[0] == 123 and meta != NULL and _same(m.key, m.key_len, "_meta", 5):
            if not _meta(s, meta):
                return 0
            m.kind = V_META
        elif s.p < s.end and s.p[0] == 123 and nested != NULL:  # '{'
            if not _object(s, nested, nested_count, NULL, NULL, NULL):
                return 0
            nested = NULL  # only one nested object
            m.kind = V_OBJ
        elif not _scalar(s, m):
            return 0
        n += 1
        step = _next(s, 125)
        if step == 2:
            count[0] = n
        if step != 1:
            return step == 2


cdef class _Route:
    cdef bytes method
    cdef str name
    cdef int kind
    cdef bytes answer      # R_CONST: the bytes after the id
    cdef object handler    # R_READ / R_OTHER


cdef class _FastTool:
    """A plain tool whose arguments form a flat shape, validated straight from the input bytes."""
    cdef bytes name
    cdef object func
    cdef object failed     # failed(error) -> the result body of a call that raised
    cdef bytes invalid     # its "Invalid arguments for <tool>" result body
    cdef int count
    cdef int positional    # the first fields that are also the function's first parameters, in order
    cdef list field_names  # bytes, kept alive for field_text
    cdef const char* field_text[MAX_MEMBERS]
    cdef Py_ssize_t field_len[MAX_MEMBERS]
    cdef list field_keys   # str
    cdef unsigned int admits[MAX_MEMBERS]  # per field: a bit (1 << V_*) per value kind it admits
    cdef bint required[MAX_MEMBERS]
    cdef bint mirrored     # an argument is mirrored in an HTTP header: HTTP checks its calls itself


cdef class _Read:
    """A resource or template whose reads C makes itself (``Resource.direct``).

    Its answer is the bytes of :meth:`~shipcode_mcp.handlers.Resource.body` around the JSON
    string of what the function read, taken from the body of an empty read: after the id,
    ``head`` + (a template's) uri + ``text_open`` or ``blob_open`` + the characters + ``close``.
    """
    cdef object resource
    cdef object func
    cdef object match      # a template's match(uri) -> its values or None; None for a resource
    cdef bytes uri         # a resource's uri in UTF-8
    cdef bytes head        # up to a template's uri (a resource's is in text_open and blob_open)
    cdef bytes text_open   # up to the text's characters, its opening quote included
    cdef bytes blob_open
    cdef bytes close       # from the closing quote


cdef _Read _read_of(resource, bint template):
    """How C answers reads of a resource or template; None when its body is not laid out as C writes it."""
    cdef _Read read = _Read()
    read.resource = resource
    read.func = resource.read
    read.match = resource.match if template else None
    read.uri = resource.uri.encode("utf-8")
    uri = "" if template else resource.uri
    text_open, _, close = resource.body(uri, "").rpartition(b'""')
    blob_open, _, blob_close = resource.body(uri, b"").rpartition(b'""')
    read.head = RESULT_MID
    if template:  # the empty uri is the body's first empty string
        head, _, text_open = text_open.partition(b'""')
        read.head += head
        if not blob_open.startswith(head + b'""'):
            return None
        blob_open = blob_open[len(head) + 2:]
    read.text_open = text_open + b'"'
    read.blob_open = blob_open + b'"'
    read.close = b'"' + close + RESULT_TAIL
    # The layout holds for a uri and contents that are not empty.
    probe = "t://x" if template else resource.uri
    written = read.head + (dumps(probe) if template else b"")
    text = RESULT_MID + resource.body(probe, "x\n") + RESULT_TAIL
    blob = RESULT_MID + resource.body(probe, b"\0") + RESULT_TAIL
    if blob_close != close or written + read.text_open + b'x\\n' + read.close != text \
            or written + read.blob_open + b"AA==" + read.close != blob:
        return None
    return read


# The scanner's value kinds, by the names of schema.FLAT_TYPE_ADMITS (the one type table).
cdef dict _VALUE_KIND_BITS = {
    "string": 1 << V_STR,
    "integer": 1 << V_INT,
    "float": 1 << V_FLOAT,
    "boolean": (1 << V_TRUE) | (1 << V_FALSE),
    "null": 1 << V_NULL,
}
cdef dict _ADMITS = {
    kind: sum(_VALUE_KIND_BITS[value_kind] for value_kind in admits) for kind, admits in FLAT_TYPE_ADMITS.items()
}


cdef inline bint _fits(unsigned int admits, int value_kind) noexcept nogil:
    return (admits >> value_kind) & 1


cdef object _value(Member* m):
    cdef object text
    if m.kind == V_STR:
        if m.ascii:  # already checked: a compact ASCII str is its bytes
            text = PyUnicode_New(m.val_len, 127)
            memcpy(PyUnicode_DATA(text), m.val, m.val_len)
            return text
        return PyUnicode_DecodeUTF8(<const char*>m.val, m.val_len, NULL)
    if m.kind == V_INT:
        return PyLong_FromLongLong(m.ival)
    if m.kind == V_FLOAT:
        return m.fval
    if m.kind == V_TRUE:
        return True
    if m.kind == V_FALSE:
        return False
    return None


cdef const char* _utf8(str text, Py_ssize_t* n) except? NULL:
    """The UTF-8 of a str; NULL when it has lone surrogates (the Python encoder refuses them)."""
    try:
        return PyUnicode_AsUTF8AndSize(text, n)
    except UnicodeError:
        return NULL


cdef inline Py_ssize_t _put(char* out, const char* text, Py_ssize_t n) noexcept nogil:
    memcpy(out, text, n)
    return n


cdef inline int _exponent(const char* p) noexcept nogil:
    """The value of a signed decimal exponent ("+16", "-05")."""
    cdef int sign = 1
    cdef int value = 0
    if p[0] == 45:
        sign = -1
        p += 1
    elif p[0] == 43:
        p += 1
    while 48 <= p[0] <= 57:
        value = value * 10 + (p[0] - 48)
        p += 1
    return sign * value


cdef inline Py_ssize_t _decimal(unsigned long long value, char* out) noexcept nogil:
    """Write the decimal digits of value into out (at most 20 bytes)."""
    cdef char reversed_digits[20]
    cdef int count = 0
    cdef int i
    while True:
        reversed_digits[count] = 48 + <char>(value % 10)
        count += 1
        value //= 10
        if value == 0:
            break
    for i in range(count):
        out[i] = reversed_digits[count - 1 - i]
    return count


DEF MAX_SHORT_DIGITS = 15  # DBL_DIG: two decimals of this many digits never read as the same double


cdef bint _short_decimal(double value, char* digits, int* count, int* point) noexcept nogil:
    """The exact decimal digits of a finite, non-zero |value|, when there are at most 15 of them.

    They are then repr's shortest round-trip digits: a decimal of 15 digits or fewer that
    reads as this double is unique, and this one is the double itself. ``value == 0.<digits>
    x 10**point``. False when the exact expansion is longer (repr decides).
    """
    cdef int exponent
    cdef unsigned long long mantissa = <unsigned long long>ldexp(frexp(fabs(value), &exponent), 53)
    cdef int shift = TRAILING_ZERO_BITS(mantissa)
    cdef int places = 0
    cdef unsigned long long whole
    cdef unsigned long long limit = 10 ** MAX_SHORT_DIGITS
    mantissa >>= shift
    exponent += shift - 53  # |value| == mantissa * 2**exponent, mantissa odd
    if exponent >= 0:
        if exponent >= 50 or mantissa >= (limit >> exponent):
            return False
        whole = mantissa << exponent
    else:
        # mantissa / 2**k == mantissa * 5**k / 10**k
        whole = mantissa
        while places < -exponent:
            whole *= 5
            places += 1
            if whole >= limit:
                return False
    count[0] = <int>_decimal(whole, digits)
    point[0] = count[0] - places
    return True


DEF DOUBLE_EXACT_BITS = 53  # every integer below 2**53 is a double


cdef bint _round_trip_decimal(double value, char* digits, int* count, int* point) noexcept nogil:
    """The digits of the decimal of at most 15 significant digits that reads as |value|, if one does.

    They are then repr's shortest round-trip digits: two decimals of 15 digits or fewer never read
    as the same double (DBL_DIG), and repr's are never longer. The candidate is |value| scaled to
    15 digits and rounded; it reads as the double when dividing (or multiplying) it by an exact
    power of ten, correctly rounded as reading a decimal is, gives |value| back. ``value ==
    0.<digits> x 10**point``; False when no such decimal was found (repr decides).
    """
    cdef double magnitude = fabs(value)
    cdef int scale = MAX_SHORT_DIGITS - 1 - <int>floor(log10(magnitude))  # 15 digits before the point
    cdef long long whole
    if scale > MAX_EXACT_POWER or scale < -MAX_EXACT_POWER:
        return False
    cdef long long limit = (<long long>1) << DOUBLE_EXACT_BITS
    if scale >= 0:
        whole = llround(magnitude * EXACT_POWERS_OF_TEN[scale])
        if whole <= 0 or whole >= limit or <double>whole / EXACT_POWERS_OF_TEN[scale] != magnitude:
            return False
    else:
        whole = llround(magnitude / EXACT_POWERS_OF_TEN[-scale])
        if whole <= 0 or whole >= limit or <double>whole * EXACT_POWERS_OF_TEN[-scale] != magnitude:
            return False
    count[0] = <int>_decimal(<unsigned long long>whole, digits)
    point[0] = count[0] - scale
    while digits[count[0] - 1] == 48:  # trailing zeros
        count[0] -= 1
    return count[0] <= MAX_SHORT_DIGITS


cdef Py_ssize_t _number_text(double value, char* out) except -1:
    """Write a double as ECMAScript's Number::toString does, into out (at most 32 bytes).

    The twin of :func:`shipcode_mcp.jsontext.number_text`, from the same shortest round-trip
    digits as Python's repr: the exact ones when they are short (:func:`_short_decimal`),
    else repr's own.
    """
    cdef char* text
    cdef char digits[24]
    cdef int count = 0
    cdef int exponent = 0
    cdef int point, i
    cdef Py_ssize_t n = 0
    cdef char* q
    cdef char* text_at
    if value != value:
        return _put(out, "NaN", 3)
    if isinf(value):
        return _put(out, "Infinity", 8) if value > 0 else _put(out, "-Infinity", 9)
    if value == 0:
        return _put(out, "0", 1)
    if _short_decimal(value, digits, &count, &point) or _round_trip_decimal(value, digits, &count, &point):
        if value < 0:
            out[0] = 45
            n = 1
        return _layout(digits, count, point, out + n) + n
    text = PyOS_double_to_string(value, b"r", 0, 0, NULL)  # repr's digits, without a trailing ".0"
    try:
        if text[0] == 45:  # '-'
            out[0] = 45
            n = 1
            text_at = text + 1
        else:
            text_at = text
        q = text_at
        while q[0] and q[0] != 101:  # 'e'
            q += 1
        if not q[0]:  # written positionally (1e-4 <= |x| < 1e16), as ECMAScript does
            i = q - text_at
            memcpy(out + n, text_at, i)
            return n + i
        # d[.ddd]e±XX: the digits, and where the decimal point goes (value == 0.<digits> x 10**point).
        q = text_at
        while q[0] != 101:
            if q[0] != 46:  # '.'
                digits[count] = q[0]
                count += 1
            q += 1
        exponent = _exponent(q + 1)
        while count > 1 and digits[count - 1] == 48:  # trailing zeros
            count -= 1
        point = 1 + exponent
    finally:
        PyMem_Free(text)
    return _layout(digits, count, point, out + n) + n


cdef Py_ssize_t _layout(const char* digits, int count, int point, char* out) noexcept nogil:
    """ECMAScript's layout of ``0.<digits> x 10**point`` (no trailing zeros in digits past the point)."""
    cdef Py_ssize_t n = 0
    cdef int power, i
    if count <= point <= 21:
        memcpy(out + n, digits, count)
        n += count
        for i in range(point - count):
            out[n] = 48
            n += 1
    elif 0 < point <= 21:
        memcpy(out, digits, point)
        out[point] = 46
        memcpy(out + point + 1, digits + point, count - point)
        n = count + 1
    elif -6 < point <= 0:
        n += _put(out + n, "0.", 2)
        for i in range(-point):
            out[n] = 48
            n += 1
        memcpy(out + n, digits, count)
        n += count
    else:
        out[n] = digits[0]
        n += 1
        if count > 1:
            out[n] = 46
            n += 1
            memcpy(out + n, digits + 1, count - 1)
            n += count - 1
        power = point - 1
        out[n] = 101
        out[n + 1] = 43 if power >= 0 else 45
        n += 2
        n += _decimal(power if power >= 0 else -power, out + n)
    return n


cdef inline double _now() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec + t.tv_nsec * 1e-9


cdef inline int _wait(int fd, short events, int timeout_ms) except -1:
    """Wait until fd is ready (or the timeout passes); 1 if ready."""
    cdef pollfd p
    cdef int ready
    p.fd = fd
    p.events = events
    p.revents = 0
    with nogil:
        ready = poll(&p, 1, timeout_ms)
    return ready > 0


cdef int _write_some(int fd, const char* p, Py_ssize_t n, Py_ssize_t* done) except -1:
    """One write(2) of up to n bytes; waits while a non-blocking fd is full."""
    cdef Py_ssize_t wrote
    while True:
        with nogil:
            wrote = write(fd, p, n)
        if wrote >= 0:
            done[0] = wrote
            return 0
        if errno == EINTR:
            PyErr_CheckSignals()
        elif errno == EAGAIN or errno == EWOULDBLOCK:
            _wait(fd, POLLOUT, -1)
        else:
            PyErr_SetFromErrno(OSError)
            return -1


cdef class Engine:
    """Line processor over a :class:`~shipcode_mcp.catalogue.Catalogue` (compiled)."""

    cdef dict _routes
    cdef list _route_table    # _Route objects; their method names are also in the C arrays below
    cdef int _route_count
    cdef const char* _method_text[MAX_ROUTES]
    cdef Py_ssize_t _method_len[MAX_ROUTES]
    cdef int _route_kind[MAX_ROUTES]
    cdef const char* _answer_text[MAX_ROUTES]  # R_CONST: the bytes after the id
    cdef Py_ssize_t _answer_len[MAX_ROUTES]
    cdef object _catalogue
    cdef list _tools
    cdef object _tool_lookup
    cdef object _resources    # the catalogue's resources by uri
    cdef dict _direct_reads   # uri -> _Read: the resources C reads itself
    cdef list _read_table     # the same _Read objects when they are few; their uris are in the C arrays below
    cdef int _read_count
    cdef const char* _read_uri[MAX_LISTED_READS]
    cdef Py_ssize_t _read_uri_len[MAX_LISTED_READS]
    cdef list _template_reads  # _Read per template, in order; None unless C reads them all
    cdef object _modern            # the catalogue's 2026-07-28 side, or None
    cdef list _modern_table        # its routes, as _Route objects (constant answers and tools/call)
    cdef int _modern_count
    cdef const char* _modern_text[MAX_ROUTES]
    cdef Py_ssize_t _modern_len[MAX_ROUTES]
    cdef bytes _modern_text_open   # a one-text result of a 2026-07-28 call: before and after the text
    cdef bytes _modern_text_close
    cdef MetaCache _meta_cache
    cdef bint _modern_only    # every request judged by 2026-07-28's rules (see modern_only())
    cdef bint _http           # judging an HTTP body whose header values follow (see http_modern())
    cdef const char* _h_version
    cdef Py_ssize_t _h_version_len
    cdef const char* _h_method
    cdef Py_ssize_t _h_method_len
    cdef const char* _h_name  # NULL: no Mcp-Name header
    cdef Py_ssize_t _h_name_len
    cdef Py_ssize_t _max
    cdef unsigned char* _partial
    cdef Py_ssize_t _partial_len
    cdef Py_ssize_t _partial_cap
    cdef bint _skipping
    cdef bint _skipped_blank
    cdef char* _out
    cdef Py_ssize_t _out_len
    cdef Py_ssize_t _out_sent
    cdef Py_ssize_t _out_cap
    cdef object _rules        # the line rules: the slow path
    cdef object _rules_line
    cdef list _rules_out
    cdef object _stash        # input left unread while paused: this object from _stash_at on
    cdef Py_ssize_t _stash_at
    cdef int _fd              # the output while serving, else -1
    cdef double _since        # when the oldest unwritten answer may have been computed

    implementation = IMPLEMENTATION

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
        self._rules_line = self._rules.line
        self._rules_out = self._rules.out
        catalogue.session.emit = self.emit
        self._catalogue = catalogue
        self.refresh()
        catalogue.on_refresh.append(self.refresh)

    def refresh(self):
        """Read the catalogue's routes, plain tools, resources and templates again (after the app changed them)."""
        catalogue = self._catalogue
        self._routes = catalogue.routes
        route_table = []
        tools = []
        cdef _Route route
        cdef int i
        self._modern_only = self._rules.all_modern
        for method, target in self._routes.items():
            route = _Route()
            route.method = method.encode("utf-8")
            route.name = method
            if type(target) is bytes:
                route.kind = R_CONST
                route.answer = target
            elif target == catalogue.call_tool:
                route.kind = R_TOOLS_CALL
            elif target == catalogue.read_resource:
                route.kind = R_READ
                route.handler = target
            else:
                route.kind = R_OTHER
            route_table.append(route)
        self._route_table = route_table
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
        self._modern = catalogue.modern
        self._modern_table = []
        self._modern_count = 0
        if self._modern is not None:
            for method, target in self._modern.routes.items():
                route = _Route()
                route.method = method.encode("utf-8")
                route.name = method
                if type(target) is bytes:
                    route.kind = R_CONST
                    route.answer = target
                elif method == "tools/call" and target.handler == catalogue.call_tool:
                    route.kind = R_TOOLS_CALL
                else:
                    route.kind = R_OTHER
                self._modern_table.append(route)
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
        cdef _FastTool fast
        for spec in catalogue.fast_tools:
            if len(spec.fields) > MAX_MEMBERS:
                continue
            fast = _FastTool()
            fast.name = spec.name.encode("utf-8")
            fast.func = spec.func
            fast.failed = spec.failed
            fast.mirrored = spec.mirrored
            fast.invalid = spec.invalid
            fast.count = len(spec.fields)
            fast.positional = spec.positional
            fast.field_names = []
            fast.field_keys = []
            for i, (field, kind, required) in enumerate(spec.fields):
                fast.field_names.append(field.encode("utf-8"))
                fast.field_text[i] = PyBytes_AS_STRING(fast.field_names[i])
                fast.field_len[i] = PyBytes_GET_SIZE(fast.field_names[i])
                fast.field_keys.append(field)
                fast.admits[i] = _ADMITS[kind]
                fast.required[i] = required
            tools.append(fast)
        self._tools = tools
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

    @staticmethod
    def plain_headers(raw):
        """The values of the headers of ``HTTP_HEADERS_READ`` present in ``raw`` (an ASGI header list), by
        name, when it is plain: a list of ``(bytes, bytes)`` tuples whose names are all lower-case and
        where none of those names repeats; else None (the caller reads the headers with more care)."""
        cdef dict found = {}
        cdef const char* text
        cdef Py_ssize_t n, i
        cdef int k
        cdef unsigned char c
        cdef object known
        if type(raw) is not list:
            return None
        for item in <list>raw:
            if type(item) is not tuple or len(<tuple>item) != 2:
                return None
            name = (<tuple>item)[0]
            value = (<tuple>item)[1]
            if type(name) is not bytes or type(value) is not bytes:
                return None
            text = PyBytes_AS_STRING(name)
            n = PyBytes_GET_SIZE(name)
            for i in range(n):
                c = text[i]
                if 65 <= c <= 90:
                    return None
            for k in range(_HEADER_COUNT):
                if n == _HEADER_LEN[k] and memcmp(text, _HEADER_TEXT[k], n) == 0:
                    known = _HEADERS[k]
                    if known in found:
                        return None
                    found[known] = value
                    break
        return found

    def fast(self, data):
        """The answer to one whole message when the fast path gives one (an HTTP body in a session); else
        None, and nothing was judged."""
        cdef const unsigned char* p
        cdef Py_ssize_t n
        if not _bytes_of(data, &p, &n) or n == 0 or n > self._max or not self._fast(p, n):
            return None
        return self._drain()

    def http_modern(self, data, version, method, name):
        """The answer to the body of a 2026-07-28 HTTP request, when the fast path gives one with HTTP
        status 200 and the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` header values
        (bytes, each given once; None when absent) match the body; else None, and nothing was judged."""
        cdef const unsigned char* p
        cdef Py_ssize_t n
        cdef int fast
        if not _bytes_of(data, &p, &n) or n == 0 or n > self._max \
                or not _header_value(version, &self._h_version, &self._h_version_len) \
                or not _header_value(method, &self._h_method, &self._h_method_len):
            return None
        if name is None:
            self._h_name = NULL
        elif not _header_value(name, &self._h_name, &self._h_name_len) \
                or (self._h_name_len >= 9 and memcmp(self._h_name, b"=?base64?", 9) == 0):
            return None
        self._http = True
        try:
            fast = self._fast(p, n)
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
        """Best effort on the way out: write pending answers while the reader takes them (see the pure twin)."""
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
        """Judge one whole message without framing (an HTTP body: a newline is whitespace); its answers."""
        cdef const unsigned char[:] view = data
        if view.shape[0]:
            self._line(&view[0], view.shape[0])
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
        # One byte of slack: a trailing \r does not count towards the limit.
        if need > self._max + 1:
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
        if not self._skipped_blank:
            self._emit_bytes(_INVALID_NULL_LINE)
        return 0

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
        if n > self._max and (n > self._max + 1 or p[n - 1] != 13):
            if not _blank(p, n):
                self._emit_bytes(_INVALID_NULL_LINE)
            return 0
        if n == 0:
            return 0
        fast = self._fast(p, n)
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

    # -- the fast path -------------------------------------------------------------------

    cdef int _fast(self, const unsigned char* line, Py_ssize_t n) except -1:
        """Answer a line of the common shapes: 1 when answered, 2 when answered and input
        must pause, 0 when the slow path must decide."""
        cdef Scan s
        cdef Member top[MAX_MEMBERS]
        cdef Member params[MAX_MEMBERS]
        cdef Member arguments[MAX_MEMBERS]
        cdef int top_count = 0
        cdef int params_count = -1  # -1: no params
        cdef int arguments_count = -1
        cdef int i
        cdef int step
        cdef Meta meta
        meta.cache = &self._meta_cache
        meta.present = False
        meta.version = NULL
        meta.capabilities = False
        cdef Member* m
        cdef Member* rid = NULL
        cdef Member* method = NULL
        cdef bint jsonrpc = False
        s.p = line
        s.end = line + n
        _skip_ws(&s)
        if s.p >= s.end or s.p[0] != 123:
            return 0
        s.p += 1
        _skip_ws(&s)
        while True:
            if top_count == 4:
                return 0
            m = &top[top_count]
            if not _key(&s, m):
                return 0
            if _same(m.key, m.key_len, "jsonrpc", 7):
                if jsonrpc or not _literal(&s, '"2.0"', 5):
                    return 0
                jsonrpc = True
            elif _same(m.key, m.key_len, "id", 2):
                if rid != NULL or not _scalar(&s, m) or (m.kind != V_STR and m.kind != V_INT):
                    return 0
                rid = m
            elif _same(m.key, m.key_len, "method", 6):
                if method != NULL or not _scalar(&s, m) or m.kind != V_STR:
                    return 0
                method = m
            elif _same(m.key, m.key_len, "params", 6):
                if params_count >= 0 or s.p >= s.end or s.p[0] != 123:
                    return 0
                if not _object(&s, params, &params_count, arguments, &arguments_count, &meta):
                    return 0
            else:
                return 0
            top_count += 1
            step = _next(&s, 125)
            if step == 0:
                return 0
            if step == 2:
                break
        _skip_ws(&s)
        if s.p != s.end or not jsonrpc or rid == NULL or method == NULL:
            return 0
        # The id as the answer writes it: a short integer literal, or a plain string with its quotes.
        cdef const char* id_text = <const char*>rid.val
        cdef Py_ssize_t id_len = rid.val_len
        if rid.kind == V_STR:
            id_text -= 1
            id_len += 2
        if (self._modern_only or self._http) and not meta.present:  # no legacy answer here: the line rules judge it
            return 0
        if meta.present:
            return self._fast_modern(id_text, id_len, method, &meta, params, params_count, arguments, arguments_count)
        cdef int found = -1
        for i in range(self._route_count):
            if _same(method.val, method.val_len, self._method_text[i], self._method_len[i]):
                found = i
                break
        if found < 0:
            # More routes than the table holds, or a method 2026-07-28 may have: the line rules decide.
            if self._route_count < len(self._route_table) or self._modern is not None:
                return 0
            self._emit_answer(id_text, id_len, _METHOD_NOT_FOUND_TAIL)
            return 1
        cdef int kind = self._route_kind[found]
        if kind == R_CONST:
            # Whatever else params holds, the answer is the same (a request carrying _meta is
            # left to the line rules).
            for i in range(params_count):
                if _same(params[i].key, params[i].key_len, "_meta", 5):
                    return 0
            self._emit_answer_text(id_text, id_len, self._answer_text[found], self._answer_len[found])
            return 1
        if kind == R_TOOLS_CALL and params_count >= 0:
            return self._fast_call(id_text, id_len, params, params_count, arguments, arguments_count, False)
        if kind == R_READ and params_count == 1 and params[0].kind == V_STR \
                and _same(params[0].key, params[0].key_len, "uri", 3):
            return self._fast_read(id_text, id_len, &params[0], self._route_table[found])
        return 0

    cdef int _fast_read(self, const char* rid, Py_ssize_t rid_len, Member* uri_member, _Route route) except -1:
        """Answer ``resources/read`` of a uri; the catalogue's handler reads what C does not."""
        cdef _Read read = None
        cdef int i
        uri = None
        values = None
        if self._read_count:
            for i in range(self._read_count):
                if _same(uri_member.val, uri_member.val_len, self._read_uri[i], self._read_uri_len[i]):
                    read = self._read_table[i]
                    break
        if read is None:
            uri = _value(uri_member)
            if not self._read_count:
                read = self._direct_reads.get(uri)
        if read is None and self._template_reads is not None and uri not in self._resources:
            for candidate in self._template_reads:
                values = (<_Read>candidate).match(uri)
                if values is not None:
                    read = <_Read>candidate
                    break
        if read is None:  # read later (async or with a Context), or not found: the handler says
            pause = self._rules.handle(PyBytes_FromStringAndSize(rid, rid_len), route.name, route.handler, {"uri": uri})
            self._take_rules_out()
            return 2 if pause else 1
        self._due()
        try:
            data = read.func() if values is None else read.func(**values)
            if not self._emit_contents(rid, rid_len, read, uri_member, data):
                self._emit_result(rid, rid_len, read.resource.body(_value(uri_member) if uri is None else uri, data))
        except HANDLER_FAULTS as error:
            self._emit_answer(rid, rid_len, failure_tail(route.name, error))
        return 1

    cdef int _emit_contents(self, const char* rid, Py_ssize_t rid_len, _Read read, Member* uri_member,
                            object data) except -1:
        """The answer of a read, when C writes what it read (a ``str`` or ``bytes``): 1 if written.

        The same bytes as :meth:`~shipcode_mcp.handlers.Resource.body`: text escaped as orjson
        escapes it, bytes in base64.
        """
        cdef const char* text
        cdef Py_ssize_t n = 0
        cdef Py_ssize_t size
        cdef bytes opening
        kind = type(data)
        if kind is str:
            text = _utf8(data, &n)
            if text == NULL:
                return 0
            size = _escaped_size(<const unsigned char*>text, n)
            opening = read.text_open
        elif kind is bytes:
            text = PyBytes_AS_STRING(data)
            n = PyBytes_GET_SIZE(data)
            size = (n + 2) // 3 * 4
            opening = read.blob_open
        else:
            return 0
        cdef Py_ssize_t head = PyBytes_GET_SIZE(_HEAD)
        cdef Py_ssize_t open_len = PyBytes_GET_SIZE(opening)
        cdef Py_ssize_t closing = PyBytes_GET_SIZE(read.close)
        cdef Py_ssize_t read_head = PyBytes_GET_SIZE(read.head)
        # A template's answer has the request's uri, a plain string as the line has it, quotes included.
        cdef Py_ssize_t uri_len = 0 if read.match is None else uri_member.val_len + 2
        cdef Py_ssize_t total = head + rid_len + read_head + uri_len + open_len + size + closing
        cdef char* out = self._room(total)
        out += _put(out, PyBytes_AS_STRING(_HEAD), head)
        out += _put(out, rid, rid_len)
        out += _put(out, PyBytes_AS_STRING(read.head), read_head)
        out += _put(out, <const char*>uri_member.val - 1, uri_len)
        out += _put(out, PyBytes_AS_STRING(opening), open_len)
        if kind is bytes:
            out = _write_base64(out, <const unsigned char*>text, n)
        elif size == n:
            out += _put(out, text, n)
        else:
            out = _write_escaped(out, <const unsigned char*>text, n)
        memcpy(out, PyBytes_AS_STRING(read.close), closing)
        self._out_len += total
        return 1

    cdef int _fast_modern(self, const char* rid, Py_ssize_t rid_len, Member* method, Meta* meta,
                          Member* params, int params_count, Member* arguments, int arguments_count) except -1:
        """A line whose params carry ``_meta``: 2026-07-28 constant answers and plain tool calls.

        Legacy lines with ``_meta``, other versions, a missing capabilities object, other
        methods: the line rules decide.
        """
        cdef int i
        cdef int found = -1
        if self._modern is None or meta.version == NULL or not meta.capabilities \
                or not _same(meta.version, meta.version_len, PyBytes_AS_STRING(_MODERN_VERSION),
                             PyBytes_GET_SIZE(_MODERN_VERSION)):
            return 0
        for i in range(self._modern_count):
            if _same(method.val, method.val_len, self._modern_text[i], self._modern_len[i]):
                found = i
                break
        if found < 0:
            return 0
        if self._http and not (_same(method.val, method.val_len, self._h_method, self._h_method_len)
                               and _same(meta.version, meta.version_len, self._h_version, self._h_version_len)):
            return 0  # HTTP says why the headers do not match
        cdef _Route route = self._modern_table[found]
        if route.kind == R_CONST:
            if params_count > 1:  # more than _meta (a cursor, say)
                return 0
            self._emit_answer(rid, rid_len, route.answer)
            return 1
        if route.kind == R_TOOLS_CALL:
            return self._fast_call(rid, rid_len, params, params_count, arguments, arguments_count, True)
        return 0

    cdef int _fast_call(self, const char* rid, Py_ssize_t rid_len, Member* params, int params_count,
                        Member* arguments, int arguments_count, bint modern) except -1:
        cdef Member* name = NULL
        cdef Member* args = NULL
        cdef int i, j
        cdef Member* m
        for i in range(params_count):
            m = &params[i]
            if _same(m.key, m.key_len, "name", 4):
                name = m
            elif _same(m.key, m.key_len, "arguments", 9):
                args = m
            elif m.kind != V_META:
                return 0
        if name == NULL or name.kind != V_STR:
            return 0
        if self._http and (self._h_name == NULL or not _same(name.val, name.val_len, self._h_name, self._h_name_len)):
            return 0
        cdef _FastTool tool = None
        for candidate in self._tools:
            if _same(name.val, name.val_len, PyBytes_AS_STRING((<_FastTool>candidate).name),
                     PyBytes_GET_SIZE((<_FastTool>candidate).name)):
                tool = <_FastTool>candidate
                break
        if tool is None or (self._http and tool.mirrored):
            if self._http:  # an unknown tool is a 400 on HTTP; mirrored arguments are HTTP's to check
                return 0
            if _value(name) in self._tool_lookup:
                return 0  # a tool with a schema the fast path does not check
            self._emit_answer(rid, rid_len, _UNKNOWN_TOOL_TAIL)
            return 1
        cdef int count = 0
        if args != NULL:
            if args.kind != V_OBJ:
                self._emit_body(rid, rid_len, tool.invalid, modern)
                return 1
            count = arguments_count
        # Validate: every argument is a known field of the right kind; every required field is there.
        cdef int slots[MAX_MEMBERS]
        cdef int found
        for i in range(count):
            m = &arguments[i]
            slots[i] = -1
            for j in range(tool.count):
                if _same(m.key, m.key_len, tool.field_text[j], tool.field_len[j]):
                    slots[i] = j
                    break
            if slots[i] < 0 or not _fits(tool.admits[slots[i]], m.kind):
                self._emit_body(rid, rid_len, tool.invalid, modern)
                return 1
        for j in range(tool.count):
            if tool.required[j]:
                found = 0
                for i in range(count):
                    if slots[i] == j:
                        found = 1
                        break
                if not found:
                    self._emit_body(rid, rid_len, tool.invalid, modern)
                    return 1
        # The values by field; a call by position when they are the function's first parameters.
        cdef PyObject* stack[MAX_MEMBERS + 1]
        cdef PyObject** values = stack + 1  # stack[0]: room for PY_VECTORCALL_ARGUMENTS_OFFSET
        cdef object text_arg = None   # a plain string argument whose JSON text is already in the line
        cdef Member* text_member = NULL
        cdef int leading = 0
        for j in range(tool.count):
            values[j] = NULL
        try:
            for i in range(count):
                value = _value(&arguments[i])
                Py_INCREF(value)
                values[slots[i]] = <PyObject*>value
                if arguments[i].kind == V_STR:
                    text_arg = value
                    text_member = &arguments[i]
            while leading < tool.count and values[leading] != NULL:
                leading += 1
            self._due()
            try:
                if leading == count and leading <= tool.positional:
                    result = PyObject_Vectorcall(tool.func, values, leading | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL)
                else:
                    kwargs = PyDict_New()
                    for j in range(tool.count):
                        if values[j] != NULL:
                            PyDict_SetItem(kwargs, tool.field_keys[j], <object>values[j])
                    result = tool.func(**kwargs)
            except HANDLER_FAULTS as error:
                self._emit_body(rid, rid_len, tool.failed(error), modern)
                return 1
            except InputRequired:
                from shipcode_mcp.eras import asked_without_context

                self._emit_answer(rid, rid_len, asked_without_context("tools/call").tail)
                return 1
        finally:
            for j in range(tool.count):
                if values[j] != NULL:
                    Py_DECREF(<object>values[j])
        if text_member != NULL and result is text_arg:
            # Returned unchanged: its JSON text is the input's.
            self._emit_text(rid, rid_len, <const char*>text_member.val, text_member.val_len, modern)
        elif not self._emit_value(rid, rid_len, result, modern):
            try:
                body = tool_result(result, False)
            except HANDLER_FAULTS as error:
                body = tool.failed(error)
            self._emit_body(rid, rid_len, body, modern)
        return 1

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
