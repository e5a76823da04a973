/*
** random.c — the random module with CPython's generator (MT19937) and
** CPython's derivations (random(), getrandbits, _randbelow, shuffle,
** choice, sample, gauss...), so that a seeded program draws the same
** numbers under gpy as under CPython 3.11. Seeding follows random.seed:
** ints by their absolute value, floats by hash(), strings through SHA-512.
**
** Generator state lives in Random objects (random.Random(seed) makes
** new ones); the module-level functions use the instance random._inst,
** reached through the data of each module native.
*/
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "bigint.h"
#include "stdlib_priv.h"

#include "mt19937.h"

typedef struct Rng {
    Obj obj;
    MT19937 gen;
    bool has_gauss;
    double gauss_next;
} Rng;

static uint32_t mt_next(Rng *r) { return mt_next32(&r->gen); }
static double mt_random(Rng *r) { return mt_random53(&r->gen); }
static void mt_init_by_array(Rng *r, const uint32_t *key, size_t klen) { mt_seed_array(&r->gen, key, klen); }

/* Seeds from a non-negative integer given as little-endian 32-bit words. */
static void seed_u64(Rng *r, uint64_t n) {
    uint32_t key[2] = {(uint32_t)n, (uint32_t)(n >> 32)};
    mt_init_by_array(r, key, key[1] ? 2 : 1);
}

/* ------------------------------------------------------------------ */
/* SHA-512 (random.seed of a str hashes its UTF-8 bytes)               */
/* ------------------------------------------------------------------ */

static const uint64_t sha512_k[80] = {
    0x428a2f98d728ae22ull, 0x7137449123ef65cdull, 0xb5c0fbcfec4d3b2full, 0xe9b5dba58189dbbcull,
    0x3956c25bf348b538ull, 0x59f111f1b605d019ull, 0x923f82a4af194f9bull, 0xab1c5ed5da6d8118ull,
    0xd807aa98a3030242ull, 0x12835b0145706fbeull, 0x243185be4ee4b28cull, 0x550c7dc3d5ffb4e2ull,
    0x72be5d74f27b896full, 0x80deb1fe3b1696b1ull, 0x9bdc06a725c71235ull, 0xc19bf174cf692694ull,
    0xe49b69c19ef14ad2ull, 0xefbe4786384f25e3ull, 0x0fc19dc68b8cd5b5ull, 0x240ca1cc77ac9c65ull,
    0x2de92c6f592b0275ull, 0x4a7484aa6ea6e483ull, 0x5cb0a9dcbd41fbd4ull, 0x76f988da831153b5ull,
    0x983e5152ee66dfabull, 0xa831c66d2db43210ull, 0xb00327c898fb213full, 0xbf597fc7beef0ee4ull,
    0xc6e00bf33da88fc2ull, 0xd5a79147930aa725ull, 0x06ca6351e003826full, 0x142929670a0e6e70ull,
    0x27b70a8546d22ffcull, 0x2e1b21385c26c926ull, 0x4d2c6dfc5ac42aedull, 0x53380d139d95b3dfull,
    0x650a73548baf63deull, 0x766a0abb3c77b2a8ull, 0x81c2c92e47edaee6ull, 0x92722c851482353bull,
    0xa2bfe8a14cf10364ull, 0xa81a664bbc423001ull, 0xc24b8b70d0f89791ull, 0xc76c51a30654be30ull,
    0xd192e819d6ef5218ull, 0xd69906245565a910ull, 0xf40e35855771202aull, 0x106aa07032bbd1b8ull,
    0x19a4c116b8d2d0c8ull, 0x1e376c085141ab53ull, 0x2748774cdf8eeb99ull, 0x34b0bcb5e19b48a8ull,
    0x391c0cb3c5c95a63ull, 0x4ed8aa4ae3418acbull, 0x5b9cca4f7763e373ull, 0x682e6ff3d6b2b8a3ull,
    0x748f82ee5defb2fcull, 0x78a5636f43172f60ull, 0x84c87814a1f0ab72ull, 0x8cc702081a6439ecull,
    0x90befffa23631e28ull, 0xa4506cebde82bde9ull, 0xbef9a3f7b2c67915ull, 0xc67178f2e372532bull,
    0xca273eceea26619cull, 0xd186b8c721c0c207ull, 0xeada7dd6cde0eb1eull, 0xf57d4f7fee6ed178ull,
    0x06f067aa72176fbaull, 0x0a637dc5a2c898a6ull, 0x113f9804bef90daeull, 0x1b710b35131c471bull,
    0x28db77f523047d84ull, 0x32caab7b40c72493ull, 0x3c9ebe0a15c9bebcull, 0x431d67c49c100d4cull,
    0x4cc5d4becb3e42b6ull, 0x597f299cfc657e2aull, 0x5fcb6fab3ad6faecull, 0x6c44198c4a475817ull,
};

