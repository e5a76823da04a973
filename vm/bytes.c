/*
** bytes.c — the bytes and bytearray types: construction, repr, hash,
** comparison, operators, indexing and iteration, and the buffer protocol
** entry points (buffer_get/buffer_need). The str-like methods shared by
** both types are in bytes_methods.c.
*/
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "class_internal.h"
#include "vm.h"

/* ================================================================ construction */

Bytes *bytes_alloc(VM *vm, int64_t len) {
    if (len < 0 || (uint64_t)len > (uint64_t)UINT32_MAX - sizeof(Bytes) - 64)
        vm_raise_kind(vm, MemoryError, "%s", "");
    Bytes *b = gc_alloc_obj(vm, vm->t_bytes, sizeof(Bytes) + (size_t)len + 1);
    b->hash = -1;
    b->len = len;
    b->data[len] = 0;
    return b;
}

Bytes *bytes_new(VM *vm, const void *data, int64_t len) {
    Bytes *b = bytes_alloc(vm, len);
    if (len && data) memcpy(b->data, data, (size_t)len);
    else if (len) memset(b->data, 0, (size_t)len);
    return b;
}

/* Grows or shrinks the buffer to len bytes (new bytes are zero). */
void bytearray_resize(VM *vm, ByteArray *ba, int64_t len) {
    if (len < 0) vm_raise_kind(vm, MemoryError, "%s", "");
    if (len > ba->cap || !ba->data) { /* data is never NULL: an empty bytearray has room too */
        int64_t cap = ba->cap < 16 ? 16 : ba->cap;
        while (cap < len) {
            if (cap > INT64_MAX / 2) vm_raise_kind(vm, MemoryError, "%s", "");
            cap *= 2;
        }
        ba->data = gc_realloc(vm, ba->data, (size_t)ba->cap, (size_t)cap);
        ba->cap = cap;
    }
    if (len > ba->len) memset(ba->data + ba->len, 0, (size_t)(len - ba->len));
    ba->len = len;
}

ByteArray *bytearray_new(VM *vm, const void *data, int64_t len) {
    ByteArray *ba = gc_alloc_obj(vm, vm->t_bytearray, sizeof(ByteArray));
    vm_push_root(vm, OBJ_VAL(ba));
    bytearray_resize(vm, ba, len);
    if (len && data) memcpy(ba->data, data, (size_t)len);
    vm_pop_roots(vm, 1);
    return ba;
}

Value bytes_like_new(VM *vm, Value like, const void *data, int64_t len) {
    if (IS_BYTEARRAY(vm, like)) return OBJ_VAL(bytearray_new(vm, data, len));
    return OBJ_VAL(bytes_new(vm, data, len));
}

static void bytearray_finalize(VM *vm, Obj *o) {
    ByteArray *ba = (ByteArray *)o;
    if (ba->data) gc_free(vm, ba->data, (size_t)ba->cap);
    ba->data = NULL;
    ba->cap = ba->len = 0;
}

/* ================================================================ buffer protocol */

static void bytes_getbuffer(VM *vm, Value self, BufferView *v) {
    (void)vm;
    Bytes *b = AS_BYTES(self);
    *v = (BufferView){.buf = b->data, .len = b->len, .itemsize = 1, .format = "B", .readonly = true, .ndim = 1};
    v->shape[0] = b->len;
}

static void bytearray_getbuffer(VM *vm, Value self, BufferView *v) {
    (void)vm;
    ByteArray *b = AS_BYTEARRAY(self);
    /* an empty bytearray may have no buffer: a pointer to nothing writable is fine, len is 0 */
    *v = (BufferView){.buf = b->data ? b->data : (uint8_t *)(uintptr_t)"", .len = b->len, .itemsize = 1, .format = "B",
                      .readonly = false, .ndim = 1};
    v->shape[0] = b->len;
}

bool buffer_get(VM *vm, Value v, BufferView *view) {
    if (!IS_OBJ(v)) return false;
    for (Type *t = AS_OBJ(v)->type; t; t = t->base)
        if (t->getbuffer) {
            t->getbuffer(vm, v, view);
            return true;
        }
    return false;
}

