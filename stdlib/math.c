/*
** math.c — Python 3.11's math module. Error reporting follows CPython:
** a NaN from non-NaN input or a pole raises ValueError("math domain
** error"), an overflow OverflowError("math range error"); gamma, lgamma,
** hypot/dist and fsum use CPython's own algorithms so results match to
** the last bit. Integer functions are exact for ints of any size
** (vm/bigint.c, on GMP).
*/
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "stdlib_priv.h"
#include "../vm/bigint.h"

/* ------------------------------------------------------------------ */
/* arguments and error rules                                           */
/* ------------------------------------------------------------------ */

/* A real-number argument: int, bool, float, or an object with __float__
** or __index__. */
static double to_double(VM *vm, Value v) {
    if (IS_FLOAT(v)) return AS_FLOAT(v);
    if (IS_INTLIKE(v)) return (double)AS_INTLIKE(v);
    if (bigint_is(vm, v)) return bigint_to_double(vm, v);
    if (IS_OBJ(v)) {
        Type *t = vm_typeof(vm, v);
        Value f = type_lookup(vm, t, cstr_name(vm, "__float__"));
        if (!IS_EMPTY(f)) {
            Value a = v;
            Value r = vm_call(vm, f, 1, &a);
            if (!IS_FLOAT(r))
                vm_raise_kind(vm, TypeError, "%s.__float__ returned non-float (type %s)", vm_type_name(vm, v),
                              vm_type_name(vm, r));
            return AS_FLOAT(r);
        }
        if (!IS_EMPTY(type_lookup(vm, t, cstr_name(vm, "__index__")))) return (double)vm_to_index(vm, v);
    }
    vm_raise_kind(vm, TypeError, "must be real number, not %s", vm_type_name(vm, v));
}

static _Noreturn void domain_error(VM *vm) { vm_raise_kind(vm, ValueError, "math domain error"); }
static _Noreturn void range_error(VM *vm) { vm_raise_kind(vm, OverflowError, "math range error"); }

/* CPython's is_error: errno EDOM is a domain error; ERANGE is an overflow
** unless the result is small (an underflow, which is not an error). */
static void check_errno(VM *vm, double r) {
    if (errno == EDOM) domain_error(vm);
    if (errno == ERANGE && fabs(r) >= 1.5) range_error(vm);
}

static void one_arg(VM *vm, const char *name, int argc, Dict *kwargs) {
    if (kwargs && kwargs->count) vm_raise_kind(vm, TypeError, "math.%s() takes no keyword arguments", name);
    if (argc != 1) vm_raise_kind(vm, TypeError, "math.%s() takes exactly one argument (%d given)", name, argc);
}

static void two_args(VM *vm, const char *name, int argc, Dict *kwargs) {
    if (kwargs && kwargs->count) vm_raise_kind(vm, TypeError, "%s() takes no keyword arguments", name);
    if (argc != 2) vm_raise_kind(vm, TypeError, "%s expected 2 arguments, got %d", name, argc);
}

/* math_1: a libm function of one argument with CPython's error rules */
static Value math_1(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, double (*f)(double),
                    bool can_overflow) {
    one_arg(vm, name, argc, kwargs);
    double x = to_double(vm, argv[0]);
    errno = 0;
    double r = f(x);
    if (isnan(r) && !isnan(x)) domain_error(vm);
    if (isinf(r) && isfinite(x)) {
        if (can_overflow) range_error(vm);
        domain_error(vm);
    }
    if (isfinite(r) && errno) check_errno(vm, r);
    return FLOAT_VAL(r);
}

/* math_1a: the function sets errno itself */
static Value math_1a(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, double (*f)(double)) {
    one_arg(vm, name, argc, kwargs);
    double x = to_double(vm, argv[0]);
    errno = 0;
    double r = f(x);
    if (errno) check_errno(vm, r);
    return FLOAT_VAL(r);
}

/* math_2: two arguments; NaN from non-NaN input is a domain error, an
** infinity from finite input an overflow */
static Value math_2(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, double (*f)(double, double)) {
    two_args(vm, name, argc, kwargs);
    double x = to_double(vm, argv[0]), y = to_double(vm, argv[1]);
    double r = f(x, y);
    if (isnan(r) && !isnan(x) && !isnan(y)) domain_error(vm);
    if (isinf(r) && isfinite(x) && isfinite(y)) range_error(vm);
    return FLOAT_VAL(r);
}

/* float -> int (ceil, floor, trunc) */
static Value double_to_int(VM *vm, double d) {
    if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
    if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
    return bigint_from_double(vm, d);
}

/* Calls v.<name>() when v's type defines it (instances: __ceil__ ...). */
static bool call_special(VM *vm, Value v, const char *name, Value *out) {
    if (!IS_OBJ(v)) return false;
    Value f = type_lookup(vm, vm_typeof(vm, v), cstr_name(vm, name));
    if (IS_EMPTY(f)) return false;
    Value a = v;
    *out = vm_call(vm, f, 1, &a);
    return true;
}