static uint64_t rotr64(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

static void sha512_block(uint64_t h[8], const unsigned char *p) {
    uint64_t w[80];
    for (int i = 0; i < 16; i++) {
        uint64_t v = 0;
        for (int b = 0; b < 8; b++) v = (v << 8) | p[i * 8 + b];
        w[i] = v;
    }
    for (int i = 16; i < 80; i++) {
        uint64_t s0 = rotr64(w[i - 15], 1) ^ rotr64(w[i - 15], 8) ^ (w[i - 15] >> 7);
        uint64_t s1 = rotr64(w[i - 2], 19) ^ rotr64(w[i - 2], 61) ^ (w[i - 2] >> 6);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint64_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 80; i++) {
        uint64_t S1 = rotr64(e, 14) ^ rotr64(e, 18) ^ rotr64(e, 41);
        uint64_t ch = (e & f) ^ (~e & g);
        uint64_t t1 = hh + S1 + ch + sha512_k[i] + w[i];
        uint64_t S0 = rotr64(a, 28) ^ rotr64(a, 34) ^ rotr64(a, 39);
        uint64_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint64_t t2 = S0 + maj;
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

static void sha512(const unsigned char *data, size_t len, unsigned char out[64]) {
    uint64_t h[8] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
                     0x510e527fade682d1ull, 0x9b05688c2b3e6c1full, 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};
    size_t i = 0;
    for (; i + 128 <= len; i += 128) sha512_block(h, data + i);
    unsigned char tail[256];
    size_t rest = len - i;
    memset(tail, 0, sizeof tail);
    memcpy(tail, data + i, rest);
    tail[rest] = 0x80;
    size_t tlen = rest + 1 + 16 <= 128 ? 128 : 256;
    uint64_t bits = (uint64_t)len * 8;
    for (int b = 0; b < 8; b++) tail[tlen - 1 - b] = (unsigned char)(bits >> (8 * b));
    sha512_block(h, tail);
    if (tlen == 256) sha512_block(h, tail + 128);
    for (int k = 0; k < 8; k++)
        for (int b = 0; b < 8; b++) out[k * 8 + b] = (unsigned char)(h[k] >> (56 - 8 * b));
}

/* random.seed(str): int.from_bytes(s + sha512(s).digest()) as the key */
static void seed_bytes(VM *vm, Rng *r, const unsigned char *s, size_t len) {
    size_t total = len + 64;
    unsigned char *buf = gc_malloc(vm, total);
    memcpy(buf, s, len);
    sha512(s, len, buf + len);
    size_t start = 0;
    while (start < total && buf[start] == 0) start++;
    size_t nbytes = total - start;
    size_t nwords = nbytes == 0 ? 1 : (nbytes + 3) / 4;
    uint32_t *key = gc_malloc(vm, nwords * sizeof(uint32_t));
    memset(key, 0, nwords * sizeof(uint32_t));
    for (size_t b = 0; b < nbytes; b++) {
        /* byte b counted from the least significant end */
        unsigned char v = buf[total - 1 - b];
        key[b / 4] |= (uint32_t)v << (8 * (b % 4));
    }
    mt_init_by_array(r, key, nwords);
    gc_free(vm, key, nwords * sizeof(uint32_t));
    gc_free(vm, buf, total);
}

/* seed(None): 624 words from the OS (time and pid as a fallback) */
static void seed_entropy(Rng *r) {
    uint32_t key[MT_N];
    size_t got = 0;
    while (got < sizeof key) {
        ssize_t n = getrandom((char *)key + got, sizeof key - got, 0);
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (got < sizeof key) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        for (size_t i = 0; i < MT_N; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            key[i] = (uint32_t)(x >> 16);
        }
    }
    mt_init_by_array(r, key, MT_N);
}

static void rng_seed(VM *vm, Rng *r, Value a) {
    if (IS_EMPTY(a) || IS_NONE(a)) seed_entropy(r);
    else if (IS_INT(a)) {
        int64_t i = AS_INT(a);
        seed_u64(r, i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i);
    } else if (IS_BOOL(a) || IS_FLOAT(a)) {
        seed_u64(r, (uint64_t)vm_hash(vm, a));
    } else if (IS_STR(vm, a)) {
        seed_bytes(vm, r, (const unsigned char *)AS_STR(a)->chars, (size_t)AS_STR(a)->len);
    } else if (IS_BYTES(vm, a) || IS_BYTEARRAY(vm, a)) { /* the same key as the str with these bytes */
        BufferView bv;
        buffer_get(vm, a, &bv);
        seed_bytes(vm, r, bv.buf, (size_t)bv.len);
    } else {
        vm_raise_kind(vm, TypeError, "The only supported seed types are: None,\nint, float, str, bytes, and bytearray.");
    }
    r->has_gauss = false;
}

/* ------------------------------------------------------------------ */
/* derived draws                                                       */
/* ------------------------------------------------------------------ */

static int bit_length(uint64_t n) { return n ? 64 - __builtin_clzll(n) : 0; }

/* getrandbits(k) for 0 <= k <= 64, as an unsigned number */
static uint64_t getrandbits_u(Rng *r, int k) {
    if (k == 0) return 0;
    if (k <= 32) return mt_next(r) >> (32 - k);
    uint64_t lo = mt_next(r);
    uint64_t hi = mt_next(r) >> (64 - k);
    return lo | (hi << 32);
}

/* _randbelow_with_getrandbits(n), n > 0 */
static int64_t randbelow(Rng *r, int64_t n) {
    int k = bit_length((uint64_t)n);
    uint64_t v = getrandbits_u(r, k);
    while (v >= (uint64_t)n) v = getrandbits_u(r, k);
    return (int64_t)v;
}

/* getrandbits(k) of any size, as CPython builds it: 32-bit words from the
** least significant up, the last one keeping its top k % 32 bits. */
static Value getrandbits_value(VM *vm, Rng *r, int64_t k) {
    if (k <= 64) {
        uint64_t v = getrandbits_u(r, (int)k);
        return v <= (uint64_t)INT64_MAX ? INT_VAL((int64_t)v) : bigint_from_u64(vm, v, false);
    }
    Value acc = INT_VAL(0);
    for (int64_t shift = 0; k > 0; shift += 32, k -= 32) {
        uint32_t w = mt_next(r);
        if (k < 32) w >>= (32 - k);
        vm_push_root(vm, acc);
        Value part = vm_binop(vm, BINOP_LSHIFT, INT_VAL(w), INT_VAL(shift));
        vm_push_root(vm, part);
        acc = vm_binop(vm, BINOP_OR, acc, part);
        vm_pop_roots(vm, 2);
    }
    return acc;
}

/* An int argument of any size: ints and bools, integral floats (3.11
** still takes them), or __index__. */
static Value index_value(VM *vm, Value v) {
    if (IS_BOOL(v)) return INT_VAL(AS_BOOL(v));
    if (bigint_is_anyint(vm, v)) return v;
    if (IS_FLOAT(v)) {
        double d = AS_FLOAT(v);
        if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
        if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
        if (d != floor(d)) vm_raise_kind(vm, ValueError, "non-integer arg 1 for randrange()");
        return bigint_from_double(vm, d);
    }
    Value m = vm_getattr_opt(vm, v, str_cstr(vm, "__index__"));
    if (IS_EMPTY(m))
        vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, v));
    return vm_call(vm, m, 0, NULL);
}

