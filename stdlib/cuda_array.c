/*
** cuda_array.c — device arrays: cuda.to_device, device_array,
** device_array_like and DeviceNDArray (copy_to_host, shape, dtype, ...).
**
** On the CPU device, device memory is host memory: a device array wraps an
** NDArray that owns a separate buffer (to_device copies), so programs see
** the same copy semantics they would on a GPU. Indexing goes through the
** wrapped host array; slices stay device arrays (views), as in Numba.
*/
#include <string.h>

#include "cuda_priv.h"

static DevArray *as_dev(Value v) { return (DevArray *)AS_OBJ(v); }
static NDArray *dev_host(Value v) { return (NDArray *)AS_OBJ(as_dev(v)->host); }

bool cuda_is_devarray(VM *vm, Value v) {
    return vm->cuda && IS_OBJ(v) && AS_OBJ(v)->type == vm->cuda->t_devarray;
}

NDArray *cuda_array_of(VM *vm, Value v) {
    if (cuda_is_devarray(vm, v)) return dev_host(v);
    if (nd_check(vm, v)) return (NDArray *)AS_OBJ(v);
    return NULL;
}

Value cuda_devarray_wrap(VM *vm, NDArray *a) {
    vm_push_root(vm, OBJ_VAL(a));
    DevArray *d = gc_alloc_obj(vm, cuda_state(vm)->t_devarray, sizeof(DevArray));
    d->host = OBJ_VAL(a);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(d);
}

void cuda_copy_strided(NDArray *dst, const NDArray *src) {
    size_t isz = nd_itemsize(src->dtype);
    if (src->size == 0) return;
    if ((dst->flags & ND_C_CONTIGUOUS) && (src->flags & ND_C_CONTIGUOUS)) {
        memmove(dst->data, src->data, (size_t)src->size * isz);
        return;
    }
    int64_t idx[ND_MAXDIM] = {0};
    int nd = src->ndim;
    for (int64_t n = 0; n < src->size; n++) {
        int64_t od = 0, os = 0;
        for (int i = 0; i < nd; i++) {
            od += idx[i] * dst->strides[i];
            os += idx[i] * src->strides[i];
        }
        memcpy(dst->data + od, src->data + os, isz);
        for (int i = nd - 1; i >= 0; i--) {
            if (++idx[i] < src->shape[i]) break;
            idx[i] = 0;
        }
    }
}

/* "(3, 4) float32" into buf. */
static void shape_str(const NDArray *a, char *buf, size_t size) {
    size_t len = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < a->ndim && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
    if (len < size) snprintf(buf + len, size - len, "%s) %s", a->ndim == 1 ? "," : "", nd_dtype_name(a->dtype));
}

/* Raises unless a and b have the same shape and dtype (copies between them). */
static void check_same(VM *vm, const char *what, NDArray *a, NDArray *b) {
    bool same = a->ndim == b->ndim && a->dtype == b->dtype;
    for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == b->shape[i];
    if (!same) {
        char sa[256], sb[256];
        shape_str(a, sa, sizeof sa);
        shape_str(b, sb, sizeof sb);
        vm_raise_kind(vm, ValueError, "%s: incompatible shape or dtype: %s vs %s", what, sa, sb);
    }
}

/* ------------------------------------------------------- module functions */

/* cuda.to_device(obj, stream=0, copy=True, to=None) */
Value cuda_f_to_device(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value to = kw_take(vm, kwargs, "to");
    Value stream = kw_take(vm, kwargs, "stream");
    Value copy = kw_take(vm, kwargs, "copy");
    (void)stream, (void)copy;
    kw_done(vm, "to_device", kwargs);
    arg_count(vm, "to_device", argc, 1, 3);
    if (argc >= 3) to = argv[2];
    NDArray *src = cuda_array_of(vm, argv[0]);
    if (!src) src = nd_from_value(vm, argv[0], -1);
    vm_push_root(vm, OBJ_VAL(src));
    if (!IS_EMPTY(to) && !IS_NONE(to)) {
        if (!cuda_is_devarray(vm, to))
            vm_raise_kind(vm, TypeError, "to_device(): 'to' must be a device array, not '%s'", vm_type_name(vm, to));
        check_same(vm, "to_device", dev_host(to), src);
        cuda_copy_strided(dev_host(to), src);
        vm_pop_roots(vm, 1);
        return to;
    }
    NDArray *c = nd_copy(vm, src);
    vm_pop_roots(vm, 1);
    return cuda_devarray_wrap(vm, c);
}

