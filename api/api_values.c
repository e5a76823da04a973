/*
** api_values.c — values in slots without exposing Value: what a slot holds,
** setting and reading numbers, strings and None, and building and reading
** lists, tuples and dicts element by element (include/gpy.h, "slots").
**
** Setting a scalar and reading one of the right kind never raises, so those
** paths run without a protected call; everything that may run gpy code or
** allocate (str, containers, __index__, __bool__, __len__, __getitem__)
** runs under api_protect, so no longjmp crosses the API.
**
** A slot's address may move whenever gpy code runs (a C function it calls
** opens a window, which may grow the slot array), so results are stored with
** api_slot() taken after the call, never through a pointer taken before.
*/
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "bytes.h"
#include "../stdlib/ndarray.h"
#include "../stdlib/cuda_priv.h"

/* ------------------------------------------------------- shared helpers */

typedef struct FailCtx {
    ExcKind kind;
    const char *msg;
} FailCtx;

static void raise_fail(VM *vm, void *ud) {
    FailCtx *c = ud;
    vm_raise(vm, vm->exc[c->kind], "%s", c->msg);
}

GpyStatus api_fail(GpyVM *g, ExcKind kind, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    FailCtx c = {.kind = kind, .msg = msg};
    return api_protect(g, raise_fail, &c);
}

_Noreturn void api_wrong_type(VM *vm, int slot, const char *want) {
    Value v = *api_slot(vm->api, slot);
    vm_raise_kind(vm, TypeError, "slot %d holds a '%s', not %s", slot, vm_type_name(vm, v), want);
}

/* Finds the first UTF-8 error in s[0..n) as CPython's decoder reports it:
** the bytes [*start, *end) it could not decode and why. False when s is
** valid. The second byte's range excludes overlong forms, surrogates and
** code points above U+10FFFF, as CPython does. */
static bool utf8_error(const unsigned char *s, size_t n, size_t *start, size_t *end, const char **why) {
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) need = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            *start = i, *end = i + 1, *why = "invalid start byte";
            return true;
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= n) {
                *start = i, *end = n, *why = "unexpected end of data";
                return true;
            }
            unsigned b = s[i + k];
            bool ok = k == 1 ? b >= lo && b <= hi : (b & 0xC0) == 0x80;
            if (!ok) {
                *start = i, *end = i + k, *why = "invalid continuation byte";
                return true;
            }
        }
        i += need + 1;
    }
    return false;
}

Str *api_str(VM *vm, const char *text, size_t len, const char *what) {
    if (!text) vm_raise_kind(vm, TypeError, "%s is NULL, not a UTF-8 string", what);
    if (len == (size_t)-1) len = strlen(text);
    size_t start, end;
    const char *why;
    if (utf8_error((const unsigned char *)text, len, &start, &end, &why)) {
        if (end - start == 1)
            vm_raise_kind(vm, UnicodeDecodeError, "'utf-8' codec can't decode byte 0x%02x in position %zu: %s",
                          (unsigned char)text[start], start, why);
        vm_raise_kind(vm, UnicodeDecodeError, "'utf-8' codec can't decode bytes in position %zu-%zu: %s", start,
                      end - 1, why);
    }
    return str_new(vm, text, len);
}

/* ------------------------------------------------------------ the kinds */

GpyType gpy_slot_type(GpyVM *g, int slot) {
    /* a bad slot records IndexError and reads as None */
    if (!api_slot_ok(g, slot)) return GPY_TYPE_NONE;
    VM *vm = g->vm;
    Value v = *api_slot(g, slot);
    switch (v.tag) {
    case VAL_BOOL: return GPY_TYPE_BOOL;
    case VAL_INT: return GPY_TYPE_INT;
    case VAL_FLOAT: return GPY_TYPE_FLOAT;
    case VAL_OBJ: break;
    default: return GPY_TYPE_NONE;
    }
    Type *t = AS_OBJ(v)->type;
    if (t == vm->t_str) return GPY_TYPE_STR;
    if (t == vm->t_bytes) return GPY_TYPE_BYTES;
    if (t == vm->t_list) return GPY_TYPE_LIST;
    if (t == vm->t_tuple) return GPY_TYPE_TUPLE;
    if (t == vm->t_dict) return GPY_TYPE_DICT;
    if (nd_check(vm, v)) return GPY_TYPE_ARRAY;
    if (vm->cuda && cuda_is_devarray(vm, v)) return GPY_TYPE_DEVICE_ARRAY;
    if (api_is_foreign(vm, v)) return GPY_TYPE_FOREIGN; /* also a script subclass of one */
    return GPY_TYPE_OTHER;
}

