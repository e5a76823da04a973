/*
** str.c — the str type: immutable UTF-8 strings with their hash computed
** at creation. Strings of up to INTERN_MAX bytes are interned (one object
** per content), so equal short strings are the same pointer; the intern
** table holds its strings weakly (str_table_sweep). Indexing is O(1) for
** ASCII strings and a scan otherwise.
*/
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "str_private.h"
#include "unicode.h"
#include "vm.h"

#define INTERN_MAX 40
#define TOMBSTONE ((Str *)(uintptr_t)1)

/* ================================================================ hashing */

static inline uint64_t rotl64(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

/* A fast 64-bit hash: 8-byte blocks mixed murmur-style, then fmix64. */
int64_t str_hash_bytes(const char *s, size_t len) {
    const uint64_t p1 = 0x9E3779B97F4A7C15ull, p2 = 0xC2B2AE3D27D4EB4Full;
    uint64_t h = p1 ^ ((uint64_t)len * p2);
    const unsigned char *p = (const unsigned char *)s;
    while (len >= 8) {
        uint64_t k;
        memcpy(&k, p, 8);
        k *= p2;
        k = rotl64(k, 31);
        k *= p1;
        h ^= k;
        h = rotl64(h, 27) * 5 + 0x52DCE729;
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t k = 0;
        memcpy(&k, p, len);
        k *= p2;
        k = rotl64(k, 31);
        k *= p1;
        h ^= k;
    }
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    int64_t r = (int64_t)h;
    return r == -1 ? -2 : r;
}

/* ================================================================ intern table
** Open addressing with linear probing. count is the number of occupied
** slots, tombstones included, so that probing always finds a NULL. */

_Noreturn static void no_memory(VM *vm) {
    if (IS_OBJ(vm->memory_error))
        vm_throw(vm, vm->memory_error);
    vm_raise_kind(vm, MemoryError, "out of memory");
}

static Str *table_find(VM *vm, const char *s, size_t len, int64_t hash) {
    StrTable *t = &vm->strings;
    if (t->cap == 0)
        return NULL;
    size_t mask = (size_t)t->cap - 1, i = (size_t)hash & mask;
    for (;;) {
        Str *e = t->slots[i];
        if (!e)
            return NULL;
        if (e != TOMBSTONE && e->hash == hash && (size_t)e->len == len && memcmp(e->chars, s, len) == 0)
            return e;
        i = (i + 1) & mask;
    }
}

/* Rehashes into a table sized for the live entries, dropping tombstones. */
static void table_resize(VM *vm) {
    StrTable *t = &vm->strings;
    int64_t live = 0;
    for (int64_t i = 0; i < t->cap; i++)
        if (t->slots[i] && t->slots[i] != TOMBSTONE)
            live++;
    int64_t cap = 256;
    while (cap < (live + 1) * 3)
        cap *= 2;
    Str **slots = calloc((size_t)cap, sizeof(Str *));
    if (!slots)
        no_memory(vm);
    size_t mask = (size_t)cap - 1;
    for (int64_t i = 0; i < t->cap; i++) {
        Str *e = t->slots[i];
        if (!e || e == TOMBSTONE)
            continue;
        size_t j = (size_t)e->hash & mask;
        while (slots[j])
            j = (j + 1) & mask;
        slots[j] = e;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    t->count = live;
}

static void table_insert(VM *vm, Str *s) {
    StrTable *t = &vm->strings;
    if ((t->count + 1) * 3 > t->cap * 2)
        table_resize(vm);
    size_t mask = (size_t)t->cap - 1, i = (size_t)s->hash & mask;
    while (t->slots[i] && t->slots[i] != TOMBSTONE)
        i = (i + 1) & mask;
    if (!t->slots[i])
        t->count++;
    t->slots[i] = s;
    s->obj.flags |= STR_FLAG_INTERNED;
}

void str_table_sweep(VM *vm) {
    StrTable *t = &vm->strings;
    for (int64_t i = 0; i < t->cap; i++) {
        Str *e = t->slots[i];
        if (e && e != TOMBSTONE && !e->obj.marked)
            t->slots[i] = TOMBSTONE;
    }
}

/* ================================================================ creation */

/* A Str object with room for len bytes (contents unset, NUL placed). */
static Str *str_alloc(VM *vm, size_t len) {
    if (len > (size_t)UINT32_MAX - sizeof(Str) - 64)
        no_memory(vm);
    Str *s = gc_alloc_obj(vm, vm->t_str, sizeof(Str) + len + 1);
    s->len = (int64_t)len;
    s->chars[len] = '\0';
    return s;
}

static inline void set_nchars(Str *s, int64_t nchars) {
    if (nchars < 0)
        nchars = (int64_t)uc_count(s->chars, (size_t)s->len);
    s->nchars = nchars;
    s->ascii = nchars == s->len;
}

/* Interns s[0..len): the existing string or a new interned one. */
static Str *intern_bytes(VM *vm, const char *s, size_t len, int64_t nchars) {
    int64_t h = str_hash_bytes(s, len);
    Str *e = table_find(vm, s, len, h);
    if (e)
        return e;
    Str *r = str_alloc(vm, len);
    memcpy(r->chars, s, len);
    r->hash = h;
    set_nchars(r, nchars);
    table_insert(vm, r);
    return r;
}

/* The one place strings are made from bytes; nchars < 0 means unknown. */
static Str *make_str(VM *vm, const char *s, size_t len, int64_t nchars) {
    if (len <= INTERN_MAX) {
        if (len == 0 && vm->empty_str)
            return vm->empty_str;
        if (len == 1 && (unsigned char)s[0] < 0x80 && vm->single_chars[(unsigned char)s[0]])
            return vm->single_chars[(unsigned char)s[0]];
        return intern_bytes(vm, s, len, nchars);
    }
    Str *r = str_alloc(vm, len);
    memcpy(r->chars, s, len);
    r->hash = str_hash_bytes(s, len);
    set_nchars(r, nchars);
    return r;
}

/* Like str_new, but a short string is not interned: for bulk data (the
** string values of a decoded JSON document), which would only fill the
** intern table with strings nobody looks up by name. Equality never relies
** on interning unless both strings are interned. */
Str *str_new_data(VM *vm, const char *s, size_t len) {
    if (len <= 1)
        return make_str(vm, s, len, -1);
    Str *r = str_alloc(vm, len);
    memcpy(r->chars, s, len);
    r->hash = str_hash_bytes(s, len);
    set_nchars(r, -1);
    return r;
}

/* Builds a string of known byte length in place: short results go through
** a stack buffer (then interned), long ones straight into the object. */
typedef struct Builder {
    Str *r;
    char *p;
    size_t len;
    char tmp[INTERN_MAX + 1];
} Builder;

static char *bld_start(VM *vm, Builder *b, size_t len) {
    b->len = len;
    if (len <= INTERN_MAX) {
        b->r = NULL;
        b->p = b->tmp;
    } else {
        b->r = str_alloc(vm, len);
        b->p = b->r->chars;
    }
    return b->p;
}

static Str *bld_end(VM *vm, Builder *b, int64_t nchars) {
    if (!b->r)
        return make_str(vm, b->tmp, b->len, nchars);
    b->r->hash = str_hash_bytes(b->r->chars, b->len);
    set_nchars(b->r, nchars);
    return b->r;
}

Str *str_new(VM *vm, const char *s, size_t len) {
    return make_str(vm, s, len, -1);
}

Str *str_cstr(VM *vm, const char *s) {
    return make_str(vm, s, strlen(s), -1);
}

Str *str_intern(VM *vm, const char *s, size_t len) {
    if (len <= INTERN_MAX)
        return make_str(vm, s, len, -1);
    return intern_bytes(vm, s, len, -1);
}

Str *str_printf(VM *vm, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return make_str(vm, "", 0, 0);
    if ((size_t)n < sizeof small)
        return make_str(vm, small, (size_t)n, -1);
    Builder b;
    char *p = bld_start(vm, &b, (size_t)n);
    char *tmp = malloc((size_t)n + 1);
    if (!tmp)
        no_memory(vm);
    va_start(ap, fmt);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    va_end(ap);
    memcpy(p, tmp, (size_t)n);
    free(tmp);
    return bld_end(vm, &b, -1);
}

Str *str_from_codepoint(VM *vm, uint32_t cp) {
    if (cp < 0x80 && vm->single_chars[cp])
        return vm->single_chars[cp];
    char buf[4];
    int n = uc_encode(cp, buf);
    return make_str(vm, buf, (size_t)n, 1);
}

Str *str_concat(VM *vm, Str *a, Str *b) {
    if (a->len == 0)
        return b;
    if (b->len == 0)
        return a;
    Builder bl;
    char *p = bld_start(vm, &bl, (size_t)(a->len + b->len));
    memcpy(p, a->chars, (size_t)a->len);
    memcpy(p + a->len, b->chars, (size_t)b->len);
    return bld_end(vm, &bl, a->nchars + b->nchars);
}

bool str_equal(Str *a, Str *b) {
    if (a == b)
        return true;
    /* interned strings are unique per content */
    if (a->obj.flags & b->obj.flags & STR_FLAG_INTERNED)
        return false;
    return a->hash == b->hash && a->len == b->len && memcmp(a->chars, b->chars, (size_t)a->len) == 0;
}

/* Substring by byte range; ascii strings know their char count. */
static Str *substr(VM *vm, Str *s, size_t b0, size_t b1) {
    if (b0 == 0 && b1 == (size_t)s->len)
        return s;
    return make_str(vm, s->chars + b0, b1 - b0, s->ascii ? (int64_t)(b1 - b0) : -1);
}

/* ================================================================ repr / ascii */

static const char hexdigits[] = "0123456789abcdef";

/* Writes (out != NULL) or measures the body of repr(s) with the given quote. */
static size_t repr_body(const Str *s, char quote, char *out) {
    const char *p = s->chars;
    size_t n = (size_t)s->len, i = 0, o = 0;
#define PUT(c)              \
    do {                    \
        if (out)            \
            out[o] = (c);   \
        o++;                \
    } while (0)
    while (i < n) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x80) {
            i++;
            if (c == (unsigned char)quote || c == '\\') {
                PUT('\\');
                PUT((char)c);
            } else if (c == '\t') {
                PUT('\\');
                PUT('t');
            } else if (c == '\n') {
                PUT('\\');
                PUT('n');
            } else if (c == '\r') {
                PUT('\\');
                PUT('r');
            } else if (c < 0x20 || c == 0x7F) {
                PUT('\\');
                PUT('x');
                PUT(hexdigits[c >> 4]);
                PUT(hexdigits[c & 15]);
            } else {
                PUT((char)c);
            }
            continue;
        }
        size_t start = i;
        uint32_t cp = uc_decode(p, &i);
        if (uc_isprintable(cp)) {
            for (size_t k = start; k < i; k++)
                PUT(p[k]);
        } else if (cp <= 0xFF) {
            PUT('\\');
            PUT('x');
            PUT(hexdigits[cp >> 4]);
            PUT(hexdigits[cp & 15]);
        } else if (cp <= 0xFFFF) {
            PUT('\\');
            PUT('u');
            for (int sh = 12; sh >= 0; sh -= 4)
                PUT(hexdigits[(cp >> sh) & 15]);
        } else {
            PUT('\\');
            PUT('U');
            for (int sh = 28; sh >= 0; sh -= 4)
                PUT(hexdigits[(cp >> sh) & 15]);
        }
    }
#undef PUT
    return o;
}

