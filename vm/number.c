/*
** number.c — int, float and bool (unboxed in Value), and the NoneType,
** NotImplementedType and ellipsis types. Arithmetic follows Python 3.11
** exactly. Ints are int64 in the Value; a result that does not fit goes
** to bigint.c, which returns an arbitrary-precision int.
*/
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigint.h"
#include "class_internal.h"
#include "container.h"
#include "complex_num.h"

#define TWO63 9223372036854775808.0 /* 2**63 as a double */

static Str *intern(VM *vm, const char *s) { return str_intern(vm, s, strlen(s)); }

static _Noreturn void int_overflow(VM *vm) { vm_raise_kind(vm, OverflowError, "integer overflow"); }

bool int_add_overflow(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }

/* ================================================================ parsing */

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

static _Noreturn void bad_int_literal(VM *vm, const char *s, size_t len, int base) {
    Str *r = str_repr(vm, str_new(vm, s, len));
    vm_raise_kind(vm, ValueError, "invalid literal for int() with base %d: %s", base, r->chars);
}

/* int(s, base) with CPython's rules: surrounding whitespace, a sign, an
** optional base prefix (required to pick the base when base is 0), single
** underscores between digits (or right after a prefix). */
Value int_from_str(VM *vm, const char *s, size_t len, int base) {
    if (base != 0 && (base < 2 || base > 36))
        vm_raise_kind(vm, ValueError, "int() base must be >= 2 and <= 36, or 0");
    const char *p = s, *end = s + len;
    while (p < end && is_space(*p)) p++;
    while (end > p && is_space(end[-1])) end--;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    int b = base;
    bool prefixed = false;
    if (end - p >= 2 && p[0] == '0') {
        char c = (char)tolower((unsigned char)p[1]);
        int pb = c == 'x' ? 16 : c == 'o' ? 8 : c == 'b' ? 2 : 0;
        if (pb && (base == 0 || base == pb)) {
            b = pb;
            p += 2;
            prefixed = true;
        }
    }
    bool zero_lead = false;
    if (b == 0) {
        b = 10;
        zero_lead = p < end && *p == '0'; /* base 0: "010" is invalid, "000" is 0 */
    }
    if (prefixed && p < end && *p == '_') p++;
    if (p >= end) bad_int_literal(vm, s, len, base);
    const char *digits_start = p;
    uint64_t limit = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
    uint64_t acc = 0;
    bool overflow = false, prev_digit = false;
    for (; p < end; p++) {
        if (*p == '_') {
            if (!prev_digit || p + 1 >= end || p[1] == '_') bad_int_literal(vm, s, len, base);
            prev_digit = false;
            continue;
        }
        int d = digit_value(*p);
        if (d >= b) bad_int_literal(vm, s, len, base);
        if (zero_lead && d != 0) bad_int_literal(vm, s, len, base);
        prev_digit = true;
        if (!overflow) {
            if (acc > (limit - (uint64_t)d) / (uint64_t)b) overflow = true;
            else acc = acc * (uint64_t)b + (uint64_t)d;
        }
    }
    if (!prev_digit) bad_int_literal(vm, s, len, base);
    if (overflow) return bigint_from_digits(vm, digits_start, (size_t)(end - digits_start), b, neg);
    if (neg) return INT_VAL(acc == ((uint64_t)1 << 63) ? INT64_MIN : -(int64_t)acc);
    return INT_VAL((int64_t)acc);
}

static bool ci_equal(const char *p, const char *end, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(end - p) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)p[i]) != word[i]) return false;
    return true;
}

