/*
** codecs.c — str.encode and bytes.decode for the codecs every program
** needs: utf-8, ascii, latin-1, utf-16 and utf-32 (with and without
** byte order), with the standard error handlers (strict, ignore, replace,
** backslashreplace, surrogateescape, surrogatepass, xmlcharrefreplace).
** Error ranges and messages follow CPython 3.11 exactly, since programs
** print them. A gpy str is UTF-8 in which a lone surrogate is stored as
** its 3-byte form, so the encoders see surrogates as code points.
*/
#include <ctype.h>
#include <string.h>

#include "bytes.h"
#include "unicode.h"
#include "vm.h"

typedef enum Codec {
    CODEC_UTF8, CODEC_ASCII, CODEC_LATIN1,
    CODEC_UTF16, CODEC_UTF16LE, CODEC_UTF16BE,
    CODEC_UTF32, CODEC_UTF32LE, CODEC_UTF32BE,
    CODEC_CP1252,
} Codec;

static const char *const codec_names[] = {"utf-8",     "ascii",     "latin-1",  "utf-16",   "utf-16-le",
                                          "utf-16-be", "utf-32",    "utf-32-le", "utf-32-be",
                                          "charmap" /* cp1252: CPython's errors name the charmap codec */};

/* cp1252's bytes 0x80-0x9f (0: undefined); the others are latin-1 */
static const uint16_t cp1252_high[32] = {
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
};

/* The cp1252 byte for cp, or -1. */
static int cp1252_byte(uint32_t cp) {
    if (cp < 0x80 || (cp >= 0xA0 && cp <= 0xFF)) return (int)cp;
    for (int i = 0; i < 32; i++)
        if (cp1252_high[i] && cp1252_high[i] == cp) return 0x80 + i;
    return -1;
}

typedef enum ErrHandler {
    ERR_STRICT, ERR_IGNORE, ERR_REPLACE, ERR_BACKSLASH, ERR_SURROGATEESCAPE, ERR_SURROGATEPASS, ERR_XMLCHARREF,
    ERR_UNKNOWN,
} ErrHandler;

/* CPython's normalization (case folded, runs of punctuation and spaces
** become '_') followed by its alias table, for the codecs we have. */
static Codec codec_lookup(VM *vm, const char *name) {
    char norm[64];
    size_t n = 0;
    bool pending = false;
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || c == '.') {
            if (pending && n > 0 && n < sizeof norm - 1) norm[n++] = '_';
            pending = false;
            if (n < sizeof norm - 1) norm[n++] = (char)tolower(c);
        } else {
            pending = true;
        }
    }
    norm[n] = 0;
    static const struct {
        const char *alias;
        Codec codec;
    } aliases[] = {
        {"utf_8", CODEC_UTF8},        {"utf8", CODEC_UTF8},         {"u8", CODEC_UTF8},
        {"utf", CODEC_UTF8},          {"cp65001", CODEC_UTF8},      {"utf8_ucs2", CODEC_UTF8},
        {"utf8_ucs4", CODEC_UTF8},    {"ascii", CODEC_ASCII},       {"us_ascii", CODEC_ASCII},
        {"646", CODEC_ASCII},         {"us", CODEC_ASCII},          {"ansi_x3.4_1968", CODEC_ASCII},
        {"cp367", CODEC_ASCII},       {"latin_1", CODEC_LATIN1},    {"latin1", CODEC_LATIN1},
        {"latin", CODEC_LATIN1},      {"l1", CODEC_LATIN1},         {"iso_8859_1", CODEC_LATIN1},
        {"iso8859_1", CODEC_LATIN1},  {"iso8859", CODEC_LATIN1},    {"8859", CODEC_LATIN1},
        {"cp819", CODEC_LATIN1},      {"iso_ir_100", CODEC_LATIN1}, {"utf_16", CODEC_UTF16},
        {"utf16", CODEC_UTF16},       {"u16", CODEC_UTF16},         {"utf_16_le", CODEC_UTF16LE},
        {"utf_16le", CODEC_UTF16LE},  {"unicodelittleunmarked", CODEC_UTF16LE},
        {"utf_16_be", CODEC_UTF16BE}, {"utf_16be", CODEC_UTF16BE},  {"unicodebigunmarked", CODEC_UTF16BE},
        {"utf_32", CODEC_UTF32},      {"utf32", CODEC_UTF32},       {"u32", CODEC_UTF32},
        {"utf_32_le", CODEC_UTF32LE}, {"utf_32le", CODEC_UTF32LE},  {"utf_32_be", CODEC_UTF32BE},
        {"utf_32be", CODEC_UTF32BE},
        {"cp1252", CODEC_CP1252},     {"windows_1252", CODEC_CP1252},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(norm, aliases[i].alias) == 0) return aliases[i].codec;
    vm_raise_kind(vm, LookupError, "unknown encoding: %s", name);
}

