/*
** complex_num.c — the complex type: construction (numbers, strings,
** __complex__), arithmetic with int/float/complex, hashing, repr.
** An int or float operand is promoted to complex(x, 0.0) first, as CPython
** 3.11 does, so e.g. complex(inf, 0) * 2 gives (inf+nanj) there and here.
*/
#include "complex_num.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Value complex_value(VM *vm, double re, double im) {
    Complex *c = gc_alloc_obj(vm, vm->t_complex, sizeof(Complex));
    c->real = re;
    c->imag = im;
    return OBJ_VAL(c);
}

bool complex_parts(VM *vm, Value v, double *re, double *im) {
    if (IS_NUMBER(v)) {
        *re = AS_NUMBER(v);
        *im = 0.0;
        return true;
    }
    if (IS_COMPLEX(vm, v)) {
        *re = AS_COMPLEX(v)->real;
        *im = AS_COMPLEX(v)->imag;
        return true;
    }
    return false;
}

/* ============================================================ arithmetic */

typedef struct Cx {
    double re, im;
} Cx;

static Cx cx_mul(Cx a, Cx b) { return (Cx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

/* Smith's division: scale by the larger component of b so that the
** intermediate products do not overflow. *zero is set when b == 0. */
static Cx cx_div(Cx a, Cx b, bool *zero) {
    double abr = fabs(b.re), abi = fabs(b.im);
    *zero = false;
    if (abr >= abi) {
        if (abr == 0.0) {
            *zero = true;
            return (Cx){0.0, 0.0};
        }
        double ratio = b.im / b.re, denom = b.re + b.im * ratio;
        return (Cx){(a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom};
    }
    if (abi >= abr) {
        double ratio = b.re / b.im, denom = b.re * ratio + b.im;
        return (Cx){(a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom};
    }
    return (Cx){NAN, NAN}; /* a NaN in b */
}

/* x ** n for a small natural n by repeated squaring (exact for Gaussian
** integers, as CPython's integer-power path is). */
static Cx cx_pow_uint(Cx x, long n) {
    Cx r = {1.0, 0.0}, p = x;
    for (long mask = 1; mask > 0 && n >= mask; mask <<= 1) {
        if (n & mask) r = cx_mul(r, p);
        p = cx_mul(p, p);
    }
    return r;
}

Value complex_pow(VM *vm, double ar, double ai, double br, double bi) {
    Cx a = {ar, ai}, r;
    bool domain = false;
    if (bi == 0.0 && br == floor(br) && fabs(br) <= 100.0) {
        long n = (long)br;
        if (n >= 0) {
            r = cx_pow_uint(a, n);
        } else {
            r = cx_div((Cx){1.0, 0.0}, cx_pow_uint(a, -n), &domain);
        }
    } else if (br == 0.0 && bi == 0.0) {
        r = (Cx){1.0, 0.0};
    } else if (ar == 0.0 && ai == 0.0) {
        domain = bi != 0.0 || br < 0.0;
        r = (Cx){0.0, 0.0};
    } else {
        double vabs = hypot(ar, ai), len = pow(vabs, br), at = atan2(ai, ar), phase = at * br;
        if (bi != 0.0) {
            len /= exp(at * bi);
            phase += bi * log(vabs);
        }
        r = (Cx){len * cos(phase), len * sin(phase)};
    }
    if (domain) vm_raise_kind(vm, ZeroDivisionError, "0.0 to a negative or complex power");
    if (isinf(r.re) || isinf(r.im)) vm_raise_kind(vm, OverflowError, "complex exponentiation");
    return complex_value(vm, r.re, r.im);
}

/* The binop slot: one of a, b is complex; the other must be a number. */
static Value complex_binop(VM *vm, BinOp op, Value a, Value b) {
    Cx x, y;
    if (!complex_parts(vm, a, &x.re, &x.im) || !complex_parts(vm, b, &y.re, &y.im)) return EMPTY_VAL;
    switch (op) {
    case BINOP_ADD: return complex_value(vm, x.re + y.re, x.im + y.im);
    case BINOP_SUB: return complex_value(vm, x.re - y.re, x.im - y.im);
    case BINOP_MUL: {
        Cx r = cx_mul(x, y);
        return complex_value(vm, r.re, r.im);
    }
    case BINOP_TRUEDIV: {
        bool zero;
        Cx r = cx_div(x, y, &zero);
        if (zero) vm_raise_kind(vm, ZeroDivisionError, "complex division by zero");
        return complex_value(vm, r.re, r.im);
    }
    case BINOP_POW: return complex_pow(vm, x.re, x.im, y.re, y.im);
    default: return EMPTY_VAL;
    }
}

static Value complex_unop(VM *vm, UnOp op, Value a) {
    Complex *c = AS_COMPLEX(a);
    if (op == UNOP_NEG) return complex_value(vm, -c->real, -c->imag);
    if (op == UNOP_POS) return complex_value(vm, c->real, c->imag);
    return EMPTY_VAL;
}

/* == and != against numbers and complex; ordering is NotImplemented (the
** caller raises "'<' not supported between instances of ..."). */
static Value complex_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (op != CMP_EQ && op != CMP_NE) return EMPTY_VAL;
    Complex *c = AS_COMPLEX(a);
    bool eq;
    if (IS_COMPLEX(vm, b)) {
        eq = c->real == AS_COMPLEX(b)->real && c->imag == AS_COMPLEX(b)->imag;
    } else if (IS_NUMBER(b)) {
        /* exact int/float comparison of the real part (num_compare) */
        eq = c->imag == 0.0 && vm_truthy(vm, vm_compare(vm, CMP_EQ, FLOAT_VAL(c->real), b));
    } else {
        return EMPTY_VAL;
    }
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

/* CPython's: hash(real) + 1000003 * hash(imag), wrapping, so that a
** complex with a zero imaginary part hashes like its real part. */
static int64_t complex_hash(VM *vm, Value v) {
    Complex *c = AS_COMPLEX(v);
    uint64_t hr = (uint64_t)vm_hash(vm, FLOAT_VAL(c->real)), hi = (uint64_t)vm_hash(vm, FLOAT_VAL(c->imag));
    int64_t h = (int64_t)(hr + 1000003u * hi);
    return h == -1 ? -2 : h;
}

static bool complex_truthy(VM *vm, Value v) {
    (void)vm;
    return AS_COMPLEX(v)->real != 0.0 || AS_COMPLEX(v)->imag != 0.0;
}

/* ================================================================= repr */

/* A float's repr without the ".0" Python adds to integral values. */
static int part_text(double x, char *buf, size_t size) {
    int n = float_repr(x, buf, size);
    if (n >= 2 && buf[n - 2] == '.' && buf[n - 1] == '0') buf[n -= 2] = '\0';
    return n;
}

int complex_repr_text(double re, double im, char *buf, size_t size) {
    char r[40], i[40];
    part_text(im, i, sizeof i);
    if (re == 0.0 && !signbit(re)) return snprintf(buf, size, "%sj", i);
    part_text(re, r, sizeof r);
    return snprintf(buf, size, "(%s%s%sj)", r, i[0] == '-' ? "" : "+", i);
}

static Value complex_repr(VM *vm, Value v) {
    char buf[96];
    int n = complex_repr_text(AS_COMPLEX(v)->real, AS_COMPLEX(v)->imag, buf, sizeof buf);
    return STR_VAL(str_new(vm, buf, (size_t)n));
}

/* ======================================================== construction */

static bool is_space_char(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static bool ci_prefix(const char *p, const char *end, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(end - p) < n) return false;
    for (size_t k = 0; k < n; k++)
        if (tolower((unsigned char)p[k]) != word[k]) return false;
    return true;
}

/* Scans one float as Python spells it (sign, digits with a point and an
** exponent, inf, infinity, nan) at p; returns its end, p when none. */
static const char *scan_float(const char *p, const char *end, double *out) {
    const char *q = p;
    if (q < end && (*q == '+' || *q == '-')) q++;
    if (ci_prefix(q, end, "infinity")) q += 8;
    else if (ci_prefix(q, end, "inf") || ci_prefix(q, end, "nan")) q += 3;
    else {
        bool digits = false;
        while (q < end && isdigit((unsigned char)*q)) q++, digits = true;
        if (q < end && *q == '.') {
            q++;
            while (q < end && isdigit((unsigned char)*q)) q++, digits = true;
        }
        if (!digits) return p;
        if (q < end && (*q == 'e' || *q == 'E')) {
            const char *e = q + 1;
            if (e < end && (*e == '+' || *e == '-')) e++;
            if (e < end && isdigit((unsigned char)*e)) {
                while (e < end && isdigit((unsigned char)*e)) e++;
                q = e;
            }
        }
    }
    size_t n = (size_t)(q - p);
    char small[128], *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp) return p;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    *out = strtod(tmp, NULL);
    if (tmp != small) free(tmp);
    return q;
}

/* The grammar of complex(str): [ws] ['('] [ws] <float> | <float>j |
** <float><signed float>j | <float><sign>j | [sign]j [ws] [')'] [ws]. */
bool complex_parse(const char *s, size_t len, double *re, double *im) {
    const char *p = s, *end = s + len;
    double x = 0.0, y = 0.0, z;
    while (p < end && is_space_char(*p)) p++;
    bool bracket = p < end && *p == '(';
    if (bracket) {
        p++;
        while (p < end && is_space_char(*p)) p++;
    }
    const char *q = scan_float(p, end, &z);
    if (q != p) {
        p = q;
        if (p < end && (*p == '+' || *p == '-')) {
            x = z;
            q = scan_float(p, end, &y);
            if (q != p) {
                p = q;
            } else {
                y = *p == '+' ? 1.0 : -1.0;
                p++;
            }
            if (!(p < end && (*p == 'j' || *p == 'J'))) return false;
            p++;
        } else if (p < end && (*p == 'j' || *p == 'J')) {
            p++;
            y = z;
        } else {
            x = z;
        }
    } else {
        y = 1.0;
        if (p < end && (*p == '+' || *p == '-')) y = *p++ == '+' ? 1.0 : -1.0;
        if (!(p < end && (*p == 'j' || *p == 'J'))) return false;
        p++;
    }
    while (p < end && is_space_char(*p)) p++;
    if (bracket) {
        if (!(p < end && *p == ')')) return false;
        p++;
        while (p < end && is_space_char(*p)) p++;
    }
    if (p != end) return false;
    *re = x;
    *im = y;
    return true;
}

/* complex(str): underscores only between digits (then dropped), else
** CPython's "could not convert" message; other errors "malformed string". */
static Value complex_from_str(VM *vm, Str *s) {
    const char *t = s->chars;
    size_t n = (size_t)s->len;
    if (memchr(t, '\0', n)) vm_raise_kind(vm, ValueError, "complex() arg is a malformed string");
    char *clean = NULL;
    if (memchr(t, '_', n)) {
        clean = gc_malloc(vm, n + 1);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (t[i] != '_') {
                clean[k++] = t[i];
                continue;
            }
            if (i == 0 || i + 1 >= n || !isdigit((unsigned char)t[i - 1]) || !isdigit((unsigned char)t[i + 1])) {
                gc_free(vm, clean, n + 1);
                Str *r = vm_repr(vm, STR_VAL(s));
                vm_raise_kind(vm, ValueError, "could not convert string to complex: %s", r->chars);
            }
        }
        t = clean;
        n = k;
    }
    double re, im;
    bool ok = complex_parse(t, n, &re, &im);
    if (clean) gc_free(vm, clean, (size_t)s->len + 1);
    if (!ok) vm_raise_kind(vm, ValueError, "complex() arg is a malformed string");
    return complex_value(vm, re, im);
}

/* x.__complex__() when x's type defines it (EMPTY otherwise). */
static Value call_complex_dunder(VM *vm, Value x) {
    if (!IS_OBJ(x) || IS_COMPLEX(vm, x)) return EMPTY_VAL;
    Value m = type_lookup(vm, vm_typeof(vm, x), str_cstr(vm, "__complex__"));
    if (IS_EMPTY(m)) return EMPTY_VAL;
    Value r = vm_call(vm, m, 1, &x);
    if (!IS_COMPLEX(vm, r))
        vm_raise_kind(vm, TypeError, "__complex__ returned non-complex (type %s)", vm_type_name(vm, r));
    return r;
}

/* float(x) through __float__ / __index__ when x's type has either; false
** when it has neither. */
static bool real_of(VM *vm, Value x, double *out) {
    if (IS_NUMBER(x)) {
        *out = AS_NUMBER(x);
        return true;
    }
    if (!IS_OBJ(x)) return false;
    Type *t = vm_typeof(vm, x);
    if (IS_EMPTY(type_lookup(vm, t, str_cstr(vm, "__float__"))) &&
        IS_EMPTY(type_lookup(vm, t, str_cstr(vm, "__index__"))))
        return false;
    *out = AS_FLOAT(vm_call(vm, OBJ_VAL(vm->t_float), 1, &x)); /* float(x): its errors too */
    return true;
}

void complex_coerce(VM *vm, Value x, double *re, double *im, const char *what) {
    if (complex_parts(vm, x, re, im)) return;
    Value c = call_complex_dunder(vm, x);
    if (!IS_EMPTY(c)) {
        *re = AS_COMPLEX(c)->real;
        *im = AS_COMPLEX(c)->imag;
        return;
    }
    *im = 0.0;
    if (real_of(vm, x, re)) return;
    vm_raise_kind(vm, TypeError, "%s", what);
}

static Value complex_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    Value r = argc > 0 ? argv[0] : EMPTY_VAL, i = argc > 1 ? argv[1] : EMPTY_VAL;
    if (argc > 2) vm_raise_kind(vm, TypeError, "complex() takes at most 2 arguments (%d given)", argc);
    Value kr = kwarg_take(vm, kwargs, "real"), ki = kwarg_take(vm, kwargs, "imag");
    kwargs_check_empty(vm, "complex", kwargs);
    if (!IS_EMPTY(kr)) {
        if (argc > 0) vm_raise_kind(vm, TypeError, "argument for complex() given by name ('real') and position (1)");
        r = kr;
    }
    if (!IS_EMPTY(ki)) {
        if (argc > 1) vm_raise_kind(vm, TypeError, "argument for complex() given by name ('imag') and position (2)");
        i = ki;
    }
    if (IS_EMPTY(r)) r = INT_VAL(0);
    if (IS_STR(vm, r)) {
        if (!IS_EMPTY(i)) vm_raise_kind(vm, TypeError, "complex() can't take second arg if first is a string");
        return complex_from_str(vm, AS_STR(r));
    }
    if (!IS_EMPTY(i) && IS_STR(vm, i)) vm_raise_kind(vm, TypeError, "complex() second arg can't be a string");
    if (IS_COMPLEX(vm, r) && IS_EMPTY(i)) return r;
    double rr, ri = 0.0, ir = 0.0, ii = 0.0;
    bool r_complex = false, i_complex = false;
    Value c = call_complex_dunder(vm, r);
    if (!IS_EMPTY(c)) r = c;
    if (IS_COMPLEX(vm, r)) {
        rr = AS_COMPLEX(r)->real, ri = AS_COMPLEX(r)->imag;
        r_complex = true;
    } else if (!real_of(vm, r, &rr)) {
        vm_raise_kind(vm, TypeError, "complex() first argument must be a string or a number, not '%s'",
                      vm_type_name(vm, r));
    }
    if (!IS_EMPTY(i)) {
        if (IS_COMPLEX(vm, i)) {
            ir = AS_COMPLEX(i)->real, ii = AS_COMPLEX(i)->imag;
            i_complex = true;
        } else if (!real_of(vm, i, &ir)) {
            vm_raise_kind(vm, TypeError, "complex() second argument must be a number, not '%s'",
                          vm_type_name(vm, i));
        }
    }
    /* (rr + ri j) + (ir + ii j) j */
    if (i_complex) rr -= ii;
    if (r_complex && !IS_EMPTY(i)) ir += ri;
    else if (r_complex) ir = ri;
    return complex_value(vm, rr, ir);
}

/* ============================================================= methods */

static Value complex_getattr(VM *vm, Value self, Str *name) {
    if (strcmp(name->chars, "real") == 0) return FLOAT_VAL(AS_COMPLEX(self)->real);
    if (strcmp(name->chars, "imag") == 0) return FLOAT_VAL(AS_COMPLEX(self)->imag);
    return generic_getattr(vm, self, name);
}

static Value m_conjugate(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "complex.conjugate", kwargs);
    arg_count(vm, "complex.conjugate", argc - 1, 0, 0);
    return complex_value(vm, AS_COMPLEX(argv[0])->real, -AS_COMPLEX(argv[0])->imag);
}

