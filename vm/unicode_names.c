/*
** unicode_names.c — looking up Unicode character names in the compressed
** tables of unicode_names_data.c (layout: scripts/gen_unicode_names.py).
** Entries are decoded a block at a time: each entry shares leading words
** with the one before it, so a block is read from its start.
*/
#include "unicode_names.h"

#include <stdio.h>
#include <string.h>

#include "unicode_names_data.h"

#define ONE_BYTE_CODES 192 /* word codes below this take one byte (the generator's ONE) */
#define MAX_SHARED 16

static uint32_t le(const uint8_t *p, int width) {
    uint32_t v = 0;
    for (int i = width - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* The state of a walk through one block: the last entry decoded. */
typedef struct Walk {
    const uint8_t *p;
    uint32_t cp;
    char name[UNICODE_NAME_MAX];
    size_t len;
    size_t word_end[MAX_SHARED]; /* where each of its first words ends in name */
    int nwords;
} Walk;

static void walk_start(Walk *w, uint32_t block) {
    w->p = un_data + le(un_block_offset + 4 * block, 4);
    w->cp = le(un_block_first + 3 * block, 3);
    w->len = 0;
    w->nwords = 0;
}

static void append(Walk *w, const char *s, size_t n) {
    if (w->len + n >= UNICODE_NAME_MAX) n = UNICODE_NAME_MAX - 1 - w->len; /* never: names are shorter */
    memcpy(w->name + w->len, s, n);
    w->len += n;
    w->name[w->len] = '\0';
}

/* Decodes the next entry of the block. */
static void walk_next(Walk *w) {
    const uint8_t *p = w->p;
    uint32_t delta = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = *p++;
        delta |= (uint32_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) break;
    }
    w->cp += delta;
    int skip = *p >> 4;
    size_t n = *p++ & 15;
    if (n == 0) n = *p++;
    const uint8_t *end = p + n;
    w->len = skip ? w->word_end[skip - 1] : 0;
    w->name[w->len] = '\0';
    w->nwords = skip;
    while (p < end) {
        char sep = ' ';
        if (*p == 0) {
            sep = '-';
            p++;
        }
        uint32_t code = *p++;
        if (code >= ONE_BYTE_CODES) code = ((code - ONE_BYTE_CODES) << 8 | *p++) + ONE_BYTE_CODES;
        uint32_t from = le(un_word_offset + 4 * (code - 1), 4), to = le(un_word_offset + 4 * code, 4);
        if (w->nwords > 0 || w->len > 0) append(w, &sep, 1);
        append(w, (const char *)un_words + from, to - from);
        if (w->nwords < MAX_SHARED) w->word_end[w->nwords] = w->len;
        w->nwords++;
    }
    w->p = end;
}

/* Entry number i, decoded. */
static void entry_at(Walk *w, uint32_t i) {
    walk_start(w, i / un_block);
    for (uint32_t k = 0; k <= i % un_block; k++) walk_next(w);
}

/* ------------------------------------------------------------ Hangul */

/* The syllable names' parts (Unicode's jamo short names), in the order of
** the syllables' arithmetic: cp = 0xAC00 + (l * 21 + v) * 28 + t. */
static const char *const jamo_l[19] = {"G", "GG", "N", "D", "DD", "R", "M", "B", "BB", "S",
                                       "SS", "", "J", "JJ", "C", "K", "T", "P", "H"};
static const char *const jamo_v[21] = {"A",  "AE", "YA", "YAE", "EO", "E",  "YEO", "YE", "O",  "WA", "WAE",
                                       "OE", "YO", "U",  "WEO", "WE", "WI", "YU",  "EU", "YI", "I"};
static const char *const jamo_t[28] = {"",  "G",  "GG", "GS", "N",  "NJ", "NH", "D",  "L", "LG",
                                       "LM", "LB", "LS", "LT", "LP", "LH", "M",  "B",  "BS", "S",
                                       "SS", "NG", "J",  "C",  "K",  "T",  "P",  "H"};
#define HANGUL_PREFIX "HANGUL SYLLABLE "

/* The longest of parts[0..n) that s starts with; -1 when none (the empty part matches). */
static int longest_part(const char *s, const char *const *parts, int n, size_t *used) {
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(parts[i]);
        if (strncmp(s, parts[i], l) == 0 && (best < 0 || l > best_len)) {
            best = i;
            best_len = l;
        }
    }
    *used = best_len;
    return best;
}

static int32_t hangul_lookup(const char *s) {
    size_t n;
    int l = longest_part(s, jamo_l, 19, &n);
    if (l < 0) return -1;
    s += n;
    int v = longest_part(s, jamo_v, 21, &n);
    if (v < 0) return -1;
    s += n;
    int t = longest_part(s, jamo_t, 28, &n);
    if (t < 0 || s[n] != '\0') return -1;
    return 0xAC00 + (l * 21 + v) * 28 + t;
}

/* ------------------------------------------------------------ lookups */