void buffer_need(VM *vm, Value v, BufferView *view) {
    if (!buffer_get(vm, v, view))
        vm_raise_kind(vm, TypeError, "a bytes-like object is required, not '%s'", vm_type_name(vm, v));
}

/* ================================================================ repr, hash, compare */

/* bytearray's repr escapes ' even inside "..." (a CPython quirk kept for
** identical output). */
static Str *repr_impl(VM *vm, const uint8_t *p, int64_t n, bool always_escape_sq) {
    bool has_sq = memchr(p, '\'', (size_t)n) != NULL, has_dq = memchr(p, '"', (size_t)n) != NULL;
    char quote = has_sq && !has_dq ? '"' : '\'';
    StrBuf sb;
    sb_init(&sb);
    sb_putc(&sb, 'b');
    sb_putc(&sb, quote);
    for (int64_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == quote || c == '\\' || (always_escape_sq && c == '\'')) {
            sb_putc(&sb, '\\');
            sb_putc(&sb, (char)c);
        } else if (c == '\t') sb_appends(&sb, "\\t");
        else if (c == '\n') sb_appends(&sb, "\\n");
        else if (c == '\r') sb_appends(&sb, "\\r");
        else if (c < 0x20 || c >= 0x7f) sb_printf(&sb, "\\x%02x", c);
        else sb_putc(&sb, (char)c);
    }
    sb_putc(&sb, quote);
    return sb_finish(vm, &sb);
}

Str *bytes_repr_raw(VM *vm, const uint8_t *p, int64_t n) {
    return repr_impl(vm, p, n, false);
}

static Value bytes_repr_slot(VM *vm, Value self) {
    return STR_VAL(bytes_repr_raw(vm, AS_BYTES(self)->data, AS_BYTES(self)->len));
}

static Value bytearray_repr_slot(VM *vm, Value self) {
    ByteArray *b = AS_BYTEARRAY(self);
    Str *r = repr_impl(vm, b->data, b->len, true);
    return STR_VAL(str_printf(vm, "bytearray(%s)", r->chars));
}

static int64_t bytes_hash_slot(VM *vm, Value self) {
    (void)vm;
    Bytes *b = AS_BYTES(self);
    /* the same function as str: hash(b'abc') == hash('abc'), as in CPython */
    if (b->hash == -1) b->hash = str_hash_bytes((const char *)b->data, (size_t)b->len);
    return b->hash;
}

static int64_t bytearray_hash_slot(VM *vm, Value self) {
    (void)self;
    vm_raise_kind(vm, TypeError, "unhashable type: 'bytearray'");
}

/* bytes or bytearray (not other buffers: b'a' == memoryview(b'a') is
** decided by memoryview). */
static bool plain_bytes(VM *vm, Value v, const uint8_t **p, int64_t *n) {
    *p = (const uint8_t *)"";
    *n = 0;
    if (IS_BYTES(vm, v)) {
        *p = AS_BYTES(v)->data;
        *n = AS_BYTES(v)->len;
        return true;
    }
    if (IS_BYTEARRAY(vm, v)) {
        *p = AS_BYTEARRAY(v)->data;
        *n = AS_BYTEARRAY(v)->len;
        return true;
    }
    return false;
}

static Value bytes_compare_slot(VM *vm, CmpOp op, Value a, Value b) {
    const uint8_t *pa, *pb;
    int64_t na, nb;
    if (!plain_bytes(vm, a, &pa, &na) || !plain_bytes(vm, b, &pb, &nb)) return EMPTY_VAL;
    int64_t m = na < nb ? na : nb;
    int c = m ? memcmp(pa, pb, (size_t)m) : 0;
    if (c == 0) c = na < nb ? -1 : na > nb ? 1 : 0;
    switch (op) {
    case CMP_EQ: return BOOL_VAL(na == nb && c == 0);
    case CMP_NE: return BOOL_VAL(!(na == nb && c == 0));
    case CMP_LT: return BOOL_VAL(c < 0);
    case CMP_LE: return BOOL_VAL(c <= 0);
    case CMP_GT: return BOOL_VAL(c > 0);
    case CMP_GE: return BOOL_VAL(c >= 0);
    default: return EMPTY_VAL;
    }
}