bool codec_is_utf8(VM *vm, const char *encoding) {
    return codec_lookup(vm, encoding) == CODEC_UTF8;
}

static ErrHandler handler_lookup(const char *errors) {
    if (!errors || strcmp(errors, "strict") == 0) return ERR_STRICT;
    if (strcmp(errors, "ignore") == 0) return ERR_IGNORE;
    if (strcmp(errors, "replace") == 0) return ERR_REPLACE;
    if (strcmp(errors, "backslashreplace") == 0) return ERR_BACKSLASH;
    if (strcmp(errors, "surrogateescape") == 0) return ERR_SURROGATEESCAPE;
    if (strcmp(errors, "surrogatepass") == 0) return ERR_SURROGATEPASS;
    if (strcmp(errors, "xmlcharrefreplace") == 0) return ERR_XMLCHARREF;
    return ERR_UNKNOWN;
}

/* UnicodeError's attributes (encoding, object, start, end, reason). */
static void set_exc_attrs(VM *vm, Value exc, const char *enc, Value obj, int64_t start, int64_t end,
                          const char *reason) {
    vm_setattr(vm, exc, str_cstr(vm, "encoding"), STR_VAL(str_cstr(vm, enc)));
    vm_setattr(vm, exc, str_cstr(vm, "object"), obj);
    vm_setattr(vm, exc, str_cstr(vm, "start"), INT_VAL(start));
    vm_setattr(vm, exc, str_cstr(vm, "end"), INT_VAL(end));
    vm_setattr(vm, exc, str_cstr(vm, "reason"), STR_VAL(str_cstr(vm, reason)));
}

/* ================================================================ decoding */

typedef struct Dec {
    VM *vm;
    const uint8_t *p;
    int64_t n;
    const char *name; /* for messages */
    const char *errors;
    ErrHandler handler;
    int unit;  /* utf-16: 2, utf-32: 4, else 0 (surrogatepass) */
    bool big;  /* utf-16/32 byte order, once known */
    StrBuf out;
} Dec;

static void put_cp(StrBuf *sb, uint32_t cp) {
    char buf[4];
    sb_append(sb, buf, (size_t)uc_encode(cp, buf));
}

_Noreturn static void decode_raise(Dec *d, int64_t start, int64_t end, const char *reason) {
    VM *vm = d->vm;
    Bytes *obj = bytes_new(vm, d->p, d->n);
    vm_push_root(vm, OBJ_VAL(obj));
    sb_free(&d->out);
    Str *msg = end - start == 1
                   ? str_printf(vm, "'%s' codec can't decode byte 0x%02x in position %lld: %s", d->name, d->p[start],
                                (long long)start, reason)
                   : str_printf(vm, "'%s' codec can't decode bytes in position %lld-%lld: %s", d->name,
                                (long long)start, (long long)(end - 1), reason);
    Value exc = exc_new_msg(vm, vm->exc[EXC_UnicodeDecodeError], msg->chars);
    vm_push_root(vm, exc);
    set_exc_attrs(vm, exc, d->name, OBJ_VAL(obj), start, end, reason);
    vm_throw(vm, exc);
}

