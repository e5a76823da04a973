/*
** nd_random.c — np.random, the legacy global RandomState: seed, rand,
** random/random_sample, randn/standard_normal, randint, normal, uniform.
** The generator is MT19937 seeded the way numpy's RandomState seeds it
** (init_genrand for an integer, init_by_array for a sequence) and every
** distribution draws its bits in numpy's order, so a seeded program prints
** the same numbers as under numpy. The state lives in vm->nd.
*/
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "nd_priv.h"

/* ------------------------------------------------------------ MT19937 */

/* Seeding resets numpy's cached gaussian too. */
static void seed_int(NDRandom *r, uint32_t s) {
    mt_seed(&r->gen, s);
    r->has_gauss = false;
    r->gauss = 0.0;
    r->seeded = true;
}

static void seed_key(NDRandom *r, const uint32_t *key, size_t klen) {
    mt_seed_array(&r->gen, key, klen);
    r->has_gauss = false;
    r->gauss = 0.0;
    r->seeded = true;
}

/* Unseeded use seeds from the OS (like numpy) with init_by_array. */
static void seed_from_os(NDRandom *r) {
    uint32_t key[8] = {0};
    int fd = open("/dev/urandom", O_RDONLY);
    bool ok = false;
    if (fd >= 0) {
        ok = read(fd, key, sizeof key) == (ssize_t)sizeof key;
        close(fd);
    }
    if (!ok) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        key[0] = (uint32_t)ts.tv_sec;
        key[1] = (uint32_t)ts.tv_nsec;
        key[2] = (uint32_t)getpid();
        key[3] = (uint32_t)(uintptr_t)r;
    }
    seed_key(r, key, 8);
}

static NDRandom *rng(VM *vm) {
    NDRandom *r = &nd_state(vm)->rng;
    if (!r->seeded) seed_from_os(r);
    return r;
}

/* A RandomState instance: its own generator. */
typedef struct NDRandomState {
    Obj obj;
    NDRandom rng;
} NDRandomState;

/* The generator a function uses: self's when called as a RandomState
** method (self is then dropped from the arguments), else the global one. */
static NDRandom *take_gen(VM *vm, int *argc, Value **argv, bool autoseed) {
    NDState *st = nd_state(vm);
    if (*argc > 0 && IS_OBJ((*argv)[0]) && AS_OBJ((*argv)[0])->type == st->t_rstate) {
        NDRandom *r = &((NDRandomState *)AS_OBJ((*argv)[0]))->rng;
        (*argc)--;
        (*argv)++;
        return r;
    }
    return autoseed ? rng(vm) : &st->rng;
}

static uint32_t next32(NDRandom *r) { return mt_next32(&r->gen); }

static uint64_t next64(NDRandom *r) {
    uint64_t hi = next32(r);
    return hi << 32 | next32(r);
}

/* random_sample: 53 bits from two draws, numpy's legacy double. */
static double next_double(NDRandom *r) { return mt_random53(&r->gen); }

