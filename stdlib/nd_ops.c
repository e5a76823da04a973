/*
** nd_ops.c — elementwise arithmetic: the operators of arrays and numpy
** scalars (+ - * / // % ** & | ^ << >> @ comparisons, unary - + ~ abs),
** in-place operators, and the elementwise ufuncs (np.sqrt, np.maximum,
** np.where, np.clip, ...). Broadcasting and numpy 2 promotion (Python
** scalars are weak) pick the result; the loops run over contiguous typed
** buffers, one C loop per (operation, dtype), with no per-element dispatch.
*/
#include "nd_priv.h"

/* the integer loops are generic over signed and unsigned types */
#pragma GCC diagnostic ignored "-Wtype-limits"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wtautological-unsigned-zero-compare"
#pragma clang diagnostic ignored "-Wtautological-compare"
#endif

typedef enum UFn {
    U_ADD, U_SUB, U_MUL, U_TDIV, U_FDIV, U_MOD, U_POW, U_AND, U_OR, U_XOR, U_LSH, U_RSH,
    U_MIN, U_MAX, U_ATAN2, U_HYPOT, U_FMIN, U_FMAX,
    U_EQ, U_NE, U_LT, U_LE, U_GT, U_GE, U_LAND, U_LOR, U_LXOR,
    U__COUNT
} UFn;

static const char *const ufn_names[U__COUNT] = {
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift", "minimum", "maximum", "arctan2", "hypot", "fmin", "fmax",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
};

static bool is_cmp(UFn f) { return f >= U_EQ; }

NDArray *nd_operand(VM *vm, Value v, int *weak) {
    *weak = 0;
    if (nd_check(vm, v)) return ND_AS(v);
    if (IS_BOOL(v)) { *weak = 1; return NULL; }
    if (IS_INT(v)) { *weak = 2; return NULL; }
    if (IS_FLOAT(v)) { *weak = 3; return NULL; }
    if (IS_COMPLEX(vm, v)) { *weak = 4; return NULL; }
    if (nd_is_scalar(vm, v) || IS_LIST(vm, v) || IS_TUPLE(vm, v)) return nd_array_from(vm, v, -1, false);
    return NULL;
}

static NDType weak_type(NDType strong, int weak) {
    if (weak == 2) return strong == ND_BOOL ? ND_INT64 : strong;
    if (weak == 3) return nd_is_float(strong) || nd_is_complex(strong) ? strong : ND_FLOAT64;
    if (weak == 4) /* a Python complex keeps complex64 and the small floats' precision */
        return nd_is_complex(strong) ? strong : strong == ND_FLOAT16 || strong == ND_FLOAT32 ? ND_COMPLEX64 : ND_COMPLEX128;
    return strong;
}

/* The float type numpy's float ufuncs give for an input dtype. */
static NDType float_for(NDType t) {
    if (nd_is_float(t)) return t;
    size_t s = nd_itemsize(t);
    return s == 1 ? ND_FLOAT16 : s == 2 ? ND_FLOAT32 : ND_FLOAT64;
}

/* ------------------------------------------------------------ loops */

#define FOR_AB(T, EXPR)                                                                   \
    do {                                                                                  \
        const T *A_ = (const T *)pa, *B_ = (const T *)pb;                                 \
        if (sa && sb) for (int64_t i = 0; i < n; i++) { T x = A_[i], y = B_[i]; O_[i] = (EXPR); } \
        else if (sa) { T y = B_[0]; for (int64_t i = 0; i < n; i++) { T x = A_[i]; O_[i] = (EXPR); } } \
        else if (sb) { T x = A_[0]; for (int64_t i = 0; i < n; i++) { T y = B_[i]; O_[i] = (EXPR); } } \
        else { T x = A_[0], y = B_[0]; for (int64_t i = 0; i < n; i++) O_[i] = (EXPR); } \
    } while (0)

static double f_floordiv(double x, double y) {
    if (y == 0) return x / y;
    double mod = fmod(x, y), div = (x - mod) / y;
    if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, x / y);
    double fl = floor(div);
    if (div - fl > 0.5) fl += 1.0;
    return fl;
}
static double f_mod(double x, double y) {
    if (y == 0) return fmod(x, y);
    double mod = fmod(x, y);
    if (mod != 0) { if ((y < 0) != (mod < 0)) mod += y; }
    else mod = copysign(0.0, y);
    return mod;
}
static double f_max(double x, double y) { return (x >= y || isnan(x)) ? x : y; }
static double f_min(double x, double y) { return (x <= y || isnan(x)) ? x : y; }
static double f_fmax(double x, double y) { return isnan(y) || x >= y ? x : y; }
static double f_fmin(double x, double y) { return isnan(y) || x <= y ? x : y; }

/* Comparisons and logical ops of two T operands into a bool array (shared by
** the float and integer loops below). */
#define CMP_LOOPS(T)                                                                              \
    if (is_cmp(f)) {                                                                              \
        uint8_t *O_ = (uint8_t *)po;                                                              \
        switch (f) {                                                                              \
        case U_EQ: FOR_AB(T, x == y); break;                                                      \
        case U_NE: FOR_AB(T, x != y); break;                                                      \
        case U_LT: FOR_AB(T, x < y); break;                                                       \
        case U_LE: FOR_AB(T, x <= y); break;                                                      \
        case U_GT: FOR_AB(T, x > y); break;                                                       \
        case U_GE: FOR_AB(T, x >= y); break;                                                      \
        case U_LAND: FOR_AB(T, x != 0 && y != 0); break;                                          \
        case U_LOR: FOR_AB(T, x != 0 || y != 0); break;                                           \
        default: FOR_AB(T, (x != 0) != (y != 0)); break;                                          \
        }                                                                                         \
        return true;                                                                              \
    }

/* Float loops: arithmetic in T (float or double). */
#define FLOAT_LOOPS(T, SUF)                                                                      \
    static bool floop_##SUF(UFn f, const char *pa, int sa, const char *pb, int sb, char *po, int64_t n) { \
        CMP_LOOPS(T)                                                                              \
        T *O_ = (T *)po;                                                                          \
        switch (f) {                                                                              \
        case U_ADD: FOR_AB(T, x + y); break;                                                      \
        case U_SUB: FOR_AB(T, x - y); break;                                                      \
        case U_MUL: FOR_AB(T, x * y); break;                                                      \
        case U_TDIV: FOR_AB(T, x / y); break;                                                     \
        case U_FDIV: FOR_AB(T, (T)f_floordiv(x, y)); break;                                       \
        case U_MOD: FOR_AB(T, (T)f_mod(x, y)); break;                                             \
        case U_POW: FOR_AB(T, (T)pow(x, y)); break;                                               \
        case U_MIN: FOR_AB(T, (T)f_min(x, y)); break;                                             \
        case U_MAX: FOR_AB(T, (T)f_max(x, y)); break;                                             \
        case U_FMIN: FOR_AB(T, (T)f_fmin(x, y)); break;                                           \
        case U_FMAX: FOR_AB(T, (T)f_fmax(x, y)); break;                                           \
        case U_ATAN2: FOR_AB(T, (T)atan2(x, y)); break;                                           \
        case U_HYPOT: FOR_AB(T, (T)hypot(x, y)); break;                                           \
        default: return false;                                                                    \
        }                                                                                         \
        return true;                                                                              \
    }
