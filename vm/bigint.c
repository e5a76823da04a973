/*
** bigint.c — arbitrary-precision ints on GMP. Values are read through
** read-only mpz views of the limbs (inline in the GC object, or one limb on
** the C stack for an int64); results are computed into a temporary mpz and
** copied into a new GC object, or demoted to VAL_INT when they fit. Sizes
** are checked before GMP allocates, because GMP aborts when malloc fails.
*/
#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigint.h"

_Static_assert(GMP_LIMB_BITS == 64 && GMP_NAIL_BITS == 0, "gpy needs 64-bit GMP limbs");

/* The largest int gpy builds, in bits: 2 GiB of limbs, or the VM's memory
** limit. Beyond it an operation raises MemoryError before GMP allocates. */
static void check_bits(VM *vm, double bits) {
    double bytes = bits / 8.0;
    size_t limit = vm->config.memory_limit;
    if (bytes > 2147483648.0 || (limit && bytes > (double)limit)) vm_throw(vm, vm->memory_error);
}

/* A read-only mpz over v's magnitude and sign (v a small or big int). */
typedef struct View {
    mpz_t z;
    mp_limb_t one;
} View;

static void view(VM *vm, Value v, View *w) {
    if (bigint_is(vm, v)) {
        BigInt *b = (BigInt *)AS_OBJ(v);
        mpz_roinit_n(w->z, (const mp_limb_t *)b->limbs, (mp_size_t)b->size);
        return;
    }
    int64_t i = AS_INTLIKE(v);
    w->one = i < 0 ? (mp_limb_t)0 - (mp_limb_t)i : (mp_limb_t)i;
    mpz_roinit_n(w->z, &w->one, i < 0 ? -1 : i > 0 ? 1 : 0);
}

Value bigint_from_u64(VM *vm, uint64_t u, bool neg) {
    if (!neg && u <= (uint64_t)INT64_MAX) return INT_VAL((int64_t)u);
    if (neg && u <= (uint64_t)1 << 63) return INT_VAL(u == (uint64_t)1 << 63 ? INT64_MIN : -(int64_t)u);
    BigInt *b = gc_alloc_obj(vm, vm->t_int, sizeof(BigInt) + sizeof(uint64_t));
    b->size = neg ? -1 : 1;
    b->limbs[0] = u;
    return OBJ_VAL(b);
}

/* The Value of z: VAL_INT when it fits, else a new BigInt. */
static Value from_mpz(VM *vm, mpz_srcptr z) {
    size_t n = mpz_size(z);
    int sign = mpz_sgn(z);
    if (n == 0) return INT_VAL(0);
    const mp_limb_t *d = mpz_limbs_read(z);
    if (n == 1) return bigint_from_u64(vm, d[0], sign < 0);
    BigInt *b = gc_alloc_obj(vm, vm->t_int, sizeof(BigInt) + n * sizeof(uint64_t));
    memcpy(b->limbs, d, n * sizeof(uint64_t));
    b->size = sign < 0 ? -(int64_t)n : (int64_t)n;
    return OBJ_VAL(b);
}

/* from_mpz, then frees z (a temporary). If the allocation raises
** MemoryError the temporary leaks: rare, and the process is at its limit. */
static Value take(VM *vm, mpz_t z) {
    Value r = from_mpz(vm, z);
    mpz_clear(z);
    return r;
}

/* A result of at most cap limbs computed straight into a new GC object:
** the mpz's limb pointer is the object's limbs and its _mp_alloc is cap, so
** GMP never reallocates it (it only does when _mp_alloc is too small). This
** saves a malloc, a copy and a free per operation on the hot + - * paths. */
typedef struct Direct {
    BigInt *obj;
    mpz_t z;
} Direct;

static void direct_init(VM *vm, Direct *d, size_t cap) {
    if (cap < 1) cap = 1;
    if (cap * 8 + sizeof(BigInt) > UINT32_MAX) vm_throw(vm, vm->memory_error);
    d->obj = gc_alloc_obj(vm, vm->t_int, sizeof(BigInt) + cap * sizeof(uint64_t));
    d->z->_mp_alloc = (int)cap;
    d->z->_mp_size = 0;
    d->z->_mp_d = (mp_limb_t *)d->obj->limbs;
}

