/*
** jupyter_json.c — see jupyter_json.h.
*/
#include "jupyter_json.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jb_putn(JBuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *ns = realloc(b->s, cap);
        if (!ns) abort(); /* the kernel cannot answer without memory */
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void jb_puts(JBuf *b, const char *s) { jb_putn(b, s, strlen(s)); }

void jb_printf(JBuf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) jb_putn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void jb_str(JBuf *b, const char *s, size_t n) {
    jb_putn(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        jb_putn(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': jb_puts(b, "\\\""); break;
        case '\\': jb_puts(b, "\\\\"); break;
        case '\n': jb_puts(b, "\\n"); break;
        case '\r': jb_puts(b, "\\r"); break;
        case '\t': jb_puts(b, "\\t"); break;
        default: jb_printf(b, "\\u%04x", c); break;
        }
    }
    jb_putn(b, s + run, n - run);
    jb_putn(b, "\"", 1);
}

void jb_free(JBuf *b) {
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

static size_t skip_ws(const char *t, size_t i, size_t len) {
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
    return i;
}

/* The index just past the string starting at t[i] == '"', or len+1 if unterminated. */
static size_t skip_string(const char *t, size_t i, size_t len) {
    for (i++; i < len; i++) {
        if (t[i] == '\\') i++;
        else if (t[i] == '"') return i + 1;
    }
    return len + 1;
}

/* The index just past the value starting at t[i]. */
static size_t skip_value(const char *t, size_t i, size_t len) {
    if (i >= len) return len + 1;
    if (t[i] == '"') return skip_string(t, i, len);
    if (t[i] == '{' || t[i] == '[') {
        int depth = 0;
        while (i < len) {
            char c = t[i];
            if (c == '"') {
                i = skip_string(t, i, len);
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0) return i + 1;
            }
            i++;
        }
        return len + 1;
    }
    while (i < len && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' && t[i] != '\n') i++;
    return i;
}

bool json_find(const char *t, size_t len, const char *key, const char **val, size_t *vlen) {
    size_t klen = strlen(key);
    size_t i = skip_ws(t, 0, len);
    if (i >= len || t[i] != '{') return false;
    i++;
    for (;;) {
        i = skip_ws(t, i, len);
        if (i >= len || t[i] != '"') return false;
        size_t ks = i + 1, ke = skip_string(t, i, len);
        if (ke > len) return false;
        i = skip_ws(t, ke, len);
        if (i >= len || t[i] != ':') return false;
        i = skip_ws(t, i + 1, len);
        size_t ve = skip_value(t, i, len);
        if (ve > len) return false;
        if (ke - 1 - ks == klen && memcmp(t + ks, key, klen) == 0) {
            *val = t + i;
            *vlen = ve - i;
            return true;
        }
        i = skip_ws(t, ve, len);
        if (i >= len || t[i] != ',') return false;
        i++;
    }
}

static void put_utf8(JBuf *b, uint32_t cp) {
    char u[4];
    size_t n;
    if (cp < 0x80) u[0] = (char)cp, n = 1;
    else if (cp < 0x800) u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[2] = (char)(0x80 | (cp & 0x3F)),
        n = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    jb_putn(b, u, n);
}

static uint32_t hex4(const char *s) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v = v * 16 + (uint32_t)(c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0);
    }
    return v;
}

char *json_find_string(const char *t, size_t len, const char *key) {
    const char *v;
    size_t n;
    if (!json_find(t, len, key, &v, &n) || n < 2 || v[0] != '"') return NULL;
    JBuf b = {0};
    jb_putn(&b, "", 0);
    for (size_t i = 1; i + 1 < n; i++) {
        if (v[i] != '\\') {
            jb_putn(&b, v + i, 1);
            continue;
        }
        char e = v[++i];
        switch (e) {
        case 'n': jb_puts(&b, "\n"); break;
        case 't': jb_puts(&b, "\t"); break;
        case 'r': jb_puts(&b, "\r"); break;
        case 'b': jb_puts(&b, "\b"); break;
        case 'f': jb_puts(&b, "\f"); break;
        case 'u':
            if (i + 4 < n) {
                uint32_t cp = hex4(v + i + 1);
                i += 4;
                /* a surrogate pair is one code point */
                if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && v[i + 1] == '\\' && v[i + 2] == 'u') {
                    uint32_t lo = hex4(v + i + 3);
                    if (lo >= 0xDC00 && lo < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        i += 6;
                    }
                }
                put_utf8(&b, cp);
            }
            break;
        default: jb_putn(&b, &e, 1); break;
        }
    }
    return b.s;
}

long json_find_int(const char *t, size_t len, const char *key, long dflt) {
    const char *v;
    size_t n;
    if (!json_find(t, len, key, &v, &n) || n == 0 || n > 30) return dflt;
    char tmp[32];
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    char *end;
    long r = strtol(tmp, &end, 10);
    return end == tmp ? dflt : r;
}

bool json_find_bool(const char *t, size_t len, const char *key, bool dflt) {
    const char *v;
    size_t n;
    if (!json_find(t, len, key, &v, &n)) return dflt;
    if (n == 4 && memcmp(v, "true", 4) == 0) return true;
    if (n == 5 && memcmp(v, "false", 5) == 0) return false;
    return dflt;
}
