/*
** memoryview.c — memoryview over any object with a getbuffer slot
** (bytes, bytearray, numpy arrays). A view keeps its owner and re-fetches
** the owner's buffer on every access instead of keeping a pointer, so a
** resized bytearray or a collected array can never leave it dangling; an
** access beyond the owner's current size raises instead.
*/
#include <string.h>

#include "bytes.h"
#include "vm.h"

typedef struct MemView {
    Obj obj;
    Value owner;       /* the exporting object */
    int64_t offset;    /* byte offset of element 0 in the owner's buffer */
    int64_t stride;    /* bytes between elements of a 1-d view (negative after [::-1]) */
    int64_t itemsize;
    int ndim;
    int64_t shape[BUFFER_MAX_NDIM];
    char format[4];
    bool readonly;
    bool released;
} MemView;

#define AS_MV(v) ((MemView *)AS_OBJ(v))

static bool is_mv(VM *vm, Value v) {
    return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_memoryview;
}

static int64_t mv_nitems(const MemView *m) {
    int64_t n = 1;
    for (int i = 0; i < m->ndim; i++) n *= m->shape[i];
    return n;
}

static bool mv_contiguous(const MemView *m) {
    return m->ndim != 1 || m->stride == m->itemsize || m->shape[0] <= 1;
}

/* Address of element 0, checked against the owner's current buffer. */
static uint8_t *mv_base(VM *vm, MemView *m) {
    if (m->released) vm_raise_kind(vm, ValueError, "operation forbidden on released memoryview object");
    BufferView bv;
    buffer_get(vm, m->owner, &bv);
    int64_t n = mv_nitems(m);
    if (n > 0) {
        int64_t first = m->offset, last = m->offset;
        if (m->ndim == 1) {
            int64_t end = m->offset + (m->shape[0] - 1) * m->stride;
            if (end < first) first = end;
            else last = end;
        } else {
            last = m->offset + (n - 1) * m->itemsize;
        }
        if (first < 0 || last + m->itemsize > bv.len)
            vm_raise_kind(vm, IndexError, "memoryview: underlying buffer was resized");
    }
    return bv.buf + m->offset;
}

/* ---------------------------------------------------------------- element packing */

static int64_t format_size(char f) {
    switch (f) {
    case 'B': case 'b': case 'c': case '?': return 1;
    case 'H': case 'h': case 'e': return 2;
    case 'I': case 'i': case 'f': return 4;
    case 'L': case 'l': case 'Q': case 'q': case 'N': case 'n': case 'd': case 'P': return 8;
    default: return 0;
    }
}

static Value unpack(VM *vm, char f, const uint8_t *p) {
    switch (f) {
    case 'B': return INT_VAL(p[0]);
    case 'b': return INT_VAL((int8_t)p[0]);
    case 'c': return OBJ_VAL(bytes_new(vm, p, 1));
    case '?': return BOOL_VAL(p[0] != 0);
    case 'H': { uint16_t x; memcpy(&x, p, 2); return INT_VAL(x); }
    case 'h': { int16_t x; memcpy(&x, p, 2); return INT_VAL(x); }
    case 'I': { uint32_t x; memcpy(&x, p, 4); return INT_VAL(x); }
    case 'i': { int32_t x; memcpy(&x, p, 4); return INT_VAL(x); }
    case 'L': case 'Q': case 'N': case 'P': {
        uint64_t x;
        memcpy(&x, p, 8);
        if (x > (uint64_t)INT64_MAX) return FLOAT_VAL((double)x); /* big ints belong to another layer */
        return INT_VAL((int64_t)x);
    }
    case 'l': case 'q': case 'n': { int64_t x; memcpy(&x, p, 8); return INT_VAL(x); }
    case 'f': { float x; memcpy(&x, p, 4); return FLOAT_VAL(x); }
    case 'd': { double x; memcpy(&x, p, 8); return FLOAT_VAL(x); }
    default: vm_raise_kind(vm, NotImplementedError, "memoryview: format %c not supported", f);
    }
}

_Noreturn static void bad_value(VM *vm, char f) {
    vm_raise_kind(vm, ValueError, "memoryview: invalid value for format '%c'", f);
}

