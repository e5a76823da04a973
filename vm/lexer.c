/*
** lexer.c — Python 3.11 tokenizer. The whole source becomes an array of
** tokens before parsing starts (free lookahead for the parser).
**
** Errors come in two flavours, as in CPython: "hard" ones (bad characters,
** unterminated strings, bad number literals, unmatched brackets) win over
** any parser error, so lexing stops and reports them at once; "soft" ones
** (indentation mismatches, a stray '$', end of input inside brackets) end the
** token stream with a TK_ERROR token that the parser reports only if it gets
** that far without finding an earlier error.
*/
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"

#define TABSIZE 8

static const char *const kw_text[] = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break",
    "class", "continue", "def", "del", "elif", "else", "except", "finally",
    "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
};

static const char *const op_text[] = {
    "(", ")", "[", "]", "{", "}", ":", ",", ";", ".", "...", "->", ":=",
    "+", "-", "*", "/", "|", "&", "<", ">", "=", "%", "~", "^", "@",
    "**", "//", "<<", ">>", "==", "!=", "<=", ">=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "**=", "//=", "@=", "?",
};

const char *lex_keyword_text(int kind) {
    if (kind >= TK_KW_FIRST && kind <= TK_KW_LAST) return kw_text[kind - TK_KW_FIRST];
    return NULL;
}

const char *lex_kind_name(int kind) {
    static const char *const names[] = {"end of input", "NEWLINE", "INDENT", "DEDENT", "NAME",
                                        "NUMBER", "NUMBER", "NUMBER", "STRING", "ERROR"};
    if (kind >= 0 && kind < TK_KW_FIRST) return names[kind];
    if (kind <= TK_KW_LAST) return kw_text[kind - TK_KW_FIRST];
    if (kind < TK__COUNT) return op_text[kind - TK_LPAR];
    return "?";
}

/* ---------------------------------------------------------------- UTF-8 */

int32_t lex_utf8_decode(const unsigned char *s, size_t n, int *used) {
    *used = 1;
    if (n == 0) return -1;
    unsigned c = s[0];
    if (c < 0x80) return (int32_t)c;
    int len;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return -1;
    if ((size_t)len > n) return -1;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return -1;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    *used = len;
    return (int32_t)cp;
}

int lex_utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
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

/* Python's str.isprintable() is false for these (controls, format chars,
** separators other than ' ', private use). An approximation without the
** Unicode database that covers the characters people actually paste. */
static bool cp_nonprintable(uint32_t c) {
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0)) return true;
    if (c == 0xAD || c == 0x061C || c == 0x180E || c == 0x1680 || c == 0xFEFF) return true;
    if (c >= 0x0600 && c <= 0x0605) return true;
    if (c >= 0x2000 && c <= 0x200F) return true;
    if (c >= 0x2028 && c <= 0x202F) return true;
    if (c >= 0x205F && c <= 0x206F) return true;
    if (c == 0x3000) return true;
    if (c >= 0xD800 && c <= 0xF8FF) return true; /* surrogates, private use */
    if (c >= 0xFFF9 && c <= 0xFFFB) return true;
    if (c >= 0xE0000) return !(c >= 0xE0100 && c <= 0xE01EF); /* tags, private use (not variation selectors) */
    return false;
}