/* Copies a decimal float literal without its underscores into out (size at
** least end-p+1); false when the text is not a valid literal. */
static bool clean_float(const char *p, const char *end, char *out) {
    size_t n = 0;
    bool digits = false, exp_digits = true;
    int state = 0; /* 0 integer part, 1 fraction, 2 exponent */
    if (p < end && (*p == '+' || *p == '-')) out[n++] = *p++;
    for (; p < end; p++) {
        char c = *p;
        if (c >= '0' && c <= '9') {
            if (state == 2) exp_digits = true;
            else digits = true;
            out[n++] = c;
        } else if (c == '_') {
            if (n == 0 || !isdigit((unsigned char)out[n - 1]) || p + 1 >= end || !isdigit((unsigned char)p[1]))
                return false;
        } else if (c == '.' && state == 0) {
            state = 1;
            out[n++] = c;
        } else if ((c == 'e' || c == 'E') && state < 2 && digits) {
            state = 2;
            exp_digits = false;
            out[n++] = c;
            if (p + 1 < end && (p[1] == '+' || p[1] == '-')) out[n++] = *++p;
        } else {
            return false;
        }
    }
    out[n] = 0;
    return digits && exp_digits;
}

/* float(s): decimal literals with underscores, inf/infinity/nan with a sign,
** surrounding whitespace; anything else is a ValueError. */
Value float_from_str(VM *vm, const char *s, size_t len) {
    const char *p = s, *end = s + len;
    while (p < end && is_space(*p)) p++;
    while (end > p && is_space(end[-1])) end--;
    const char *q = p;
    double sign = 1.0;
    if (q < end && (*q == '+' || *q == '-')) sign = *q++ == '-' ? -1.0 : 1.0;
    if (ci_equal(q, end, "inf") || ci_equal(q, end, "infinity")) return FLOAT_VAL(sign * INFINITY);
    if (ci_equal(q, end, "nan")) return FLOAT_VAL(copysign(NAN, sign));
    char small[64];
    size_t need = (size_t)(end - p) + 1;
    char *buf = need <= sizeof small ? small : malloc(need);
    if (!buf) vm_throw(vm, vm->memory_error);
    bool ok = p < end && clean_float(p, end, buf);
    double d = 0;
    if (ok) {
        char *stop;
        d = strtod(buf, &stop);
        ok = *stop == 0;
    }
    if (buf != small) free(buf);
    if (!ok) {
        Str *r = str_repr(vm, str_new(vm, s, len));
        vm_raise_kind(vm, ValueError, "could not convert string to float: %s", r->chars);
    }
    return FLOAT_VAL(d);
}

/* ============================================================ arithmetic */

