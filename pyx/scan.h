/* Byte scanning for the compiled engine (declared to Cython in scan.pxd, compiled with _engine_c.pyx).

   How many bytes of a JSON string need no closer look, 16 at a time with SSE2 and 8 at a time
   elsewhere, and the powers of ten a double holds exactly. Cython cannot express the SIMD
   intrinsics; here compilers and linters see them. */
#ifndef SHIPCODE_MCP_SCAN_H
#define SHIPCODE_MCP_SCAN_H

#include <Python.h>
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

#endif /* SHIPCODE_MCP_SCAN_H */