/* numpy's legacy_gauss: polar Box-Muller, the second value cached. */
static double next_gauss(NDRandom *r) {
    if (r->has_gauss) {
        r->has_gauss = false;
        double t = r->gauss;
        r->gauss = 0.0;
        return t;
    }
    double x1, x2, r2;
    do {
        x1 = 2.0 * next_double(r) - 1.0;
        x2 = 2.0 * next_double(r) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    r->gauss = f * x1;
    r->has_gauss = true;
    return f * x2;
}

/* ------------------------------------------------------------ helpers */

/* The size= argument: false for None (a single Python value). */
static bool size_arg(VM *vm, Value v, int *ndim, int64_t *shape) {
    if (IS_EMPTY(v) || IS_NONE(v)) return false;
    *ndim = nd_parse_shape(vm, v, shape);
    for (int i = 0; i < *ndim; i++)
        if (shape[i] < 0) vm_raise_kind(vm, ValueError, "negative dimensions are not allowed");
    return true;
}

/* Dimensions given as separate arguments: rand(2, 3). */
static bool dims_args(VM *vm, int argc, Value *argv, int *ndim, int64_t *shape) {
    if (argc == 0) return false;
    if (argc > ND_MAXDIM) vm_raise_kind(vm, ValueError, "maximum supported dimension for an ndarray is currently %d", ND_MAXDIM);
    for (int i = 0; i < argc; i++) {
        shape[i] = vm_to_index(vm, argv[i]);
        if (shape[i] < 0) vm_raise_kind(vm, ValueError, "negative dimensions are not allowed");
    }
    *ndim = argc;
    return true;
}

typedef enum Dist { D_UNIFORM01, D_GAUSS, D_EXP } Dist;

/* One draw of a standard distribution, numpy's legacy algorithm. */
static double draw(NDRandom *r, Dist d) {
    switch (d) {
    case D_GAUSS: return next_gauss(r);
    case D_EXP: return -log(1.0 - next_double(r));
    default: return next_double(r);
    }
}

/* loc + scale * draw, one Python float or a float64 array of shape. */
static Value fill_float(VM *vm, NDRandom *r, Dist d, double loc, double scale, bool arr, int ndim,
                        const int64_t *shape) {
    if (!arr) {
        return FLOAT_VAL(loc + scale * draw(r, d));
    }
    NDArray *a = nd_empty(vm, ND_FLOAT64, ndim, shape);
    double *p = (double *)a->data;
    for (int64_t i = 0; i < a->size; i++) {
        p[i] = loc + scale * draw(r, d);
    }
    return OBJ_VAL(a);
}

/* ------------------------------------------------------------ functions */

static Value f_seed(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, false);
    Value sv = kw_take(vm, kw, "seed");
    kw_done(vm, "seed", kw);
    arg_between(vm, "seed", argc, 0, 1);
    if (argc == 1) sv = argv[0];
    if (IS_EMPTY(sv) || IS_NONE(sv)) {
        seed_from_os(r);
        return NONE_VAL;
    }
    if (IS_FLOAT(sv) || (nd_is_scalar(vm, sv) && nd_is_float(((NDScalar *)AS_OBJ(sv))->dtype)))
        vm_raise_kind(vm, TypeError, "Cannot cast scalar from dtype('float64') to dtype('int64') according to the rule 'safe'");
    if (IS_INTLIKE(sv) || nd_is_scalar(vm, sv)) {
        int64_t s = IS_INTLIKE(sv) ? AS_INTLIKE(sv) : nd_load_i(((NDScalar *)AS_OBJ(sv))->dtype, &((NDScalar *)AS_OBJ(sv))->v);
        if (s < 0 || s > 0xffffffffLL) vm_raise_kind(vm, ValueError, "Seed must be between 0 and 2**32 - 1");
        seed_int(r, (uint32_t)s);
        return NONE_VAL;
    }
    NDArray *a = nd_array_from(vm, sv, -1, false);
    if (a->size == 0) vm_raise_kind(vm, ValueError, "Seed must be non-empty");
    if (a->ndim > 1) vm_raise_kind(vm, ValueError, "Seed array must be 1-d");
    if (nd_is_float(a->dtype))
        vm_raise_kind(vm, TypeError, "Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'",
                      nd_dtype_name(a->dtype));
    if (a->size > 1 << 20) vm_raise_kind(vm, ValueError, "seed array too large");
    uint32_t key[1 << 10], *k = key;
    uint32_t *heap = NULL;
    int64_t idx[ND_MAXDIM] = {0};
    char *p = a->data;
    /* validate first (no raising once memory is held) */
    for (int64_t i = 0; i < a->size; i++) {
        int64_t s = nd_load_i(a->dtype, p);
        if (s < 0 || s > 0xffffffffLL) vm_raise_kind(vm, ValueError, "Seed must be between 0 and 2**32 - 1");
        nd_advance(a->ndim, a->shape, idx, &p, a->strides, NULL, NULL);
    }
    if (a->size > (int64_t)(sizeof key / sizeof key[0])) {
        heap = malloc(sizeof(uint32_t) * (size_t)a->size);
        if (!heap) vm_raise_kind(vm, MemoryError, "out of memory");
        k = heap;
    }
    memset(idx, 0, sizeof idx);
    p = a->data;
    for (int64_t i = 0; i < a->size; i++) {
        k[i] = (uint32_t)nd_load_i(a->dtype, p);
        nd_advance(a->ndim, a->shape, idx, &p, a->strides, NULL, NULL);
    }
    seed_key(r, k, (size_t)a->size);
    free(heap);
    return NONE_VAL;
}