FLOAT_LOOPS(float, f32)
FLOAT_LOOPS(double, f64)

/* Integer loops: wrapping arithmetic through the unsigned type U. Returns
** false for an unsupported op; *negpow set when x ** negative. */
#define INT_LOOPS(T, U, SUF, SIGNED)                                                              \
    static bool iloop_##SUF(UFn f, const char *pa, int sa, const char *pb, int sb, char *po, int64_t n, \
                            bool *negpow) {                                                       \
        CMP_LOOPS(T)                                                                              \
        T *O_ = (T *)po;                                                                          \
        switch (f) {                                                                              \
        case U_ADD: FOR_AB(T, (T)((U)x + (U)y)); break;                                           \
        case U_SUB: FOR_AB(T, (T)((U)x - (U)y)); break;                                           \
        case U_MUL: FOR_AB(T, (T)((uint64_t)(U)x * (U)y)); break;                                 \
        case U_FDIV:                                                                              \
            FOR_AB(T, y == 0 ? 0 : (SIGNED && y == (T)-1) ? (T)(0 - (U)x)                         \
                                : (T)(x / y - ((x % y != 0) && ((x < 0) != (y < 0)))));           \
            break;                                                                                \
        case U_MOD:                                                                               \
            FOR_AB(T, y == 0 || (SIGNED && y == (T)-1) ? 0                                        \
                      : (T)((x % y != 0 && ((x % y < 0) != (y < 0))) ? x % y + y : x % y));       \
            break;                                                                                \
        case U_POW: {                                                                             \
            bool neg_ = false;                                                                    \
            FOR_AB(T, ipow_##SUF(x, y, &neg_));                                                   \
            if (neg_) *negpow = true;                                                             \
            break;                                                                                \
        }                                                                                         \
        case U_AND: FOR_AB(T, x & y); break;                                                      \
        case U_OR: FOR_AB(T, x | y); break;                                                       \
        case U_XOR: FOR_AB(T, x ^ y); break;                                                      \
        case U_LSH: FOR_AB(T, (y < 0 || y >= (T)(8 * sizeof(T))) ? 0 : (T)((U)x << y)); break;    \
        case U_RSH: FOR_AB(T, (y < 0 || y >= (T)(8 * sizeof(T))) ? (SIGNED && x < 0 ? (T)-1 : 0) : (T)(x >> y)); break; \
        case U_MIN: case U_FMIN: FOR_AB(T, x < y ? x : y); break;                                 \
        case U_MAX: case U_FMAX: FOR_AB(T, x > y ? x : y); break;                                 \
        default: return false;                                                                    \
        }                                                                                         \
        return true;                                                                              \
    }

#define IPOW(T, U, SUF)                                                                           \
    static T ipow_##SUF(T x, T y, bool *neg) {                                                    \
        if (y < 0) { *neg = true; return 0; }                                                     \
        uint64_t r = 1, b = (U)x; /* uint64_t: U*U would promote to int and overflow */           \
        uint64_t e = (uint64_t)y;                                                                 \
        while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }                                          \
        return (T)r;                                                                              \
    }
#define MAKE_INT(T, U, SUF, SIGNED) IPOW(T, U, SUF) INT_LOOPS(T, U, SUF, SIGNED)
MAKE_INT(int8_t, uint8_t, i8, 1)
MAKE_INT(int16_t, uint16_t, i16, 1)
MAKE_INT(int32_t, uint32_t, i32, 1)
MAKE_INT(int64_t, uint64_t, i64, 1)
MAKE_INT(uint8_t, uint8_t, u8, 0)
MAKE_INT(uint16_t, uint16_t, u16, 0)
MAKE_INT(uint32_t, uint32_t, u32, 0)
MAKE_INT(uint64_t, uint64_t, u64, 0)

/* Bool loops: + is or, * is and, comparisons. */
static bool bloop(UFn f, const char *pa, int sa, const char *pb, int sb, char *po, int64_t n) {
    uint8_t *O_ = (uint8_t *)po;
    switch (f) {
    case U_ADD: case U_OR: case U_LOR: case U_MAX: case U_FMAX: FOR_AB(uint8_t, x | y); break;
    case U_MUL: case U_AND: case U_LAND: case U_MIN: case U_FMIN: FOR_AB(uint8_t, x & y); break;
    case U_XOR: case U_NE: case U_LXOR: FOR_AB(uint8_t, x ^ y); break;
    case U_EQ: FOR_AB(uint8_t, x == y); break;
    case U_LT: FOR_AB(uint8_t, x < y); break;
    case U_LE: FOR_AB(uint8_t, x <= y); break;
    case U_GT: FOR_AB(uint8_t, x > y); break;
    case U_GE: FOR_AB(uint8_t, x >= y); break;
    default: return false;
    }
    return true;
}

static bool run_loop(UFn f, NDType t, const char *pa, int sa, const char *pb, int sb, char *po, int64_t n,
                     bool *negpow) {
    switch (t) {
    case ND_BOOL: return bloop(f, pa, sa, pb, sb, po, n);
    case ND_INT8: return iloop_i8(f, pa, sa, pb, sb, po, n, negpow);
    case ND_INT16: return iloop_i16(f, pa, sa, pb, sb, po, n, negpow);
    case ND_INT32: return iloop_i32(f, pa, sa, pb, sb, po, n, negpow);
    case ND_INT64: return iloop_i64(f, pa, sa, pb, sb, po, n, negpow);
    case ND_UINT8: return iloop_u8(f, pa, sa, pb, sb, po, n, negpow);
    case ND_UINT16: return iloop_u16(f, pa, sa, pb, sb, po, n, negpow);
    case ND_UINT32: return iloop_u32(f, pa, sa, pb, sb, po, n, negpow);
    case ND_UINT64: return iloop_u64(f, pa, sa, pb, sb, po, n, negpow);
    case ND_FLOAT32: return floop_f32(f, pa, sa, pb, sb, po, n);
    case ND_FLOAT64: return floop_f64(f, pa, sa, pb, sb, po, n);
    default: return false;
    }
}

/* ------------------------------------------------------------ driver */

