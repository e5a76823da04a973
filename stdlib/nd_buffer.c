/*
** nd_buffer.c — numpy arrays and the buffer protocol (vm/bytes.h):
** the array's getbuffer slot (memoryview(a), bytes(a), f.write(a)),
** a.tobytes() and np.frombuffer().
*/
#include <string.h>

#include "bytes.h"
#include "nd_priv.h"
#include "stdlib_priv.h"

/* The struct-module format of each dtype, as numpy exports it. */
static const char *dtype_format(NDType dt) {
    static const char *const f[ND__COUNT] = {
        [ND_BOOL] = "?",   [ND_INT8] = "b",   [ND_INT16] = "h",  [ND_INT32] = "i",
        [ND_INT64] = "l",  [ND_UINT8] = "B",  [ND_UINT16] = "H", [ND_UINT32] = "I",
        [ND_UINT64] = "L", [ND_FLOAT16] = "e", [ND_FLOAT32] = "f", [ND_FLOAT64] = "d",
    };
    return f[dt];
}

/* A C-contiguous array is exported in place; any other layout as a
** read-only C-contiguous copy (valid until the next safepoint, as every
** view is). */
static void arr_getbuffer(VM *vm, Value self, BufferView *v) {
    NDArray *a = ND_AS(self);
    if (a->ndim > BUFFER_MAX_NDIM)
        vm_raise_kind(vm, NotImplementedError, "memoryview: arrays of more than %d dimensions", BUFFER_MAX_NDIM);
    bool copied = !(a->flags & ND_C_CONTIGUOUS);
    if (copied) a = nd_copy(vm, a);
    size_t is = nd_itemsize(a->dtype);
    *v = (BufferView){.buf = a->data ? (uint8_t *)a->data : (uint8_t *)(uintptr_t)"", .len = a->size * (int64_t)is,
                      .itemsize = (int64_t)is, .format = dtype_format(a->dtype),
                      .readonly = copied || !(a->flags & ND_WRITEABLE), .ndim = a->ndim};
    for (int i = 0; i < a->ndim; i++) v->shape[i] = a->shape[i];
}

static Value m_tobytes(VM *vm, int argc, Value *argv, Dict *kw) {
    Value order = kw_take(vm, kw, "order");
    kw_done(vm, "tobytes", kw);
    arg_between(vm, "tobytes", argc, 1, 2);
    if (argc > 1) order = argv[1];
    if (!IS_EMPTY(order) && !IS_NONE(order) && !(IS_STR(vm, order) && strcmp(AS_STR(order)->chars, "C") == 0))
        vm_raise_kind(vm, NotImplementedError, "tobytes: only order='C' is supported");
    BufferView v;
    arr_getbuffer(vm, argv[0], &v);
    return OBJ_VAL(bytes_new(vm, v.buf, v.len));
}

/* np.frombuffer(buffer, dtype=float, count=-1, offset=0). A bytes object
** never changes or moves, so the array views it in place (read-only, as in
** numpy); other buffers (a bytearray can be resized) are copied. */
static Value f_frombuffer(VM *vm, int argc, Value *argv, Dict *kw) {
    static const char *const names[] = {"buffer", "dtype", "count", "offset"};
    Value a[4] = {EMPTY_VAL, EMPTY_VAL, EMPTY_VAL, EMPTY_VAL};
    if (argc > 4) vm_raise_kind(vm, TypeError, "frombuffer() takes at most 4 arguments (%d given)", argc);
    for (int i = 0; i < argc; i++) a[i] = argv[i];
    for (int i = 0; i < 4; i++) {
        Value k = kw_take(vm, kw, names[i]);
        if (!IS_EMPTY(k)) a[i] = k;
    }
    kw_done(vm, "frombuffer", kw);
    if (IS_EMPTY(a[0])) vm_raise_kind(vm, TypeError, "frombuffer() missing required argument 'buffer' (pos 1)");
    NDType dt = IS_EMPTY(a[1]) || IS_NONE(a[1]) ? ND_FLOAT64 : nd_dtype_from_value(vm, a[1]);
    int64_t count = IS_EMPTY(a[2]) ? -1 : arg_int(vm, "frombuffer", a[2]);
    int64_t offset = IS_EMPTY(a[3]) ? 0 : arg_int(vm, "frombuffer", a[3]);
    BufferView v;
    buffer_need(vm, a[0], &v);
    int64_t is = (int64_t)nd_itemsize(dt);
    if (offset < 0 || offset > v.len)
        vm_raise_kind(vm, ValueError, "offset must be non-negative and no greater than buffer length (%lld)",
                      (long long)v.len);
    int64_t avail = v.len - offset;
    if (count < 0) {
        if (avail % is) vm_raise_kind(vm, ValueError, "buffer size must be a multiple of element size");
        count = avail / is;
    } else if (count > avail / is) {
        vm_raise_kind(vm, ValueError, "buffer is smaller than requested size");
    }
    int64_t shape[1] = {count};
    if (IS_BYTES(vm, a[0])) {
        NDArray *r = nd_wrap(vm, dt, AS_BYTES(a[0])->data + offset, 1, shape, NULL, a[0]);
        r->flags &= ~ND_WRITEABLE;
        return OBJ_VAL(r);
    }
    NDArray *r = nd_new(vm, dt, 1, shape);
    buffer_need(vm, a[0], &v); /* nd_new ran no user code, but fetch again as the protocol asks */
    memcpy(r->data, v.buf + offset, (size_t)(count * is));
    return OBJ_VAL(r);
}

void nd_buffer_type_init(VM *vm, NDState *st) {
    st->t_array->getbuffer = arr_getbuffer;
    type_add_method(vm, st->t_array, "tobytes", m_tobytes);
}

void nd_buffer_funcs_init(VM *vm, Module *m) {
    module_add_function(vm, m, "frombuffer", f_frombuffer);
}