/* random_sample(size=None) / random(size=None) / sample / ranf */
static Value f_random_sample(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value sz = kw_take(vm, kw, "size");
    kw_done(vm, "random_sample", kw);
    arg_between(vm, "random_sample", argc, 0, 1);
    if (argc == 1) sz = argv[0];
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = size_arg(vm, sz, &nd, shape);
    return fill_float(vm, r, D_UNIFORM01, 0.0, 1.0, arr, nd, shape);
}

/* rand(d0, d1, ...) */
static Value f_rand(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    kw_none(vm, "rand", kw);
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = dims_args(vm, argc, argv, &nd, shape);
    return fill_float(vm, r, D_UNIFORM01, 0.0, 1.0, arr, nd, shape);
}

/* randn(d0, d1, ...) */
static Value f_randn(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    kw_none(vm, "randn", kw);
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = dims_args(vm, argc, argv, &nd, shape);
    return fill_float(vm, r, D_GAUSS, 0.0, 1.0, arr, nd, shape);
}

static Value f_standard_normal(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value sz = kw_take(vm, kw, "size");
    kw_done(vm, "standard_normal", kw);
    arg_between(vm, "standard_normal", argc, 0, 1);
    if (argc == 1) sz = argv[0];
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = size_arg(vm, sz, &nd, shape);
    return fill_float(vm, r, D_GAUSS, 0.0, 1.0, arr, nd, shape);
}

/* A float parameter (Python number or numpy scalar); only scalars here. */
static double param(VM *vm, const char *fname, Value v, double dflt) {
    if (IS_EMPTY(v)) return dflt;
    if (IS_NUMBER(v)) return AS_NUMBER(v);
    if (nd_is_scalar(vm, v)) return nd_load_f(((NDScalar *)AS_OBJ(v))->dtype, &((NDScalar *)AS_OBJ(v))->v);
    vm_raise_kind(vm, TypeError, "gpy's np.random.%s takes numbers as parameters, not %s", fname, vm_type_name(vm, v));
}

/* normal(loc=0.0, scale=1.0, size=None) */
static Value f_normal(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value lv = kw_take(vm, kw, "loc"), sv = kw_take(vm, kw, "scale"), zv = kw_take(vm, kw, "size");
    kw_done(vm, "normal", kw);
    arg_between(vm, "normal", argc, 0, 3);
    if (argc >= 1) lv = argv[0];
    if (argc >= 2) sv = argv[1];
    if (argc >= 3) zv = argv[2];
    double loc = param(vm, "normal", lv, 0.0), scale = param(vm, "normal", sv, 1.0);
    if (scale < 0 || isnan(scale)) vm_raise_kind(vm, ValueError, "scale < 0");
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = size_arg(vm, zv, &nd, shape);
    return fill_float(vm, r, D_GAUSS, loc, scale, arr, nd, shape);
}

/* exponential(scale=1.0, size=None) / standard_exponential(size=None) */
static Value f_exponential(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value sv = kw_take(vm, kw, "scale"), zv = kw_take(vm, kw, "size");
    kw_done(vm, "exponential", kw);
    arg_between(vm, "exponential", argc, 0, 2);
    if (argc >= 1) sv = argv[0];
    if (argc >= 2) zv = argv[1];
    double scale = param(vm, "exponential", sv, 1.0);
    if (scale < 0 || isnan(scale)) vm_raise_kind(vm, ValueError, "scale < 0");
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = size_arg(vm, zv, &nd, shape);
    return fill_float(vm, r, D_EXP, 0.0, scale, arr, nd, shape);
}
static Value f_standard_exponential(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value zv = kw_take(vm, kw, "size");
    kw_done(vm, "standard_exponential", kw);
    arg_between(vm, "standard_exponential", argc, 0, 1);
    if (argc == 1) zv = argv[0];
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = size_arg(vm, zv, &nd, shape);
    return fill_float(vm, r, D_EXP, 0.0, 1.0, arr, nd, shape);
}

