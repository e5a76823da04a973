/*
** types.c — kernel types, interned per VM so that pointer equality is type
** equality. Scalars and singleton kinds live in a fixed table; compound
** types (arrays, tuples, dtypes, functions, modules) in an open-addressing
** hash set. Everything is malloc'd (never the GC: inference must not raise)
** and released by the vm_free hook.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "disk_cache.h"
#include "jit.h"
#include "jit_loader.h"

#define NSINGLE (JK_STRING + 1)

struct JitTypes {
    /* the compiler's per-VM state that libgpy keeps (it lives as long as the types) */
    const JitBinding *host;   /* jit_set_binding */
    JitCacheStats cache;      /* jit_cache_stats: the disk cache's counters */
    struct JitLoader *loader; /* jit_loader_slot: the thread loading the compiler */
    JType single[NSINGLE]; /* scalars, void, none, range, string */
    JType **set;           /* compound types; cap a power of two */
    size_t cap, count;
};

static void types_free(VM *vm) {
    struct JitTypes *jt = vm->jit_types;
    if (!jt) return;
    for (size_t i = 0; i < jt->cap; i++) {
        JType *t = jt->set[i];
        if (!t) continue;
        free((void *)t->elems);
        free((void *)t->path);
        free(t);
    }
    free(jt->set);
    free(jt);
    vm->jit_types = NULL;
}

/* The per-VM table, created on first use; NULL only on out-of-memory. */
static struct JitTypes *types_of(VM *vm) {
    if (vm->jit_types) return vm->jit_types;
    struct JitTypes *jt = calloc(1, sizeof *jt);
    if (!jt) return NULL;
    for (int k = 0; k < NSINGLE; k++) jt->single[k].kind = (JKind)k;
    for (int k = 0; k <= JK_COMPLEX128; k++) jt->single[k].dtype = (NDType)k;
    vm->jit_types = jt;
    vm_on_free(vm, types_free);
    return jt;
}

const struct JitBinding **jit_binding_slot(VM *vm) {
    struct JitTypes *jt = types_of(vm);
    return jt ? &jt->host : NULL;
}

JitCacheStats *jit_cache_stats(VM *vm) {
    struct JitTypes *jt = types_of(vm);
    return jt ? &jt->cache : NULL;
}

struct JitLoader **jit_loader_slot(VM *vm) {
    struct JitTypes *jt = types_of(vm);
    return jt ? &jt->loader : NULL;
}