/* ================================================================ operators */

static Value repeat(VM *vm, Value like, const uint8_t *p, int64_t n, int64_t times) {
    if (times <= 0 || n == 0) return bytes_like_new(vm, like, "", 0);
    if (times > INT64_MAX / n && IS_BYTES(vm, like)) vm_raise_kind(vm, OverflowError, "repeated bytes are too long");
    if (times > INT32_MAX / n) vm_raise_kind(vm, MemoryError, "%s", "");
    int64_t total = n * times;
    Value r = bytes_like_new(vm, like, NULL, total);
    uint8_t *d = IS_BYTES(vm, r) ? AS_BYTES(r)->data : AS_BYTEARRAY(r)->data;
    /* p may point into like's buffer: still valid (nothing ran since) */
    for (int64_t i = 0; i < times; i++) memcpy(d + i * n, p, (size_t)n);
    return r;
}

static Value bytes_binop_slot(VM *vm, BinOp op, Value a, Value b) {
    const uint8_t *pa;
    int64_t na;
    switch (op) {
    case BINOP_ADD: {
        if (!plain_bytes(vm, a, &pa, &na)) return EMPTY_VAL;
        BufferView vb;
        if (!buffer_get(vm, b, &vb)) {
            if (IS_OBJ(b) && (AS_OBJ(b)->type->flags & TYPE_HEAP)) return EMPTY_VAL;
            vm_raise_kind(vm, TypeError, "can't concat %s to %s", vm_type_name(vm, b), vm_type_name(vm, a));
        }
        Value r = bytes_like_new(vm, a, NULL, na + vb.len);
        uint8_t *d = IS_BYTES(vm, r) ? AS_BYTES(r)->data : AS_BYTEARRAY(r)->data;
        plain_bytes(vm, a, &pa, &na);
        buffer_get(vm, b, &vb);
        memcpy(d, pa, (size_t)na);
        memcpy(d + na, vb.buf, (size_t)vb.len);
        return r;
    }
    case BINOP_MUL: {
        Value seq = a, cnt = b;
        if (!plain_bytes(vm, a, &pa, &na)) {
            seq = b;
            cnt = a;
            plain_bytes(vm, b, &pa, &na);
        }
        if (!IS_INTLIKE(cnt)) {
            if (IS_OBJ(cnt) && (AS_OBJ(cnt)->type->flags & TYPE_HEAP)) {
                if (IS_EMPTY(type_lookup(vm, AS_OBJ(cnt)->type, str_cstr(vm, "__index__")))) return EMPTY_VAL;
            } else if (IS_FLOAT(cnt) || IS_OBJ(cnt)) {
                vm_raise_kind(vm, TypeError, "can't multiply sequence by non-int of type '%s'",
                              vm_type_name(vm, cnt));
            }
        }
        int64_t times = vm_to_index(vm, cnt);
        plain_bytes(vm, seq, &pa, &na);
        return repeat(vm, seq, pa, na, times);
    }
    case BINOP_MOD:
        if (!plain_bytes(vm, a, &pa, &na)) return EMPTY_VAL;
        return bytes_percent_format(vm, a, b);
    default: return EMPTY_VAL;
    }
}

