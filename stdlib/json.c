/*
** json.c — the json module's engine: _encode (objects to JSON text) and
** _decode (JSON text to objects), with CPython 3.11's output byte for byte
** and its error messages and positions. The classes and the keyword
** handling of dumps/loads are gpy (stdlib/json.gpy, embedded as
** json_source); they call these two functions once per document.
**
** Strings are UTF-8 inside gpy, so the scanner works on bytes and turns
** byte offsets into character positions only for errors and raw_decode.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigint.h"
#include "class_internal.h"
#include "cstack.h"
#include "stdlib_priv.h"
#include "unicode.h"

#include "json_gpy.h"

/* ================= encoding ================= */

typedef struct Encoder {
    StrBuf sb;
    bool skipkeys, ensure_ascii, check_circular, allow_nan, sort_keys;
    Str *indent; /* NULL: everything on one line */
    Str *item_sep, *key_sep;
    Value default_fn;
    Value root;
    /* the containers being encoded, for "Circular reference detected":
    ** an open-addressing set of object addresses */
    Obj **marks;
    size_t nmarks, cap_marks;
    int depth, max_depth;
} Encoder;

static size_t mark_slot(Encoder *e, Obj *o) {
    size_t h = ((uintptr_t)o >> 4) * 0x9E3779B97F4A7C15u;
    size_t mask = e->cap_marks - 1, i = h & mask;
    while (e->marks[i] && e->marks[i] != o) i = (i + 1) & mask;
    return i;
}

/* Marks o as being encoded; false when it already is (a cycle). */
static bool mark_push(VM *vm, Encoder *e, Obj *o) {
    if ((e->nmarks + 1) * 2 > e->cap_marks) {
        size_t old = e->cap_marks, cap = old ? old * 2 : 64;
        Obj **prev = e->marks;
        e->marks = calloc(cap, sizeof *e->marks);
        if (!e->marks) {
            e->marks = prev;
            vm_raise_kind(vm, MemoryError, "out of memory");
        }
        e->cap_marks = cap;
        for (size_t i = 0; i < old; i++)
            if (prev[i]) e->marks[mark_slot(e, prev[i])] = prev[i];
        free(prev);
    }
    size_t i = mark_slot(e, o);
    if (e->marks[i]) return false;
    e->marks[i] = o;
    e->nmarks++;
    return true;
}

/* Removes o, re-inserting the entries of its probe run (linear probing). */
static void mark_pop(Encoder *e, Obj *o) {
    size_t mask = e->cap_marks - 1, i = mark_slot(e, o);
    e->marks[i] = NULL;
    e->nmarks--;
    for (size_t j = (i + 1) & mask; e->marks[j]; j = (j + 1) & mask) {
        Obj *x = e->marks[j];
        e->marks[j] = NULL;
        e->marks[mark_slot(e, x)] = x;
    }
}

static const char hexdigits[] = "0123456789abcdef";

static void put_u4(StrBuf *sb, uint32_t c) {
    char b[6] = {'\\', 'u', hexdigits[(c >> 12) & 15], hexdigits[(c >> 8) & 15], hexdigits[(c >> 4) & 15],
                 hexdigits[c & 15]};
    sb_append(sb, b, 6);
}

/* A JSON string: '"', '\\' and control characters escaped; with
** ensure_ascii every character outside ' '..'~' as \uXXXX (astral ones as
** a surrogate pair), as CPython's encode_basestring(_ascii). */
static void encode_str(Encoder *e, const char *s, size_t len) {
    StrBuf *sb = &e->sb;
    sb_putc(sb, '"');
    size_t i = 0, run = 0; /* bytes [run, i) are copied as they are */
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c >= ' ' && c != '"' && c != '\\' && (c < 0x7f || !e->ensure_ascii)) {
            i++;
            continue;
        }
        sb_append(sb, s + run, i - run);
        if (c < 0x80) {
            i++;
            switch (c) {
            case '"': sb_append(sb, "\\\"", 2); break;
            case '\\': sb_append(sb, "\\\\", 2); break;
            case '\n': sb_append(sb, "\\n", 2); break;
            case '\r': sb_append(sb, "\\r", 2); break;
            case '\t': sb_append(sb, "\\t", 2); break;
            case '\b': sb_append(sb, "\\b", 2); break;
            case '\f': sb_append(sb, "\\f", 2); break;
            default: put_u4(sb, c); break;
            }
        } else {
            uint32_t cp = uc_decode(s, &i);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                put_u4(sb, 0xD800 | (cp >> 10));
                put_u4(sb, 0xDC00 | (cp & 0x3FF));
            } else {
                put_u4(sb, cp);
            }
        }
        run = i;
    }
    sb_append(sb, s + run, len - run);
    sb_putc(sb, '"');
}