int64_t num_floordiv(VM *vm, int64_t a, int64_t b) {
    if (b == 0) vm_raise_kind(vm, ZeroDivisionError, "integer division or modulo by zero");
    if (b == -1) {
        if (a == INT64_MIN) int_overflow(vm);
        return -a;
    }
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

int64_t num_mod(VM *vm, int64_t a, int64_t b) {
    if (b == 0) vm_raise_kind(vm, ZeroDivisionError, "integer modulo by zero");
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

/* Python's float %: the result has the sign of b (b != 0). */
double float_mod(double a, double b) {
    double m = fmod(a, b);
    if (m != 0.0) {
        if ((b < 0) != (m < 0)) m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}

/* Python's float // (b != 0), computed like CPython's float_divmod. */
static double float_floordiv(double a, double b) {
    double m = fmod(a, b);
    double div = (a - m) / b;
    if (m != 0.0 && ((b < 0) != (m < 0))) div -= 1.0;
    if (div != 0.0) {
        double f = floor(div);
        if (div - f > 0.5) f += 1.0;
        return f;
    }
    return copysign(0.0, a / b);
}

#define EXACT53 ((int64_t)1 << 53) /* ints up to this convert to double exactly */

static bool is_odd_integer(double d) { return fmod(fabs(d), 2.0) == 1.0; }

/* float ** float with CPython's special cases and errors. */
static double float_pow(VM *vm, double x, double y) {
    if (y == 0.0) return 1.0;
    if (isnan(x)) return x;
    if (isnan(y)) return x == 1.0 ? 1.0 : y;
    if (isinf(y)) {
        double ax = fabs(x);
        if (ax == 1.0) return 1.0;
        return (y > 0) == (ax > 1.0) ? INFINITY : 0.0;
    }
    if (isinf(x)) {
        bool odd = is_odd_integer(y);
        if (y > 0) return odd ? x : fabs(x);
        return odd ? copysign(0.0, x) : 0.0;
    }
    if (x == 0.0) {
        if (y < 0) vm_raise_kind(vm, ZeroDivisionError, "0.0 cannot be raised to a negative power");
        return is_odd_integer(y) ? x : 0.0;
    }
    bool negate = false;
    if (x < 0.0) { /* y is an integer here: float_pow_value sent the other case to complex */
        x = -x;
        negate = is_odd_integer(y);
    }
    if (x == 1.0) return negate ? -1.0 : 1.0;
    double r = pow(x, y);
    if (isinf(r)) vm_raise_kind(vm, OverflowError, "(34, 'Numerical result out of range')");
    return negate ? -r : r;
}

/* float ** float as a Value: a negative finite base to a finite non-integer
** power is complex, as in CPython. */
static Value float_pow_value(VM *vm, double x, double y) {
    if (x < 0.0 && isfinite(x) && isfinite(y) && y != floor(y)) return complex_pow(vm, x, 0.0, y, 0.0);
    return FLOAT_VAL(float_pow(vm, x, y));
}

Value num_pow(VM *vm, Value a, Value b) {
    if (IS_INTLIKE(a) && IS_INTLIKE(b)) {
        int64_t base = AS_INTLIKE(a), e = AS_INTLIKE(b);
        if (e < 0) {
            if (base == 0) vm_raise_kind(vm, ZeroDivisionError, "0.0 cannot be raised to a negative power");
            return FLOAT_VAL(float_pow(vm, (double)base, (double)e));
        }
        if (base == 0) return INT_VAL(e == 0 ? 1 : 0);
        if (base == 1) return INT_VAL(1);
        if (base == -1) return INT_VAL((e & 1) ? -1 : 1);
        int64_t r = 1;
        for (;;) {
            if ((e & 1) && __builtin_mul_overflow(r, base, &r)) return bigint_pow(vm, a, b);
            e >>= 1;
            if (!e) break;
            if (__builtin_mul_overflow(base, base, &base)) return bigint_pow(vm, a, b);
        }
        return INT_VAL(r);
    }
    if (!IS_NUMBER(a) || !IS_NUMBER(b)) return bigint_pow(vm, a, b);
    return float_pow_value(vm, AS_NUMBER(a), AS_NUMBER(b));
}

static Value int_lshift(VM *vm, int64_t a, int64_t n) {
    if (n < 0) vm_raise_kind(vm, ValueError, "negative shift count");
    if (a == 0) return INT_VAL(0);
    int64_t r = n < 63 ? (int64_t)((uint64_t)a << n) : 0;
    if (n >= 63 || (r >> n) != a) return bigint_binop(vm, BINOP_LSHIFT, INT_VAL(a), INT_VAL(n));
    return INT_VAL(r);
}

static int64_t int_rshift(VM *vm, int64_t a, int64_t n) {
    if (n < 0) vm_raise_kind(vm, ValueError, "negative shift count");
    if (n >= 64) return a < 0 ? -1 : 0;
    return a >> n;
}

/* Binary operators on two numbers (int, bool or float). Returns EMPTY for
** combinations Python does not define (float & int, @ ...). */
static Value binop_impl(VM *vm, BinOp op, Value a, Value b) {
    if (IS_INTLIKE(a) && IS_INTLIKE(b)) {
        int64_t x = AS_INTLIKE(a), y = AS_INTLIKE(b), r;
        switch (op) {
        case BINOP_ADD:
            if (__builtin_add_overflow(x, y, &r)) return bigint_binop(vm, op, a, b);
            return INT_VAL(r);
        case BINOP_SUB:
            if (__builtin_sub_overflow(x, y, &r)) return bigint_binop(vm, op, a, b);
            return INT_VAL(r);
        case BINOP_MUL:
            if (__builtin_mul_overflow(x, y, &r)) return bigint_binop(vm, op, a, b);
            return INT_VAL(r);
        case BINOP_TRUEDIV:
            if (y == 0) vm_raise_kind(vm, ZeroDivisionError, "division by zero");
            if (x > EXACT53 || x < -EXACT53 || y > EXACT53 || y < -EXACT53) return bigint_binop(vm, op, a, b);
            return FLOAT_VAL((double)x / (double)y);
        case BINOP_FLOORDIV:
            if (x == INT64_MIN && y == -1) return bigint_binop(vm, op, a, b);
            return INT_VAL(num_floordiv(vm, x, y));
        case BINOP_MOD: return INT_VAL(num_mod(vm, x, y));
        case BINOP_POW: return num_pow(vm, a, b);
        case BINOP_LSHIFT: return int_lshift(vm, x, y);
        case BINOP_RSHIFT: return INT_VAL(int_rshift(vm, x, y));
        case BINOP_AND: return IS_BOOL(a) && IS_BOOL(b) ? BOOL_VAL(x & y) : INT_VAL(x & y);
        case BINOP_OR: return IS_BOOL(a) && IS_BOOL(b) ? BOOL_VAL(x | y) : INT_VAL(x | y);
        case BINOP_XOR: return IS_BOOL(a) && IS_BOOL(b) ? BOOL_VAL(x ^ y) : INT_VAL(x ^ y);
        default: return EMPTY_VAL;
        }
    }
    if (!IS_NUMBER(a) || !IS_NUMBER(b)) return bigint_binop(vm, op, a, b);
    double x = AS_NUMBER(a), y = AS_NUMBER(b);
    switch (op) {
    case BINOP_ADD: return FLOAT_VAL(x + y);
    case BINOP_SUB: return FLOAT_VAL(x - y);
    case BINOP_MUL: return FLOAT_VAL(x * y);
    case BINOP_TRUEDIV:
        if (y == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float division by zero");
        return FLOAT_VAL(x / y);
    case BINOP_FLOORDIV:
        if (y == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float floor division by zero");
        return FLOAT_VAL(float_floordiv(x, y));
    case BINOP_MOD:
        if (y == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float modulo");
        return FLOAT_VAL(float_mod(x, y));
    case BINOP_POW: return float_pow_value(vm, x, y);
    default: return EMPTY_VAL;
    }
}

/* Three-way comparison of an int with a float, exact for every int64 (no
** lossy int->double conversion). Returns 2 when f is NaN. */
static int cmp_int_float(int64_t i, double f) {
    if (isnan(f)) return 2;
    const int64_t lim = (int64_t)1 << 53;
    if (i >= -lim && i <= lim) {
        double d = (double)i;
        return d < f ? -1 : d > f ? 1 : 0;
    }
    if (f >= TWO63) return -1;
    if (f < -TWO63) return 1;
    double t = trunc(f);
    int64_t ti = (int64_t)t; /* exact: |t| < 2**63 */
    if (i != ti) return i < ti ? -1 : 1;
    double frac = f - t;
    return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

static Value cmp_result(CmpOp op, int c) {
    if (c == 2) return BOOL_VAL(op == CMP_NE); /* NaN: unordered */
    switch (op) {
    case CMP_EQ: return BOOL_VAL(c == 0);
    case CMP_NE: return BOOL_VAL(c != 0);
    case CMP_LT: return BOOL_VAL(c < 0);
    case CMP_LE: return BOOL_VAL(c <= 0);
    case CMP_GT: return BOOL_VAL(c > 0);
    case CMP_GE: return BOOL_VAL(c >= 0);
    default: return EMPTY_VAL;
    }
}

/* Rich comparison of two numbers; EMPTY for ops other than == != < <= > >=. */
Value num_compare(VM *vm, CmpOp op, Value a, Value b) {
    int c;
    if (!IS_NUMBER(a) || !IS_NUMBER(b)) {
        c = bigint_cmp(vm, a, b);
    } else if (IS_INTLIKE(a) && IS_INTLIKE(b)) {
        int64_t x = AS_INTLIKE(a), y = AS_INTLIKE(b);
        c = x < y ? -1 : x > y ? 1 : 0;
    } else if (IS_FLOAT(a) && IS_FLOAT(b)) {
        double x = AS_FLOAT(a), y = AS_FLOAT(b);
        c = x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
    } else if (IS_FLOAT(b)) {
        c = cmp_int_float(AS_INTLIKE(a), AS_FLOAT(b));
    } else {
        c = cmp_int_float(AS_INTLIKE(b), AS_FLOAT(a));
        if (c != 2) c = -c;
    }
    return cmp_result(op, c);
}

static const char *num_type_name(Value v) { return IS_FLOAT(v) ? "float" : IS_BOOL(v) ? "bool" : "int"; /* or a big int */ }

/* Like binop_impl, but raises TypeError for the undefined combinations
** (the interpreter calls this directly when both operands are numbers). */
Value num_binop(VM *vm, BinOp op, Value a, Value b) {
    Value r = binop_impl(vm, op, a, b);
    if (IS_EMPTY(r)) {
        static const char *const sym[BINOP__COUNT] = {"+", "-",  "*", "@", "/", "//", "%",
                                                      "**", "<<", ">>", "&", "|", "^"};
        vm_raise_kind(vm, TypeError, "unsupported operand type(s) for %s: '%s' and '%s'", sym[op], num_type_name(a),
                      num_type_name(b));
    }
    return r;
}

/* ================================================================= slots */

static Value num_binop_slot(VM *vm, BinOp op, Value a, Value b) {
    if (!bigint_is_numeric(vm, a) || !bigint_is_numeric(vm, b)) return EMPTY_VAL;
    return binop_impl(vm, op, a, b);
}

static Value num_compare_slot(VM *vm, CmpOp op, Value a, Value b) {
    if (!bigint_is_numeric(vm, a) || !bigint_is_numeric(vm, b)) return EMPTY_VAL;
    return num_compare(vm, op, a, b);
}

static Value num_unop(VM *vm, UnOp op, Value a) {
    if (IS_FLOAT(a)) {
        if (op == UNOP_NEG) return FLOAT_VAL(-AS_FLOAT(a));
        if (op == UNOP_POS) return a;
        return EMPTY_VAL;
    }
    if (bigint_is(vm, a)) return bigint_unop(vm, op, a);
    if (!IS_INTLIKE(a)) return EMPTY_VAL;
    int64_t x = AS_INTLIKE(a);
    switch (op) {
    case UNOP_NEG:
        if (x == INT64_MIN) return bigint_unop(vm, op, a);
        return INT_VAL(-x);
    case UNOP_POS: return INT_VAL(x);
    case UNOP_INVERT: return INT_VAL(~x);
    default: return EMPTY_VAL;
    }
}

static bool num_truthy(VM *vm, Value v) {
    (void)vm;
    if (IS_FLOAT(v)) return AS_FLOAT(v) != 0.0;
    if (IS_INTLIKE(v)) return AS_INTLIKE(v) != 0;
    return !IS_NONE(v);
}

static Value int_repr(VM *vm, Value v) {
    if (bigint_is(vm, v)) return STR_VAL(bigint_to_str(vm, v));
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)AS_INTLIKE(v));
    return STR_VAL(str_new(vm, buf, (size_t)n));
}

/* Only boxed ints reach the hash slot: small ones hash unboxed in vm_hash. */
static int64_t int_hash_slot(VM *vm, Value v) {
    return bigint_is(vm, v) ? bigint_hash(vm, v) : class_identity_hash(v);
}

static Value bool_repr(VM *vm, Value v) { return STR_VAL(intern(vm, AS_INTLIKE(v) ? "True" : "False")); }

static Value float_repr_slot(VM *vm, Value v) {
    char buf[64];
    int n = float_repr(AS_NUMBER(v), buf, sizeof buf);
    return STR_VAL(str_new(vm, buf, (size_t)n));
}

static Value none_repr(VM *vm, Value v) {
    (void)v;
    return STR_VAL(intern(vm, "None"));
}

static Value notimpl_repr(VM *vm, Value v) {
    (void)v;
    return STR_VAL(intern(vm, "NotImplemented"));
}

static Value ellipsis_repr(VM *vm, Value v) {
    (void)v;
    return STR_VAL(intern(vm, "Ellipsis"));
}

/* Calls a conversion dunder (__int__, __index__, __float__ ...) of v if its
** type defines one; EMPTY when it does not. */
static Value call_dunder(VM *vm, Value v, const char *name) {
    if (!IS_OBJ(v)) return EMPTY_VAL;
    Value m = type_lookup(vm, vm_typeof(vm, v), intern(vm, name));
    if (IS_EMPTY(m)) return EMPTY_VAL;
    return vm_call(vm, m, 1, &v);
}

/* int(float): truncation toward zero, with Python's errors. */
static Value int_from_double(VM *vm, double d) {
    if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
    if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
    return bigint_from_double(vm, d);
}

/* int(x): numbers, strings, then __int__, __index__, __trunc__. */
static Value int_convert(VM *vm, Value x) {
    if (IS_INTLIKE(x)) return INT_VAL(AS_INTLIKE(x));
    if (bigint_is(vm, x)) return x;
    if (IS_FLOAT(x)) return int_from_double(vm, AS_FLOAT(x));
    if (IS_STR(vm, x)) return int_from_str(vm, AS_STR(x)->chars, (size_t)AS_STR(x)->len, 10);
    static const char *const names[] = {"__int__", "__index__", "__trunc__"};
    for (int i = 0; i < 3; i++) {
        Value r = call_dunder(vm, x, names[i]);
        if (IS_EMPTY(r)) continue;
        if (IS_INTLIKE(r)) return INT_VAL(AS_INTLIKE(r));
        if (bigint_is(vm, r)) return r;
        if (i == 2) return int_convert(vm, r);
        vm_raise_kind(vm, TypeError, "%s returned non-int (type %s)", names[i], vm_type_name(vm, r));
    }
    vm_raise_kind(vm, TypeError, "int() argument must be a string, a bytes-like object or a real number, not '%s'",
                  vm_type_name(vm, x));
}

static Value int_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    Value base = kwarg_take(vm, kwargs, "base");
    kwargs_check_empty(vm, "int", kwargs);
    if (argc > 2) vm_raise_kind(vm, TypeError, "int() takes at most 2 arguments (%d given)", argc);
    if (argc == 2) {
        if (!IS_EMPTY(base)) vm_raise_kind(vm, TypeError, "argument for int() given by name ('base') and position (2)");
        base = argv[1];
    }
    if (argc == 0) {
        if (!IS_EMPTY(base)) vm_raise_kind(vm, TypeError, "int() missing string argument");
        return INT_VAL(0);
    }
    if (IS_EMPTY(base)) return int_convert(vm, argv[0]);
    if (!IS_STR(vm, argv[0])) vm_raise_kind(vm, TypeError, "int() can't convert non-string with explicit base");
    int64_t b = vm_to_index(vm, base);
    if (b != 0 && (b < 2 || b > 36)) vm_raise_kind(vm, ValueError, "int() base must be >= 2 and <= 36, or 0");
    Str *s = AS_STR(argv[0]);
    return int_from_str(vm, s->chars, (size_t)s->len, (int)b);
}

static Value float_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    arg_no_kwargs(vm, "float", kwargs);
    if (argc > 1) vm_raise_kind(vm, TypeError, "float expected at most 1 argument, got %d", argc);
    if (argc == 0) return FLOAT_VAL(0.0);
    Value x = argv[0];
    if (IS_NUMBER(x)) return FLOAT_VAL(AS_NUMBER(x));
    if (bigint_is(vm, x)) return FLOAT_VAL(bigint_to_double(vm, x));
    if (IS_STR(vm, x)) return float_from_str(vm, AS_STR(x)->chars, (size_t)AS_STR(x)->len);
    Value r = call_dunder(vm, x, "__float__");
    if (!IS_EMPTY(r)) {
        if (IS_FLOAT(r)) return r;
        vm_raise_kind(vm, TypeError, "%s.__float__ returned non-float (type %s)", vm_type_name(vm, x),
                      vm_type_name(vm, r));
    }
    r = call_dunder(vm, x, "__index__");
    if (!IS_EMPTY(r)) {
        if (bigint_is_anyint(vm, r)) return FLOAT_VAL(bigint_to_double(vm, r));
        vm_raise_kind(vm, TypeError, "__index__ returned non-int (type %s)", vm_type_name(vm, r));
    }
    vm_raise_kind(vm, TypeError, "float() argument must be a string or a real number, not '%s'", vm_type_name(vm, x));
}

static Value bool_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    arg_no_kwargs(vm, "bool", kwargs);
    if (argc > 1) vm_raise_kind(vm, TypeError, "bool expected at most 1 argument, got %d", argc);
    return BOOL_VAL(argc == 1 && vm_truthy(vm, argv[0]));
}

static Value none_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls, (void)argv;
    if (argc || (kwargs && kwargs->count)) vm_raise_kind(vm, TypeError, "NoneType takes no arguments");
    return NONE_VAL;
}

static Value notimpl_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls, (void)argv;
    if (argc || (kwargs && kwargs->count)) vm_raise_kind(vm, TypeError, "NotImplementedType takes no arguments");
    return vm->not_implemented;
}

