/*
** cmath.c — Python's cmath module on C99's <complex.h>. glibc's complex
** functions follow C99 Annex G (branch cuts, signed zeros, infinities and
** NaNs), as CPython's own tables do; what C99 leaves silent, CPython's
** error rules add: a pole is ValueError("math domain error"), an infinite
** result from finite input OverflowError("math range error").
*/
#include <complex.h>
#ifndef CMPLX /* clang's <complex.h> may lack C11's CMPLX */
#define CMPLX(re, im) __builtin_complex((double)(re), (double)(im))
#endif
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "complex_num.h"
#include "stdlib_priv.h"

typedef double complex (*CFn)(double complex);

static _Noreturn void domain_error(VM *vm) { vm_raise_kind(vm, ValueError, "math domain error"); }
static _Noreturn void range_error(VM *vm) { vm_raise_kind(vm, OverflowError, "math range error"); }

static double complex arg_complex(VM *vm, Value v) {
    double re, im;
    char msg[96];
    snprintf(msg, sizeof msg, "must be real number, not %s", vm_type_name(vm, v));
    complex_coerce(vm, v, &re, &im, msg);
    return CMPLX(re, im);
}

static void one_arg(VM *vm, const char *name, int argc, Dict *kwargs) {
    if (kwargs && kwargs->count) vm_raise_kind(vm, TypeError, "cmath.%s() takes no keyword arguments", name);
    if (argc != 1) vm_raise_kind(vm, TypeError, "cmath.%s() takes exactly one argument (%d given)", name, argc);
}

static Value box(VM *vm, double complex z) { return complex_value(vm, creal(z), cimag(z)); }

/* ---- finite arguments: CPython's formulas, so the last bits agree ----
** (they avoid intermediate overflow and keep the branch cuts continuous
** from the side C99 specifies). LARGE: beyond it, squaring overflows. */
#define LARGE (DBL_MAX / 4.0)
#define LOG_LARGE 708.3964185322641 /* log(LARGE) */
#define SQRT_LARGE 6.703903964971298e+153 /* sqrt(LARGE) */
#define SQRT_DBL_MIN 1.4916681462400413e-154

static double complex mk(double re, double im) { return CMPLX(re, im); }
/* i*z and -i*z, as CPython writes sin/tan/asin/atan through their hyperbolic twins */
static double complex times_i(double complex z) { return mk(-cimag(z), creal(z)); }
static double complex times_minus_i(double complex z) { return mk(cimag(z), -creal(z)); }

static double complex f_sqrt_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (x == 0.0 && y == 0.0) return mk(0.0, y);
    double ax = fabs(x), ay = fabs(y), s;
    if (ax < DBL_MIN && ay < DBL_MIN) { /* hypot would be subnormal: scale up by 2**53 */
        ax = ldexp(ax, 53);
        s = ldexp(sqrt(ax + hypot(ax, ldexp(ay, 53))), -27);
    } else {
        ax /= 8.0;
        s = 2.0 * sqrt(ax + hypot(ax, ay / 8.0));
    }
    double d = ay / (2.0 * s);
    return x >= 0.0 ? mk(s, copysign(d, y)) : mk(d, copysign(s, y));
}

static double complex f_exp_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (x > LOG_LARGE) {
        double l = exp(x - 1.0);
        return mk(l * cos(y) * M_E, l * sin(y) * M_E);
    }
    double l = exp(x);
    return mk(l * cos(y), l * sin(y));
}

static double complex f_log_finite(double complex z) {
    double x = creal(z), y = cimag(z), ax = fabs(x), ay = fabs(y), re;
    if (ax > LARGE || ay > LARGE) {
        re = log(hypot(ax / 2.0, ay / 2.0)) + M_LN2;
    } else if (ax < DBL_MIN && ay < DBL_MIN) {
        re = (ax > 0.0 || ay > 0.0) ? log(hypot(ldexp(ax, 53), ldexp(ay, 53))) - 53 * M_LN2 : -INFINITY;
    } else {
        double h = hypot(ax, ay);
        if (0.71 <= h && h <= 1.73) { /* near 1: log1p keeps the digits */
            double am = ax > ay ? ax : ay, an = ax > ay ? ay : ax;
            re = log1p((am - 1) * (am + 1) + an * an) / 2.0;
        } else {
            re = log(h);
        }
    }
    return mk(re, atan2(y, x));
}

