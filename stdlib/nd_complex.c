/*
** nd_complex.c — numpy's complex64 / complex128: storing Python values,
** the elementwise loops (arithmetic, comparisons, the complex ufuncs) and
** np.real / np.imag / np.conj / np.angle with the matching array and scalar
** attributes. Arithmetic follows numpy's own algorithms (Smith's division
** with a reciprocal scale, repeated squaring for small integer powers), so
** results agree with numpy to the last bit; the transcendental ufuncs are
** C99's, which numpy also calls.
*/
#include <complex.h>
#ifndef CMPLX /* clang's <complex.h> may lack C11's CMPLX/CMPLXF */
#define CMPLX(re, im) __builtin_complex((double)(re), (double)(im))
#define CMPLXF(re, im) __builtin_complex((float)(re), (float)(im))
#endif

#include "nd_priv.h"

void nd_store_complex_value(VM *vm, NDType dt, void *p, Value v) {
    double re, im;
    if (complex_parts(vm, v, &re, &im)) {
        nd_store_c(dt, p, re, im);
    } else if (nd_is_scalar(vm, v)) {
        NDScalar *s = (NDScalar *)AS_OBJ(v);
        nd_cast1(dt, p, s->dtype, &s->v);
    } else if (nd_check(vm, v) && ND_AS(v)->size == 1) {
        nd_cast1(dt, p, ND_AS(v)->dtype, ND_AS(v)->data);
    } else if (IS_STR(vm, v)) {
        if (!complex_parse(AS_STR(v)->chars, (size_t)AS_STR(v)->len, &re, &im))
            vm_raise_kind(vm, ValueError, "complex() arg is a malformed string");
        nd_store_c(dt, p, re, im);
    } else {
        char msg[128];
        snprintf(msg, sizeof msg, "complex() first argument must be a string or a number, not '%s'", vm_type_name(vm, v));
        complex_coerce(vm, v, &re, &im, msg);
        nd_store_c(dt, p, re, im);
    }
}

/* ------------------------------------------------------------ arithmetic */

typedef struct Cd {
    double re, im;
} Cd;

/* complex64 arithmetic is float arithmetic: each operation done in double
** and rounded to float gives exactly the float result (double has more
** than twice float's precision), so one code serves both types. */
static double rnd(bool f32, double x) { return f32 ? (double)(float)x : x; }
#define R(x) rnd(f32, (x))

static Cd c_mul(bool f32, Cd a, Cd b) {
    return (Cd){R(R(a.re * b.re) - R(a.im * b.im)), R(R(a.re * b.im) + R(a.im * b.re))};
}

/* numpy's division: Smith's method, scaled by the reciprocal of the
** denominator; a zero divisor gives infinities / NaNs like the reals. */
static Cd c_div(bool f32, Cd a, Cd b) {
    double abr = fabs(b.re), abi = fabs(b.im);
    if (abr >= abi) {
        if (abr == 0 && abi == 0) return (Cd){a.re / abr, a.im / abr};
        double rat = R(b.im / b.re), scl = R(1.0 / R(b.re + R(b.im * rat)));
        return (Cd){R(R(a.re + R(a.im * rat)) * scl), R(R(a.im - R(a.re * rat)) * scl)};
    }
    double rat = R(b.re / b.im), scl = R(1.0 / R(b.im + R(b.re * rat)));
    return (Cd){R(R(R(a.re * rat) + a.im) * scl), R(R(R(a.im * rat) - a.re) * scl)};
}

/* numpy's reciprocal (its own loop, not 1 / z). */
static Cd c_recip(bool f32, Cd z) {
    if (fabs(z.im) <= fabs(z.re)) {
        double r = R(z.im / z.re), d = R(z.re + R(z.im * r));
        return (Cd){R(1 / d), R(-r / d)};
    }
    double r = R(z.re / z.im), d = R(R(z.re * r) + z.im);
    return (Cd){R(r / d), R(-1 / d)};
}