/* Applies the error handler to bytes [start, end); returns where decoding
** resumes (end, except for surrogateescape). */
static int64_t decode_error(Dec *d, int64_t start, int64_t end, const char *reason) {
    switch (d->handler) {
    case ERR_IGNORE: return end;
    case ERR_REPLACE: put_cp(&d->out, 0xFFFD); return end;
    case ERR_BACKSLASH:
        for (int64_t i = start; i < end; i++) sb_printf(&d->out, "\\x%02x", d->p[i]);
        return end;
    case ERR_SURROGATEESCAPE: {
        /* CPython's handler takes the leading bytes >= 0x80, at most 4, and
        ** decoding goes on after them */
        int64_t i = start;
        while (i < end && i - start < 4 && d->p[i] >= 0x80) put_cp(&d->out, 0xDC00 + d->p[i++]);
        if (i == start) decode_raise(d, start, end, reason);
        return i;
    }
    case ERR_UNKNOWN:
        sb_free(&d->out);
        vm_raise_kind(d->vm, LookupError, "unknown error handler name '%s'", d->errors);
    case ERR_XMLCHARREF:
        sb_free(&d->out);
        vm_raise_kind(d->vm, TypeError, "don't know how to handle UnicodeDecodeError in error callback");
    case ERR_SURROGATEPASS:
        if (d->unit) {
            /* one surrogate code unit passes; the codec calls again for more */
            if (d->n - start >= d->unit) {
                const uint8_t *q = d->p + start;
                uint32_t ch = 0;
                for (int b = 0; b < d->unit; b++) ch |= (uint32_t)q[d->big ? d->unit - 1 - b : b] << (8 * b);
                if (ch >= 0xD800 && ch <= 0xDFFF) {
                    put_cp(&d->out, ch);
                    return start + d->unit;
                }
            }
        }
        decode_raise(d, start, end, reason);
    default: decode_raise(d, start, end, reason);
    }
}

static inline bool cont(uint8_t c) { return (c & 0xC0) == 0x80; }

static void decode_utf8(Dec *d) {
    const uint8_t *p = d->p;
    int64_t n = d->n, i = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            int64_t j = i;
            while (j < n && p[j] < 0x80) j++;
            sb_append(&d->out, (const char *)p + i, (size_t)(j - i));
            i = j;
            continue;
        }
        int need;
        uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (c >= 0xC2 && c <= 0xDF) need = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 3;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F; /* no surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 4;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            i = decode_error(d, i, i + 1, "invalid start byte");
            continue;
        }
        /* how many bytes after the lead are valid (CPython reports the
        ** error over the lead and those) */
        int ok = 0;
        bool bad = false;
        for (int k = 1; k < need; k++) {
            if (i + k >= n) break;
            uint8_t b = p[i + k];
            bool valid = k == 1 ? (b >= lo && b <= hi) : cont(b);
            if (!valid) {
                bad = true;
                break;
            }
            ok++;
        }
        if (bad && c == 0xED && d->handler == ERR_SURROGATEPASS && i + 2 < n && p[i + 1] >= 0xA0 && p[i + 1] <= 0xBF &&
            cont(p[i + 2])) {
            /* surrogatepass: an encoded surrogate is kept (a gpy str stores it so) */
            sb_append(&d->out, (const char *)p + i, 3);
            i += 3;
            continue;
        }
        if (bad) {
            i = decode_error(d, i, i + 1 + ok, "invalid continuation byte");
            continue;
        }
        if (ok < need - 1) {
            i = decode_error(d, i, n, "unexpected end of data");
            continue;
        }
        sb_append(&d->out, (const char *)p + i, (size_t)need);
        i += need;
    }
}

static void decode_ascii(Dec *d) {
    for (int64_t i = 0; i < d->n;) {
        if (d->p[i] < 0x80) sb_putc(&d->out, (char)d->p[i++]);
        else i = decode_error(d, i, i + 1, "ordinal not in range(128)");
    }
}