/* _randbelow(n) for an int n > 0 of any size */
static Value randbelow_value(VM *vm, Rng *r, Value n) {
    int64_t small;
    if (bigint_to_int64(vm, n, &small)) return INT_VAL(randbelow(r, small));
    int64_t k = bigint_bit_length(vm, n);
    for (;;) {
        Value v = getrandbits_value(vm, r, k);
        if (bigint_cmp(vm, v, n) < 0) return v;
    }
}

/* randrange past int64 (big arguments, or a width that does not fit):
** CPython's randrange line by line, on ints of any size. */
static Value randrange_big(VM *vm, Rng *r, Value start, Value stop, Value step) {
    Value istart = index_value(vm, start), istop = index_value(vm, stop);
    Value values[5] = {istart, istop, NONE_VAL, NONE_VAL, NONE_VAL};
    for (int i = 0; i < 2; i++) vm_push_root(vm, values[i]);
    Value width = vm_binop(vm, BINOP_SUB, istop, istart);
    vm_push_root(vm, width);
    Value istep = IS_EMPTY(step) ? INT_VAL(1) : index_value(vm, step);
    vm_push_root(vm, istep);
    Value result;
    if (IS_INT(istep) && AS_INT(istep) == 1) {
        if (bigint_sign(vm, width) <= 0) {
            Str *a = vm_str(vm, istart), *b = vm_str(vm, istop), *c = vm_str(vm, width);
            vm_raise_kind(vm, ValueError, "empty range for randrange() (%s, %s, %s)", a->chars, b->chars, c->chars);
        }
        Value below = randbelow_value(vm, r, width);
        vm_push_root(vm, below);
        result = vm_binop(vm, BINOP_ADD, istart, below);
        vm_pop_roots(vm, 1);
    } else {
        int sign = bigint_sign(vm, istep);
        if (sign == 0) vm_raise_kind(vm, ValueError, "zero step for randrange()");
        /* n = (width + istep - 1) // istep, or + 1 for a negative step */
        Value t = vm_binop(vm, BINOP_ADD, width, istep);
        vm_push_root(vm, t);
        t = vm_binop(vm, BINOP_SUB, t, INT_VAL(sign > 0 ? 1 : -1));
        vm_push_root(vm, t);
        Value n = vm_binop(vm, BINOP_FLOORDIV, t, istep);
        vm_push_root(vm, n);
        if (bigint_sign(vm, n) <= 0) vm_raise_kind(vm, ValueError, "empty range for randrange()");
        Value below = randbelow_value(vm, r, n);
        vm_push_root(vm, below);
        Value off = vm_binop(vm, BINOP_MUL, istep, below);
        vm_push_root(vm, off);
        result = vm_binop(vm, BINOP_ADD, istart, off);
        vm_pop_roots(vm, 5);
    }
    vm_pop_roots(vm, 4);
    return result;
}

static bool is_big(VM *vm, Value v) { return bigint_is(vm, v); }