/* numpy's power: exact small integer powers by squaring, else cpow. */
static Cd c_pow(bool f32, Cd a, Cd b) {
    if (b.re == 0 && b.im == 0) return (Cd){1, 0};
    if (a.re == 0 && a.im == 0) {
        if (b.re > 0 && b.im == 0) return (Cd){0, 0};
        return (Cd){NAN, NAN};
    }
    if (b.im == 0 && fabs(b.re) < 100 && b.re == (double)(int64_t)b.re) {
        int64_t n = (int64_t)b.re;
        if (n == 1) return a;
        if (n == 2) return c_mul(f32, a, a);
        if (n == 3) return c_mul(f32, a, c_mul(f32, a, a));
        if (n < 0) n = -n;
        Cd aa = {1, 0}, p = a;
        for (int64_t mask = 1;; mask <<= 1) {
            if (n & mask) aa = c_mul(f32, aa, p);
            if (n < (mask << 1)) break;
            p = c_mul(f32, p, p);
        }
        return b.re < 0 ? c_div(f32, (Cd){1, 0}, aa) : aa;
    }
    if (f32) {
        float complex r = cpowf(CMPLXF((float)a.re, (float)a.im), CMPLXF((float)b.re, (float)b.im));
        return (Cd){crealf(r), cimagf(r)};
    }
    double complex r = cpow(CMPLX(a.re, a.im), CMPLX(b.re, b.im));
    return (Cd){creal(r), cimag(r)};
}
#undef R

/* numpy orders complex numbers lexicographically (real part first). */
static int c_order(Cd a, Cd b) {
    if (a.re < b.re) return -1;
    if (a.re > b.re) return 1;
    if (a.re == b.re) return a.im < b.im ? -1 : a.im > b.im ? 1 : a.im == b.im ? 0 : 2;
    return 2; /* NaN */
}

static Cd load(NDType t, const char *p) {
    Cd z;
    nd_load_c(t, p, &z.re, &z.im);
    return z;
}

bool nd_complex_binary(NDComplexOp op, NDType t, const char *pa, int sa, const char *pb, int sb, char *po, int64_t n) {
    size_t w = nd_itemsize(t);
    bool f32 = t == ND_COMPLEX64;
    for (int64_t i = 0; i < n; i++) {
        Cd x = load(t, pa + (sa ? i * (int64_t)w : 0)), y = load(t, pb + (sb ? i * (int64_t)w : 0)), r;
        int c;
        switch (op) {
        case NDC_ADD: r = (Cd){x.re + y.re, x.im + y.im}; break;
        case NDC_SUB: r = (Cd){x.re - y.re, x.im - y.im}; break;
        case NDC_MUL: r = c_mul(f32, x, y); break;
        case NDC_DIV: r = c_div(f32, x, y); break;
        case NDC_POW: r = c_pow(f32, x, y); break;
        default:
            c = c_order(x, y);
            bool b;
            switch (op) {
            case NDC_EQ: b = c == 0; break;
            case NDC_NE: b = c != 0; break;
            case NDC_LT: b = c == -1; break;
            case NDC_LE: b = c == -1 || c == 0; break;
            case NDC_GT: b = c == 1; break;
            default: b = c == 1 || c == 0; break;
            }
            po[i] = b;
            continue;
        }
        nd_store_c(t, po + i * (int64_t)w, r.re, r.im);
    }
    return true;
}

/* ------------------------------------------------------------ reductions */

/* numpy's pairwise summation of complex numbers: real and imaginary parts
** summed apart, with four partial sums each (its unrolling by 8 floats). */
#define CPAIRWISE(T, NAME)                                                         \
    static void NAME(const T *a, int64_t n, T *rr, T *ri) {                        \
        if (n < 4) {                                                               \
            *rr = 0, *ri = 0;                                                      \
            for (int64_t i = 0; i < n; i++) *rr += a[2 * i], *ri += a[2 * i + 1];  \
            return;                                                                \
        }                                                                          \
        if (n <= 64) {                                                             \
            T r[8];                                                                \
            for (int j = 0; j < 8; j++) r[j] = a[j];                               \
            int64_t i;                                                             \
            for (i = 4; i < n - (n % 4); i += 4)                                   \
                for (int j = 0; j < 8; j++) r[j] += a[2 * i + j];                  \
            *rr = (r[0] + r[2]) + (r[4] + r[6]);                                   \
            *ri = (r[1] + r[3]) + (r[5] + r[7]);                                   \
            for (; i < n; i++) *rr += a[2 * i], *ri += a[2 * i + 1];               \
            return;                                                                \
        }                                                                          \
        int64_t n2 = (n - n % 8) / 2; /* numpy halves 2n floats to a multiple of 8 */ \
        T r1, i1, r2, i2;                                                          \
        NAME(a, n2, &r1, &i1);                                                     \
        NAME(a + 2 * n2, n - n2, &r2, &i2);                                        \
        *rr = r1 + r2, *ri = i1 + i2;                                              \
    }
CPAIRWISE(float, cpw_f32)
CPAIRWISE(double, cpw_f64)