static void pack(VM *vm, char f, uint8_t *p, Value v) {
    if (f == 'f' || f == 'd') {
        if (!IS_NUMBER(v))
            vm_raise_kind(vm, TypeError, "memoryview: invalid type for format '%c'", f);
        double d = AS_NUMBER(v);
        if (f == 'f') {
            float x = (float)d;
            memcpy(p, &x, 4);
        } else {
            memcpy(p, &d, 8);
        }
        return;
    }
    if (f == 'c') {
        if (!IS_BYTES(vm, v) || AS_BYTES(v)->len != 1) bad_value(vm, f);
        p[0] = AS_BYTES(v)->data[0];
        return;
    }
    if (f == '?') {
        p[0] = vm_truthy(vm, v) ? 1 : 0;
        return;
    }
    if (!IS_INTLIKE(v)) vm_raise_kind(vm, TypeError, "memoryview: invalid type for format '%c'", f);
    int64_t x = AS_INTLIKE(v);
    switch (f) {
    case 'B': if (x < 0 || x > 255) bad_value(vm, f); p[0] = (uint8_t)x; break;
    case 'b': if (x < -128 || x > 127) bad_value(vm, f); p[0] = (uint8_t)(int8_t)x; break;
    case 'H': { if (x < 0 || x > 65535) bad_value(vm, f); uint16_t y = (uint16_t)x; memcpy(p, &y, 2); break; }
    case 'h': { if (x < -32768 || x > 32767) bad_value(vm, f); int16_t y = (int16_t)x; memcpy(p, &y, 2); break; }
    case 'I': { if (x < 0 || x > (int64_t)UINT32_MAX) bad_value(vm, f); uint32_t y = (uint32_t)x; memcpy(p, &y, 4); break; }
    case 'i': { if (x < INT32_MIN || x > INT32_MAX) bad_value(vm, f); int32_t y = (int32_t)x; memcpy(p, &y, 4); break; }
    case 'L': case 'Q': case 'N': case 'P': if (x < 0) bad_value(vm, f); memcpy(p, &x, 8); break;
    default: memcpy(p, &x, 8); break;
    }
}

/* ---------------------------------------------------------------- construction */

static MemView *mv_alloc(VM *vm) {
    MemView *m = gc_alloc_obj(vm, vm->t_memoryview, sizeof(MemView));
    m->owner = NONE_VAL;
    return m;
}

/* A new view with the same fields as src (the GC header is the new one's). */
static MemView *mv_copy(VM *vm, MemView *src) {
    MemView *m = mv_alloc(vm);
    Obj hdr = m->obj;
    *m = *src;
    m->obj = hdr;
    return m;
}

static Value mv_from(VM *vm, Value obj) {
    if (is_mv(vm, obj)) {
        MemView *src = AS_MV(obj);
        mv_base(vm, src);
        return OBJ_VAL(mv_copy(vm, src));
    }
    BufferView bv;
    if (!buffer_get(vm, obj, &bv))
        vm_raise_kind(vm, TypeError, "memoryview: a bytes-like object is required, not '%s'", vm_type_name(vm, obj));
    MemView *m = mv_alloc(vm);
    m->owner = obj;
    m->itemsize = bv.itemsize;
    m->stride = bv.itemsize;
    m->ndim = bv.ndim;
    for (int i = 0; i < bv.ndim; i++) m->shape[i] = bv.shape[i];
    snprintf(m->format, sizeof m->format, "%s", bv.format);
    m->readonly = bv.readonly;
    return OBJ_VAL(m);
}

static Value mv_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    Value obj = argc > 0 ? argv[0] : EMPTY_VAL;
    if (kwargs && kwargs->count > 0) {
        Value o = kwarg_take(vm, kwargs, "object");
        if (!IS_EMPTY(o)) {
            if (!IS_EMPTY(obj))
                vm_raise_kind(vm, TypeError, "argument for memoryview() given by name ('object') and position (1)");
            obj = o;
        }
        kwargs_check_empty(vm, "memoryview", kwargs);
    }
    if (argc > 1) vm_raise_kind(vm, TypeError, "memoryview() takes at most 1 argument (%d given)", argc);
    if (IS_EMPTY(obj)) vm_raise_kind(vm, TypeError, "memoryview() missing required argument 'object' (pos 1)");
    return mv_from(vm, obj);
}