/* A shape argument: an int or a tuple/list of ints. Returns ndim. */
static int parse_shape(VM *vm, const char *fname, Value v, int64_t *shape) {
    if (IS_INTLIKE(v)) {
        shape[0] = AS_INTLIKE(v);
        if (shape[0] < 0) vm_raise_kind(vm, ValueError, "%s(): negative dimensions are not allowed", fname);
        return 1;
    }
    if (!IS_TUPLE(vm, v) && !IS_LIST(vm, v))
        vm_raise_kind(vm, TypeError, "%s(): shape must be an int or a tuple of ints, not '%s'", fname,
                      vm_type_name(vm, v));
    int64_t n = IS_TUPLE(vm, v) ? AS_TUPLE(v)->len : AS_LIST(v)->len;
    Value *items = IS_TUPLE(vm, v) ? AS_TUPLE(v)->items : AS_LIST(v)->items;
    if (n > ND_MAXDIM) vm_raise_kind(vm, ValueError, "%s(): too many dimensions (%lld)", fname, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        shape[i] = arg_int(vm, fname, items[i]);
        if (shape[i] < 0) vm_raise_kind(vm, ValueError, "%s(): negative dimensions are not allowed", fname);
    }
    return (int)n;
}

/* Makes a zeroed array of the shape in C or Fortran order. */
static NDArray *new_array(VM *vm, NDType dt, int ndim, const int64_t *shape, bool fortran) {
    NDArray *a = nd_new(vm, dt, ndim, shape);
    if (fortran && ndim > 1) {
        int64_t s = (int64_t)nd_itemsize(dt);
        for (int i = 0; i < ndim; i++) {
            a->strides[i] = s;
            s *= shape[i] ? shape[i] : 1;
        }
        nd_update_flags(a);
    }
    return a;
}

/* The (shape, dtype, order) arguments shared by device_array and pinned_array. */
static NDArray *array_from_args(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs) {
    Value dtype = kw_take(vm, kwargs, "dtype");
    Value order = kw_take(vm, kwargs, "order");
    Value strides = kw_take(vm, kwargs, "strides");
    (void)kw_take(vm, kwargs, "stream");
    (void)kw_take(vm, kwargs, "portable");
    (void)kw_take(vm, kwargs, "wc");
    kw_done(vm, fname, kwargs);
    arg_count(vm, fname, argc, 1, 3);
    if (argc >= 2) dtype = argv[1];
    if (argc >= 3) order = argv[2];
    if (!IS_EMPTY(strides) && !IS_NONE(strides))
        vm_raise_kind(vm, NotImplementedError, "%s(): explicit strides are not supported", fname);
    int64_t shape[ND_MAXDIM];
    int ndim = parse_shape(vm, fname, argv[0], shape);
    NDType dt = IS_EMPTY(dtype) || IS_NONE(dtype) ? ND_FLOAT64 : nd_dtype_from_value(vm, dtype);
    bool fortran = false;
    if (!IS_EMPTY(order) && !IS_NONE(order)) {
        Str *o = arg_str(vm, fname, order);
        if (strcmp(o->chars, "F") == 0) fortran = true;
        else if (strcmp(o->chars, "C") != 0)
            vm_raise_kind(vm, ValueError, "%s(): order must be 'C' or 'F', not '%s'", fname, o->chars);
    }
    return new_array(vm, dt, ndim, shape, fortran);
}

/* cuda.device_array(shape, dtype=np.float64, strides=None, order='C', stream=0) */
Value cuda_f_device_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    NDArray *a = array_from_args(vm, "device_array", argc, argv, kwargs);
    return cuda_devarray_wrap(vm, a);
}

/* cuda.pinned_array / mapped_array / managed_array: host arrays here. */
Value cuda_f_pinned_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return OBJ_VAL(array_from_args(vm, "pinned_array", argc, argv, kwargs));
}

/* cuda.device_array_like(ary, stream=0) */
Value cuda_f_device_array_like(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "device_array_like", kwargs);
    arg_count(vm, "device_array_like", argc, 1, 2);
    NDArray *src = cuda_array_of(vm, argv[0]);
    if (!src)
        vm_raise_kind(vm, TypeError, "device_array_like() needs an array, not '%s'", vm_type_name(vm, argv[0]));
    bool fortran = !(src->flags & ND_C_CONTIGUOUS) && (src->flags & ND_F_CONTIGUOUS);
    NDArray *a = new_array(vm, src->dtype, src->ndim, src->shape, fortran);
    return cuda_devarray_wrap(vm, a);
}

/* --------------------------------------------------------- DeviceNDArray */

static void dev_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((DevArray *)o)->host); }

static Value dev_repr(VM *vm, Value self) {
    return STR_VAL(str_printf(vm, "<numba.cuda.cudadrv.devicearray.DeviceNDArray object at %p>", (void *)AS_OBJ(self)));
}

static Value int_tuple(VM *vm, int n, const int64_t *v) {
    Tuple *t = tuple_new(vm, n);
    for (int i = 0; i < n; i++) t->items[i] = INT_VAL(v[i]);
    return OBJ_VAL(t);
}