/* Approximates Unicode XID_Continue for non-ASCII code points: everything is
** accepted except punctuation/symbol blocks and non-printables. */
static bool cp_is_id(uint32_t c) {
    if (cp_nonprintable(c)) return false;
    if (c >= 0xA1 && c <= 0xBF) return c == 0xAA || c == 0xB5 || c == 0xBA || c == 0xB7;
    if (c == 0xD7 || c == 0xF7) return false;
    if (c >= 0x2010 && c <= 0x206F) return c == 0x203F || c == 0x2040 || c == 0x2054;
    if (c >= 0x2070 && c <= 0x209F) return c == 0x2071 || c == 0x207F || (c >= 0x2090 && c <= 0x209C);
    if (c >= 0x20A0 && c <= 0x20CF) return false; /* currency */
    if (c >= 0x2150 && c <= 0x215F) return false; /* vulgar fractions */
    if (c >= 0x2189 && c <= 0x2BFF) return false; /* arrows, math, shapes, dingbats... */
    if (c >= 0x2E00 && c <= 0x2E7F) return false;
    if (c >= 0x3000 && c <= 0x303F)
        return (c >= 0x3005 && c <= 0x3007) || (c >= 0x3021 && c <= 0x302F) ||
               (c >= 0x3031 && c <= 0x3035) || (c >= 0x3038 && c <= 0x303C);
    if (c >= 0xFE10 && c <= 0xFE6F) return c == 0xFE33 || c == 0xFE34 || (c >= 0xFE4D && c <= 0xFE4F);
    if (c >= 0xFF01 && c <= 0xFF0F) return false;
    if (c >= 0xFF1A && c <= 0xFF20) return false;
    if (c >= 0xFF3B && c <= 0xFF40) return c == 0xFF3F;
    if (c >= 0xFF5B && c <= 0xFF65) return false;
    if (c >= 0xFFF0 && c <= 0xFFFF) return false;
    if (c >= 0x1F000 && c <= 0x1FBFF) return c >= 0x1FBF0 && c <= 0x1FBF9; /* emoji... */
    return true;
}

/* Combining marks may continue an identifier but not start one. */
static bool cp_is_id_start(uint32_t c) {
    if (!cp_is_id(c)) return false;
    if (c == 0xB7 || c == 0x203F || c == 0x2040 || c == 0x2054) return false;
    if (c >= 0x0300 && c <= 0x036F) return false;
    if (c >= 0xFF10 && c <= 0xFF19) return false;
    return true;
}

/* ------------------------------------------------------------ the lexer */

/* Column (0-based bytes) of pointer q on the current line. */
static int col_of(Lexer *lx, const char *q) {
    return (int)(q - lx->line_start) + lx->col_base;
}

/* Records a hard error at 1-based (col, end_col) on line. */
static bool hard_error(Lexer *lx, int line, int col, int end_col, const char *fmt, ...) {
    if (lx->failed) return false;
    lx->failed = true;
    SyntaxErr *e = lx->err;
    e->line = line;
    e->col = col;
    e->end_col = end_col;
    e->indentation = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return false;
}

/* Appends a token; returns NULL when out of memory. */
static Token *push_tok(Lexer *lx, int kind, const char *start, const char *endp) {
    if (lx->ntoks == lx->cap) {
        int ncap = lx->cap ? lx->cap * 2 : 256;
        Token *nt = realloc(lx->toks, (size_t)ncap * sizeof(Token));
        if (!nt) {
            lx->oom = true;
            return NULL;
        }
        lx->toks = nt;
        lx->cap = ncap;
    }
    Token *t = &lx->toks[lx->ntoks++];
    memset(t, 0, sizeof *t);
    t->kind = (uint8_t)kind;
    t->line = t->end_line = lx->line;
    t->col = col_of(lx, start);
    t->end_col = col_of(lx, endp);
    t->start = start;
    t->len = (int)(endp - start);
    return t;
}

/* Ends the stream with a soft error token (1-based error columns). */
static bool soft_error(Lexer *lx, int line, int col, int end_col, int flags, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lx->msg, sizeof lx->msg, fmt, ap);
    va_end(ap);
    Token *t = push_tok(lx, TK_ERROR, lx->p, lx->p);
    if (!t) return false;
    t->line = t->end_line = line;
    t->col = t->end_col = col > 0 ? col - 1 : 0;
    TOK_ERR_COL(t) = col;
    TOK_ERR_END(t) = end_col;
    t->flags = (uint8_t)flags;
    t->v.msg = lx->msg;
    return true;
}

/* Reports a bad non-ASCII (or control) character at q. */
static bool bad_char(Lexer *lx, const char *q) {
    int used;
    int32_t cp = lex_utf8_decode((const unsigned char *)q, (size_t)(lx->end - q), &used);
    int col = col_of(lx, q) + 1;
    if (cp < 0) return hard_error(lx, lx->line, col, col, "invalid non-printable character U+%04X", (unsigned char)*q);
    if (cp_nonprintable((uint32_t)cp))
        return hard_error(lx, lx->line, col, col, "invalid non-printable character U+%04X", (unsigned)cp);
    return hard_error(lx, lx->line, col, col, "invalid character '%.*s' (U+%04X)", used, q, (unsigned)cp);
}

