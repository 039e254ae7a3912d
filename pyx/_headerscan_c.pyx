# cython: language_level=3
"""The header scan, compiled: the twin of :mod:`shipcode_mcp.transports.http._headerscan_py`, picked by
:mod:`shipcode_mcp.transports.http._headerscan`; its own extension module, apart from the engine.

The same public names as the pure twin, each named there; the names of the headers read are the pure
twin's (:data:`~shipcode_mcp.transports.http._headerscan_py.HEADERS_READ`), so a header is added there only.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
from libc.string cimport memchr, memcmp

from shipcode_mcp.transports.http._headerscan_py import HEADERS_READ, MAX_FIELDS, MAX_LENGTH_DIGITS, NOT_WHOLE

IMPLEMENTATION = "compiled"

# The names of HEADERS_READ as C strings, for plain_headers.
cdef tuple _HEADERS = HEADERS_READ
cdef int _HEADER_COUNT = min(len(_HEADERS), 16)
cdef const char* _HEADER_TEXT[16]
cdef Py_ssize_t _HEADER_LEN[16]
for _k in range(_HEADER_COUNT):
    _HEADER_TEXT[_k] = PyBytes_AS_STRING(_HEADERS[_k])
    _HEADER_LEN[_k] = PyBytes_GET_SIZE(_HEADERS[_k])
cdef bytes _VERSION = b"mcp-protocol-version"
cdef bytes _METHOD = b"mcp-method"
cdef bytes _NAME = b"mcp-name"


def plain_headers(raw):
    """The values of the headers of ``HEADERS_READ`` present in ``raw`` (an ASGI header list), by name,
    when it is plain; else None. Twin: ``shipcode_mcp.transports.http._headerscan_py.plain_headers``."""
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


cdef object _header_value(object value):
    """A header value (bytes) trimmed of spaces and tabs, the same object when there is nothing to trim;
    None when it is not bytes or holds characters other than visible ASCII, space and tab.

    Twin: ``shipcode_mcp.transports.http._headerscan_py.header_value``.
    """
    cdef const char* p
    cdef Py_ssize_t size, i, start = 0
    cdef unsigned char c
    if type(value) is not bytes:
        return None
    p = PyBytes_AS_STRING(value)
    size = PyBytes_GET_SIZE(value)
    for i in range(size):
        c = p[i]
        if c != 9 and (c < 32 or c > 126):
            return None
    while start < size and (p[start] == 32 or p[start] == 9):
        start += 1
    while size > start and (p[size - 1] == 32 or p[size - 1] == 9):
        size -= 1
    if start == 0 and size == PyBytes_GET_SIZE(value):
        return value
    return PyBytes_FromStringAndSize(p + start, size - start)


def header_value(value):
    """As the pure twin's: ``_header_value`` for Python."""
    return _header_value(value)


cdef inline object _found(dict first, bytes name):
    cdef PyObject* value = PyDict_GetItem(first, name)
    return None if value == NULL else <object>value


def fast_fields(dict first):
    """The header values the engine's fast path compares with a 2026-07-28 body: ``(version, method,
    name)`` trimmed, or None. Twin: ``shipcode_mcp.transports.http._headerscan_py.fast_fields``."""
    version = _header_value(_found(first, _VERSION))
    if version is None:
        return None
    method = _header_value(_found(first, _METHOD))
    if method is None:
        return None
    name = _found(first, _NAME)
    if name is not None:
        name = _header_value(name)
        if name is None or (PyBytes_GET_SIZE(name) >= 9 and memcmp(PyBytes_AS_STRING(name), b"=?base64?", 9) == 0):
            return None
    return version, method, name


# whole_request's tables: a token's characters (a field name), and a field value's (visible ASCII, space, tab).
cdef unsigned char _TOKEN_CHAR[256]
cdef unsigned char _VALUE_CHAR[256]
for _k in range(256):
    _TOKEN_CHAR[_k] = 1 if (48 <= _k <= 57 or 65 <= _k <= 90 or 97 <= _k <= 122
                            or chr(_k) in "!#$%&'*+.^_`|~-") else 0
    _VALUE_CHAR[_k] = 1 if (_k == 9 or 32 <= _k <= 126) else 0
cdef frozenset _NOT_WHOLE = NOT_WHOLE
cdef int _MAX_FIELDS = MAX_FIELDS
cdef int _MAX_LENGTH_DIGITS = MAX_LENGTH_DIGITS
cdef bytes _CONTENT_LENGTH = b"content-length"


cdef inline Py_ssize_t _head_end(const char* p, Py_ssize_t start, Py_ssize_t size):
    """Where the first CRLF CRLF at or after ``start`` begins, or -1."""
    cdef const char* found
    cdef Py_ssize_t at = start
    while at + 4 <= size:
        found = <const char*>memchr(p + at, 13, size - at - 3)
        if found == NULL:
            return -1
        at = found - p
        if p[at + 1] == 10 and p[at + 2] == 13 and p[at + 3] == 10:
            return at
        at += 1
    return -1


def whole_request(bytes data, tuple heads, Py_ssize_t max_head):
    """``(method, fields, body)`` of one whole plain request, or None.
    Twin: ``shipcode_mcp.transports.http._headerscan_py.whole_request``."""
    cdef const char* p = PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t start = -1, end, at, line_end, colon, v0, v1, k
    cdef Py_ssize_t length = -1
    cdef int count = 0
    cdef unsigned char c
    cdef char name[256]
    cdef object method = None
    cdef bytes line, lowered, value
    cdef list fields
    for pair in heads:
        line = (<tuple>pair)[0]
        if size >= PyBytes_GET_SIZE(line) and memcmp(p, PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line)) == 0:
            start = PyBytes_GET_SIZE(line)
            method = (<tuple>pair)[1]
            break
    if start < 0:
        return None
    end = _head_end(p, start - 2, size)
    if end < 0 or end + 4 > max_head:
        return None
    fields = []
    at = start
    while at < end:
        line_end = at
        while p[line_end] != 13:  # the CR of the field line's CRLF (at end at the latest)
            line_end += 1
        if p[line_end + 1] != 10:  # a CR alone
            return None
        count += 1
        if count > _MAX_FIELDS:
            return None
        colon = at
        while colon < line_end and _TOKEN_CHAR[<unsigned char>p[colon]]:
            colon += 1
        if colon == at or colon == line_end or p[colon] != 58 or colon - at > 255:
            return None
        for k in range(colon + 1, line_end):
            if not _VALUE_CHAR[<unsigned char>p[k]]:
                return None
        for k in range(colon - at):
            c = p[at + k]
            name[k] = c + 32 if 65 <= c <= 90 else c
        lowered = PyBytes_FromStringAndSize(name, colon - at)
        if lowered in _NOT_WHOLE:
            return None
        v0 = colon + 1
        v1 = line_end
        while v0 < v1 and (p[v0] == 32 or p[v0] == 9):
            v0 += 1
        while v1 > v0 and (p[v1 - 1] == 32 or p[v1 - 1] == 9):
            v1 -= 1
        if lowered == _CONTENT_LENGTH:
            if length >= 0 or v1 == v0 or v1 - v0 > _MAX_LENGTH_DIGITS:
                return None
            length = 0
            for k in range(v0, v1):
                c = p[k]
                if c < 48 or c > 57:
                    return None
                length = length * 10 + (c - 48)
        value = PyBytes_FromStringAndSize(p + v0, v1 - v0)
        fields.append((lowered, value))
        at = line_end + 2
    if size - (end + 4) != (length if length >= 0 else 0):
        return None
    return method, fields, PyBytes_FromStringAndSize(p + end + 4, size - end - 4)