/* CPython's quoting: single quotes unless the text has ' and no ". */
Str *str_repr(VM *vm, Str *s) {
    char quote = '\'';
    if (memchr(s->chars, '\'', (size_t)s->len) && !memchr(s->chars, '"', (size_t)s->len))
        quote = '"';
    size_t body = repr_body(s, quote, NULL);
    Builder b;
    char *p = bld_start(vm, &b, body + 2);
    p[0] = quote;
    repr_body(s, quote, p + 1);
    p[body + 1] = quote;
    return bld_end(vm, &b, -1);
}

Str *str_to_ascii(VM *vm, Str *s) {
    if (s->ascii)
        return s;
    StrBuf sb;
    sb_init(&sb);
    size_t i = 0, n = (size_t)s->len;
    while (i < n) {
        unsigned char c = (unsigned char)s->chars[i];
        if (c < 0x80) {
            sb_putc(&sb, (char)c);
            i++;
            continue;
        }
        uint32_t cp = uc_decode(s->chars, &i);
        if (cp <= 0xFF)
            sb_printf(&sb, "\\x%02x", (unsigned)cp);
        else if (cp <= 0xFFFF)
            sb_printf(&sb, "\\u%04x", (unsigned)cp);
        else
            sb_printf(&sb, "\\U%08x", (unsigned)cp);
    }
    return sb_finish(vm, &sb);
}

/* ================================================================ helpers for methods */

static inline bool is_str(VM *vm, Value v) {
    return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_str;
}

typedef enum ArgStyle {
    NOARGS, /* str.upper() takes no arguments (1 given) */
    ONEARG, /* str.join() takes exactly one argument (0 given) */
    VARARGS, /* count() takes at least 1 argument (0 given) */
    CLINIC, /* center expected at least 1 argument, got 0 */
} ArgStyle;

/* Validates self and the positional argument count (argc includes self);
** rejects keyword arguments. Returns self. */
static Str *method_self(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, ArgStyle style, int min,
                        int max) {
    if (argc < 1)
        vm_raise_kind(vm, TypeError, "unbound method str.%s() needs an argument", name);
    if (!is_str(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "descriptor '%s' for 'str' objects doesn't apply to a '%s' object", name,
                      vm_type_name(vm, argv[0]));
    int n = argc - 1;
    if (kwargs && kwargs->count > 0) {
        if (style == NOARGS || style == ONEARG)
            vm_raise_kind(vm, TypeError, "str.%s() takes no keyword arguments", name);
        vm_raise_kind(vm, TypeError, "%s() takes no keyword arguments", name);
    }
    if (n >= min && n <= max)
        return AS_STR(argv[0]);
    switch (style) {
    case NOARGS:
        vm_raise_kind(vm, TypeError, "str.%s() takes no arguments (%d given)", name, n);
    case ONEARG:
        vm_raise_kind(vm, TypeError, "str.%s() takes exactly one argument (%d given)", name, n);
    case VARARGS:
        if (n < min)
            vm_raise_kind(vm, TypeError, "%s() takes at least %d argument%s (%d given)", name, min,
                          min == 1 ? "" : "s", n);
        vm_raise_kind(vm, TypeError, "%s() takes at most %d argument%s (%d given)", name, max, max == 1 ? "" : "s",
                      n);
    case CLINIC:
    default:
        if (n < min)
            vm_raise_kind(vm, TypeError, "%s expected at least %d argument%s, got %d", name, min,
                          min == 1 ? "" : "s", n);
        vm_raise_kind(vm, TypeError, "%s expected at most %d argument%s, got %d", name, max, max == 1 ? "" : "s",
                      n);
    }
}

/* For methods with keyword parameters: fills out[0..n) from positional
** arguments after self, then from kwargs; absent ones are EMPTY. */
static Str *method_self_kw(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs,
                           const char *const *names, int n, Value *out) {
    Str *self = method_self(vm, name, argc, argv, NULL, VARARGS, 0, n);
    int npos = argc - 1;
    for (int i = 0; i < n; i++)
        out[i] = i < npos ? argv[i + 1] : EMPTY_VAL;
    if (kwargs && kwargs->count > 0) {
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v)) {
            const char *kname = is_str(vm, k) ? AS_STR(k)->chars : "?";
            int j = 0;
            while (j < n && strcmp(names[j], kname) != 0)
                j++;
            if (j == n)
                vm_raise_kind(vm, TypeError, "'%s' is an invalid keyword argument for %s()", kname, name);
            if (j < npos)
                vm_raise_kind(vm, TypeError, "argument for %s() given by name ('%s') and position (%d)", name,
                              kname, j + 1);
            out[j] = v;
        }
    }
    return self;
}

/* An argument that must be a str ("must be str, not int"). */
static Str *need_str(VM *vm, Value v) {
    if (!is_str(vm, v))
        vm_raise_kind(vm, TypeError, "must be str, not %s", vm_type_name(vm, v));
    return AS_STR(v);
}

/* start/end arguments of find, count, startswith...: int or None. */
static int64_t slice_arg(VM *vm, int argc, Value *argv, int i, int64_t dflt) {
    if (i >= argc)
        return dflt;
    Value v = argv[i];
    if (IS_NONE(v) || IS_EMPTY(v))
        return dflt;
    if (IS_INTLIKE(v))
        return AS_INTLIKE(v);
    if (IS_OBJ(v) && (AS_OBJ(v)->type->flags & TYPE_HEAP))
        return vm_to_index(vm, v);
    vm_raise_kind(vm, TypeError, "slice indices must be integers or None or have an __index__ method");
}

/* CPython's ADJUST_INDICES: negative from the end, clamp end to len. */
static void adjust_indices(int64_t *start, int64_t *end, int64_t len) {
    if (*end > len)
        *end = len;
    else if (*end < 0) {
        *end += len;
        if (*end < 0)
            *end = 0;
    }
    if (*start < 0) {
        *start += len;
        if (*start < 0)
            *start = 0;
    }
}

/* Byte offset of character index ci (0 <= ci <= nchars). */
static inline size_t boff(const Str *s, int64_t ci) {
    if (ci >= s->nchars)
        return (size_t)s->len;
    if (s->ascii)
        return (size_t)ci;
    return uc_offset(s->chars, (size_t)s->len, (size_t)ci);
}

/* Character index of byte offset off. */
static inline int64_t cidx(const Str *s, size_t off) {
    return s->ascii ? (int64_t)off : (int64_t)uc_index(s->chars, off);
}

/* Last occurrence of needle in hay, or NULL. */
static const char *rfind_bytes(const char *hay, size_t hl, const char *nd, size_t nl) {
    if (nl == 0)
        return hay + hl;
    if (nl > hl)
        return NULL;
    for (const char *p = hay + hl - nl;; p--) {
        if (*p == *nd && memcmp(p, nd, nl) == 0)
            return p;
        if (p == hay)
            return NULL;
    }
}

static inline const char *find_bytes(const char *hay, size_t hl, const char *nd, size_t nl) {
    if (nl == 1)
        return memchr(hay, nd[0], hl);
    return memmem(hay, hl, nd, nl);
}

/* Decodes every code point of s into a malloc'd array (NULL: no memory). */
static uint32_t *decode_all(const Str *s) {
    uint32_t *cps = malloc(sizeof(uint32_t) * (size_t)(s->nchars ? s->nchars : 1));
    if (!cps)
        return NULL;
    size_t i = 0, k = 0;
    while (i < (size_t)s->len)
        cps[k++] = uc_decode(s->chars, &i);
    return cps;
}

static void sb_put_cp(StrBuf *sb, uint32_t cp) {
    char buf[4];
    int n = uc_encode(cp, buf);
    sb_append(sb, buf, (size_t)n);
}