/* uniform(low=0.0, high=1.0, size=None) = low + (high - low) * random_sample */
static Value f_uniform(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value lv = kw_take(vm, kw, "low"), hv = kw_take(vm, kw, "high"), zv = kw_take(vm, kw, "size");
    kw_done(vm, "uniform", kw);
    arg_between(vm, "uniform", argc, 0, 3);
    if (argc >= 1) lv = argv[0];
    if (argc >= 2) hv = argv[1];
    if (argc >= 3) zv = argv[2];
    double lo = param(vm, "uniform", lv, 0.0), hi = param(vm, "uniform", hv, 1.0);
    double range = hi - lo;
    if (!isfinite(range)) vm_raise_kind(vm, OverflowError, "Range exceeds valid bounds");
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = size_arg(vm, zv, &nd, shape);
    return fill_float(vm, r, D_UNIFORM01, lo, range, arr, nd, shape);
}

static uint64_t gen_mask(uint64_t max) {
    uint64_t m = max;
    m |= m >> 1;
    m |= m >> 2;
    m |= m >> 4;
    m |= m >> 8;
    m |= m >> 16;
    m |= m >> 32;
    return m;
}

/* Bits source of numpy's bounded integer fill: 8/16-bit and bool draws
** share one 32-bit word per call; wider types take whole words. */
typedef struct Bits {
    NDRandom *r;
    int bits; /* 1 (bool), 8, 16, 32, 64 */
    int bcnt;
    uint32_t buf;
} Bits;

static uint64_t draw_bits(Bits *b) {
    switch (b->bits) {
    case 1:
    case 8:
    case 16: {
        int per = b->bits == 1 ? 31 : b->bits == 8 ? 3 : 1;
        if (!b->bcnt) {
            b->buf = next32(b->r);
            b->bcnt = per;
        } else {
            b->buf >>= b->bits;
            b->bcnt--;
        }
        return b->bits == 1 ? (b->buf & 1u) : b->bits == 8 ? (uint8_t)b->buf : (uint16_t)b->buf;
    }
    case 32: return next32(b->r);
    default: return next64(b->r);
    }
}

/* One value in [0, rng] by masked rejection (numpy's legacy randint). */
static uint64_t bounded(Bits *b, uint64_t rng, uint64_t mask) {
    if (rng == 0) return 0;
    if (b->bits == 64 && rng <= 0xffffffffu) {
        if (rng == 0xffffffffu) return next32(b->r);
        uint64_t v;
        while ((v = (next32(b->r) & mask)) > rng) {}
        return v;
    }
    if ((b->bits == 32 && rng == 0xffffffffu) || (b->bits == 64 && rng == UINT64_MAX) ||
        (b->bits == 16 && rng == 0xffffu) || (b->bits == 8 && rng == 0xffu))
        return draw_bits(b);
    uint64_t v;
    while ((v = (draw_bits(b) & mask)) > rng) {}
    return v;
}

/* An integer bound as int64 or (for uint64 above INT64_MAX) flagged. */
static int64_t int_bound(VM *vm, Value v) {
    if (IS_FLOAT(v)) {
        double d = AS_FLOAT(v);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            vm_raise_kind(vm, ValueError, "bound is out of range");
        return (int64_t)floor(d);
    }
    if (nd_is_scalar(vm, v)) {
        NDScalar *s = (NDScalar *)AS_OBJ(v);
        if (nd_is_float(s->dtype)) return int_bound(vm, FLOAT_VAL(nd_load_f(s->dtype, &s->v)));
        return nd_load_i(s->dtype, &s->v);
    }
    return vm_to_index(vm, v);
}