/* memoryview's own buffer (bytes(mv), b''.join([mv]), mv2 = memoryview(mv)):
** a strided view is copied into a temporary bytes, which stays valid until
** the next safepoint, like every view (bytes.h). */
static void mv_getbuffer(VM *vm, Value self, BufferView *v) {
    MemView *m = AS_MV(self);
    uint8_t *base = mv_base(vm, m);
    int64_t n = mv_nitems(m);
    *v = (BufferView){.buf = base, .len = n * m->itemsize, .itemsize = m->itemsize, .format = m->format,
                      .readonly = m->readonly, .ndim = m->ndim};
    for (int i = 0; i < m->ndim; i++) v->shape[i] = m->shape[i];
    if (!mv_contiguous(m)) {
        Bytes *tmp = bytes_alloc(vm, n * m->itemsize);
        for (int64_t i = 0; i < n; i++) memcpy(tmp->data + i * m->itemsize, base + i * m->stride, (size_t)m->itemsize);
        v->buf = tmp->data;
        v->readonly = true;
    }
}

/* ---------------------------------------------------------------- tolist / tobytes */

static Value tolist_rec(VM *vm, MemView *m, const uint8_t *p, int dim) {
    int64_t step = dim == 0 && m->ndim == 1 ? m->stride : m->itemsize;
    for (int k = dim + 1; k < m->ndim; k++) step *= m->shape[k];
    List *l = list_new(vm, m->shape[dim]);
    vm_push_root(vm, OBJ_VAL(l));
    for (int64_t i = 0; i < m->shape[dim]; i++) {
        Value x = dim + 1 == m->ndim ? unpack(vm, m->format[0], p + i * step) : tolist_rec(vm, m, p + i * step, dim + 1);
        list_append(vm, l, x);
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(l);
}

static MemView *mv_self(VM *vm, const char *name, int argc, Value *argv) {
    if (argc < 1 || !is_mv(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a 'memoryview' object", name);
    return AS_MV(argv[0]);
}

static Value m_tolist(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "tolist", kwargs);
    MemView *m = mv_self(vm, "tolist", argc, argv);
    const uint8_t *base = mv_base(vm, m);
    if (m->ndim == 0) return unpack(vm, m->format[0], base);
    return tolist_rec(vm, m, base, 0);
}

static Bytes *mv_tobytes(VM *vm, MemView *m) {
    uint8_t *base = mv_base(vm, m);
    int64_t n = mv_nitems(m);
    Bytes *b = bytes_alloc(vm, n * m->itemsize);
    if (mv_contiguous(m)) memcpy(b->data, base, (size_t)(n * m->itemsize));
    else
        for (int64_t i = 0; i < n; i++) memcpy(b->data + i * m->itemsize, base + i * m->stride, (size_t)m->itemsize);
    return b;
}

static Value m_tobytes(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    return OBJ_VAL(mv_tobytes(vm, mv_self(vm, "tobytes", argc, argv)));
}

static Value m_hex(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Bytes *b = mv_tobytes(vm, mv_self(vm, "hex", argc, argv));
    vm_push_root(vm, OBJ_VAL(b));
    argv[0] = OBJ_VAL(b);
    Value r = vm_call_kw(vm, vm_getattr(vm, OBJ_VAL(b), str_cstr(vm, "hex")), argc - 1, argv + 1, kwargs);
    vm_pop_roots(vm, 1);
    return r;
}

static Value m_release(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "release", kwargs);
    MemView *m = mv_self(vm, "release", argc, argv);
    m->released = true;
    return NONE_VAL;
}

static Value m_enter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    MemView *m = mv_self(vm, "__enter__", argc, argv);
    if (m->released) vm_raise_kind(vm, ValueError, "operation forbidden on released memoryview object");
    return argv[0];
}

static Value m_exit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    mv_self(vm, "__exit__", argc, argv)->released = true;
    return BOOL_VAL(false);
}