/* The Value of a Direct result: the object itself, or a small int. */
static Value direct_value(VM *vm, Direct *d) {
    int size = d->z->_mp_size;
    size_t n = (size_t)(size < 0 ? -size : size);
    if (n <= 1) return n == 0 ? INT_VAL(0) : bigint_from_u64(vm, d->obj->limbs[0], size < 0);
    d->obj->size = size;
    return OBJ_VAL(d->obj);
}

static size_t nbits(mpz_srcptr z) { return mpz_sgn(z) == 0 ? 0 : mpz_sizeinbase(z, 2); }

int bigint_sign(VM *vm, Value v) {
    View w;
    view(vm, v, &w);
    return mpz_sgn(w.z);
}

bool bigint_to_int64(VM *vm, Value v, int64_t *out) {
    if (IS_INTLIKE(v)) {
        *out = AS_INTLIKE(v);
        return true;
    }
    (void)vm;
    return false; /* a BigInt never fits */
}

/* ============================================================ float */

/* |z| rounded to a double (correctly, half to even), times 2**-scale is not
** applied here: the caller gets the mantissa m (<= 56 bits, sticky bit set
** when lower bits were dropped) and the shift, so that ldexp rounds once. */
static double mag_to_double(mpz_srcptr z, bool *overflow) {
    size_t nb = nbits(z);
    *overflow = false;
    if (nb == 0) return 0.0;
    if (nb > 1024) {
        *overflow = true;
        return 0.0;
    }
    double d;
    if (nb <= 64) {
        uint64_t m = mpz_getlimbn(z, 0);
        if (nb <= 53) return mpz_sgn(z) < 0 ? -(double)m : (double)m;
        size_t shift = nb - 55;
        uint64_t top = m >> shift;
        if (m & (((uint64_t)1 << shift) - 1)) top |= 1;
        d = ldexp((double)top, (int)shift);
    } else {
        size_t shift = nb - 55;
        mpz_t t;
        mpz_init(t);
        mpz_tdiv_q_2exp(t, z, shift);
        uint64_t top = mpz_getlimbn(t, 0);
        mpz_clear(t);
        if (mpz_scan1(z, 0) < shift) top |= 1; /* two's complement keeps the lowest set bit */
        d = ldexp((double)top, (int)shift);
    }
    if (isinf(d)) {
        *overflow = true;
        return 0.0;
    }
    return mpz_sgn(z) < 0 ? -d : d;
}

double bigint_to_double(VM *vm, Value v) {
    if (IS_INTLIKE(v)) return (double)AS_INTLIKE(v);
    if (IS_FLOAT(v)) return AS_FLOAT(v);
    View w;
    view(vm, v, &w);
    bool ovf;
    double d = mag_to_double(w.z, &ovf);
    if (ovf) vm_raise_kind(vm, OverflowError, "int too large to convert to float");
    return d;
}

Value bigint_from_double(VM *vm, double d) {
    if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
    if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
    double t = trunc(d);
    if (t < 9223372036854775808.0 && t >= -9223372036854775808.0) return INT_VAL((int64_t)t);
    mpz_t z;
    mpz_init_set_d(z, t);
    return take(vm, z);
}

/* a / b for ints, correctly rounded: an integer quotient of 55-56 bits
** plus a sticky bit, scaled once by ldexp (fewer bits for subnormals). */
static double int_true_divide(VM *vm, Value a, Value b) {
    View wa, wb;
    view(vm, a, &wa);
    view(vm, b, &wb);
    if (mpz_sgn(wb.z) == 0) vm_raise_kind(vm, ZeroDivisionError, "division by zero");
    bool neg = (mpz_sgn(wa.z) < 0) != (mpz_sgn(wb.z) < 0);
    if (mpz_sgn(wa.z) == 0) return neg ? -0.0 : 0.0;
    int64_t na = (int64_t)nbits(wa.z), nb = (int64_t)nbits(wb.z);
    if (na <= 53 && nb <= 53) return mpz_get_d(wa.z) / mpz_get_d(wb.z);
    int64_t diff = na - nb;
    if (diff > 1025) vm_raise_kind(vm, OverflowError, "integer division result too large for a float");
    if (diff < -1080) return neg ? -0.0 : 0.0;
    int64_t k = 55 - diff;
    if (k > 1076) k = 1076; /* subnormal results: keep only the bits that survive */
    mpz_t n, d, q, r;
    mpz_inits(n, d, q, r, NULL);
    mpz_abs(n, wa.z);
    mpz_abs(d, wb.z);
    if (k >= 0) mpz_mul_2exp(n, n, (mp_bitcnt_t)k);
    else mpz_mul_2exp(d, d, (mp_bitcnt_t)-k);
    mpz_tdiv_qr(q, r, n, d);
    uint64_t m = mpz_get_ui(q);
    if (mpz_sgn(r) != 0) m |= 1;
    mpz_clears(n, d, q, r, NULL);
    double res = ldexp((double)m, (int)-k);
    if (isinf(res)) vm_raise_kind(vm, OverflowError, "integer division result too large for a float");
    return neg ? -res : res;
}