/* randint(low, high=None, size=None, dtype=int) */
static Value f_randint(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value lv = kw_take(vm, kw, "low"), hv = kw_take(vm, kw, "high"), zv = kw_take(vm, kw, "size");
    Value dv = kw_take(vm, kw, "dtype");
    kw_done(vm, "randint", kw);
    arg_between(vm, "randint", argc, 0, 4);
    if (argc >= 1) lv = argv[0];
    if (argc >= 2) hv = argv[1];
    if (argc >= 3) zv = argv[2];
    if (argc >= 4) dv = argv[3];
    if (IS_EMPTY(lv)) vm_raise_kind(vm, TypeError, "randint() missing required argument 'low' (pos 1)");
    NDType dt = ND_INT64;
    bool py_int = true; /* dtype=int: a Python int when size is None */
    if (!IS_EMPTY(dv) && !IS_NONE(dv) && !(IS_OBJ(dv) && (Type *)AS_OBJ(dv) == vm->t_int)) {
        dt = nd_dtype_from_value(vm, dv);
        py_int = dt == ND_BOOL && IS_OBJ(dv) && (Type *)AS_OBJ(dv) == vm->t_bool;
        if (nd_is_float(dt)) vm_raise_kind(vm, TypeError, "Unsupported dtype dtype('%s') for randint", nd_dtype_name(dt));
    }
    int64_t lo, hi;
    if (IS_EMPTY(hv) || IS_NONE(hv)) {
        lo = 0;
        hi = int_bound(vm, lv);
    } else {
        lo = int_bound(vm, lv);
        hi = int_bound(vm, hv);
    }
    /* the dtype's range; high is exclusive */
    int64_t dmin = 0, dmax = 1;
    int bits = 1;
    switch (dt) {
    case ND_BOOL: dmin = 0; dmax = 1; bits = 1; break;
    case ND_INT8: dmin = INT8_MIN; dmax = INT8_MAX; bits = 8; break;
    case ND_UINT8: dmin = 0; dmax = UINT8_MAX; bits = 8; break;
    case ND_INT16: dmin = INT16_MIN; dmax = INT16_MAX; bits = 16; break;
    case ND_UINT16: dmin = 0; dmax = UINT16_MAX; bits = 16; break;
    case ND_INT32: dmin = INT32_MIN; dmax = INT32_MAX; bits = 32; break;
    case ND_UINT32: dmin = 0; dmax = UINT32_MAX; bits = 32; break;
    case ND_UINT64: dmin = 0; dmax = INT64_MAX; bits = 64; break;
    default: dmin = INT64_MIN; dmax = INT64_MAX; bits = 64; break;
    }
    const char *dn = nd_dtype_name(dt);
    if (lo < dmin) vm_raise_kind(vm, ValueError, "low is out of bounds for %s", dn);
    if (hi == INT64_MIN || hi - 1 > dmax) vm_raise_kind(vm, ValueError, "high is out of bounds for %s", dn);
    if (lo >= hi) vm_raise_kind(vm, ValueError, "low >= high");
    uint64_t range = (uint64_t)(hi - 1) - (uint64_t)lo, mask = gen_mask(range);
    Bits b = {r, bits, 0, 0};
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    if (!size_arg(vm, zv, &nd, shape)) {
        uint64_t v = (uint64_t)lo + bounded(&b, range, mask);
        if (dt == ND_BOOL) return py_int ? BOOL_VAL(v != 0) : nd_scalar_from_ptr(vm, ND_BOOL, &(bool){v != 0});
        NDElem e = {0};
        nd_store_i(dt, &e, (int64_t)v);
        return py_int ? INT_VAL((int64_t)v) : nd_scalar_from_ptr(vm, dt, &e);
    }
    NDArray *a = nd_empty(vm, dt, nd, shape);
    size_t is = nd_itemsize(dt);
    for (int64_t i = 0; i < a->size; i++) {
        uint64_t v = (uint64_t)lo + bounded(&b, range, mask);
        nd_store_i(dt, a->data + (size_t)i * is, (int64_t)v);
    }
    return OBJ_VAL(a);
}