static Value m_cast(VM *vm, int argc, Value *argv, Dict *kwargs) {
    MemView *m = mv_self(vm, "cast", argc, argv);
    Value fmt = argc > 1 ? argv[1] : EMPTY_VAL, shape = argc > 2 ? argv[2] : EMPTY_VAL;
    if (kwargs && kwargs->count > 0) {
        Value f = kwarg_take(vm, kwargs, "format"), s = kwarg_take(vm, kwargs, "shape");
        if (!IS_EMPTY(f)) fmt = f;
        if (!IS_EMPTY(s)) shape = s;
        kwargs_check_empty(vm, "cast", kwargs);
    }
    if (IS_EMPTY(fmt)) vm_raise_kind(vm, TypeError, "cast() missing required argument 'format' (pos 1)");
    if (!IS_STR(vm, fmt)) vm_raise_kind(vm, TypeError, "memoryview: format argument must be a string");
    mv_base(vm, m);
    const char *f = AS_STR(fmt)->chars;
    if (f[0] == '@') f++;
    int64_t isz = strlen(f) == 1 ? format_size(f[0]) : 0;
    if (!isz || f[0] == 'e')
        vm_raise_kind(vm, ValueError,
                      "memoryview: destination format must be a native single character format prefixed with an optional '@'");
    if (!mv_contiguous(m)) vm_raise_kind(vm, TypeError, "memoryview: casts are restricted to C-contiguous views");
    bool src_byte = strchr("Bbc", m->format[0]) != NULL, dst_byte = strchr("Bbc", f[0]) != NULL;
    if (!src_byte && !dst_byte) vm_raise_kind(vm, TypeError, "memoryview: cannot cast between two non-byte formats");
    int64_t nbytes = mv_nitems(m) * m->itemsize;
    MemView *r = mv_alloc(vm);
    r->owner = m->owner;
    r->offset = m->offset;
    r->itemsize = isz;
    r->stride = isz;
    r->readonly = m->readonly;
    snprintf(r->format, sizeof r->format, "%s", f);
    if (IS_EMPTY(shape)) {
        if (nbytes % isz) vm_raise_kind(vm, TypeError, "memoryview: length is not a multiple of itemsize");
        r->ndim = 1;
        r->shape[0] = nbytes / isz;
    } else {
        vm_push_root(vm, OBJ_VAL(r));
        if (!IS_LIST(vm, shape) && !IS_TUPLE(vm, shape))
            vm_raise_kind(vm, TypeError, "shape must be a list or a tuple");
        Tuple *t = tuple_from_iterable(vm, shape);
        if (t->len > BUFFER_MAX_NDIM)
            vm_raise_kind(vm, ValueError, "memoryview: number of dimensions must not exceed 64");
        int64_t prod = 1;
        for (int64_t i = 0; i < t->len; i++) {
            int64_t d = vm_to_index(vm, t->items[i]);
            if (d <= 0) vm_raise_kind(vm, ValueError, "memoryview.cast(): elements of shape must be integers > 0");
            r->shape[i] = d;
            prod *= d;
        }
        r->ndim = (int)t->len;
        if (prod * isz != nbytes) vm_raise_kind(vm, TypeError, "memoryview: product(shape) * itemsize != buffer size");
        vm_pop_roots(vm, 1);
    }
    return OBJ_VAL(r);
}

/* ---------------------------------------------------------------- attributes */

static Value mv_getattr_slot(VM *vm, Value self, Str *name) {
    MemView *m = AS_MV(self);
    const char *n = name->chars;
    bool known = strcmp(n, "format") == 0 || strcmp(n, "itemsize") == 0 || strcmp(n, "nbytes") == 0 ||
                 strcmp(n, "readonly") == 0 || strcmp(n, "ndim") == 0 || strcmp(n, "shape") == 0 ||
                 strcmp(n, "strides") == 0 || strcmp(n, "obj") == 0 || strcmp(n, "contiguous") == 0 ||
                 strcmp(n, "c_contiguous") == 0;
    if (!known) return generic_getattr(vm, self, name);
    if (strcmp(n, "obj") != 0) mv_base(vm, m);
    if (strcmp(n, "format") == 0) return STR_VAL(str_cstr(vm, m->format));
    if (strcmp(n, "itemsize") == 0) return INT_VAL(m->itemsize);
    if (strcmp(n, "nbytes") == 0) return INT_VAL(mv_nitems(m) * m->itemsize);
    if (strcmp(n, "readonly") == 0) return BOOL_VAL(m->readonly);
    if (strcmp(n, "ndim") == 0) return INT_VAL(m->ndim);
    if (strcmp(n, "obj") == 0) {
        if (m->released) vm_raise_kind(vm, ValueError, "operation forbidden on released memoryview object");
        return m->owner;
    }
    if (strcmp(n, "contiguous") == 0 || strcmp(n, "c_contiguous") == 0) return BOOL_VAL(mv_contiguous(m));
    Tuple *t = tuple_new(vm, m->ndim);
    int64_t step = m->itemsize;
    for (int i = m->ndim - 1; i >= 0; i--) {
        if (strcmp(n, "shape") == 0) t->items[i] = INT_VAL(m->shape[i]);
        else t->items[i] = INT_VAL(m->ndim == 1 ? m->stride : step);
        step *= m->shape[i];
    }
    return OBJ_VAL(t);
}