static void decode_latin1(Dec *d) {
    for (int64_t i = 0; i < d->n; i++) put_cp(&d->out, d->p[i]);
}

static void decode_cp1252(Dec *d) {
    for (int64_t i = 0; i < d->n;) {
        uint8_t b = d->p[i];
        uint32_t cp = b >= 0x80 && b < 0xA0 ? cp1252_high[b - 0x80] : b;
        if (cp) {
            put_cp(&d->out, cp);
            i++;
        } else if (b == 0) {
            sb_putc(&d->out, 0);
            i++;
        } else {
            i = decode_error(d, i, i + 1, "character maps to <undefined>");
        }
    }
}

static void decode_utf16(Dec *d, int order /* 0: BOM or little, 1: little, 2: big */) {
    const uint8_t *p = d->p;
    int64_t n = d->n, i = 0;
    bool big = order == 2;
    d->unit = 2;
    if (order == 0) {
        if (n >= 2 && p[0] == 0xFF && p[1] == 0xFE) i = 2;
        else if (n >= 2 && p[0] == 0xFE && p[1] == 0xFF) {
            i = 2;
            big = true;
        }
        d->name = big ? "utf-16-be" : "utf-16-le";
    }
    d->big = big;
#define UNIT(k) (big ? (uint32_t)(p[k] << 8 | p[(k) + 1]) : (uint32_t)(p[(k) + 1] << 8 | p[k]))
    while (i < n) {
        if (n - i < 2) {
            i = decode_error(d, i, n, "truncated data");
            continue;
        }
        uint32_t u = UNIT(i);
        if (u < 0xD800 || u > 0xDFFF) {
            put_cp(&d->out, u);
            i += 2;
        } else if (u >= 0xDC00) {
            i = decode_error(d, i, i + 2, "illegal encoding");
        } else if (n - i < 4) {
            i = decode_error(d, i, n, "unexpected end of data");
        } else {
            uint32_t u2 = UNIT(i + 2);
            if (u2 >= 0xDC00 && u2 <= 0xDFFF) {
                put_cp(&d->out, 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00));
                i += 4;
            } else {
                i = decode_error(d, i, i + 2, "illegal UTF-16 surrogate");
            }
        }
    }
#undef UNIT
}

static void decode_utf32(Dec *d, int order) {
    const uint8_t *p = d->p;
    int64_t n = d->n, i = 0;
    bool big = order == 2;
    d->unit = 4;
    if (order == 0) {
        if (n >= 4 && p[0] == 0xFF && p[1] == 0xFE && p[2] == 0 && p[3] == 0) i = 4;
        else if (n >= 4 && p[0] == 0 && p[1] == 0 && p[2] == 0xFE && p[3] == 0xFF) {
            i = 4;
            big = true;
        }
        d->name = big ? "utf-32-be" : "utf-32-le";
    }
    d->big = big;
    while (i < n) {
        if (n - i < 4) {
            i = decode_error(d, i, n, "truncated data");
            continue;
        }
        uint32_t u = big ? (uint32_t)p[i] << 24 | (uint32_t)p[i + 1] << 16 | (uint32_t)p[i + 2] << 8 | p[i + 3]
                         : (uint32_t)p[i + 3] << 24 | (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 1] << 8 | p[i];
        if (u > 0x10FFFF) i = decode_error(d, i, i + 4, "code point not in range(0x110000)");
        else if (u >= 0xD800 && u < 0xE000)
            i = decode_error(d, i, i + 4, "code point in surrogate code point range(0xd800, 0xe000)");
        else {
            put_cp(&d->out, u);
            i += 4;
        }
    }
}