/* numpy's random_interval: uniform in [0, max] by masked rejection. */
static uint64_t interval(NDRandom *r, uint64_t max) {
    if (max == 0) return 0;
    uint64_t mask = gen_mask(max), v;
    if (max <= 0xffffffffu)
        while ((v = (next32(r) & mask)) > max) {}
    else
        while ((v = (next64(r) & mask)) > max) {}
    return v;
}

/* Fisher-Yates over the first axis in numpy's order (i from n-1 down). */
static void shuffle_array(VM *vm, NDRandom *r, NDArray *a) {
    if (a->ndim == 0) vm_raise_kind(vm, TypeError, "len() of unsized object");
    if (!(a->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "assignment destination is read-only");
    int64_t n = a->shape[0];
    size_t is = nd_itemsize(a->dtype);
    if (a->ndim == 1) {
        for (int64_t i = n - 1; i >= 1; i--) {
            int64_t j = (int64_t)interval(r, (uint64_t)i);
            char t[8], *pi = a->data + i * a->strides[0], *pj = a->data + j * a->strides[0];
            memcpy(t, pi, is);
            memcpy(pi, pj, is);
            memcpy(pj, t, is);
        }
        return;
    }
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = (int64_t)interval(r, (uint64_t)i);
        if (i == j) continue;
        NDArray *ri = nd_view(vm, a, a->data + i * a->strides[0], a->ndim - 1, a->shape + 1, a->strides + 1);
        vm_push_root(vm, OBJ_VAL(ri));
        NDArray *rj = nd_view(vm, a, a->data + j * a->strides[0], a->ndim - 1, a->shape + 1, a->strides + 1);
        vm_push_root(vm, OBJ_VAL(rj));
        NDArray *t = nd_copy(vm, ri);
        vm_push_root(vm, OBJ_VAL(t));
        nd_assign(vm, ri, rj);
        nd_assign(vm, rj, t);
        vm_pop_roots(vm, 3);
    }
}

static Value f_shuffle(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    kw_none(vm, "shuffle", kw);
    arg_between(vm, "shuffle", argc, 1, 1);
    Value x = argv[0];
    if (nd_check(vm, x)) {
        shuffle_array(vm, r, ND_AS(x));
        return NONE_VAL;
    }
    if (!IS_LIST(vm, x)) vm_raise_kind(vm, TypeError, "gpy's np.random.shuffle takes an array or a list");
    List *l = AS_LIST(x);
    for (int64_t i = l->len - 1; i >= 1; i--) {
        int64_t j = (int64_t)interval(r, (uint64_t)i);
        if (i >= l->len || j >= l->len) break;
        Value t = l->items[i];
        l->items[i] = l->items[j];
        l->items[j] = t;
    }
    return NONE_VAL;
}

/* permutation(n) = shuffled arange(n); permutation(x) = a shuffled copy. */
static NDArray *permutation(VM *vm, NDRandom *r, Value x) {
    NDArray *a;
    if (IS_INTLIKE(x) || (nd_is_scalar(vm, x) && !nd_is_float(((NDScalar *)AS_OBJ(x))->dtype))) {
        int64_t n = IS_INTLIKE(x) ? AS_INTLIKE(x) : nd_load_i(((NDScalar *)AS_OBJ(x))->dtype, &((NDScalar *)AS_OBJ(x))->v);
        if (n < 0) n = 0; /* arange(-1) is empty */
        a = nd_empty(vm, ND_INT64, 1, &n);
        for (int64_t i = 0; i < n; i++) ((int64_t *)a->data)[i] = i;
    } else {
        a = nd_array_from(vm, x, -1, true);
        if (a->ndim == 0) vm_raise_kind(vm, IndexError, "x must be an integer or at least 1-dimensional");
    }
    vm_push_root(vm, OBJ_VAL(a));
    shuffle_array(vm, r, a);
    vm_pop_roots(vm, 1);
    return a;
}
static Value f_permutation(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    kw_none(vm, "permutation", kw);
    arg_between(vm, "permutation", argc, 1, 1);
    return OBJ_VAL(permutation(vm, r, argv[0]));
}