static double complex f_log10_finite(double complex z) {
    double complex r = f_log_finite(z);
    return mk(creal(r) / M_LN10, cimag(r) / M_LN10);
}

static double complex f_sinh_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (fabs(x) > LOG_LARGE) {
        double xm1 = x - copysign(1.0, x);
        return mk(cos(y) * sinh(xm1) * M_E, sin(y) * cosh(xm1) * M_E);
    }
    return mk(cos(y) * sinh(x), sin(y) * cosh(x));
}

static double complex f_cosh_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (fabs(x) > LOG_LARGE) {
        double xm1 = x - copysign(1.0, x);
        return mk(cos(y) * cosh(xm1) * M_E, sin(y) * sinh(xm1) * M_E);
    }
    return mk(cos(y) * cosh(x), sin(y) * sinh(x));
}

static double complex f_tanh_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (fabs(x) > LOG_LARGE) return mk(copysign(1.0, x), 4.0 * sin(y) * cos(y) * exp(-2.0 * fabs(x)));
    double tx = tanh(x), ty = tan(y), cx = 1.0 / cosh(x), txty = tx * ty, denom = 1.0 + txty * txty;
    return mk(tx * (1.0 + ty * ty) / denom, ((ty / denom) * cx) * cx);
}

static double complex f_sin_finite(double complex z) { return times_minus_i(f_sinh_finite(times_i(z))); }
static double complex f_cos_finite(double complex z) { return f_cosh_finite(times_i(z)); }
static double complex f_tan_finite(double complex z) { return times_minus_i(f_tanh_finite(times_i(z))); }

static double complex f_asinh_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (fabs(x) > LARGE || fabs(y) > LARGE) {
        double l = log(hypot(x / 2.0, y / 2.0)) + M_LN2 * 2.0;
        return mk(y >= 0.0 ? copysign(l, x) : -copysign(l, -x), atan2(y, fabs(x)));
    }
    double complex s1 = f_sqrt_finite(mk(1.0 + y, -x)), s2 = f_sqrt_finite(mk(1.0 - y, x));
    return mk(asinh(creal(s1) * cimag(s2) - creal(s2) * cimag(s1)),
              atan2(y, creal(s1) * creal(s2) - cimag(s1) * cimag(s2)));
}

static double complex f_acos_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (fabs(x) > LARGE || fabs(y) > LARGE) {
        double l = log(hypot(x / 2.0, y / 2.0)) + M_LN2 * 2.0;
        return mk(atan2(fabs(y), x), x < 0.0 ? -copysign(l, y) : copysign(l, -y));
    }
    double complex s1 = f_sqrt_finite(mk(1.0 - x, -y)), s2 = f_sqrt_finite(mk(1.0 + x, y));
    return mk(2.0 * atan2(creal(s1), creal(s2)), asinh(creal(s2) * cimag(s1) - cimag(s2) * creal(s1)));
}

static double complex f_acosh_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (fabs(x) > LARGE || fabs(y) > LARGE) return mk(log(hypot(x / 2.0, y / 2.0)) + M_LN2 * 2.0, atan2(y, x));
    double complex s1 = f_sqrt_finite(mk(x - 1.0, y)), s2 = f_sqrt_finite(mk(x + 1.0, y));
    return mk(asinh(creal(s1) * creal(s2) + cimag(s1) * cimag(s2)), 2.0 * atan2(cimag(s1), creal(s2)));
}

