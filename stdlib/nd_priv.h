/*
** nd_priv.h — private declarations shared by the files of the numpy module
** (stdlib/nd_*.c). The public C API is stdlib/ndarray.h.
*/
#ifndef GPY_ND_PRIV_H
#define GPY_ND_PRIV_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndarray.h"
#include "mt19937.h"
#include "stdlib_priv.h"
#include "complex_num.h"

/* A numpy scalar (np.float32(1.5), np.int64(3), np.True_): one element. */
typedef union NDElem {
    uint8_t b[8];
    bool bo;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    float c64[2];  /* complex64: real, imaginary */
    double c128[2];
} NDElem;

typedef struct NDScalar {
    Obj obj;
    NDType dtype;
    NDElem v;
} NDScalar;

/* An np.dtype instance. */
typedef struct NDDtype {
    Obj obj;
    NDType dt;
} NDDtype;

/* Iterator of a.flat / iter(a). */
typedef struct NDIterObj {
    Obj obj;
    Value arr;  /* the array iterated */
    int64_t pos;
    bool flat;  /* a.flat (elements) vs iter(a) (rows) */
} NDIterObj;

/* a.flags: a view of the array's flags. */
typedef struct NDFlagsObj {
    Obj obj;
    Value arr;
} NDFlagsObj;

/* Per-VM state of the module (vm->nd). The types are GC roots; the dtype
** objects are kept alive through t_array's dict. */
enum { ND_BUF_CACHE = 6, ND_BUF_CACHE_MIN = 1 << 20 };
/* np.random's global generator (MT19937 + numpy's cached gaussian). */
typedef struct NDRandom {
    MT19937 gen;
    bool seeded, has_gauss;
    double gauss;
} NDRandom;
typedef struct NDState {
    Type *t_array, *t_dtype, *t_iter, *t_flags, *t_rstate;
    Type *t_scalar[ND__COUNT];
    Value dtypes[ND__COUNT];
    /* big data buffers of dead arrays kept for reuse (already faulted in) */
    void *cache_ptr[ND_BUF_CACHE];
    size_t cache_size[ND_BUF_CACHE];
    NDRandom rng;
    /* np.seterr modes (divide, over, under, invalid): 0 = default, else
    ** the mode's index + 1; gpy never warns, these are only kept */
    uint8_t err[4];
    Type *t_errstate;
} NDState;

/* vm->nd, created on first use (by import numpy or any C API call). */
NDState *nd_state(VM *vm);

#define ND_AS(v) ((NDArray *)AS_OBJ(v))

/* ---- nd_core.c: elements, layout, iteration ---- */
bool nd_is_scalar(VM *vm, Value v);
double nd_half_to_float(uint16_t h);
uint16_t nd_float_to_half(double d);
/* Load an element as double / int64 / uint64; store from each. */
double nd_load_f(NDType dt, const void *p);
int64_t nd_load_i(NDType dt, const void *p);
uint64_t nd_load_u(NDType dt, const void *p);
void nd_store_f(NDType dt, void *p, double d);
void nd_store_i(NDType dt, void *p, int64_t i);
void nd_store_u(NDType dt, void *p, uint64_t u);
/* Element conversion with numpy's casting (float->int truncates). */
void nd_cast1(NDType dd, void *pd, NDType sd, const void *ps);
/* Python int i is representable in integer dtype dt (always true for others). */
bool nd_int_fits(NDType dt, int64_t i);
/* Stores a Python value (number or numpy scalar) as dtype dt at p. */
void nd_store_value(VM *vm, NDType dt, void *p, Value v);
/* The Python value of an element (int/float/bool) for tolist()/item(). */
Value nd_load_value(VM *vm, NDType dt, const void *p);
/* Complex elements: a store into a real dtype keeps the real part (numpy's cast). */
void nd_store_c(NDType dt, void *p, double re, double im);
/* ---- nd_complex.c: complex64/complex128 ---- */
/* Stores a Python value (number, complex, numpy scalar, str) into a complex dtype. */
void nd_store_complex_value(VM *vm, NDType dt, void *p, Value v);
typedef enum NDComplexOp { NDC_ADD, NDC_SUB, NDC_MUL, NDC_DIV, NDC_POW, NDC_EQ, NDC_NE, NDC_LT, NDC_LE, NDC_GT, NDC_GE } NDComplexOp;
typedef enum NDComplexUn {
    NDC_NEG, NDC_POS, NDC_ABS, NDC_SQRT, NDC_EXP, NDC_LOG, NDC_LOG10, NDC_SIN, NDC_COS, NDC_TAN, NDC_SINH,
    NDC_COSH, NDC_TANH, NDC_ASIN, NDC_ACOS, NDC_ATAN, NDC_CONJ, NDC_REAL, NDC_IMAG, NDC_ANGLE, NDC_ISNAN,
    NDC_ISINF, NDC_ISFINITE, NDC_NOT, NDC_SQUARE, NDC_RECIP
} NDComplexUn;
/* x op y over n elements of complex dtype t (sa/sb 0: a single element
** repeated); comparisons write bools. */
bool nd_complex_binary(NDComplexOp op, NDType t, const char *pa, int sa, const char *pb, int sb, char *po, int64_t n);
/* R = u(A) elementwise (A any layout, R contiguous of the result dtype). */
bool nd_complex_unary(NDComplexUn u, NDArray *A, NDArray *R);
/* float32 for complex64, float64 for complex128 (others unchanged). */
NDType nd_complex_part_type(NDType t);
/* a.real / a.imag: views into a complex array. */
Value nd_complex_part(VM *vm, Value self, bool imag);
void nd_complex_init(VM *vm, NDState *st, Module *m);
/* Sum (what 0), product (1) or mean (2) of each of outer contiguous rows of
** inner elements of complex dtype t, into out (outer elements of t). */
void nd_complex_reduce_rows(int what, NDType t, const char *rows, int64_t outer, int64_t inner, char *out);
/* Advances a C-order index over shape and moves up to two pointers. */
static inline void nd_advance(int ndim, const int64_t *shape, int64_t *idx, char **p1,
                              const int64_t *s1, char **p2, const int64_t *s2) {
    for (int d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) {
            *p1 += s1[d];
            if (p2) *p2 += s2[d];
            return;
        }
        idx[d] = 0;
        *p1 -= s1[d] * (shape[d] - 1);
        if (p2) *p2 -= s2[d] * (shape[d] - 1);
    }
}
/* The element count of a new array of this shape, checked as numpy does:
** ValueError for a negative dimension or when the non-zero dimensions times
** the itemsize overflow int64 ("array is too big; ..."). */
int64_t nd_shape_size(VM *vm, int ndim, const int64_t *shape, NDType dt);
/* a * b and a + b for element counts and dimensions; ValueError "array is
** too big; ..." when they overflow int64. */
int64_t nd_size_mul(VM *vm, int64_t a, int64_t b);
int64_t nd_size_add(VM *vm, int64_t a, int64_t b);
/* a * b wrapping around as numpy's npy_intp arithmetic does: for strides
** times a slice step, where an overflow only happens on a dimension of
** length 0 or 1, whose stride never moves a pointer. */
static inline int64_t nd_wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
/* Like nd_new but not zero-filled (the caller writes every element). */
NDArray *nd_empty(VM *vm, NDType dt, int ndim, const int64_t *shape);
/* A view of base's memory; owner is the array that owns the data. */
NDArray *nd_view(VM *vm, NDArray *src, char *data, int ndim, const int64_t *shape,
                 const int64_t *strides);