/* choice(a, size=None, replace=True, p=None), numpy's legacy algorithm:
** randint indices, a permutation prefix (replace=False) or a search of
** the cumulative p for random_sample draws. */
static Value f_choice(VM *vm, int argc, Value *argv, Dict *kw) {
    NDRandom *r = take_gen(vm, &argc, &argv, true);
    Value av = kw_take(vm, kw, "a"), zv = kw_take(vm, kw, "size"), rv = kw_take(vm, kw, "replace");
    Value pv = kw_take(vm, kw, "p");
    kw_done(vm, "choice", kw);
    arg_between(vm, "choice", argc, 0, 4);
    if (argc >= 1) av = argv[0];
    if (argc >= 2) zv = argv[1];
    if (argc >= 3) rv = argv[2];
    if (argc >= 4) pv = argv[3];
    if (IS_EMPTY(av)) vm_raise_kind(vm, TypeError, "choice() missing required argument 'a' (pos 1)");
    bool replace = IS_EMPTY(rv) || vm_truthy(vm, rv);
    NDArray *pool = NULL;
    int64_t n;
    if (IS_INTLIKE(av)) {
        n = AS_INTLIKE(av);
        if (n < 0) vm_raise_kind(vm, ValueError, "a must be greater than 0 unless no samples are taken");
    } else {
        pool = nd_array_from(vm, av, -1, false);
        if (pool->ndim != 1) vm_raise_kind(vm, ValueError, "a must be 1-dimensional");
        n = pool->size;
    }
    vm_push_root(vm, pool ? OBJ_VAL(pool) : NONE_VAL);
    int nd = 0;
    int64_t shape[ND_MAXDIM];
    bool arr = size_arg(vm, zv, &nd, shape);
    int64_t count = arr ? nd_shape_size(vm, nd, shape, ND_INT64) : 1;
    if (n == 0 && count != 0)
        vm_raise_kind(vm, ValueError, pool ? "'a' cannot be empty unless no samples are taken"
                                           : "a must be greater than 0 unless no samples are taken");
    NDArray *p = NULL;
    if (!IS_EMPTY(pv) && !IS_NONE(pv)) {
        p = nd_astype(vm, nd_array_from(vm, pv, -1, false), ND_FLOAT64);
        vm_push_root(vm, OBJ_VAL(p));
        if (p->ndim != 1) vm_raise_kind(vm, ValueError, "'p' must be 1-dimensional");
        if (p->size != n) vm_raise_kind(vm, ValueError, "'a' and 'p' must have same size");
        double sum = 0, comp = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = nd_load_f(ND_FLOAT64, p->data + i * p->strides[0]);
            if (isnan(v)) vm_raise_kind(vm, ValueError, "probabilities contain NaN");
            if (v < 0) vm_raise_kind(vm, ValueError, "probabilities are not non-negative");
            double y = v - comp, t = sum + y; /* Kahan, like numpy's check */
            comp = (t - sum) - y;
            sum = t;
        }
        if (fabs(sum - 1.0) > sqrt(2.220446049250313e-16)) vm_raise_kind(vm, ValueError, "probabilities do not sum to 1");
        vm_pop_roots(vm, 1);
        vm_push_root(vm, OBJ_VAL(p));
    } else vm_push_root(vm, NONE_VAL);
    int64_t m = arr ? count : 1;
    NDArray *idx = nd_empty(vm, ND_INT64, arr ? nd : 0, shape);
    vm_push_root(vm, OBJ_VAL(idx));
    int64_t *ix = (int64_t *)idx->data;
    if (replace && !p) {
        uint64_t range = (uint64_t)n - 1, mask = gen_mask(range);
        Bits b = {r, 64, 0, 0};
        for (int64_t i = 0; i < m; i++) ix[i] = (int64_t)bounded(&b, range, mask);
    } else if (replace) {
        double *cdf = (double *)nd_empty(vm, ND_FLOAT64, 1, &n)->data; /* unrooted: no GC below */
        double acc = 0;
        for (int64_t i = 0; i < n; i++) {
            acc += nd_load_f(ND_FLOAT64, p->data + i * p->strides[0]);
            cdf[i] = acc;
        }
        double last = cdf[n - 1];
        for (int64_t i = 0; i < n; i++) cdf[i] /= last;
        for (int64_t i = 0; i < m; i++) {
            double u = next_double(r);
            int64_t lo = 0, hi = n; /* first cdf[k] > u (side='right') */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] <= u) lo = mid + 1;
                else hi = mid;
            }
            ix[i] = lo;
        }
    } else {
        if (p) vm_raise_kind(vm, ValueError, "gpy's np.random.choice does not support replace=False with p");
        if (arr && count > n) vm_raise_kind(vm, ValueError, "Cannot take a larger sample than population when 'replace=False'");
        NDArray *perm = permutation(vm, r, INT_VAL(n));
        memcpy(ix, perm->data, sizeof(int64_t) * (size_t)m);
    }
    Value res;
    if (!pool) res = arr ? OBJ_VAL(idx) : INT_VAL(ix[0]);
    else if (!arr) res = nd_scalar_from_ptr(vm, pool->dtype, pool->data + ix[0] * pool->strides[0]);
    else res = nd_getitem(vm, OBJ_VAL(pool), OBJ_VAL(idx));
    vm_pop_roots(vm, 3);
    return res;
}

