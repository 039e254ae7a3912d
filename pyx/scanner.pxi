# The JSON scanner of the fast path (included by _engine_c.pyx; declarations in scan.pxd).
#
# A strict subset of JSON read straight from the line's bytes into Member records: plain strings,
# short integers, finite numbers, true/false/null, objects of those, and params._meta. Anything
# else returns 0 and the line rules (shipcode_mcp.lines) judge the line, as they do on the pure
# engine for every line.


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
    """True when the bytes are all blank. Twin: ``not data.strip(BLANK_BYTES)`` in
    ``shipcode_mcp._engine_py.Engine._skip`` and ``shipcode_mcp.lines``."""
    cdef Py_ssize_t i
    for i in range(n):
        if not _BLANK_BYTE[p[i]]:
            return False
    return True


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