void nd_complex_reduce_rows(int what, NDType t, const char *rows, int64_t outer, int64_t inner, char *out) {
    size_t w = nd_itemsize(t);
    for (int64_t o = 0; o < outer; o++) {
        const char *row = rows + (size_t)(o * inner) * w;
        char *dst = out + (size_t)o * w;
        if (what == 1) {
            Cd p = {1, 0};
            for (int64_t i = 0; i < inner; i++) p = c_mul(t == ND_COMPLEX64, p, load(t, row + (size_t)i * w));
            nd_store_c(t, dst, p.re, p.im);
            continue;
        }
        double re, im;
        if (t == ND_COMPLEX64) {
            float fr, fi;
            cpw_f32((const float *)row, inner, &fr, &fi);
            re = fr, im = fi;
            if (what == 2) { /* numpy divides by an intp count: in complex128, times its reciprocal */
                double scl = 1.0 / (double)inner;
                re = (float)(re * scl), im = (float)(im * scl);
            }
        } else {
            cpw_f64((const double *)row, inner, &re, &im);
            if (what == 2) {
                double scl = 1.0 / (double)inner;
                re *= scl, im *= scl;
            }
        }
        nd_store_c(t, dst, re, im);
    }
}

/* ------------------------------------------------------------ unary */

/* The C99 function of u in precision T (numpy's complex64 loops call the
** float versions: csqrtf ...). */
#define UNARY1(NAME, T, F)                                             \
    static T NAME(NDComplexUn u, T z) {                                \
        switch (u) {                                                   \
        case NDC_NEG: return -z;                                       \
        case NDC_SQRT: return csqrt##F(z);                             \
        case NDC_EXP: return cexp##F(z);                               \
        case NDC_LOG: return clog##F(z);                               \
        case NDC_LOG10: return clog##F(z) / (T)M_LN10;                 \
        case NDC_SIN: return csin##F(z);                               \
        case NDC_COS: return ccos##F(z);                               \
        case NDC_TAN: return ctan##F(z);                               \
        case NDC_SINH: return csinh##F(z);                             \
        case NDC_COSH: return ccosh##F(z);                             \
        case NDC_TANH: return ctanh##F(z);                             \
        case NDC_ASIN: return casin##F(z);                             \
        case NDC_ACOS: return cacos##F(z);                             \
        case NDC_ATAN: return catan##F(z);                             \
        case NDC_CONJ: return conj##F(z);                              \
        default: return z;                                             \
        }                                                              \
    }
UNARY1(unary1, double complex, )
UNARY1(unary1f, float complex, f)

bool nd_complex_unary(NDComplexUn u, NDArray *A, NDArray *R) {
    int64_t idx[ND_MAXDIM] = {0};
    char *pa = A->data, *po = R->data;
    size_t os = nd_itemsize(R->dtype);
    for (int64_t i = 0; i < A->size; i++, po += os) {
        Cd z = load(A->dtype, pa);
        switch (u) {
        case NDC_ABS: nd_store_f(R->dtype, po, hypot(z.re, z.im)); break;
        case NDC_REAL: nd_store_f(R->dtype, po, z.re); break;
        case NDC_IMAG: nd_store_f(R->dtype, po, z.im); break;
        case NDC_ANGLE: nd_store_f(R->dtype, po, atan2(z.im, z.re)); break;
        case NDC_ISNAN: *(uint8_t *)po = isnan(z.re) || isnan(z.im); break;
        case NDC_ISINF: *(uint8_t *)po = isinf(z.re) || isinf(z.im); break;
        case NDC_ISFINITE: *(uint8_t *)po = isfinite(z.re) && isfinite(z.im); break;
        case NDC_NOT: *(uint8_t *)po = z.re == 0 && z.im == 0; break;
        case NDC_SQUARE: {
            Cd r = c_mul(R->dtype == ND_COMPLEX64, z, z);
            nd_store_c(R->dtype, po, r.re, r.im);
            break;
        }
        case NDC_RECIP: {
            Cd r = c_recip(R->dtype == ND_COMPLEX64, z);
            nd_store_c(R->dtype, po, r.re, r.im);
            break;
        }
        default: {
            double complex r = R->dtype == ND_COMPLEX64 ? (double complex)unary1f(u, CMPLXF((float)z.re, (float)z.im))
                                                        : unary1(u, CMPLX(z.re, z.im));
            nd_store_c(R->dtype, po, creal(r), cimag(r));
            break;
        }
        }
        nd_advance(A->ndim, A->shape, idx, &pa, A->strides, NULL, NULL);
    }
    return true;
}

/* ------------------------------------------------------ real, imag, conj */

/* The real dtype of a complex one (float32 for complex64). */
NDType nd_complex_part_type(NDType t) {
    return t == ND_COMPLEX64 ? ND_FLOAT32 : t == ND_COMPLEX128 ? ND_FLOAT64 : t;
}