static void encode_float(VM *vm, Encoder *e, double d) {
    if (!isfinite(d)) {
        if (!e->allow_nan)
            vm_raise_kind(vm, ValueError, "Out of range float values are not JSON compliant");
        sb_appends(&e->sb, isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    char buf[64];
    int n = float_repr(d, buf, sizeof buf);
    sb_append(&e->sb, buf, (size_t)n);
}

/* int.__repr__ of a small or big int (bools are handled before). */
static void encode_int(VM *vm, Encoder *e, Value v) {
    if (IS_INT(v)) {
        sb_printf(&e->sb, "%lld", (long long)v.as.i);
        return;
    }
    Str *s = bigint_to_str(vm, v);
    sb_append(&e->sb, s->chars, (size_t)s->len);
}

static void newline_indent(Encoder *e, int level) {
    sb_putc(&e->sb, '\n');
    for (int i = 0; i < level; i++) sb_append(&e->sb, e->indent->chars, (size_t)e->indent->len);
}

static void encode_value(VM *vm, Encoder *e, Value v, int level);

static void enter(VM *vm, Encoder *e, Obj *o) {
    /* CPython's C encoder names itself; with indent its Python encoder runs,
    ** whose recursion error comes from a call */
    if (++e->depth > e->max_depth || c_stack_exhausted())
        vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded while %s",
                      e->indent ? "calling a Python object" : "encoding a JSON object");
    if (e->check_circular && !mark_push(vm, e, o)) vm_raise_kind(vm, ValueError, "Circular reference detected");
}

static void leave(Encoder *e, Obj *o) {
    e->depth--;
    if (e->check_circular) mark_pop(e, o);
}

static void encode_array(VM *vm, Encoder *e, Obj *o, Value seq, int level) {
    int64_t n = IS_LIST(vm, seq) ? AS_LIST(seq)->len : AS_TUPLE(seq)->len;
    if (n == 0) {
        sb_append(&e->sb, "[]", 2);
        return;
    }
    enter(vm, e, o);
    sb_putc(&e->sb, '[');
    if (e->indent) newline_indent(e, level + 1);
    for (int64_t i = 0;; i++) {
        /* a list may shrink while default() or a hook runs: re-read it */
        int64_t len = IS_LIST(vm, seq) ? AS_LIST(seq)->len : AS_TUPLE(seq)->len;
        if (i >= len) break;
        if (i > 0) {
            sb_append_str(&e->sb, e->item_sep);
            if (e->indent) newline_indent(e, level + 1);
        }
        Value item = IS_LIST(vm, seq) ? AS_LIST(seq)->items[i] : AS_TUPLE(seq)->items[i];
        encode_value(vm, e, item, level + 1);
    }
    if (e->indent) newline_indent(e, level);
    sb_putc(&e->sb, ']');
    leave(e, o);
}

/* A dict key as a JSON string; false to skip it (skipkeys). */
static bool encode_key(VM *vm, Encoder *e, Value k) {
    Value u = class_unbox(vm, k);
    if (IS_STR(vm, u)) {
        encode_str(e, AS_STR(u)->chars, (size_t)AS_STR(u)->len);
        return true;
    }
    size_t mark = e->sb.len;
    if (IS_FLOAT(u)) encode_float(vm, e, AS_FLOAT(u));
    else if (IS_BOOL(k)) sb_appends(&e->sb, AS_BOOL(k) ? "true" : "false");
    else if (IS_NONE(k)) sb_appends(&e->sb, "null");
    else if (bigint_is_anyint(vm, u)) encode_int(vm, e, IS_BOOL(u) ? INT_VAL(AS_BOOL(u)) : u);
    else if (e->skipkeys) return false;
    else
        vm_raise_kind(vm, TypeError, "keys must be str, int, float, bool or None, not %s", vm_type_name(vm, k));
    /* the number's text, now quoted (it needs no escaping) */
    size_t n = e->sb.len - mark;
    sb_putc(&e->sb, '"');
    memmove(e->sb.data + mark + 1, e->sb.data + mark, n);
    e->sb.data[mark] = '"';
    sb_putc(&e->sb, '"');
    return true;
}

static void encode_dict(VM *vm, Encoder *e, Obj *o, Dict *d, int level) {
    if (d->count == 0) {
        sb_append(&e->sb, "{}", 2);
        return;
    }
    enter(vm, e, o);
    /* the items, in order (sorted when asked, as sorted(d.items()) would) */
    List *items = list_new(vm, d->count);
    vm_push_root(vm, OBJ_VAL(items));
    int64_t pos = 0;
    Value k, v;
    while (dict_next(d, &pos, &k, &v)) {
        Value kv[2] = {k, v};
        list_append(vm, items, OBJ_VAL(tuple_from_array(vm, 2, kv)));
    }
    if (e->sort_keys) list_sort(vm, items, NONE_VAL, false);
    sb_putc(&e->sb, '{');
    if (e->indent) newline_indent(e, level + 1);
    bool first = true;
    for (int64_t i = 0; i < items->len; i++) {
        Tuple *kv = AS_TUPLE(items->items[i]);
        size_t before = e->sb.len;
        if (!first) {
            sb_append_str(&e->sb, e->item_sep);
            if (e->indent) newline_indent(e, level + 1);
        }
        if (!encode_key(vm, e, kv->items[0])) { /* skipkeys: drop the separator too */
            e->sb.len = before;
            continue;
        }
        first = false;
        sb_append_str(&e->sb, e->key_sep);
        encode_value(vm, e, kv->items[1], level + 1);
    }
    vm_pop_roots(vm, 1);
    if (e->indent) newline_indent(e, level);
    sb_putc(&e->sb, '}');
    leave(e, o);
}

static void encode_value(VM *vm, Encoder *e, Value v, int level) {
    switch (v.tag) {
    case VAL_NONE: sb_append(&e->sb, "null", 4); return;
    case VAL_BOOL: sb_appends(&e->sb, AS_BOOL(v) ? "true" : "false"); return;
    case VAL_INT: encode_int(vm, e, v); return;
    case VAL_FLOAT: encode_float(vm, e, AS_FLOAT(v)); return;
    default: break;
    }
    Value u = class_unbox(vm, v); /* str, int, float, list, tuple and dict subclasses encode as their base */
    if (IS_STR(vm, u)) encode_str(e, AS_STR(u)->chars, (size_t)AS_STR(u)->len);
    else if (bigint_is_anyint(vm, u)) encode_int(vm, e, IS_BOOL(u) ? INT_VAL(AS_BOOL(u)) : u);
    else if (IS_FLOAT(u)) encode_float(vm, e, AS_FLOAT(u));
    else if (IS_LIST(vm, u) || IS_TUPLE(vm, u)) encode_array(vm, e, AS_OBJ(v), u, level);
    else if (IS_DICT(vm, u)) encode_dict(vm, e, AS_OBJ(v), AS_DICT(u), level);
    else {
        /* default(o) gives something encodable; o stays marked meanwhile */
        enter(vm, e, AS_OBJ(v));
        Value r = vm_call(vm, e->default_fn, 1, &v);
        vm_push_root(vm, r);
        encode_value(vm, e, r, level);
        vm_pop_roots(vm, 1);
        leave(e, AS_OBJ(v));
    }
}

static void encode_body(VM *vm, void *ud) {
    Encoder *e = ud;
    encode_value(vm, e, e->root, 0);
}

static Str *want_str(VM *vm, Value v, const char *what) {
    Value u = class_unbox(vm, v);
    if (!IS_STR(vm, u)) vm_raise_kind(vm, TypeError, "%s must be str, not %s", what, vm_type_name(vm, v));
    return AS_STR(u);
}

/* _encode(obj, skipkeys, ensure_ascii, check_circular, allow_nan,
** sort_keys, indent, item_separator, key_separator, default) */
static Value j_encode(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "_encode", kwargs);
    if (argc != 10) vm_raise_kind(vm, TypeError, "_encode() takes 10 arguments (%d given)", argc);
    Encoder e = {0};
    e.root = argv[0];
    e.skipkeys = vm_truthy(vm, argv[1]);
    e.ensure_ascii = vm_truthy(vm, argv[2]);
    e.check_circular = vm_truthy(vm, argv[3]);
    e.allow_nan = vm_truthy(vm, argv[4]);
    e.sort_keys = vm_truthy(vm, argv[5]);
    e.indent = IS_NONE(argv[6]) ? NULL : want_str(vm, argv[6], "indent");
    e.item_sep = want_str(vm, argv[7], "item_separator");
    e.key_sep = want_str(vm, argv[8], "key_separator");
    e.default_fn = argv[9];
    e.max_depth = vm->recursion_limit - vm->nframes;
    sb_init(&e.sb);
    bool ok = vm_pcall(vm, encode_body, &e);
    free(e.marks);
    if (!ok) {
        sb_free(&e.sb);
        vm_rethrow(vm, vm->exc_value);
    }
    return STR_VAL(sb_finish(vm, &e.sb));
}