/* Moves past a newline sequence at lx->p ("\n", "\r\n" or "\r"). */
static void eat_newline(Lexer *lx) {
    if (*lx->p == '\r' && lx->p + 1 < lx->end && lx->p[1] == '\n') lx->p++;
    lx->p++;
    lx->line++;
    lx->line_start = lx->p;
    lx->col_base = 0;
}

static bool is_potential_id(int c) {
    return isalnum(c) || c == '_' || c >= 128;
}

/* Measures indentation at the start of a line and emits INDENT/DEDENT.
** Returns false on error. Sets *blank when the line has no tokens. */
static bool do_indent(Lexer *lx, bool *blank) {
    int col = 0, altcol = 0, cont_col = 0;
    const char *q = lx->p;
    for (; q < lx->end; q++) {
        if (*q == ' ') col++, altcol++;
        else if (*q == '\t') col = (col / TABSIZE + 1) * TABSIZE, altcol++;
        else if (*q == '\f') col = altcol = 0;
        else if (*q == '\\' && q + 1 < lx->end && (q[1] == '\n' || q[1] == '\r')) {
            /* indentation continued with a backslash: the first backslash
            ** found after some whitespace sets the level (as CPython) */
            if (!cont_col) cont_col = col;
            lx->p = q + 1;
            eat_newline(lx);
            q = lx->p - 1;
        } else break;
    }
    lx->p = q;
    if (q >= lx->end || *q == '#' || *q == '\n' || *q == '\r') {
        *blank = true;
        return true;
    }
    if (cont_col) col = altcol = cont_col;
    *blank = false;
    int top = lx->nindent;
    if (col == lx->indents[top]) {
        if (altcol != lx->altindents[top])
            return soft_error(lx, lx->line, 1, 0, LEXF_INDENTERR, "inconsistent use of tabs and spaces in indentation");
    } else if (col > lx->indents[top]) {
        if (top + 1 >= LEX_MAX_INDENT)
            return soft_error(lx, lx->line, 1, 0, LEXF_INDENTERR, "too many levels of indentation");
        if (altcol <= lx->altindents[top])
            return soft_error(lx, lx->line, 1, 0, LEXF_INDENTERR, "inconsistent use of tabs and spaces in indentation");
        lx->nindent++;
        lx->indents[lx->nindent] = col;
        lx->altindents[lx->nindent] = altcol;
        if (!push_tok(lx, TK_INDENT, q, q)) return false;
    } else {
        while (lx->nindent > 0 && col < lx->indents[lx->nindent]) {
            lx->nindent--;
            if (!push_tok(lx, TK_DEDENT, q, q)) return false;
        }
        if (col != lx->indents[lx->nindent]) {
            /* CPython reports the end of the offending line */
            const char *e = q;
            while (e < lx->end && *e != '\n' && *e != '\r') e++;
            return soft_error(lx, lx->line, col_of(lx, e) + 1, 0, LEXF_INDENTERR,
                              "unindent does not match any outer indentation level");
        }
        if (altcol != lx->altindents[lx->nindent])
            return soft_error(lx, lx->line, 1, 0, LEXF_INDENTERR, "inconsistent use of tabs and spaces in indentation");
    }
    return true;
}

/* Checks what follows a number literal (CPython's verify_end_of_number):
** a keyword that may legally follow ("1if x else y") is fine, any other
** identifier character is an error. q points just past the literal. */
static bool verify_end_of_number(Lexer *lx, const char *q, const char *kind) {
    if (q >= lx->end) return true;
    int c = (unsigned char)*q;
    size_t rest = (size_t)(lx->end - q);
    static const char *const ok_after[] = {"and", "else", "for", "if", "in", "is", "or", "not"};
    for (size_t i = 0; i < sizeof ok_after / sizeof ok_after[0]; i++) {
        size_t n = strlen(ok_after[i]);
        if (n <= rest && memcmp(q, ok_after[i], n) == 0) return true;
    }
    if (is_potential_id(c)) {
        int col = col_of(lx, q);
        return hard_error(lx, lx->line, col, col, "invalid %s literal", kind);
    }
    return true;
}