/* An operand as a buffer of dtype t that is either the full broadcast
** shape (contiguous, *full = 1) or one element (*full = 0). */
static NDArray *prepare(VM *vm, NDArray *a, Value orig, int weak, NDType t, int nd, const int64_t *shape, int *full) {
    if (weak) {
        NDArray *r = nd_new(vm, t, 0, NULL);
        vm_push_root(vm, OBJ_VAL(r));
        nd_store_value(vm, t, r->data, orig);
        vm_pop_roots(vm, 1);
        *full = 0;
        return r;
    }
    int64_t total = 1;
    for (int i = 0; i < nd; i++) total *= shape[i];
    if (a->size == 1 && total != 1) {
        NDArray *r = nd_new(vm, t, 0, NULL);
        nd_cast1(t, r->data, a->dtype, a->data);
        *full = 0;
        return r;
    }
    *full = 1;
    bool same = a->dtype == t && (a->flags & ND_C_CONTIGUOUS) && a->ndim == nd;
    for (int i = 0; same && i < nd; i++) same = a->shape[i] == shape[i];
    if (same) return a;
    if (a->size == total && a->dtype != t && (a->flags & ND_C_CONTIGUOUS)) {
        NDArray *r = nd_astype(vm, a, t);
        return r;
    }
    NDArray *r = nd_empty(vm, t, nd, shape);
    vm_push_root(vm, OBJ_VAL(r));
    nd_assign(vm, r, a);
    vm_pop_roots(vm, 1);
    return r;
}

static bool can_same_kind(NDType from, NDType to) {
    if (from == to || from == ND_BOOL) return true;
    if (nd_is_float(to)) return true;
    if (nd_is_float(from)) return false;
    if (nd_is_unsigned(from)) return to != ND_BOOL;
    return nd_is_signed(to);
}

static _Noreturn void no_loop(VM *vm, UFn f) {
    vm_raise_kind(vm, TypeError,
                  "ufunc '%s' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
                  ufn_names[f]);
}

/* The complex loop of f, or -1 when numpy has none for complex (// % & ...). */
static int complex_op(UFn f) {
    switch (f) {
    case U_ADD: return NDC_ADD;
    case U_SUB: return NDC_SUB;
    case U_MUL: return NDC_MUL;
    case U_TDIV: return NDC_DIV;
    case U_POW: return NDC_POW;
    case U_EQ: return NDC_EQ;
    case U_NE: return NDC_NE;
    case U_LT: return NDC_LT;
    case U_LE: return NDC_LE;
    case U_GT: return NDC_GT;
    case U_GE: return NDC_GE;
    default: return -1;
    }
}

/* The whole binary ufunc: x f y, into out when out is not NULL (in place). */
static Value binary(VM *vm, UFn f, Value x, Value y, NDArray *out) {
    int wa, wb;
    NDArray *A = nd_operand(vm, x, &wa);
    if (!A && !wa) return EMPTY_VAL;
    vm_push_root(vm, A ? OBJ_VAL(A) : x);
    NDArray *B = nd_operand(vm, y, &wb);
    if (!B && !wb) { vm_pop_roots(vm, 1); return EMPTY_VAL; }
    vm_push_root(vm, B ? OBJ_VAL(B) : y);
    NDType ct;
    if (!wa && !wb) ct = nd_promote(A->dtype, B->dtype);
    else if (wa && wb) ct = wa == 4 || wb == 4 ? ND_COMPLEX128 : wa == 3 || wb == 3 ? ND_FLOAT64 : wa == 2 || wb == 2 ? ND_INT64 : ND_BOOL;
    else ct = weak_type(wa ? B->dtype : A->dtype, wa ? wa : wb);
    /* numpy 2 compares with an out-of-range Python int exactly (uint8 > -1) */
    if (is_cmp(f) && (wa == 2 || wb == 2) && !nd_int_fits(ct, AS_INT(wa == 2 ? x : y)))
        ct = nd_promote(ct, ND_INT64);
    if (nd_is_complex(ct) && complex_op(f) < 0) no_loop(vm, f);
    if ((f == U_TDIV || f == U_ATAN2 || f == U_HYPOT) && !nd_is_float(ct) && !nd_is_complex(ct)) ct = f == U_TDIV ? ND_FLOAT64 : float_for(ct);
    if (ct == ND_BOOL && (f == U_POW || f == U_FDIV || f == U_MOD || f == U_LSH || f == U_RSH)) ct = ND_INT8;
    if (ct == ND_BOOL && f == U_SUB)
        vm_raise_kind(vm, TypeError, "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead.");
    if (nd_is_float(ct) && (f == U_AND || f == U_OR || f == U_XOR || f == U_LSH || f == U_RSH)) no_loop(vm, f);
    NDType ft = ct == ND_FLOAT16 ? ND_FLOAT32 : ct;
    NDType ot = is_cmp(f) ? ND_BOOL : ct;
    NDArray za, zb; /* 0-d stand-ins for weak operands, for the shape */
    int64_t shape[ND_MAXDIM];
    memset(&za, 0, sizeof za);
    memset(&zb, 0, sizeof zb);
    za.size = zb.size = 1;
    int nd = nd_bcast_shape(vm, A ? A : &za, B ? B : &zb, shape);
    if (out) {
        bool ok = out->ndim == nd;
        for (int i = 0; ok && i < nd; i++) ok = out->shape[i] == shape[i];
        bool into = !ok && nd <= out->ndim; /* the result broadcasts into a larger out */
        for (int i = 0; into && i < nd; i++) into = shape[i] == 1 || shape[i] == out->shape[out->ndim - nd + i];
        if (into) {
            if (!can_same_kind(ot, out->dtype))
                vm_raise_kind(vm, TypeError, "Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') with casting rule 'same_kind'",
                              ufn_names[f], nd_dtype_name(ot), nd_dtype_name(out->dtype));
            Value r = binary(vm, f, x, y, NULL);
            vm_push_root(vm, r);
            NDArray *R = nd_from_value(vm, r, -1);
            vm_push_root(vm, OBJ_VAL(R));
            nd_assign(vm, out, R);
            vm_pop_roots(vm, 4);
            return OBJ_VAL(out);
        }
        if (!ok) {
            char s1[400], s2[400];
            nd_shape_str(s1, sizeof s1, out->ndim, out->shape);
            nd_shape_str(s2, sizeof s2, nd, shape);
            vm_raise_kind(vm, ValueError, "non-broadcastable output operand with shape %s doesn't match the broadcast shape %s", s1, s2);
        }
        if (!can_same_kind(ot, out->dtype))
            vm_raise_kind(vm, TypeError, "Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') with casting rule 'same_kind'",
                          ufn_names[f], nd_dtype_name(ot), nd_dtype_name(out->dtype));
    }
    int fa, fb;
    if (out) { /* numpy copies inputs that partly overlap the output */
        if (A && nd_overlaps(A, out)) A = nd_copy(vm, A);
        if (B && nd_overlaps(B, out)) B = nd_copy(vm, B);
        vm_pop_roots(vm, 2); /* re-root the operands actually used */
        vm_push_root(vm, A ? OBJ_VAL(A) : x);
        vm_push_root(vm, B ? OBJ_VAL(B) : y);
    }
    NDArray *PA = prepare(vm, A, x, wa, ft, nd, shape, &fa);
    vm_push_root(vm, OBJ_VAL(PA));
    NDArray *PB = prepare(vm, B, y, wb, ft, nd, shape, &fb);
    vm_push_root(vm, OBJ_VAL(PB));
    NDType lt = is_cmp(f) ? ND_BOOL : ft; /* the loop's output type */
    NDArray *R;
    bool direct = out && out->dtype == lt && (out->flags & ND_C_CONTIGUOUS);
    R = direct ? out : nd_empty(vm, lt, nd, shape);
    vm_push_root(vm, OBJ_VAL(R));
    bool negpow = false;
    if (R->size && nd_is_complex(ft)) nd_complex_binary((NDComplexOp)complex_op(f), ft, PA->data, fa, PB->data, fb, R->data, R->size);
    else if (R->size && !run_loop(f, ft, PA->data, fa, PB->data, fb, R->data, R->size, &negpow)) no_loop(vm, f);
    if (negpow) vm_raise_kind(vm, ValueError, "Integers to negative integer powers are not allowed.");
    if (out) {
        if (!direct) nd_assign(vm, out, R);
        vm_pop_roots(vm, 5);
        return OBJ_VAL(out);
    }
    if (lt != ot) R = nd_astype(vm, R, ot);
    vm_pop_roots(vm, 5);
    return nd_result(vm, R);
}