/* ------------------------------------------------------------------ */
/* gamma and lgamma: CPython's Lanczos approximation (N=13, g=6.0247)  */
/* ------------------------------------------------------------------ */

static const double lanczos_g = 6.024680040776729583740234375;
static const double lanczos_g_minus_half = 5.524680040776729583740234375;
static const double lanczos_num[13] = {
    23531376880.410759688572007674451636754734846804940,
    42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843,
    17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708,
    1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801,
    31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768,
    186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024,
    210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408,
};
/* coefficients of x(x+1)...(x+11), lowest power first */
static const double lanczos_den[13] = {0.0,       39916800.0, 120543840.0, 150917976.0, 105258076.0,
                                       45995730.0, 13339535.0, 2637558.0,   357423.0,    32670.0,
                                       1925.0,     66.0,       1.0};
/* (n-1)! for n = 1..23 */
static const double gamma_integral[23] = {
    1.0, 1.0, 2.0, 6.0, 24.0, 120.0, 720.0, 5040.0, 40320.0, 362880.0, 3628800.0, 39916800.0,
    479001600.0, 6227020800.0, 87178291200.0, 1307674368000.0, 20922789888000.0, 355687428096000.0,
    6402373705728000.0, 121645100408832000.0, 2432902008176640000.0, 51090942171709440000.0,
    1124000727777607680000.0,
};

static const double pi_d = 3.141592653589793238462643383279502884197;
static const double logpi = 1.144729885849400174143427351353058711647;

/* The rational Lanczos sum; evaluated in 1/x for large x to avoid overflow. */
static double lanczos_sum(double x) {
    double num = 0.0, den = 0.0;
    if (x < 5.0) {
        for (int i = 12; i >= 0; i--) {
            num = num * x + lanczos_num[i];
            den = den * x + lanczos_den[i];
        }
    } else {
        for (int i = 0; i < 13; i++) {
            num = num / x + lanczos_num[i];
            den = den / x + lanczos_den[i];
        }
    }
    return num / den;
}

/* sin(pi*x), exact at integers and half-integers (finite x) */
static double sinpi(double x) {
    double y = fmod(fabs(x), 2.0);
    int n = (int)round(2.0 * y);
    double r;
    switch (n) {
    case 0: r = sin(pi_d * y); break;
    case 1: r = cos(pi_d * (y - 0.5)); break;
    case 2: r = sin(pi_d * (1.0 - y)); break;
    case 3: r = -cos(pi_d * (y - 1.5)); break;
    default: r = sin(pi_d * (y - 2.0)); break;
    }
    return copysign(1.0, x) * r;
}

static double m_tgamma(double x) {
    if (!isfinite(x)) {
        if (isnan(x) || x > 0.0) return x;
        errno = EDOM;
        return NAN;
    }
    if (x == 0.0) {
        errno = EDOM;
        return copysign(HUGE_VAL, x);
    }
    if (x == floor(x)) {
        if (x < 0.0) {
            errno = EDOM;
            return NAN;
        }
        if (x <= 23) return gamma_integral[(int)x - 1];
    }
    double absx = fabs(x);
    if (absx < 1e-20) {
        double r = 1.0 / x;
        if (isinf(r)) errno = ERANGE;
        return r;
    }
    if (absx > 200.0) {
        if (x < 0.0) return 0.0 / sinpi(x);
        errno = ERANGE;
        return HUGE_VAL;
    }
    double y = absx + lanczos_g_minus_half;
    /* z: rounding error of y, used for a first-order correction */
    double z;
    if (absx > lanczos_g_minus_half) {
        volatile double q = y - absx;
        z = q - lanczos_g_minus_half;
    } else {
        volatile double q = y - lanczos_g_minus_half;
        z = q - absx;
    }
    z = z * lanczos_g / y;
    double r;
    if (x < 0.0) {
        r = -pi_d / sinpi(absx) / absx * exp(y) / lanczos_sum(absx);
        r -= z * r;
        if (absx < 140.0) {
            r /= pow(y, absx - 0.5);
        } else {
            double sqrtpow = pow(y, absx / 2.0 - 0.25);
            r /= sqrtpow;
            r /= sqrtpow;
        }
    } else {
        r = lanczos_sum(absx) / exp(y);
        r += z * r;
        if (absx < 140.0) {
            r *= pow(y, absx - 0.5);
        } else {
            double sqrtpow = pow(y, absx / 2.0 - 0.25);
            r *= sqrtpow;
            r *= sqrtpow;
        }
    }
    if (isinf(r)) errno = ERANGE;
    return r;
}

static double m_lgamma(double x) {
    if (!isfinite(x)) {
        if (isnan(x)) return x;
        return HUGE_VAL;
    }
    if (x == floor(x) && x <= 2.0) {
        if (x <= 0.0) {
            errno = EDOM;
            return HUGE_VAL;
        }
        return 0.0;
    }
    double absx = fabs(x);
    if (absx < 1e-20) return -log(absx);
    double r = log(lanczos_sum(absx)) - lanczos_g;
    r += (absx - 0.5) * (log(absx + lanczos_g - 0.5) - 1);
    if (x < 0.0) r = logpi - log(fabs(sinpi(absx))) - log(absx) - r;
    if (isinf(r)) errno = ERANGE;
    return r;
}