static Value m_complex(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "complex.__complex__", kwargs);
    arg_count(vm, "complex.__complex__", argc - 1, 0, 0);
    return argv[0];
}

/* abs(z): C99's hypot (infinity wins over NaN); overflow is an error. */
static Value m_abs(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "complex.__abs__", kwargs);
    arg_count(vm, "complex.__abs__", argc - 1, 0, 0);
    double re = AS_COMPLEX(argv[0])->real, im = AS_COMPLEX(argv[0])->imag, r = hypot(re, im);
    if (isinf(r) && isfinite(re) && isfinite(im)) vm_raise_kind(vm, OverflowError, "absolute value too large");
    return FLOAT_VAL(r);
}

static Value m_format(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "complex.__format__", kwargs);
    arg_count(vm, "complex.__format__", argc - 1, 1, 1);
    if (!IS_STR(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "__format__() argument must be str, not %s", vm_type_name(vm, argv[1]));
    return STR_VAL(format_complex_spec(vm, AS_COMPLEX(argv[0])->real, AS_COMPLEX(argv[0])->imag, AS_STR(argv[1])));
}

/* complex.__pow__(exp[, mod]): what pow(z, e, m) reaches; a modulus is an
** error for complex numbers. */
static Value m_pow(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "complex.__pow__", kwargs);
    arg_count(vm, "complex.__pow__", argc - 1, 1, 2);
    if (argc == 3 && !IS_NONE(argv[2])) vm_raise_kind(vm, ValueError, "complex modulo");
    Value r = complex_binop(vm, BINOP_POW, argv[0], argv[1]);
    return IS_EMPTY(r) ? vm->not_implemented : r;
}

void complex_init(VM *vm) {
    Type *t = type_new_builtin(vm, "complex", vm->t_object, 0);
    vm->t_complex = t;
    t->new_ = complex_new;
    t->repr = complex_repr;
    t->hash = complex_hash;
    t->compare = complex_compare;
    t->binop = complex_binop;
    t->unop = complex_unop;
    t->truthy = complex_truthy;
    t->getattr = complex_getattr;
    type_add_method(vm, t, "conjugate", m_conjugate);
    type_add_method(vm, t, "__complex__", m_complex);
    type_add_method(vm, t, "__abs__", m_abs);
    type_add_method(vm, t, "__format__", m_format);
    type_add_method(vm, t, "__pow__", m_pow);
    class_allow_subclass(vm, t, false); /* class C(complex): class_builtin_sub.c */
}
