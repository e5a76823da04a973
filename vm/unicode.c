/*
** unicode.c — character classes and case mappings for str methods.
** ASCII is handled by fast paths; everything else is looked up in tables
** generated from CPython 3.11's own Unicode data (unicode_tables.h), so
** upper(), isalpha(), repr() and friends agree with CPython.
*/
#include "unicode.h"

#include <stdint.h>
#include <string.h>

typedef struct Range {
    uint32_t lo, hi;
} Range;

/* Binary search in a sorted table of disjoint inclusive ranges. */
static bool in_ranges(const Range *r, size_t n, uint32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < r[mid].lo)
            hi = mid;
        else if (c > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* For c in [lo, hi] with (c - lo) % stride == 0 the mapping is c + delta. */
typedef struct CaseRun {
    uint32_t lo, hi;
    int32_t delta;
    uint32_t stride;
} CaseRun;

/* A run of decimal digits: lo has the value first. */
typedef struct DecRange {
    uint32_t lo, hi;
    int first;
} DecRange;

typedef struct SpecialCase {
    uint32_t c;
    uint32_t map[3]; /* 0-terminated when shorter */
} SpecialCase;

#include "unicode_tables.h"

#define IN(table, c) in_ranges(table, NELEM(table), c)

size_t uc_count(const char *s, size_t len) {
    size_t n = 0, i = 0;
    const unsigned char *p = (const unsigned char *)s;
    /* eight bytes at a time: a continuation byte has bit 7 set and bit 6
    ** clear; (w << 1) brings each byte's bit 6 under its bit 7 */
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t cont = (w & ~(w << 1) & 0x8080808080808080u) >> 7;
        n += 8 - (size_t)((cont * 0x0101010101010101u) >> 56);
    }
    for (; i < len; i++)
        n += (p[i] & 0xC0) != 0x80;
    return n;
}

size_t uc_offset(const char *s, size_t len, size_t ci) {
    size_t off = 0;
    while (ci > 0 && off < len) {
        off += (size_t)uc_seqlen((unsigned char)s[off]);
        ci--;
    }
    return off < len ? off : len;
}

size_t uc_index(const char *s, size_t off) {
    return uc_count(s, off);
}

/* ---- character classes ---- */

bool uc_isspace(uint32_t c) {
    if (c < 0x80)
        return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    return IN(space_ranges, c);
}

bool uc_islinebreak(uint32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
           c == 0x85 || c == 0x2028 || c == 0x2029;
}

bool uc_isalpha(uint32_t c) {
    if (c < 0x80)
        return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return IN(alpha_ranges, c);
}

int uc_decimal_value(uint32_t c) {
    if (c < 0x80)
        return c >= '0' && c <= '9' ? (int)(c - '0') : -1;
    size_t lo = 0, hi = NELEM(decimal_ranges);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < decimal_ranges[mid].lo)
            hi = mid;
        else if (c > decimal_ranges[mid].hi)
            lo = mid + 1;
        else
            return decimal_ranges[mid].first + (int)(c - decimal_ranges[mid].lo);
    }
    return -1;
}

bool uc_isdecimal(uint32_t c) {
    return uc_decimal_value(c) >= 0;
}

bool uc_isdigit(uint32_t c) {
    if (c < 0x80)
        return c >= '0' && c <= '9';
    return IN(digit_ranges, c);
}

bool uc_isnumeric(uint32_t c) {
    if (c < 0x80)
        return c >= '0' && c <= '9';
    return IN(numeric_ranges, c);
}

/* Looks c up in a sorted run table; returns c when unmapped. */
static uint32_t map_runs(const CaseRun *r, size_t n, uint32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < r[mid].lo)
            hi = mid;
        else if (c > r[mid].hi)
            lo = mid + 1;
        else {
            if ((c - r[mid].lo) % r[mid].stride == 0)
                return (uint32_t)((int64_t)c + r[mid].delta);
            return c;
        }
    }
    return c;
}

uint32_t uc_tolower(uint32_t c) {
    if (c < 0x80)
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    return map_runs(lower_runs, NELEM(lower_runs), c);
}

uint32_t uc_toupper(uint32_t c) {
    if (c < 0x80)
        return c >= 'a' && c <= 'z' ? c - 32 : c;
    return map_runs(upper_runs, NELEM(upper_runs), c);
}

bool uc_istitle(uint32_t c) {
    return c >= 0x80 && IN(title_ranges, c);
}

bool uc_islower(uint32_t c) {
    if (c < 0x80)
        return c >= 'a' && c <= 'z';
    return IN(lower_ranges, c);
}

bool uc_isupper(uint32_t c) {
    if (c < 0x80)
        return c >= 'A' && c <= 'Z';
    return IN(upper_ranges, c);
}

bool uc_iscased(uint32_t c) {
    return uc_islower(c) || uc_isupper(c) || uc_istitle(c);
}

bool uc_iscase_ignorable(uint32_t c) {
    return IN(case_ignorable_ranges, c);
}

bool uc_isprintable(uint32_t c) {
    if (c < 0x80)
        return c >= 0x20 && c < 0x7F;
    return IN(printable_ranges, c);
}

bool uc_isid_start(uint32_t c) {
    if (c < 0x80)
        return c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    return IN(id_start_ranges, c);
}

bool uc_isid_continue(uint32_t c) {
    if (c < 0x80)
        return c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    return IN(id_continue_ranges, c);
}

/* ---- full (possibly multi-character) case mappings ---- */

/* Copies the special mapping of c from a table sorted by c; returns its
** length, or 0 when c has none. */
static int special(const SpecialCase *t, size_t n, uint32_t c, uint32_t out[3]) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < t[mid].c)
            hi = mid;
        else if (c > t[mid].c)
            lo = mid + 1;
        else {
            int k = 0;
            while (k < 3 && t[mid].map[k])
                out[k] = t[mid].map[k], k++;
            return k;
        }
    }
    return 0;
}

int uc_upper_full(uint32_t c, uint32_t out[3]) {
    if (c >= 0x80) {
        int k = special(special_upper, NELEM(special_upper), c, out);
        if (k)
            return k;
    }
    out[0] = uc_toupper(c);
    return 1;
}

int uc_lower_full(uint32_t c, uint32_t out[3]) {
    if (c >= 0x80) {
        int k = special(special_lower, NELEM(special_lower), c, out);
        if (k)
            return k;
    }
    out[0] = uc_tolower(c);
    return 1;
}

int uc_title_full(uint32_t c, uint32_t out[3]) {
    if (c >= 0x80) {
        int k = special(special_title, NELEM(special_title), c, out);
        if (k)
            return k;
    }
    out[0] = uc_toupper(c);
    return 1;
}

int uc_fold_full(uint32_t c, uint32_t out[3]) {
    if (c >= 0x80) {
        int k = special(special_fold, NELEM(special_fold), c, out);
        if (k)
            return k;
    }
    return uc_lower_full(c, out);
}