/* ------------------------------------------------------------------ */
/* logarithms                                                          */
/* ------------------------------------------------------------------ */

static double m_log(double x) {
    if (isfinite(x)) {
        if (x > 0.0) return log(x);
        errno = EDOM;
        return x == 0.0 ? -HUGE_VAL : NAN;
    }
    if (isnan(x) || x > 0.0) return x;
    errno = EDOM;
    return NAN;
}

static double m_log2(double x) {
    if (!isfinite(x)) {
        if (isnan(x) || x > 0.0) return x;
        errno = EDOM;
        return NAN;
    }
    if (x > 0.0) return log2(x);
    errno = EDOM;
    return x == 0.0 ? -HUGE_VAL : NAN;
}

static double m_log10(double x) {
    if (isfinite(x)) {
        if (x > 0.0) return log10(x);
        errno = EDOM;
        return x == 0.0 ? -HUGE_VAL : NAN;
    }
    if (isnan(x) || x > 0.0) return x;
    errno = EDOM;
    return NAN;
}

static double m_log1p(double x) { return x == 0.0 ? x : log1p(x); }

/* loghelper: ints must be positive; floats go through math_1 rules */
static double log_of(VM *vm, Value v, double (*f)(double)) {
    if (IS_INTLIKE(v)) {
        if (AS_INTLIKE(v) <= 0) domain_error(vm);
        return f((double)AS_INTLIKE(v));
    }
    if (bigint_is(vm, v)) {
        /* too large for a double: log(x * 2**e) = log(x) + log(2) * e, as CPython */
        if (bigint_sign(vm, v) <= 0) domain_error(vm);
        int64_t e;
        double x = bigint_frexp(vm, v, &e);
        if (e <= 1024) return f(bigint_to_double(vm, v));
        return f(x) + f(2.0) * (double)e;
    }
    double x = to_double(vm, v);
    errno = 0;
    double r = f(x);
    if (isnan(r) && !isnan(x)) domain_error(vm);
    if (isinf(r) && isfinite(x)) domain_error(vm);
    if (isfinite(r) && errno) check_errno(vm, r);
    return r;
}

static Value f_log_fn(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "log", kwargs);
    if (argc < 1 || argc > 2)
        vm_raise_kind(vm, TypeError, "log expected %s, got %d", argc < 1 ? "at least 1 argument" : "at most 2 arguments",
                      argc);
    double num = log_of(vm, argv[0], m_log);
    if (argc == 1) return FLOAT_VAL(num);
    double den = log_of(vm, argv[1], m_log);
    if (den == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float division by zero");
    return FLOAT_VAL(num / den);
}

static Value f_log2_fn(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "log2", argc, kwargs);
    return FLOAT_VAL(log_of(vm, argv[0], m_log2));
}

static Value f_log10_fn(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "log10", argc, kwargs);
    return FLOAT_VAL(log_of(vm, argv[0], m_log10));
}

/* ------------------------------------------------------------------ */
/* one-argument functions                                              */
/* ------------------------------------------------------------------ */

#define FUNC1(name, fn, ovf)                                                    \
    static Value f_##name(VM *vm, int argc, Value *argv, Dict *kwargs) {        \
        return math_1(vm, #name, argc, argv, kwargs, fn, ovf);                  \
    }
#define FUNC1A(name, fn)                                                        \
    static Value f_##name(VM *vm, int argc, Value *argv, Dict *kwargs) {        \
        return math_1a(vm, #name, argc, argv, kwargs, fn);                      \
    }

FUNC1(acos, acos, false)
FUNC1(acosh, acosh, false)
FUNC1(asin, asin, false)
FUNC1(asinh, asinh, false)
FUNC1(atan, atan, false)
FUNC1(atanh, atanh, false)
FUNC1(cbrt, cbrt, false)
FUNC1(cos, cos, false)
FUNC1(cosh, cosh, true)
FUNC1(exp, exp, true)
FUNC1(exp2, exp2, true)
FUNC1(expm1, expm1, true)
FUNC1(fabs, fabs, false)
FUNC1(log1p, m_log1p, false)
FUNC1(sin, sin, false)
FUNC1(sinh, sinh, true)
FUNC1(sqrt, sqrt, false)
FUNC1(tan, tan, false)
FUNC1(tanh, tanh, false)
FUNC1A(erf, erf)
FUNC1A(erfc, erfc)
FUNC1A(gamma, m_tgamma)
FUNC1A(lgamma, m_lgamma)