GpyStatus gpy_copy_slot(GpyVM *g, int dst, int src) {
    if (!api_slot_ok(g, dst) || !api_slot_ok(g, src)) return GPY_RUNTIME_ERROR;
    *api_slot(g, dst) = *api_slot(g, src);
    return GPY_OK;
}

/* ---------------------------------------------------------------- setters */

static __attribute__((noinline)) GpyStatus bad_slot(GpyVM *g, int slot) {
    api_slot_fail(g, slot);
    return GPY_RUNTIME_ERROR;
}

/* The error path is a tail call, so that the setters (one per argument of
** every call from C) save no registers. */
static inline GpyStatus set_value(GpyVM *g, int slot, Value v) {
    if ((unsigned)slot >= (unsigned)g->count) return bad_slot(g, slot);
    *api_slot(g, slot) = v;
    return GPY_OK;
}

GpyStatus gpy_set_none(GpyVM *g, int slot) { return set_value(g, slot, NONE_VAL); }
GpyStatus gpy_set_bool(GpyVM *g, int slot, bool value) { return set_value(g, slot, BOOL_VAL(value)); }
GpyStatus gpy_set_int(GpyVM *g, int slot, int64_t value) { return set_value(g, slot, INT_VAL(value)); }
GpyStatus gpy_set_float(GpyVM *g, int slot, double value) { return set_value(g, slot, FLOAT_VAL(value)); }

typedef struct StrCtx {
    int slot;
    const char *text;
    size_t len;
} StrCtx;

static void set_str_body(VM *vm, void *ud) {
    api_safepoint(vm);
    StrCtx *c = ud;
    Str *s = api_str(vm, c->text, c->len, "gpy_set_str: text");
    *api_slot(vm->api, c->slot) = STR_VAL(s);
}

GpyStatus gpy_set_str(GpyVM *g, int slot, const char *text, size_t len) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    StrCtx c = {.slot = slot, .text = text, .len = len};
    return api_protect(g, set_str_body, &c);
}

typedef struct BytesCtx {
    int slot;
    const void *data;
    size_t len;
} BytesCtx;

static void set_bytes_body(VM *vm, void *ud) {
    api_safepoint(vm);
    BytesCtx *c = ud;
    if (c->len > (size_t)INT64_MAX) vm_raise_kind(vm, OverflowError, "gpy_set_bytes: length too large");
    Bytes *b = bytes_new(vm, c->data, (int64_t)c->len);
    *api_slot(vm->api, c->slot) = OBJ_VAL(b);
}

GpyStatus gpy_set_bytes(GpyVM *g, int slot, const void *data, size_t len) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    BytesCtx c = {.slot = slot, .data = data, .len = data ? len : 0};
    return api_protect(g, set_bytes_body, &c);
}

/* ---------------------------------------------------------------- readers */

typedef struct GetCtx {
    int slot;
    bool b;
    int64_t i;
} GetCtx;

static void get_bool_body(VM *vm, void *ud) {
    GetCtx *c = ud;
    c->b = vm_truthy(vm, *api_slot(vm->api, c->slot));
}

GpyStatus gpy_get_bool(GpyVM *g, int slot, bool *out) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    Value v = *api_slot(g, slot);
    if (!IS_OBJ(v)) { /* numbers and None run no gpy code: no protected call */
        *out = vm_truthy(g->vm, v);
        return GPY_OK;
    }
    GetCtx c = {.slot = slot};
    GpyStatus st = api_protect(g, get_bool_body, &c);
    if (st == GPY_OK) *out = c.b;
    return st;
}

/* An int, a bool, or an instance of a class with __index__. */
static void get_int_body(VM *vm, void *ud) {
    GetCtx *c = ud;
    Value v = *api_slot(vm->api, c->slot);
    Type *t = vm_typeof(vm, v);
    if (!(t->flags & TYPE_HEAP) || IS_EMPTY(type_lookup(vm, t, str_cstr(vm, "__index__"))))
        api_wrong_type(vm, c->slot, "an int");
    c->i = vm_to_index(vm, v);
}

static __attribute__((noinline)) GpyStatus get_int_slow(GpyVM *g, int slot, int64_t *out) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    Value v = *api_slot(g, slot);
    if (IS_INTLIKE(v)) {
        *out = AS_INTLIKE(v);
        return GPY_OK;
    }
    GetCtx c = {.slot = slot};
    GpyStatus st = api_protect(g, get_int_body, &c);
    if (st == GPY_OK) *out = c.i;
    return st;
}