/* ================================================================ slots */

static Value str_repr_slot(VM *vm, Value self) {
    return STR_VAL(str_repr(vm, AS_STR(self)));
}

static Value str_str_slot(VM *vm, Value self) {
    (void)vm;
    return self;
}

static int64_t str_hash_slot(VM *vm, Value self) {
    (void)vm;
    return AS_STR(self)->hash;
}

static int str_cmp(Str *a, Str *b) {
    size_t n = (size_t)(a->len < b->len ? a->len : b->len);
    int c = memcmp(a->chars, b->chars, n);
    if (c)
        return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

static Value str_compare_slot(VM *vm, CmpOp op, Value a, Value b) {
    if (!is_str(vm, a) || !is_str(vm, b))
        return EMPTY_VAL;
    Str *x = AS_STR(a), *y = AS_STR(b);
    switch (op) {
    case CMP_EQ: return BOOL_VAL(str_equal(x, y));
    case CMP_NE: return BOOL_VAL(!str_equal(x, y));
    case CMP_LT: return BOOL_VAL(str_cmp(x, y) < 0);
    case CMP_LE: return BOOL_VAL(str_cmp(x, y) <= 0);
    case CMP_GT: return BOOL_VAL(str_cmp(x, y) > 0);
    case CMP_GE: return BOOL_VAL(str_cmp(x, y) >= 0);
    default: return EMPTY_VAL;
    }
}

/* s * n */
static Str *str_repeat(VM *vm, Str *s, int64_t n) {
    if (n <= 0 || s->len == 0)
        return make_str(vm, "", 0, 0);
    if (n == 1)
        return s;
    if (s->len > INT64_MAX / n || s->len * n > (int64_t)UINT32_MAX)
        no_memory(vm);
    size_t total = (size_t)(s->len * n);
    Builder b;
    char *p = bld_start(vm, &b, total);
    if (s->len == 1) {
        memset(p, s->chars[0], total);
    } else {
        memcpy(p, s->chars, (size_t)s->len);
        size_t done = (size_t)s->len;
        while (done < total) {
            size_t k = done < total - done ? done : total - done;
            memcpy(p + done, p, k);
            done += k;
        }
    }
    return bld_end(vm, &b, s->nchars * n);
}

/* Instances of user classes may still implement the reflected operator. */
static bool is_heap_instance(VM *vm, Value v) {
    return IS_OBJ(v) && (vm_typeof(vm, v)->flags & TYPE_HEAP);
}

static Value str_binop_slot(VM *vm, BinOp op, Value a, Value b) {
    switch (op) {
    case BINOP_ADD:
        if (!is_str(vm, a))
            return EMPTY_VAL;
        if (!is_str(vm, b)) {
            if (is_heap_instance(vm, b))
                return EMPTY_VAL;
            vm_raise_kind(vm, TypeError, "can only concatenate str (not \"%s\") to str", vm_type_name(vm, b));
        }
        return STR_VAL(str_concat(vm, AS_STR(a), AS_STR(b)));
    case BINOP_MUL: {
        Value s = is_str(vm, a) ? a : b, n = is_str(vm, a) ? b : a;
        if (IS_INTLIKE(n))
            return STR_VAL(str_repeat(vm, AS_STR(s), AS_INTLIKE(n)));
        if (is_heap_instance(vm, n))
            return EMPTY_VAL;
        if (IS_OBJ(n) && AS_OBJ(n)->type == vm->t_int) /* a big int */
            vm_raise_kind(vm, OverflowError, "cannot fit 'int' into an index-sized integer");
        vm_raise_kind(vm, TypeError, "can't multiply sequence by non-int of type '%s'", vm_type_name(vm, n));
    }
    case BINOP_MOD:
        if (!is_str(vm, a))
            return EMPTY_VAL;
        return STR_VAL(str_percent_format(vm, AS_STR(a), b));
    default: return EMPTY_VAL;
    }
}

/* s[i] for a normalized index */
static Str *char_at(VM *vm, Str *s, int64_t i) {
    if (s->ascii) {
        unsigned char c = (unsigned char)s->chars[i];
        return vm->single_chars[c] ? vm->single_chars[c] : make_str(vm, s->chars + i, 1, 1);
    }
    size_t off = uc_offset(s->chars, (size_t)s->len, (size_t)i);
    return make_str(vm, s->chars + off, (size_t)uc_seqlen((unsigned char)s->chars[off]), 1);
}

static Str *str_slice(VM *vm, Str *s, Slice *sl) {
    int64_t start, stop, step;
    int64_t n = slice_indices(vm, sl, s->nchars, &start, &stop, &step);
    if (n <= 0)
        return make_str(vm, "", 0, 0);
    if (step == 1) {
        size_t b0 = boff(s, start);
        size_t b1 = s->ascii ? (size_t)(start + n) : b0 + uc_offset(s->chars + b0, (size_t)s->len - b0, (size_t)n);
        return make_str(vm, s->chars + b0, b1 - b0, n);
    }
    if (s->ascii) {
        Builder b;
        char *p = bld_start(vm, &b, (size_t)n);
        for (int64_t k = 0; k < n; k++)
            p[k] = s->chars[start + k * step];
        return bld_end(vm, &b, n);
    }
    /* non-ASCII with a step: index the character starts once */
    size_t *offs = malloc(sizeof(size_t) * (size_t)(s->nchars + 1));
    if (!offs)
        no_memory(vm);
    size_t i = 0, k = 0;
    while (i < (size_t)s->len) {
        offs[k++] = i;
        i += (size_t)uc_seqlen((unsigned char)s->chars[i]);
    }
    offs[k] = i;
    StrBuf sb;
    sb_init(&sb);
    for (int64_t j = 0; j < n; j++) {
        int64_t ci = start + j * step;
        sb_append(&sb, s->chars + offs[ci], offs[ci + 1] - offs[ci]);
    }
    free(offs);
    return sb_finish(vm, &sb);
}

static Value str_getitem_slot(VM *vm, Value self, Value key) {
    Str *s = AS_STR(self);
    int64_t i;
    if (IS_INTLIKE(key)) {
        i = AS_INTLIKE(key);
    } else if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) {
        return STR_VAL(str_slice(vm, s, (Slice *)AS_OBJ(key)));
    } else if (is_heap_instance(vm, key)) {
        i = vm_to_index(vm, key);
    } else if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_int) { /* a big int */
        vm_raise_kind(vm, IndexError, "cannot fit 'int' into an index-sized integer");
    } else {
        vm_raise_kind(vm, TypeError, "string indices must be integers, not '%s'", vm_type_name(vm, key));
    }
    if (i < 0)
        i += s->nchars;
    if (i < 0 || i >= s->nchars)
        vm_raise_kind(vm, IndexError, "string index out of range");
    return STR_VAL(char_at(vm, s, i));
}

static int64_t str_len_slot(VM *vm, Value self) {
    (void)vm;
    return AS_STR(self)->nchars;
}

static bool str_truthy_slot(VM *vm, Value self) {
    (void)vm;
    return AS_STR(self)->len > 0;
}

static bool str_contains_slot(VM *vm, Value self, Value item) {
    if (!is_str(vm, item))
        vm_raise_kind(vm, TypeError, "'in <string>' requires string as left operand, not %s",
                      vm_type_name(vm, item));
    Str *s = AS_STR(self), *sub = AS_STR(item);
    return find_bytes(s->chars, (size_t)s->len, sub->chars, (size_t)sub->len) != NULL;
}

/* str(), str(x), str(object=x); encoding/errors need bytes, which gpy lacks. */
static Value str_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    Value obj = EMPTY_VAL, enc = EMPTY_VAL, err = EMPTY_VAL;
    if (argc > 3)
        vm_raise_kind(vm, TypeError, "str() takes at most 3 arguments (%d given)", argc);
    if (argc > 0)
        obj = argv[0];
    if (argc > 1)
        enc = argv[1];
    if (argc > 2)
        err = argv[2];
    if (kwargs && kwargs->count > 0) {
        static const char *const names[] = {"object", "encoding", "errors"};
        Value *slots[] = {&obj, &enc, &err};
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v)) {
            const char *kname = is_str(vm, k) ? AS_STR(k)->chars : "?";
            int j = 0;
            while (j < 3 && strcmp(names[j], kname) != 0)
                j++;
            if (j == 3)
                vm_raise_kind(vm, TypeError, "'%s' is an invalid keyword argument for str()", kname);
            if (j < argc)
                vm_raise_kind(vm, TypeError, "argument for str() given by name ('%s') and position (%d)", kname,
                              j + 1);
            *slots[j] = v;
        }
    }
    if (!IS_EMPTY(enc) || !IS_EMPTY(err)) {
        if (IS_EMPTY(obj))
            return STR_VAL(make_str(vm, "", 0, 0));
        BufferView bv;
        if (IS_STR(vm, obj)) vm_raise_kind(vm, TypeError, "decoding str is not supported");
        if (buffer_get(vm, obj, &bv)) { /* str(b, encoding, errors): codecs.c */
            if ((!IS_EMPTY(enc) && !is_str(vm, enc)) || (!IS_EMPTY(err) && !is_str(vm, err)))
                vm_raise_kind(vm, TypeError, "str() argument '%s' must be str, not %s",
                              !IS_EMPTY(enc) && !is_str(vm, enc) ? "encoding" : "errors",
                              vm_type_name(vm, !IS_EMPTY(enc) && !is_str(vm, enc) ? enc : err));
            return STR_VAL(codec_decode(vm, bv.buf, bv.len, IS_EMPTY(enc) ? NULL : AS_STR(enc)->chars,
                                        IS_EMPTY(err) ? NULL : AS_STR(err)->chars));
        }
        vm_raise_kind(vm, TypeError, "decoding to str: need a bytes-like object, %s found", vm_type_name(vm, obj));
    }
    if (IS_EMPTY(obj))
        return STR_VAL(make_str(vm, "", 0, 0));
    return STR_VAL(vm_str(vm, obj));
}

