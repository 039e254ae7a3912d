# Declarations of the JSON scanner (scanner.pxi): scan.h's C, the kinds of values it accepts, its limits
# and the records it fills.

cdef extern from "scan.h":
    int TRAILING_ZERO_BITS(unsigned long long value) noexcept nogil  # value != 0
    const double EXACT_POWERS_OF_TEN[23]
    # How many bytes from p need no escape in a JSON string (and are ASCII when ascii is set),
    # up to the last 7 bytes, which are left to the caller.
    Py_ssize_t plain_run(const unsigned char* p, const unsigned char* end, int ascii) noexcept nogil


# The kinds of values the scanner accepts (Member.kind).
cdef enum ValueKind:
    V_STR = 1
    V_INT = 2
    V_TRUE = 3
    V_FALSE = 4
    V_NULL = 5
    V_OBJ = 6
    V_FLOAT = 7
    V_META = 8    # params._meta, scanned into a Meta

# What the scanner takes on; anything beyond goes to the slow path.
cdef enum:
    MAX_MEMBERS = 16     # members of one object
    MAX_DEPTH = 8        # nesting skipped inside _meta before the slow path decides
    MAX_INT_DIGITS = 18  # digits of an integer it reads itself
    MAX_META_CACHE = 1024  # bytes of the last _meta object, kept to recognise it next time

# Doubles: what is exact in one.
cdef enum:
    MAX_EXACT_DIGITS = 15  # a decimal mantissa of this many digits is below 2**53: exact in a double
    MAX_EXACT_POWER = 22   # the largest power of ten a double holds exactly
    MAX_SHORT_DIGITS = 15  # DBL_DIG: two decimals of this many digits never read as the same double
    DOUBLE_EXACT_BITS = 53  # every integer below 2**53 is a double


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