/* Reads digits of the given base with single '_' separators. On a bad
** separator reports "invalid <kind> literal". Returns the end pointer, or
** NULL on error. */
static const char *scan_digits(Lexer *lx, const char *q, int base, const char *kind) {
    for (;;) {
        while (q < lx->end && (base == 16 ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q) && *q - '0' < base))
            q++;
        if (q < lx->end && *q == '_') {
            const char *u = q + 1;
            bool ok = u < lx->end && (base == 16 ? isxdigit((unsigned char)*u) : isdigit((unsigned char)*u) && *u - '0' < base);
            if (!ok) {
                if (base != 10 && u < lx->end && isdigit((unsigned char)*u)) {
                    int col = col_of(lx, u) + 1;
                    hard_error(lx, lx->line, col, col, "invalid digit '%c' in %s literal", *u, kind);
                    return NULL;
                }
                int col = col_of(lx, q) + 1;
                hard_error(lx, lx->line, col, col, "invalid %s literal", kind);
                return NULL;
            }
            q = u;
            continue;
        }
        return q;
    }
}

/* Converts the digits in [s, e) (underscores skipped) of the given base
** into t->v.i, flagging values that do not fit in int64. */
static void int_value(Token *t, const char *s, const char *e, int base) {
    uint64_t v = 0;
    bool big = false;
    for (; s < e; s++) {
        if (*s == '_') continue;
        int d = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) big = true;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (big || v > (uint64_t)INT64_MAX) {
        t->flags |= LEXF_BIG;
        if (!big && v == (uint64_t)INT64_MAX + 1) t->flags |= LEXF_MINBIG;
        t->v.i = 0;
    } else {
        t->v.i = (int64_t)v;
    }
}

/* Converts a float literal in [s, e) (underscores skipped) with strtod. */
static double float_value(const char *s, const char *e) {
    char buf[128];
    char *heap = NULL, *b = buf;
    size_t n = (size_t)(e - s);
    if (n + 1 > sizeof buf) {
        heap = malloc(n + 1);
        if (!heap) return 0.0;
        b = heap;
    }
    size_t k = 0;
    for (; s < e; s++)
        if (*s != '_') b[k++] = *s;
    b[k] = 0;
    double d = strtod(b, NULL);
    free(heap);
    return d;
}

/* Lexes a number starting at lx->p (a digit, or '.' then a digit). */
static bool lex_number(Lexer *lx) {
    const char *s = lx->p, *q = s;
    const char *end = lx->end;
    bool is_float = false;
    if (*q == '0' && q + 1 < end && q[1] && strchr("xXoObB", q[1])) {
        char k = (char)tolower((unsigned char)q[1]);
        int base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
        const char *kind = k == 'x' ? "hexadecimal" : k == 'o' ? "octal" : "binary";
        q += 2;
        if (q < end && *q == '_') q++;
        bool ok = q < end && (base == 16 ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q) && *q - '0' < base);
        if (!ok) {
            if (base != 16 && q < end && isdigit((unsigned char)*q)) {
                int col = col_of(lx, q) + 1;
                return hard_error(lx, lx->line, col, col, "invalid digit '%c' in %s literal", *q, kind);
            }
            int col = col_of(lx, q);
            return hard_error(lx, lx->line, col, col, "invalid %s literal", kind);
        }
        const char *ds = q;
        q = scan_digits(lx, q, base, kind);
        if (!q) return false;
        if (base != 16 && q < end && isdigit((unsigned char)*q)) {
            int col = col_of(lx, q) + 1;
            return hard_error(lx, lx->line, col, col, "invalid digit '%c' in %s literal", *q, kind);
        }
        if (!verify_end_of_number(lx, q, kind)) return false;
        Token *t = push_tok(lx, TK_INT, s, q);
        if (!t) return false;
        int_value(t, ds, q, base);
        lx->p = q;
        return true;
    }
    if (*q != '.') {
        q = scan_digits(lx, q, 10, "decimal");
        if (!q) return false;
    }
    if (q < end && *q == '.') {
        is_float = true;
        q++;
        if (q < end && isdigit((unsigned char)*q)) {
            q = scan_digits(lx, q, 10, "decimal");
            if (!q) return false;
        }
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        const char *e = q + 1;
        if (e < end && (*e == '+' || *e == '-')) {
            e++;
            if (!(e < end && isdigit((unsigned char)*e))) {
                int col = col_of(lx, e);
                return hard_error(lx, lx->line, col, col, "invalid decimal literal");
            }
        }
        if (e < end && isdigit((unsigned char)*e)) {
            is_float = true;
            q = scan_digits(lx, e, 10, "decimal");
            if (!q) return false;
        } else {
            /* "1e" / "1else": the 'e' is not part of the number */
            if (!verify_end_of_number(lx, q, "decimal")) return false;
        }
    }
    int kind = is_float ? TK_FLOAT : TK_INT;
    if (q < end && (*q == 'j' || *q == 'J')) {
        kind = TK_IMAG;
        q++;
        if (!verify_end_of_number(lx, q, "imaginary")) return false;
    } else if (!verify_end_of_number(lx, q, "decimal")) {
        return false;
    }
    if (kind == TK_INT && *s == '0') {
        /* "0", "00", "0_0" are fine; "012" is not */
        const char *z = s;
        while (z < q && (*z == '0' || *z == '_')) z++;
        if (z < q) {
            int col = col_of(lx, s) + 1;
            return hard_error(lx, lx->line, col, col_of(lx, z) + 1,
                              "leading zeros in decimal integer literals are not permitted; "
                              "use an 0o prefix for octal integers");
        }
    }
    Token *t = push_tok(lx, kind, s, q);
    if (!t) return false;
    if (kind == TK_INT) int_value(t, s, q, 10);
    else t->v.f = float_value(s, kind == TK_IMAG ? q - 1 : q);
    lx->p = q;
    return true;
}