/* ---- str_iterator ---- */

typedef struct StrIter {
    Obj obj;
    Str *s;
    int64_t pos; /* byte offset of the next character */
} StrIter;

static Value str_iter_slot(VM *vm, Value self) {
    StrIter *it = gc_alloc_obj(vm, vm->t_str_iter, sizeof(StrIter));
    it->s = AS_STR(self);
    it->pos = 0;
    return OBJ_VAL(it);
}

static Value str_iter_self(VM *vm, Value self) {
    (void)vm;
    return self;
}

static bool str_iter_next(VM *vm, Value self, Value *out) {
    StrIter *it = (StrIter *)AS_OBJ(self);
    Str *s = it->s;
    if (it->pos >= s->len)
        return false;
    unsigned char c = (unsigned char)s->chars[it->pos];
    if (c < 0x80 && vm->single_chars[c]) {
        it->pos++;
        *out = STR_VAL(vm->single_chars[c]);
        return true;
    }
    int n = uc_seqlen(c);
    if (it->pos + n > s->len)
        n = (int)(s->len - it->pos);
    *out = STR_VAL(make_str(vm, s->chars + it->pos, (size_t)n, 1));
    it->pos += n;
    return true;
}

static void str_iter_mark(VM *vm, Obj *o) {
    gc_mark_obj(vm, (Obj *)((StrIter *)o)->s);
}

static int64_t str_iter_len(VM *vm, Value self) {
    (void)vm;
    StrIter *it = (StrIter *)AS_OBJ(self);
    if (it->s->ascii)
        return it->s->len - it->pos;
    return (int64_t)uc_count(it->s->chars + it->pos, (size_t)(it->s->len - it->pos));
}

/* ================================================================ methods: joining and splitting */

static Value m_join(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *sep = method_self(vm, "join", argc, argv, kwargs, ONEARG, 1, 1);
    Value it = argv[1];
    Value *items;
    int64_t n;
    if (IS_LIST(vm, it)) {
        items = AS_LIST(it)->items;
        n = AS_LIST(it)->len;
    } else if (IS_TUPLE(vm, it)) {
        items = AS_TUPLE(it)->items;
        n = AS_TUPLE(it)->len;
    } else {
        if (!IS_OBJ(it))
            vm_raise_kind(vm, TypeError, "can only join an iterable");
        vm_push_root(vm, STR_VAL(sep));
        List *l = list_from_iterable(vm, it);
        vm_pop_roots(vm, 1);
        items = l->items;
        n = l->len;
    }
    if (n == 0)
        return STR_VAL(make_str(vm, "", 0, 0));
    if (n == 1 && is_str(vm, items[0]))
        return items[0];
    size_t total = (size_t)sep->len * (size_t)(n - 1);
    int64_t nchars = sep->nchars * (n - 1);
    for (int64_t i = 0; i < n; i++) {
        if (!is_str(vm, items[i]))
            vm_raise_kind(vm, TypeError, "sequence item %lld: expected str instance, %s found", (long long)i,
                          vm_type_name(vm, items[i]));
        total += (size_t)AS_STR(items[i])->len;
        nchars += AS_STR(items[i])->nchars;
    }
    Builder b;
    char *p = bld_start(vm, &b, total);
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && sep->len) {
            memcpy(p, sep->chars, (size_t)sep->len);
            p += sep->len;
        }
        Str *x = AS_STR(items[i]);
        memcpy(p, x->chars, (size_t)x->len);
        p += x->len;
    }
    return STR_VAL(bld_end(vm, &b, nchars));
}

/* Byte length of the whitespace character at s[i], or 0. */
static inline size_t space_at(const char *s, size_t i, size_t n) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80)
        return (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) ? 1 : 0;
    size_t j = i;
    uint32_t cp = uc_decode(s, &j);
    (void)n;
    return uc_isspace(cp) ? j - i : 0;
}

/* Start of the character that ends right before byte end (> 0). */
static inline size_t prev_start(const char *s, size_t end) {
    size_t j = end - 1;
    while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80)
        j--;
    return j;
}

static inline size_t next_char(const char *s, size_t i) {
    return i + (size_t)uc_seqlen((unsigned char)s[i]);
}

static const char *const split_kw[] = {"sep", "maxsplit"};

/* Parses sep/maxsplit of split and rsplit. Returns sep or NULL (whitespace). */
static Str *split_args(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, Str **self,
                       int64_t *maxsplit) {
    Value a[2];
    *self = method_self_kw(vm, name, argc, argv, kwargs, split_kw, 2, a);
    Str *sep = NULL;
    if (!IS_EMPTY(a[0]) && !IS_NONE(a[0])) {
        if (!is_str(vm, a[0]))
            vm_raise_kind(vm, TypeError, "must be str or None, not %s", vm_type_name(vm, a[0]));
        sep = AS_STR(a[0]);
    }
    *maxsplit = IS_EMPTY(a[1]) ? -1 : vm_to_index(vm, a[1]);
    if (*maxsplit < 0)
        *maxsplit = INT64_MAX;
    if (sep && sep->len == 0)
        vm_raise_kind(vm, ValueError, "empty separator");
    return sep;
}

static Value m_split(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s;
    int64_t maxcount;
    Str *sep = split_args(vm, "split", argc, argv, kwargs, &s, &maxcount);
    List *l = list_new(vm, 0);
    const char *p = s->chars;
    size_t n = (size_t)s->len, i = 0;
    if (!sep) {
        while (maxcount-- > 0) {
            size_t k;
            while (i < n && (k = space_at(p, i, n)))
                i += k;
            if (i == n)
                break;
            size_t j = i;
            i = next_char(p, i);
            while (i < n && !space_at(p, i, n))
                i = next_char(p, i);
            list_append(vm, l, STR_VAL(substr(vm, s, j, i)));
        }
        if (i < n) {
            size_t k;
            while (i < n && (k = space_at(p, i, n)))
                i += k;
            if (i != n)
                list_append(vm, l, STR_VAL(substr(vm, s, i, n)));
        }
        return OBJ_VAL(l);
    }
    while (maxcount-- > 0) {
        const char *f = find_bytes(p + i, n - i, sep->chars, (size_t)sep->len);
        if (!f)
            break;
        size_t j = (size_t)(f - p);
        list_append(vm, l, STR_VAL(substr(vm, s, i, j)));
        i = j + (size_t)sep->len;
    }
    list_append(vm, l, STR_VAL(substr(vm, s, i, n)));
    return OBJ_VAL(l);
}

static void list_reverse(List *l) {
    for (int64_t a = 0, b = l->len - 1; a < b; a++, b--) {
        Value t = l->items[a];
        l->items[a] = l->items[b];
        l->items[b] = t;
    }
}

static Value m_rsplit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s;
    int64_t maxcount;
    Str *sep = split_args(vm, "rsplit", argc, argv, kwargs, &s, &maxcount);
    List *l = list_new(vm, 0);
    const char *p = s->chars;
    size_t n = (size_t)s->len;
    if (!sep) {
        size_t i = n; /* exclusive end of the unprocessed part */
        while (maxcount-- > 0) {
            while (i > 0 && space_at(p, prev_start(p, i), n))
                i = prev_start(p, i);
            if (i == 0)
                break;
            size_t j = i;
            i = prev_start(p, i);
            while (i > 0 && !space_at(p, prev_start(p, i), n))
                i = prev_start(p, i);
            list_append(vm, l, STR_VAL(substr(vm, s, i, j)));
        }
        if (i > 0) {
            while (i > 0 && space_at(p, prev_start(p, i), n))
                i = prev_start(p, i);
            if (i > 0)
                list_append(vm, l, STR_VAL(substr(vm, s, 0, i)));
        }
        list_reverse(l);
        return OBJ_VAL(l);
    }
    size_t j = n;
    while (maxcount-- > 0) {
        const char *f = rfind_bytes(p, j, sep->chars, (size_t)sep->len);
        if (!f)
            break;
        size_t pos = (size_t)(f - p);
        list_append(vm, l, STR_VAL(substr(vm, s, pos + (size_t)sep->len, j)));
        j = pos;
    }
    list_append(vm, l, STR_VAL(substr(vm, s, 0, j)));
    list_reverse(l);
    return OBJ_VAL(l);
}

/* Byte length of the line break at s[i], or 0 (\r\n is handled by the caller). */
static inline size_t linebreak_at(const char *s, size_t i, size_t n) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80)
        return (c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E) ? 1 : 0;
    if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85)
        return 2;
    if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
        ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9))
        return 3;
    return 0;
}

static Value m_splitlines(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"keepends"};
    Value a[1];
    Str *s = method_self_kw(vm, "splitlines", argc, argv, kwargs, names, 1, a);
    bool keepends = !IS_EMPTY(a[0]) && vm_truthy(vm, a[0]);
    List *l = list_new(vm, 0);
    const char *p = s->chars;
    size_t n = (size_t)s->len, i = 0, j = 0;
    while (i < n) {
        size_t k = 0;
        while (i < n && !(k = linebreak_at(p, i, n)))
            i = next_char(p, i);
        size_t eol = i;
        if (i < n) {
            if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n')
                i += 2;
            else
                i += k;
            if (keepends)
                eol = i;
        }
        list_append(vm, l, STR_VAL(substr(vm, s, j, eol)));
        j = i;
    }
    return OBJ_VAL(l);
}