/* Gives a a new shape and strides in place (a.shape = ...; same size). */
void nd_set_layout(VM *vm, NDArray *a, int ndim, const int64_t *shape, const int64_t *strides);
/* Strides that broadcast a to (ndim, shape); false when incompatible. */
bool nd_bcast_strides(NDArray *a, int ndim, const int64_t *shape, int64_t *out);
/* The broadcast shape of two arrays, or ValueError numpy's way. */
int nd_bcast_shape(VM *vm, NDArray *a, NDArray *b, int64_t *shape);
/* True when a and out share memory other than element for element. */
bool nd_overlaps(const NDArray *a, const NDArray *out);
/* dst[...] = src with broadcasting and casting. */
void nd_assign(VM *vm, NDArray *dst, NDArray *src);
/* "(3,)" / "(2,3)" into buf. */
void nd_shape_str(char *buf, size_t n, int ndim, const int64_t *shape);
/* numpy 2 result type of an array op; weak Python scalars. */
NDType nd_promote(NDType a, NDType b);
/* The 0-d result of a ufunc becomes a numpy scalar, else the array. */
Value nd_result(VM *vm, NDArray *r);
/* Parses a shape argument (int or tuple/list of ints). Returns ndim.
** Negative entries are left to nd_new (numpy checks them in order with
** the size overflow). */
int nd_parse_shape(VM *vm, Value v, int64_t *shape);
Value nd_shape_tuple(VM *vm, int ndim, const int64_t *shape);
/* array(...) conversion with dtype inference; copy forces a new array. */
NDArray *nd_array_from(VM *vm, Value v, int dt, bool copy);
/* A value that takes part in arithmetic as an array: Python numbers are
** marked weak (*weak = kind: 1 bool, 2 int, 3 float). */
NDArray *nd_operand(VM *vm, Value v, int *weak);
NDArray *nd_astype(VM *vm, NDArray *a, NDType dt);

/* ---- per-file init ---- */
void nd_scalar_init(VM *vm, NDState *st);
void nd_array_type_init(VM *vm, NDState *st);
void nd_create_init(VM *vm, Module *m);
void nd_array_funcs_init(VM *vm, Module *m);
void nd_create_more_init(VM *vm, Module *m);
void nd_ops_init(VM *vm, NDState *st, Module *m);
void nd_ops_methods_init(VM *vm, NDState *st);
void nd_ops_extra_init(VM *vm, NDState *st, Module *m);
void nd_reduce_init(VM *vm, NDState *st, Module *m);
void nd_sort_more_init(VM *vm, Module *m);
void nd_random_init(VM *vm, Module *np);
void nd_extra_init(VM *vm, NDState *st, Module *m);
void nd_buffer_type_init(VM *vm, NDState *st); /* nd_buffer.c: the buffer protocol, tobytes */
void nd_buffer_funcs_init(VM *vm, Module *m);   /* nd_buffer.c: np.frombuffer */
/* sum of all elements, numpy's result type (nd_reduce.c) */
Value nd_sum_all(VM *vm, NDArray *a);
/* a.squeeze(axis=None) (nd_array.c) */
Value nd_squeeze(VM *vm, NDArray *a, Value axisv);
/* ops entry points used by scalars */
Value nd_binop(VM *vm, BinOp op, Value x, Value y);
Value nd_compare(VM *vm, CmpOp op, Value x, Value y);
Value nd_unop(VM *vm, UnOp op, Value x);
Value nd_matmul(VM *vm, Value x, Value y);
/* np.round(v, decimals) (nd_ops.c) */
Value nd_round(VM *vm, Value v, int64_t dec);
Value nd_getitem(VM *vm, Value self, Value key);
void nd_setitem(VM *vm, Value self, Value key, Value value);

#endif