static double complex f_atanh_finite(double complex z) {
    double x = creal(z), y = cimag(z);
    if (x < 0.0) { /* atanh(z) = -atanh(-z) */
        double complex r = f_atanh_finite(mk(-x, -y));
        return mk(-creal(r), -cimag(r));
    }
    double ay = fabs(y);
    if (x > SQRT_LARGE || ay > SQRT_LARGE) { /* ~ 1/z +- i pi/2 */
        double h = hypot(x / 2.0, y / 2.0);
        return mk(x / 4.0 / h / h, -copysign(M_PI / 2.0, -y));
    }
    if (x == 1.0 && ay < SQRT_DBL_MIN) {
        if (ay == 0.0) return mk(INFINITY, y);
        return mk(-log(sqrt(ay) / sqrt(hypot(ay, 2.0))), copysign(atan2(2.0, -ay) / 2, y));
    }
    return mk(log1p(4.0 * x / ((1 - x) * (1 - x) + ay * ay)) / 4.0, -atan2(-2.0 * y, (1 - x) * (1 + x) - ay * ay) / 2.0);
}

static double complex f_asin_finite(double complex z) { return times_minus_i(f_asinh_finite(times_i(z))); }
static double complex f_atan_finite(double complex z) { return times_minus_i(f_atanh_finite(times_i(z))); }

/* How a function reports errors for finite input. */
typedef enum {
    ERR_NONE,     /* total (sqrt, the inverse trig functions, tan) */
    ERR_OVERFLOW, /* an infinite part is an overflow (exp, sin, cosh ...) */
    ERR_POLE_0,   /* log: 0 is a pole */
    ERR_POLE_1,   /* atanh: +-1 are poles */
    ERR_POLE_I,   /* atan: +-1j are poles */
} ErrRule;

/* fn(z): finite z through CPython's formula (finite) with the function's
** error rule; otherwise C99 Annex G's special value (c99), where the
** "invalid" floating-point exception is CPython's ValueError. */
static double complex apply(VM *vm, double complex z, CFn finite, CFn c99, ErrRule rule) {
    double re = creal(z), im = cimag(z);
    if (!isfinite(re) || !isfinite(im)) {
        feclearexcept(FE_INVALID);
        double complex r = c99(z);
        if (fetestexcept(FE_INVALID) && !isnan(re) && !isnan(im)) domain_error(vm);
        return r;
    }
    if (rule == ERR_POLE_0 && re == 0.0 && im == 0.0) domain_error(vm);
    if (rule == ERR_POLE_1 && im == 0.0 && fabs(re) == 1.0) domain_error(vm);
    if (rule == ERR_POLE_I && re == 0.0 && fabs(im) == 1.0) domain_error(vm);
    double complex r = finite(z);
    if (rule == ERR_OVERFLOW && (isinf(creal(r)) || isinf(cimag(r)))) range_error(vm);
    return r;
}