Str *codec_decode(VM *vm, const uint8_t *p, int64_t n, const char *encoding, const char *errors) {
    Codec c = encoding ? codec_lookup(vm, encoding) : CODEC_UTF8;
    Dec d = {.vm = vm, .p = p, .n = n, .name = codec_names[c], .errors = errors, .handler = handler_lookup(errors)};
    sb_init(&d.out);
    switch (c) {
    case CODEC_UTF8: decode_utf8(&d); break;
    case CODEC_ASCII: decode_ascii(&d); break;
    case CODEC_LATIN1: decode_latin1(&d); break;
    case CODEC_UTF16: decode_utf16(&d, 0); break;
    case CODEC_UTF16LE: decode_utf16(&d, 1); break;
    case CODEC_UTF16BE: decode_utf16(&d, 2); break;
    case CODEC_UTF32: decode_utf32(&d, 0); break;
    case CODEC_UTF32LE: decode_utf32(&d, 1); break;
    case CODEC_UTF32BE: decode_utf32(&d, 2); break;
    case CODEC_CP1252: decode_cp1252(&d); break;
    }
    return sb_finish(vm, &d.out);
}

/* ================================================================ encoding */

typedef struct Enc {
    VM *vm;
    Str *s;
    Codec codec;
    const char *name;
    const char *errors;
    ErrHandler handler;
    bool big;
    StrBuf out;
} Enc;

/* Writes one code point in the target codec (known to be encodable). */
static void emit(Enc *e, uint32_t cp) {
    switch (e->codec) {
    case CODEC_UTF8: put_cp(&e->out, cp); break;
    case CODEC_ASCII: case CODEC_LATIN1: sb_putc(&e->out, (char)cp); break;
    case CODEC_CP1252: sb_putc(&e->out, (char)cp1252_byte(cp)); break;
    case CODEC_UTF16: case CODEC_UTF16LE: case CODEC_UTF16BE: {
        uint32_t units[2];
        int nu = 1;
        if (cp >= 0x10000) {
            units[0] = 0xD800 + ((cp - 0x10000) >> 10);
            units[1] = 0xDC00 + ((cp - 0x10000) & 0x3FF);
            nu = 2;
        } else {
            units[0] = cp;
        }
        for (int k = 0; k < nu; k++) {
            char b[2] = {(char)(units[k] & 0xFF), (char)(units[k] >> 8)};
            if (e->big) {
                char t = b[0];
                b[0] = b[1];
                b[1] = t;
            }
            sb_append(&e->out, b, 2);
        }
        break;
    }
    default: {
        char b[4] = {(char)(cp & 0xFF), (char)((cp >> 8) & 0xFF), (char)((cp >> 16) & 0xFF), (char)(cp >> 24)};
        if (e->big) {
            char r[4] = {b[3], b[2], b[1], b[0]};
            memcpy(b, r, 4);
        }
        sb_append(&e->out, b, 4);
    }
    }
}

static void emit_ascii(Enc *e, const char *s) {
    while (*s) emit(e, (unsigned char)*s++);
}

static bool encodable(Enc *e, uint32_t cp) {
    switch (e->codec) {
    case CODEC_ASCII: return cp < 0x80;
    case CODEC_LATIN1: return cp < 0x100;
    case CODEC_CP1252: return cp1252_byte(cp) >= 0;
    default: return cp < 0xD800 || cp > 0xDFFF;
    }
}

_Noreturn static void encode_raise(Enc *e, const uint32_t *cps, int64_t start, int64_t end, const char *reason) {
    VM *vm = e->vm;
    sb_free(&e->out);
    Str *msg;
    if (end - start == 1) {
        uint32_t c = cps[start];
        const char *fmt = c <= 0xFF     ? "'%s' codec can't encode character '\\x%02x' in position %lld: %s"
                          : c <= 0xFFFF ? "'%s' codec can't encode character '\\u%04x' in position %lld: %s"
                                        : "'%s' codec can't encode character '\\U%08x' in position %lld: %s";
        msg = str_printf(vm, fmt, e->name, (unsigned)c, (long long)start, reason);
    } else {
        msg = str_printf(vm, "'%s' codec can't encode characters in position %lld-%lld: %s", e->name,
                         (long long)start, (long long)(end - 1), reason);
    }
    Value exc = exc_new_msg(vm, vm->exc[EXC_UnicodeEncodeError], msg->chars);
    vm_push_root(vm, exc);
    set_exc_attrs(vm, exc, e->name, STR_VAL(e->s), start, end, reason);
    vm_throw(vm, exc);
}

