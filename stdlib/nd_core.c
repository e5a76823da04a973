/*
** nd_core.c — the heart of the numpy module: per-VM state, dtypes and the
** np.dtype type, element loads/stores/casts, array allocation, views,
** broadcasting and copying between layouts. Everything else builds on these.
*/
#include "../vm/bigint.h"
#include "nd_priv.h"
#include "numba_types.h"

#include "../gpu/guarded_mem.h"

#include <sys/mman.h>

/* The embedding API's GpyDtype numbers the element types as NDType does. */
_Static_assert(GPY_BOOL == (int)ND_BOOL && GPY_INT64 == (int)ND_INT64 && GPY_UINT8 == (int)ND_UINT8 &&
                   GPY_FLOAT16 == (int)ND_FLOAT16 && GPY_FLOAT64 == (int)ND_FLOAT64 && GPY_MAX_DIMS == ND_MAXDIM,
               "GpyDtype (include/gpy.h) and NDType (contracts/dtype.h) must agree");

/* ------------------------------------------------------------ elements */

double nd_half_to_float(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0) v = ldexp(m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Round to nearest even, like numpy's npy_double_to_half. */
uint16_t nd_float_to_half(double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    if (isnan(d)) return sign | 0x7e00;
    d = fabs(d);
    if (d >= 65520.0) return sign | 0x7c00;
    if (d < ldexp(1, -25)) {
        if (d == ldexp(1, -25)) return sign; /* tie to even (0) */
        return sign;
    }
    int e;
    frexp(d, &e); /* d = f * 2^e, f in [0.5,1) */
    int ee = e - 1;  /* d in [2^ee, 2^(ee+1)) */
    double q;
    if (ee < -14) { /* subnormal: units of 2^-24 */
        q = nearbyint(ldexp(d, 24));
        return sign | (uint16_t)q;
    }
    q = nearbyint(ldexp(d, 10 - ee)); /* 1024..2048 */
    if (q >= 2048) { q /= 2; ee++; }
    if (ee > 15) return sign | 0x7c00;
    return sign | (uint16_t)((ee + 15) << 10) | (uint16_t)((int)q - 1024);
}

double nd_load_f(NDType dt, const void *p) {
    switch (dt) {
    case ND_BOOL: return *(const uint8_t *)p != 0;
    case ND_INT8: return *(const int8_t *)p;
    case ND_INT16: return *(const int16_t *)p;
    case ND_INT32: return *(const int32_t *)p;
    case ND_INT64: return (double)*(const int64_t *)p;
    case ND_UINT8: return *(const uint8_t *)p;
    case ND_UINT16: return *(const uint16_t *)p;
    case ND_UINT32: return *(const uint32_t *)p;
    case ND_UINT64: return (double)*(const uint64_t *)p;
    case ND_FLOAT16: return nd_half_to_float(*(const uint16_t *)p);
    case ND_FLOAT32: case ND_COMPLEX64: return *(const float *)p; /* complex: the real part, as numpy casts */
    default: return *(const double *)p;
    }
}

void nd_load_c(NDType dt, const void *p, double *re, double *im) {
    if (dt == ND_COMPLEX64) {
        *re = ((const float *)p)[0];
        *im = ((const float *)p)[1];
    } else if (dt == ND_COMPLEX128) {
        *re = ((const double *)p)[0];
        *im = ((const double *)p)[1];
    } else {
        *re = nd_load_f(dt, p);
        *im = 0.0;
    }
}

void nd_store_c(NDType dt, void *p, double re, double im) {
    if (dt == ND_COMPLEX64) {
        ((float *)p)[0] = (float)re;
        ((float *)p)[1] = (float)im;
    } else if (dt == ND_COMPLEX128) {
        ((double *)p)[0] = re;
        ((double *)p)[1] = im;
    } else {
        nd_store_f(dt, p, re); /* numpy's ComplexWarning cast: the imaginary part is dropped */
    }
}

/* Float to integer casts without undefined behaviour, with the values
** numpy's casts give on x86 (cvttsd2si): out of range or NaN is the most
** negative integer; int8/16/32 and uint8/16 convert through int32. */
static int64_t f2i(double d) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)d;
}
static int32_t f2i32(double d) {
    if (!(d > -2147483649.0 && d < 2147483648.0)) return INT32_MIN;
    return (int32_t)d;
}
/* numpy's double -> uint64: [2**63, 2**64) directly, above that 0, below
** 2**63 through int64 (negative values wrap, NaN gives 2**63) */
static uint64_t f2u(double d) {
    if (d >= 9223372036854775808.0) return d < 18446744073709551616.0 ? (uint64_t)d : 0;
    return (uint64_t)f2i(d);
}

int64_t nd_load_i(NDType dt, const void *p) {
    switch (dt) {
    case ND_BOOL: return *(const uint8_t *)p != 0;
    case ND_INT8: return *(const int8_t *)p;
    case ND_INT16: return *(const int16_t *)p;
    case ND_INT32: return *(const int32_t *)p;
    case ND_INT64: return *(const int64_t *)p;
    case ND_UINT8: return *(const uint8_t *)p;
    case ND_UINT16: return *(const uint16_t *)p;
    case ND_UINT32: return *(const uint32_t *)p;
    case ND_UINT64: return (int64_t)*(const uint64_t *)p;
    default: return f2i(nd_load_f(dt, p));
    }
}
uint64_t nd_load_u(NDType dt, const void *p) {
    if (nd_is_float(dt) || nd_is_complex(dt)) return f2u(nd_load_f(dt, p));
    return (uint64_t)nd_load_i(dt, p);
}