static int ufn_of_binop(BinOp op) {
    switch (op) {
    case BINOP_ADD: return U_ADD;
    case BINOP_SUB: return U_SUB;
    case BINOP_MUL: return U_MUL;
    case BINOP_TRUEDIV: return U_TDIV;
    case BINOP_FLOORDIV: return U_FDIV;
    case BINOP_MOD: return U_MOD;
    case BINOP_POW: return U_POW;
    case BINOP_AND: return U_AND;
    case BINOP_OR: return U_OR;
    case BINOP_XOR: return U_XOR;
    case BINOP_LSHIFT: return U_LSH;
    case BINOP_RSHIFT: return U_RSH;
    default: return -1;
    }
}

Value nd_matmul(VM *vm, Value x, Value y);

Value nd_binop(VM *vm, BinOp op, Value x, Value y) {
    if (op == BINOP_MATMUL) return nd_matmul(vm, x, y);
    int f = ufn_of_binop(op);
    if (f < 0) return EMPTY_VAL;
    return binary(vm, (UFn)f, x, y, NULL);
}

static Value nd_inplace(VM *vm, BinOp op, Value x, Value y) {
    if (!nd_check(vm, x)) return EMPTY_VAL;
    int f = ufn_of_binop(op);
    if (f < 0) return EMPTY_VAL;
    NDArray *a = ND_AS(x);
    if (!(a->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "output array is read-only");
    return binary(vm, (UFn)f, x, y, a);
}

Value nd_compare(VM *vm, CmpOp op, Value x, Value y) {
    static const UFn map[] = {U_EQ, U_NE, U_LT, U_LE, U_GT, U_GE};
    if (op > CMP_GE) return EMPTY_VAL;
    int w;
    bool xop = nd_operand(vm, x, &w) || w;
    bool yop = nd_operand(vm, y, &w) || w;
    if (!xop || !yop) {
        /* arr == None (or any non-number) compares element-wise: all
        ** unequal; numpy scalars answer a plain bool */
        if (op != CMP_EQ && op != CMP_NE) return EMPTY_VAL;
        Value arr = xop && nd_check(vm, x) ? x : yop && nd_check(vm, y) ? y : EMPTY_VAL;
        if (IS_EMPTY(arr)) {
            if (!xop && !yop) return EMPTY_VAL;
            if (IS_NONE(x) || IS_NONE(y)) return BOOL_VAL(op == CMP_NE);
            bool b = op == CMP_NE;
            return nd_scalar_from_ptr(vm, ND_BOOL, &b);
        }
        NDArray *A = ND_AS(arr);
        NDArray *R = nd_empty(vm, ND_BOOL, A->ndim, A->shape);
        if (R->size) memset(R->data, op == CMP_NE, (size_t)R->size);
        return OBJ_VAL(R);
    }
    return binary(vm, map[op], x, y, NULL);
}

/* ------------------------------------------------------------ unary */

typedef enum UUn {
    V_NEG, V_POS, V_ABS, V_INVERT, V_SQRT, V_EXP, V_LOG, V_LOG2, V_LOG10, V_SIN, V_COS, V_TAN,
    V_ASIN, V_ACOS, V_ATAN, V_SINH, V_COSH, V_TANH, V_FLOOR, V_CEIL, V_RINT, V_TRUNC, V_ISNAN, V_ISINF,
    V_ISFINITE, V_SIGN, V_SQUARE, V_NOT, V_EXPM1, V_LOG1P, V_CBRT, V_RECIP,
    V__COUNT
} UUn;

static const char *const uun_names[V__COUNT] = {
    "negative", "positive", "absolute", "invert", "sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "floor", "ceil", "rint", "trunc", "isnan", "isinf",
    "isfinite", "sign", "square", "logical_not", "expm1", "log1p", "cbrt", "reciprocal",
};

static double apply_f(UUn u, double x) {
    switch (u) {
    case V_NEG: return -x;
    case V_POS: return x;
    case V_ABS: return fabs(x);
    case V_SQRT: return sqrt(x);
    case V_EXP: return exp(x);
    case V_LOG: return log(x);
    case V_LOG2: return log2(x);
    case V_LOG10: return log10(x);
    case V_SIN: return sin(x);
    case V_COS: return cos(x);
    case V_TAN: return tan(x);
    case V_ASIN: return asin(x);
    case V_ACOS: return acos(x);
    case V_ATAN: return atan(x);
    case V_SINH: return sinh(x);
    case V_COSH: return cosh(x);
    case V_TANH: return tanh(x);
    case V_FLOOR: return floor(x);
    case V_CEIL: return ceil(x);
    case V_RINT: return nearbyint(x);
    case V_TRUNC: return trunc(x);
    case V_SIGN: return isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case V_SQUARE: return x * x;
    case V_EXPM1: return expm1(x);
    case V_LOG1P: return log1p(x);
    case V_CBRT: return cbrt(x);
    case V_RECIP: return 1.0 / x;
    default: return x;
    }
}
static float apply_f32(UUn u, float x) {
    switch (u) {
    case V_NEG: return -x;
    case V_POS: return x;
    case V_ABS: return fabsf(x);
    case V_SQRT: return sqrtf(x);
    case V_EXP: return expf(x);
    case V_LOG: return logf(x);
    case V_LOG2: return log2f(x);
    case V_LOG10: return log10f(x);
    case V_SIN: return sinf(x);
    case V_COS: return cosf(x);
    case V_TAN: return tanf(x);
    case V_ASIN: return asinf(x);
    case V_ACOS: return acosf(x);
    case V_ATAN: return atanf(x);
    case V_SINH: return sinhf(x);
    case V_COSH: return coshf(x);
    case V_TANH: return tanhf(x);
    case V_FLOOR: return floorf(x);
    case V_CEIL: return ceilf(x);
    case V_RINT: return nearbyintf(x);
    case V_TRUNC: return truncf(x);
    case V_SQUARE: return x * x;
    case V_RECIP: return 1.0f / x;
    default: return (float)apply_f(u, x);
    }
}

static bool float_only(UUn u) { return u >= V_SQRT && u <= V_TANH; }
static bool is_pred(UUn u) { return u == V_ISNAN || u == V_ISINF || u == V_ISFINITE || u == V_NOT; }

/* u of a complex array: numpy's complex loops (abs gives the real dtype;
** rounding, sign and the like have no complex loop). */
static Value complex_unary(VM *vm, UUn u, NDArray *A) {
    static const int map[V__COUNT] = {
        [V_NEG] = NDC_NEG + 1, [V_POS] = NDC_POS + 1, [V_ABS] = NDC_ABS + 1, [V_SQRT] = NDC_SQRT + 1,
        [V_EXP] = NDC_EXP + 1, [V_LOG] = NDC_LOG + 1, [V_LOG10] = NDC_LOG10 + 1, [V_SIN] = NDC_SIN + 1,
        [V_COS] = NDC_COS + 1, [V_TAN] = NDC_TAN + 1, [V_ASIN] = NDC_ASIN + 1, [V_ACOS] = NDC_ACOS + 1,
        [V_ATAN] = NDC_ATAN + 1, [V_SINH] = NDC_SINH + 1, [V_COSH] = NDC_COSH + 1, [V_TANH] = NDC_TANH + 1,
        [V_ISNAN] = NDC_ISNAN + 1, [V_ISINF] = NDC_ISINF + 1, [V_ISFINITE] = NDC_ISFINITE + 1,
        [V_NOT] = NDC_NOT + 1, [V_SQUARE] = NDC_SQUARE + 1, [V_RECIP] = NDC_RECIP + 1,
    };
    if (!map[u])
        vm_raise_kind(vm, TypeError, "ufunc '%s' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''", uun_names[u]);
    vm_push_root(vm, OBJ_VAL(A));
    NDType ot = is_pred(u) ? ND_BOOL : u == V_ABS ? nd_complex_part_type(A->dtype) : A->dtype;
    NDArray *R = nd_empty(vm, ot, A->ndim, A->shape);
    vm_push_root(vm, OBJ_VAL(R));
    nd_complex_unary((NDComplexUn)(map[u] - 1), A, R);
    vm_pop_roots(vm, 2);
    return nd_result(vm, R);
}

/* The elementwise unary function u of v (array, scalar or number). */
static Value unary(VM *vm, UUn u, Value v) {
    int w;
    NDArray *A = nd_operand(vm, v, &w);
    if (!A && !w) return EMPTY_VAL;
    if (!A) A = nd_array_from(vm, v, -1, false);
    vm_push_root(vm, OBJ_VAL(A));
    NDType it = A->dtype, ot;
    if (nd_is_complex(it)) {
        vm_pop_roots(vm, 1);
        return complex_unary(vm, u, A);
    }
    if (is_pred(u)) ot = ND_BOOL;
    else if (float_only(u) || u == V_EXPM1 || u == V_LOG1P || u == V_CBRT) ot = float_for(it);
    else ot = it;
    if (u == V_NEG && it == ND_BOOL)
        vm_raise_kind(vm, TypeError, "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead.");
    if (u == V_INVERT && nd_is_float(it))
        vm_raise_kind(vm, TypeError, "ufunc 'invert' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''");
    NDArray *R = nd_empty(vm, ot, A->ndim, A->shape);
    vm_push_root(vm, OBJ_VAL(R));
    int64_t n = A->size;
    if (n) {
        if (nd_is_float(ot) && !is_pred(u)) {
            NDType ct = ot == ND_FLOAT64 ? ND_FLOAT64 : ND_FLOAT32;
            NDArray *C = A->dtype == ct && (A->flags & ND_C_CONTIGUOUS) ? A : nd_astype(vm, A, ct);
            vm_push_root(vm, OBJ_VAL(C));
            if (ct == ND_FLOAT64) {
                const double *x = (const double *)C->data;
                double *o = (double *)R->data;
                if (u == V_SQRT) for (int64_t i = 0; i < n; i++) o[i] = sqrt(x[i]);
                else if (u == V_NEG) for (int64_t i = 0; i < n; i++) o[i] = -x[i];
                else for (int64_t i = 0; i < n; i++) o[i] = apply_f(u, x[i]);
            } else {
                const float *x = (const float *)C->data;
                if (ot == ND_FLOAT32) {
                    float *o = (float *)R->data;
                    if (u == V_SQRT) for (int64_t i = 0; i < n; i++) o[i] = sqrtf(x[i]);
                    else for (int64_t i = 0; i < n; i++) o[i] = apply_f32(u, x[i]);
                } else {
                    uint16_t *o = (uint16_t *)R->data;
                    for (int64_t i = 0; i < n; i++) o[i] = nd_float_to_half(apply_f32(u, x[i]));
                }
            }
            vm_pop_roots(vm, 1);
        } else {
            int64_t idx[ND_MAXDIM] = {0};
            char *pa = A->data, *po = R->data;
            size_t os = nd_itemsize(ot);
            for (int64_t i = 0; i < n; i++, po += os) {
                if (is_pred(u)) {
                    bool r;
                    if (u == V_NOT) r = nd_is_float(it) ? nd_load_f(it, pa) == 0 : nd_load_u(it, pa) == 0;
                    else if (!nd_is_float(it)) r = u == V_ISFINITE;
                    else {
                        double d = nd_load_f(it, pa);
                        r = u == V_ISNAN ? isnan(d) : u == V_ISINF ? isinf(d) : isfinite(d);
                    }
                    *(uint8_t *)po = r;
                } else if (it == ND_UINT64 || nd_is_unsigned(it)) {
                    uint64_t x = nd_load_u(it, pa), r;
                    switch (u) {
                    case V_NEG: r = 0 - x; break;
                    case V_INVERT: r = ~x; break;
                    case V_SIGN: r = x != 0; break;
                    case V_SQUARE: r = x * x; break;
                    default: r = x; break;
                    }
                    nd_store_u(ot, po, r);
                } else {
                    int64_t x = nd_load_i(it, pa), r;
                    switch (u) {
                    case V_NEG: r = (int64_t)(0 - (uint64_t)x); break;
                    case V_ABS: r = x < 0 ? (int64_t)(0 - (uint64_t)x) : x; break;
                    case V_INVERT: r = it == ND_BOOL ? !x : ~x; break;
                    case V_SIGN: r = (x > 0) - (x < 0); break;
                    case V_SQUARE: r = (int64_t)((uint64_t)x * (uint64_t)x); break;
                    default: r = x; break;
                    }
                    nd_store_i(ot, po, r);
                }
                nd_advance(A->ndim, A->shape, idx, &pa, A->strides, NULL, NULL);
            }
        }
    }
    vm_pop_roots(vm, 2);
    return nd_result(vm, R);
}

Value nd_unop(VM *vm, UnOp op, Value x) {
    switch (op) {
    case UNOP_NEG: return unary(vm, V_NEG, x);
    case UNOP_POS: return unary(vm, V_POS, x);
    case UNOP_INVERT: return unary(vm, V_INVERT, x);
    default: return EMPTY_VAL;
    }
}

/* ------------------------------------------------------------ module functions */

/* Unary and binary ufuncs share one native each; data holds the code. */
/* Stores a unary ufunc's result r into out= numpy's way: r broadcasts to
** out's shape and its dtype casts 'same_kind'. Returns out. */
static Value unary_into(VM *vm, UUn u, Value r, NDArray *out) {
    NDArray *R = nd_from_value(vm, r, -1);
    vm_push_root(vm, OBJ_VAL(R));
    int64_t st[ND_MAXDIM];
    if (R->ndim > out->ndim || !nd_bcast_strides(R, out->ndim, out->shape, st)) {
        char s1[400], s2[400];
        nd_shape_str(s1, sizeof s1, out->ndim, out->shape);
        nd_shape_str(s2, sizeof s2, R->ndim, R->shape);
        vm_raise_kind(vm, ValueError, "non-broadcastable output operand with shape %s doesn't match the broadcast shape %s", s1, s2);
    }
    if (!can_same_kind(R->dtype, out->dtype))
        vm_raise_kind(vm, TypeError, "Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') with casting rule 'same_kind'",
                      uun_names[u], nd_dtype_name(R->dtype), nd_dtype_name(out->dtype));
    if (!(out->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "output array is read-only");
    nd_assign(vm, out, R);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(out);
}

static Value f_unary(VM *vm, int argc, Value *argv, Dict *kw) {
    NativeFunction *nf = vm_current_native(vm);
    UUn u = (UUn)AS_INT(nf->data);
    Value outv = kw_take(vm, kw, "out");
    kw_done(vm, uun_names[u], kw);
    arg_between(vm, uun_names[u], argc, 1, 2);
    if (argc == 2) outv = argv[1];
    NDArray *out = NULL;
    if (!IS_EMPTY(outv) && !IS_NONE(outv)) {
        if (!nd_check(vm, outv)) vm_raise_kind(vm, TypeError, "return arrays must be of ArrayType");
        out = ND_AS(outv);
    }
    Value r = unary(vm, u, argv[0]);
    if (IS_EMPTY(r))
        vm_raise_kind(vm, TypeError, "ufunc '%s' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''", uun_names[u]);
    if (out) {
        vm_push_root(vm, r);
        r = unary_into(vm, u, r, out);
        vm_pop_roots(vm, 1);
    }
    return r;
}
static Value f_binary(VM *vm, int argc, Value *argv, Dict *kw) {
    NativeFunction *nf = vm_current_native(vm);
    UFn f = (UFn)AS_INT(nf->data);
    Value outv = kw_take(vm, kw, "out");
    kw_done(vm, ufn_names[f], kw);
    arg_between(vm, ufn_names[f], argc, 2, 3);
    if (argc == 3) outv = argv[2];
    NDArray *out = NULL;
    if (!IS_EMPTY(outv) && !IS_NONE(outv)) {
        if (!nd_check(vm, outv)) vm_raise_kind(vm, TypeError, "return arrays must be of ArrayType");
        out = ND_AS(outv);
    }
    Value r = binary(vm, f, argv[0], argv[1], out);
    if (IS_EMPTY(r))
        vm_raise_kind(vm, TypeError, "ufunc '%s' not supported for the input types", ufn_names[f]);
    return r;
}

/* np.where(cond, x, y) / np.where(cond) */
static Value f_where(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "where", kw);
    if (argc == 1) {
        NDArray *c = nd_from_value(vm, argv[0], -1);
        vm_push_root(vm, OBJ_VAL(c));
        int64_t cnt = 0, idx[ND_MAXDIM] = {0};
        char *p = c->data;
        for (int64_t i = 0; i < c->size; i++) {
            cnt += nd_load_f(c->dtype, p) != 0;
            nd_advance(c->ndim, c->shape, idx, &p, c->strides, NULL, NULL);
        }
        int nd = c->ndim ? c->ndim : 1;
        Tuple *t = tuple_new(vm, nd);
        vm_push_root(vm, OBJ_VAL(t));
        for (int d = 0; d < nd; d++) t->items[d] = OBJ_VAL(nd_new(vm, ND_INT64, 1, &cnt));
        memset(idx, 0, sizeof idx);
        p = c->data;
        int64_t w = 0;
        for (int64_t i = 0; i < c->size; i++) {
            if (nd_load_f(c->dtype, p) != 0) {
                for (int d = 0; d < c->ndim; d++) ((int64_t *)ND_AS(t->items[d])->data)[w] = idx[d];
                w++;
            }
            nd_advance(c->ndim, c->shape, idx, &p, c->strides, NULL, NULL);
        }
        vm_pop_roots(vm, 2);
        return OBJ_VAL(t);
    }
    arg_between(vm, "where", argc, 3, 3);
    NDArray *c = nd_from_value(vm, argv[0], ND_BOOL);
    if (c->dtype != ND_BOOL) c = nd_astype(vm, c, ND_BOOL);
    vm_push_root(vm, OBJ_VAL(c));
    int wx, wy;
    NDArray *X = nd_operand(vm, argv[1], &wx);
    if (!X) X = nd_array_from(vm, argv[1], -1, false);
    vm_push_root(vm, OBJ_VAL(X));
    NDArray *Y = nd_operand(vm, argv[2], &wy);
    if (!Y) Y = nd_array_from(vm, argv[2], -1, false);
    vm_push_root(vm, OBJ_VAL(Y));
    NDType t;
    if (!wx && !wy) t = nd_promote(X->dtype, Y->dtype);
    else if (wx && wy) t = nd_promote(X->dtype, Y->dtype);
    else t = weak_type(wx ? Y->dtype : X->dtype, wx ? wx : wy);
    {
        /* numpy's three-shape message when cond, x and y do not broadcast */
        NDArray *ops[3] = {c, X, Y};
        int mx = c->ndim > X->ndim ? c->ndim : X->ndim;
        if (Y->ndim > mx) mx = Y->ndim;
        bool ok = true;
        for (int d = 1; ok && d <= mx; d++) {
            int64_t n = 1;
            for (int k = 0; k < 3; k++) {
                int64_t m = d <= ops[k]->ndim ? ops[k]->shape[ops[k]->ndim - d] : 1;
                if (m != 1 && n != 1 && m != n) ok = false;
                if (m != 1) n = m;
            }
        }
        if (!ok) {
            char s0[400], sx[400], sy[400];
            nd_shape_str(s0, sizeof s0, c->ndim, c->shape);
            nd_shape_str(sx, sizeof sx, X->ndim, X->shape);
            nd_shape_str(sy, sizeof sy, Y->ndim, Y->shape);
            vm_raise_kind(vm, ValueError, "operands could not be broadcast together with shapes %s %s %s ", s0, sx, sy);
        }
    }
    int64_t s1[ND_MAXDIM], shape[ND_MAXDIM];
    int nd1 = nd_bcast_shape(vm, X, Y, s1);
    NDArray tmp = *X;
    tmp.ndim = nd1;
    tmp.shape = s1;
    int nd = nd_bcast_shape(vm, c, &tmp, shape);
    NDArray *R = nd_new(vm, t, nd, shape);
    vm_push_root(vm, OBJ_VAL(R));
    int64_t cs[ND_MAXDIM], xs[ND_MAXDIM], ys[ND_MAXDIM], idx[ND_MAXDIM] = {0};
    nd_bcast_strides(c, nd, shape, cs);
    nd_bcast_strides(X, nd, shape, xs);
    nd_bcast_strides(Y, nd, shape, ys);
    char *pc = c->data, *px = X->data, *py = Y->data;
    size_t is = nd_itemsize(t);
    for (int64_t i = 0; i < R->size; i++) {
        if (*pc) nd_cast1(t, R->data + (size_t)i * is, X->dtype, px);
        else nd_cast1(t, R->data + (size_t)i * is, Y->dtype, py);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) { pc += cs[d]; px += xs[d]; py += ys[d]; break; }
            idx[d] = 0;
            pc -= cs[d] * (shape[d] - 1);
            px -= xs[d] * (shape[d] - 1);
            py -= ys[d] * (shape[d] - 1);
        }
    }
    vm_pop_roots(vm, 4);
    return OBJ_VAL(R);
}