static void encode_error(Enc *e, const uint32_t *cps, int64_t start, int64_t end, const char *reason) {
    char buf[16];
    switch (e->handler) {
    case ERR_IGNORE: return;
    case ERR_REPLACE:
        for (int64_t i = start; i < end; i++) emit(e, '?');
        return;
    case ERR_BACKSLASH:
        for (int64_t i = start; i < end; i++) {
            uint32_t c = cps[i];
            snprintf(buf, sizeof buf, c <= 0xFF ? "\\x%02x" : c <= 0xFFFF ? "\\u%04x" : "\\U%08x", (unsigned)c);
            emit_ascii(e, buf);
        }
        return;
    case ERR_XMLCHARREF:
        for (int64_t i = start; i < end; i++) {
            snprintf(buf, sizeof buf, "&#%u;", (unsigned)cps[i]);
            emit_ascii(e, buf);
        }
        return;
    case ERR_SURROGATEESCAPE:
        /* the error names the range from the first character it cannot take */
        for (int64_t i = start; i < end; i++)
            if (cps[i] < 0xDC80 || cps[i] > 0xDCFF) encode_raise(e, cps, i, end, reason);
        /* the raw bytes must fill whole code units of utf-16/32 (CPython's rule) */
        if ((e->codec >= CODEC_UTF16 && e->codec <= CODEC_UTF16BE && (end - start) % 2) ||
            (e->codec >= CODEC_UTF32 && e->codec <= CODEC_UTF32BE && (end - start) % 4))
            encode_raise(e, cps, start, end, reason);
        for (int64_t i = start; i < end; i++) sb_putc(&e->out, (char)(cps[i] - 0xDC00));
        return;
    case ERR_SURROGATEPASS:
        if (e->codec == CODEC_ASCII || e->codec == CODEC_LATIN1 || e->codec == CODEC_CP1252) encode_raise(e, cps, start, end, reason);
        for (int64_t i = start; i < end; i++) {
            if (e->codec == CODEC_UTF8) put_cp(&e->out, cps[i]);
            else emit(e, cps[i]); /* a surrogate is one unit in utf-16/32 */
        }
        return;
    case ERR_UNKNOWN:
        sb_free(&e->out);
        vm_raise_kind(e->vm, LookupError, "unknown error handler name '%s'", e->errors);
    default: encode_raise(e, cps, start, end, reason);
    }
}

