/*
** nd_print.c — str()/repr() of arrays and numpy scalars, numpy 2.x byte for
** byte with numpy's default print options (precision 8, floatmode 'maxprec',
** linewidth 75, threshold 1000, edgeitems 3, sign '-').
**
** Floats are turned into decimal digits by a Dragon4-style exact bignum
** algorithm with the same stopping and rounding rules as numpy's, so that
** float16/32/64 get their own shortest round-trip digits ("0.1" for
** np.float32(0.1)) and a cut-off at a given precision is rounded from the
** exact binary value, as numpy does. Above that sit the rules of numpy's
** arrayprint.py: a first pass over the shown elements picks positional or
** scientific notation and the common paddings, a second pass formats each
** element, and the elements are laid out in nested brackets wrapped at the
** line width.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndarray.h"

enum {
    LINEWIDTH = 75,
    THRESHOLD = 1000,
    EDGEITEMS = 3,
    PRECISION = 8,
    ELEM_MAX = 64, /* bytes of one formatted element, always enough */
};


/* ======================= exact big integers ======================= */

/* Enough 32-bit blocks for 10 * (the largest scale any double needs, about
** 2^1080) with room to spare; the digit loop stops growing the margin once
** it has BIG_CAP blocks (it is then far above the scale, which is all the
** loop needs to know). */
enum { BIG_BLOCKS = 48, BIG_CAP = 44 };

typedef struct Big {
    int len; /* blocks in use; 0 means zero; blocks[len-1] != 0 */
    uint32_t b[BIG_BLOCKS];
} Big;

static void big_set_u64(Big *x, uint64_t v) {
    x->len = 0;
    while (v) {
        x->b[x->len++] = (uint32_t)v;
        v >>= 32;
    }
}

static int big_cmp(const Big *x, const Big *y) {
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    for (int i = x->len - 1; i >= 0; i--)
        if (x->b[i] != y->b[i]) return x->b[i] < y->b[i] ? -1 : 1;
    return 0;
}

static void big_mul_small(Big *x, uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < x->len; i++) {
        uint64_t t = (uint64_t)x->b[i] * m + carry;
        x->b[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && x->len < BIG_BLOCKS) x->b[x->len++] = (uint32_t)carry;
}

static void big_shl(Big *x, int shift) {
    if (x->len == 0 || shift == 0) return;
    int words = shift / 32, bits = shift % 32;
    int n = x->len;
    if (n + words + 1 > BIG_BLOCKS) return; /* cannot happen for IEEE inputs */
    x->b[n + words] = 0;
    for (int i = n - 1; i >= 0; i--) {
        uint32_t v = x->b[i];
        if (bits) {
            x->b[i + words + 1] |= v >> (32 - bits);
            x->b[i + words] = v << bits;
        } else {
            x->b[i + words] = v;
        }
    }
    for (int i = 0; i < words; i++) x->b[i] = 0;
    x->len = n + words + 1;
    while (x->len > 0 && x->b[x->len - 1] == 0) x->len--;
}

static void big_mul_pow10(Big *x, int n) {
    while (n >= 9) {
        big_mul_small(x, 1000000000u);
        n -= 9;
    }
    static const uint32_t p10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    if (n > 0) big_mul_small(x, p10[n]);
}

/* r = x + y */
static void big_add(Big *r, const Big *x, const Big *y) {
    const Big *l = x->len >= y->len ? x : y, *s = x->len >= y->len ? y : x;
    uint64_t carry = 0;
    int i = 0;
    for (; i < l->len; i++) {
        uint64_t t = (uint64_t)l->b[i] + (i < s->len ? s->b[i] : 0) + carry;
        r->b[i] = (uint32_t)t;
        carry = t >> 32;
    }
    r->len = l->len;
    if (carry && r->len < BIG_BLOCKS) r->b[r->len++] = 1;
}

/* x -= y, requires x >= y */
static void big_sub(Big *x, const Big *y) {
    int64_t borrow = 0;
    for (int i = 0; i < x->len; i++) {
        int64_t t = (int64_t)x->b[i] - (i < y->len ? y->b[i] : 0) - borrow;
        borrow = t < 0;
        x->b[i] = (uint32_t)(t + (borrow ? ((int64_t)1 << 32) : 0));
    }
    while (x->len > 0 && x->b[x->len - 1] == 0) x->len--;
}

/* Divides value by scale when value < 10*scale and scale is normalized
** (its top block in [2^27, 2^28), so value has at most as many blocks):
** returns the quotient digit and leaves the remainder in value. The
** estimate from the top blocks is exact or one too low. */
static int big_div_digit(Big *value, const Big *scale) {
    int n = scale->len;
    if (value->len < n) return 0;
    uint32_t q = value->b[n - 1] / (scale->b[n - 1] + 1);
    if (q) {
        /* value -= q * scale */
        uint64_t carry = 0, borrow = 0;
        for (int i = 0; i < n; i++) {
            uint64_t prod = (uint64_t)scale->b[i] * q + carry;
            carry = prod >> 32;
            uint64_t diff = (uint64_t)value->b[i] - (uint32_t)prod - borrow;
            value->b[i] = (uint32_t)diff;
            borrow = (diff >> 32) & 1;
        }
        while (value->len > 0 && value->b[value->len - 1] == 0) value->len--;
    }
    if (big_cmp(value, scale) >= 0) {
        big_sub(value, scale);
        q++;
    }
    return (int)q;
}

/* ======================= digit generation ======================= */

__extension__ typedef unsigned __int128 u128;

static u128 big_to_u128(const Big *x) {
    u128 r = 0;
    for (int i = x->len - 1; i >= 0; i--) r = (r << 32) | x->b[i];
    return r;
}

static int clz128(u128 x) {
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    if (hi) return __builtin_clzll(hi);
    return lo ? 64 + __builtin_clzll(lo) : 128;
}