/* Integer argument of randrange: ints, or floats equal to an int (3.11
** still accepts them, with a DeprecationWarning). */
static int64_t range_arg(VM *vm, Value v, const char *what) {
    if (IS_INTLIKE(v)) return AS_INTLIKE(v);
    if (IS_FLOAT(v)) {
        double d = AS_FLOAT(v);
        if (d != floor(d) || !(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
            if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
            if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
            vm_raise_kind(vm, ValueError, "non-integer %s for randrange()", what);
        }
        return (int64_t)d;
    }
    return vm_to_index(vm, v);
}

static int64_t randrange(VM *vm, Rng *r, Value start, Value stop, Value step) {
    int64_t istart = range_arg(vm, start, "arg 1");
    if (IS_EMPTY(stop) || IS_NONE(stop)) {
        if (!IS_EMPTY(step) && !(IS_INT(step) && AS_INT(step) == 1))
            vm_raise_kind(vm, TypeError, "Missing a non-None stop argument");
        if (istart > 0) return randbelow(r, istart);
        vm_raise_kind(vm, ValueError, "empty range for randrange()");
    }
    int64_t istop = range_arg(vm, stop, "stop");
    __int128 width = (__int128)istop - istart;
    int64_t istep = IS_EMPTY(step) ? 1 : range_arg(vm, step, "step");
    if (istep == 1) {
        if (width > 0) {
            if (width > INT64_MAX) vm_raise_kind(vm, OverflowError, "integer overflow");
            return istart + randbelow(r, (int64_t)width);
        }
        vm_raise_kind(vm, ValueError, "empty range for randrange() (%lld, %lld, %lld)", (long long)istart,
                      (long long)istop, (long long)width);
    }
    __int128 n;
    if (istep > 0) n = (width + istep - 1) / istep - ((width + istep - 1) % istep < 0 ? 1 : 0);
    else if (istep < 0) n = (width + istep + 1) / istep - ((width + istep + 1) % istep > 0 ? 1 : 0);
    else vm_raise_kind(vm, ValueError, "zero step for randrange()");
    if (n <= 0) vm_raise_kind(vm, ValueError, "empty range for randrange()");
    if (n > INT64_MAX) vm_raise_kind(vm, OverflowError, "integer overflow");
    return (int64_t)(istart + (__int128)istep * randbelow(r, (int64_t)n));
}

static double rng_gauss(Rng *r, double mu, double sigma) {
    double z;
    if (r->has_gauss) {
        z = r->gauss_next;
        r->has_gauss = false;
    } else {
        double x2pi = mt_random(r) * (2.0 * M_PI);
        double g2rad = sqrt(-2.0 * log(1.0 - mt_random(r)));
        z = cos(x2pi) * g2rad;
        r->gauss_next = sin(x2pi) * g2rad;
        r->has_gauss = true;
    }
    return mu + z * sigma;
}

static double rng_normal(Rng *r, double mu, double sigma) {
    const double magic = 4 * exp(-0.5) / sqrt(2.0);
    double z;
    for (;;) {
        double u1 = mt_random(r);
        double u2 = 1.0 - mt_random(r);
        z = magic * (u1 - 0.5) / u2;
        double zz = z * z / 4.0;
        if (zz <= -log(u2)) break;
    }
    return mu + z * sigma;
}

/* ------------------------------------------------------------------ */
/* the operations, shared by module functions and Random methods       */
/* ------------------------------------------------------------------ */

typedef Value (*RngOp)(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs);

/* Collects positional and keyword arguments by name into out[]. */
static void take_args(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, int n,
                      const char *const *names, int required, Value *out) {
    if (argc > n)
        vm_raise_kind(vm, TypeError, "%s() takes from %d to %d positional arguments but %d were given", fname,
                      required + 1, n + 1, argc + 1);
    for (int i = 0; i < n; i++) out[i] = i < argc ? argv[i] : EMPTY_VAL;
    for (int i = 0; i < n; i++) {
        Value k = kw_take(vm, kwargs, names[i]);
        if (!IS_EMPTY(k)) {
            if (!IS_EMPTY(out[i]))
                vm_raise_kind(vm, TypeError, "%s() got multiple values for argument '%s'", fname, names[i]);
            out[i] = k;
        }
    }
    if (kwargs && kwargs->count > 0) {
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v))
            if (IS_STR(vm, k))
                vm_raise_kind(vm, TypeError, "%s() got an unexpected keyword argument '%s'", fname, AS_STR(k)->chars);
    }
    for (int i = 0; i < required; i++)
        if (IS_EMPTY(out[i]))
            vm_raise_kind(vm, TypeError, "%s() missing 1 required positional argument: '%s'", fname, names[i]);
}

static double float_or(VM *vm, Value v, double dflt) {
    if (IS_EMPTY(v)) return dflt;
    return num_arg(vm, v);
}

static Value op_seed(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"a", "version"};
    Value a[2];
    take_args(vm, "seed", argc, argv, kwargs, 2, names, 0, a);
    rng_seed(vm, r, a[0]);
    return NONE_VAL;
}

static Value op_random(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "random", kwargs);
    if (argc) vm_raise_kind(vm, TypeError, "random() takes no arguments (%d given)", argc);
    return FLOAT_VAL(mt_random(r));
}

static Value op_getrandbits(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "getrandbits", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "getrandbits() takes exactly one argument (%d given)", argc);
    int64_t k = vm_to_index(vm, argv[0]);
    if (k < 0) vm_raise_kind(vm, ValueError, "number of bits must be non-negative");
    return getrandbits_value(vm, r, k);
}

/* randbytes(n) is CPython's getrandbits(n * 8).to_bytes(n, 'little'):
** 32-bit words from the least significant up, the last one shifted down
** to its remaining bytes. */
static Value op_randbytes(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "randbytes", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "randbytes() takes exactly one argument (%d given)", argc);
    int64_t n = vm_to_index(vm, argv[0]);
    if (n < 0) vm_raise_kind(vm, ValueError, "number of bits must be non-negative");
    Bytes *b = bytes_alloc(vm, n);
    for (int64_t i = 0; i < n; i += 4) {
        int64_t k = n - i < 4 ? n - i : 4;
        uint32_t w = mt_next(r);
        if (k < 4) w >>= 32 - 8 * k;
        for (int64_t j = 0; j < k; j++) b->data[i + j] = (uint8_t)(w >> (8 * j));
    }
    return OBJ_VAL(b);
}

/* Whether randrange's int64 path can answer: no big argument, and a
** width that fits (the step-1 case of randint(0, 2**63 - 1) does not). */
static bool randrange_small(VM *vm, Value start, Value stop, Value step) {
    if (is_big(vm, start) || is_big(vm, stop) || is_big(vm, step)) return false;
    if (!IS_INT(start) || !IS_INT(stop)) return true; /* floats and None: the int64 path's errors */
    __int128 width = (__int128)AS_INT(stop) - AS_INT(start);
    return width <= INT64_MAX && width >= -INT64_MAX;
}

static Value op_randrange(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"start", "stop", "step"};
    Value a[3];
    take_args(vm, "randrange", argc, argv, kwargs, 3, names, 1, a);
    bool no_stop = IS_EMPTY(a[1]) || IS_NONE(a[1]);
    if (!randrange_small(vm, a[0], no_stop ? INT_VAL(0) : a[1], a[2])) {
        if (no_stop) {
            if (!IS_EMPTY(a[2]) && !(IS_INT(a[2]) && AS_INT(a[2]) == 1))
                vm_raise_kind(vm, TypeError, "Missing a non-None stop argument");
            Value n = index_value(vm, a[0]);
            if (bigint_sign(vm, n) <= 0) vm_raise_kind(vm, ValueError, "empty range for randrange()");
            return randbelow_value(vm, r, n);
        }
        return randrange_big(vm, r, a[0], a[1], a[2]);
    }
    return INT_VAL(randrange(vm, r, a[0], a[1], a[2]));
}