#define CMATH_1(name, c99, rule)                                                       \
    static Value f_##name(VM *vm, int argc, Value *argv, Dict *kwargs) {              \
        one_arg(vm, #name, argc, kwargs);                                             \
        return box(vm, apply(vm, arg_complex(vm, argv[0]), f_##name##_finite, c99, rule)); \
    }

static double complex c_log10(double complex z) { return clog(z) / M_LN10; }

CMATH_1(sqrt, csqrt, ERR_NONE)
CMATH_1(exp, cexp, ERR_OVERFLOW)
CMATH_1(log10, c_log10, ERR_POLE_0)
CMATH_1(sin, csin, ERR_OVERFLOW)
CMATH_1(cos, ccos, ERR_OVERFLOW)
CMATH_1(tan, ctan, ERR_NONE)
CMATH_1(asin, casin, ERR_NONE)
CMATH_1(acos, cacos, ERR_NONE)
CMATH_1(atan, catan, ERR_POLE_I)
CMATH_1(sinh, csinh, ERR_OVERFLOW)
CMATH_1(cosh, ccosh, ERR_OVERFLOW)
CMATH_1(tanh, ctanh, ERR_NONE)
CMATH_1(asinh, casinh, ERR_NONE)
CMATH_1(acosh, cacosh, ERR_NONE)
CMATH_1(atanh, catanh, ERR_POLE_1)

/* log without the pole error (log(0, base) is -inf+nanj in CPython) */
static double complex apply_quiet(double complex z) {
    return isfinite(creal(z)) && isfinite(cimag(z)) ? f_log_finite(z) : clog(z);
}

/* log(z[, base]) = log(z) / log(base); a base whose log is 0 (1) or a
** pole (0) is a domain error, as CPython's errno makes it. */
static Value f_log(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value z = argc > 0 ? argv[0] : kw_take(vm, kwargs, "x");
    Value b = argc > 1 ? argv[1] : kw_take(vm, kwargs, "base");
    kw_done(vm, "log", kwargs);
    if (argc > 2) vm_raise_kind(vm, TypeError, "log expected at most 2 arguments, got %d", argc);
    if (IS_EMPTY(z)) vm_raise_kind(vm, TypeError, "log expected at least 1 argument, got 0");
    double complex x = arg_complex(vm, z);
    if (IS_EMPTY(b)) return box(vm, apply(vm, x, f_log_finite, clog, ERR_POLE_0));
    double complex base = arg_complex(vm, b);
    double complex lx = apply_quiet(x), lb = apply_quiet(base);
    if (creal(lb) == 0.0 && cimag(lb) == 0.0) domain_error(vm);
    if (isfinite(creal(base)) && isfinite(cimag(base)) && creal(base) == 0.0 && cimag(base) == 0.0)
        domain_error(vm);
    /* complex division as Python's / does it (CPython divides with _Py_c_quot) */
    Value q = vm_binop(vm, BINOP_TRUEDIV, box(vm, lx), box(vm, lb));
    return q;
}

static Value f_phase(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "phase", argc, kwargs);
    double complex z = arg_complex(vm, argv[0]);
    return FLOAT_VAL(atan2(cimag(z), creal(z)));
}

static Value f_polar(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "polar", argc, kwargs);
    double complex z = arg_complex(vm, argv[0]);
    double re = creal(z), im = cimag(z), r = hypot(re, im);
    if (isinf(r) && isfinite(re) && isfinite(im)) range_error(vm);
    Value items[2] = {FLOAT_VAL(r), FLOAT_VAL(atan2(im, re))};
    return OBJ_VAL(tuple_from_array(vm, 2, items));
}

/* rect(r, phi) = r * (cos(phi) + i sin(phi)) with CPython's values where r
** or phi is not finite (an infinite angle is a domain error unless r is 0). */
static Value f_rect(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (kwargs && kwargs->count) vm_raise_kind(vm, TypeError, "rect() takes no keyword arguments");
    if (argc != 2) vm_raise_kind(vm, TypeError, "rect expected 2 arguments, got %d", argc);
    double r = arg_float(vm, "rect", argv[0]), phi = arg_float(vm, "rect", argv[1]);
    double re, im;
    if (isfinite(r) && isfinite(phi)) {
        re = phi == 0.0 ? r : r * cos(phi);
        im = phi == 0.0 ? r * phi : r * sin(phi);
    } else if (isinf(phi) && !isnan(r) && r != 0.0) {
        domain_error(vm);
    } else if (!isfinite(phi)) { /* phi NaN, or phi infinite with r 0 or NaN */
        if (r == 0.0) re = 0.0, im = 0.0;
        else if (isinf(r)) re = INFINITY, im = NAN;
        else re = NAN, im = NAN;
    } else if (isnan(r)) {
        re = NAN, im = phi == 0.0 ? 0.0 : NAN;
    } else if (phi == 0.0) { /* r infinite */
        re = r, im = signbit(r) ? -phi : phi;
    } else {
        re = r * cos(phi), im = r * sin(phi);
    }
    return complex_value(vm, re, im);
}