/* ================= decoding ================= */

typedef struct Decoder {
    const char *s;
    size_t len;
    Value doc; /* the str being decoded, for JSONDecodeError */
    bool strict;
    Value object_hook, pairs_hook, parse_float, parse_int, parse_constant, errcls;
    int depth, max_depth;
} Decoder;

/* JSONDecodeError(msg, doc, pos) at byte offset off (pos counts characters). */
static _Noreturn void fail(VM *vm, Decoder *d, const char *msg, size_t off) {
    Value args[3] = {STR_VAL(str_cstr(vm, msg)), d->doc, INT_VAL((int64_t)uc_count(d->s, off))};
    vm_push_root(vm, args[0]);
    Value exc = vm_call(vm, d->errcls, 3, args);
    vm_throw(vm, exc);
}

/* What CPython's scanner signals with StopIteration: no value starts here. */
static _Noreturn void no_value(VM *vm, Decoder *d, size_t off) { fail(vm, d, "Expecting value", off); }

static inline size_t skip_ws(Decoder *d, size_t i) {
    while (i < d->len && (d->s[i] == ' ' || d->s[i] == '\t' || d->s[i] == '\n' || d->s[i] == '\r')) i++;
    return i;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s[i..i+4), or -1. */
static int32_t hex4(Decoder *d, size_t i) {
    if (i + 4 > d->len) return -1;
    int32_t v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(d->s[i + k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* The string whose opening quote is at begin - 1; *end: past the closing
** quote. Keys are interned (a document repeats them, as CPython's decoder
** memoizes them); values are not. */
static Str *scan_string(VM *vm, Decoder *d, size_t begin, size_t *end, bool key) {
    const char *s = d->s;
    size_t i = begin;
    /* the common case: no escapes */
    while (i < d->len) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            *end = i + 1;
            return key ? str_new(vm, s + begin, i - begin) : str_new_data(vm, s + begin, i - begin);
        }
        if (c == '\\' || (c < 0x20 && d->strict)) break;
        i++;
    }
    StrBuf sb;
    sb_init(&sb);
    sb_append(&sb, s + begin, i - begin);
    const char *msg = NULL;
    size_t at = 0;
    for (;;) {
        size_t run = i;
        while (i < d->len) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\') break;
            if (c < 0x20 && d->strict) {
                msg = "Invalid control character at", at = i;
                goto error;
            }
            i++;
        }
        sb_append(&sb, s + run, i - run);
        if (i >= d->len) {
            msg = "Unterminated string starting at", at = begin - 1;
            goto error;
        }
        if (s[i] == '"') {
            *end = i + 1;
            return sb_finish(vm, &sb);
        }
        /* a backslash */
        i++;
        if (i >= d->len) {
            msg = "Unterminated string starting at", at = begin - 1;
            goto error;
        }
        char c = s[i];
        if (c != 'u') {
            char out;
            switch (c) {
            case '"': out = '"'; break;
            case '\\': out = '\\'; break;
            case '/': out = '/'; break;
            case 'b': out = '\b'; break;
            case 'f': out = '\f'; break;
            case 'n': out = '\n'; break;
            case 'r': out = '\r'; break;
            case 't': out = '\t'; break;
            default: msg = "Invalid \\escape", at = i - 1; goto error;
            }
            sb_putc(&sb, out);
            i++;
            continue;
        }
        /* four digits and something after them (the closing quote at least) */
        int32_t cp = i + 5 < d->len ? hex4(d, i + 1) : -1;
        if (cp < 0) {
            msg = "Invalid \\uXXXX escape", at = i;
            goto error;
        }
        i += 5;
        /* a high surrogate followed by an escaped low one: one character */
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < d->len && s[i] == '\\' && s[i + 1] == 'u') {
            int32_t lo = hex4(d, i + 2);
            if (lo < 0) {
                msg = "Invalid \\uXXXX escape", at = i + 1;
                goto error;
            }
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + (((cp - 0xD800) << 10) | (lo - 0xDC00));
                i += 6;
            }
        }
        char buf[4];
        sb_append(&sb, buf, (size_t)uc_encode((uint32_t)cp, buf));
    }