void nd_store_i(NDType dt, void *p, int64_t i) {
    switch (dt) {
    case ND_BOOL: *(uint8_t *)p = i != 0; break;
    case ND_INT8: case ND_UINT8: *(uint8_t *)p = (uint8_t)i; break;
    case ND_INT16: case ND_UINT16: *(uint16_t *)p = (uint16_t)i; break;
    case ND_INT32: case ND_UINT32: *(uint32_t *)p = (uint32_t)i; break;
    case ND_INT64: case ND_UINT64: *(int64_t *)p = i; break;
    case ND_FLOAT16: *(uint16_t *)p = nd_float_to_half((double)i); break;
    case ND_FLOAT32: *(float *)p = (float)i; break;
    case ND_COMPLEX64: case ND_COMPLEX128: nd_store_c(dt, p, (double)i, 0.0); break;
    default: *(double *)p = (double)i; break;
    }
}
void nd_store_u(NDType dt, void *p, uint64_t u) {
    if (nd_is_float(dt) || nd_is_complex(dt)) nd_store_f(dt, p, (double)u);
    else nd_store_i(dt, p, (int64_t)u);
}
void nd_store_f(NDType dt, void *p, double d) {
    switch (dt) {
    case ND_BOOL: *(uint8_t *)p = d != 0; break;
    case ND_FLOAT16: *(uint16_t *)p = nd_float_to_half(d); break;
    case ND_FLOAT32: *(float *)p = (float)d; break;
    case ND_FLOAT64: *(double *)p = d; break;
    case ND_COMPLEX64: case ND_COMPLEX128: nd_store_c(dt, p, d, 0.0); break;
    case ND_UINT64: *(uint64_t *)p = f2u(d); break;
    case ND_INT64: case ND_UINT32: nd_store_i(dt, p, f2i(d)); break;
    default: nd_store_i(dt, p, f2i32(d)); break;
    }
}

void nd_cast1(NDType dd, void *pd, NDType sd, const void *ps) {
    if (dd == sd) memcpy(pd, ps, dtype_itemsize(dd));
    else if (nd_is_complex(sd) || nd_is_complex(dd)) {
        double re, im;
        nd_load_c(sd, ps, &re, &im);
        if (nd_is_complex(dd) || nd_is_float(dd)) nd_store_c(dd, pd, re, im);
        else nd_cast1(dd, pd, ND_FLOAT64, &re); /* to an integer: the real part, cast as a double */
    } else if (nd_is_float(sd)) nd_store_f(dd, pd, nd_load_f(sd, ps));
    else if (sd == ND_UINT64) nd_store_u(dd, pd, *(const uint64_t *)ps);
    else nd_store_i(dd, pd, nd_load_i(sd, ps));
}

bool nd_is_scalar(VM *vm, Value v) {
    if (!IS_OBJ(v) || !vm->nd) return false;
    Type *t = AS_OBJ(v)->type;
    for (int i = 0; i < ND__COUNT; i++)
        if (vm->nd->t_scalar[i] == t) return true;
    return false;
}

/* Bounds of the integer dtypes, for numpy 2's "Python integer out of bounds". */
bool nd_int_fits(NDType dt, int64_t i) {
    switch (dt) {
    case ND_INT8: return i >= -128 && i <= 127;
    case ND_INT16: return i >= -32768 && i <= 32767;
    case ND_INT32: return i >= INT32_MIN && i <= INT32_MAX;
    case ND_UINT8: return i >= 0 && i <= 255;
    case ND_UINT16: return i >= 0 && i <= 65535;
    case ND_UINT32: return i >= 0 && i <= (int64_t)UINT32_MAX;
    case ND_UINT64: return i >= 0;
    default: return true;
    }
}

static void store_py_int(VM *vm, NDType dt, void *p, int64_t i) {
    if (!nd_int_fits(dt, i))
        vm_raise_kind(vm, OverflowError, "Python integer %lld out of bounds for %s", (long long)i, dtype_name(dt));
    nd_store_i(dt, p, i);
}

/* A float stored into an integer dtype goes through a Python int, as numpy
** 2 does: NaN and infinity cannot convert, the truncated value must fit a
** C long (or, for uint64, an unsigned one) and then the dtype. */
static void store_float_as_int(VM *vm, NDType dt, void *p, double d) {
    if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
    if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
    double t = trunc(d);
    if (dt == ND_UINT64 && t >= 0 && t < 18446744073709551616.0) {
        *(uint64_t *)p = (uint64_t)t;
        return;
    }
    if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0))
        vm_raise_kind(vm, OverflowError, "Python int too large to convert to C long");
    store_py_int(vm, dt, p, (int64_t)t);
}

/* A Python int past int64 (vm/bigint.h): numpy's errors for integer dtypes. */
static void store_big_int(VM *vm, NDType dt, void *p, Value v) {
    BigInt *b = (BigInt *)AS_OBJ(v);
    if (nd_is_float(dt)) nd_store_f(dt, p, bigint_to_double(vm, v));
    else if (dt == ND_BOOL) nd_store_i(dt, p, 1);
    else if (dt == ND_UINT64 && b->size == 1) *(uint64_t *)p = b->limbs[0];
    else vm_raise_kind(vm, OverflowError, "Python int too large to convert to C long");
}