static Value ellipsis_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls, (void)argv;
    if (argc || (kwargs && kwargs->count)) vm_raise_kind(vm, TypeError, "ellipsis takes no arguments");
    return vm->ellipsis;
}

/* .real / .imag / .numerator / .denominator, then the generic protocol. */
static Value num_getattr(VM *vm, Value self, Str *name) {
    const char *n = name->chars;
    if (n[0] != '_') {
        if (IS_FLOAT(self)) {
            if (strcmp(n, "real") == 0) return self;
            if (strcmp(n, "imag") == 0) return FLOAT_VAL(0.0);
        } else {
            if (strcmp(n, "real") == 0 || strcmp(n, "numerator") == 0)
                return bigint_is(vm, self) ? self : INT_VAL(AS_INTLIKE(self));
            if (strcmp(n, "imag") == 0) return INT_VAL(0);
            if (strcmp(n, "denominator") == 0) return INT_VAL(1);
        }
    }
    return generic_getattr(vm, self, name);
}

/* ================================================================ methods */

static Value m_int_bit_length(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "int.bit_length", kwargs);
    arg_count(vm, "int.bit_length", argc - 1, 0, 0);
    if (bigint_is(vm, argv[0])) return INT_VAL(bigint_bit_length(vm, argv[0]));
    int64_t x = AS_INTLIKE(argv[0]);
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    return INT_VAL(u ? 64 - __builtin_clzll(u) : 0);
}