error:
    sb_free(&sb);
    fail(vm, d, msg, at);
}

static Value scan_value(VM *vm, Decoder *d, size_t i, size_t *end);

static void enter_nested(VM *vm, Decoder *d, const char *what) {
    if (++d->depth > d->max_depth || c_stack_exhausted())
        vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded while decoding a JSON %s from a unicode string",
                      what);
}

static Value scan_object(VM *vm, Decoder *d, size_t i, size_t *end) {
    enter_nested(vm, d, "object");
    bool pairs = !IS_NONE(d->pairs_hook);
    Dict *dict = pairs ? NULL : dict_new(vm);
    List *list = pairs ? list_new(vm, 0) : NULL;
    Value holder = pairs ? OBJ_VAL(list) : OBJ_VAL(dict);
    vm_push_root(vm, holder);
    i = skip_ws(d, i);
    if (i >= d->len || d->s[i] != '}') {
        for (;;) {
            if (i >= d->len || d->s[i] != '"') fail(vm, d, "Expecting property name enclosed in double quotes", i);
            Str *key = scan_string(vm, d, i + 1, &i, true);
            vm_push_root(vm, STR_VAL(key));
            i = skip_ws(d, i);
            if (i >= d->len || d->s[i] != ':') fail(vm, d, "Expecting ':' delimiter", i);
            i = skip_ws(d, i + 1);
            Value val = scan_value(vm, d, i, &i);
            vm_push_root(vm, val);
            if (pairs) {
                Value kv[2] = {STR_VAL(key), val};
                list_append(vm, list, OBJ_VAL(tuple_from_array(vm, 2, kv)));
            } else {
                dict_set(vm, dict, STR_VAL(key), val);
            }
            vm_pop_roots(vm, 2);
            i = skip_ws(d, i);
            if (i < d->len && d->s[i] == '}') break;
            if (i >= d->len || d->s[i] != ',') fail(vm, d, "Expecting ',' delimiter", i);
            i = skip_ws(d, i + 1);
        }
    }
    *end = i + 1;
    d->depth--;
    Value r = holder;
    if (pairs) r = vm_call(vm, d->pairs_hook, 1, &holder);
    else if (!IS_NONE(d->object_hook)) r = vm_call(vm, d->object_hook, 1, &holder);
    vm_pop_roots(vm, 1);
    return r;
}