void nd_store_value(VM *vm, NDType dt, void *p, Value v) {
    bool to_int = !nd_is_float(dt) && dt != ND_BOOL;
    if (nd_is_complex(dt)) {
        nd_store_complex_value(vm, dt, p, v);
        return;
    }
    if (IS_COMPLEX(vm, v))
        vm_raise_kind(vm, TypeError, "%s", nd_is_float(dt) ? "float() argument must be a string or a real number, not 'complex'"
                                          : "int() argument must be a string, a bytes-like object or a real number, not 'complex'");
    if (nd_is_scalar(vm, v) && nd_is_complex(((NDScalar *)AS_OBJ(v))->dtype)) {
        nd_cast1(dt, p, ((NDScalar *)AS_OBJ(v))->dtype, &((NDScalar *)AS_OBJ(v))->v);
        return;
    }
    if (IS_STR(vm, v) && to_int) v = int_from_str(vm, AS_STR(v)->chars, (size_t)AS_STR(v)->len, 10);
    if (bigint_is(vm, v)) store_big_int(vm, dt, p, v);
    else if (IS_BOOL(v)) nd_store_i(dt, p, AS_BOOL(v));
    else if (IS_INT(v)) store_py_int(vm, dt, p, AS_INT(v));
    else if (IS_FLOAT(v)) {
        if (to_int) store_float_as_int(vm, dt, p, AS_FLOAT(v));
        else nd_store_f(dt, p, AS_FLOAT(v));
    } else if (nd_is_scalar(vm, v)) {
        /* numpy converts a numpy scalar for a signed integer dtype through
        ** a Python int (with its errors); the other dtypes take a cast */
        NDScalar *s = (NDScalar *)AS_OBJ(v);
        if (!nd_is_signed(dt) || s->dtype == ND_BOOL) nd_cast1(dt, p, s->dtype, &s->v);
        else if (nd_is_float(s->dtype)) store_float_as_int(vm, dt, p, nd_load_f(s->dtype, &s->v));
        else if (s->dtype == ND_UINT64 && s->v.u64 > (uint64_t)INT64_MAX)
            vm_raise_kind(vm, OverflowError, "Python int too large to convert to C long");
        else store_py_int(vm, dt, p, nd_load_i(s->dtype, &s->v));
    } else if (nd_check(vm, v) && ND_AS(v)->size == 1) {
        NDArray *a = ND_AS(v);
        nd_cast1(dt, p, a->dtype, a->data);
    } else if (IS_STR(vm, v)) {
        /* numpy parses a string with int() for integer dtypes, float() otherwise */
        if (to_int) store_py_int(vm, dt, p, AS_INT(int_from_str(vm, AS_STR(v)->chars, (size_t)AS_STR(v)->len, 10)));
        else nd_store_f(dt, p, AS_FLOAT(float_from_str(vm, AS_STR(v)->chars, (size_t)AS_STR(v)->len)));
    } else {
        vm_raise_kind(vm, TypeError, "%s() argument must be a string or a real number, not '%s'",
                      nd_is_float(dt) ? "float" : "int", vm_type_name(vm, v));
    }
}

Value nd_load_value(VM *vm, NDType dt, const void *p) {
    if (nd_is_complex(dt)) {
        double re, im;
        nd_load_c(dt, p, &re, &im);
        return complex_value(vm, re, im);
    }
    if (dt == ND_BOOL) return BOOL_VAL(*(const uint8_t *)p);
    if (nd_is_float(dt)) return FLOAT_VAL(nd_load_f(dt, p));
    if (dt == ND_UINT64 && *(const uint64_t *)p > (uint64_t)INT64_MAX) return FLOAT_VAL((double)*(const uint64_t *)p);
    return INT_VAL(nd_load_i(dt, p));
}

/* ------------------------------------------------------------ dtypes */

int nd_dtype_try(VM *vm, Value v) {
    if (IS_NONE(v) || IS_EMPTY(v)) return ND_FLOAT64;
    if (!IS_OBJ(v)) return -1;
    NDState *st = nd_state(vm);
    Obj *o = AS_OBJ(v);
    if (o->type == st->t_dtype) return ((NDDtype *)o)->dt;
    for (int i = 0; i < ND__COUNT; i++)
        if (o == (Obj *)st->t_scalar[i]) return i;
    if (o == (Obj *)vm->t_float) return ND_FLOAT64;
    if (o == (Obj *)vm->t_int) return ND_INT64;
    if (o == (Obj *)vm->t_bool) return ND_BOOL;
    if (o == (Obj *)vm->t_complex) return ND_COMPLEX128;
    if (IS_STR(vm, v)) return dtype_from_numpy_str(AS_STR(v)->chars);
    return numba_type_dtype(vm, v); /* numba.float32 (stdlib/numba_types.c) */
}

NDType nd_dtype_from_value(VM *vm, Value v) {
    int dt = nd_dtype_try(vm, v);
    if (dt >= 0) return (NDType)dt;
    if (IS_STR(vm, v)) vm_raise_kind(vm, TypeError, "data type '%s' not understood", AS_STR(v)->chars);
    vm_raise_kind(vm, TypeError, "Cannot interpret '%s' as a data type", vm_type_name(vm, v));
}

Value nd_dtype_object(VM *vm, NDType dt) { return nd_state(vm)->dtypes[dt]; }
Value nd_scalar_type(VM *vm, NDType dt) { return OBJ_VAL(nd_state(vm)->t_scalar[dt]); }