static Value m_int_bit_count(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "int.bit_count", kwargs);
    arg_count(vm, "int.bit_count", argc - 1, 0, 0);
    if (bigint_is(vm, argv[0])) return INT_VAL(bigint_bit_count(vm, argv[0]));
    int64_t x = AS_INTLIKE(argv[0]);
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    return INT_VAL(__builtin_popcountll(u));
}

static Value m_int_self(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "int.conjugate", kwargs);
    arg_count(vm, "int.conjugate", argc - 1, 0, 0);
    if (bigint_is(vm, argv[0])) return argv[0];
    return INT_VAL(AS_INTLIKE(argv[0]));
}

static Value m_int_as_integer_ratio(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "int.as_integer_ratio", kwargs);
    arg_count(vm, "int.as_integer_ratio", argc - 1, 0, 0);
    Value items[2] = {bigint_is(vm, argv[0]) ? argv[0] : INT_VAL(AS_INTLIKE(argv[0])), INT_VAL(1)};
    return OBJ_VAL(tuple_from_array(vm, 2, items));
}

static Value m_float_is_integer(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "float.is_integer", kwargs);
    arg_count(vm, "float.is_integer", argc - 1, 0, 0);
    double d = AS_NUMBER(argv[0]);
    return BOOL_VAL(isfinite(d) && d == floor(d));
}