Bytes *codec_encode(VM *vm, Str *s, const char *encoding, const char *errors) {
    Codec c = encoding ? codec_lookup(vm, encoding) : CODEC_UTF8;
    /* the common case: valid UTF-8 out of a str without surrogates */
    if (c == CODEC_UTF8 || ((c == CODEC_ASCII || c == CODEC_LATIN1) && s->ascii)) {
        bool plain = true;
        if (!s->ascii)
            for (int64_t i = 0; i + 1 < s->len; i++)
                if ((uint8_t)s->chars[i] == 0xED && (uint8_t)s->chars[i + 1] >= 0xA0) {
                    plain = false;
                    break;
                }
        if (plain) return bytes_new(vm, s->chars, s->len);
    }
    Enc e = {.vm = vm, .s = s, .codec = c, .name = codec_names[c], .errors = errors, .handler = handler_lookup(errors)};
    e.big = c == CODEC_UTF16BE || c == CODEC_UTF32BE;
    /* the code points, so that an error range can look ahead; kept in a
    ** GC object (a bytes) so that a raise leaks nothing */
    int64_t n = s->nchars;
    Bytes *holder = bytes_alloc(vm, n * (int64_t)sizeof(uint32_t));
    vm_push_root(vm, OBJ_VAL(holder));
    size_t pos = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t c = uc_decode(s->chars, &pos);
        memcpy(holder->data + i * (int64_t)sizeof c, &c, sizeof c);
    }
    const uint32_t *cp = (const uint32_t *)(void *)holder->data;
    sb_init(&e.out);
    if (c == CODEC_UTF16) sb_append(&e.out, "\xff\xfe", 2);
    if (c == CODEC_UTF32) sb_append(&e.out, "\xff\xfe\x00\x00", 4);
    const char *reason = c == CODEC_ASCII ? "ordinal not in range(128)"
                         : c == CODEC_LATIN1 ? "ordinal not in range(256)"
                         : c == CODEC_CP1252 ? "character maps to <undefined>"
                                             : "surrogates not allowed";
    for (int64_t i = 0; i < n;) {
        uint32_t ch;
        memcpy(&ch, cp + i, sizeof ch);
        if (encodable(&e, ch)) {
            emit(&e, ch);
            i++;
            continue;
        }
        int64_t j = i + 1;
        /* utf-8, ascii and latin-1 report a run of unencodable characters;
        ** utf-16/32 one character at a time (as CPython) */
        bool runs = c == CODEC_UTF8 || c == CODEC_ASCII || c == CODEC_LATIN1 || c == CODEC_CP1252;
        while (runs) {
            if (j >= n) break;
            uint32_t cj;
            memcpy(&cj, cp + j, sizeof cj);
            if (encodable(&e, cj)) break;
            j++;
        }
        encode_error(&e, cp, i, j, reason);
        i = j;
    }
    Bytes *r = bytes_new(vm, e.out.data ? e.out.data : "", (int64_t)e.out.len);
    sb_free(&e.out);
    vm_pop_roots(vm, 1);
    return r;
}

/* ================================================================ methods */

static const char *str_or_null(VM *vm, Value v, const char *fname, int argno) {
    if (IS_EMPTY(v)) return NULL;
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "%s() argument '%s' must be str, not %s", fname, argno == 1 ? "encoding" : "errors",
                      vm_type_name(vm, v));
    return AS_STR(v)->chars;
}

static void parse_enc_args(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, Value *enc, Value *err) {
    if (argc > 3) vm_raise_kind(vm, TypeError, "%s() takes at most 2 arguments (%d given)", fname, argc - 1);
    *enc = argc > 1 ? argv[1] : EMPTY_VAL;
    *err = argc > 2 ? argv[2] : EMPTY_VAL;
    if (kwargs && kwargs->count > 0) {
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v)) {
            const char *kname = IS_STR(vm, k) ? AS_STR(k)->chars : "?";
            if (strcmp(kname, "encoding") == 0 && argc <= 1) *enc = v;
            else if (strcmp(kname, "errors") == 0 && argc <= 2) *err = v;
            else if (strcmp(kname, "encoding") == 0 || strcmp(kname, "errors") == 0)
                vm_raise_kind(vm, TypeError, "argument for %s() given by name ('%s') and position (%d)", fname, kname,
                              strcmp(kname, "encoding") == 0 ? 1 : 2);
            else vm_raise_kind(vm, TypeError, "%s() got an unexpected keyword argument '%s'", fname, kname);
        }
    }
}

Value codec_str_encode_method(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc < 1 || !IS_STR(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "descriptor 'encode' for 'str' objects doesn't apply to a '%s' object",
                      argc < 1 ? "NoneType" : vm_type_name(vm, argv[0]));
    Value enc, err;
    parse_enc_args(vm, "encode", argc, argv, kwargs, &enc, &err);
    const char *e = str_or_null(vm, enc, "encode", 1), *er = str_or_null(vm, err, "encode", 2);
    return OBJ_VAL(codec_encode(vm, AS_STR(argv[0]), e, er));
}

Value codec_bytes_decode_method(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value enc, err;
    parse_enc_args(vm, "decode", argc, argv, kwargs, &enc, &err);
    const char *e = str_or_null(vm, enc, "decode", 1), *er = str_or_null(vm, err, "decode", 2);
    BufferView v;
    buffer_need(vm, argv[0], &v);
    return STR_VAL(codec_decode(vm, v.buf, v.len, e, er));
}