static Value f_ceil(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "ceil", argc, kwargs);
    Value v = argv[0], r;
    if (IS_FLOAT(v)) return double_to_int(vm, ceil(AS_FLOAT(v)));
    if (IS_INTLIKE(v)) return INT_VAL(AS_INTLIKE(v));
    if (bigint_is(vm, v)) return v;
    if (call_special(vm, v, "__ceil__", &r)) return r;
    return double_to_int(vm, ceil(to_double(vm, v)));
}

static Value f_floor(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "floor", argc, kwargs);
    Value v = argv[0], r;
    if (IS_FLOAT(v)) return double_to_int(vm, floor(AS_FLOAT(v)));
    if (IS_INTLIKE(v)) return INT_VAL(AS_INTLIKE(v));
    if (bigint_is(vm, v)) return v;
    if (call_special(vm, v, "__floor__", &r)) return r;
    return double_to_int(vm, floor(to_double(vm, v)));
}

static Value f_trunc(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "trunc", argc, kwargs);
    Value v = argv[0], r;
    if (IS_FLOAT(v)) return double_to_int(vm, trunc(AS_FLOAT(v)));
    if (IS_INTLIKE(v)) return INT_VAL(AS_INTLIKE(v));
    if (bigint_is(vm, v)) return v;
    if (call_special(vm, v, "__trunc__", &r)) return r;
    vm_raise_kind(vm, TypeError, "type %s doesn't define __trunc__ method", vm_type_name(vm, v));
}

static Value f_degrees(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "degrees", argc, kwargs);
    return FLOAT_VAL(to_double(vm, argv[0]) * (180.0 / pi_d));
}

static Value f_radians(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "radians", argc, kwargs);
    return FLOAT_VAL(to_double(vm, argv[0]) * (pi_d / 180.0));
}

static Value f_isfinite(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "isfinite", argc, kwargs);
    return BOOL_VAL(isfinite(to_double(vm, argv[0])));
}

static Value f_isinf(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "isinf", argc, kwargs);
    return BOOL_VAL(isinf(to_double(vm, argv[0])));
}

static Value f_isnan(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "isnan", argc, kwargs);
    return BOOL_VAL(isnan(to_double(vm, argv[0])));
}

static Value pair(VM *vm, Value a, Value b) {
    Tuple *t = tuple_new(vm, 2);
    t->items[0] = a;
    t->items[1] = b;
    return OBJ_VAL(t);
}

static Value f_frexp(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "frexp", argc, kwargs);
    double x = to_double(vm, argv[0]);
    int e = 0;
    if (!(isnan(x) || isinf(x) || x == 0.0)) x = frexp(x, &e);
    return pair(vm, FLOAT_VAL(x), INT_VAL(e));
}

static Value f_modf(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "modf", argc, kwargs);
    double x = to_double(vm, argv[0]);
    if (isinf(x)) return pair(vm, FLOAT_VAL(copysign(0.0, x)), FLOAT_VAL(x));
    if (isnan(x)) return pair(vm, FLOAT_VAL(x), FLOAT_VAL(x));
    double ip;
    double fp = modf(x, &ip);
    return pair(vm, FLOAT_VAL(fp), FLOAT_VAL(ip));
}

static Value f_ulp(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "ulp", argc, kwargs);
    double x = to_double(vm, argv[0]);
    if (isnan(x)) return FLOAT_VAL(x);
    x = fabs(x);
    if (isinf(x)) return FLOAT_VAL(x);
    double x2 = nextafter(x, INFINITY);
    if (isinf(x2)) {
        x2 = nextafter(x, -INFINITY);
        return FLOAT_VAL(x - x2);
    }
    return FLOAT_VAL(x2 - x);
}

/* ------------------------------------------------------------------ */
/* two-argument functions                                              */
/* ------------------------------------------------------------------ */

static Value f_atan2(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return math_2(vm, "atan2", argc, argv, kwargs, atan2);
}
static Value f_copysign(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return math_2(vm, "copysign", argc, argv, kwargs, copysign);
}
static Value f_remainder(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return math_2(vm, "remainder", argc, argv, kwargs, remainder);
}
static Value f_nextafter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    two_args(vm, "nextafter", argc, kwargs);
    return FLOAT_VAL(nextafter(to_double(vm, argv[0]), to_double(vm, argv[1])));
}

static Value f_fmod(VM *vm, int argc, Value *argv, Dict *kwargs) {
    two_args(vm, "fmod", argc, kwargs);
    double x = to_double(vm, argv[0]), y = to_double(vm, argv[1]);
    if (isinf(y) && isfinite(x)) return FLOAT_VAL(x);
    double r = fmod(x, y);
    if (isnan(r) && !isnan(x) && !isnan(y)) domain_error(vm);
    return FLOAT_VAL(r);
}