/* Returns the string prefix flags for an identifier of n bytes followed by
** a quote, or -1 when it is not a valid prefix. */
static int string_prefix(const char *s, int n) {
    if (n > 2) return -1;
    int flags = 0;
    bool u = false;
    for (int i = 0; i < n; i++) {
        int f;
        switch (s[i]) {
        case 'r': case 'R': f = LEXF_RAW; break;
        case 'b': case 'B': f = LEXF_BYTES; break;
        case 'f': case 'F': f = LEXF_FSTR; break;
        case 'u': case 'U': f = 0; u = true; break;
        default: return -1;
        }
        if (f & flags) return -1;
        flags |= f;
    }
    if (u && n != 1) return -1;
    if ((flags & LEXF_BYTES) && (flags & LEXF_FSTR)) return -1;
    return flags;
}

/* Lexes a string literal whose prefix starts at s and quote at lx->p. */
static bool lex_string(Lexer *lx, const char *s, int flags) {
    const char *q = lx->p;
    const char *end = lx->end;
    char quote = *q;
    int start_line = lx->line;
    int start_col = col_of(lx, s);
    const char *start_line_start = lx->line_start;
    int start_col_base = lx->col_base;
    int qsize = 1;
    if (q + 2 < end && q[1] == quote && q[2] == quote) qsize = 3;
    q += qsize;
    int quote_len = (int)(q - s);
    for (;;) {
        if (q >= end || (qsize == 1 && (*q == '\n' || *q == '\r'))) {
            /* CPython reports the line of the last character read */
            int det = lx->line;
            if (q >= end && q > lx->text && (q[-1] == '\n' || q[-1] == '\r') && det > start_line && q == lx->line_start)
                det--;
            lx->line_start = start_line_start;
            lx->col_base = start_col_base;
            if (qsize == 3)
                return hard_error(lx, start_line, start_col + 1, start_col + 1,
                                  "unterminated triple-quoted string literal (detected at line %d)", det);
            return hard_error(lx, start_line, start_col + 1, start_col + 1,
                              "unterminated string literal (detected at line %d)", det);
        }
        char c = *q;
        if (c == '\\') {
            q++;
            if (q < end && (*q == '\n' || *q == '\r')) {
                lx->p = q;
                eat_newline(lx);
                q = lx->p;
            } else if (q < end) {
                q++;
            }
            continue;
        }
        if (c == '\n' || c == '\r') {
            lx->p = q;
            eat_newline(lx);
            q = lx->p;
            continue;
        }
        if (c == quote) {
            if (qsize == 1) {
                q++;
                break;
            }
            if (q + 2 < end && q[1] == quote && q[2] == quote) {
                q += 3;
                break;
            }
        }
        q++;
    }
    /* a token may span lines: its start position is recorded separately */
    Token *t = push_tok(lx, TK_STRING, q, q);
    if (!t) return false;
    t->line = start_line;
    t->col = start_col;
    t->start = s;
    t->len = (int)(q - s);
    t->quote_len = (uint8_t)quote_len;
    t->flags = (uint8_t)(flags | (qsize == 3 ? LEXF_TRIPLE : 0));
    lx->p = q;
    return true;
}