GpyStatus gpy_get_int(GpyVM *g, int slot, int64_t *out) {
    if ((unsigned)slot < (unsigned)g->count) { /* the common case saves no registers */
        Value v = *api_slot(g, slot);
        if (v.tag == VAL_INT) {
            *out = v.as.i;
            return GPY_OK;
        }
    }
    return get_int_slow(g, slot, out);
}

static void wrong_float(VM *vm, void *ud) { api_wrong_type(vm, *(int *)ud, "a float"); }

GpyStatus gpy_get_float(GpyVM *g, int slot, double *out) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    Value v = *api_slot(g, slot);
    if (!IS_NUMBER(v)) return api_protect(g, wrong_float, &slot);
    *out = AS_NUMBER(v);
    return GPY_OK;
}

static void wrong_str(VM *vm, void *ud) { api_wrong_type(vm, *(int *)ud, "a str"); }

const char *gpy_get_str(GpyVM *g, int slot, size_t *len) {
    if (!api_slot_ok(g, slot)) return NULL;
    Value v = *api_slot(g, slot);
    if (!IS_STR(g->vm, v)) {
        api_protect(g, wrong_str, &slot);
        return NULL;
    }
    if (len) *len = (size_t)AS_STR(v)->len;
    return AS_STR(v)->chars;
}

static void wrong_bytes(VM *vm, void *ud) {
    int slot = *(int *)ud;
    api_wrong_type(vm, slot, "bytes");
}

const void *gpy_get_bytes(GpyVM *g, int slot, size_t *len) {
    if (len) *len = 0;
    if (!api_slot_ok(g, slot)) return NULL;
    Value v = *api_slot(g, slot);
    if (IS_BYTES(g->vm, v)) {
        if (len) *len = (size_t)AS_BYTES(v)->len;
        return AS_BYTES(v)->data;
    }
    api_protect(g, wrong_bytes, &slot);
    return NULL;
}

/* ------------------------------------------------------------- containers */

typedef struct ContCtx {
    int a, b, c;     /* slots (meaning per function) */
    int64_t index;
    int64_t n;
} ContCtx;

static void new_list_body(VM *vm, void *ud) {
    api_safepoint(vm);
    ContCtx *c = ud;
    List *l = list_new(vm, 0);
    *api_slot(vm->api, c->a) = OBJ_VAL(l);
}

GpyStatus gpy_new_list(GpyVM *g, int slot) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = slot};
    return api_protect(g, new_list_body, &c);
}

static void new_dict_body(VM *vm, void *ud) {
    api_safepoint(vm);
    ContCtx *c = ud;
    Dict *d = dict_new(vm);
    *api_slot(vm->api, c->a) = OBJ_VAL(d);
}

GpyStatus gpy_new_dict(GpyVM *g, int slot) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = slot};
    return api_protect(g, new_dict_body, &c);
}

static void new_tuple_body(VM *vm, void *ud) {
    api_safepoint(vm);
    ContCtx *c = ud;
    GpyVM *g = vm->api;
    if (c->n < 0) vm_raise_kind(vm, ValueError, "gpy_new_tuple: n is %lld, not a count", (long long)c->n);
    if (c->n > 0) {
        api_check_slot(vm, g, c->b);
        int64_t last = c->b + c->n - 1;
        if (last >= g->count) api_bad_slot(vm, last > INT_MAX ? INT_MAX : (int)last);
    }
    /* tuple_from_array allocates before it copies: the slots cannot move
    ** in between (no gpy code runs) */
    Tuple *t = tuple_from_array(vm, c->n, c->n > 0 ? api_slot(g, c->b) : NULL);
    *api_slot(g, c->a) = OBJ_VAL(t);
}

GpyStatus gpy_new_tuple(GpyVM *g, int slot, int first, int n) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = slot, .b = first, .n = n};
    return api_protect(g, new_tuple_body, &c);
}

static void list_append_body(VM *vm, void *ud) {
    api_safepoint(vm);
    ContCtx *c = ud;
    GpyVM *g = vm->api;
    Value l = *api_slot(g, c->a);
    if (!IS_LIST(vm, l)) api_wrong_type(vm, c->a, "a list");
    list_append(vm, AS_LIST(l), *api_slot(g, c->b));
}

GpyStatus gpy_list_append(GpyVM *g, int list, int value) {
    if (!api_slot_ok(g, list) || !api_slot_ok(g, value)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = list, .b = value};
    return api_protect(g, list_append_body, &c);
}

static void len_body(VM *vm, void *ud) {
    ContCtx *c = ud;
    c->n = vm_len(vm, *api_slot(vm->api, c->a));
}

GpyStatus gpy_len(GpyVM *g, int slot, int64_t *out) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = slot};
    GpyStatus st = api_protect(g, len_body, &c);
    if (st == GPY_OK) *out = c.n;
    return st;
}

