# cython: language_level=3
"""The header scan, compiled: the twin of :mod:`shipcode_mcp.transports.http._headerscan_py`, picked by
:mod:`shipcode_mcp.transports.http._headerscan`; its own extension module, apart from the engine.

The same public names as the pure twin, each named there; the names of the headers read are the pure
twin's (:data:`~shipcode_mcp.transports.http._headerscan_py.HEADERS_READ`), so a header is added there only.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
from libc.string cimport memcmp

from shipcode_mcp.transports.http._headerscan_py import HEADERS_READ

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