static Value partition_impl(VM *vm, int argc, Value *argv, Dict *kwargs, const char *name, bool rev) {
    Str *s = method_self(vm, name, argc, argv, kwargs, ONEARG, 1, 1);
    Str *sep = need_str(vm, argv[1]);
    if (sep->len == 0)
        vm_raise_kind(vm, ValueError, "empty separator");
    const char *f = rev ? rfind_bytes(s->chars, (size_t)s->len, sep->chars, (size_t)sep->len)
                        : find_bytes(s->chars, (size_t)s->len, sep->chars, (size_t)sep->len);
    Tuple *t = tuple_new(vm, 3);
    Value empty = STR_VAL(make_str(vm, "", 0, 0));
    if (!f) {
        t->items[0] = rev ? empty : STR_VAL(s);
        t->items[1] = empty;
        t->items[2] = rev ? STR_VAL(s) : empty;
        return OBJ_VAL(t);
    }
    size_t pos = (size_t)(f - s->chars);
    t->items[0] = STR_VAL(substr(vm, s, 0, pos));
    t->items[1] = STR_VAL(sep);
    t->items[2] = STR_VAL(substr(vm, s, pos + (size_t)sep->len, (size_t)s->len));
    return OBJ_VAL(t);
}

static Value m_partition(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return partition_impl(vm, argc, argv, kwargs, "partition", false);
}

static Value m_rpartition(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return partition_impl(vm, argc, argv, kwargs, "rpartition", true);
}

/* ================================================================ methods: stripping */

/* Whether the encoded character c[0..n) occurs in set. */
static bool in_charset(const Str *set, const char *c, size_t n) {
    return find_bytes(set->chars, (size_t)set->len, c, n) != NULL;
}

/* which: 1 left, 2 right, 3 both */
static Value strip_impl(VM *vm, int argc, Value *argv, Dict *kwargs, const char *name, int which) {
    Str *s = method_self(vm, name, argc, argv, kwargs, CLINIC, 0, 1);
    const char *p = s->chars;
    size_t n = (size_t)s->len, i = 0, j = n;
    Str *chars = NULL;
    if (argc > 1 && !IS_NONE(argv[1])) {
        if (!is_str(vm, argv[1]))
            vm_raise_kind(vm, TypeError, "%s arg must be None or str", name);
        chars = AS_STR(argv[1]);
    }
    if (!chars) {
        if (which & 1) {
            size_t k;
            while (i < n && (k = space_at(p, i, n)))
                i += k;
        }
        if (which & 2)
            while (j > i && space_at(p, prev_start(p, j), n))
                j = prev_start(p, j);
        return STR_VAL(substr(vm, s, i, j));
    }
    if (chars->ascii) {
        bool set[128] = {false};
        for (int64_t k = 0; k < chars->len; k++)
            set[(unsigned char)chars->chars[k]] = true;
        if (which & 1)
            while (i < n && (unsigned char)p[i] < 0x80 && set[(unsigned char)p[i]])
                i++;
        if (which & 2)
            while (j > i && (unsigned char)p[j - 1] < 0x80 && set[(unsigned char)p[j - 1]])
                j--;
        return STR_VAL(substr(vm, s, i, j));
    }
    /* non-ASCII strip set: compare whole encoded characters */
    if (which & 1)
        while (i < n && in_charset(chars, p + i, next_char(p, i) - i))
            i = next_char(p, i);
    if (which & 2)
        while (j > i && in_charset(chars, p + prev_start(p, j), j - prev_start(p, j)))
            j = prev_start(p, j);
    return STR_VAL(substr(vm, s, i, j));
}

static Value m_strip(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return strip_impl(vm, argc, argv, kwargs, "strip", 3);
}

static Value m_lstrip(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return strip_impl(vm, argc, argv, kwargs, "lstrip", 1);
}

static Value m_rstrip(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return strip_impl(vm, argc, argv, kwargs, "rstrip", 2);
}

static Value affix_impl(VM *vm, int argc, Value *argv, Dict *kwargs, const char *name, bool suffix) {
    Str *s = method_self(vm, name, argc, argv, kwargs, ONEARG, 1, 1);
    if (!is_str(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "%s() argument must be str, not %s", name, vm_type_name(vm, argv[1]));
    Str *a = AS_STR(argv[1]);
    if (a->len == 0 || a->len > s->len)
        return STR_VAL(s);
    if (!suffix && memcmp(s->chars, a->chars, (size_t)a->len) == 0)
        return STR_VAL(substr(vm, s, (size_t)a->len, (size_t)s->len));
    if (suffix && memcmp(s->chars + s->len - a->len, a->chars, (size_t)a->len) == 0)
        return STR_VAL(substr(vm, s, 0, (size_t)(s->len - a->len)));
    return STR_VAL(s);
}

static Value m_removeprefix(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affix_impl(vm, argc, argv, kwargs, "removeprefix", false);
}

static Value m_removesuffix(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affix_impl(vm, argc, argv, kwargs, "removesuffix", true);
}

/* ================================================================ methods: searching */

/* dir: 1 find, -1 rfind. Returns the character index or -1. */
static int64_t find_in(VM *vm, int argc, Value *argv, Str *s, Str *sub, int dir) {
    int64_t start = slice_arg(vm, argc, argv, 2, 0);
    int64_t end = slice_arg(vm, argc, argv, 3, INT64_MAX);
    adjust_indices(&start, &end, s->nchars);
    if (end - start < sub->nchars)
        return -1;
    if (sub->len == 0)
        return dir > 0 ? start : end;
    size_t b0 = boff(s, start), b1 = boff(s, end);
    const char *f = dir > 0 ? find_bytes(s->chars + b0, b1 - b0, sub->chars, (size_t)sub->len)
                            : rfind_bytes(s->chars + b0, b1 - b0, sub->chars, (size_t)sub->len);
    if (!f)
        return -1;
    return cidx(s, (size_t)(f - s->chars));
}

static Value m_find(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "find", argc, argv, kwargs, VARARGS, 1, 3);
    return INT_VAL(find_in(vm, argc, argv, s, need_str(vm, argv[1]), 1));
}

static Value m_rfind(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "rfind", argc, argv, kwargs, VARARGS, 1, 3);
    return INT_VAL(find_in(vm, argc, argv, s, need_str(vm, argv[1]), -1));
}

static Value m_index(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "index", argc, argv, kwargs, VARARGS, 1, 3);
    int64_t r = find_in(vm, argc, argv, s, need_str(vm, argv[1]), 1);
    if (r < 0)
        vm_raise_kind(vm, ValueError, "substring not found");
    return INT_VAL(r);
}

static Value m_rindex(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "rindex", argc, argv, kwargs, VARARGS, 1, 3);
    int64_t r = find_in(vm, argc, argv, s, need_str(vm, argv[1]), -1);
    if (r < 0)
        vm_raise_kind(vm, ValueError, "substring not found");
    return INT_VAL(r);
}

/* Non-overlapping occurrences of sub in s[b0..b1), at most max. */
static int64_t count_bytes(const char *p, size_t b0, size_t b1, Str *sub, int64_t max) {
    int64_t n = 0;
    size_t i = b0;
    while (n < max) {
        const char *f = find_bytes(p + i, b1 - i, sub->chars, (size_t)sub->len);
        if (!f)
            break;
        n++;
        i = (size_t)(f - p) + (size_t)sub->len;
    }
    return n;
}

static Value m_count(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "count", argc, argv, kwargs, VARARGS, 1, 3);
    Str *sub = need_str(vm, argv[1]);
    int64_t start = slice_arg(vm, argc, argv, 2, 0);
    int64_t end = slice_arg(vm, argc, argv, 3, INT64_MAX);
    adjust_indices(&start, &end, s->nchars);
    if (end - start < sub->nchars)
        return INT_VAL(0);
    if (sub->len == 0)
        return INT_VAL(end - start + 1);
    return INT_VAL(count_bytes(s->chars, boff(s, start), boff(s, end), sub, INT64_MAX));
}

/* startswith / endswith of one candidate over the adjusted range. */
static bool tailmatch(Str *s, Str *sub, int64_t start, int64_t end, bool suffix) {
    adjust_indices(&start, &end, s->nchars);
    end -= sub->nchars;
    if (end < start)
        return false;
    if (sub->len == 0)
        return true;
    size_t b0 = boff(s, start), b1 = boff(s, end + sub->nchars);
    if (b1 - b0 < (size_t)sub->len)
        return false;
    if (suffix)
        return memcmp(s->chars + b1 - sub->len, sub->chars, (size_t)sub->len) == 0;
    return memcmp(s->chars + b0, sub->chars, (size_t)sub->len) == 0;
}

static Value affixmatch_impl(VM *vm, int argc, Value *argv, Dict *kwargs, const char *name, bool suffix) {
    Str *s = method_self(vm, name, argc, argv, kwargs, VARARGS, 1, 3);
    int64_t start = slice_arg(vm, argc, argv, 2, 0);
    int64_t end = slice_arg(vm, argc, argv, 3, INT64_MAX);
    Value a = argv[1];
    if (IS_TUPLE(vm, a)) {
        Tuple *t = AS_TUPLE(a);
        for (int64_t i = 0; i < t->len; i++) {
            if (!is_str(vm, t->items[i]))
                vm_raise_kind(vm, TypeError, "tuple for %s must only contain str, not %s", name,
                              vm_type_name(vm, t->items[i]));
            if (tailmatch(s, AS_STR(t->items[i]), start, end, suffix))
                return BOOL_VAL(true);
        }
        return BOOL_VAL(false);
    }
    if (!is_str(vm, a))
        vm_raise_kind(vm, TypeError, "%s first arg must be str or a tuple of str, not %s", name,
                      vm_type_name(vm, a));
    return BOOL_VAL(tailmatch(s, AS_STR(a), start, end, suffix));
}