/* bytearray's += and *= change the object itself. */
static Value bytearray_inplace_slot(VM *vm, BinOp op, Value a, Value b) {
    if (!IS_BYTEARRAY(vm, a)) return EMPTY_VAL;
    ByteArray *ba = AS_BYTEARRAY(a);
    if (op == BINOP_ADD) {
        BufferView v;
        if (!buffer_get(vm, b, &v)) {
            if (IS_OBJ(b) && (AS_OBJ(b)->type->flags & TYPE_HEAP)) return EMPTY_VAL;
            vm_raise_kind(vm, TypeError, "can't concat %s to bytearray", vm_type_name(vm, b));
        }
        int64_t old = ba->len;
        if (AS_OBJ(b) == (Obj *)ba) {
            bytearray_resize(vm, ba, old * 2);
            memcpy(ba->data + old, ba->data, (size_t)old);
        } else {
            bytearray_resize(vm, ba, old + v.len);
            buffer_get(vm, b, &v);
            memcpy(ba->data + old, v.buf, (size_t)v.len);
        }
        return a;
    }
    if (op == BINOP_MUL) {
        if (!IS_INTLIKE(b) && !(IS_OBJ(b) && (AS_OBJ(b)->type->flags & TYPE_HEAP)))
            vm_raise_kind(vm, TypeError, "can't multiply sequence by non-int of type '%s'", vm_type_name(vm, b));
        int64_t times = vm_to_index(vm, b);
        int64_t n = ba->len;
        if (times <= 0 || n == 0) {
            ba->len = 0;
            return a;
        }
        if (times > INT32_MAX / n) vm_raise_kind(vm, MemoryError, "%s", "");
        bytearray_resize(vm, ba, n * times);
        for (int64_t i = 1; i < times; i++) memcpy(ba->data + i * n, ba->data, (size_t)n);
        return a;
    }
    return EMPTY_VAL;
}

/* ================================================================ indexing */

static bool is_slice(VM *vm, Value v) {
    return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_slice;
}

static int64_t index_key(VM *vm, Value self, Value key) {
    if (IS_INTLIKE(key)) return AS_INTLIKE(key);
    if (IS_OBJ(key) && (AS_OBJ(key)->type->flags & TYPE_HEAP)) return vm_to_index(vm, key);
    if (IS_BYTES(vm, self))
        vm_raise_kind(vm, TypeError, "byte indices must be integers or slices, not %s", vm_type_name(vm, key));
    vm_raise_kind(vm, TypeError, "bytearray indices must be integers or slices, not %s", vm_type_name(vm, key));
}

static Value bytes_getitem_slot(VM *vm, Value self, Value key) {
    const uint8_t *p;
    int64_t n;
    if (is_slice(vm, key)) {
        int64_t start, stop, step;
        Slice *sl = (Slice *)AS_OBJ(key);
        plain_bytes(vm, self, &p, &n);
        int64_t cnt = slice_indices(vm, sl, n, &start, &stop, &step);
        plain_bytes(vm, self, &p, &n); /* slice_indices may run __index__ */
        if (step == 1) return bytes_like_new(vm, self, p + start, cnt);
        Value r = bytes_like_new(vm, self, NULL, cnt);
        uint8_t *d = IS_BYTES(vm, r) ? AS_BYTES(r)->data : AS_BYTEARRAY(r)->data;
        plain_bytes(vm, self, &p, &n);
        for (int64_t i = 0; i < cnt; i++) d[i] = p[start + i * step];
        return r;
    }
    int64_t i = index_key(vm, self, key);
    plain_bytes(vm, self, &p, &n);
    if (i < 0) i += n;
    if (i < 0 || i >= n)
        vm_raise_kind(vm, IndexError, IS_BYTES(vm, self) ? "index out of range" : "bytearray index out of range");
    return INT_VAL(p[i]);
}

/* A byte value for b[i] = v, append, insert... */
static uint8_t byte_value(VM *vm, Value v) {
    int64_t x = vm_to_index(vm, v);
    if (x < 0 || x > 255) vm_raise_kind(vm, ValueError, "byte must be in range(0, 256)");
    return (uint8_t)x;
}

/* The bytes of any value accepted on the right of ba[a:b] = value: a
** buffer or an iterable of ints; a new bytes object (rooted by the caller). */
static Bytes *assign_source(VM *vm, Value v) {
    if (IS_INTLIKE(v) || IS_STR(vm, v) || IS_NONE(v) || IS_FLOAT(v))
        vm_raise_kind(vm, TypeError, "can assign only bytes, buffers, or iterables of ints in range(0, 256)");
    Value b = bytes_from_object(vm, v, false);
    return AS_BYTES(b);
}

static void bytearray_delete_slice(ByteArray *ba, int64_t start, int64_t step, int64_t cnt) {
    if (cnt <= 0) return;
    if (step < 0) {
        start = start + (cnt - 1) * step;
        step = -step;
    }
    int64_t w = start;
    for (int64_t r = start; r < ba->len; r++) {
        if (r >= start && (r - start) % step == 0 && (r - start) / step < cnt) continue;
        ba->data[w++] = ba->data[r];
    }
    ba->len = w;
}