/* Lexes an identifier, keyword or string prefix at lx->p. */
static bool lex_name(Lexer *lx) {
    const char *s = lx->p, *q = s;
    const char *end = lx->end;
    bool ascii = true;
    while (q < end && is_potential_id((unsigned char)*q)) {
        if ((unsigned char)*q >= 128) ascii = false;
        q++;
    }
    if (q < end && (*q == '"' || *q == '\'')) {
        int flags = string_prefix(s, (int)(q - s));
        if (flags >= 0) {
            lx->p = q;
            return lex_string(lx, s, flags);
        }
    }
    if (!ascii) {
        /* check every non-ASCII character is allowed in an identifier */
        for (const char *c = s; c < q;) {
            if ((unsigned char)*c < 128) {
                c++;
                continue;
            }
            int used;
            int32_t cp = lex_utf8_decode((const unsigned char *)c, (size_t)(q - c), &used);
            if (cp < 0 || !(c == s ? cp_is_id_start((uint32_t)cp) : cp_is_id((uint32_t)cp))) return bad_char(lx, c);
            c += used;
        }
    }
    int kind = TK_NAME;
    int n = (int)(q - s);
    if (ascii && n >= 2 && n <= 8) {
        for (int k = TK_KW_FIRST; k <= TK_KW_LAST; k++) {
            const char *kw = kw_text[k - TK_KW_FIRST];
            if ((int)strlen(kw) == n && memcmp(kw, s, (size_t)n) == 0) {
                kind = k;
                break;
            }
        }
    }
    if (!push_tok(lx, kind, s, q)) return false;
    lx->p = q;
    return true;
}

/* Matches the longest operator at q: returns its kind and length, or -1. */
static int match_op(const char *q, const char *end, int *len) {
    size_t rest = (size_t)(end - q);
    static const int three[] = {TK_ELLIPSIS, TK_LSHIFTEQ, TK_RSHIFTEQ, TK_DOUBLESTAREQ, TK_DOUBLESLASHEQ};
    static const int two[] = {TK_ARROW, TK_WALRUS, TK_DOUBLESTAR, TK_DOUBLESLASH, TK_LSHIFT,
                              TK_RSHIFT, TK_EQEQUAL, TK_NOTEQUAL, TK_LESSEQUAL, TK_GREATEREQUAL,
                              TK_PLUSEQ, TK_MINUSEQ, TK_STAREQ, TK_SLASHEQ, TK_PERCENTEQ,
                              TK_AMPEREQ, TK_VBAREQ, TK_CIRCUMFLEXEQ, TK_ATEQ};
    if (rest >= 3)
        for (size_t i = 0; i < sizeof three / sizeof three[0]; i++)
            if (memcmp(q, op_text[three[i] - TK_LPAR], 3) == 0) {
                *len = 3;
                return three[i];
            }
    if (rest >= 2)
        for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
            if (memcmp(q, op_text[two[i] - TK_LPAR], 2) == 0) {
                *len = 2;
                return two[i];
            }
    for (int k = TK_LPAR; k <= TK_AT; k++) {
        const char *t = op_text[k - TK_LPAR];
        if (t[1] == 0 && t[0] == *q) {
            *len = 1;
            return k;
        }
    }
    return -1;
}