static int32_t alias_lookup(const char *s) {
    uint32_t lo = 0, hi = un_naliases;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = strcmp(un_aliases[mid].name, s);
        if (c == 0) return (int32_t)un_aliases[mid].cp;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

#define CJK_PREFIX "CJK UNIFIED IDEOGRAPH-"

/* A code point in one of the ranges of prefix. */
static bool in_ranges(const char *prefix, uint32_t cp) {
    for (uint32_t j = 0; j < un_nranges; j++)
        if (strcmp(un_ranges[j].prefix, prefix) == 0 && cp >= un_ranges[j].first && cp <= un_ranges[j].last)
            return true;
    return false;
}

/* CJK UNIFIED IDEOGRAPH-XXXX as CPython reads it: case-sensitive, 4 or 5
** upper-case hex digits (a leading zero allowed). s has no NUL inside. */
static int32_t cjk_lookup(const char *s, size_t len) {
    size_t pl = sizeof CJK_PREFIX - 1;
    if (len != pl + 4 && len != pl + 5) return -1;
    uint32_t cp = 0;
    for (size_t i = pl; i < len; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        cp = cp * 16 + (uint32_t)d;
    }
    return in_ranges(CJK_PREFIX, cp) ? (int32_t)cp : -1;
}

/* The other PREFIX-XXXX names are ordinary names to CPython (case-insensitive,
** written exactly as name() gives them): s is upper-cased. */
static int32_t range_lookup(const char *s) {
    for (uint32_t i = 0; i < un_nranges; i++) {
        const UnicodeNameRange *r = &un_ranges[i];
        size_t pl = strlen(r->prefix);
        if (strcmp(r->prefix, CJK_PREFIX) == 0 || strncmp(s, r->prefix, pl) != 0) continue;
        uint32_t cp = 0;
        const char *h = s + pl;
        size_t nd = strlen(h);
        if (nd < 4 || nd > 6) return -1;
        for (const char *q = h; *q; q++) {
            int d = *q >= '0' && *q <= '9' ? *q - '0' : *q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;
            if (d < 0) return -1;
            cp = cp * 16 + (uint32_t)d;
        }
        char canon[16];
        snprintf(canon, sizeof canon, "%04X", (unsigned)cp);
        return strcmp(canon, h) == 0 && in_ranges(r->prefix, cp) ? (int32_t)cp : -1;
    }
    return -1;
}

int32_t unicode_lookup_name(const char *name, size_t len) {
    char s[UNICODE_NAME_MAX];
    if (len == 0 || len >= sizeof s) return -1;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if ((unsigned char)c >= 0x80 || c == '\0') return -1;
        s[i] = c;
    }
    s[len] = '\0';
    /* the algorithmic names are case-sensitive in CPython, the others not */
    if (strncmp(s, HANGUL_PREFIX, sizeof HANGUL_PREFIX - 1) == 0) return hangul_lookup(s + sizeof HANGUL_PREFIX - 1);
    if (strncmp(s, CJK_PREFIX, sizeof CJK_PREFIX - 1) == 0) return cjk_lookup(s, len);
    for (size_t i = 0; i < len; i++)
        if (s[i] >= 'a' && s[i] <= 'z') s[i] = (char)(s[i] - 'a' + 'A');
    int32_t cp = range_lookup(s);
    if (cp >= 0) return cp;
    uint32_t lo = 0, hi = un_nentries;
    Walk w;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        entry_at(&w, le(un_sorted + 2 * mid, 2));
        int c = strcmp(w.name, s);
        if (c == 0) return (int32_t)w.cp;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return alias_lookup(s);
}

bool unicode_char_name(uint32_t cp, char buf[UNICODE_NAME_MAX]) {
    if (cp >= 0xAC00 && cp <= 0xD7A3) {
        uint32_t i = cp - 0xAC00;
        snprintf(buf, UNICODE_NAME_MAX, "%s%s%s%s", HANGUL_PREFIX, jamo_l[i / (21 * 28)], jamo_v[i / 28 % 21],
                 jamo_t[i % 28]);
        return true;
    }
    for (uint32_t j = 0; j < un_nranges; j++) {
        if (cp >= un_ranges[j].first && cp <= un_ranges[j].last) {
            snprintf(buf, UNICODE_NAME_MAX, "%s%04X", un_ranges[j].prefix, (unsigned)cp);
            return true;
        }
    }
    uint32_t nblocks = (un_nentries + un_block - 1) / un_block;
    uint32_t lo = 0, hi = nblocks;
    while (hi - lo > 1) { /* the last block whose first code point is <= cp */
        uint32_t mid = (lo + hi) / 2;
        if (le(un_block_first + 3 * mid, 3) <= cp) lo = mid;
        else hi = mid;
    }
    Walk w;
    walk_start(&w, lo);
    uint32_t count = lo + 1 < nblocks ? un_block : un_nentries - lo * un_block;
    for (uint32_t k = 0; k < count; k++) {
        walk_next(&w);
        if (w.cp == cp) {
            memcpy(buf, w.name, w.len + 1);
            return true;
        }
        if (w.cp > cp) break;
    }
    return false;
}