/* np.clip(a, lo, hi) = minimum(maximum(a, lo), hi); None skips a side. */
Value nd_clip(VM *vm, Value a, Value lo, Value hi) {
    Value r = a;
    if (!IS_NONE(lo) && !IS_EMPTY(lo)) r = binary(vm, U_MAX, r, lo, NULL);
    vm_push_root(vm, r);
    if (!IS_NONE(hi) && !IS_EMPTY(hi)) r = binary(vm, U_MIN, r, hi, NULL);
    vm_pop_roots(vm, 1);
    if (IS_EMPTY(r)) vm_raise_kind(vm, TypeError, "clip: unsupported operand");
    return r;
}
static Value f_clip(VM *vm, int argc, Value *argv, Dict *kw) {
    Value lo = kw_take(vm, kw, "a_min"), hi = kw_take(vm, kw, "a_max");
    Value lo2 = kw_take(vm, kw, "min"), hi2 = kw_take(vm, kw, "max");
    kw_done(vm, "clip", kw);
    arg_between(vm, "clip", argc, 1, 3);
    if (argc >= 2) lo = argv[1];
    if (argc == 3) hi = argv[2];
    if (IS_EMPTY(lo)) lo = lo2;
    if (IS_EMPTY(hi)) hi = hi2;
    return nd_clip(vm, argv[0], lo, hi);
}
static Value m_clip(VM *vm, int argc, Value *argv, Dict *kw) { return f_clip(vm, argc, argv, kw); }