static Value m_float_conjugate(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "float.conjugate", kwargs);
    arg_count(vm, "float.conjugate", argc - 1, 0, 0);
    return FLOAT_VAL(AS_NUMBER(argv[0]));
}

/* float.as_integer_ratio(): exact n/d with d a power of two (OverflowError
** when n or d do not fit in 64 bits). */
static Value m_float_as_integer_ratio(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "float.as_integer_ratio", kwargs);
    arg_count(vm, "float.as_integer_ratio", argc - 1, 0, 0);
    double d = AS_NUMBER(argv[0]);
    if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert Infinity to integer ratio");
    if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert NaN to integer ratio");
    int e;
    double m = frexp(d, &e); /* d = m * 2**e, 0.5 <= |m| < 1 */
    for (int i = 0; i < 300 && m != floor(m); i++) {
        m *= 2.0;
        e--;
    }
    Value num = bigint_from_double(vm, m), den = INT_VAL(1);
    vm_push_root(vm, num);
    if (e > 0) num = bigint_binop(vm, BINOP_LSHIFT, num, INT_VAL(e));
    else if (e < 0) den = bigint_binop(vm, BINOP_LSHIFT, INT_VAL(1), INT_VAL(-e));
    vm->roots[vm->nroots - 1] = num;
    vm_push_root(vm, den);
    Value items[2] = {num, den};
    Tuple *t = tuple_from_array(vm, 2, items);
    vm_pop_roots(vm, 2);
    return OBJ_VAL(t);
}