/* RandomState(seed=None): a generator of its own, seeded like seed(). */
static Value rs_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kw) {
    Value sv = kw_take(vm, kw, "seed");
    kw_done(vm, "RandomState", kw);
    arg_between(vm, "RandomState", argc, 0, 1);
    if (argc == 1) sv = argv[0];
    NDRandomState *o = gc_alloc_obj(vm, cls, sizeof(NDRandomState));
    memset(&o->rng, 0, sizeof o->rng);
    Value args[2] = {OBJ_VAL(o), IS_EMPTY(sv) ? NONE_VAL : sv};
    vm_push_root(vm, args[0]);
    f_seed(vm, 2, args, NULL);
    vm_pop_roots(vm, 1);
    return args[0];
}

static const struct { const char *name; NativeFn fn; } random_fns[] = {
    {"seed", f_seed}, {"random_sample", f_random_sample}, {"random", f_random_sample},
    {"sample", f_random_sample}, {"ranf", f_random_sample}, {"rand", f_rand}, {"randn", f_randn},
    {"standard_normal", f_standard_normal}, {"normal", f_normal}, {"uniform", f_uniform},
    {"randint", f_randint}, {"exponential", f_exponential}, {"standard_exponential", f_standard_exponential}, {"shuffle", f_shuffle}, {"permutation", f_permutation}, {"choice", f_choice},
};

void nd_random_init(VM *vm, Module *np) {
    NDState *st = nd_state(vm);
    if (!st->t_rstate) {
        Type *t = type_new_builtin(vm, "RandomState", vm->t_object, 0);
        t->new_ = rs_new;
        for (size_t i = 0; i < sizeof random_fns / sizeof random_fns[0]; i++)
            if (strcmp(random_fns[i].name, "sample") && strcmp(random_fns[i].name, "ranf"))
                type_add_method(vm, t, random_fns[i].name, random_fns[i].fn);
        st->t_rstate = t;
    }
    Module *m = module_new(vm, str_cstr(vm, "numpy.random"));
    vm_push_root(vm, OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, "RandomState", OBJ_VAL(st->t_rstate));
    for (size_t i = 0; i < sizeof random_fns / sizeof random_fns[0]; i++)
        module_add_function(vm, m, random_fns[i].name, random_fns[i].fn);
    dict_set_cstr(vm, np->dict, "random", OBJ_VAL(m));
    /* import numpy.random / from numpy.random import rand find it here */
    dict_set_cstr(vm, vm->modules, "numpy.random", OBJ_VAL(m));
    vm_pop_roots(vm, 1);
}