static Value f_pow(VM *vm, int argc, Value *argv, Dict *kwargs) {
    two_args(vm, "pow", argc, kwargs);
    double x = to_double(vm, argv[0]), y = to_double(vm, argv[1]);
    double r;
    if (!isfinite(x) || !isfinite(y)) {
        /* IEEE specials, as C99 Annex F */
        if (isnan(x)) r = y == 0.0 ? 1.0 : x;
        else if (isnan(y)) r = x == 1.0 ? 1.0 : y;
        else if (isinf(x)) {
            bool odd_y = isfinite(y) && fmod(fabs(y), 2.0) == 1.0;
            if (y > 0.0) r = odd_y ? x : fabs(x);
            else if (y == 0.0) r = 1.0;
            else r = odd_y ? copysign(0.0, x) : 0.0;
        } else {
            if (fabs(x) == 1.0) r = 1.0;
            else if (y > 0.0 && fabs(x) > 1.0) r = y;
            else if (y < 0.0 && fabs(x) < 1.0) r = -y;
            else r = 0.0;
        }
        return FLOAT_VAL(r);
    }
    r = pow(x, y);
    if (isnan(r)) domain_error(vm);
    if (isinf(r)) {
        if (x == 0.0) domain_error(vm);
        range_error(vm);
    }
    return FLOAT_VAL(r);
}

static Value f_ldexp(VM *vm, int argc, Value *argv, Dict *kwargs) {
    two_args(vm, "ldexp", argc, kwargs);
    double x = to_double(vm, argv[0]);
    if (!IS_INTLIKE(argv[1])) vm_raise_kind(vm, TypeError, "Expected an int as second argument to ldexp.");
    int64_t e = AS_INTLIKE(argv[1]);
    double r;
    if (x == 0.0 || !isfinite(x)) r = x;
    else if (e > INT32_MAX) range_error(vm);
    else if (e < INT32_MIN) r = copysign(0.0, x);
    else {
        r = ldexp(x, (int)e);
        if (isinf(r)) range_error(vm);
    }
    return FLOAT_VAL(r);
}

static double get_kw_double(VM *vm, Dict *kwargs, const char *name, double dflt) {
    Value v = kw_take(vm, kwargs, name);
    return IS_EMPTY(v) ? dflt : to_double(vm, v);
}

static Value f_isclose(VM *vm, int argc, Value *argv, Dict *kwargs) {
    double rel_tol = get_kw_double(vm, kwargs, "rel_tol", 1e-09);
    double abs_tol = get_kw_double(vm, kwargs, "abs_tol", 0.0);
    Value a = argc > 0 ? argv[0] : kw_take(vm, kwargs, "a");
    Value b = argc > 1 ? argv[1] : kw_take(vm, kwargs, "b");
    kw_done(vm, "isclose", kwargs);
    if (argc > 2) vm_raise_kind(vm, TypeError, "isclose() takes exactly 2 positional arguments (%d given)", argc);
    if (IS_EMPTY(a)) vm_raise_kind(vm, TypeError, "isclose() missing required argument 'a' (pos 1)");
    if (IS_EMPTY(b)) vm_raise_kind(vm, TypeError, "isclose() missing required argument 'b' (pos 2)");
    double x = to_double(vm, a), y = to_double(vm, b);
    if (rel_tol < 0.0 || abs_tol < 0.0) vm_raise_kind(vm, ValueError, "tolerances must be non-negative");
    if (x == y) return BOOL_VAL(true);
    if (isinf(x) || isinf(y)) return BOOL_VAL(false);
    double diff = fabs(y - x);
    return BOOL_VAL(diff <= fabs(rel_tol * y) || diff <= fabs(rel_tol * x) || diff <= abs_tol);
}

/* ------------------------------------------------------------------ */
/* hypot, dist: CPython's accurate vector norm                         */
/* ------------------------------------------------------------------ */

/* sqrt(sum of squares) of vec (all finite, |v| <= max): the values are
** scaled by a power of two, squared exactly with Veltkamp-Dekker
** splitting, accumulated with compensation, and the square root gets a
** first-order correction. */
static double vector_norm(int64_t n, double *vec, double max, bool found_nan) {
    const double T27 = 134217729.0; /* 2**27 + 1 */
    if (isinf(max)) return max;
    if (found_nan) return NAN;
    if (max == 0.0 || n <= 1) return max;
    int max_e;
    frexp(max, &max_e);
    double csum = 1.0, frac1 = 0.0, frac2 = 0.0, frac3 = 0.0, oldcsum, x, t, hi, lo, h;
    if (max_e >= -1023) {
        double scale = ldexp(1.0, -max_e);
        for (int64_t i = 0; i < n; i++) {
            x = vec[i] * scale;
            t = x * T27;
            hi = t - (t - x);
            lo = x - hi;
            x = hi * hi;
            oldcsum = csum;
            csum += x;
            frac1 += (oldcsum - csum) + x;
            x = 2.0 * hi * lo;
            oldcsum = csum;
            csum += x;
            frac2 += (oldcsum - csum) + x;
            frac3 += lo * lo;
        }
        h = sqrt(csum - 1.0 + (frac1 + frac2 + frac3));
        x = h;
        t = x * T27;
        hi = t - (t - x);
        lo = x - hi;
        x = -hi * hi;
        oldcsum = csum;
        csum += x;
        frac1 += (oldcsum - csum) + x;
        x = -2.0 * hi * lo;
        oldcsum = csum;
        csum += x;
        frac2 += (oldcsum - csum) + x;
        x = -lo * lo;
        oldcsum = csum;
        csum += x;
        frac3 += (oldcsum - csum) + x;
        x = csum - 1.0 + (frac1 + frac2 + frac3);
        return (h + x / (2.0 * h)) / scale;
    }
    /* subnormal max: divide by max instead of scaling */
    for (int64_t i = 0; i < n; i++) {
        x = vec[i] / max;
        x = x * x;
        oldcsum = csum;
        csum += x;
        frac1 += (oldcsum - csum) + x;
    }
    return max * sqrt(csum - 1.0 + frac1);
}

