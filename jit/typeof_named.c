/*
** typeof_named.c — the kernel type of a namedtuple passed to a kernel (as
** Numba types collections.namedtuple instances): a tuple of its items'
** types that also knows its class name and field names, so `p.x` reads an
** item in kernels. A namedtuple is an instance of a tuple subclass whose
** class has `_fields`, a tuple of field-name strings, one per item.
*/
#include <stdio.h>
#include <string.h>

#include "jit.h"

const JType *jt_of_namedtuple(VM *vm, Value v, char *err, size_t errsize) {
    if (!IS_OBJ(v)) return NULL;
    Value inner = class_unbox(vm, v);
    if (!IS_TUPLE(vm, inner) || (IS_OBJ(inner) && AS_OBJ(inner) == AS_OBJ(v))) return NULL;
    Type *cls = AS_OBJ(v)->type;
    Value fields = type_lookup(vm, cls, str_intern(vm, "_fields", 7));
    Tuple *t = AS_TUPLE(inner);
    if (!IS_TUPLE(vm, fields) || AS_TUPLE(fields)->len != t->len) return NULL;
    if (t->len > JIT_MAX_TUPLE_ARG) {
        snprintf(err, errsize, "tuple of %lld elements is too long for a kernel argument", (long long)t->len);
        return NULL;
    }
    char spec[1024];
    const char *name = cls->name ? cls->name->chars : "namedtuple";
    int pos = snprintf(spec, sizeof spec, "%s:", name);
    for (int64_t i = 0; i < t->len; i++) {
        Value f = AS_TUPLE(fields)->items[i];
        if (!IS_STR(vm, f)) return NULL;
        int w = snprintf(spec + pos, sizeof spec - (size_t)pos, "%s%s", i ? "," : "", AS_STR(f)->chars);
        if (w < 0 || (size_t)(pos + w) >= sizeof spec) {
            snprintf(err, errsize, "the field names of '%s' are too long for a kernel argument", name);
            return NULL;
        }
        pos += w;
    }
    const JType *elems[JIT_MAX_TUPLE_ARG];
    for (int64_t i = 0; i < t->len; i++) {
        elems[i] = jt_of_value(vm, t->items[i], err, errsize);
        if (!elems[i]) return NULL;
    }
    return jt_named_tuple(vm, (int)t->len, elems, spec);
}

int jt_tuple_field(const JType *t, const char *attr) {
    if (t->kind != JK_TUPLE || !t->path) return -1;
    const char *p = strchr(t->path, ':');
    size_t al = strlen(attr);
    for (int k = 0; p && k < t->n; k++) {
        p++;
        size_t fl = strcspn(p, ",");
        if (fl == al && strncmp(p, attr, al) == 0) return k;
        p = strchr(p, ',');
    }
    return -1;
}