/* np.round(a, decimals=0): numpy rounds half to even (after scaling). */
Value nd_round(VM *vm, Value v, int64_t dec) {
    /* numpy takes decimals as a C int (and -dec below must not overflow) */
    if (dec > INT32_MAX) vm_raise_kind(vm, OverflowError, "signed integer is greater than maximum");
    if (dec < INT32_MIN) vm_raise_kind(vm, OverflowError, "signed integer is less than minimum");
    if (dec == 0) return unary(vm, V_RINT, v);
    NDArray *A = nd_from_value(vm, v, -1);
    if (nd_is_complex(A->dtype)) vm_raise_kind(vm, TypeError, "gpy's numpy cannot round complex arrays");
    if (!nd_is_float(A->dtype) && dec >= 0) return nd_result(vm, nd_copy(vm, A));
    vm_push_root(vm, OBJ_VAL(A));
    NDArray *R = nd_copy(vm, A);
    vm_push_root(vm, OBJ_VAL(R));
    double scale = pow(10.0, (double)(dec < 0 ? -dec : dec));
    size_t is = nd_itemsize(R->dtype);
    for (int64_t i = 0; i < R->size; i++) {
        char *p = R->data + (size_t)i * is;
        double d = nd_load_f(R->dtype, p);
        if (R->dtype == ND_FLOAT32 || R->dtype == ND_FLOAT16) {
            /* numpy scales, rounds and unscales in the array's precision */
            bool h = R->dtype == ND_FLOAT16;
            float f = (float)d, sc = (float)scale;
            f = dec > 0 ? f * sc : f / sc;
            if (h) f = (float)nd_half_to_float(nd_float_to_half(f));
            f = nearbyintf(f);
            f = dec > 0 ? f / sc : f * sc;
            if (h) f = (float)nd_half_to_float(nd_float_to_half(f));
            d = f;
        } else if (dec > 0) d = nearbyint(d * scale) / scale;
        else d = nearbyint(d / scale) * scale;
        if (nd_is_float(R->dtype)) nd_store_f(R->dtype, p, d);
        else nd_store_i(R->dtype, p, (int64_t)d);
    }
    vm_pop_roots(vm, 2);
    return nd_result(vm, R);
}
static Value f_round(VM *vm, int argc, Value *argv, Dict *kw) {
    Value dv = kw_take(vm, kw, "decimals");
    kw_done(vm, "round", kw);
    arg_between(vm, "round", argc, 1, 2);
    if (argc == 2) dv = argv[1];
    return nd_round(vm, argv[0], IS_EMPTY(dv) ? 0 : vm_to_index(vm, dv));
}