/* ======================================================= arithmetic */

static int64_t shift_count(VM *vm, Value n, bool *huge) {
    *huge = false;
    if (IS_INTLIKE(n)) {
        int64_t c = AS_INTLIKE(n);
        if (c < 0) vm_raise_kind(vm, ValueError, "negative shift count");
        return c;
    }
    if (bigint_sign(vm, n) < 0) vm_raise_kind(vm, ValueError, "negative shift count");
    *huge = true;
    return INT64_MAX;
}

static Value float_op(VM *vm, BinOp op, Value a, Value b) {
    /* mixed with a float: the int converts to float (CPython's rule) */
    double x = bigint_to_double(vm, a), y = bigint_to_double(vm, b);
    return num_binop(vm, op, FLOAT_VAL(x), FLOAT_VAL(y));
}

Value bigint_binop(VM *vm, BinOp op, Value a, Value b) {
    if (!bigint_is_numeric(vm, a) || !bigint_is_numeric(vm, b)) return EMPTY_VAL;
    if (IS_FLOAT(a) || IS_FLOAT(b)) {
        switch (op) {
        case BINOP_ADD: case BINOP_SUB: case BINOP_MUL: case BINOP_TRUEDIV:
        case BINOP_FLOORDIV: case BINOP_MOD: case BINOP_POW:
            return float_op(vm, op, a, b);
        default: return EMPTY_VAL;
        }
    }
    if (op == BINOP_POW) return bigint_pow(vm, a, b);
    if (op == BINOP_TRUEDIV) return FLOAT_VAL(int_true_divide(vm, a, b));
    if (op == BINOP_MATMUL) return EMPTY_VAL;
    View wa, wb;
    view(vm, a, &wa);
    view(vm, b, &wb);
    if (op == BINOP_ADD || op == BINOP_SUB || op == BINOP_MUL) {
        size_t na = mpz_size(wa.z), nb = mpz_size(wb.z);
        if (op == BINOP_MUL) check_bits(vm, (double)(na + nb) * 64.0);
        Direct d;
        direct_init(vm, &d, op == BINOP_MUL ? na + nb : (na > nb ? na : nb) + 1);
        /* the GC may have run: views of unboxed ints live on this stack, and
        ** boxed operands are rooted by the caller and never move */
        if (op == BINOP_ADD) mpz_add(d.z, wa.z, wb.z);
        else if (op == BINOP_SUB) mpz_sub(d.z, wa.z, wb.z);
        else mpz_mul(d.z, wa.z, wb.z);
        return direct_value(vm, &d);
    }
    mpz_t r;
    switch (op) {
    case BINOP_ADD:
        mpz_init(r);
        mpz_add(r, wa.z, wb.z);
        break;
    case BINOP_SUB:
        mpz_init(r);
        mpz_sub(r, wa.z, wb.z);
        break;
    case BINOP_MUL:
        check_bits(vm, (double)nbits(wa.z) + (double)nbits(wb.z));
        mpz_init(r);
        mpz_mul(r, wa.z, wb.z);
        break;
    case BINOP_FLOORDIV:
        if (mpz_sgn(wb.z) == 0) vm_raise_kind(vm, ZeroDivisionError, "integer division or modulo by zero");
        mpz_init(r);
        mpz_fdiv_q(r, wa.z, wb.z);
        break;
    case BINOP_MOD:
        if (mpz_sgn(wb.z) == 0) vm_raise_kind(vm, ZeroDivisionError, "integer modulo by zero");
        mpz_init(r);
        mpz_fdiv_r(r, wa.z, wb.z);
        break;
    case BINOP_LSHIFT: {
        bool huge;
        int64_t c = shift_count(vm, b, &huge);
        if (mpz_sgn(wa.z) == 0) return INT_VAL(0);
        if (huge) vm_raise_kind(vm, OverflowError, "too many digits in integer");
        check_bits(vm, (double)nbits(wa.z) + (double)c);
        mpz_init(r);
        mpz_mul_2exp(r, wa.z, (mp_bitcnt_t)c);
        break;
    }
    case BINOP_RSHIFT: {
        bool huge;
        int64_t c = shift_count(vm, b, &huge);
        if (huge || (uint64_t)c >= nbits(wa.z)) return INT_VAL(mpz_sgn(wa.z) < 0 ? -1 : 0);
        mpz_init(r);
        mpz_fdiv_q_2exp(r, wa.z, (mp_bitcnt_t)c);
        break;
    }
    case BINOP_AND:
        mpz_init(r);
        mpz_and(r, wa.z, wb.z);
        break;
    case BINOP_OR:
        mpz_init(r);
        mpz_ior(r, wa.z, wb.z);
        break;
    case BINOP_XOR:
        mpz_init(r);
        mpz_xor(r, wa.z, wb.z);
        break;
    default: return EMPTY_VAL;
    }
    return take(vm, r);
}