/* Handles end of input: pending NEWLINE, DEDENTs and ENDMARKER, or the
** "was never closed" soft error. */
static bool lex_eof(Lexer *lx, bool line_has_tokens) {
    if (!lx->sub && lx->level > 0) {
        int i = lx->level - 1;
        return soft_error(lx, lx->parens[i].line, lx->parens[i].col + 1, 0, LEXF_EOFPAREN,
                          "'%c' was never closed", lx->parens[i].ch);
    }
    /* Where CPython reports errors at the end of input: ENDMARKER sits on
    ** the line of the last character at col 0 for "invalid syntax"; other
    ** errors there (and DEDENTs) point just past that line's text: kept in
    ** ENDMARKER's end_line/end_col */
    const char *e = lx->p;
    int eline = lx->line;
    if (e > lx->text && (e[-1] == '\n' || e[-1] == '\r') && eline > 1) {
        e -= (e[-1] == '\n' && e - 1 > lx->text && e[-2] == '\r') ? 2 : 1;
        eline--;
    }
    const char *ls = e;
    while (ls > lx->text && ls[-1] != '\n' && ls[-1] != '\r') ls--;
    int ecol = (int)(e - ls) + 1 + (eline == lx->line ? lx->col_base : 0);
    int last_char_line = eline;
    if (!lx->sub) {
        if (line_has_tokens && !push_tok(lx, TK_NEWLINE, lx->p, lx->p)) return false;
        while (lx->nindent > 0) {
            lx->nindent--;
            Token *t = push_tok(lx, TK_DEDENT, lx->p, lx->p);
            if (!t) return false;
            t->line = t->end_line = eline;
            t->col = t->end_col = ecol;
        }
    }
    Token *t = push_tok(lx, TK_ENDMARKER, lx->p, lx->p);
    if (!t) return false;
    if (!lx->sub) {
        t->line = last_char_line;
        t->col = 0;
        t->end_line = eline;
        t->end_col = ecol;
        t->flags = LEXF_FILEEND;
    }
    return true;
}