void nd_ops_init(VM *vm, NDState *st, Module *m) {
    st->t_array->inplace = nd_inplace;
    nd_ops_methods_init(vm, st);
    static const struct { const char *name; int u; } un[] = {
        {"negative", V_NEG}, {"positive", V_POS}, {"abs", V_ABS}, {"absolute", V_ABS}, {"fabs", V_ABS},
        {"invert", V_INVERT}, {"bitwise_not", V_INVERT}, {"sqrt", V_SQRT}, {"exp", V_EXP}, {"log", V_LOG},
        {"log2", V_LOG2}, {"log10", V_LOG10}, {"sin", V_SIN}, {"cos", V_COS}, {"tan", V_TAN},
        {"arcsin", V_ASIN}, {"arccos", V_ACOS}, {"arctan", V_ATAN}, {"sinh", V_SINH}, {"cosh", V_COSH},
        {"tanh", V_TANH}, {"floor", V_FLOOR}, {"ceil", V_CEIL}, {"rint", V_RINT}, {"trunc", V_TRUNC},
        {"isnan", V_ISNAN}, {"isinf", V_ISINF}, {"isfinite", V_ISFINITE}, {"sign", V_SIGN},
        {"square", V_SQUARE}, {"logical_not", V_NOT}, {"expm1", V_EXPM1}, {"log1p", V_LOG1P},
        {"cbrt", V_CBRT}, {"reciprocal", V_RECIP},
    };
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++)
        module_add_native_data(vm, m, un[i].name, f_unary, INT_VAL(un[i].u));
    static const struct { const char *name; int f; } bin[] = {
        {"add", U_ADD}, {"subtract", U_SUB}, {"multiply", U_MUL}, {"divide", U_TDIV}, {"true_divide", U_TDIV},
        {"floor_divide", U_FDIV}, {"mod", U_MOD}, {"remainder", U_MOD}, {"power", U_POW},
        {"bitwise_and", U_AND}, {"bitwise_or", U_OR}, {"bitwise_xor", U_XOR}, {"left_shift", U_LSH},
        {"right_shift", U_RSH}, {"minimum", U_MIN}, {"maximum", U_MAX}, {"fmin", U_FMIN}, {"fmax", U_FMAX},
        {"arctan2", U_ATAN2}, {"hypot", U_HYPOT}, {"equal", U_EQ}, {"not_equal", U_NE}, {"less", U_LT},
        {"less_equal", U_LE}, {"greater", U_GT}, {"greater_equal", U_GE}, {"logical_and", U_LAND},
        {"logical_or", U_LOR}, {"logical_xor", U_LXOR},
    };
    for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
        module_add_native_data(vm, m, bin[i].name, f_binary, INT_VAL(bin[i].f));
    module_add_function(vm, m, "where", f_where);
    nd_ops_extra_init(vm, st, m);
    module_add_function(vm, m, "clip", f_clip);
    module_add_function(vm, m, "round", f_round);
    module_add_function(vm, m, "around", f_round);
    type_add_method(vm, st->t_array, "clip", m_clip);
    type_add_method(vm, st->t_array, "round", f_round);
}