static Value scan_array(VM *vm, Decoder *d, size_t i, size_t *end) {
    enter_nested(vm, d, "array");
    List *list = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(list));
    i = skip_ws(d, i);
    if (i >= d->len || d->s[i] != ']') {
        for (;;) {
            Value val = scan_value(vm, d, i, &i);
            vm_push_root(vm, val);
            list_append(vm, list, val);
            vm_pop_roots(vm, 1);
            i = skip_ws(d, i);
            if (i < d->len && d->s[i] == ']') break;
            if (i >= d->len || d->s[i] != ',') fail(vm, d, "Expecting ',' delimiter", i);
            i = skip_ws(d, i + 1);
        }
    }
    *end = i + 1;
    d->depth--;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(list);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* A JSON number's text as a double, correctly rounded. With at most 15
** significant digits and a decimal exponent within 22, digits and 10^e
** are exact doubles, so one multiplication or division rounds correctly
** (Clinger's fast path); anything else goes to float(). */
static double parse_double(VM *vm, const char *s, size_t n) {
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    bool neg = s[0] == '-';
    if (neg) i++;
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    bool frac = false;
    for (; i < n && (is_digit(s[i]) || s[i] == '.'); i++) {
        if (s[i] == '.') {
            frac = true;
            continue;
        }
        if (digits > 0 || s[i] != '0') digits++; /* leading zeros are not significant */
        if (digits > 15) goto slow;
        mant = mant * 10 + (uint64_t)(s[i] - '0');
        if (frac) exp10--;
    }
    if (i < n) { /* the exponent */
        i++;
        bool eneg = s[i] == '-';
        if (s[i] == '-' || s[i] == '+') i++;
        int e = 0;
        for (; i < n; i++) {
            e = e * 10 + (s[i] - '0');
            if (e > 1000) goto slow;
        }
        exp10 += eneg ? -e : e;
    }
    if (exp10 < -22 || exp10 > 22) goto slow;
    double v = (double)mant;
    v = exp10 < 0 ? v / pow10[-exp10] : v * pow10[exp10];
    return neg ? -v : v;
slow:
    return AS_FLOAT(float_from_str(vm, s, n));
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? as int or float (or
** through parse_int / parse_float). */
static Value scan_number(VM *vm, Decoder *d, size_t start, size_t *end) {
    const char *s = d->s;
    size_t i = start;
    if (i < d->len && s[i] == '-') i++;
    if (i < d->len && s[i] >= '1' && s[i] <= '9') {
        while (i < d->len && is_digit(s[i])) i++;
    } else if (i < d->len && s[i] == '0') {
        i++;
    } else {
        no_value(vm, d, start);
    }
    bool is_float = false;
    if (i + 1 < d->len && s[i] == '.' && is_digit(s[i + 1])) {
        i += 2;
        while (i < d->len && is_digit(s[i])) i++;
        is_float = true;
    }
    if (i < d->len && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = i + 1;
        if (e < d->len && (s[e] == '-' || s[e] == '+')) e++;
        if (e < d->len && is_digit(s[e])) {
            while (e < d->len && is_digit(s[e])) e++;
            i = e;
            is_float = true;
        }
    }
    *end = i;
    Value hook = is_float ? d->parse_float : d->parse_int;
    if (!IS_NONE(hook)) {
        Value text = STR_VAL(str_new(vm, s + start, i - start));
        vm_push_root(vm, text);
        Value r = vm_call(vm, hook, 1, &text);
        vm_pop_roots(vm, 1);
        return r;
    }
    if (is_float) return FLOAT_VAL(parse_double(vm, s + start, i - start));
    if (i - start < 19) { /* fits in int64 */
        int64_t v = 0;
        for (size_t k = start + (s[start] == '-'); k < i; k++) v = v * 10 + (s[k] - '0');
        return INT_VAL(s[start] == '-' ? -v : v);
    }
    return int_from_str(vm, s + start, i - start, 10);
}

static bool has_word(Decoder *d, size_t i, const char *w, size_t n) {
    return i + n <= d->len && memcmp(d->s + i, w, n) == 0;
}

static Value constant(VM *vm, Decoder *d, const char *name, double v) {
    if (IS_NONE(d->parse_constant)) return FLOAT_VAL(v);
    Value arg = STR_VAL(str_cstr(vm, name));
    return vm_call(vm, d->parse_constant, 1, &arg);
}

static Value scan_value(VM *vm, Decoder *d, size_t i, size_t *end) {
    if (i >= d->len) no_value(vm, d, i);
    switch (d->s[i]) {
    case '"': return STR_VAL(scan_string(vm, d, i + 1, end, false));
    case '{': return scan_object(vm, d, i + 1, end);
    case '[': return scan_array(vm, d, i + 1, end);
    case 'n':
        if (has_word(d, i, "null", 4)) {
            *end = i + 4;
            return NONE_VAL;
        }
        break;
    case 't':
        if (has_word(d, i, "true", 4)) {
            *end = i + 4;
            return BOOL_VAL(true);
        }
        break;
    case 'f':
        if (has_word(d, i, "false", 5)) {
            *end = i + 5;
            return BOOL_VAL(false);
        }
        break;
    case 'N':
        if (has_word(d, i, "NaN", 3)) {
            *end = i + 3;
            return constant(vm, d, "NaN", NAN);
        }
        break;
    case 'I':
        if (has_word(d, i, "Infinity", 8)) {
            *end = i + 8;
            return constant(vm, d, "Infinity", INFINITY);
        }
        break;
    case '-':
        if (has_word(d, i, "-Infinity", 9)) {
            *end = i + 9;
            return constant(vm, d, "-Infinity", -INFINITY);
        }
        break;
    default: break;
    }
    return scan_number(vm, d, i, end);
}

/* _decode(s, idx, whole, strict, object_hook, object_pairs_hook,
** parse_float, parse_int, parse_constant, JSONDecodeError) -> (obj, end).
** whole: JSONDecoder.decode (whitespace around the value, nothing after
** it: "Extra data"); else raw_decode from character idx. */
static Value j_decode(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "_decode", kwargs);
    if (argc != 10) vm_raise_kind(vm, TypeError, "_decode() takes 10 arguments (%d given)", argc);
    Value doc = class_unbox(vm, argv[0]);
    if (!IS_STR(vm, doc))
        vm_raise_kind(vm, TypeError, "first argument must be a string, not %s", vm_type_name(vm, argv[0]));
    Str *s = AS_STR(doc);
    Decoder d = {.s = s->chars, .len = (size_t)s->len, .doc = doc, .strict = vm_truthy(vm, argv[3]),
                 .object_hook = argv[4], .pairs_hook = argv[5], .parse_float = argv[6], .parse_int = argv[7],
                 .parse_constant = argv[8], .errcls = argv[9]};
    d.max_depth = vm->recursion_limit - vm->nframes;
    if (!IS_INT(argv[1])) vm_raise_kind(vm, TypeError, "idx must be an int");
    int64_t idx = argv[1].as.i;
    if (idx < 0) vm_raise_kind(vm, ValueError, "idx cannot be negative");
    bool whole = vm_truthy(vm, argv[2]);
    size_t i = s->ascii ? (size_t)idx : uc_offset(s->chars, (size_t)s->len, (size_t)idx);
    if ((int64_t)i > s->len || (s->ascii && idx > s->len)) no_value(vm, &d, d.len);
    if (whole) i = skip_ws(&d, i);
    size_t end;
    Value obj = scan_value(vm, &d, i, &end);
    vm_push_root(vm, obj);
    if (whole) {
        end = skip_ws(&d, end);
        if (end != d.len) fail(vm, &d, "Extra data", end);
    }
    Value pair[2] = {obj, INT_VAL(s->ascii ? (int64_t)end : (int64_t)uc_count(s->chars, end))};
    Value r = OBJ_VAL(tuple_from_array(vm, 2, pair));
    vm_pop_roots(vm, 1);
    return r;
}

Module *stdlib_json(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "json"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "_encode", j_encode);
    module_add_function(vm, m, "_decode", j_decode);
    module_exec_source(vm, m, "<json>", json_source, sizeof json_source - 1);
    vm_pop_roots(vm, 1);
    return m;
}