static void bytearray_setitem_slot(VM *vm, Value self, Value key, Value value) {
    ByteArray *ba = AS_BYTEARRAY(self);
    if (is_slice(vm, key)) {
        Slice *sl = (Slice *)AS_OBJ(key);
        int64_t start, stop, step;
        if (IS_EMPTY(value)) {
            int64_t cnt = slice_indices(vm, sl, ba->len, &start, &stop, &step);
            bytearray_delete_slice(ba, start, step, cnt);
            return;
        }
        Bytes *src = assign_source(vm, value);
        vm_push_root(vm, OBJ_VAL(src));
        int64_t cnt = slice_indices(vm, sl, ba->len, &start, &stop, &step);
        if (step == 1) {
            if (stop < start) stop = start;
            int64_t old = ba->len, delta = src->len - (stop - start);
            if (delta > 0) bytearray_resize(vm, ba, old + delta);
            memmove(ba->data + stop + delta, ba->data + stop, (size_t)(old - stop));
            if (delta < 0) ba->len = old + delta;
            memcpy(ba->data + start, src->data, (size_t)src->len);
        } else {
            if (src->len != cnt)
                vm_raise_kind(vm, ValueError, "attempt to assign bytes of size %lld to extended slice of size %lld",
                              (long long)src->len, (long long)cnt);
            for (int64_t i = 0; i < cnt; i++) ba->data[start + i * step] = src->data[i];
        }
        vm_pop_roots(vm, 1);
        return;
    }
    int64_t i = index_key(vm, self, key);
    uint8_t byte = IS_EMPTY(value) ? 0 : byte_value(vm, value);
    if (i < 0) i += ba->len;
    if (i < 0 || i >= ba->len) vm_raise_kind(vm, IndexError, "bytearray index out of range");
    if (IS_EMPTY(value)) {
        memmove(ba->data + i, ba->data + i + 1, (size_t)(ba->len - i - 1));
        ba->len--;
    } else {
        ba->data[i] = byte;
    }
}

static int64_t bytes_len_slot(VM *vm, Value self) {
    const uint8_t *p;
    int64_t n;
    plain_bytes(vm, self, &p, &n);
    return n;
}

/* Shared by `in` and the find family: position of needle (an int byte or
** a buffer) in hay, or -1. */
static bool bytes_contains_slot(VM *vm, Value self, Value item) {
    const uint8_t *p;
    int64_t n;
    if (IS_INTLIKE(item) || (IS_OBJ(item) && (AS_OBJ(item)->type->flags & TYPE_HEAP) && !buffer_get(vm, item, &(BufferView){0}))) {
        uint8_t c = byte_value(vm, item);
        plain_bytes(vm, self, &p, &n);
        return n > 0 && memchr(p, c, (size_t)n) != NULL;
    }
    BufferView v;
    buffer_need(vm, item, &v);
    plain_bytes(vm, self, &p, &n);
    if (v.len == 0) return true;
    if (v.len > n) return false;
    return bytes_find_raw(p, n, v.buf, v.len) != NULL;
}

/* ================================================================ iteration */

typedef struct BytesIter {
    Obj obj;
    Value seq;
    int64_t index;
} BytesIter;

static Value bytes_iter_slot(VM *vm, Value self) {
    BytesIter *it = gc_alloc_obj(vm, vm->t_bytes_iter, sizeof(BytesIter));
    it->seq = self;
    return OBJ_VAL(it);
}

static Value bytes_iter_self(VM *vm, Value self) {
    (void)vm;
    return self;
}

static bool bytes_iter_next(VM *vm, Value self, Value *out) {
    BytesIter *it = (BytesIter *)AS_OBJ(self);
    const uint8_t *p;
    int64_t n;
    if (IS_NONE(it->seq)) return false;
    plain_bytes(vm, it->seq, &p, &n);
    if (it->index >= n) {
        it->seq = NONE_VAL;
        return false;
    }
    *out = INT_VAL(p[it->index++]);
    return true;
}

static void bytes_iter_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((BytesIter *)o)->seq);
}