/* A finite float split as mantissa * 2^exponent (numpy's view of it). */
typedef struct FloatParts {
    uint64_t mantissa;
    int exponent;
    int mantissa_bit;       /* index of the highest set bit of mantissa */
    bool unequal_margins;   /* the next float down is nearer than the next up */
    bool neg, is_nan, is_inf;
} FloatParts;

static int log2_u64(uint64_t v) {
    int r = 0;
    while (v >>= 1) r++;
    return r;
}

/* Decodes IEEE bits with the given mantissa/exponent widths. */
static FloatParts split_ieee(uint64_t bits, int mbits, int ebits) {
    FloatParts f;
    uint64_t mant = bits & (((uint64_t)1 << mbits) - 1);
    int bias = (1 << (ebits - 1)) - 1;
    int e = (int)((bits >> mbits) & (((uint64_t)1 << ebits) - 1));
    f.neg = (bits >> (mbits + ebits)) & 1;
    f.is_nan = e == (1 << ebits) - 1 && mant != 0;
    f.is_inf = e == (1 << ebits) - 1 && mant == 0;
    if (e != 0) {
        f.mantissa = ((uint64_t)1 << mbits) | mant;
        f.exponent = e - bias - mbits;
        f.mantissa_bit = mbits;
        f.unequal_margins = e != 1 && mant == 0;
    } else {
        f.mantissa = mant;
        f.exponent = 1 - bias - mbits;
        f.mantissa_bit = mant ? log2_u64(mant) : 0;
        f.unequal_margins = false;
    }
    return f;
}

static FloatParts float_parts(NDType dt, const void *p) {
    if (dt == ND_FLOAT16) {
        uint16_t h;
        memcpy(&h, p, 2);
        return split_ieee(h, 10, 5);
    }
    if (dt == ND_FLOAT32) {
        uint32_t u;
        memcpy(&u, p, 4);
        return split_ieee(u, 23, 8);
    }
    uint64_t u;
    memcpy(&u, p, 8);
    return split_ieee(u, 52, 11);
}

typedef enum { CUT_TOTAL, CUT_FRACTION } CutoffMode;

enum { DIGITS_MAX = 400 };

/* Dragon4 in numpy's "unique" mode: the shortest digits that identify the
** value among floats of its type, stopping early at the cutoff_max digit
** (-1: none) and going on to at least the cutoff_min digit (-1: none);
** cutoffs count total digits (CUT_TOTAL) or digits after the point
** (CUT_FRACTION). Writes digits (no sign, no point) to out, returns their
** count and sets *out_exp to the decimal exponent of the first digit. */
static int dragon4(const FloatParts *f, CutoffMode mode, int cutoff_max, int cutoff_min,
                   char *out, int *out_exp) {
    if (f->mantissa == 0) {
        out[0] = '0';
        *out_exp = 0;
        return 1;
    }
    Big value, scale, mlow;
    big_set_u64(&value, f->mantissa);
    /* value/scale = the float; margins = half the gaps to its neighbours */
    if (f->unequal_margins) {
        if (f->exponent > 0) {
            big_shl(&value, f->exponent + 2);
            big_set_u64(&scale, 4);
            big_set_u64(&mlow, 1);
            big_shl(&mlow, f->exponent);
        } else {
            big_shl(&value, 2);
            big_set_u64(&scale, 1);
            big_shl(&scale, -f->exponent + 2);
            big_set_u64(&mlow, 1);
        }
    } else {
        if (f->exponent > 0) {
            big_shl(&value, f->exponent + 1);
            big_set_u64(&scale, 2);
            big_set_u64(&mlow, 1);
            big_shl(&mlow, f->exponent);
        } else {
            big_shl(&value, 1);
            big_set_u64(&scale, 1);
            big_shl(&scale, -f->exponent + 1);
            big_set_u64(&mlow, 1);
        }
    }
    /* the high margin is mlow, or 2*mlow with unequal margins */
    bool twice = f->unequal_margins;
    const double log10_2 = 0.30102999566398119521373889472449;
    int digit_exp = (int)ceil((double)(f->mantissa_bit + f->exponent) * log10_2 - 0.69);
    if (mode == CUT_FRACTION && cutoff_max >= 0 && digit_exp <= -cutoff_max)
        digit_exp = -cutoff_max + 1;
    if (digit_exp > 0) {
        big_mul_pow10(&scale, digit_exp);
    } else if (digit_exp < 0) {
        big_mul_pow10(&value, -digit_exp);
        big_mul_pow10(&mlow, -digit_exp);
    }
    /* the estimate is exact or one too low */
    if (big_cmp(&value, &scale) >= 0) {
        digit_exp++;
    } else {
        big_mul_small(&value, 10);
        big_mul_small(&mlow, 10);
    }
    int cut_max_exp = digit_exp - DIGITS_MAX;
    if (cutoff_max >= 0) {
        int want = mode == CUT_TOTAL ? digit_exp - cutoff_max : -cutoff_max;
        if (want > cut_max_exp) cut_max_exp = want;
    }
    int cut_min_exp = digit_exp;
    if (cutoff_min >= 0) {
        int want = mode == CUT_TOTAL ? digit_exp - cutoff_min : -cutoff_min;
        if (want < cut_min_exp) cut_min_exp = want;
    }
    *out_exp = digit_exp - 1;

    int n = 0, digit, half_cmp = 0;
    bool low, high, even = (f->mantissa & 1) == 0;
    if (value.len <= 3 && scale.len <= 3 && mlow.len <= 3) {
        /* fast path: everything fits in 128 bits (most values in practice);
        ** same steps as the bignum loop below */
        u128 v = big_to_u128(&value), sc = big_to_u128(&scale), ml = big_to_u128(&mlow);
        int sbits = 128 - clz128(sc);
        int shift = sbits > 60 ? sbits - 60 : 0;
        uint64_t s_top = (uint64_t)(sc >> shift) + (shift ? 1 : 0);
        for (;;) {
            digit_exp--;
            digit = (int)((uint64_t)(v >> shift) / s_top);
            v -= (u128)(unsigned)digit * sc;
            while (v >= sc) {
                v -= sc;
                digit++;
            }
            u128 vh = v + ml + (twice ? ml : 0);
            low = even ? v <= ml : v < ml;
            high = even ? vh >= sc : vh > sc;
            if (((low || high) && digit_exp <= cut_min_exp) || digit_exp == cut_max_exp) break;
            out[n++] = (char)('0' + digit);
            v *= 10;
            if (ml <= sc) ml *= 10;
        }
        if (low == high) half_cmp = 2 * v < sc ? -1 : 2 * v > sc ? 1 : 0;
    } else {
        /* normalize for big_div_digit: top block of scale in [2^27, 2^28) */
        int hb = 31 - __builtin_clz(scale.b[scale.len - 1]);
        int shift = (32 + 27 - hb) % 32;
        big_shl(&value, shift);
        big_shl(&scale, shift);
        big_shl(&mlow, shift);
        Big vhigh;
        for (;;) {
            digit_exp--;
            digit = big_div_digit(&value, &scale);
            big_add(&vhigh, &value, &mlow);
            if (twice) big_add(&vhigh, &vhigh, &mlow);
            /* an even mantissa wins ties when read back: the bounds count */
            low = big_cmp(&value, &mlow) < (even ? 1 : 0);
            high = big_cmp(&vhigh, &scale) > (even ? -1 : 0);
            if (((low || high) && digit_exp <= cut_min_exp) || digit_exp == cut_max_exp) break;
            out[n++] = (char)('0' + digit);
            big_mul_small(&value, 10);
            /* once a margin exceeds the scale, low/high stay true: stop growing it */
            if (mlow.len < BIG_CAP) big_mul_small(&mlow, 10);
        }
        if (low == high) {
            big_shl(&value, 1);
            half_cmp = big_cmp(&value, &scale);
        }
    }
    bool round_down = low;
    if (low == high) /* round to the closest digit, ties to an even digit */
        round_down = half_cmp < 0 || (half_cmp == 0 && (digit & 1) == 0);
    if (round_down) {
        out[n++] = (char)('0' + digit);
    } else if (digit == 9) {
        for (;;) {
            if (n == 0) {
                out[n++] = '1';
                *out_exp += 1;
                break;
            }
            n--;
            if (out[n] != '9') {
                out[n]++;
                n++;
                break;
            }
        }
    } else {
        out[n++] = (char)('0' + digit + 1);
    }
    return n;
}