Value bigint_pow(VM *vm, Value a, Value b) {
    if (IS_FLOAT(a) || IS_FLOAT(b) || bigint_sign(vm, b) < 0) {
        if (!IS_FLOAT(a) && !IS_FLOAT(b) && bigint_sign(vm, a) == 0)
            vm_raise_kind(vm, ZeroDivisionError, "0.0 cannot be raised to a negative power");
        return float_op(vm, BINOP_POW, a, b);
    }
    View wa, wb;
    view(vm, a, &wa);
    view(vm, b, &wb);
    if (mpz_cmpabs_ui(wa.z, 1) <= 0) {
        /* 0, 1, -1: any exponent */
        if (mpz_sgn(wa.z) == 0) return INT_VAL(mpz_sgn(wb.z) == 0 ? 1 : 0);
        if (mpz_sgn(wa.z) > 0) return INT_VAL(1);
        return INT_VAL(mpz_odd_p(wb.z) ? -1 : 1);
    }
    if (!IS_INTLIKE(b)) vm_throw(vm, vm->memory_error); /* at least 2**(2**63) */
    uint64_t e = (uint64_t)AS_INTLIKE(b);
    check_bits(vm, (double)nbits(wa.z) * (double)e);
    mpz_t r;
    mpz_init(r);
    mpz_pow_ui(r, wa.z, e);
    return take(vm, r);
}

Value bigint_powmod(VM *vm, Value a, Value b, Value m) {
    View wa, wb, wm;
    view(vm, a, &wa);
    view(vm, b, &wb);
    view(vm, m, &wm);
    if (mpz_sgn(wm.z) == 0) vm_raise_kind(vm, ValueError, "pow() 3rd argument cannot be 0");
    mpz_t r, mod, base;
    mpz_inits(r, mod, base, NULL);
    mpz_abs(mod, wm.z);
    mpz_set(base, wa.z);
    if (mpz_sgn(wb.z) < 0) {
        if (!mpz_invert(base, wa.z, mod)) {
            mpz_clears(r, mod, base, NULL);
            vm_raise_kind(vm, ValueError, "base is not invertible for the given modulus");
        }
        mpz_t e;
        mpz_init(e);
        mpz_neg(e, wb.z);
        mpz_powm(r, base, e, mod);
        mpz_clear(e);
    } else {
        mpz_powm(r, base, wb.z, mod);
    }
    /* mpz_powm gives 0 <= r < |m|; Python's result has the sign of m */
    if (mpz_cmp_ui(mod, 1) == 0) mpz_set_ui(r, 0);
    if (mpz_sgn(wm.z) < 0 && mpz_sgn(r) != 0) mpz_sub(r, r, mod);
    mpz_clears(mod, base, NULL);
    return take(vm, r);
}