/* a.real / a.imag of a complex array: views of every other float; of a
** real array: a itself / a new read-only-in-spirit array of zeros. */
Value nd_complex_part(VM *vm, Value self, bool imag) {
    NDArray *a = ND_AS(self);
    if (!nd_is_complex(a->dtype)) {
        if (!imag) return self;
        return OBJ_VAL(nd_new(vm, a->dtype, a->ndim, a->shape));
    }
    NDType pt = nd_complex_part_type(a->dtype);
    char *data = a->data + (imag ? nd_itemsize(pt) : 0);
    NDArray *v = nd_view(vm, a, data, a->ndim, a->shape, a->strides);
    v->dtype = pt;
    nd_update_flags(v);
    return OBJ_VAL(v);
}

/* np.real(x) / np.imag(x) for arrays, scalars and Python numbers. */
static Value part_of(VM *vm, Value x, bool imag) {
    if (nd_check(vm, x)) return nd_complex_part(vm, x, imag);
    double re, im;
    if (complex_parts(vm, x, &re, &im)) {
        if (IS_COMPLEX(vm, x)) return FLOAT_VAL(imag ? im : re);
        return imag ? (IS_FLOAT(x) ? FLOAT_VAL(0.0) : INT_VAL(0)) : x;
    }
    NDArray *a = nd_array_from(vm, x, -1, false);
    vm_push_root(vm, OBJ_VAL(a));
    Value r = nd_complex_part(vm, OBJ_VAL(a), imag);
    vm_push_root(vm, r);
    NDArray *c = nd_copy(vm, ND_AS(r));
    vm_pop_roots(vm, 2);
    return nd_result(vm, c);
}

static Value f_real(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "real", kw);
    arg_between(vm, "real", argc, 1, 1);
    return part_of(vm, argv[0], false);
}

static Value f_imag(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "imag", kw);
    arg_between(vm, "imag", argc, 1, 1);
    return part_of(vm, argv[0], true);
}

/* u of x (array, numpy scalar or Python number); real_out: the result is
** the real dtype of x's parts (angle), else x's dtype (conj). */
static Value apply_unary(VM *vm, NDComplexUn u, Value x, bool real_out) {
    NDArray *a = nd_array_from(vm, x, -1, false);
    vm_push_root(vm, OBJ_VAL(a));
    NDType ot = a->dtype;
    if (real_out) ot = nd_is_complex(ot) ? nd_complex_part_type(ot) : nd_is_float(ot) ? ot : ND_FLOAT64;
    NDArray *r = nd_empty(vm, ot, a->ndim, a->shape);
    vm_push_root(vm, OBJ_VAL(r));
    if (nd_is_complex(a->dtype) || u == NDC_ANGLE) nd_complex_unary(u, a, r);
    else nd_assign(vm, r, a); /* conj of a real array is itself */
    vm_pop_roots(vm, 2);
    return nd_result(vm, r);
}

static Value f_conj(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "conjugate", kw);
    arg_between(vm, "conjugate", argc, 1, 1);
    return apply_unary(vm, NDC_CONJ, argv[0], false);
}

/* np.angle(z, deg=False) */
static Value f_angle(VM *vm, int argc, Value *argv, Dict *kw) {
    Value deg = kw_take(vm, kw, "deg");
    kw_done(vm, "angle", kw);
    arg_between(vm, "angle", argc, 1, 2);
    if (argc == 2) deg = argv[1];
    Value r = apply_unary(vm, NDC_ANGLE, argv[0], true);
    if (!IS_EMPTY(deg) && vm_truthy(vm, deg)) {
        vm_push_root(vm, r);
        r = nd_binop(vm, BINOP_MUL, r, FLOAT_VAL(180.0 / M_PI));
        vm_pop_roots(vm, 1);
    }
    return r;
}

void nd_complex_init(VM *vm, NDState *st, Module *m) {
    module_add_function(vm, m, "real", f_real);
    module_add_function(vm, m, "imag", f_imag);
    module_add_function(vm, m, "conj", f_conj);
    module_add_function(vm, m, "conjugate", f_conj);
    module_add_function(vm, m, "angle", f_angle);
    /* a.conj() / z.conjugate(): self is the one argument np.conj takes */
    type_add_method(vm, st->t_array, "conj", f_conj);
    type_add_method(vm, st->t_array, "conjugate", f_conj);
    for (int i = 0; i < ND__COUNT; i++) {
        type_add_method(vm, st->t_scalar[i], "conjugate", f_conj);
        type_add_method(vm, st->t_scalar[i], "conj", f_conj);
    }
}