static Value dtype_repr(VM *vm, Value self) {
    return STR_VAL(str_printf(vm, "dtype('%s')", dtype_name(((NDDtype *)AS_OBJ(self))->dt)));
}
static Value dtype_str(VM *vm, Value self) {
    return STR_VAL(str_cstr(vm, dtype_name(((NDDtype *)AS_OBJ(self))->dt)));
}
static int64_t dtype_hash(VM *vm, Value self) {
    (void)vm;
    return 0x5151 + ((NDDtype *)AS_OBJ(self))->dt;
}
/* dtype == np.float32 / 'float32' / float: equal when they name the same dtype. */
static Value dtype_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (op != CMP_EQ && op != CMP_NE) return EMPTY_VAL;
    int da = nd_dtype_try(vm, a), db = nd_dtype_try(vm, b);
    if (IS_NONE(a) || IS_NONE(b)) da = -2;
    bool eq = da >= 0 && da == db;
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}
static Value dtype_getattr(VM *vm, Value self, Str *name) {
    NDType dt = ((NDDtype *)AS_OBJ(self))->dt;
    const char *s = name->chars;
    if (!strcmp(s, "name")) return STR_VAL(str_cstr(vm, dtype_name(dt)));
    if (!strcmp(s, "itemsize")) return INT_VAL(dtype_itemsize(dt));
    if (!strcmp(s, "char")) {
        char c = dtype_char(dt);
        return STR_VAL(str_new(vm, &c, 1));
    }
    if (!strcmp(s, "kind"))
        return STR_VAL(str_cstr(vm, dt == ND_BOOL ? "b" : nd_is_signed(dt) ? "i" : nd_is_unsigned(dt) ? "u" : nd_is_complex(dt) ? "c" : "f"));
    if (!strcmp(s, "type")) return OBJ_VAL(nd_state(vm)->t_scalar[dt]);
    if (!strcmp(s, "str")) {
        char buf[8];
        snprintf(buf, sizeof buf, "%c%c%d", dtype_itemsize(dt) == 1 ? '|' : '<',
                 dt == ND_BOOL ? 'b' : nd_is_signed(dt) ? 'i' : nd_is_unsigned(dt) ? 'u' : nd_is_complex(dt) ? 'c' : 'f', (int)dtype_itemsize(dt));
        return STR_VAL(str_cstr(vm, buf));
    }
    return generic_getattr(vm, self, name);
}
/* np.dtype(x) */
static Value dtype_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    kw_done(vm, "dtype", kwargs);
    arg_between(vm, "dtype", argc, 1, 1);
    return nd_dtype_object(vm, nd_dtype_from_value(vm, argv[0]));
}

/* ------------------------------------------------------------ arrays */

bool nd_check(VM *vm, Value v) {
    return IS_OBJ(v) && vm->nd && AS_OBJ(v)->type == vm->nd->t_array;
}

void nd_update_flags(NDArray *a) {
    int32_t f = a->flags & ND_WRITEABLE;
    int64_t st = (int64_t)dtype_itemsize(a->dtype);
    bool c = true, fo = true;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] != 1 && a->strides[i] != st) c = false;
        st *= a->shape[i];
    }
    st = (int64_t)dtype_itemsize(a->dtype);
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] != 1 && a->strides[i] != st) fo = false;
        st *= a->shape[i];
    }
    if (a->size == 0) c = fo = true;
    a->flags = f | (c ? ND_C_CONTIGUOUS : 0) | (fo ? ND_F_CONTIGUOUS : 0);
}

static _Noreturn void size_too_big(VM *vm) {
    vm_raise_kind(vm, ValueError, "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
}

/* numpy's check when it makes any array, view or not (PyArray_NewFromDescr):
** no negative dimension, and the product of the non-zero dimensions times
** the itemsize fits in int64. Zero dimensions are skipped so that every
** C-contiguous stride and byte offset of an empty array fits too. */
int64_t nd_shape_size(VM *vm, int ndim, const int64_t *shape, NDType dt) {
    int64_t bytes = (int64_t)dtype_itemsize(dt);
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) { empty = true; continue; }
        if (shape[i] < 0) vm_raise_kind(vm, ValueError, "negative dimensions are not allowed");
        if (__builtin_mul_overflow(bytes, shape[i], &bytes)) size_too_big(vm);
    }
    return empty ? 0 : bytes / (int64_t)dtype_itemsize(dt);
}

int64_t nd_size_mul(VM *vm, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) size_too_big(vm);
    return r;
}
int64_t nd_size_add(VM *vm, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) size_too_big(vm);
    return r;
}

NDArray *nd_wrap(VM *vm, NDType dt, void *data, int ndim, const int64_t *shape,
                 const int64_t *strides, Value base) {
    if (ndim < 0 || ndim > ND_MAXDIM)
        vm_raise_kind(vm, ValueError, "maximum supported dimension for an ndarray is currently %d, found %d",
                      ND_MAXDIM, ndim);
    int64_t size = nd_shape_size(vm, ndim, shape, dt);
    NDState *st = nd_state(vm);
    vm_push_root(vm, base);
    NDArray *a = gc_alloc_obj(vm, st->t_array, sizeof(NDArray) + 2 * (size_t)ndim * sizeof(int64_t));
    vm_pop_roots(vm, 1);
    a->shape = a->dims;
    a->strides = a->dims + ndim;
    a->dtype = dt;
    a->ndim = ndim;
    a->size = size;
    a->nbytes_owned = 0;
    int64_t s = (int64_t)dtype_itemsize(dt);
    for (int i = ndim - 1; i >= 0; i--) {
        a->shape[i] = shape[i];
        a->strides[i] = strides ? strides[i] : s;
        s *= shape[i] ? shape[i] : 1; /* fits: checked by nd_shape_size */
    }
    if (a->size == 0 && !strides) /* numpy 2: empty arrays have zero strides */
        for (int i = 0; i < ndim; i++) a->strides[i] = 0;
    a->data = data;
    a->base = base;
    a->flags = ND_WRITEABLE;
    nd_update_flags(a);
    return a;
}