static Value m_startswith(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affixmatch_impl(vm, argc, argv, kwargs, "startswith", false);
}

static Value m_endswith(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affixmatch_impl(vm, argc, argv, kwargs, "endswith", true);
}

static Value m_replace(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "replace", argc, argv, kwargs, CLINIC, 2, 3);
    for (int i = 1; i <= 2; i++)
        if (!is_str(vm, argv[i]))
            vm_raise_kind(vm, TypeError, "replace() argument %d must be str, not %s", i, vm_type_name(vm, argv[i]));
    Str *old = AS_STR(argv[1]), *new_ = AS_STR(argv[2]);
    int64_t max = argc > 3 ? vm_to_index(vm, argv[3]) : -1;
    if (max < 0)
        max = INT64_MAX;
    const char *p = s->chars;
    size_t n = (size_t)s->len;
    if (old->len == 0) {
        /* insert new before every character and at the end */
        int64_t k = s->nchars + 1 < max ? s->nchars + 1 : max;
        if (k == 0 || new_->len == 0)
            return STR_VAL(s);
        Builder b;
        char *o = bld_start(vm, &b, n + (size_t)k * (size_t)new_->len);
        size_t i = 0;
        for (int64_t r = 0; r < k; r++) {
            memcpy(o, new_->chars, (size_t)new_->len);
            o += new_->len;
            if (i < n) {
                size_t e = next_char(p, i);
                memcpy(o, p + i, e - i);
                o += e - i;
                i = e;
            }
        }
        memcpy(o, p + i, n - i);
        return STR_VAL(bld_end(vm, &b, s->nchars + k * new_->nchars));
    }
    int64_t cnt = count_bytes(p, 0, n, old, max);
    if (cnt == 0)
        return STR_VAL(s);
    size_t total = n + (size_t)cnt * (size_t)new_->len - (size_t)cnt * (size_t)old->len;
    Builder b;
    char *o = bld_start(vm, &b, total);
    size_t i = 0;
    for (int64_t r = 0; r < cnt; r++) {
        const char *f = find_bytes(p + i, n - i, old->chars, (size_t)old->len);
        size_t j = (size_t)(f - p);
        memcpy(o, p + i, j - i);
        o += j - i;
        memcpy(o, new_->chars, (size_t)new_->len);
        o += new_->len;
        i = j + (size_t)old->len;
    }
    memcpy(o, p + i, n - i);
    return STR_VAL(bld_end(vm, &b, s->nchars + cnt * (new_->nchars - old->nchars)));
}

/* ================================================================ methods: case */

typedef enum CaseOp { C_UPPER, C_LOWER, C_SWAP, C_FOLD, C_CAPITALIZE, C_TITLE } CaseOp;

/* Lowercase of capital sigma at position i: final form at the end of a word. */
static uint32_t lower_sigma(const uint32_t *cps, int64_t n, int64_t i) {
    int64_t j = i - 1;
    while (j >= 0 && uc_iscase_ignorable(cps[j]))
        j--;
    bool final = j >= 0 && uc_iscased(cps[j]);
    if (final && i + 1 < n) {
        j = i + 1;
        while (j < n && uc_iscase_ignorable(cps[j]))
            j++;
        final = j == n || !uc_iscased(cps[j]);
    }
    return final ? 0x3C2 : 0x3C3;
}

static int lower_at(const uint32_t *cps, int64_t n, int64_t i, uint32_t out[3]) {
    if (cps[i] == 0x3A3) {
        out[0] = lower_sigma(cps, n, i);
        return 1;
    }
    return uc_lower_full(cps[i], out);
}

static Str *case_ascii(VM *vm, Str *s, CaseOp op) {
    Builder b;
    char *o = bld_start(vm, &b, (size_t)s->len);
    const unsigned char *p = (const unsigned char *)s->chars;
    int64_t n = s->len;
    bool prev_cased = false;
    for (int64_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        bool up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z';
        switch (op) {
        case C_UPPER: c = lo ? (unsigned char)(c - 32) : c; break;
        case C_LOWER:
        case C_FOLD: c = up ? (unsigned char)(c + 32) : c; break;
        case C_SWAP: c = up ? (unsigned char)(c + 32) : lo ? (unsigned char)(c - 32) : c; break;
        case C_CAPITALIZE:
            if (i == 0)
                c = lo ? (unsigned char)(c - 32) : c;
            else
                c = up ? (unsigned char)(c + 32) : c;
            break;
        case C_TITLE:
            if (prev_cased)
                c = up ? (unsigned char)(c + 32) : c;
            else
                c = lo ? (unsigned char)(c - 32) : c;
            prev_cased = up || lo;
            break;
        }
        o[i] = (char)c;
    }
    return bld_end(vm, &b, n);
}

static Str *case_convert(VM *vm, Str *s, CaseOp op) {
    if (s->ascii)
        return case_ascii(vm, s, op);
    uint32_t *cps = decode_all(s);
    if (!cps)
        no_memory(vm);
    int64_t n = s->nchars;
    StrBuf sb;
    sb_init(&sb);
    bool prev_cased = false;
    for (int64_t i = 0; i < n; i++) {
        uint32_t c = cps[i], m[3];
        int k;
        switch (op) {
        case C_UPPER: k = uc_upper_full(c, m); break;
        case C_LOWER: k = lower_at(cps, n, i, m); break;
        case C_FOLD: k = uc_fold_full(c, m); break;
        case C_SWAP:
            if (uc_isupper(c))
                k = lower_at(cps, n, i, m);
            else if (uc_islower(c))
                k = uc_upper_full(c, m);
            else
                m[0] = c, k = 1;
            break;
        case C_CAPITALIZE: k = i == 0 ? uc_title_full(c, m) : lower_at(cps, n, i, m); break;
        case C_TITLE:
        default:
            k = prev_cased ? lower_at(cps, n, i, m) : uc_title_full(c, m);
            prev_cased = uc_iscased(c);
            break;
        }
        for (int j = 0; j < k; j++)
            sb_put_cp(&sb, m[j]);
    }
    free(cps);
    return sb_finish(vm, &sb);
}

#define CASE_METHOD(fname, pyname, op)                                     \
    static Value fname(VM *vm, int argc, Value *argv, Dict *kwargs) {      \
        Str *s = method_self(vm, pyname, argc, argv, kwargs, NOARGS, 0, 0); \
        return STR_VAL(case_convert(vm, s, op));                           \
    }
CASE_METHOD(m_upper, "upper", C_UPPER)
CASE_METHOD(m_lower, "lower", C_LOWER)
CASE_METHOD(m_swapcase, "swapcase", C_SWAP)
CASE_METHOD(m_casefold, "casefold", C_FOLD)
CASE_METHOD(m_capitalize, "capitalize", C_CAPITALIZE)
CASE_METHOD(m_title, "title", C_TITLE)
#undef CASE_METHOD

/* ================================================================ methods: predicates */

/* True when s is non-empty and every code point satisfies pred. */
static bool all_chars(Str *s, bool (*pred)(uint32_t)) {
    if (s->len == 0)
        return false;
    size_t i = 0;
    while (i < (size_t)s->len)
        if (!pred(uc_decode(s->chars, &i)))
            return false;
    return true;
}

static bool isalnum_cp(uint32_t c) {
    return uc_isalpha(c) || uc_isdecimal(c) || uc_isdigit(c) || uc_isnumeric(c);
}

#define PRED_METHOD(fname, pyname, pred)                                   \
    static Value fname(VM *vm, int argc, Value *argv, Dict *kwargs) {      \
        Str *s = method_self(vm, pyname, argc, argv, kwargs, NOARGS, 0, 0); \
        return BOOL_VAL(all_chars(s, pred));                               \
    }
PRED_METHOD(m_isdigit, "isdigit", uc_isdigit)
PRED_METHOD(m_isdecimal, "isdecimal", uc_isdecimal)
PRED_METHOD(m_isnumeric, "isnumeric", uc_isnumeric)
PRED_METHOD(m_isalpha, "isalpha", uc_isalpha)
PRED_METHOD(m_isalnum, "isalnum", isalnum_cp)
PRED_METHOD(m_isspace, "isspace", uc_isspace)
#undef PRED_METHOD

static Value m_isprintable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "isprintable", argc, argv, kwargs, NOARGS, 0, 0);
    return BOOL_VAL(s->len == 0 || all_chars(s, uc_isprintable));
}

static Value m_isascii(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "isascii", argc, argv, kwargs, NOARGS, 0, 0);
    return BOOL_VAL(s->ascii);
}

static Value m_isupper(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "isupper", argc, argv, kwargs, NOARGS, 0, 0);
    bool cased = false;
    size_t i = 0;
    while (i < (size_t)s->len) {
        uint32_t c = uc_decode(s->chars, &i);
        if (uc_islower(c) || uc_istitle(c))
            return BOOL_VAL(false);
        if (!cased && uc_isupper(c))
            cased = true;
    }
    return BOOL_VAL(cased);
}