/* abs() and the dunder methods that builtins and user code call by name. */
static Value m_abs(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__abs__", kw);
    (void)argc;
    return unary(vm, V_ABS, argv[0]);
}
static Value m_getitem(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__getitem__", kw);
    arg_between(vm, "__getitem__", argc, 2, 2);
    return nd_getitem(vm, argv[0], argv[1]);
}
static Value m_setitem(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__setitem__", kw);
    arg_between(vm, "__setitem__", argc, 3, 3);
    nd_setitem(vm, argv[0], argv[1], argv[2]);
    return NONE_VAL;
}
static Value m_len(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__len__", kw);
    (void)argc;
    return INT_VAL(vm_len(vm, argv[0]));
}

void nd_ops_methods_init(VM *vm, NDState *st) {
    type_add_method(vm, st->t_array, "__abs__", m_abs);
    type_add_method(vm, st->t_array, "__getitem__", m_getitem);
    type_add_method(vm, st->t_array, "__setitem__", m_setitem);
    type_add_method(vm, st->t_array, "__len__", m_len);
    for (int i = 0; i < ND__COUNT; i++) type_add_method(vm, st->t_scalar[i], "__abs__", m_abs);
}

/* np.nonzero(a) / a.nonzero(): the indices of the non-zero elements. */
static Value f_nonzero(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "nonzero", kw);
    arg_between(vm, "nonzero", argc, 1, 1);
    if (nd_from_value(vm, argv[0], -1)->ndim == 0)
        vm_raise_kind(vm, ValueError, "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead. If the context of this error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.");
    return f_where(vm, 1, argv, NULL);
}

/* np.outer(a, b): a.ravel()[:, None] * b.ravel()[None, :] */
static Value f_outer(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "outer", kw);
    arg_between(vm, "outer", argc, 2, 2);
    NDArray *A = nd_array_from(vm, argv[0], -1, true);
    vm_push_root(vm, OBJ_VAL(A));
    NDArray *B = nd_array_from(vm, argv[1], -1, true);
    vm_push_root(vm, OBJ_VAL(B));
    int64_t sa[2] = {A->size, 1}, sb[2] = {1, B->size};
    NDArray *CA = nd_wrap(vm, A->dtype, A->data, 2, sa, NULL, OBJ_VAL(A));
    vm_push_root(vm, OBJ_VAL(CA));
    NDArray *CB = nd_wrap(vm, B->dtype, B->data, 2, sb, NULL, OBJ_VAL(B));
    vm_push_root(vm, OBJ_VAL(CB));
    Value r = binary(vm, U_MUL, OBJ_VAL(CA), OBJ_VAL(CB), NULL);
    vm_pop_roots(vm, 4);
    return r;
}

/* np.flip(a, axis=None): a view with the axis (or every axis) reversed. */
static Value f_flip(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axv = kw_take(vm, kw, "axis");
    kw_done(vm, "flip", kw);
    arg_between(vm, "flip", argc, 1, 2);
    if (argc == 2) axv = argv[1];
    NDArray *a = nd_from_value(vm, argv[0], -1);
    int64_t st[ND_MAXDIM];
    char *p = a->data;
    bool all = IS_EMPTY(axv) || IS_NONE(axv);
    int64_t ax = all ? 0 : vm_to_index(vm, axv);
    if (!all && (ax < -a->ndim || ax >= a->ndim))
        vm_raise_kind(vm, ValueError, "axis %lld is out of bounds for array of dimension %d", (long long)ax, a->ndim);
    if (ax < 0) ax += a->ndim;
    for (int d = 0; d < a->ndim; d++) {
        st[d] = a->strides[d];
        if ((all || d == ax) && a->shape[d] > 0) {
            p += (a->shape[d] - 1) * a->strides[d];
            st[d] = -a->strides[d];
        }
    }
    vm_push_root(vm, OBJ_VAL(a));
    NDArray *r = nd_view(vm, a, p, a->ndim, a->shape, st);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

void nd_ops_extra_init(VM *vm, NDState *st, Module *m) {
    module_add_function(vm, m, "nonzero", f_nonzero);
    module_add_function(vm, m, "outer", f_outer);
    module_add_function(vm, m, "flip", f_flip);
    type_add_method(vm, st->t_array, "nonzero", f_nonzero);
}