int bigint_cmp(VM *vm, Value a, Value b) {
    if (IS_FLOAT(a) || IS_FLOAT(b)) {
        bool swap = IS_FLOAT(a);
        Value iv = swap ? b : a;
        double f = AS_FLOAT(swap ? a : b);
        if (isnan(f)) return 2;
        int c;
        if (isinf(f)) {
            c = f > 0 ? -1 : 1;
        } else {
            View w;
            view(vm, iv, &w);
            c = mpz_cmp_d(w.z, f); /* exact */
            c = c < 0 ? -1 : c > 0 ? 1 : 0;
        }
        return swap ? -c : c;
    }
    View wa, wb;
    view(vm, a, &wa);
    view(vm, b, &wb);
    int c = mpz_cmp(wa.z, wb.z);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
}

Value bigint_unop(VM *vm, UnOp op, Value a) {
    View w;
    view(vm, a, &w);
    mpz_t r;
    mpz_init(r);
    switch (op) {
    case UNOP_NEG: mpz_neg(r, w.z); break;
    case UNOP_POS: mpz_set(r, w.z); break;
    case UNOP_INVERT: mpz_com(r, w.z); break;
    default: mpz_clear(r); return EMPTY_VAL;
    }
    return take(vm, r);
}

#define HASH_MODULUS ((((uint64_t)1) << 61) - 1)

/* CPython's int hash: |v| mod 2**61-1 with v's sign; -1 is reserved. */
int64_t bigint_hash(VM *vm, Value v) {
    View w;
    view(vm, v, &w);
    uint64_t m = mpz_tdiv_ui(w.z, HASH_MODULUS); /* of |v| */
    int64_t h = mpz_sgn(w.z) < 0 ? -(int64_t)m : (int64_t)m;
    return h == -1 ? -2 : h;
}

/* ============================================================ strings */

int64_t bigint_max_str_digits(VM *vm) {
    int64_t s = vm->int_max_str_digits;
    return s == 0 ? BIGINT_DEFAULT_MAX_STR_DIGITS : s < 0 ? 0 : s;
}

void bigint_set_max_str_digits(VM *vm, int64_t n) { vm->int_max_str_digits = n == 0 ? -1 : n; }

static _Noreturn void str_limit_error(VM *vm, int64_t limit) {
    vm_raise_kind(vm, ValueError,
                  "Exceeds the limit (%lld digits) for integer string conversion; "
                  "use sys.set_int_max_str_digits() to increase the limit",
                  (long long)limit);
}

char *bigint_digits(VM *vm, Value v, int base, bool upper, size_t *len) {
    View w;
    view(vm, v, &w);
    mpz_t mag;
    mpz_roinit_n(mag, mpz_limbs_read(w.z), (mp_size_t)mpz_size(w.z));
    size_t cap = mpz_sizeinbase(mag, base) + 2;
    int64_t limit = bigint_max_str_digits(vm);
    bool limited = base == 10 && limit > 0;
    if (limited && cap - 2 > (size_t)limit + 1) str_limit_error(vm, limit);
    char *buf = malloc(cap);
    if (!buf) vm_throw(vm, vm->memory_error);
    mpz_get_str(buf, upper ? -base : base, mag);
    *len = strlen(buf);
    if (limited && *len > (size_t)limit) {
        free(buf);
        str_limit_error(vm, limit);
    }
    return buf;
}

Str *bigint_to_str(VM *vm, Value v) {
    size_t n;
    char *d = bigint_digits(vm, v, 10, false, &n);
    bool neg = bigint_sign(vm, v) < 0;
    Str *s;
    if (neg) {
        char *full = malloc(n + 2);
        if (!full) {
            free(d);
            vm_throw(vm, vm->memory_error);
        }
        full[0] = '-';
        memcpy(full + 1, d, n + 1);
        free(d);
        d = full;
        n++;
    }
    s = str_new(vm, d, n); /* on MemoryError the digits leak: the VM is at its limit */
    free(d);
    return s;
}