/* Whether a buffer this big can be had at all (probed only for huge ones,
** so that an impossible request gets numpy's message). */
static bool can_allocate(size_t bytes) {
    if (bytes > ((size_t)1 << 47)) return false; /* beyond a user address space */
    void *p = malloc(bytes);
    free(p);
    return p != NULL;
}

/* numpy's MemoryError: "Unable to allocate 7.28 TiB for an array with
** shape (1000000000000,) and data type float64" (its _size_to_string). */
static _Noreturn void too_big(VM *vm, size_t bytes, int ndim, const int64_t *shape, NDType dt) {
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int bitlen = 0;
    for (size_t b = bytes; b; b >>= 1) bitlen++;
    int ui = (bitlen - 1 > 1 ? bitlen - 1 : 1) / 10;
    double nu = (double)bytes / (double)((uint64_t)1 << (10 * ui));
    if (nearbyint(nu) == 1024.0 && ui < 6) { ui++; nu /= 1024.0; }
    char size[64], shp[ND_MAXDIM * 24 + 4];
    if (nearbyint(nu) < 1000) snprintf(size, sizeof size, "%#.3g %s", nu, units[ui]);
    else snprintf(size, sizeof size, "%#.0f %s", nu, units[ui]);
    size_t w = 0;
    shp[w++] = '(';
    for (int i = 0; i < ndim; i++)
        w += (size_t)snprintf(shp + w, sizeof shp - w, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (ndim == 1) shp[w++] = ',';
    shp[w++] = ')';
    shp[w] = 0;
    vm_raise_kind(vm, MemoryError, "Unable to allocate %s for an array with shape %s and data type %s", size, shp,
                  nd_dtype_name(dt));
}

/* Big buffers are fenced by guard pages (gpu/guarded_mem.h): a CPU-device
** kernel indexing past a host array then faults instead of writing into
** the heap. */
static void *buf_alloc(VM *vm, size_t bytes, size_t align) {
    /* fenced once this VM has the cuda module (its CPU device may run kernels) */
    void *p = vm->cuda ? guarded_host_alloc(bytes, align) : NULL;
    if (!p) return gc_malloc(vm, bytes);
    gc_account_external(vm, (ptrdiff_t)bytes);
    return p;
}

static void buf_free(VM *vm, void *p, size_t bytes) {
    if (bytes > GUARDED_HOST_MIN && guarded_host_free(p)) gc_account_external(vm, -(ptrdiff_t)bytes);
    else gc_free(vm, p, bytes);
}

/* A new C-contiguous array; zero-filled when zero is set. Big buffers ask
** for transparent huge pages (as numpy does): page faults otherwise
** dominate elementwise operations on fresh 10M-element results. */
static NDArray *alloc_array(VM *vm, NDType dt, int ndim, const int64_t *shape, bool zero) {
    int64_t n = nd_shape_size(vm, ndim, shape, dt);
    size_t bytes = (size_t)n * dtype_itemsize(dt);
    if (bytes == 0) bytes = 1;
    NDArray *a = nd_wrap(vm, dt, NULL, ndim, shape, NULL, NONE_VAL);
    char *data = NULL;
    if (bytes >= ND_BUF_CACHE_MIN) {
        NDState *st = vm->nd;
        for (int i = 0; i < ND_BUF_CACHE; i++)
            if (st->cache_ptr[i] && st->cache_size[i] == bytes) {
                data = st->cache_ptr[i];
                st->cache_ptr[i] = NULL;
                vm->bytes_allocated += bytes; /* counted again while in use */
                break;
            }
        if (data) {
            if (zero) memset(data, 0, bytes);
            a->data = data;
            a->nbytes_owned = bytes;
            return a;
        }
    }
    if (bytes >= ((size_t)1 << 30) && !can_allocate(bytes)) too_big(vm, bytes, ndim, shape, dt);
    vm_push_root(vm, OBJ_VAL(a));
    data = buf_alloc(vm, bytes, dtype_itemsize(dt));
    vm_pop_roots(vm, 1);
#ifdef MADV_HUGEPAGE
    if (bytes >= ((size_t)4 << 20)) {
        uintptr_t lo = ((uintptr_t)data + 4095) & ~(uintptr_t)4095;
        uintptr_t hi = ((uintptr_t)data + bytes) & ~(uintptr_t)4095;
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    if (zero) memset(data, 0, bytes);
    a->data = data;
    a->nbytes_owned = bytes;
    return a;
}

NDArray *nd_new(VM *vm, NDType dt, int ndim, const int64_t *shape) { return alloc_array(vm, dt, ndim, shape, true); }
NDArray *nd_empty(VM *vm, NDType dt, int ndim, const int64_t *shape) { return alloc_array(vm, dt, ndim, shape, false); }

NDArray *nd_view(VM *vm, NDArray *src, char *data, int ndim, const int64_t *shape,
                 const int64_t *strides) {
    Value owner = IS_NONE(src->base) || src->nbytes_owned ? OBJ_VAL(src) : src->base;
    NDArray *v = nd_wrap(vm, src->dtype, data, ndim, shape, strides, owner);
    v->flags = (v->flags & ~ND_WRITEABLE) | (src->flags & ND_WRITEABLE);
    return v;
}

/* Bytes of the block that holds shape and strides once a.shape = ... has
** given an array more dimensions than its dims[] has room for. */
#define ND_DIMS_BLOCK (2 * ND_MAXDIM * sizeof(int64_t))

void nd_set_layout(VM *vm, NDArray *a, int ndim, const int64_t *shape, const int64_t *strides) {
    int64_t tmp[2 * ND_MAXDIM];
    memcpy(tmp, shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(tmp + ndim, strides, sizeof(int64_t) * (size_t)ndim);
    size_t room = (a->obj.gc_size - sizeof(NDArray)) / (2 * sizeof(int64_t));
    if (a->shape == a->dims && (size_t)ndim > room) {
        vm_push_root(vm, OBJ_VAL(a));
        a->shape = gc_malloc(vm, ND_DIMS_BLOCK);
        vm_pop_roots(vm, 1);
    }
    a->ndim = ndim;
    a->strides = a->shape + ndim;
    memcpy(a->shape, tmp, sizeof(int64_t) * 2 * (size_t)ndim);
    nd_update_flags(a);
}

static void arr_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((NDArray *)o)->base); }
static void arr_finalize(VM *vm, Obj *o) {
    NDArray *a = (NDArray *)o;
    if (a->shape != a->dims) {
        gc_free(vm, a->shape, ND_DIMS_BLOCK);
        a->shape = a->strides = a->dims;
    }
    if (a->nbytes_owned >= ND_BUF_CACHE_MIN && vm->nd) {
        NDState *st = vm->nd;
        for (int i = 0; i < ND_BUF_CACHE; i++)
            if (!st->cache_ptr[i]) {
                st->cache_ptr[i] = a->data;
                st->cache_size[i] = a->nbytes_owned;
                /* like the VM's block free lists: cached memory is not live */
                vm->bytes_allocated -= a->nbytes_owned <= vm->bytes_allocated ? a->nbytes_owned : vm->bytes_allocated;
                a->nbytes_owned = 0;
                return;
            }
    }
    if (a->nbytes_owned) buf_free(vm, a->data, a->nbytes_owned);
    a->nbytes_owned = 0;
}

bool nd_bcast_strides(NDArray *a, int ndim, const int64_t *shape, int64_t *out) {
    int off = ndim - a->ndim;
    if (off < 0) return false;
    for (int i = 0; i < ndim; i++) {
        if (i < off) { out[i] = 0; continue; }
        int64_t n = a->shape[i - off];
        if (n == shape[i]) out[i] = n == 1 ? 0 : a->strides[i - off];
        else if (n == 1) out[i] = 0;
        else return false;
    }
    return true;
}

void nd_shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
    size_t o = 0;
    o += (size_t)snprintf(buf + o, n - o, "(");
    for (int i = 0; i < ndim && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (ndim == 1 && o < n) o += (size_t)snprintf(buf + o, n - o, ",");
    if (o < n) snprintf(buf + o, n - o, ")");
}

int nd_bcast_shape(VM *vm, NDArray *a, NDArray *b, int64_t *shape) {
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t count = 1; /* numpy's nditer multiplies the shape in order */
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t x = ia >= 0 ? a->shape[ia] : 1, y = ib >= 0 ? b->shape[ib] : 1;
        if (x == y || y == 1) shape[i] = x;
        else if (x == 1) shape[i] = y;
        else {
            char sa[400], sb[400];
            nd_shape_str(sa, sizeof sa, a->ndim, a->shape);
            nd_shape_str(sb, sizeof sb, b->ndim, b->shape);
            vm_raise_kind(vm, ValueError, "operands could not be broadcast together with shapes %s %s ", sa, sb);
        }
        if (__builtin_mul_overflow(count, shape[i], &count)) vm_raise_kind(vm, ValueError, "iterator is too large");
    }
    return nd;
}