static void get_index_body(VM *vm, void *ud) {
    ContCtx *c = ud;
    Value r = vm_getitem(vm, *api_slot(vm->api, c->a), INT_VAL(c->index));
    *api_slot(vm->api, c->b) = r;
}

GpyStatus gpy_get_index(GpyVM *g, int seq, int64_t index, int dst) {
    if (!api_slot_ok(g, seq) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = seq, .b = dst, .index = index};
    return api_protect(g, get_index_body, &c);
}

static void set_index_body(VM *vm, void *ud) {
    ContCtx *c = ud;
    GpyVM *g = vm->api;
    vm_setitem(vm, *api_slot(g, c->a), INT_VAL(c->index), *api_slot(g, c->b));
}

GpyStatus gpy_set_index(GpyVM *g, int seq, int64_t index, int value) {
    if (!api_slot_ok(g, seq) || !api_slot_ok(g, value)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = seq, .b = value, .index = index};
    return api_protect(g, set_index_body, &c);
}

static void get_item_body(VM *vm, void *ud) {
    ContCtx *c = ud;
    GpyVM *g = vm->api;
    Value r = vm_getitem(vm, *api_slot(g, c->a), *api_slot(g, c->b));
    *api_slot(g, c->c) = r;
}

GpyStatus gpy_get_item(GpyVM *g, int obj, int key, int dst) {
    if (!api_slot_ok(g, obj) || !api_slot_ok(g, key) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = obj, .b = key, .c = dst};
    return api_protect(g, get_item_body, &c);
}

static void set_item_body(VM *vm, void *ud) {
    ContCtx *c = ud;
    GpyVM *g = vm->api;
    vm_setitem(vm, *api_slot(g, c->a), *api_slot(g, c->b), *api_slot(g, c->c));
}

GpyStatus gpy_set_item(GpyVM *g, int obj, int key, int value) {
    if (!api_slot_ok(g, obj) || !api_slot_ok(g, key) || !api_slot_ok(g, value)) return GPY_RUNTIME_ERROR;
    ContCtx c = {.a = obj, .b = key, .c = value};
    return api_protect(g, set_item_body, &c);
}

static void wrong_dict(VM *vm, void *ud) { api_wrong_type(vm, *(int *)ud, "a dict"); }

/* *pos is the position in the dict's entry table (insertion order), so
** iteration needs no state of its own; no gpy code runs. */
bool gpy_dict_next(GpyVM *g, int dict, int64_t *pos, int key_dst, int value_dst) {
    if (!api_slot_ok(g, dict) || !api_slot_ok(g, key_dst) || !api_slot_ok(g, value_dst)) return false;
    Value d = *api_slot(g, dict);
    if (!IS_DICT(g->vm, d)) {
        api_protect(g, wrong_dict, &dict);
        return false;
    }
    if (*pos < 0) *pos = 0;
    Value k, v;
    if (!dict_next(AS_DICT(d), pos, &k, &v)) return false;
    *api_slot(g, key_dst) = k;
    *api_slot(g, value_dst) = v;
    return true;
}

/* ------------------------------------------------------------- attributes */

typedef struct AttrCtx {
    int obj, other;
    const char *name;
} AttrCtx;

static void get_attr_body(VM *vm, void *ud) {
    AttrCtx *c = ud;
    GpyVM *g = vm->api;
    Str *name = api_str(vm, c->name, (size_t)-1, "attribute name");
    vm_push_root(vm, STR_VAL(name));
    Value r = vm_getattr(vm, *api_slot(g, c->obj), name);
    vm_pop_roots(vm, 1);
    *api_slot(g, c->other) = r;
}

GpyStatus gpy_get_attr(GpyVM *g, int obj, const char *name, int dst) {
    if (!api_slot_ok(g, obj) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    AttrCtx c = {.obj = obj, .other = dst, .name = name};
    return api_protect(g, get_attr_body, &c);
}

static void set_attr_body(VM *vm, void *ud) {
    AttrCtx *c = ud;
    GpyVM *g = vm->api;
    Str *name = api_str(vm, c->name, (size_t)-1, "attribute name");
    vm_push_root(vm, STR_VAL(name));
    vm_setattr(vm, *api_slot(g, c->obj), name, *api_slot(g, c->other));
    vm_pop_roots(vm, 1);
}

GpyStatus gpy_set_attr(GpyVM *g, int obj, const char *name, int value) {
    if (!api_slot_ok(g, obj) || !api_slot_ok(g, value)) return GPY_RUNTIME_ERROR;
    AttrCtx c = {.obj = obj, .other = value, .name = name};
    return api_protect(g, set_attr_body, &c);
}