Value bigint_from_digits(VM *vm, const char *digits, size_t len, int base, bool neg) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += digits[i] != '_';
    int64_t limit = bigint_max_str_digits(vm);
    if ((base & (base - 1)) != 0 && limit > 0 && n > (size_t)limit)
        vm_raise_kind(vm, ValueError,
                      "Exceeds the limit (%lld digits) for integer string conversion: value has %zu digits; "
                      "use sys.set_int_max_str_digits() to increase the limit",
                      (long long)limit, n);
    check_bits(vm, (double)n * log2((double)base));
    char *buf = malloc(n + 1);
    if (!buf) vm_throw(vm, vm->memory_error);
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        if (digits[i] != '_') buf[k++] = digits[i];
    buf[k] = 0;
    mpz_t z;
    mpz_init(z);
    mpz_set_str(z, buf, base);
    free(buf);
    if (neg) mpz_neg(z, z);
    return take(vm, z);
}

/* ============================================================== bits */

int64_t bigint_bit_length(VM *vm, Value v) {
    View w;
    view(vm, v, &w);
    return (int64_t)nbits(w.z);
}

int64_t bigint_bit_count(VM *vm, Value v) {
    View w;
    view(vm, v, &w);
    mpz_t mag;
    mpz_roinit_n(mag, mpz_limbs_read(w.z), (mp_size_t)mpz_size(w.z));
    return (int64_t)mpz_popcount(mag);
}

/* ============================================================== math */

Value bigint_gcd(VM *vm, Value a, Value b) {
    View wa, wb;
    view(vm, a, &wa);
    view(vm, b, &wb);
    mpz_t r;
    mpz_init(r);
    mpz_gcd(r, wa.z, wb.z);
    return take(vm, r);
}

Value bigint_isqrt(VM *vm, Value n) {
    View w;
    view(vm, n, &w);
    mpz_t r;
    mpz_init(r);
    mpz_sqrt(r, w.z);
    return take(vm, r);
}

Value bigint_factorial(VM *vm, uint64_t n) {
    /* log2(n!) < n * log2(n) */
    check_bits(vm, n > 1 ? (double)n * log2((double)n) : 1.0);
    mpz_t r;
    mpz_init(r);
    mpz_fac_ui(r, (unsigned long)n);
    return take(vm, r);
}

/* k as an unsigned long when it fits, for GMP's _ui functions. */
static bool small_ulong(VM *vm, Value v, unsigned long *out) {
    if (!IS_INTLIKE(v)) return false;
    (void)vm;
    *out = (unsigned long)AS_INTLIKE(v);
    return true;
}

Value bigint_comb(VM *vm, Value n, Value k) {
    View wn, wk;
    view(vm, n, &wn);
    view(vm, k, &wk);
    if (mpz_cmp(wk.z, wn.z) > 0) return INT_VAL(0);
    /* comb(n, k) == comb(n, n-k): use the smaller k */
    mpz_t kk, r;
    mpz_inits(kk, r, NULL);
    mpz_sub(kk, wn.z, wk.z);
    if (mpz_cmp(kk, wk.z) > 0) mpz_set(kk, wk.z);
    if (!mpz_fits_ulong_p(kk)) {
        mpz_clears(kk, r, NULL);
        vm_raise_kind(vm, OverflowError, "min(n - k, k) must not exceed %lld", (long long)INT64_MAX);
    }
    unsigned long kv = mpz_get_ui(kk);
    check_bits(vm, (double)kv * (double)nbits(wn.z));
    mpz_bin_ui(r, wn.z, kv);
    mpz_clear(kk);
    return take(vm, r);
}