/* The byte range an array touches. */
static void extent(const NDArray *a, char **lo, char **hi) {
    char *l = a->data, *h = a->data;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] == 0) { *lo = *hi = a->data; return; }
        int64_t span = (a->shape[d] - 1) * a->strides[d];
        if (span < 0) l += span;
        else h += span;
    }
    *lo = l;
    *hi = h + nd_itemsize(a->dtype);
}

/* a and out share memory other than element for element (same layout). */
bool nd_overlaps(const NDArray *a, const NDArray *out) {
    if (a == out) return false;
    char *l1, *h1, *l2, *h2;
    extent(a, &l1, &h1);
    extent(out, &l2, &h2);
    if (h1 <= l2 || h2 <= l1) return false;
    if (a->data == out->data && a->ndim == out->ndim && a->dtype == out->dtype) {
        bool same = true;
        for (int d = 0; d < a->ndim && same; d++)
            same = a->shape[d] == out->shape[d] && a->strides[d] == out->strides[d];
        if (same) return false;
    }
    return true;
}

void nd_assign(VM *vm, NDArray *dst, NDArray *src) {
    int64_t sst[ND_MAXDIM];
    /* numpy drops the value's leading length-1 axes beyond dst's (a[0] =
    ** np.array([[1, 2]]) on a 2-D a); a header copy sees src without them */
    NDArray stripped, *orig = src; /* orig: the GC object, for the copy below */
    if (src->ndim > dst->ndim && src->shape[0] == 1) {
        int k = 0;
        while (src->ndim - k > dst->ndim && src->shape[k] == 1) k++;
        stripped = *src;
        stripped.ndim -= k;
        stripped.shape += k;
        stripped.strides += k;
        src = &stripped;
    }
    if (!nd_bcast_strides(src, dst->ndim, dst->shape, sst)) {
        char sa[400], sb[400];
        nd_shape_str(sa, sizeof sa, src->ndim, src->shape);
        nd_shape_str(sb, sizeof sb, dst->ndim, dst->shape);
        vm_raise_kind(vm, ValueError, "could not broadcast input array from shape %s into shape %s", sa, sb);
    }
    if (dst->size == 0) return;
    if ((dst->flags & ND_C_CONTIGUOUS) && (src->flags & ND_C_CONTIGUOUS) && src->size == dst->size &&
        src->dtype == dst->dtype) {
        memmove(dst->data, src->data, (size_t)dst->size * dtype_itemsize(dst->dtype));
        return;
    }
    /* overlapping memory (a[1:] = a[:-1], a[::-1] = a): go through a copy */
    if (nd_overlaps(src, dst)) {
        NDArray *c = nd_copy(vm, orig);
        vm_push_root(vm, OBJ_VAL(c));
        nd_assign(vm, dst, c);
        vm_pop_roots(vm, 1);
        return;
    }
    int64_t idx[ND_MAXDIM] = {0};
    char *pd = dst->data, *ps = src->data;
    NDType dd = dst->dtype, sd = src->dtype;
    for (int64_t k = 0; k < dst->size; k++) {
        nd_cast1(dd, pd, sd, ps);
        nd_advance(dst->ndim, dst->shape, idx, &pd, dst->strides, &ps, sst);
    }
}