/* ======================= one float as text ======================= */

typedef enum {
    TRIM_NONE,      /* 'k': keep trailing zeros */
    TRIM_ONE_ZERO,  /* '0': "1.0" */
    TRIM_ZEROS,     /* '.': "1." */
    TRIM_DPT_ZEROS, /* '-': "1" */
} TrimMode;

/* numpy's dragon4_positional (fractional cutoff): writes to buf (at least
** DIGITS_MAX + 64 bytes + paddings), returns the length. */
static int format_positional(char *buf, const FloatParts *f, int precision, int min_digits,
                             TrimMode trim, int pad_left, int pad_right) {
    char digits[DIGITS_MAX + 8];
    int pexp;
    int nd = dragon4(f, CUT_FRACTION, precision, min_digits, digits, &pexp);
    int pos = 0, has_sign = 0, whole, nfrac = 0;
    if (f->neg) {
        buf[pos++] = '-';
        has_sign = 1;
    }
    if (pexp >= 0) {
        whole = pexp + 1;
        if (nd <= whole) {
            memcpy(buf + pos, digits, (size_t)nd);
            pos += nd;
            for (int i = nd; i < whole; i++) buf[pos++] = '0';
        } else {
            memcpy(buf + pos, digits, (size_t)whole);
            pos += whole;
            buf[pos++] = '.';
            nfrac = nd - whole;
            memcpy(buf + pos, digits + whole, (size_t)nfrac);
            pos += nfrac;
        }
    } else {
        whole = 1;
        buf[pos++] = '0';
        buf[pos++] = '.';
        int zeros = -(pexp + 1);
        for (int i = 0; i < zeros; i++) buf[pos++] = '0';
        memcpy(buf + pos, digits, (size_t)nd);
        pos += nd;
        nfrac = zeros + nd;
    }
    if (trim != TRIM_DPT_ZEROS && nfrac == 0) buf[pos++] = '.';
    if (trim == TRIM_ONE_ZERO) {
        if (nfrac == 0) {
            buf[pos++] = '0';
            nfrac++;
        }
    } else if (trim == TRIM_NONE && precision > nfrac) {
        for (; nfrac < precision; nfrac++) buf[pos++] = '0';
    }
    if (precision >= 0 && trim != TRIM_NONE && nfrac > 0) {
        while (buf[pos - 1] == '0') {
            pos--;
            nfrac--;
        }
        if (buf[pos - 1] == '.') {
            if (trim == TRIM_ONE_ZERO) {
                buf[pos++] = '0';
                nfrac++;
            } else if (trim == TRIM_DPT_ZEROS) {
                pos--;
            }
        }
    }
    if (pad_right >= nfrac) {
        if (trim == TRIM_DPT_ZEROS && nfrac == 0) buf[pos++] = ' ';
        for (int i = nfrac; i < pad_right; i++) buf[pos++] = ' ';
    }
    if (pad_left > whole + has_sign) {
        int shift = pad_left - (whole + has_sign);
        memmove(buf + shift, buf, (size_t)pos);
        memset(buf, ' ', (size_t)shift);
        pos += shift;
    }
    buf[pos] = 0;
    return pos;
}