static Value f_hypot(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "hypot", kwargs);
    double stackbuf[16];
    double *coords = argc <= 16 ? stackbuf : gc_malloc(vm, sizeof(double) * (size_t)argc);
    double max = 0.0;
    bool found_nan = false;
    for (int i = 0; i < argc; i++) {
        Value v = argv[i];
        double x;
        if (IS_FLOAT(v)) x = AS_FLOAT(v);
        else if (IS_INTLIKE(v)) x = (double)AS_INTLIKE(v);
        else {
            if (coords != stackbuf) gc_free(vm, coords, sizeof(double) * (size_t)argc);
            vm_raise_kind(vm, TypeError, "must be real number, not %s", vm_type_name(vm, v));
        }
        x = fabs(x);
        coords[i] = x;
        found_nan |= isnan(x);
        if (x > max) max = x;
    }
    double r = vector_norm(argc, coords, max, found_nan);
    if (coords != stackbuf) gc_free(vm, coords, sizeof(double) * (size_t)argc);
    return FLOAT_VAL(r);
}

static Value f_dist(VM *vm, int argc, Value *argv, Dict *kwargs) {
    two_args(vm, "dist", argc, kwargs);
    int base = vm->nroots;
    Value p = argv[0], q = argv[1];
    vm_push_root(vm, q);
    if (!IS_TUPLE(vm, p)) p = OBJ_VAL(tuple_from_iterable(vm, p));
    vm_push_root(vm, p);
    if (!IS_TUPLE(vm, q)) q = OBJ_VAL(tuple_from_iterable(vm, q));
    vm_push_root(vm, q);
    Tuple *tp = AS_TUPLE(p), *tq = AS_TUPLE(q);
    if (tp->len != tq->len)
        vm_raise_kind(vm, ValueError, "both points must have the same number of dimensions");
    int64_t n = tp->len;
    /* a List of floats holds the differences (no malloc'd memory across raises) */
    List *diffs = list_new(vm, n);
    vm_push_root(vm, OBJ_VAL(diffs));
    double max = 0.0;
    bool found_nan = false;
    for (int64_t i = 0; i < n; i++) {
        double px = to_double(vm, tp->items[i]), qx = to_double(vm, tq->items[i]);
        double x = fabs(px - qx);
        list_append(vm, diffs, FLOAT_VAL(x));
        found_nan |= isnan(x);
        if (x > max) max = x;
    }
    double stackbuf[16];
    double *vec = n <= 16 ? stackbuf : gc_malloc(vm, sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) vec[i] = AS_FLOAT(diffs->items[i]);
    double r = vector_norm(n, vec, max, found_nan);
    if (vec != stackbuf) gc_free(vm, vec, sizeof(double) * (size_t)n);
    vm_pop_roots(vm, vm->nroots - base);
    return FLOAT_VAL(r);
}

/* ------------------------------------------------------------------ */
/* sums and products                                                   */
/* ------------------------------------------------------------------ */

/* fsum: Shewchuk's exact partial sums with CPython's final half-even
** correction. Partials are non-overlapping doubles, so at most ~2100. */
typedef struct FSum {
    double p[2200];
    int n;
    double special_sum, inf_sum;
} FSum;

/* Adds x to the partials; returns false on an intermediate overflow. */
static bool fsum_add(FSum *s, double x) {
    double xsave = x;
    int i = 0;
    for (int j = 0; j < s->n; j++) {
        double y = s->p[j];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        volatile double hi = x + y;
        volatile double yr = hi - x;
        double lo = y - yr;
        if (lo != 0.0) s->p[i++] = lo;
        x = hi;
    }
    s->n = i;
    if (x != 0.0) {
        if (!isfinite(x)) {
            /* an infinity or NaN among the inputs, or an overflow */
            if (isfinite(xsave)) return false;
            if (isinf(xsave)) s->inf_sum += xsave;
            s->special_sum += xsave;
            s->n = 0;
        } else {
            s->p[s->n++] = x;
        }
    }
    return true;
}

