/*
** unicode.h — private to the string code (str.c, format.c): UTF-8
** decoding/encoding and character classes. The classes and case
** mappings follow CPython 3.11 (Unicode 14.0) through generated tables.
*/
#ifndef GPY_UNICODE_H
#define GPY_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes the code point starting at s[*pos] (valid UTF-8 assumed; a stray
** byte decodes as itself) and advances *pos past it. */
static inline uint32_t uc_decode(const char *s, size_t *pos) {
    const unsigned char *p = (const unsigned char *)s + *pos;
    uint32_t c = p[0];
    if (c < 0x80) {
        *pos += 1;
        return c;
    }
    if (c >= 0xF0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) {
        *pos += 4;
        return ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) | ((uint32_t)(p[2] & 0x3F) << 6) |
               (p[3] & 0x3F);
    }
    if (c >= 0xE0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
        *pos += 3;
        return ((c & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    }
    if (c >= 0xC0 && (p[1] & 0xC0) == 0x80) {
        *pos += 2;
        return ((c & 0x1F) << 6) | (p[1] & 0x3F);
    }
    *pos += 1;
    return c;
}

/* Byte length of the UTF-8 sequence starting with lead byte b. */
static inline int uc_seqlen(unsigned char b) {
    return b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
}

/* Encodes cp as UTF-8 into out (4 bytes room); returns the byte count. */
static inline int uc_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Number of code points in s[0..len) (continuation bytes not counted). */
size_t uc_count(const char *s, size_t len);
/* Byte offset of code point index ci within s (ci <= nchars). */
size_t uc_offset(const char *s, size_t len, size_t ci);
/* Code point index of byte offset off (off on a character boundary). */
size_t uc_index(const char *s, size_t off);

bool uc_isspace(uint32_t c);     /* str.isspace / split() whitespace */
bool uc_islinebreak(uint32_t c); /* splitlines() boundaries */
bool uc_isalpha(uint32_t c);
bool uc_isdecimal(uint32_t c);
bool uc_isdigit(uint32_t c);
bool uc_isnumeric(uint32_t c);
bool uc_isupper(uint32_t c);
bool uc_islower(uint32_t c);
bool uc_istitle(uint32_t c);     /* titlecase letters like U+01C5 */
bool uc_iscased(uint32_t c);
bool uc_iscase_ignorable(uint32_t c); /* for the final-sigma rule of lower() */
bool uc_isprintable(uint32_t c); /* for repr(): false means escape it */
bool uc_isid_start(uint32_t c);
bool uc_isid_continue(uint32_t c);
/* Decimal value of a decimal digit, or -1. */
int uc_decimal_value(uint32_t c);

/* Full case mappings: write up to 3 code points into out, return count
** (e.g. U+00DF upper -> "SS"). */
int uc_upper_full(uint32_t c, uint32_t out[3]);
int uc_lower_full(uint32_t c, uint32_t out[3]);
int uc_title_full(uint32_t c, uint32_t out[3]);
int uc_fold_full(uint32_t c, uint32_t out[3]);
/* Simple one-to-one mappings (unchanged when there is none). */
uint32_t uc_toupper(uint32_t c);
uint32_t uc_tolower(uint32_t c);

#endif