/* numpy's dragon4_scientific: precision/min_digits count digits after the
** point; exp_digits is the minimum exponent width (-1: 2). */
static int format_scientific(char *buf, const FloatParts *f, int precision, int min_digits,
                             TrimMode trim, int pad_left, int exp_digits) {
    char digits[DIGITS_MAX + 8];
    int pexp;
    int nd = dragon4(f, CUT_TOTAL, precision < 0 ? -1 : precision + 1,
                     min_digits < 0 ? -1 : min_digits + 1, digits, &pexp);
    int pos = 0, has_sign = 0;
    if (f->neg) {
        buf[pos++] = '-';
        has_sign = 1;
    }
    buf[pos++] = digits[0];
    int nfrac = nd - 1;
    if (nfrac > 0) {
        buf[pos++] = '.';
        memcpy(buf + pos, digits + 1, (size_t)nfrac);
        pos += nfrac;
    }
    if (trim != TRIM_DPT_ZEROS && nfrac == 0) buf[pos++] = '.';
    if (trim == TRIM_ONE_ZERO) {
        if (nfrac == 0) {
            buf[pos++] = '0';
            nfrac++;
        }
    } else if (trim == TRIM_NONE && precision > nfrac) {
        for (; nfrac < precision; nfrac++) buf[pos++] = '0';
    }
    if (precision >= 0 && trim != TRIM_NONE && nfrac > 0) {
        while (buf[pos - 1] == '0') {
            pos--;
            nfrac--;
        }
        if (trim == TRIM_ONE_ZERO && buf[pos - 1] == '.') {
            buf[pos++] = '0';
            nfrac++;
        }
    }
    if (exp_digits > 5) exp_digits = 5;
    if (exp_digits < 0) exp_digits = 2;
    buf[pos++] = 'e';
    if (pexp >= 0) {
        buf[pos++] = '+';
    } else {
        buf[pos++] = '-';
        pexp = -pexp;
    }
    int ne = pexp >= 10000 ? 5 : pexp >= 1000 ? 4 : pexp >= 100 ? 3 : pexp >= 10 ? 2 : 1;
    if (ne < exp_digits) ne = exp_digits;
    for (int i = ne - 1; i >= 0; i--, pexp /= 10) buf[pos + i] = (char)('0' + pexp % 10);
    pos += ne;
    if (pad_left > 1 + has_sign) {
        int shift = pad_left - (1 + has_sign);
        memmove(buf + shift, buf, (size_t)pos);
        memset(buf, ' ', (size_t)shift);
        pos += shift;
    }
    buf[pos] = 0;
    return pos;
}

/* ======================= scalars ======================= */

