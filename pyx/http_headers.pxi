# What the engine reads of an HTTP request: its body as bytes and the header values the fast path
# compares with it (included by _engine_c.pyx, for Engine.fast, Engine.http_modern and
# Engine.plain_headers).


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
    characters other than visible ASCII, space and tab (HTTP refuses those itself).

    Twin: ``shipcode_mcp.transports.http.headers.clean_value``.
    """
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