static Value mv_repr_slot(VM *vm, Value self) {
    MemView *m = AS_MV(self);
    return STR_VAL(str_printf(vm, m->released ? "<released memory at %p>" : "<memory at %p>", (void *)m));
}

static int64_t mv_len_slot(VM *vm, Value self) {
    MemView *m = AS_MV(self);
    mv_base(vm, m);
    if (m->ndim == 0) vm_raise_kind(vm, TypeError, "0-dim memory has no length");
    return m->shape[0];
}

static int64_t mv_hash_slot(VM *vm, Value self) {
    MemView *m = AS_MV(self);
    if (!m->readonly) vm_raise_kind(vm, ValueError, "cannot hash writable memoryview object");
    if (!strchr("Bbc", m->format[0]))
        vm_raise_kind(vm, ValueError, "memoryview: hashing is restricted to formats 'B', 'b' or 'c'");
    Bytes *b = mv_tobytes(vm, m);
    return str_hash_bytes((const char *)b->data, (size_t)b->len);
}

static Value mv_compare_slot(VM *vm, CmpOp op, Value a, Value b) {
    if (op != CMP_EQ && op != CMP_NE) return EMPTY_VAL;
    BufferView va, vb;
    if (!buffer_get(vm, a, &va) || !buffer_get(vm, b, &vb)) return EMPTY_VAL;
    if (is_mv(vm, a) && AS_MV(a)->released) return BOOL_VAL((op == CMP_EQ) == (AS_OBJ(a) == AS_OBJ(b)));
    if (is_mv(vm, b) && AS_MV(b)->released) return BOOL_VAL((op == CMP_EQ) == (AS_OBJ(a) == AS_OBJ(b)));
    /* compare as lists of values: formats may differ (b'\x01' == memoryview of int8 [1]) */
    Value la = is_mv(vm, a) ? m_tolist(vm, 1, &a, NULL) : EMPTY_VAL;
    vm_push_root(vm, la);
    if (IS_EMPTY(la)) {
        Value mv = mv_from(vm, a);
        vm_push_root(vm, mv);
        la = m_tolist(vm, 1, &mv, NULL);
        vm_pop_roots(vm, 1);
        vm_push_root(vm, la);
    }
    Value mvb = is_mv(vm, b) ? b : mv_from(vm, b);
    vm_push_root(vm, mvb);
    Value lb = m_tolist(vm, 1, &mvb, NULL);
    vm_push_root(vm, lb);
    bool eq = vm_equal(vm, la, lb);
    vm_pop_roots(vm, IS_EMPTY(la) ? 3 : 4);
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

/* ---------------------------------------------------------------- indexing */

static int64_t mv_index(VM *vm, MemView *m, Value key) {
    if (m->ndim == 0) vm_raise_kind(vm, TypeError, "invalid indexing of 0-dim memory");
    if (m->ndim > 1) vm_raise_kind(vm, NotImplementedError, "multi-dimensional sub-views are not implemented");
    int64_t i;
    if (IS_INTLIKE(key)) i = AS_INTLIKE(key);
    else if (IS_OBJ(key) && (AS_OBJ(key)->type->flags & TYPE_HEAP)) i = vm_to_index(vm, key);
    else vm_raise_kind(vm, TypeError, "memoryview: invalid slice key");
    if (i < 0) i += m->shape[0];
    if (i < 0 || i >= m->shape[0]) vm_raise_kind(vm, IndexError, "index out of bounds on dimension 1");
    return i;
}

/* Byte offset of the element at a tuple of indices (multi-dimensional views). */
static int64_t mv_tuple_offset(VM *vm, MemView *m, Tuple *t) {
    if (t->len != m->ndim)
        vm_raise_kind(vm, TypeError, t->len < m->ndim ? "sub-views are not implemented"
                                                        : "cannot index %d-dimension view with %lld-element tuple",
                      m->ndim, (long long)t->len);
    int64_t off = 0, step = m->itemsize;
    for (int d = m->ndim - 1; d >= 0; d--) {
        if (!IS_INTLIKE(t->items[d])) vm_raise_kind(vm, TypeError, "memoryview: invalid slice key");
        int64_t i = AS_INTLIKE(t->items[d]);
        if (i < 0) i += m->shape[d];
        if (i < 0 || i >= m->shape[d])
            vm_raise_kind(vm, IndexError, "index out of bounds on dimension %d", d + 1);
        off += i * (m->ndim == 1 ? m->stride : step);
        step *= m->shape[d];
    }
    return off;
}

static Value mv_getitem_slot(VM *vm, Value self, Value key) {
    MemView *m = AS_MV(self);
    mv_base(vm, m);
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) {
        if (m->ndim != 1) vm_raise_kind(vm, NotImplementedError, "multi-dimensional slicing is not implemented");
        int64_t start, stop, step;
        int64_t cnt = slice_indices(vm, (Slice *)AS_OBJ(key), m->shape[0], &start, &stop, &step);
        MemView *r = mv_copy(vm, m);
        r->offset = m->offset + start * m->stride;
        r->stride = m->stride * step;
        r->shape[0] = cnt;
        return OBJ_VAL(r);
    }
    if (IS_TUPLE(vm, key)) {
        uint8_t *base = mv_base(vm, m);
        return unpack(vm, m->format[0], base + mv_tuple_offset(vm, m, AS_TUPLE(key)));
    }
    int64_t i = mv_index(vm, m, key);
    uint8_t *base = mv_base(vm, m);
    return unpack(vm, m->format[0], base + i * m->stride);
}