static Value m_islower(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "islower", argc, argv, kwargs, NOARGS, 0, 0);
    bool cased = false;
    size_t i = 0;
    while (i < (size_t)s->len) {
        uint32_t c = uc_decode(s->chars, &i);
        if (uc_isupper(c) || uc_istitle(c))
            return BOOL_VAL(false);
        if (!cased && uc_islower(c))
            cased = true;
    }
    return BOOL_VAL(cased);
}

static Value m_istitle(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "istitle", argc, argv, kwargs, NOARGS, 0, 0);
    bool cased = false, prev_cased = false;
    size_t i = 0;
    while (i < (size_t)s->len) {
        uint32_t c = uc_decode(s->chars, &i);
        if (uc_isupper(c) || uc_istitle(c)) {
            if (prev_cased)
                return BOOL_VAL(false);
            prev_cased = cased = true;
        } else if (uc_islower(c)) {
            if (!prev_cased)
                return BOOL_VAL(false);
            prev_cased = cased = true;
        } else {
            prev_cased = false;
        }
    }
    return BOOL_VAL(cased);
}

static Value m_isidentifier(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "isidentifier", argc, argv, kwargs, NOARGS, 0, 0);
    if (s->len == 0)
        return BOOL_VAL(false);
    size_t i = 0;
    if (!uc_isid_start(uc_decode(s->chars, &i)))
        return BOOL_VAL(false);
    while (i < (size_t)s->len)
        if (!uc_isid_continue(uc_decode(s->chars, &i)))
            return BOOL_VAL(false);
    return BOOL_VAL(true);
}

/* ================================================================ methods: padding */

/* The fillchar argument of center/ljust/rjust as encoded bytes. */
static Str *fill_arg(VM *vm, int argc, Value *argv, int i) {
    if (i >= argc)
        return NULL;
    if (!is_str(vm, argv[i]))
        vm_raise_kind(vm, TypeError, "The fill character must be a unicode character, not %s",
                      vm_type_name(vm, argv[i]));
    Str *f = AS_STR(argv[i]);
    if (f->nchars != 1)
        vm_raise_kind(vm, TypeError, "The fill character must be exactly one character long");
    return f;
}

/* s with left and right copies of fill around it. */
static Str *pad(VM *vm, Str *s, int64_t left, int64_t right, Str *fill) {
    const char *fc = fill ? fill->chars : " ";
    size_t fl = fill ? (size_t)fill->len : 1;
    if (left < 0)
        left = 0;
    if (right < 0)
        right = 0;
    if (left == 0 && right == 0)
        return s;
    if ((uint64_t)(left + right) > UINT32_MAX)
        no_memory(vm);
    Builder b;
    char *o = bld_start(vm, &b, (size_t)s->len + (size_t)(left + right) * fl);
    for (int64_t k = 0; k < left; k++, o += fl)
        memcpy(o, fc, fl);
    memcpy(o, s->chars, (size_t)s->len);
    o += s->len;
    for (int64_t k = 0; k < right; k++, o += fl)
        memcpy(o, fc, fl);
    return bld_end(vm, &b, s->nchars + left + right);
}

static Value m_center(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "center", argc, argv, kwargs, CLINIC, 1, 2);
    int64_t width = vm_to_index(vm, argv[1]);
    Str *fill = fill_arg(vm, argc, argv, 2);
    if (width <= s->nchars)
        return STR_VAL(s);
    int64_t marg = width - s->nchars;
    int64_t left = marg / 2 + (marg & width & 1);
    return STR_VAL(pad(vm, s, left, marg - left, fill));
}

static Value m_ljust(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "ljust", argc, argv, kwargs, CLINIC, 1, 2);
    int64_t width = vm_to_index(vm, argv[1]);
    Str *fill = fill_arg(vm, argc, argv, 2);
    if (width <= s->nchars)
        return STR_VAL(s);
    return STR_VAL(pad(vm, s, 0, width - s->nchars, fill));
}

static Value m_rjust(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "rjust", argc, argv, kwargs, CLINIC, 1, 2);
    int64_t width = vm_to_index(vm, argv[1]);
    Str *fill = fill_arg(vm, argc, argv, 2);
    if (width <= s->nchars)
        return STR_VAL(s);
    return STR_VAL(pad(vm, s, width - s->nchars, 0, fill));
}

static Value m_zfill(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "zfill", argc, argv, kwargs, ONEARG, 1, 1);
    int64_t width = vm_to_index(vm, argv[1]);
    if (width <= s->nchars)
        return STR_VAL(s);
    int64_t fill = width - s->nchars;
    Builder b;
    char *o = bld_start(vm, &b, (size_t)(s->len + fill));
    memset(o, '0', (size_t)fill);
    memcpy(o + fill, s->chars, (size_t)s->len);
    if (s->len > 0 && (o[fill] == '+' || o[fill] == '-')) {
        o[0] = o[fill];
        o[fill] = '0';
    }
    return STR_VAL(bld_end(vm, &b, s->nchars + fill));
}

static Value m_expandtabs(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"tabsize"};
    Value a[1];
    Str *s = method_self_kw(vm, "expandtabs", argc, argv, kwargs, names, 1, a);
    int64_t tabsize = IS_EMPTY(a[0]) ? 8 : vm_to_index(vm, a[0]);
    if (!memchr(s->chars, '\t', (size_t)s->len))
        return STR_VAL(s);
    StrBuf sb;
    sb_init(&sb);
    int64_t col = 0;
    const char *p = s->chars;
    size_t i = 0, n = (size_t)s->len;
    while (i < n) {
        char c = p[i];
        if (c == '\t') {
            if (tabsize > 0) {
                int64_t incr = tabsize - (col % tabsize);
                if ((uint64_t)incr > (uint64_t)UINT32_MAX - sb.len) { /* past the Str size limit */
                    free(sb.data);
                    no_memory(vm);
                }
                col += incr;
                for (int64_t k = 0; k < incr; k++)
                    sb_putc(&sb, ' ');
            }
            i++;
            continue;
        }
        size_t e = next_char(p, i);
        sb_append(&sb, p + i, e - i);
        i = e;
        col++;
        if (c == '\n' || c == '\r')
            col = 0;
    }
    return STR_VAL(sb_finish(vm, &sb));
}

/* ================================================================ methods: translate */

static Value m_translate(VM *vm, int argc, Value *argv, Dict *kwargs);

/* str.maketrans(x[, y[, z]]) — a static method */
static Value m_maketrans(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (kwargs && kwargs->count > 0)
        vm_raise_kind(vm, TypeError, "maketrans() takes no keyword arguments");
    if (argc < 1 || argc > 3)
        vm_raise_kind(vm, TypeError, "maketrans expected %s %d argument%s, got %d", argc < 1 ? "at least" : "at most",
                      argc < 1 ? 1 : 3, argc < 1 ? "" : "s", argc);
    Dict *d = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(d));
    if (argc == 1) {
        if (!IS_DICT(vm, argv[0]))
            vm_raise_kind(vm, TypeError, "if you give only one argument to maketrans it must be a dict");
        int64_t pos = 0;
        Value k, v;
        while (dict_next(AS_DICT(argv[0]), &pos, &k, &v)) {
            if (is_str(vm, k)) {
                Str *ks = AS_STR(k);
                if (ks->nchars != 1)
                    vm_raise_kind(vm, ValueError, "string keys in translate table must be of length 1");
                size_t i = 0;
                k = INT_VAL(uc_decode(ks->chars, &i));
            } else if (!IS_INTLIKE(k)) {
                vm_raise_kind(vm, TypeError, "keys in translate table must be strings or integers");
            }
            dict_set(vm, d, INT_VAL(AS_INTLIKE(k)), v);
        }
    } else {
        for (int i = 0; i < argc; i++)
            if (!is_str(vm, argv[i]))
                vm_raise_kind(vm, TypeError, "maketrans() argument %d must be str, not %s", i + 1,
                              vm_type_name(vm, argv[i]));
        Str *x = AS_STR(argv[0]), *y = AS_STR(argv[1]);
        if (x->nchars != y->nchars)
            vm_raise_kind(vm, ValueError, "the first two maketrans arguments must have equal length");
        size_t i = 0, j = 0;
        while (i < (size_t)x->len) {
            uint32_t a = uc_decode(x->chars, &i), b = uc_decode(y->chars, &j);
            dict_set(vm, d, INT_VAL(a), INT_VAL(b));
        }
        if (argc == 3) {
            Str *z = AS_STR(argv[2]);
            i = 0;
            while (i < (size_t)z->len)
                dict_set(vm, d, INT_VAL(uc_decode(z->chars, &i)), NONE_VAL);
        }
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(d);
}

/* Appends the translation of code point c by value v (None deletes). */
static void translate_put(VM *vm, StrBuf *sb, Value v) {
    if (IS_NONE(v))
        return;
    if (IS_INTLIKE(v)) {
        int64_t x = AS_INTLIKE(v);
        if (x < 0 || x > 0x10FFFF) {
            sb_free(sb);
            vm_raise_kind(vm, ValueError, "character mapping must be in range(0x110000)");
        }
        sb_put_cp(sb, (uint32_t)x);
        return;
    }
    if (is_str(vm, v)) {
        sb_append_str(sb, AS_STR(v));
        return;
    }
    sb_free(sb);
    vm_raise_kind(vm, TypeError, "character mapping must return integer, None or str");
}

typedef struct TransLookup {
    Value table, key, result;
} TransLookup;

static void trans_getitem(VM *vm, void *ud) {
    TransLookup *t = ud;
    t->result = vm_getitem(vm, t->table, t->key);
}