Value bigint_perm(VM *vm, Value n, Value k) {
    View wn, wk;
    view(vm, n, &wn);
    view(vm, k, &wk);
    if (mpz_cmp(wk.z, wn.z) > 0) return INT_VAL(0);
    unsigned long kv;
    if (!small_ulong(vm, k, &kv)) vm_raise_kind(vm, OverflowError, "k must not exceed %lld", (long long)INT64_MAX);
    check_bits(vm, (double)kv * (double)nbits(wn.z));
    /* n * (n-1) * ... * (n-k+1) = (n-k+1) rising k */
    mpz_t base, r;
    mpz_inits(base, r, NULL);
    mpz_sub_ui(base, wn.z, kv);
    mpz_add_ui(base, base, 1);
    if (mpz_fits_ulong_p(base)) {
        /* small n: n! / (n-k)! through the factorial routines */
        unsigned long nv = mpz_get_ui(wn.z);
        mpz_t t;
        mpz_init(t);
        mpz_fac_ui(r, nv);
        mpz_fac_ui(t, nv - kv);
        mpz_divexact(r, r, t);
        mpz_clear(t);
    } else {
        mpz_set_ui(r, 1);
        for (unsigned long i = 0; i < kv; i++) {
            mpz_mul(r, r, base);
            mpz_add_ui(base, base, 1);
        }
    }
    mpz_clear(base);
    return take(vm, r);
}

double bigint_frexp(VM *vm, Value v, int64_t *e) {
    View w;
    view(vm, v, &w);
    mpz_t mag;
    mpz_roinit_n(mag, mpz_limbs_read(w.z), (mp_size_t)mpz_size(w.z));
    size_t nb = nbits(mag);
    if (nb == 0) {
        *e = 0;
        return 0.0;
    }
    uint64_t top;
    if (nb <= 55) {
        top = mpz_getlimbn(mag, 0) << (55 - nb);
    } else {
        size_t shift = nb - 55;
        mpz_t t;
        mpz_init(t);
        mpz_tdiv_q_2exp(t, mag, shift);
        top = mpz_getlimbn(t, 0);
        mpz_clear(t);
        if (mpz_scan1(mag, 0) < shift) top |= 1;
    }
    double x = ldexp((double)top, -55); /* rounds once, to 53 bits */
    *e = (int64_t)nb;
    if (x == 1.0) {
        x = 0.5;
        (*e)++;
    }
    return mpz_sgn(w.z) < 0 ? -x : x;
}

/* ============================================================== bytes */

Value bigint_from_bytes(VM *vm, const uint8_t *buf, size_t n, bool little_endian, bool is_signed) {
    check_bits(vm, (double)n * 8.0);
    mpz_t z;
    mpz_init(z);
    if (n) mpz_import(z, n, little_endian ? -1 : 1, 1, 0, 0, buf);
    if (is_signed && n) {
        uint8_t top = little_endian ? buf[n - 1] : buf[0];
        if (top & 0x80) {
            mpz_t t;
            mpz_init(t);
            mpz_setbit(t, (mp_bitcnt_t)n * 8);
            mpz_sub(z, z, t);
            mpz_clear(t);
        }
    }
    return take(vm, z);
}

bool bigint_to_bytes(VM *vm, Value v, uint8_t *out, size_t n, bool little_endian, bool is_signed) {
    View w;
    view(vm, v, &w);
    int sign = mpz_sgn(w.z);
    if (sign < 0 && !is_signed) return false;
    size_t bits = nbits(w.z);
    if (is_signed) {
        /* fits when -2**(8n-1) <= v < 2**(8n-1) */
        if (sign >= 0 && bits + 1 > n * 8 && bits) return false;
        if (sign < 0) {
            bool pow2 = mpz_scan1(w.z, 0) == bits - 1;
            size_t need = pow2 ? bits : bits + 1;
            if (need > n * 8) return false;
        }
    } else if (bits > n * 8) {
        return false;
    }
    mpz_t t;
    mpz_init(t);
    if (sign < 0) {
        mpz_setbit(t, (mp_bitcnt_t)n * 8);
        mpz_add(t, t, w.z); /* 2**(8n) + v: the two's complement pattern */
    } else {
        mpz_set(t, w.z);
    }
    memset(out, 0, n);
    size_t count = 0;
    size_t need = (nbits(t) + 7) / 8;
    if (need) {
        uint8_t *tmp = malloc(need);
        if (!tmp) {
            mpz_clear(t);
            vm_throw(vm, vm->memory_error);
        }
        mpz_export(tmp, &count, -1, 1, 0, 0, t); /* little endian */
        for (size_t i = 0; i < count && i < n; i++) out[little_endian ? i : n - 1 - i] = tmp[i];
        free(tmp);
    }
    mpz_clear(t);
    return true;
}