/* The correctly rounded sum of the partials (specials handled by the caller). */
static double fsum_result(FSum *s) {
    double *p = s->p;
    int n = s->n;
    double hi = 0.0;
    if (n > 0) {
        hi = p[--n];
        double lo = 0.0;
        /* add from the top, stop when the sum becomes inexact */
        while (n > 0) {
            double x = hi, y = p[--n];
            volatile double h = x + y;
            volatile double yr = h - x;
            hi = h;
            lo = y - yr;
            if (lo != 0.0) break;
        }
        /* half-even rounding across partials: when the partials below push
        ** in lo's direction, round hi away */
        if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0))) {
            double y = lo * 2.0;
            volatile double x = hi + y;
            volatile double yr = x - hi;
            if (y == yr) hi = x;
        }
    }
    return hi;
}

static Value f_fsum(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "fsum", argc, kwargs);
    FSum s;
    s.n = 0;
    s.special_sum = s.inf_sum = 0.0;
    int base = vm->nroots;
    Value it = vm_iter(vm, argv[0]);
    vm_push_root(vm, it);
    Value item;
    while (vm_next(vm, it, &item)) {
        if (!fsum_add(&s, to_double(vm, item)))
            vm_raise_kind(vm, OverflowError, "intermediate overflow in fsum");
        if (s.n >= (int)(sizeof s.p / sizeof s.p[0]) - 1) vm_raise_kind(vm, MemoryError, "math.fsum partials");
    }
    vm_pop_roots(vm, vm->nroots - base);
    if (s.special_sum != 0.0) {
        if (isnan(s.inf_sum)) vm_raise_kind(vm, ValueError, "-inf + inf in fsum");
        return FLOAT_VAL(s.special_sum);
    }
    return FLOAT_VAL(fsum_result(&s));
}

static Value f_prod(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value start = kw_take(vm, kwargs, "start");
    kw_done(vm, "prod", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "prod() takes exactly 1 positional argument (%d given)", argc);
    if (IS_EMPTY(start)) start = INT_VAL(1);
    int base = vm->nroots;
    vm_push_root(vm, start);
    Value it = vm_iter(vm, argv[0]);
    vm_push_root(vm, it);
    int r_acc = vm->nroots;
    vm_push_root(vm, start);
    Value item;
    while (vm_next(vm, it, &item)) {
        Value acc = vm->roots[r_acc];
        if (IS_INT(acc) && IS_INTLIKE(item)) {
            int64_t r;
            if (__builtin_mul_overflow(AS_INT(acc), AS_INTLIKE(item), &r))
                vm->roots[r_acc] = vm_binop(vm, BINOP_MUL, acc, item); /* a big int */
            else
                vm->roots[r_acc] = INT_VAL(r);
        } else if (IS_FLOAT(acc) && IS_NUMBER(item)) {
            vm->roots[r_acc] = FLOAT_VAL(AS_FLOAT(acc) * AS_NUMBER(item));
        } else {
            vm_push_root(vm, item);
            vm->roots[r_acc] = vm_binop(vm, BINOP_MUL, acc, item);
            vm_pop_roots(vm, 1);
        }
    }
    Value r = vm->roots[r_acc];
    vm_pop_roots(vm, vm->nroots - base);
    return r;
}

/* ------------------------------------------------------------------ */
/* integer functions                                                   */
/* ------------------------------------------------------------------ */

/* An integer argument of any size: int, bool, or an object with __index__. */
static Value int_arg(VM *vm, Value v) {
    if (bigint_is(vm, v)) return v;
    return INT_VAL(vm_to_index(vm, v));
}

static bool is_negative(VM *vm, Value v) { return bigint_sign(vm, v) < 0; }

static Value f_factorial(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "factorial", argc, kwargs);
    if (IS_FLOAT(argv[0])) vm_raise_kind(vm, TypeError, "'float' object cannot be interpreted as an integer");
    Value n = int_arg(vm, argv[0]);
    if (is_negative(vm, n)) vm_raise_kind(vm, ValueError, "factorial() not defined for negative values");
    if (bigint_is(vm, n))
        vm_raise_kind(vm, OverflowError, "factorial() argument should not exceed %lld", (long long)INT64_MAX);
    int64_t k = AS_INT(n);
    if (k <= 20) {
        int64_t r = 1;
        for (int64_t i = 2; i <= k; i++) r *= i;
        return INT_VAL(r);
    }
    return bigint_factorial(vm, (uint64_t)k);
}

static Value f_comb(VM *vm, int argc, Value *argv, Dict *kwargs) {
    two_args(vm, "comb", argc, kwargs);
    Value n = int_arg(vm, argv[0]), k = int_arg(vm, argv[1]);
    if (is_negative(vm, n)) vm_raise_kind(vm, ValueError, "n must be a non-negative integer");
    if (is_negative(vm, k)) vm_raise_kind(vm, ValueError, "k must be a non-negative integer");
    return bigint_comb(vm, n, k);
}