/* Converts IEEE half bits to double (exact). */
static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0) v = ldexp((double)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp((double)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Rounds a double to the nearest float16 value (ties to even), as a double. */
static double round_to_half(double x) {
    if (isnan(x) || isinf(x) || x == 0) return x;
    double a = fabs(x);
    if (a >= 65520.0) return x < 0 ? -INFINITY : INFINITY;
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int q = e - 11; /* quantum exponent: 11 significant bits */
    if (q < -24) q = -24; /* subnormals */
    double r = ldexp(nearbyint(ldexp(a, -q)), q);
    return x < 0 ? -r : r;
}

static double load_float(NDType dt, const void *p) {
    if (dt == ND_FLOAT16) {
        uint16_t h;
        memcpy(&h, p, 2);
        return half_to_double(h);
    }
    if (dt == ND_FLOAT32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

/* Integer element as signed (or, for uint64, unsigned) 64-bit. */
static bool load_int(NDType dt, const void *p, int64_t *s, uint64_t *u) {
    switch (dt) {
    case ND_BOOL: *s = *(const uint8_t *)p != 0; return false;
    case ND_INT8: { int8_t v; memcpy(&v, p, 1); *s = v; return false; }
    case ND_INT16: { int16_t v; memcpy(&v, p, 2); *s = v; return false; }
    case ND_INT32: { int32_t v; memcpy(&v, p, 4); *s = v; return false; }
    case ND_INT64: { int64_t v; memcpy(&v, p, 8); *s = v; return false; }
    case ND_UINT8: { uint8_t v; memcpy(&v, p, 1); *s = v; return false; }
    case ND_UINT16: { uint16_t v; memcpy(&v, p, 2); *s = v; return false; }
    case ND_UINT32: { uint32_t v; memcpy(&v, p, 4); *s = v; return false; }
    default: { uint64_t v; memcpy(&v, p, 8); *u = v; return true; }
    }
}

/* Decimal text of an integer element; returns the length. */
static int format_int(char *buf, NDType dt, const void *p) {
    int64_t s = 0;
    uint64_t u = 0;
    bool neg = false;
    if (!load_int(dt, p, &s, &u)) {
        neg = s < 0;
        u = neg ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    }
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    int len = 0;
    if (neg) buf[len++] = '-';
    while (n) buf[len++] = tmp[--n];
    buf[len] = 0;
    return len;
}

/* str() of a numpy float scalar: shortest digits, positional between 1e-4
** and a per-type limit, else scientific. */
static int format_float_scalar(char *buf, NDType dt, const void *p) {
    FloatParts f = float_parts(dt, p);
    if (f.is_nan) return snprintf(buf, ELEM_MAX, "nan");
    if (f.is_inf) return snprintf(buf, ELEM_MAX, f.neg ? "-inf" : "inf");
    double a = fabs(load_float(dt, p));
    double upper = dt == ND_FLOAT16 ? 1e3 : dt == ND_FLOAT32 ? 1e6 : 1e16;
    if (a == 0 || (a >= 1e-4 && a < upper))
        return format_positional(buf, &f, -1, -1, TRIM_ONE_ZERO, -1, -1);
    return format_scientific(buf, &f, -1, -1, TRIM_DPT_ZEROS, -1, -1);
}

/* One part of a complex scalar: shortest digits without a trailing ".0",
** as Python prints complex numbers. */
static int format_complex_part(char *buf, NDType pt, const void *p) {
    FloatParts f = float_parts(pt, p);
    if (f.is_nan) return snprintf(buf, ELEM_MAX, "nan");
    if (f.is_inf) return snprintf(buf, ELEM_MAX, f.neg ? "-inf" : "inf");
    double a = fabs(load_float(pt, p));
    double upper = pt == ND_FLOAT32 ? 1e6 : 1e16;
    if (a == 0 || (a >= 1e-4 && a < upper)) return format_positional(buf, &f, -1, -1, TRIM_DPT_ZEROS, -1, -1);
    return format_scientific(buf, &f, -1, -1, TRIM_DPT_ZEROS, -1, -1);
}

/* str() of a complex scalar: "1j", "(1+2j)", "(-0-1j)", "(nan+infj)". */
static void format_complex_scalar(StrBuf *sb, NDType dt, const void *p, bool parens) {
    NDType pt = dt == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
    const char *ip = (const char *)p + nd_itemsize(pt);
    char re[DIGITS_MAX + 64], im[DIGITS_MAX + 64];
    format_complex_part(im, pt, ip);
    double r = load_float(pt, p);
    if (r == 0 && !signbit(r)) {
        sb_printf(sb, "%sj", im);
        return;
    }
    format_complex_part(re, pt, p);
    sb_printf(sb, parens ? "(%s%s%sj)" : "%s%s%sj", re, im[0] == '-' ? "" : "+", im);
}

Str *nd_format_scalar(VM *vm, NDType dt, const void *p, bool repr) {
    char buf[DIGITS_MAX + 64];
    StrBuf sb;
    sb_init(&sb);
    if (nd_is_complex(dt)) {
        if (repr) sb_printf(&sb, "np.%s(", dtype_name(dt));
        format_complex_scalar(&sb, dt, p, !repr); /* repr: np.complex128(1+2j) */
        if (repr) sb_putc(&sb, ')');
        return sb_finish(vm, &sb);
    }
    if (dt == ND_BOOL) {
        bool t = *(const uint8_t *)p != 0;
        sb_appends(&sb, repr ? (t ? "np.True_" : "np.False_") : (t ? "True" : "False"));
        return sb_finish(vm, &sb);
    }
    if (nd_is_float(dt)) format_float_scalar(buf, dt, p);
    else format_int(buf, dt, p);
    if (repr) sb_printf(&sb, "np.%s(%s)", dtype_name(dt), buf);
    else sb_appends(&sb, buf);
    return sb_finish(vm, &sb);
}

/* ======================= array element formatter ======================= */

/* How every element of one array is formatted (numpy's FloatingFormat /
** IntegerFormat / BoolFormat, built from the elements that are shown). */
typedef struct ElemFormat {
    NDType dt;
    bool zero_d;
    /* ints */
    int int_width;
    /* floats */
    bool exp_format;
    int precision, min_digits, pad_left, pad_right, exp_size;
    TrimMode trim;
    /* statistics gathered by the first pass */
    bool any_finite, any_nonfinite, any_neginf;
    double max_abs, min_abs; /* over finite nonzero values */
    bool any_nonzero;
    int64_t imin, imax;
    uint64_t umin, umax;
    bool any;
    int max_int_len, max_frac_len, max_exp_len;
    /* first-pass text of each shown element in visiting order, reused by the
    ** second pass when it would produce the same digits (NULL: none) */
    struct CachedElem *cache;
    int64_t ncache, cursor;
    /* complex arrays: this formats the real parts; imag the imaginary ones
    ** (numpy's ComplexFloatingFormat: two FloatingFormats, the second with
    ** sign '+'); plus_sign marks that second one */
    struct ElemFormat *imag;
    bool plus_sign;
} ElemFormat;

typedef struct CachedElem {
    char text[29];
    uint8_t len;      /* 0: not cached (non-finite, or too long) */
    uint8_t int_len, frac_len, exp_len;
} CachedElem;

/* Visits the shown elements of a (all of them, or the edge items of every
** axis when summarizing), in C order. */
typedef void (*ElemVisitor)(ElemFormat *ef, const char *p);

static void visit_shown(const NDArray *a, int axis, const char *base, bool summarize,
                        ElemFormat *ef, ElemVisitor fn) {
    if (axis == a->ndim) {
        fn(ef, base);
        return;
    }
    int64_t n = a->shape[axis], st = a->strides[axis];
    if (summarize && n > 2 * EDGEITEMS) {
        for (int64_t i = 0; i < EDGEITEMS; i++) visit_shown(a, axis + 1, base + i * st, summarize, ef, fn);
        for (int64_t i = n - EDGEITEMS; i < n; i++) visit_shown(a, axis + 1, base + i * st, summarize, ef, fn);
    } else {
        for (int64_t i = 0; i < n; i++) visit_shown(a, axis + 1, base + i * st, summarize, ef, fn);
    }
}

static void gather_int(ElemFormat *ef, const char *p) {
    int64_t s = 0;
    uint64_t u = 0;
    if (load_int(ef->dt, p, &s, &u)) {
        if (!ef->any || u < ef->umin) ef->umin = u;
        if (!ef->any || u > ef->umax) ef->umax = u;
    } else {
        if (!ef->any || s < ef->imin) ef->imin = s;
        if (!ef->any || s > ef->imax) ef->imax = s;
    }
    ef->any = true;
}

static void gather_float_range(ElemFormat *ef, const char *p) {
    double v = load_float(ef->dt, p);
    if (isnan(v) || isinf(v)) {
        ef->any_nonfinite = true;
        if (isinf(v) && v < 0) ef->any_neginf = true;
        return;
    }
    ef->any_finite = true;
    if (v == 0) return;
    double a = fabs(v);
    if (!ef->any_nonzero || a > ef->max_abs) ef->max_abs = a;
    if (!ef->any_nonzero || a < ef->min_abs) ef->min_abs = a;
    ef->any_nonzero = true;
}

/* First formatting pass over one finite value: records part widths. */
static void gather_float_widths(ElemFormat *ef, const char *p) {
    CachedElem *ce = ef->cache && ef->cursor < ef->ncache ? &ef->cache[ef->cursor++] : NULL;
    if (ce) ce->len = 0;
    FloatParts f = float_parts(ef->dt, p);
    if (f.is_nan || f.is_inf) return;
    char buf[DIGITS_MAX + 64];
    int len, int_len, frac_len, exp_len = 0;
    if (ef->exp_format) {
        len = format_scientific(buf, &f, PRECISION, -1, TRIM_ZEROS, -1, -1);
        char *e = memchr(buf, 'e', (size_t)len);
        char *dot = memchr(buf, '.', (size_t)len);
        int_len = (int)(dot - buf);
        frac_len = (int)(e - dot - 1);
        exp_len = (int)(buf + len - e - 1);
        if (exp_len > ef->max_exp_len) ef->max_exp_len = exp_len;
    } else {
        len = format_positional(buf, &f, PRECISION, -1, TRIM_ZEROS, -1, -1);
        char *dot = memchr(buf, '.', (size_t)len);
        int_len = (int)(dot - buf);
        frac_len = (int)(buf + len - dot - 1);
    }
    if (ef->plus_sign && !f.neg) int_len++; /* the '+' */
    if (int_len > ef->max_int_len) ef->max_int_len = int_len;
    if (frac_len > ef->max_frac_len) ef->max_frac_len = frac_len;
    if (ce && len < (int)sizeof ce->text) {
        memcpy(ce->text, buf, (size_t)len);
        ce->len = (uint8_t)len;
        ce->int_len = (uint8_t)int_len;
        ce->frac_len = (uint8_t)frac_len;
        ce->exp_len = (uint8_t)exp_len;
    }
}

/* The second-pass text of a finite element from its first-pass text, when
** that is certain to have the same digits: positional text (unless digits
** stopped before the units place, where numpy's second pass goes on), or
** scientific text that already has the common digit and exponent counts.
** Returns the length, or -1 when the element must be formatted again. */
static int reuse_cached(const ElemFormat *ef, const CachedElem *ce, char *buf) {
    if (ce->len == 0) return -1;
    int right = 0;
    if (ef->exp_format) {
        if (ce->frac_len != ef->precision || ce->exp_len != ef->exp_size + 1) return -1;
    } else {
        if (ce->frac_len == 0 && ce->int_len > 1 && ce->text[ce->int_len - 1] == '0') return -1;
        right = ef->pad_right - ce->frac_len;
    }
    int left = ef->pad_left - ce->int_len;
    if (left < 0) left = 0;
    if (right < 0) right = 0;
    memset(buf, ' ', (size_t)left);
    memcpy(buf + left, ce->text, ce->len);
    memset(buf + left + ce->len, ' ', (size_t)right);
    return left + ce->len + right;
}

/* numpy's choice of scientific notation, with the comparisons done in the
** array's own float type as numpy does (Python scalars are cast to it). */
static bool wants_exp_format(const ElemFormat *ef) {
    if (!ef->any_nonzero) return false;
    double mx = ef->max_abs, mn = ef->min_abs;
    switch (ef->dt) {
    case ND_FLOAT16: {
        if (mx >= 1e3) return true;
        if (mn < round_to_half(1e-4)) return true;
        float q = (float)mx / (float)mn;
        return round_to_half((double)q) > 1000.0;
    }
    case ND_FLOAT32: {
        if (mx >= 1e6) return true;
        if (mn < (double)(float)1e-4) return true;
        float q = (float)mx / (float)mn;
        return q > 1000.0f;
    }
    default:
        return mx >= 1e8 || mn < 1e-4 || mx / mn > 1000.0;
    }
}

static void build_format(ElemFormat *ef, const NDArray *a, bool summarize);

/* The formats of a complex array's real and imaginary parts, built over
** header copies of a that read one float of each element. */
static void build_complex_format(ElemFormat *re, ElemFormat *im, const NDArray *a, bool summarize) {
    NDType pt = a->dtype == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
    NDArray part = *a;
    part.dtype = pt;
    build_format(re, &part, summarize);
    memset(im, 0, sizeof *im);
    im->plus_sign = true;
    part.data += nd_itemsize(pt);
    build_format(im, &part, summarize);
    re->imag = im;
}

static void build_format(ElemFormat *ef, const NDArray *a, bool summarize) {
    bool plus = ef->plus_sign;
    memset(ef, 0, sizeof *ef);
    ef->plus_sign = plus;
    ef->dt = a->dtype;
    ef->zero_d = a->ndim == 0;
    if (ef->dt == ND_BOOL) return;
    if (!nd_is_float(ef->dt)) {
        visit_shown(a, 0, a->data, summarize, ef, gather_int);
        char b1[32], b2[32];
        int l1, l2;
        if (ef->dt == ND_UINT64) {
            l1 = snprintf(b1, sizeof b1, "%llu", (unsigned long long)ef->umin);
            l2 = snprintf(b2, sizeof b2, "%llu", (unsigned long long)ef->umax);
        } else {
            l1 = snprintf(b1, sizeof b1, "%lld", (long long)ef->imin);
            l2 = snprintf(b2, sizeof b2, "%lld", (long long)ef->imax);
        }
        ef->int_width = l1 > l2 ? l1 : l2;
        return;
    }
    visit_shown(a, 0, a->data, summarize, ef, gather_float_range);
    ef->exp_format = wants_exp_format(ef);
    if (!ef->any_finite) {
        ef->pad_left = ef->pad_right = 0;
        ef->trim = TRIM_ZEROS;
        ef->exp_size = -1;
        ef->min_digits = -1;
        ef->precision = PRECISION;
    } else {
        /* one cache slot per shown element */
        int64_t shown = 1;
        for (int i = 0; i < a->ndim; i++)
            shown *= summarize && a->shape[i] > 2 * EDGEITEMS ? 2 * EDGEITEMS : a->shape[i];
        ef->cache = plus ? NULL : malloc((size_t)shown * sizeof(CachedElem)); /* no reuse with a '+' */
        ef->ncache = ef->cache ? shown : 0;
        ef->cursor = 0;
        visit_shown(a, 0, a->data, summarize, ef, gather_float_widths);
        ef->cursor = 0;
        if (ef->exp_format) {
            ef->exp_size = ef->max_exp_len - 1;
            ef->trim = TRIM_NONE;
            ef->precision = ef->min_digits = ef->max_frac_len;
            ef->pad_left = ef->max_int_len;
            ef->pad_right = ef->exp_size + 2 + ef->precision;
        } else {
            ef->pad_left = ef->max_int_len;
            ef->pad_right = ef->max_frac_len;
            ef->exp_size = -1;
            ef->trim = TRIM_ZEROS;
            ef->precision = PRECISION;
            ef->min_digits = 0;
        }
    }
    if (ef->any_nonfinite) {
        int offset = ef->pad_right + 1;
        int nan_need = 3 - offset, inf_need = 3 + (ef->any_neginf || plus ? 1 : 0) - offset;
        if (nan_need > ef->pad_left) ef->pad_left = nan_need;
        if (inf_need > ef->pad_left) ef->pad_left = inf_need;
    }
}

/* Writes s right-aligned in width w; returns the length. */
static int right_align(char *buf, const char *s, int len, int w) {
    int left = w > len ? w - len : 0;
    memset(buf, ' ', (size_t)left);
    memcpy(buf + left, s, (size_t)len);
    return left + len;
}

/* Formats the element at p, the next one in visiting order, into buf
** (ELEM_MAX + DIGITS_MAX bytes); returns its length. */
static int format_elem(ElemFormat *ef, const char *p, char *buf);

/* A complex element: the real part, then the signed imaginary part with
** its 'j' before the padding that follows it. */
static int format_complex_elem(ElemFormat *re, ElemFormat *im, const char *p, char *buf) {
    int n = format_elem(re, p, buf);
    char tmp[ELEM_MAX + DIGITS_MAX];
    int m = format_elem(im, p + nd_itemsize(re->dt), tmp);
    int sp = m;
    while (sp > 0 && tmp[sp - 1] == ' ') sp--;
    memcpy(buf + n, tmp, (size_t)sp);
    buf[n + sp] = 'j';
    memcpy(buf + n + sp + 1, tmp + sp, (size_t)(m - sp));
    return n + m + 1;
}

static int format_elem(ElemFormat *ef, const char *p, char *buf) {
    if (ef->imag) {
        ElemFormat *im = ef->imag;
        ef->imag = NULL;
        int r = format_complex_elem(ef, im, p, buf);
        ef->imag = im;
        return r;
    }
    if (ef->dt == ND_BOOL) {
        bool t = *(const uint8_t *)p != 0;
        if (!t) return right_align(buf, "False", 5, 0);
        return ef->zero_d ? right_align(buf, "True", 4, 0) : right_align(buf, " True", 5, 0);
    }
    if (!nd_is_float(ef->dt)) {
        char tmp[32];
        int n = format_int(tmp, ef->dt, p);
        return right_align(buf, tmp, n, ef->int_width);
    }
    const CachedElem *ce = ef->cache && ef->cursor < ef->ncache ? &ef->cache[ef->cursor++] : NULL;
    if (ce) {
        int n = reuse_cached(ef, ce, buf);
        if (n >= 0) return n;
    }
    FloatParts f = float_parts(ef->dt, p);
    if (f.is_nan || f.is_inf) {
        const char *s = f.is_nan ? (ef->plus_sign ? "+nan" : "nan") : f.neg ? "-inf" : ef->plus_sign ? "+inf" : "inf";
        return right_align(buf, s, (int)strlen(s), ef->pad_left + ef->pad_right + 1);
    }
    if (ef->plus_sign && !f.neg) { /* one column less of padding, then '+' before the digits */
        ElemFormat shifted = *ef;
        shifted.plus_sign = false;
        shifted.pad_left = ef->pad_left - 1;
        int n = format_elem(&shifted, p, buf + 1);
        int k = 1;
        while (k <= n && buf[k] == ' ') k++;
        memmove(buf, buf + 1, (size_t)(k - 1));
        buf[k - 1] = '+';
        return n + 1;
    }
    if (ef->exp_format)
        return format_scientific(buf, &f, ef->precision, ef->min_digits, ef->trim, ef->pad_left,
                                 ef->exp_size);
    return format_positional(buf, &f, ef->precision, ef->min_digits, ef->trim, ef->pad_left,
                             ef->pad_right);
}

/* ======================= layout ======================= */

typedef struct Layout {
    const NDArray *a;
    ElemFormat *ef;
    StrBuf *sb;
    const char *sep;   /* ", " (repr) or " " (str) */
    int sep_len;
    bool sep_comma;    /* sep.rstrip() == "," */
    bool summarize;
    size_t line_start; /* offset in sb of the current line */
} Layout;

static int column(const Layout *L) { return (int)(L->sb->len - L->line_start); }

static void rstrip_line(Layout *L) {
    while (L->sb->len > L->line_start && L->sb->data && L->sb->data[L->sb->len - 1] == ' ')
        L->sb->len--;
}

static void newline(Layout *L) {
    sb_putc(L->sb, '\n');
    L->line_start = L->sb->len;
}

static void spaces(StrBuf *sb, int n) {
    for (int i = 0; i < n; i++) sb_putc(sb, ' ');
}

/* numpy's _extendLine: wrap before word when it would pass width, unless
** the line holds only the indent. */
static void extend_line(Layout *L, const char *word, int wlen, int width, int indent) {
    int col = column(L);
    if (col + wlen > width && col > indent) {
        rstrip_line(L);
        newline(L);
        spaces(L->sb, indent);
    }
    sb_append(L->sb, word, (size_t)wlen);
}

/* numpy's _formatArray recurser: the subarray at base along axis, whose
** '[' sits at column indent-1; width is the usable line width. */
static void layout_rec(Layout *L, int axis, const char *base, int indent, int width) {
    const NDArray *a = L->a;
    char buf[ELEM_MAX + DIGITS_MAX];
    if (axis == a->ndim) {
        int n = format_elem(L->ef, base, buf);
        sb_append(L->sb, buf, (size_t)n);
        return;
    }
    int axes_left = a->ndim - axis;
    int64_t len = a->shape[axis], st = a->strides[axis];
    bool show_summary = L->summarize && 2 * EDGEITEMS < len;
    int64_t leading = show_summary ? EDGEITEMS : 0;
    int64_t trailing = show_summary ? EDGEITEMS : len;
    sb_putc(L->sb, '[');
    if (axes_left == 1) {
        int elem_width = width - 1;
        for (int64_t i = 0; i < leading; i++) {
            int n = format_elem(L->ef, base + i * st, buf);
            extend_line(L, buf, n, elem_width, indent);
            sb_append(L->sb, L->sep, (size_t)L->sep_len);
        }
        if (show_summary) {
            extend_line(L, "...", 3, elem_width, indent);
            sb_append(L->sb, L->sep, (size_t)L->sep_len);
        }
        for (int64_t i = trailing; i > 1; i--) {
            int n = format_elem(L->ef, base + (len - i) * st, buf);
            extend_line(L, buf, n, elem_width, indent);
            sb_append(L->sb, L->sep, (size_t)L->sep_len);
        }
        int n = format_elem(L->ef, base + (len - 1) * st, buf);
        extend_line(L, buf, n, elem_width, indent);
    } else {
        int nl = axes_left - 1;
        bool first = true;
#define ROW_SEP()                                                                                  \
    do {                                                                                           \
        if (L->sep_comma) sb_putc(L->sb, ',');                                                     \
        for (int k = 0; k < nl; k++) newline(L);                                                   \
    } while (0)
        for (int64_t i = 0; i < leading; i++) {
            if (!first) spaces(L->sb, indent);
            first = false;
            layout_rec(L, axis + 1, base + i * st, indent + 1, width - 1);
            ROW_SEP();
        }
        if (show_summary) {
            spaces(L->sb, indent);
            sb_appends(L->sb, "...");
            ROW_SEP();
        }
        for (int64_t i = trailing; i > 1; i--) {
            if (!first) spaces(L->sb, indent);
            first = false;
            layout_rec(L, axis + 1, base + (len - i) * st, indent + 1, width - 1);
            ROW_SEP();
        }
        if (!first) spaces(L->sb, indent);
        layout_rec(L, axis + 1, base + (len - 1) * st, indent + 1, width - 1);
#undef ROW_SEP
    }
    sb_putc(L->sb, ']');
}

/* Python's repr of the shape tuple: "(3,)", "(2, 3)". */
static void append_shape(StrBuf *sb, const NDArray *a) {
    sb_putc(sb, '(');
    for (int i = 0; i < a->ndim; i++) {
        if (i) sb_appends(sb, ", ");
        sb_printf(sb, "%lld", (long long)a->shape[i]);
    }
    if (a->ndim == 1) sb_putc(sb, ',');
    sb_putc(sb, ')');
}

Str *nd_format_array(VM *vm, NDArray *a, bool repr) {
    if (a->ndim == 0 && !repr) return nd_format_scalar(vm, a->dtype, a->data, false);
    StrBuf sb;
    sb_init(&sb);
    const char *prefix = "array(";
    int prefix_len = repr ? 6 : 0;
    if (repr) sb_appends(&sb, prefix);
    if (a->size == 0) {
        sb_appends(&sb, "[]");
    } else {
        ElemFormat ef, im;
        bool summarize = a->size > THRESHOLD;
        memset(&ef, 0, sizeof ef);
        if (nd_is_complex(a->dtype)) build_complex_format(&ef, &im, a, summarize);
        else build_format(&ef, a, summarize);
        Layout L = {
            .a = a, .ef = &ef, .sb = &sb,
            .sep = repr ? ", " : " ", .sep_len = repr ? 2 : 1, .sep_comma = repr,
            .summarize = summarize, .line_start = 0,
        };
        layout_rec(&L, 0, a->data, 1 + prefix_len, LINEWIDTH - (repr ? 1 : 0));
        free(ef.cache);
        if (ef.imag) free(im.cache);
    }
    if (!repr) return sb_finish(vm, &sb);

    bool want_shape = (a->size == 0 && !(a->ndim == 1)) || a->size > THRESHOLD;
    bool implied = a->dtype == ND_INT64 || a->dtype == ND_FLOAT64 || a->dtype == ND_BOOL || a->dtype == ND_COMPLEX128;
    bool want_dtype = !implied || a->size == 0;
    if (!want_shape && !want_dtype) {
        sb_putc(&sb, ')');
        return sb_finish(vm, &sb);
    }
    sb_putc(&sb, ',');
    StrBuf extra;
    sb_init(&extra);
    if (want_shape) {
        sb_appends(&extra, "shape=");
        append_shape(&extra, a);
    }
    if (want_dtype) {
        if (want_shape) sb_appends(&extra, ", ");
        sb_printf(&extra, "dtype=%s", dtype_name(a->dtype));
    }
    sb_putc(&extra, ')');
    size_t last_nl = 0;
    for (size_t i = sb.len; i > 0 && sb.data; i--) {
        if (sb.data[i - 1] == '\n') {
            last_nl = i;
            break;
        }
    }
    size_t last_line_len = sb.len - last_nl;
    if (last_line_len + extra.len + 1 > LINEWIDTH) {
        sb_putc(&sb, '\n');
        spaces(&sb, prefix_len);
    } else {
        sb_putc(&sb, ' ');
    }
    if (extra.data) sb_append(&sb, extra.data, extra.len);
    sb_free(&extra);
    return sb_finish(vm, &sb);
}