static void mv_setitem_slot(VM *vm, Value self, Value key, Value value) {
    MemView *m = AS_MV(self);
    mv_base(vm, m);
    if (m->readonly) vm_raise_kind(vm, TypeError, "cannot modify read-only memory");
    if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "cannot delete memory");
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) {
        if (m->ndim != 1) vm_raise_kind(vm, NotImplementedError, "memoryview slice assignments are currently restricted to ndim = 1");
        int64_t start, stop, step;
        int64_t cnt = slice_indices(vm, (Slice *)AS_OBJ(key), m->shape[0], &start, &stop, &step);
        BufferView src;
        if (!buffer_get(vm, value, &src))
            vm_raise_kind(vm, TypeError, "a bytes-like object is required, not '%s'", vm_type_name(vm, value));
        if (strcmp(src.format, m->format) != 0 || src.len != cnt * m->itemsize)
            vm_raise_kind(vm, ValueError, "memoryview assignment: lvalue and rvalue have different structures");
        /* the source may alias the destination: copy it first */
        Bytes *tmp = bytes_new(vm, src.buf, src.len);
        uint8_t *base = mv_base(vm, m);
        for (int64_t i = 0; i < cnt; i++)
            memcpy(base + (start + i * step) * m->stride, tmp->data + i * m->itemsize, (size_t)m->itemsize);
        return;
    }
    int64_t off;
    if (IS_TUPLE(vm, key)) off = mv_tuple_offset(vm, m, AS_TUPLE(key));
    else off = mv_index(vm, m, key) * m->stride;
    uint8_t tmp[8];
    pack(vm, m->format[0], tmp, value);
    uint8_t *base = mv_base(vm, m);
    memcpy(base + off, tmp, (size_t)m->itemsize);
}

static Value mv_iter_slot(VM *vm, Value self) {
    MemView *m = AS_MV(self);
    mv_base(vm, m);
    if (m->ndim == 0) vm_raise_kind(vm, TypeError, "invalid indexing of 0-dim memory");
    if (m->ndim > 1) vm_raise_kind(vm, NotImplementedError, "multi-dimensional sub-views are not implemented");
    Value l = m_tolist(vm, 1, &self, NULL);
    return vm_iter(vm, l);
}

static void mv_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((MemView *)o)->owner);
}

void memoryview_init(VM *vm) {
    Type *t = vm->t_memoryview = type_new_builtin(vm, "memoryview", vm->t_object, 0);
    t->new_ = mv_new_slot;
    t->repr = mv_repr_slot;
    t->hash = mv_hash_slot;
    t->compare = mv_compare_slot;
    t->getattr = mv_getattr_slot;
    t->len = mv_len_slot;
    t->getitem = mv_getitem_slot;
    t->setitem = mv_setitem_slot;
    t->iter = mv_iter_slot;
    t->mark = mv_mark;
    t->getbuffer = mv_getbuffer;
    static const struct {
        const char *name;
        NativeFn fn;
    } methods[] = {
        {"tolist", m_tolist},   {"tobytes", m_tobytes}, {"hex", m_hex},       {"release", m_release},
        {"__enter__", m_enter}, {"__exit__", m_exit},   {"cast", m_cast},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) type_add_method(vm, t, methods[i].name, methods[i].fn);
}
