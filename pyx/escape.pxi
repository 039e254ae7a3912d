# JSON string text and base64, written straight into the output buffer (included by _engine_c.pyx).
#
# The twins of what the Python encoders write: orjson's string escapes (shipcode_mcp.jsontext.dumps)
# and base64.b64encode (shipcode_mcp.handlers.Resource.body), byte for byte.


cdef bint _escape_free(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """True when UTF-8 text needs no escape in a JSON string: its JSON text (``shipcode_mcp.jsontext.dumps``)
    is itself in quotes."""
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
    """The length of UTF-8 text as the characters of a JSON string, escaped as orjson escapes
    (``shipcode_mcp.jsontext.dumps``)."""
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
    """Write UTF-8 text as the characters of a JSON string (``_escaped_size`` bytes); the end.

    Twin: ``shipcode_mcp.jsontext.dumps`` of a str, without its quotes.
    """
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
    """Write bytes in standard base64 with padding (``(n + 2) // 3 * 4`` bytes); the end.

    Twin: the ``base64.b64encode`` of ``shipcode_mcp.handlers.Resource.body``.
    """
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


cdef inline Py_ssize_t _put(char* out, const char* text, Py_ssize_t n) noexcept nogil:
    memcpy(out, text, n)
    return n