static Value op_randint(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"a", "b"};
    Value a[2];
    take_args(vm, "randint", argc, argv, kwargs, 2, names, 2, a);
    if (is_big(vm, a[0]) || is_big(vm, a[1]) || (IS_INT(a[1]) && AS_INT(a[1]) == INT64_MAX) ||
        (IS_INT(a[0]) && IS_INT(a[1]) && !randrange_small(vm, a[0], INT_VAL(AS_INT(a[1]) + 1), EMPTY_VAL))) {
        Value stop = vm_binop(vm, BINOP_ADD, index_value(vm, a[1]), INT_VAL(1));
        vm_push_root(vm, stop);
        Value v = randrange_big(vm, r, a[0], stop, EMPTY_VAL);
        vm_pop_roots(vm, 1);
        return v;
    }
    int64_t hi = range_arg(vm, a[1], "stop");
    return INT_VAL(randrange(vm, r, a[0], INT_VAL(hi + 1), EMPTY_VAL));
}

static Value op_choice(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "choice", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "choice() takes 2 positional arguments but %d were given", argc + 1);
    Value seq = argv[0];
    int64_t n = vm_len(vm, seq);
    if (n == 0) vm_raise_kind(vm, IndexError, "Cannot choose from an empty sequence");
    int64_t i = randbelow(r, n);
    if (IS_LIST(vm, seq) && i < AS_LIST(seq)->len) return AS_LIST(seq)->items[i];
    if (IS_TUPLE(vm, seq)) return AS_TUPLE(seq)->items[i];
    return vm_getitem(vm, seq, INT_VAL(i));
}

static Value op_shuffle(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "shuffle", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "shuffle() takes 2 positional arguments but %d were given", argc + 1);
    Value x = argv[0];
    int base = vm->nroots;
    vm_push_root(vm, x);
    int64_t n = vm_len(vm, x);
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = randbelow(r, i + 1);
        if (IS_LIST(vm, x) && i < AS_LIST(x)->len && j < AS_LIST(x)->len) {
            Value *it = AS_LIST(x)->items, t = it[i];
            it[i] = it[j];
            it[j] = t;
        } else {
            Value xi = vm_getitem(vm, x, INT_VAL(i));
            vm_push_root(vm, xi);
            Value xj = vm_getitem(vm, x, INT_VAL(j));
            vm_push_root(vm, xj);
            vm_setitem(vm, x, INT_VAL(i), xj);
            vm_setitem(vm, x, INT_VAL(j), xi);
            vm_pop_roots(vm, 2);
        }
    }
    vm_pop_roots(vm, vm->nroots - base);
    return NONE_VAL;
}

static Value op_uniform(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"a", "b"};
    Value a[2];
    take_args(vm, "uniform", argc, argv, kwargs, 2, names, 2, a);
    double lo = num_arg(vm, a[0]);
    double diff;
    int64_t d;
    if (IS_INTLIKE(a[0]) && IS_INTLIKE(a[1]) && !__builtin_sub_overflow(AS_INTLIKE(a[1]), AS_INTLIKE(a[0]), &d))
        diff = (double)d;
    else diff = num_arg(vm, a[1]) - lo;
    return FLOAT_VAL(lo + diff * mt_random(r));
}

static Value op_triangular(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"low", "high", "mode"};
    Value a[3];
    take_args(vm, "triangular", argc, argv, kwargs, 3, names, 0, a);
    double low = float_or(vm, a[0], 0.0), high = float_or(vm, a[1], 1.0);
    double u = mt_random(r), c;
    if (IS_EMPTY(a[2]) || IS_NONE(a[2])) c = 0.5;
    else {
        if (high - low == 0.0) return IS_EMPTY(a[0]) ? FLOAT_VAL(low) : a[0];
        c = (num_arg(vm, a[2]) - low) / (high - low);
    }
    if (u > c) {
        u = 1.0 - u;
        c = 1.0 - c;
        double t = low;
        low = high;
        high = t;
    }
    return FLOAT_VAL(low + (high - low) * sqrt(u * c));
}

static Value op_gauss(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"mu", "sigma"};
    Value a[2];
    take_args(vm, "gauss", argc, argv, kwargs, 2, names, 0, a);
    return FLOAT_VAL(rng_gauss(r, float_or(vm, a[0], 0.0), float_or(vm, a[1], 1.0)));
}

static Value op_normalvariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"mu", "sigma"};
    Value a[2];
    take_args(vm, "normalvariate", argc, argv, kwargs, 2, names, 0, a);
    return FLOAT_VAL(rng_normal(r, float_or(vm, a[0], 0.0), float_or(vm, a[1], 1.0)));
}

static Value op_lognormvariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"mu", "sigma"};
    Value a[2];
    take_args(vm, "lognormvariate", argc, argv, kwargs, 2, names, 2, a);
    return FLOAT_VAL(exp(rng_normal(r, num_arg(vm, a[0]), num_arg(vm, a[1]))));
}

static Value op_expovariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"lambd"};
    Value a[1];
    take_args(vm, "expovariate", argc, argv, kwargs, 1, names, 0, a);
    double l = float_or(vm, a[0], 1.0);
    if (l == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float division by zero");
    return FLOAT_VAL(-log(1.0 - mt_random(r)) / l);
}

static Value op_paretovariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"alpha"};
    Value a[1];
    take_args(vm, "paretovariate", argc, argv, kwargs, 1, names, 1, a);
    double alpha = num_arg(vm, a[0]);
    if (alpha == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float division by zero");
    double u = 1.0 - mt_random(r);
    return FLOAT_VAL(pow(u, -1.0 / alpha));
}

static Value op_weibullvariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"alpha", "beta"};
    Value a[2];
    take_args(vm, "weibullvariate", argc, argv, kwargs, 2, names, 2, a);
    double alpha = num_arg(vm, a[0]), beta = num_arg(vm, a[1]);
    if (beta == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float division by zero");
    double u = 1.0 - mt_random(r);
    return FLOAT_VAL(alpha * pow(-log(u), 1.0 / beta));
}