static Value m_translate(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "translate", argc, argv, kwargs, ONEARG, 1, 1);
    Value table = argv[1];
    bool is_dict = IS_DICT(vm, table);
    if (!is_dict && !IS_OBJ(table))
        vm_raise_kind(vm, TypeError, "'%s' object is not subscriptable", vm_type_name(vm, table));
    vm_push_root(vm, STR_VAL(s));
    vm_push_root(vm, table);
    StrBuf sb;
    sb_init(&sb);
    size_t i = 0;
    while (i < (size_t)s->len) {
        size_t start = i;
        uint32_t c = uc_decode(s->chars, &i);
        Value v;
        if (is_dict) {
            if (!dict_get(vm, AS_DICT(table), INT_VAL(c), &v)) {
                sb_append(&sb, s->chars + start, i - start);
                continue;
            }
        } else {
            TransLookup t = {table, INT_VAL(c), EMPTY_VAL};
            if (!vm_pcall(vm, trans_getitem, &t)) {
                Value exc = vm->exc_value;
                if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_LookupError]))) {
                    sb_append(&sb, s->chars + start, i - start);
                    continue;
                }
                sb_free(&sb);
                vm_rethrow(vm, exc);
            }
            v = t.result;
        }
        translate_put(vm, &sb, v);
    }
    vm_pop_roots(vm, 2);
    return STR_VAL(sb_finish(vm, &sb));
}

/* ================================================================ methods: misc */

static Value m_encode(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return codec_str_encode_method(vm, argc, argv, kwargs); /* codecs.c */
}

static Value m_len(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "__len__", argc, argv, kwargs, NOARGS, 0, 0);
    return INT_VAL(s->nchars);
}

static Value m_contains(VM *vm, int argc, Value *argv, Dict *kwargs) {
    method_self(vm, "__contains__", argc, argv, kwargs, ONEARG, 1, 1);
    return BOOL_VAL(str_contains_slot(vm, argv[0], argv[1]));
}

static Value m_getitem(VM *vm, int argc, Value *argv, Dict *kwargs) {
    method_self(vm, "__getitem__", argc, argv, kwargs, ONEARG, 1, 1);
    return str_getitem_slot(vm, argv[0], argv[1]);
}

static Value binop_method(VM *vm, int argc, Value *argv, Dict *kwargs, const char *name, BinOp op, bool reflected) {
    method_self(vm, name, argc, argv, kwargs, ONEARG, 1, 1);
    Value a = reflected ? argv[1] : argv[0], b = reflected ? argv[0] : argv[1];
    if (op == BINOP_ADD && !is_str(vm, b))
        return vm->not_implemented;
    if (op == BINOP_MUL && !IS_INTLIKE(reflected ? a : b))
        return vm->not_implemented;
    return str_binop_slot(vm, op, a, b);
}

static Value m_add(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return binop_method(vm, argc, argv, kwargs, "__add__", BINOP_ADD, false);
}

static Value m_mul(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return binop_method(vm, argc, argv, kwargs, "__mul__", BINOP_MUL, false);
}

static Value m_rmul(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return binop_method(vm, argc, argv, kwargs, "__rmul__", BINOP_MUL, true);
}

static Value m_mod(VM *vm, int argc, Value *argv, Dict *kwargs) {
    method_self(vm, "__mod__", argc, argv, kwargs, ONEARG, 1, 1);
    return STR_VAL(str_percent_format(vm, AS_STR(argv[0]), argv[1]));
}

static Value cmp_method(VM *vm, int argc, Value *argv, Dict *kwargs, const char *name, CmpOp op) {
    method_self(vm, name, argc, argv, kwargs, ONEARG, 1, 1);
    Value r = str_compare_slot(vm, op, argv[0], argv[1]);
    return IS_EMPTY(r) ? vm->not_implemented : r;
}

#define CMP_METHOD(fname, pyname, op)                                  \
    static Value fname(VM *vm, int argc, Value *argv, Dict *kwargs) {  \
        return cmp_method(vm, argc, argv, kwargs, pyname, op);         \
    }
CMP_METHOD(m_eq, "__eq__", CMP_EQ)
CMP_METHOD(m_ne, "__ne__", CMP_NE)
CMP_METHOD(m_lt, "__lt__", CMP_LT)
CMP_METHOD(m_le, "__le__", CMP_LE)
CMP_METHOD(m_gt, "__gt__", CMP_GT)
CMP_METHOD(m_ge, "__ge__", CMP_GE)
#undef CMP_METHOD

static Value m_hash(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "__hash__", argc, argv, kwargs, NOARGS, 0, 0);
    return INT_VAL(s->hash);
}

static Value m_str(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "__str__", argc, argv, kwargs, NOARGS, 0, 0);
    return STR_VAL(s);
}

static Value m_repr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *s = method_self(vm, "__repr__", argc, argv, kwargs, NOARGS, 0, 0);
    return STR_VAL(str_repr(vm, s));
}

static Value m_iter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    method_self(vm, "__iter__", argc, argv, kwargs, NOARGS, 0, 0);
    return str_iter_slot(vm, argv[0]);
}

/* ================================================================ init */

static Value str_iter_len_hint(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    if (argc < 1 || !IS_OBJ(argv[0]) || AS_OBJ(argv[0])->type != vm->t_str_iter)
        vm_raise_kind(vm, TypeError, "__length_hint__ needs a str_iterator");
    return INT_VAL(str_iter_len(vm, argv[0]));
}

void str_init(VM *vm) {
    if (!vm->empty_str)
        vm->empty_str = str_intern(vm, "", 0);
    for (int i = 0; i < 128; i++) {
        if (!vm->single_chars[i]) {
            char c = (char)i;
            vm->single_chars[i] = str_intern(vm, &c, 1);
        }
    }

    Type *t = vm->t_str;
    t->new_ = str_new_slot;
    t->repr = str_repr_slot;
    t->str = str_str_slot;
    t->hash = str_hash_slot;
    t->compare = str_compare_slot;
    t->binop = str_binop_slot;
    t->truthy = str_truthy_slot;
    t->iter = str_iter_slot;
    t->getitem = str_getitem_slot;
    t->len = str_len_slot;
    t->contains = str_contains_slot;
    t->mark = NULL;     /* characters are inline: nothing to mark */
    t->finalize = NULL; /* nor to free */

    if (!vm->t_str_iter)
        vm->t_str_iter = type_new_builtin(vm, "str_iterator", vm->t_object, 0);
    Type *it = vm->t_str_iter;
    it->iter = str_iter_self;
    it->next = str_iter_next;
    it->mark = str_iter_mark;
    type_add_method(vm, it, "__length_hint__", str_iter_len_hint);

    static const struct {
        const char *name;
        NativeFn fn;
    } methods[] = {
        {"join", m_join},
        {"split", m_split},
        {"rsplit", m_rsplit},
        {"splitlines", m_splitlines},
        {"partition", m_partition},
        {"rpartition", m_rpartition},
        {"strip", m_strip},
        {"lstrip", m_lstrip},
        {"rstrip", m_rstrip},
        {"removeprefix", m_removeprefix},
        {"removesuffix", m_removesuffix},
        {"find", m_find},
        {"rfind", m_rfind},
        {"index", m_index},
        {"rindex", m_rindex},
        {"count", m_count},
        {"startswith", m_startswith},
        {"endswith", m_endswith},
        {"replace", m_replace},
        {"upper", m_upper},
        {"lower", m_lower},
        {"swapcase", m_swapcase},
        {"casefold", m_casefold},
        {"capitalize", m_capitalize},
        {"title", m_title},
        {"isdigit", m_isdigit},
        {"isdecimal", m_isdecimal},
        {"isnumeric", m_isnumeric},
        {"isalpha", m_isalpha},
        {"isalnum", m_isalnum},
        {"isspace", m_isspace},
        {"isprintable", m_isprintable},
        {"isascii", m_isascii},
        {"isupper", m_isupper},
        {"islower", m_islower},
        {"istitle", m_istitle},
        {"isidentifier", m_isidentifier},
        {"center", m_center},
        {"ljust", m_ljust},
        {"rjust", m_rjust},
        {"zfill", m_zfill},
        {"expandtabs", m_expandtabs},
        {"translate", m_translate},
        {"encode", m_encode},
        {"format", str_m_format},
        {"format_map", str_m_format_map},
        {"__format__", str_m_dunder_format},
        {"__len__", m_len},
        {"__contains__", m_contains},
        {"__getitem__", m_getitem},
        {"__add__", m_add},
        {"__mul__", m_mul},
        {"__rmul__", m_rmul},
        {"__mod__", m_mod},
        {"__eq__", m_eq},
        {"__ne__", m_ne},
        {"__lt__", m_lt},
        {"__le__", m_le},
        {"__gt__", m_gt},
        {"__ge__", m_ge},
        {"__hash__", m_hash},
        {"__str__", m_str},
        {"__repr__", m_repr},
        {"__iter__", m_iter},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        type_add_method(vm, t, methods[i].name, methods[i].fn);

    /* maketrans is a static method: str.maketrans(...) and "".maketrans(...) */
    Value fn = native_new(vm, "maketrans", m_maketrans, EMPTY_VAL);
    if (vm->t_staticmethod && t->dict) {
        vm_push_root(vm, fn);
        Wrapper *w = gc_alloc_obj(vm, vm->t_staticmethod, sizeof(Wrapper));
        w->func = fn;
        w->fset = NONE_VAL;
        w->fdel = NONE_VAL;
        dict_set_cstr(vm, t->dict, "maketrans", OBJ_VAL(w));
        vm_pop_roots(vm, 1);
    } else {
        type_add_method(vm, t, "maketrans", m_maketrans);
    }
}