const JType *jt_scalar(VM *vm, JKind k) {
    struct JitTypes *jt = types_of(vm);
    if (!jt || (int)k < 0 || k >= NSINGLE || k == JK_ARRAY || k == JK_TUPLE || k == JK_DTYPE ||
        k == JK_FUNCTION || k == JK_MODULE)
        return NULL;
    return &jt->single[k];
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t type_hash(const JType *t) {
    uint64_t h = mix(0, (uint64_t)t->kind);
    h = mix(h, (uint64_t)t->dtype);
    h = mix(h, (uint64_t)t->ndim);
    h = mix(h, (uint64_t)(unsigned char)t->layout);
    h = mix(h, (uint64_t)t->n);
    for (int i = 0; i < t->n; i++) h = mix(h, (uint64_t)(uintptr_t)t->elems[i]);
    h = mix(h, (uint64_t)(uintptr_t)t->fn);
    if (t->path) h = mix(h, hash_str(t->path));
    return h;
}

static bool type_equal(const JType *a, const JType *b) {
    if (a->kind != b->kind || a->dtype != b->dtype || a->ndim != b->ndim || a->layout != b->layout ||
        a->n != b->n || a->fn != b->fn)
        return false;
    for (int i = 0; i < a->n; i++)
        if (a->elems[i] != b->elems[i]) return false;
    if (!a->path != !b->path) return false;
    return !a->path || strcmp(a->path, b->path) == 0;
}

static bool set_grow(struct JitTypes *jt) {
    size_t cap = jt->cap ? jt->cap * 2 : 64;
    JType **s = calloc(cap, sizeof *s);
    if (!s) return false;
    for (size_t i = 0; i < jt->cap; i++) {
        JType *t = jt->set[i];
        if (!t) continue;
        size_t j = type_hash(t) & (cap - 1);
        while (s[j]) j = (j + 1) & (cap - 1);
        s[j] = t;
    }
    free(jt->set);
    jt->set = s;
    jt->cap = cap;
    return true;
}

/* Returns the interned copy of key (copying elems/path on first sight). */
static const JType *intern(VM *vm, const JType *key) {
    struct JitTypes *jt = types_of(vm);
    if (!jt) return NULL;
    if ((jt->count + 1) * 2 > jt->cap && !set_grow(jt)) return NULL;
    size_t mask = jt->cap - 1;
    size_t i = type_hash(key) & mask;
    for (; jt->set[i]; i = (i + 1) & mask)
        if (type_equal(jt->set[i], key)) return jt->set[i];
    JType *t = malloc(sizeof *t);
    if (!t) return NULL;
    *t = *key;
    t->elems = NULL;
    t->path = NULL;
    if (key->n > 0) {
        const JType **e = malloc((size_t)key->n * sizeof *e);
        if (!e) {
            free(t);
            return NULL;
        }
        memcpy(e, key->elems, (size_t)key->n * sizeof *e);
        t->elems = e;
    }
    if (key->path) {
        char *p = strdup(key->path);
        if (!p) {
            free((void *)t->elems);
            free(t);
            return NULL;
        }
        t->path = p;
    }
    jt->set[i] = t;
    jt->count++;
    return t;
}

const JType *jt_array(VM *vm, NDType dtype, int ndim, char layout) {
    if ((int)dtype < 0 || dtype >= ND__COUNT || ndim < 0 || ndim > ND_MAXDIM) return NULL;
    if (layout != 'C' && layout != 'F') layout = 'A';
    JType key = {.kind = JK_ARRAY, .dtype = dtype, .ndim = ndim, .layout = layout};
    return intern(vm, &key);
}

const JType *jt_tuple(VM *vm, int n, const JType *const *elems) {
    if (n < 0) return NULL;
    for (int i = 0; i < n; i++)
        if (!elems[i]) return NULL;
    JType key = {.kind = JK_TUPLE, .n = n, .elems = (const JType **)elems};
    return intern(vm, &key);
}

const JType *jt_named_tuple(VM *vm, int n, const JType *const *elems, const char *spec) {
    const JType *plain = jt_tuple(vm, n, elems); /* checks elems */
    if (!plain || !spec) return plain;
    JType key = {.kind = JK_TUPLE, .n = n, .elems = (const JType **)elems, .path = spec};
    return intern(vm, &key);
}

const JType *jt_dtype(VM *vm, NDType dtype) {
    if ((int)dtype < 0 || dtype >= ND__COUNT) return NULL;
    JType key = {.kind = JK_DTYPE, .dtype = dtype};
    return intern(vm, &key);
}

const JType *jt_function(VM *vm, Function *fn) {
    JType key = {.kind = JK_FUNCTION, .fn = fn};
    return intern(vm, &key);
}

const JType *jt_module(VM *vm, const char *path) {
    if (!path) return NULL;
    JType key = {.kind = JK_MODULE, .path = path};
    return intern(vm, &key);
}


/* Appends to buf at *pos, truncating safely. */
static void put(char *buf, size_t size, size_t *pos, const char *s) {
    size_t n = strlen(s);
    if (*pos + 1 >= size) return;
    size_t room = size - 1 - *pos;
    if (n > room) n = room;
    memcpy(buf + *pos, s, n);
    *pos += n;
    buf[*pos] = 0;
}

static void name_into(const JType *t, char *buf, size_t size, size_t *pos) {
    char tmp[96];
    if (*pos + 1 >= size) return; /* full: stop (nested tuples could be huge) */
    if (!t) {
        put(buf, size, pos, "?");
        return;
    }
    if (t->kind <= JK_COMPLEX128) {
        put(buf, size, pos, dtype_name((NDType)t->kind));
        return;
    }
    switch (t->kind) {
    case JK_VOID:
    case JK_NONE: put(buf, size, pos, "none"); break;
    case JK_ARRAY:
        snprintf(tmp, sizeof tmp, "array(%s, %dd, %c)",
                 dtype_name(t->dtype), (int)t->ndim, t->layout);
        put(buf, size, pos, tmp);
        break;
    case JK_TUPLE: {
        bool uni = t->n > 0;
        for (int i = 1; i < t->n; i++)
            if (t->elems[i] != t->elems[0]) uni = false;
        if (t->path) { /* a namedtuple, as Numba names it: Point(int64 x 2), Point(int64, float64) */
            size_t cl = strcspn(t->path, ":");
            snprintf(tmp, sizeof tmp, "%.*s(", (int)(cl < 60 ? cl : 60), t->path);
            put(buf, size, pos, tmp);
            for (int i = 0; i < (uni ? 1 : t->n); i++) {
                if (i) put(buf, size, pos, ", ");
                name_into(t->elems[i], buf, size, pos);
            }
            snprintf(tmp, sizeof tmp, uni ? " x %d)" : ")", (int)t->n);
            put(buf, size, pos, tmp);
        } else if (uni) {
            put(buf, size, pos, "UniTuple(");
            name_into(t->elems[0], buf, size, pos);
            snprintf(tmp, sizeof tmp, " x %d)", (int)t->n);
            put(buf, size, pos, tmp);
        } else {
            put(buf, size, pos, "Tuple(");
            for (int i = 0; i < t->n; i++) {
                if (i) put(buf, size, pos, ", ");
                name_into(t->elems[i], buf, size, pos);
            }
            put(buf, size, pos, ")");
        }
        break;
    }
    case JK_RANGE: put(buf, size, pos, "range_state_int64"); break;
    case JK_DTYPE:
        snprintf(tmp, sizeof tmp, "class(%s)", dtype_name(t->dtype));
        put(buf, size, pos, tmp);
        break;
    case JK_FUNCTION: {
        const char *nm = t->fn && t->fn->name ? t->fn->name->chars : "?";
        put(buf, size, pos, "Function(");
        put(buf, size, pos, nm);
        put(buf, size, pos, ")");
        break;
    }
    case JK_MODULE:
        put(buf, size, pos, "Module(");
        put(buf, size, pos, t->path ? t->path : "?");
        put(buf, size, pos, ")");
        break;
    case JK_STRING: put(buf, size, pos, "unicode_type"); break;
    default: put(buf, size, pos, "?"); break;
    }
}

const char *jt_name(const JType *t, char *buf, size_t size) {
    if (!buf || size == 0) return "";
    size_t pos = 0;
    buf[0] = 0;
    name_into(t, buf, size, &pos);
    return buf;
}
