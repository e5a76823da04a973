/*
** ndarray.h — C API of gpy's numpy-compatible N-d array (stdlib/nd*.c).
**
** This header is the contract between the array module and everything that
** reads arrays from C: the kernel compiler (jit/), the devices (gpu/), the
** cuda module and the embedding API. An array is a strided view of memory:
** element (i0, i1, ...) lives at data + i0*strides[0] + i1*strides[1] + ...
** (strides in bytes, may be negative or zero). The memory belongs to the array
** when nbytes_owned > 0; otherwise `base` keeps its owner alive (a view of
** another array, a device buffer, or NONE for external memory the embedder
** keeps alive).
**
** All array state is per VM (vm->nd); nothing here is global.
*/
#ifndef GPY_NDARRAY_H
#define GPY_NDARRAY_H

#include "vm.h"

/* NDType (the element types), ND_MAXDIM and every dtype spelling. */
#include "../contracts/dtype.h"

/* Flags kept up to date by every function that makes or reshapes an array. */
enum { ND_C_CONTIGUOUS = 1, ND_F_CONTIGUOUS = 2, ND_WRITEABLE = 4 };

typedef struct NDArray {
    Obj obj;
    NDType dtype;
    int32_t ndim;
    int32_t flags;        /* ND_C_CONTIGUOUS | ND_F_CONTIGUOUS | ND_WRITEABLE */
    int64_t size;         /* product of shape (1 for 0-d arrays) */
    int64_t *shape;       /* ndim entries; points into dims[] (or a separate block when a.shape = ... grew ndim) */
    int64_t *strides;     /* ndim entries, bytes; follows shape */
    char *data;           /* address of element (0, 0, ...) */
    size_t nbytes_owned;  /* bytes of the buffer this array owns (freed with it); 0 for views */
    Value base;           /* owner of data for views / wrapped memory; NONE otherwise */
    int64_t dims[];       /* storage: shape[0..ndim) then strides[0..ndim) */
} NDArray;

/* ---- dtypes ---- */
/* Bytes per element. */
static inline size_t nd_itemsize(NDType dt) { return dtype_itemsize(dt); }
/* numpy's name: "bool", "int8", ..., "float64". */
static inline const char *nd_dtype_name(NDType dt) { return dtype_name(dt); }
/* Parses a dtype given as a dtype object, a numpy scalar type (np.float32),
** a Python type (float, int, bool) or a string ("float32", "f4", "int");
** raises TypeError otherwise. */
NDType nd_dtype_from_value(VM *vm, Value v);
/* Like nd_dtype_from_value but never raises: -1 when v is not a dtype. */
int nd_dtype_try(VM *vm, Value v);
/* The np.dtype object for dt (shared per VM). */
Value nd_dtype_object(VM *vm, NDType dt);
/* The numpy scalar type object for dt (np.float32, ...). */
Value nd_scalar_type(VM *vm, NDType dt);
/* True for float16/32/64; for signed ints; for unsigned ints. */
static inline bool nd_is_float(NDType dt) { return dt >= ND_FLOAT16 && dt <= ND_FLOAT64; }
static inline bool nd_is_complex(NDType dt) { return dt == ND_COMPLEX64 || dt == ND_COMPLEX128; }
static inline bool nd_is_signed(NDType dt) { return dt >= ND_INT8 && dt <= ND_INT64; }
static inline bool nd_is_unsigned(NDType dt) { return dt >= ND_UINT8 && dt <= ND_UINT64; }

/* ---- arrays ---- */
/* True when v is an ndarray. */
bool nd_check(VM *vm, Value v);
/* A new C-contiguous array of the given shape, zero-filled. */
NDArray *nd_new(VM *vm, NDType dt, int ndim, const int64_t *shape);
/* A new array over memory that is neither copied nor freed: strides NULL means
** C-contiguous. base (may be NONE) is kept alive as long as the array. */
NDArray *nd_wrap(VM *vm, NDType dt, void *data, int ndim, const int64_t *shape,
                 const int64_t *strides, Value base);
/* A C-contiguous copy of a (any layout). */
NDArray *nd_copy(VM *vm, NDArray *a);
/* Converts any value numpy.asarray accepts (arrays, nested lists/tuples,
** numbers) to an array; returns a itself when it already is one of dtype dt
** (dt < 0: keep / infer the dtype). */
NDArray *nd_from_value(VM *vm, Value v, int dt);
/* Recomputes the contiguity flags from shape and strides. */
void nd_update_flags(NDArray *a);
/* Element i (flat, C order) read as double / written from double; for code
** that is not speed-critical (printing, conversions). */
double nd_get_double(NDArray *a, int64_t flat);
/* Element at p of any dtype as a complex pair (imaginary 0 for real dtypes). */
void nd_load_c(NDType dt, const void *p, double *re, double *im);
/* A numpy scalar (np.float32(1.5), np.int64(3), np.True_) for dtype dt
** holding the element at p. */
Value nd_scalar_from_ptr(VM *vm, NDType dt, const void *p);

/* str()/repr() of an array, numpy 2.x byte for byte (stdlib/nd_print.c). */
Str *nd_format_array(VM *vm, NDArray *a, bool repr);
/* str()/repr() of a numpy scalar of dtype dt whose value is at p (np.float32(1.5) → "1.5" / "np.float32(1.5)"). */
Str *nd_format_scalar(VM *vm, NDType dt, const void *p, bool repr);

/* ---- compatibility names used by code written before N-d arrays ---- */
static inline bool ndarray_check(VM *vm, Value v) { return nd_check(vm, v); }
static inline size_t ndarray_itemsize(NDType dt) { return nd_itemsize(dt); }

#endif