/* json.decoder and json.encoder: the names programs import from them. */
static Module *json_submodule(VM *vm, const char *name, const char *const *names) {
    Value json = vm_import(vm, str_cstr(vm, "json"), false);
    vm_push_root(vm, json);
    Module *m = module_new(vm, str_cstr(vm, name));
    vm_push_root(vm, OBJ_VAL(m));
    for (int i = 0; names[i]; i++) {
        Str *n = str_cstr(vm, names[i]);
        dict_set(vm, m->dict, STR_VAL(n), vm_getattr(vm, json, n));
    }
    dict_set_cstr(vm, ((Module *)AS_OBJ(json))->dict, strchr(name, '.') + 1, OBJ_VAL(m));
    vm_pop_roots(vm, 2);
    return m;
}

static Module *stdlib_json_decoder(VM *vm) {
    static const char *const names[] = {"JSONDecoder", "JSONDecodeError", NULL};
    return json_submodule(vm, "json.decoder", names);
}

static Module *stdlib_json_encoder(VM *vm) {
    static const char *const names[] = {"JSONEncoder", NULL};
    return json_submodule(vm, "json.encoder", names);
}

void json_register(VM *vm) {
    module_register_native(vm, "json", stdlib_json);
    module_register_native(vm, "json.decoder", stdlib_json_decoder);
    module_register_native(vm, "json.encoder", stdlib_json_encoder);
}