static Value f_perm(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "perm", kwargs);
    if (argc < 1 || argc > 2)
        vm_raise_kind(vm, TypeError, "perm expected %s, got %d", argc < 1 ? "at least 1 argument" : "at most 2 arguments",
                      argc);
    if (argc == 1 || IS_NONE(argv[1])) return f_factorial(vm, 1, argv, NULL);
    Value n = int_arg(vm, argv[0]), k = int_arg(vm, argv[1]);
    if (is_negative(vm, n)) vm_raise_kind(vm, ValueError, "n must be a non-negative integer");
    if (is_negative(vm, k)) vm_raise_kind(vm, ValueError, "k must be a non-negative integer");
    return bigint_perm(vm, n, k);
}

static Value f_gcd(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "gcd", kwargs);
    int base = vm->nroots;
    vm_push_root(vm, INT_VAL(0));
    for (int i = 0; i < argc; i++) vm->roots[base] = bigint_gcd(vm, vm->roots[base], int_arg(vm, argv[i]));
    Value g = vm->roots[base];
    vm_pop_roots(vm, 1);
    return g;
}

/* lcm(l, a) = |l // gcd(l, a) * a| */
static Value f_lcm(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "lcm", kwargs);
    int base = vm->nroots;
    vm_push_root(vm, INT_VAL(1));
    vm_push_root(vm, INT_VAL(0));
    for (int i = 0; i < argc; i++) {
        Value a = int_arg(vm, argv[i]);
        Value l = vm->roots[base];
        if (bigint_sign(vm, l) == 0) continue;
        if (bigint_sign(vm, a) == 0) {
            vm->roots[base] = INT_VAL(0);
            continue;
        }
        vm->roots[base + 1] = a;
        Value g = bigint_gcd(vm, l, a);
        Value q = vm_binop(vm, BINOP_FLOORDIV, l, g);
        vm->roots[base] = q;
        Value p = vm_binop(vm, BINOP_MUL, q, a);
        vm->roots[base] = bigint_sign(vm, p) < 0 ? vm_unop(vm, UNOP_NEG, p) : p;
    }
    Value l = vm->roots[base];
    vm_pop_roots(vm, 2);
    return l;
}

static Value f_isqrt(VM *vm, int argc, Value *argv, Dict *kwargs) {
    one_arg(vm, "isqrt", argc, kwargs);
    Value n = int_arg(vm, argv[0]);
    if (is_negative(vm, n)) vm_raise_kind(vm, ValueError, "isqrt() argument must be nonnegative");
    return bigint_isqrt(vm, n);
}

/* ------------------------------------------------------------------ */
/* module                                                              */
/* ------------------------------------------------------------------ */

Module *stdlib_math(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "math"));
    vm_push_root(vm, OBJ_VAL(m));
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"acos", f_acos},         {"acosh", f_acosh},         {"asin", f_asin},
        {"asinh", f_asinh},       {"atan", f_atan},           {"atan2", f_atan2},
        {"atanh", f_atanh},       {"cbrt", f_cbrt},           {"ceil", f_ceil},
        {"comb", f_comb},         {"copysign", f_copysign},   {"cos", f_cos},
        {"cosh", f_cosh},         {"degrees", f_degrees},     {"dist", f_dist},
        {"erf", f_erf},           {"erfc", f_erfc},           {"exp", f_exp},
        {"exp2", f_exp2},         {"expm1", f_expm1},         {"fabs", f_fabs},
        {"factorial", f_factorial}, {"floor", f_floor},       {"fmod", f_fmod},
        {"frexp", f_frexp},       {"fsum", f_fsum},           {"gamma", f_gamma},
        {"gcd", f_gcd},           {"hypot", f_hypot},         {"isclose", f_isclose},
        {"isfinite", f_isfinite}, {"isinf", f_isinf},         {"isnan", f_isnan},
        {"isqrt", f_isqrt},       {"lcm", f_lcm},             {"ldexp", f_ldexp},
        {"lgamma", f_lgamma},     {"log", f_log_fn},          {"log10", f_log10_fn},
        {"log1p", f_log1p},       {"log2", f_log2_fn},        {"modf", f_modf},
        {"nextafter", f_nextafter}, {"perm", f_perm},         {"pow", f_pow},
        {"prod", f_prod},         {"radians", f_radians},     {"remainder", f_remainder},
        {"sin", f_sin},           {"sinh", f_sinh},           {"sqrt", f_sqrt},
        {"tan", f_tan},           {"tanh", f_tanh},           {"trunc", f_trunc},
        {"ulp", f_ulp},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
    dict_set_cstr(vm, m->dict, "pi", FLOAT_VAL(pi_d));
    dict_set_cstr(vm, m->dict, "e", FLOAT_VAL(2.718281828459045235360287471352662498));
    dict_set_cstr(vm, m->dict, "tau", FLOAT_VAL(6.283185307179586476925286766559005768));
    dict_set_cstr(vm, m->dict, "inf", FLOAT_VAL(INFINITY));
    dict_set_cstr(vm, m->dict, "nan", FLOAT_VAL(NAN));
    vm_pop_roots(vm, 1);
    return m;
}
