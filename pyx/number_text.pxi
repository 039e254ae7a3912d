# ECMAScript number text of a double (included by _engine_c.pyx; the constants are in scan.pxd).
#
# The twin of shipcode_mcp.jsontext.number_text, byte for byte.


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
    cdef unsigned long long limit = 1000000000000000  # 10 ** MAX_SHORT_DIGITS
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


cdef Py_ssize_t _repr_text(double value, char* out) except -1:
    """Write a double as Python's ``repr`` does when that has no exponent (``0.0`` and 1e-4 <= |x| < 1e16, where
    ECMAScript's digits and point are repr's, which adds ``.0`` to a whole number): its length; else 0.

    The twin of :func:`shipcode_mcp.layouts.plain_text` for those values.
    """
    cdef double size = fabs(value)
    cdef Py_ssize_t n, i
    if value == 0:
        if copysign(1.0, value) < 0:
            return 0
        return _put(out, "0.0", 3)
    if not (size >= 1e-4 and size < 1e16):
        return 0
    n = _number_text(value, out)
    for i in range(n):
        if out[i] == 46:  # '.'
            return n
    return n + _put(out + n, ".0", 2)