static Value f_isfinite(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "isfinite", argc, kwargs);
    double complex z = arg_complex(vm, argv[0]);
    return BOOL_VAL(isfinite(creal(z)) && isfinite(cimag(z)));
}

static Value f_isinf(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "isinf", argc, kwargs);
    double complex z = arg_complex(vm, argv[0]);
    return BOOL_VAL(isinf(creal(z)) || isinf(cimag(z)));
}

static Value f_isnan(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "isnan", argc, kwargs);
    double complex z = arg_complex(vm, argv[0]);
    return BOOL_VAL(isnan(creal(z)) || isnan(cimag(z)));
}

static double kw_double(VM *vm, Dict *kwargs, const char *name, double dflt) {
    Value v = kw_take(vm, kwargs, name);
    return IS_EMPTY(v) ? dflt : arg_float(vm, "isclose", v);
}

static Value f_isclose(VM *vm, int argc, Value *argv, Dict *kwargs) {
    double rel_tol = kw_double(vm, kwargs, "rel_tol", 1e-09), abs_tol = kw_double(vm, kwargs, "abs_tol", 0.0);
    Value a = argc > 0 ? argv[0] : kw_take(vm, kwargs, "a");
    Value b = argc > 1 ? argv[1] : kw_take(vm, kwargs, "b");
    kw_done(vm, "isclose", kwargs);
    if (argc > 2) vm_raise_kind(vm, TypeError, "isclose() takes exactly 2 positional arguments (%d given)", argc);
    if (IS_EMPTY(a)) vm_raise_kind(vm, TypeError, "isclose() missing required argument 'a' (pos 1)");
    if (IS_EMPTY(b)) vm_raise_kind(vm, TypeError, "isclose() missing required argument 'b' (pos 2)");
    double complex x = arg_complex(vm, a), y = arg_complex(vm, b);
    if (rel_tol < 0.0 || abs_tol < 0.0) vm_raise_kind(vm, ValueError, "tolerances must be non-negative");
    if (creal(x) == creal(y) && cimag(x) == cimag(y)) return BOOL_VAL(true);
    if (isinf(creal(x)) || isinf(cimag(x)) || isinf(creal(y)) || isinf(cimag(y))) return BOOL_VAL(false);
    double diff = cabs(y - x);
    return BOOL_VAL(diff <= rel_tol * cabs(y) || diff <= rel_tol * cabs(x) || diff <= abs_tol);
}

Module *stdlib_cmath(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "cmath"));
    vm_push_root(vm, OBJ_VAL(m));
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"sqrt", f_sqrt},     {"exp", f_exp},       {"log", f_log},         {"log10", f_log10},
        {"sin", f_sin},       {"cos", f_cos},       {"tan", f_tan},         {"asin", f_asin},
        {"acos", f_acos},     {"atan", f_atan},     {"sinh", f_sinh},       {"cosh", f_cosh},
        {"tanh", f_tanh},     {"asinh", f_asinh},   {"acosh", f_acosh},     {"atanh", f_atanh},
        {"phase", f_phase},   {"polar", f_polar},   {"rect", f_rect},       {"isfinite", f_isfinite},
        {"isinf", f_isinf},   {"isnan", f_isnan},   {"isclose", f_isclose},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
    dict_set_cstr(vm, m->dict, "pi", FLOAT_VAL(3.141592653589793238462643383279502884));
    dict_set_cstr(vm, m->dict, "e", FLOAT_VAL(2.718281828459045235360287471352662498));
    dict_set_cstr(vm, m->dict, "tau", FLOAT_VAL(6.283185307179586476925286766559005768));
    dict_set_cstr(vm, m->dict, "inf", FLOAT_VAL(INFINITY));
    dict_set_cstr(vm, m->dict, "nan", FLOAT_VAL(NAN));
    dict_set_cstr(vm, m->dict, "infj", complex_value(vm, 0.0, INFINITY));
    dict_set_cstr(vm, m->dict, "nanj", complex_value(vm, 0.0, NAN));
    vm_pop_roots(vm, 1);
    return m;
}