static Value bytes_iter_len_hint(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    arg_count(vm, "__length_hint__", argc, 1, 1);
    BytesIter *it = (BytesIter *)AS_OBJ(argv[0]);
    const uint8_t *p;
    int64_t n = 0;
    if (!IS_NONE(it->seq)) plain_bytes(vm, it->seq, &p, &n);
    return INT_VAL(n > it->index ? n - it->index : 0);
}

/* ================================================================ constructors */

/* The bytes of an iterable of ints (a list, a generator...). */
static Value from_iterable(VM *vm, Value x, bool mutable_) {
    ByteArray *acc = bytearray_new(vm, NULL, 0);
    vm_push_root(vm, OBJ_VAL(acc));
    Value it = vm_iter(vm, x);
    vm_push_root(vm, it);
    Value item;
    while (vm_next(vm, it, &item)) {
        if (!IS_INTLIKE(item) && !(IS_OBJ(item) && (AS_OBJ(item)->type->flags & TYPE_HEAP)))
            vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, item));
        uint8_t c = byte_value(vm, item);
        bytearray_resize(vm, acc, acc->len + 1);
        acc->data[acc->len - 1] = c;
    }
    Value r = mutable_ ? OBJ_VAL(acc) : OBJ_VAL(bytes_new(vm, acc->data, acc->len));
    vm_pop_roots(vm, 2);
    return r;
}

Value bytes_from_object(VM *vm, Value x, bool mutable_) {
    BufferView v;
    if (IS_BYTES(vm, x) && !mutable_) return x;
    if (buffer_get(vm, x, &v)) return mutable_ ? OBJ_VAL(bytearray_new(vm, v.buf, v.len)) : OBJ_VAL(bytes_new(vm, v.buf, v.len));
    return from_iterable(vm, x, mutable_);
}

static const char *opt_cstr(VM *vm, Value v, const char *fname, const char *argname) {
    if (IS_EMPTY(v)) return NULL;
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "%s() argument '%s' must be str, not %s", fname, argname, vm_type_name(vm, v));
    return AS_STR(v)->chars;
}

static Value construct(VM *vm, const char *name, bool mutable_, int argc, Value *argv, Dict *kwargs) {
    Value src = EMPTY_VAL, enc = EMPTY_VAL, err = EMPTY_VAL;
    if (argc > 3) vm_raise_kind(vm, TypeError, "%s() takes at most 3 arguments (%d given)", name, argc);
    if (argc > 0) src = argv[0];
    if (argc > 1) enc = argv[1];
    if (argc > 2) err = argv[2];
    if (kwargs && kwargs->count > 0) {
        static const char *const names[] = {"source", "encoding", "errors"};
        Value *slots[] = {&src, &enc, &err};
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v)) {
            const char *kname = IS_STR(vm, k) ? AS_STR(k)->chars : "?";
            int j = 0;
            while (j < 3 && strcmp(names[j], kname) != 0) j++;
            if (j == 3) vm_raise_kind(vm, TypeError, "'%s' is an invalid keyword argument for %s()", kname, name);
            if (j < argc)
                vm_raise_kind(vm, TypeError, "argument for %s() given by name ('%s') and position (%d)", name, kname,
                              j + 1);
            *slots[j] = v;
        }
    }
    const char *e = opt_cstr(vm, enc, name, "encoding"), *er = opt_cstr(vm, err, name, "errors");
    if (IS_EMPTY(src)) {
        if (e || er)
            vm_raise_kind(vm, TypeError, e ? "encoding without a string argument" : "errors without a string argument");
        return mutable_ ? OBJ_VAL(bytearray_new(vm, NULL, 0)) : OBJ_VAL(bytes_new(vm, "", 0));
    }
    if (IS_STR(vm, src)) {
        if (!e) vm_raise_kind(vm, TypeError, "string argument without an encoding");
        Bytes *b = codec_encode(vm, AS_STR(src), e, er);
        return mutable_ ? OBJ_VAL(bytearray_new(vm, b->data, b->len)) : OBJ_VAL(b);
    }
    if (e || er)
        vm_raise_kind(vm, TypeError, e ? "encoding without a string argument" : "errors without a string argument");
    /* __bytes__ (bytes only) */
    if (!mutable_ && IS_OBJ(src) && (AS_OBJ(src)->type->flags & TYPE_HEAP)) {
        Value m = type_lookup(vm, AS_OBJ(src)->type, str_cstr(vm, "__bytes__"));
        if (!IS_EMPTY(m)) {
            Value r = class_call_meth(vm, m, src, 0, NULL, NULL);
            if (!IS_BYTES(vm, r))
                vm_raise_kind(vm, TypeError, "__bytes__ returned non-bytes (type %s)", vm_type_name(vm, r));
            return r;
        }
    }
    if (IS_INTLIKE(src) || (IS_OBJ(src) && (AS_OBJ(src)->type->flags & TYPE_HEAP) &&
                            !IS_EMPTY(type_lookup(vm, AS_OBJ(src)->type, str_cstr(vm, "__index__"))))) {
        int64_t n = vm_to_index(vm, src);
        if (n < 0) vm_raise_kind(vm, ValueError, "negative count");
        if (mutable_) return OBJ_VAL(bytearray_new(vm, NULL, n));
        Bytes *b = bytes_alloc(vm, n);
        memset(b->data, 0, (size_t)n);
        return OBJ_VAL(b);
    }
    BufferView v;
    if (buffer_get(vm, src, &v)) return bytes_from_object(vm, src, mutable_);
    /* anything iterable; the rest gets CPython's message */
    Type *t = vm_typeof(vm, src);
    bool iterable = t->iter != NULL || (t->flags & TYPE_HEAP);
    if (!iterable || IS_FLOAT(src) || IS_NONE(src) || IS_BOOL(src))
        vm_raise_kind(vm, TypeError, "cannot convert '%s' object to %s", vm_type_name(vm, src), name);
    return from_iterable(vm, src, mutable_);
}