/* The tokenizer loop: false on a hard error or out of memory. */
static bool lex_run(Lexer *lx) {
    bool line_has_tokens = false;
    const char *comment = NULL; /* start of the last comment skipped */

    for (;;) {
        if (lx->failed || lx->oom) return false;
        if (lx->ntoks && lx->toks[lx->ntoks - 1].kind == TK_ERROR) return true;
        if (lx->at_bol) {
            lx->at_bol = false;
            bool blank;
            int before = lx->ntoks;
            if (!do_indent(lx, &blank)) return false;
            if (blank) {
                /* whitespace/comment-only lines produce no tokens */
            } else if (lx->ntoks > before && lx->toks[lx->ntoks - 1].kind == TK_ERROR) {
                return true;
            }
        }
        /* skip blanks */
        while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\f')) lx->p++;
        if (lx->p >= lx->end) {
            if (!lex_eof(lx, line_has_tokens)) return false;
            return true;
        }
        const char *s = lx->p;
        unsigned char c = (unsigned char)*s;
        bool in_brackets = lx->level > 0 || lx->sub;

        if (c == '#') {
            while (lx->p < lx->end && *lx->p != '\n' && *lx->p != '\r') lx->p++;
            comment = s;
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (!in_brackets && line_has_tokens) {
                /* like CPython, a NEWLINE after a comment spans the comment */
                const char *ns = comment && comment < s && comment >= lx->line_start ? comment : s;
                Token *t = push_tok(lx, TK_NEWLINE, ns, s);
                if (!t) return false;
                line_has_tokens = false;
            }
            eat_newline(lx);
            if (!in_brackets) lx->at_bol = true;
            continue;
        }
        if (c == '\\') {
            const char *n = s + 1;
            if (n >= lx->end) {
                int col1 = col_of(lx, n) + 1;
                if (!soft_error(lx, lx->line, col1, 0, 0, "unexpected EOF while parsing")) return false;
                return true;
            }
            if (*n != '\n' && *n != '\r') {
                int col1 = col_of(lx, n) + 1;
                if (!soft_error(lx, lx->line, col1, 0, 0, "unexpected character after line continuation character"))
                    return false;
                return true;
            }
            int bs_line = lx->line, bs_col = col_of(lx, s);
            lx->p = n;
            eat_newline(lx);
            if (lx->p >= lx->end && !in_brackets) {
                /* CPython points just past the backslash */
                if (!soft_error(lx, bs_line, bs_col + 2, 0, 0, "unexpected EOF while parsing")) return false;
                return true;
            }
            continue;
        }
        line_has_tokens = true;
        if (isalpha(c) || c == '_' || c >= 128) {
            if (c >= 128) {
                int used;
                int32_t cp = lex_utf8_decode((const unsigned char *)s, (size_t)(lx->end - s), &used);
                if (cp < 0 || !cp_is_id_start((uint32_t)cp)) return bad_char(lx, s);
            }
            if (!lex_name(lx)) return false;
            lx->toks[lx->ntoks - 1].level = (uint8_t)(lx->level + lx->sub);
            continue;
        }
        if (isdigit(c) || (c == '.' && s + 1 < lx->end && isdigit((unsigned char)s[1]))) {
            if (!lex_number(lx)) return false;
            lx->toks[lx->ntoks - 1].level = (uint8_t)(lx->level + lx->sub);
            continue;
        }
        if (c == '"' || c == '\'') {
            if (!lex_string(lx, s, 0)) return false;
            lx->toks[lx->ntoks - 1].level = (uint8_t)(lx->level + lx->sub);
            continue;
        }
        if (c == 0) {
            int col1 = col_of(lx, s) + 1;
            return hard_error(lx, lx->line, col1, col1, "source code cannot contain null bytes");
        }
        if (c < 32 || c == 127) return bad_char(lx, s);
        int oplen;
        int kind = match_op(s, lx->end, &oplen);
        if (kind < 0) {
            /* '$', '?', '`', a lone '!': a one-character token that no rule
            ** accepts, so the parser reports "invalid syntax" there */
            kind = TK_BADOP;
            oplen = 1;
        }
        if (kind == TK_LPAR || kind == TK_LSQB || kind == TK_LBRACE) {
            if (lx->level >= LEX_MAX_PAREN) {
                int col1 = col_of(lx, s) + 1;
                return hard_error(lx, lx->line, col1, col1, "too many nested parentheses");
            }
            lx->parens[lx->level].ch = (char)c;
            lx->parens[lx->level].line = lx->line;
            lx->parens[lx->level].col = col_of(lx, s);
            lx->level++;
        } else if (kind == TK_RPAR || kind == TK_RSQB || kind == TK_RBRACE) {
            int col1 = col_of(lx, s) + 1;
            if (lx->level == 0) return hard_error(lx, lx->line, col1, col1, "unmatched '%c'", c);
            char open = lx->parens[lx->level - 1].ch;
            char want = open == '(' ? ')' : open == '[' ? ']' : '}';
            if ((char)c != want) {
                if (lx->parens[lx->level - 1].line != lx->line)
                    return hard_error(lx, lx->line, col1, col1,
                                      "closing parenthesis '%c' does not match opening parenthesis '%c' on line %d",
                                      c, open, lx->parens[lx->level - 1].line);
                return hard_error(lx, lx->line, col1, col1,
                                  "closing parenthesis '%c' does not match opening parenthesis '%c'", c, open);
            }
            lx->level--;
        }
        Token *t = push_tok(lx, kind, s, s + oplen);
        if (!t) return false;
        t->level = (uint8_t)(lx->level + lx->sub);
        lx->p = s + oplen;
    }
}

bool lex_tokenize(Lexer *lx, const char *text, size_t len, int line, int col, bool sub,
                  SyntaxErr *err) {
    memset(lx, 0, sizeof *lx);
    lx->text = lx->p = lx->line_start = text;
    lx->end = text + len;
    lx->line = line;
    lx->col_base = col;
    lx->sub = sub;
    lx->err = err;
    lx->at_bol = !sub;
    lex_run(lx);
    if (lx->oom) return false;
    if (lx->failed) {
        /* a hard error ends the stream with an error token carrying it */
        Token *t = push_tok(lx, TK_ERROR, lx->p, lx->p);
        if (!t) return false;
        snprintf(lx->msg, sizeof lx->msg, "%s", err->msg);
        t->line = t->end_line = err->line;
        t->col = err->col > 0 ? err->col - 1 : 0;
        TOK_ERR_COL(t) = err->col;
        TOK_ERR_END(t) = err->end_col;
        t->flags = LEXF_HARD;
        t->v.msg = lx->msg;
    }
    return true;
}

void lex_free(Lexer *lx) {
    free(lx->toks);
    lx->toks = NULL;
    lx->ntoks = lx->cap = 0;
}