/* gammavariate(alpha, beta): CPython's three regimes (Cheng's method for
** alpha > 1, exponential for alpha == 1, ALGORITHM GS for alpha < 1). */
static double rng_gamma(VM *vm, Rng *r, double alpha, double beta) {
    if (alpha <= 0.0 || beta <= 0.0) vm_raise_kind(vm, ValueError, "gammavariate: alpha and beta must be > 0.0");
    if (alpha > 1.0) {
        double ainv = sqrt(2.0 * alpha - 1.0);
        double bbb = alpha - log(4.0), ccc = alpha + ainv;
        const double sg_magic = 1.0 + log(4.5);
        for (;;) {
            double u1 = mt_random(r);
            if (!(1e-7 < u1 && u1 < 0.9999999)) continue;
            double u2 = 1.0 - mt_random(r);
            double v = log(u1 / (1.0 - u1)) / ainv;
            double x = alpha * exp(v);
            double z = u1 * u1 * u2;
            double rr = bbb + ccc * v - x;
            if (rr + sg_magic - 4.5 * z >= 0.0 || rr >= log(z)) return x * beta;
        }
    }
    if (alpha == 1.0) return -log(1.0 - mt_random(r)) * beta;
    double x;
    for (;;) {
        double u = mt_random(r);
        double b = (M_E + alpha) / M_E;
        double p = b * u;
        if (p <= 1.0) x = pow(p, 1.0 / alpha);
        else x = -log((b - p) / alpha);
        double u1 = mt_random(r);
        if (p > 1.0) {
            if (u1 <= pow(x, alpha - 1.0)) break;
        } else if (u1 <= exp(-x)) {
            break;
        }
    }
    return x * beta;
}

static Value op_gammavariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"alpha", "beta"};
    Value a[2];
    take_args(vm, "gammavariate", argc, argv, kwargs, 2, names, 2, a);
    return FLOAT_VAL(rng_gamma(vm, r, num_arg(vm, a[0]), num_arg(vm, a[1])));
}

static Value op_betavariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"alpha", "beta"};
    Value a[2];
    take_args(vm, "betavariate", argc, argv, kwargs, 2, names, 2, a);
    double y = rng_gamma(vm, r, num_arg(vm, a[0]), 1.0);
    if (y == 0.0) return FLOAT_VAL(0.0);
    return FLOAT_VAL(y / (y + rng_gamma(vm, r, num_arg(vm, a[1]), 1.0)));
}

static Value op_vonmisesvariate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"mu", "kappa"};
    Value a[2];
    take_args(vm, "vonmisesvariate", argc, argv, kwargs, 2, names, 2, a);
    double mu = num_arg(vm, a[0]), kappa = num_arg(vm, a[1]);
    if (kappa <= 1e-6) return FLOAT_VAL(2.0 * M_PI * mt_random(r));
    double s = 0.5 / kappa;
    double rr = s + sqrt(1.0 + s * s);
    double z;
    for (;;) {
        double u1 = mt_random(r);
        z = cos(M_PI * u1);
        double d = z / (rr + z);
        double u2 = mt_random(r);
        if (u2 < 1.0 - d * d || u2 <= (1.0 - d) * exp(d)) break;
    }
    double q = 1.0 / rr;
    double f = (q + z) / (1.0 + q * z);
    double u3 = mt_random(r);
    double theta = u3 > 0.5 ? float_mod(mu + acos(f), 2.0 * M_PI) : float_mod(mu - acos(f), 2.0 * M_PI);
    return FLOAT_VAL(theta);
}

/* bisect_right(a, x, 0, hi) over a list of numbers */
static int64_t bisect_right(VM *vm, List *a, Value x, int64_t hi) {
    int64_t lo = 0;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        Value m = a->items[mid];
        bool less;
        if (IS_FLOAT(x) && IS_FLOAT(m)) less = AS_FLOAT(x) < AS_FLOAT(m);
        else less = vm_truthy(vm, vm_compare(vm, CMP_LT, x, m));
        if (less) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* list(itertools.accumulate(values)) */
static List *accumulate(VM *vm, Value values) {
    List *l = list_from_iterable(vm, values);
    vm_push_root(vm, OBJ_VAL(l));
    for (int64_t i = 1; i < l->len; i++) {
        Value s = vm_binop(vm, BINOP_ADD, l->items[i - 1], l->items[i]);
        l->items[i] = s;
    }
    vm_pop_roots(vm, 1);
    return l;
}

static Value get_item(VM *vm, Value seq, int64_t i) {
    if (IS_LIST(vm, seq) && i < AS_LIST(seq)->len) return AS_LIST(seq)->items[i];
    if (IS_TUPLE(vm, seq)) return AS_TUPLE(seq)->items[i];
    return vm_getitem(vm, seq, INT_VAL(i));
}

static Value op_choices(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"population", "weights", "cum_weights", "k"};
    Value a[4];
    if (argc > 2) vm_raise_kind(vm, TypeError, "choices() takes from 2 to 3 positional arguments but %d were given", argc + 1);
    take_args(vm, "choices", argc, argv, kwargs, 4, names, 1, a);
    Value pop = a[0];
    int64_t k = IS_EMPTY(a[3]) ? 1 : vm_to_index(vm, a[3]);
    int base = vm->nroots;
    vm_push_root(vm, pop);
    vm_push_root(vm, a[1]);
    vm_push_root(vm, a[2]);
    int64_t n = vm_len(vm, pop);
    List *res = list_new(vm, k > 0 ? k : 0);
    vm_push_root(vm, OBJ_VAL(res));
    bool no_w = IS_EMPTY(a[1]) || IS_NONE(a[1]);
    bool no_cw = IS_EMPTY(a[2]) || IS_NONE(a[2]);
    if (no_cw) {
        if (no_w) {
            double fn = (double)n;
            for (int64_t i = 0; i < k; i++) {
                int64_t idx = (int64_t)floor(mt_random(r) * fn);
                if (n == 0) vm_raise_kind(vm, IndexError, "list index out of range");
                list_append(vm, res, get_item(vm, pop, idx));
            }
            vm_pop_roots(vm, vm->nroots - base);
            return OBJ_VAL(res);
        }
        if (IS_INTLIKE(a[1]))
            vm_raise_kind(vm, TypeError, "The number of choices must be a keyword argument: k=%lld",
                          (long long)AS_INTLIKE(a[1]));
        a[2] = OBJ_VAL(accumulate(vm, a[1]));
        vm_push_root(vm, a[2]);
    } else if (!no_w) {
        vm_raise_kind(vm, TypeError, "Cannot specify both weights and cumulative weights");
    } else {
        a[2] = OBJ_VAL(list_from_iterable(vm, a[2]));
        vm_push_root(vm, a[2]);
    }
    List *cw = AS_LIST(a[2]);
    if (cw->len != n) vm_raise_kind(vm, ValueError, "The number of weights does not match the population");
    if (n == 0) vm_raise_kind(vm, IndexError, "list index out of range");
    Value tot = vm_binop(vm, BINOP_ADD, cw->items[n - 1], FLOAT_VAL(0.0));
    double total = IS_FLOAT(tot) ? AS_FLOAT(tot) : num_arg(vm, tot);
    if (total <= 0.0) vm_raise_kind(vm, ValueError, "Total of weights must be greater than zero");
    if (!isfinite(total)) vm_raise_kind(vm, ValueError, "Total of weights must be finite");
    for (int64_t i = 0; i < k; i++) {
        int64_t idx = bisect_right(vm, cw, FLOAT_VAL(mt_random(r) * total), n - 1);
        list_append(vm, res, get_item(vm, pop, idx));
    }
    vm_pop_roots(vm, vm->nroots - base);
    return OBJ_VAL(res);
}