static Value bytes_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    return construct(vm, "bytes", false, argc, argv, kwargs);
}

static Value bytearray_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    return construct(vm, "bytearray", true, argc, argv, kwargs);
}

/* ================================================================ init */

static void common_slots(Type *t) {
    t->compare = bytes_compare_slot;
    t->binop = bytes_binop_slot;
    t->iter = bytes_iter_slot;
    t->getitem = bytes_getitem_slot;
    t->len = bytes_len_slot;
    t->contains = bytes_contains_slot;
}

void bytes_init(VM *vm) {
    Type *b = vm->t_bytes = type_new_builtin(vm, "bytes", vm->t_object, 0);
    common_slots(b);
    b->new_ = bytes_new_slot;
    b->repr = bytes_repr_slot;
    b->hash = bytes_hash_slot;
    b->getbuffer = bytes_getbuffer;

    Type *ba = vm->t_bytearray = type_new_builtin(vm, "bytearray", vm->t_object, 0);
    common_slots(ba);
    ba->new_ = bytearray_new_slot;
    ba->repr = bytearray_repr_slot;
    ba->hash = bytearray_hash_slot;
    ba->inplace = bytearray_inplace_slot;
    ba->setitem = bytearray_setitem_slot;
    ba->finalize = bytearray_finalize;
    ba->getbuffer = bytearray_getbuffer;

    Type *it = vm->t_bytes_iter = type_new_builtin(vm, "bytes_iterator", vm->t_object, 0);
    it->iter = bytes_iter_self;
    it->next = bytes_iter_next;
    it->mark = bytes_iter_mark;
    type_add_method(vm, it, "__length_hint__", bytes_iter_len_hint);

    bytes_methods_init(vm, b);
    bytes_methods_init(vm, ba);
    memoryview_init(vm);
    int_bytes_init(vm);
    dict_set_cstr(vm, vm->builtins, "bytes", OBJ_VAL(b));
    dict_set_cstr(vm, vm->builtins, "bytearray", OBJ_VAL(ba));
    dict_set_cstr(vm, vm->builtins, "memoryview", OBJ_VAL(vm->t_memoryview));
    class_allow_subclass(vm, b, false); /* class B(bytes): class_builtin_sub.c */
    class_allow_subclass(vm, ba, true);
}