/* ================================================================== init */

static void set_num_slots(Type *t) {
    t->binop = num_binop_slot;
    t->compare = num_compare_slot;
    t->unop = num_unop;
    t->truthy = num_truthy;
    t->getattr = num_getattr;
}

void number_init(VM *vm) {
    Type *ti = vm->t_int, *tb = vm->t_bool, *tf = vm->t_float;
    tb->base = ti; /* bool is a subclass of int */

    set_num_slots(ti);
    ti->new_ = int_new;
    ti->repr = int_repr;
    ti->hash = int_hash_slot;

    set_num_slots(tb);
    tb->new_ = bool_new;
    tb->repr = bool_repr;

    set_num_slots(tf);
    tf->new_ = float_new;
    tf->repr = float_repr_slot;

    type_add_method(vm, ti, "bit_length", m_int_bit_length);
    type_add_method(vm, ti, "bit_count", m_int_bit_count);
    type_add_method(vm, ti, "conjugate", m_int_self);
    type_add_method(vm, ti, "as_integer_ratio", m_int_as_integer_ratio);
    type_add_method(vm, tf, "is_integer", m_float_is_integer);
    type_add_method(vm, tf, "conjugate", m_float_conjugate);
    type_add_method(vm, tf, "as_integer_ratio", m_float_as_integer_ratio);

    vm->t_NoneType->repr = none_repr;
    vm->t_NoneType->truthy = num_truthy;
    vm->t_NoneType->new_ = none_new;

    vm->t_NotImplementedType->repr = notimpl_repr;
    vm->t_NotImplementedType->new_ = notimpl_new;
    vm->t_ellipsis->repr = ellipsis_repr;
    vm->t_ellipsis->new_ = ellipsis_new;

    vm->not_implemented = OBJ_VAL(gc_alloc_obj(vm, vm->t_NotImplementedType, sizeof(Obj)));
    vm->ellipsis = OBJ_VAL(gc_alloc_obj(vm, vm->t_ellipsis, sizeof(Obj)));
}