static Value dev_getattr(VM *vm, Value self, Str *name) {
    NDArray *a = dev_host(self);
    const char *n = name->chars;
    if (strcmp(n, "shape") == 0) return int_tuple(vm, a->ndim, a->shape);
    if (strcmp(n, "strides") == 0) return int_tuple(vm, a->ndim, a->strides);
    if (strcmp(n, "size") == 0) return INT_VAL(a->size);
    if (strcmp(n, "ndim") == 0) return INT_VAL(a->ndim);
    if (strcmp(n, "dtype") == 0) return nd_dtype_object(vm, a->dtype);
    if (strcmp(n, "nbytes") == 0 || strcmp(n, "alloc_size") == 0)
        return INT_VAL(a->size * (int64_t)nd_itemsize(a->dtype));
    if (strcmp(n, "itemsize") == 0) return INT_VAL((int64_t)nd_itemsize(a->dtype));
    return generic_getattr(vm, self, name);
}

static Value dev_getitem(VM *vm, Value self, Value key) {
    Value r = vm_getitem(vm, as_dev(self)->host, key);
    if (nd_check(vm, r)) return cuda_devarray_wrap(vm, (NDArray *)AS_OBJ(r));
    return r;
}

static void dev_setitem(VM *vm, Value self, Value key, Value value) {
    if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "device arrays do not support item deletion");
    if (cuda_is_devarray(vm, value)) value = as_dev(value)->host;
    vm_setitem(vm, as_dev(self)->host, key, value);
}

static int64_t dev_len(VM *vm, Value self) {
    NDArray *a = dev_host(self);
    if (a->ndim == 0) vm_raise_kind(vm, TypeError, "len() of unsized object");
    return a->shape[0];
}

/* d.copy_to_host(ary=None, stream=0): a new host array, or fills ary. */
static Value m_copy_to_host(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value ary = kw_take(vm, kwargs, "ary");
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "copy_to_host", kwargs);
    arg_count(vm, "copy_to_host", argc, 1, 3);
    if (argc >= 2) ary = argv[1];
    NDArray *a = dev_host(argv[0]);
    if (IS_EMPTY(ary) || IS_NONE(ary)) return OBJ_VAL(nd_copy(vm, a));
    if (!nd_check(vm, ary))
        vm_raise_kind(vm, TypeError, "copy_to_host(): ary must be a numpy array, not '%s'", vm_type_name(vm, ary));
    NDArray *dst = (NDArray *)AS_OBJ(ary);
    check_same(vm, "copy_to_host", dst, a);
    cuda_copy_strided(dst, a);
    return ary;
}

/* d.copy_to_device(ary, stream=0) */
static Value m_copy_to_device(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "copy_to_device", kwargs);
    arg_count(vm, "copy_to_device", argc, 2, 3);
    NDArray *src = cuda_array_of(vm, argv[1]);
    if (!src) src = nd_from_value(vm, argv[1], dev_host(argv[0])->dtype);
    vm_push_root(vm, OBJ_VAL(src));
    check_same(vm, "copy_to_device", dev_host(argv[0]), src);
    cuda_copy_strided(dev_host(argv[0]), src);
    vm_pop_roots(vm, 1);
    return NONE_VAL;
}

static Value m_is_c_contiguous(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "is_c_contiguous", argc, 1, 1);
    kw_none(vm, "is_c_contiguous", kwargs);
    return BOOL_VAL(dev_host(argv[0])->flags & ND_C_CONTIGUOUS);
}

static Value m_is_f_contiguous(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "is_f_contiguous", argc, 1, 1);
    kw_none(vm, "is_f_contiguous", kwargs);
    return BOOL_VAL(dev_host(argv[0])->flags & ND_F_CONTIGUOUS);
}

/* d.reshape(...), d.ravel(): through the host array, kept on the device. */
static Value forward_view(VM *vm, const char *method, int argc, Value *argv) {
    Value r = vm_call_method(vm, as_dev(argv[0])->host, cstr_name(vm, method), argc - 1, argv + 1);
    if (nd_check(vm, r)) return cuda_devarray_wrap(vm, (NDArray *)AS_OBJ(r));
    return r;
}

static Value m_reshape(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "reshape", kwargs);
    return forward_view(vm, "reshape", argc, argv);
}

static Value m_ravel(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "ravel", kwargs);
    return forward_view(vm, "ravel", argc, argv);
}

void cuda_array_init(VM *vm, CudaState *st) {
    Type *t = type_new_builtin(vm, "DeviceNDArray", vm->t_object, 0);
    t->repr = dev_repr;
    t->getattr = dev_getattr;
    t->getitem = dev_getitem;
    t->setitem = dev_setitem;
    t->len = dev_len;
    t->mark = dev_mark;
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "numba.cuda.cudadrv.devicearray")));
    type_add_method(vm, t, "copy_to_host", m_copy_to_host);
    type_add_method(vm, t, "copy_to_device", m_copy_to_device);
    type_add_method(vm, t, "is_c_contiguous", m_is_c_contiguous);
    type_add_method(vm, t, "is_f_contiguous", m_is_f_contiguous);
    type_add_method(vm, t, "reshape", m_reshape);
    type_add_method(vm, t, "ravel", m_ravel);
    st->t_devarray = t;
}