static Value op_sample(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"population", "k", "counts"};
    Value a[3];
    take_args(vm, "sample", argc, argv, kwargs, 3, names, 2, a);
    Value pop = a[0];
    Type *t = vm_typeof(vm, pop);
    if (t == vm->t_set || t == vm->t_frozenset || t == vm->t_dict ||
        !(t->getitem || !IS_EMPTY(type_lookup(vm, t, cstr_name(vm, "__getitem__")))))
        vm_raise_kind(vm, TypeError, "Population must be a sequence.  For dicts or sets, use sorted(d).");
    int base = vm->nroots;
    vm_push_root(vm, pop);
    vm_push_root(vm, a[2]);
    int64_t n = vm_len(vm, pop);
    int64_t k = vm_to_index(vm, a[1]);
    if (!IS_EMPTY(a[2]) && !IS_NONE(a[2])) {
        List *cum = accumulate(vm, a[2]);
        vm_push_root(vm, OBJ_VAL(cum));
        if (cum->len != n) vm_raise_kind(vm, ValueError, "The number of counts does not match the population");
        Value total = cum->len ? cum->items[cum->len - 1] : INT_VAL(0);
        if (!IS_INTLIKE(total)) vm_raise_kind(vm, TypeError, "Counts must be integers");
        if (AS_INTLIKE(total) <= 0) vm_raise_kind(vm, ValueError, "Total of counts must be greater than zero");
        cum->len--; /* cum_counts.pop() */
        Value rng_args[2] = {range_new(vm, 0, AS_INTLIKE(total), 1), a[1]};
        vm_push_root(vm, rng_args[0]);
        Value sel = op_sample(vm, r, 2, rng_args, NULL);
        vm_push_root(vm, sel);
        List *sl = AS_LIST(sel);
        for (int64_t i = 0; i < sl->len; i++)
            sl->items[i] = get_item(vm, pop, bisect_right(vm, cum, sl->items[i], cum->len));
        vm_pop_roots(vm, vm->nroots - base);
        return sel;
    }
    if (k < 0 || k > n) vm_raise_kind(vm, ValueError, "Sample larger than population or is negative");
    List *res = list_new(vm, k);
    for (int64_t i = 0; i < k; i++) list_append(vm, res, NONE_VAL);
    vm_push_root(vm, OBJ_VAL(res));
    int64_t setsize = 21;
    if (k > 5) setsize += (int64_t)pow(4.0, ceil(log((double)(k * 3)) / log(4.0)));
    if (n <= setsize) {
        List *pool = list_from_iterable(vm, pop);
        vm_push_root(vm, OBJ_VAL(pool));
        for (int64_t i = 0; i < k; i++) {
            int64_t j = randbelow(r, n - i);
            res->items[i] = pool->items[j];
            pool->items[j] = pool->items[n - i - 1];
        }
    } else {
        Set *selected = set_new(vm, vm->t_set);
        vm_push_root(vm, OBJ_VAL(selected));
        for (int64_t i = 0; i < k; i++) {
            int64_t j = randbelow(r, n);
            while (set_contains(vm, selected, INT_VAL(j))) j = randbelow(r, n);
            set_add(vm, selected, INT_VAL(j));
            res->items[i] = get_item(vm, pop, j);
        }
    }
    vm_pop_roots(vm, vm->nroots - base);
    return OBJ_VAL(res);
}

static Value op_getstate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    (void)argc;
    kw_none(vm, "getstate", kwargs);
    Tuple *inner = tuple_new(vm, MT_N + 1);
    for (int i = 0; i < MT_N; i++) inner->items[i] = INT_VAL(r->gen.mt[i]);
    inner->items[MT_N] = INT_VAL(r->gen.index);
    vm_push_root(vm, OBJ_VAL(inner));
    Tuple *t = tuple_new(vm, 3);
    t->items[0] = INT_VAL(3);
    t->items[1] = OBJ_VAL(inner);
    t->items[2] = r->has_gauss ? FLOAT_VAL(r->gauss_next) : NONE_VAL;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(t);
}