NDArray *nd_copy(VM *vm, NDArray *a) {
    vm_push_root(vm, OBJ_VAL(a));
    NDArray *c = nd_empty(vm, a->dtype, a->ndim, a->shape);
    vm_pop_roots(vm, 1);
    vm_push_root(vm, OBJ_VAL(c));
    nd_assign(vm, c, a);
    vm_pop_roots(vm, 1);
    return c;
}

NDArray *nd_astype(VM *vm, NDArray *a, NDType dt) {
    vm_push_root(vm, OBJ_VAL(a));
    NDArray *c = nd_empty(vm, dt, a->ndim, a->shape);
    vm_pop_roots(vm, 1);
    vm_push_root(vm, OBJ_VAL(c));
    nd_assign(vm, c, a);
    vm_pop_roots(vm, 1);
    return c;
}

double nd_get_double(NDArray *a, int64_t flat) {
    char *p = a->data;
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t n = a->shape[d];
        p += (flat % n) * a->strides[d];
        flat /= n;
    }
    return nd_load_f(a->dtype, p);
}

/* numpy 2 promotion for two strong dtypes. */
NDType nd_promote(NDType a, NDType b) {
    if (a == b) return a;
    if (a == ND_BOOL) return b;
    if (b == ND_BOOL) return a;
    if (nd_is_complex(a) || nd_is_complex(b)) { /* complex64 only when the other fits a float32 */
        NDType o = nd_is_complex(a) ? b : a;
        if (nd_is_complex(o)) return ND_COMPLEX128;
        return (o == ND_FLOAT16 || o == ND_FLOAT32 || dtype_itemsize(o) <= 2) &&
                       (a == ND_COMPLEX64 || b == ND_COMPLEX64) ? ND_COMPLEX64 : ND_COMPLEX128;
    }
    if (nd_is_float(a) && nd_is_float(b)) return a > b ? a : b;
    if (nd_is_float(a) || nd_is_float(b)) {
        NDType f = nd_is_float(a) ? a : b, i = nd_is_float(a) ? b : a;
        size_t is = dtype_itemsize(i);
        NDType need = is == 1 ? ND_FLOAT16 : is == 2 ? ND_FLOAT32 : ND_FLOAT64;
        return f > need ? f : need;
    }
    if (nd_is_signed(a) == nd_is_signed(b)) return a > b ? a : b;
    NDType s = nd_is_signed(a) ? a : b, u = nd_is_signed(a) ? b : a;
    if (dtype_itemsize(s) > dtype_itemsize(u)) return s;
    switch (u) {
    case ND_UINT8: return ND_INT16;
    case ND_UINT16: return ND_INT32;
    case ND_UINT32: return ND_INT64;
    default: return ND_FLOAT64;
    }
}