static Value op_setstate(VM *vm, Rng *r, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "setstate", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "setstate() takes exactly one argument (%d given)", argc);
    Value st = argv[0];
    if (!IS_TUPLE(vm, st) || AS_TUPLE(st)->len != 3 || !IS_INTLIKE(AS_TUPLE(st)->items[0]))
        vm_raise_kind(vm, TypeError, "state vector must be a tuple");
    Tuple *t = AS_TUPLE(st);
    if (AS_INTLIKE(t->items[0]) != 3)
        vm_raise_kind(vm, ValueError, "state with version %lld passed to Random.setstate() of version 3",
                      (long long)AS_INTLIKE(t->items[0]));
    Value inner = t->items[1];
    if (!IS_TUPLE(vm, inner) || AS_TUPLE(inner)->len != MT_N + 1)
        vm_raise_kind(vm, ValueError, "state vector is the wrong size");
    Tuple *in = AS_TUPLE(inner);
    uint32_t mt[MT_N];
    for (int i = 0; i < MT_N; i++) {
        if (!IS_INTLIKE(in->items[i])) vm_raise_kind(vm, TypeError, "state vector items must be integers");
        int64_t v = AS_INTLIKE(in->items[i]);
        if (v < 0 || v > 0xFFFFFFFFll) vm_raise_kind(vm, OverflowError, "Python int too large to convert to C unsigned long");
        mt[i] = (uint32_t)v;
    }
    if (!IS_INTLIKE(in->items[MT_N])) vm_raise_kind(vm, TypeError, "state vector items must be integers");
    int64_t index = AS_INTLIKE(in->items[MT_N]);
    if (index < 0 || index > MT_N) vm_raise_kind(vm, ValueError, "invalid state");
    memcpy(r->gen.mt, mt, sizeof mt);
    r->gen.index = (int32_t)index;
    Value g = t->items[2];
    r->has_gauss = !IS_NONE(g);
    if (r->has_gauss) r->gauss_next = num_arg(vm, g);
    return NONE_VAL;
}

/* ------------------------------------------------------------------ */
/* wiring: module functions and Random methods                         */
/* ------------------------------------------------------------------ */

static Value rng_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs);

static Rng *rng_from_module(VM *vm) {
    NativeFunction *nf = vm_current_native(vm);
    return (Rng *)AS_OBJ(nf->data);
}

static Rng *rng_self(VM *vm, int argc, Value *argv) {
    if (argc < 1 || !IS_OBJ(argv[0]) || AS_OBJ(argv[0])->type->new_ != rng_new)
        vm_raise_kind(vm, TypeError, "descriptor requires a 'random.Random' object");
    return (Rng *)AS_OBJ(argv[0]);
}

#define RNG_OPS(X)                                                                                   \
    X(seed) X(random) X(getrandbits) X(randrange) X(randint) X(choice) X(shuffle) X(uniform)         \
    X(triangular) X(gauss) X(normalvariate) X(lognormvariate) X(expovariate) X(paretovariate)        \
    X(weibullvariate) X(gammavariate) X(betavariate) X(vonmisesvariate) X(choices) X(sample)         \
    X(getstate) X(setstate) X(randbytes)

#define RNG_WRAP(name)                                                                               \
    static Value mod_##name(VM *vm, int argc, Value *argv, Dict *kwargs) {                           \
        return op_##name(vm, rng_from_module(vm), argc, argv, kwargs);                               \
    }                                                                                                \
    static Value meth_##name(VM *vm, int argc, Value *argv, Dict *kwargs) {                          \
        Rng *r = rng_self(vm, argc, argv);                                                           \
        return op_##name(vm, r, argc - 1, argv + 1, kwargs);                                         \
    }
RNG_OPS(RNG_WRAP)
#undef RNG_WRAP

static Value rng_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "Random", kwargs);
    if (argc > 1) vm_raise_kind(vm, TypeError, "Random() argument after * must be at most 1 (%d given)", argc);
    Value seed = argc ? argv[0] : NONE_VAL;
    vm_push_root(vm, seed);
    Rng *r = gc_alloc_obj(vm, cls, sizeof(Rng));
    vm_push_root(vm, OBJ_VAL(r));
    rng_seed(vm, r, seed);
    vm_pop_roots(vm, 2);
    return OBJ_VAL(r);
}

static Value rng_repr(VM *vm, Value self) {
    return STR_VAL(str_printf(vm, "<random.Random object at %p>", (void *)AS_OBJ(self)));
}

Module *stdlib_random(VM *vm) {
    Type *t = STDLIB_FIND_TYPE(vm, new_, rng_new);
    if (!t) {
        t = type_new_builtin(vm, "Random", vm->t_object, 0);
        t->new_ = rng_new;
        t->repr = rng_repr;
#define RNG_METHOD(name) type_add_method(vm, t, #name, meth_##name);
        RNG_OPS(RNG_METHOD)
#undef RNG_METHOD
        if (t->dict) dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "random")));
    }
    Module *m = module_new(vm, str_cstr(vm, "random"));
    vm_push_root(vm, OBJ_VAL(m));
    Value inst = rng_new(vm, t, 0, NULL, NULL);
    dict_set_cstr(vm, m->dict, "_inst", inst);
    dict_set_cstr(vm, m->dict, "Random", OBJ_VAL(t));
#define RNG_FUNC(name) module_add_native_data(vm, m, #name, mod_##name, inst);
    RNG_OPS(RNG_FUNC)
#undef RNG_FUNC
    vm_pop_roots(vm, 1);
    return m;
}