int nd_parse_shape(VM *vm, Value v, int64_t *shape) {
    if (IS_LIST(vm, v) || IS_TUPLE(vm, v)) {
        int64_t n = IS_LIST(vm, v) ? AS_LIST(v)->len : AS_TUPLE(v)->len;
        Value *items = IS_LIST(vm, v) ? AS_LIST(v)->items : AS_TUPLE(v)->items;
        if (n > ND_MAXDIM)
            vm_raise_kind(vm, ValueError, "maximum supported dimension for an ndarray is currently %d, found %lld",
                          ND_MAXDIM, (long long)n);
        for (int64_t i = 0; i < n; i++) {
            Value x = items[i];
            if (nd_is_scalar(vm, x) && !nd_is_float(((NDScalar *)AS_OBJ(x))->dtype))
                shape[i] = nd_load_i(((NDScalar *)AS_OBJ(x))->dtype, &((NDScalar *)AS_OBJ(x))->v);
            else if (IS_INTLIKE(x)) shape[i] = AS_INTLIKE(x);
            else vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, x));
        }
        return (int)n;
    }
    if (nd_is_scalar(vm, v) && !nd_is_float(((NDScalar *)AS_OBJ(v))->dtype))
        shape[0] = nd_load_i(((NDScalar *)AS_OBJ(v))->dtype, &((NDScalar *)AS_OBJ(v))->v);
    else if (IS_INTLIKE(v)) shape[0] = AS_INTLIKE(v);
    else vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, v));
    return 1;
}

Value nd_shape_tuple(VM *vm, int ndim, const int64_t *shape) {
    Tuple *t = tuple_new(vm, ndim);
    for (int i = 0; i < ndim; i++) t->items[i] = INT_VAL(shape[i]);
    return OBJ_VAL(t);
}

Value nd_result(VM *vm, NDArray *r) {
    if (r->ndim == 0) return nd_scalar_from_ptr(vm, r->dtype, r->data);
    return OBJ_VAL(r);
}

/* ------------------------------------------------------------ state */

static void nd_free_hook(VM *vm) {
    for (int i = 0; i < ND_BUF_CACHE; i++)
        if (vm->nd->cache_ptr[i]) {
            vm->bytes_allocated += vm->nd->cache_size[i];
            buf_free(vm, vm->nd->cache_ptr[i], vm->nd->cache_size[i]);
        }
    free(vm->nd);
    vm->nd = NULL;
}

NDState *nd_state(VM *vm) {
    if (vm->nd) return vm->nd;
    NDState *st = calloc(1, sizeof *st);
    if (!st) vm_raise_kind(vm, MemoryError, "out of memory");
    vm->nd = st;
    vm_on_free(vm, nd_free_hook);
    Type *t = type_new_builtin(vm, "ndarray", vm->t_object, 0);
    t->mark = arr_mark;
    t->finalize = arr_finalize;
    st->t_array = t;
    t = type_new_builtin(vm, "dtype", vm->t_object, 0);
    t->repr = dtype_repr;
    t->str = dtype_str;
    t->hash = dtype_hash;
    t->compare = dtype_compare;
    t->getattr = dtype_getattr;
    t->new_ = dtype_new;
    st->t_dtype = t;
    Tuple *keep = tuple_new(vm, ND__COUNT);
    dict_set_cstr(vm, st->t_array->dict, "__dtypes__", OBJ_VAL(keep));
    for (int i = 0; i < ND__COUNT; i++) {
        NDDtype *d = gc_alloc_obj(vm, st->t_dtype, sizeof(NDDtype));
        d->dt = (NDType)i;
        st->dtypes[i] = OBJ_VAL(d);
        keep->items[i] = OBJ_VAL(d);
    }
    nd_scalar_init(vm, st);
    nd_array_type_init(vm, st);
    nd_buffer_type_init(vm, st);
    return st;
}

Module *stdlib_numpy(VM *vm) {
    NDState *st = nd_state(vm);
    Module *m = module_new(vm, str_cstr(vm, "numpy"));
    vm_push_root(vm, OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, "ndarray", OBJ_VAL(st->t_array));
    dict_set_cstr(vm, m->dict, "dtype", OBJ_VAL(st->t_dtype));
    /* np.float32, np.intc, np.double ...: numpy's scalar-type attributes */
    size_t nalias;
    const DTypeAlias *alias = dtype_aliases(&nalias);
    for (size_t i = 0; i < nalias; i++)
        if (alias[i].np_attr) dict_set_cstr(vm, m->dict, alias[i].name, OBJ_VAL(st->t_scalar[alias[i].numpy]));
    dict_set_cstr(vm, m->dict, "pi", FLOAT_VAL(3.141592653589793));
    dict_set_cstr(vm, m->dict, "e", FLOAT_VAL(2.718281828459045));
    dict_set_cstr(vm, m->dict, "inf", FLOAT_VAL(INFINITY));
    dict_set_cstr(vm, m->dict, "nan", FLOAT_VAL(NAN));
    dict_set_cstr(vm, m->dict, "newaxis", NONE_VAL);
    dict_set_cstr(vm, m->dict, "__version__", STR_VAL(str_cstr(vm, "2.4.0")));
    bool one = true;
    uint8_t zero = 0;
    dict_set_cstr(vm, m->dict, "True_", nd_scalar_from_ptr(vm, ND_BOOL, &one));
    dict_set_cstr(vm, m->dict, "False_", nd_scalar_from_ptr(vm, ND_BOOL, &zero));
    nd_create_init(vm, m);
    nd_array_funcs_init(vm, m);
    nd_create_more_init(vm, m);
    nd_ops_init(vm, st, m);
    nd_reduce_init(vm, st, m);
    nd_complex_init(vm, st, m);
    nd_random_init(vm, m);
    nd_extra_init(vm, st, m);
    nd_buffer_funcs_init(vm, m);
    vm_pop_roots(vm, 1);
    return m;
}
