/*
** nd_create.c — making arrays: np.array/asarray from nested sequences
** (shape and dtype discovery), zeros/ones/empty/full and their *_like forms,
** arange, linspace, eye/identity, concatenate and stack.
*/
#include "nd_priv.h"

static bool is_seq(VM *vm, Value v) { return IS_LIST(vm, v) || IS_TUPLE(vm, v); }
static int64_t seq_len(VM *vm, Value v) { return IS_LIST(vm, v) ? AS_LIST(v)->len : AS_TUPLE(v)->len; }
static Value *seq_items(VM *vm, Value v) { return IS_LIST(vm, v) ? AS_LIST(v)->items : AS_TUPLE(v)->items; }

typedef struct Discover {
    int ndim;
    int64_t shape[ND_MAXDIM];
    int dt; /* -1 until a leaf is seen */
} Discover;

/* The shape along the first elements. */
static void find_shape(VM *vm, Value v, Discover *d) {
    d->ndim = 0;
    for (;;) {
        if (nd_check(vm, v)) {
            NDArray *a = ND_AS(v);
            for (int i = 0; i < a->ndim && d->ndim < ND_MAXDIM; i++) d->shape[d->ndim++] = a->shape[i];
            return;
        }
        if (!is_seq(vm, v)) return;
        if (d->ndim >= ND_MAXDIM) vm_raise_kind(vm, ValueError, "setting an array element with a sequence.");
        int64_t n = seq_len(vm, v);
        d->shape[d->ndim++] = n;
        if (n == 0) return;
        v = seq_items(vm, v)[0];
    }
}

static _Noreturn void inhomogeneous(VM *vm, Discover *d, int depth) {
    char buf[400];
    nd_shape_str(buf, sizeof buf, depth, d->shape);
    vm_raise_kind(vm, ValueError,
                  "setting an array element with a sequence. The requested array has an inhomogeneous shape "
                  "after %d dimensions. The detected shape was %s + inhomogeneous part.", depth, buf);
}

static void leaf_dtype(VM *vm, Value v, Discover *d) {
    int t;
    if (IS_BOOL(v)) t = ND_BOOL;
    else if (IS_INT(v)) t = ND_INT64;
    else if (IS_FLOAT(v)) t = ND_FLOAT64;
    else if (IS_COMPLEX(vm, v)) t = ND_COMPLEX128;
    else if (nd_is_scalar(vm, v)) t = ((NDScalar *)AS_OBJ(v))->dtype;
    else if (IS_OBJ(v) && AS_OBJ(v)->type == vm->t_int) /* a big int: numpy would need dtype=object */
        vm_raise_kind(vm, OverflowError, "Python int too large to convert to C long");
    else if (IS_STR(vm, v) || IS_NONE(v) || IS_OBJ(v))
        vm_raise_kind(vm, TypeError, "gpy's numpy supports numeric arrays only (got '%s')", vm_type_name(vm, v));
    else t = ND_FLOAT64;
    d->dt = d->dt < 0 ? t : (int)nd_promote((NDType)d->dt, (NDType)t);
}

/* Checks the shape everywhere and promotes the leaves' dtypes. */
static void check_walk(VM *vm, Value v, int depth, Discover *d) {
    if (depth == d->ndim) {
        if (is_seq(vm, v) || nd_check(vm, v)) inhomogeneous(vm, d, depth);
        leaf_dtype(vm, v, d);
        return;
    }
    if (nd_check(vm, v)) {
        NDArray *a = ND_AS(v);
        if (a->ndim != d->ndim - depth) inhomogeneous(vm, d, depth);
        for (int i = 0; i < a->ndim; i++)
            if (a->shape[i] != d->shape[depth + i]) inhomogeneous(vm, d, depth + i);
        d->dt = d->dt < 0 ? (int)a->dtype : (int)nd_promote((NDType)d->dt, a->dtype);
        return;
    }
    if (!is_seq(vm, v) || seq_len(vm, v) != d->shape[depth]) inhomogeneous(vm, d, depth);
    Value *items = seq_items(vm, v);
    for (int64_t i = 0; i < d->shape[depth]; i++) check_walk(vm, items[i], depth + 1, d);
}

static void fill_walk(VM *vm, Value v, NDArray *r, int depth, char *p) {
    if (depth == r->ndim) {
        nd_store_value(vm, r->dtype, p, v);
        return;
    }
    if (nd_check(vm, v)) {
        NDArray *a = ND_AS(v);
        NDArray *dst = nd_view(vm, r, p, r->ndim - depth, r->shape + depth, r->strides + depth);
        vm_push_root(vm, OBJ_VAL(dst));
        nd_assign(vm, dst, a);
        vm_pop_roots(vm, 1);
        return;
    }
    Value *items = seq_items(vm, v);
    for (int64_t i = 0; i < r->shape[depth]; i++) fill_walk(vm, items[i], r, depth + 1, p + i * r->strides[depth]);
}

NDArray *nd_array_from(VM *vm, Value v, int dt, bool copy) {
    if (nd_check(vm, v)) {
        NDArray *a = ND_AS(v);
        if (!copy && (dt < 0 || a->dtype == (NDType)dt)) return a;
        return nd_astype(vm, a, dt < 0 ? a->dtype : (NDType)dt);
    }
    if (nd_is_scalar(vm, v)) {
        NDScalar *s = (NDScalar *)AS_OBJ(v);
        NDArray *r = nd_new(vm, dt < 0 ? s->dtype : (NDType)dt, 0, NULL);
        nd_cast1(r->dtype, r->data, s->dtype, &s->v);
        return r;
    }
    /* numpy's __array__ protocol (device arrays copy themselves to the host) */
    if (IS_OBJ(v) && !IS_LIST(vm, v) && !IS_TUPLE(vm, v)) {
        Value conv = vm_getattr_opt(vm, v, cstr_name(vm, "__array__"));
        if (!IS_EMPTY(conv)) {
            Value r = vm_call(vm, conv, 0, NULL);
            if (nd_check(vm, r)) return nd_array_from(vm, r, dt, false);
        }
    }
    Discover d;
    d.dt = -1;
    find_shape(vm, v, &d);
    check_walk(vm, v, 0, &d);
    NDType t = dt >= 0 ? (NDType)dt : d.dt >= 0 ? (NDType)d.dt : ND_FLOAT64;
    vm_push_root(vm, v);
    NDArray *r = nd_new(vm, t, d.ndim, d.shape);
    vm_push_root(vm, OBJ_VAL(r));
    fill_walk(vm, v, r, 0, r->data);
    vm_pop_roots(vm, 2);
    return r;
}

NDArray *nd_from_value(VM *vm, Value v, int dt) { return nd_array_from(vm, v, dt, false); }

static int dtype_arg(VM *vm, Value v) {
    if (IS_EMPTY(v) || IS_NONE(v)) return -1;
    return (int)nd_dtype_from_value(vm, v);
}

static Value f_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype");
    Value cp = kw_take(vm, kwargs, "copy");
    kw_done(vm, "array", kwargs);
    arg_between(vm, "array", argc, 1, 2);
    if (argc == 2) dtv = argv[1];
    bool copy = IS_EMPTY(cp) || vm_truthy(vm, cp);
    return OBJ_VAL(nd_array_from(vm, argv[0], dtype_arg(vm, dtv), copy));
}
static Value f_asarray(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype");
    kw_done(vm, "asarray", kwargs);
    arg_between(vm, "asarray", argc, 1, 2);
    if (argc == 2) dtv = argv[1];
    return OBJ_VAL(nd_array_from(vm, argv[0], dtype_arg(vm, dtv), false));
}

/* The fill value of full/ones/full_like at p: numpy copies it in with an
** unsafe cast (np.full(2, 1e300, np.int64) is INT64_MIN), but a Python int
** must still fit the dtype. */
static void store_fill(VM *vm, NDType dt, void *p, Value fill) {
    if (IS_FLOAT(fill)) nd_store_f(dt, p, AS_FLOAT(fill));
    else if (nd_is_scalar(vm, fill)) nd_cast1(dt, p, ((NDScalar *)AS_OBJ(fill))->dtype, &((NDScalar *)AS_OBJ(fill))->v);
    else nd_store_value(vm, dt, p, fill);
}

/* zeros/ones/empty/full(shape, [fill,] dtype=) */
static Value make_filled(VM *vm, const char *fname, Value shapev, Value dtv, Value fill) {
    int64_t shape[ND_MAXDIM];
    int nd = nd_parse_shape(vm, shapev, shape);
    int dt = dtype_arg(vm, dtv);
    if (dt < 0) {
        dt = ND_FLOAT64;
        if (!IS_EMPTY(fill) && !strcmp(fname, "full")) {
            if (IS_BOOL(fill)) dt = ND_BOOL;
            else if (IS_INT(fill)) dt = ND_INT64;
            else if (IS_COMPLEX(vm, fill)) dt = ND_COMPLEX128;
            else if (nd_is_scalar(vm, fill)) dt = ((NDScalar *)AS_OBJ(fill))->dtype;
        }
    }
    vm_push_root(vm, fill);
    NDArray *a = nd_new(vm, (NDType)dt, nd, shape);
    vm_pop_roots(vm, 1);
    if (!IS_EMPTY(fill) && a->size > 0) {
        size_t is = nd_itemsize(a->dtype);
        store_fill(vm, a->dtype, a->data, fill);
        for (int64_t i = 1; i < a->size; i++) memcpy(a->data + (size_t)i * is, a->data, is);
    }
    return OBJ_VAL(a);
}

static Value f_zeros(VM *vm, int argc, Value *argv, Dict *kw) {
    Value dtv = kw_take(vm, kw, "dtype");
    kw_done(vm, "zeros", kw);
    arg_between(vm, "zeros", argc, 1, 2);
    return make_filled(vm, "zeros", argv[0], argc == 2 ? argv[1] : dtv, EMPTY_VAL);
}
static Value f_ones(VM *vm, int argc, Value *argv, Dict *kw) {
    Value dtv = kw_take(vm, kw, "dtype");
    kw_done(vm, "ones", kw);
    arg_between(vm, "ones", argc, 1, 2);
    return make_filled(vm, "ones", argv[0], argc == 2 ? argv[1] : dtv, INT_VAL(1));
}
static Value f_full(VM *vm, int argc, Value *argv, Dict *kw) {
    Value dtv = kw_take(vm, kw, "dtype");
    kw_done(vm, "full", kw);
    arg_between(vm, "full", argc, 2, 3);
    return make_filled(vm, "full", argv[0], argc == 3 ? argv[2] : dtv, argv[1]);
}

/* zeros_like & co: shape and dtype of the prototype unless dtype= is given. */
static Value like(VM *vm, int argc, Value *argv, Dict *kw, const char *fname, Value fill, int nargs) {
    Value dtv = kw_take(vm, kw, "dtype");
    kw_done(vm, fname, kw);
    arg_between(vm, fname, argc, nargs, nargs + 1);
    if (argc == nargs + 1) dtv = argv[nargs];
    if (nargs == 2) fill = argv[1];
    NDArray *p = nd_array_from(vm, argv[0], -1, false);
    vm_push_root(vm, OBJ_VAL(p));
    NDType dt = IS_EMPTY(dtv) || IS_NONE(dtv) ? p->dtype : nd_dtype_from_value(vm, dtv);
    NDArray *a = nd_new(vm, dt, p->ndim, p->shape);
    vm_pop_roots(vm, 1);
    if (!IS_EMPTY(fill) && a->size > 0) {
        size_t is = nd_itemsize(dt);
        store_fill(vm, dt, a->data, fill);
        for (int64_t i = 1; i < a->size; i++) memcpy(a->data + (size_t)i * is, a->data, is);
    }
    return OBJ_VAL(a);
}
static Value f_zeros_like(VM *vm, int argc, Value *argv, Dict *kw) { return like(vm, argc, argv, kw, "zeros_like", EMPTY_VAL, 1); }
static Value f_empty_like(VM *vm, int argc, Value *argv, Dict *kw) { return like(vm, argc, argv, kw, "empty_like", EMPTY_VAL, 1); }
static Value f_ones_like(VM *vm, int argc, Value *argv, Dict *kw) { return like(vm, argc, argv, kw, "ones_like", INT_VAL(1), 1); }
static Value f_full_like(VM *vm, int argc, Value *argv, Dict *kw) { return like(vm, argc, argv, kw, "full_like", EMPTY_VAL, 2); }

static double num_of(VM *vm, Value v) {
    if (nd_is_scalar(vm, v)) return nd_load_f(((NDScalar *)AS_OBJ(v))->dtype, &((NDScalar *)AS_OBJ(v))->v);
    return num_arg(vm, v);
}
static bool is_floatish(VM *vm, Value v) {
    return IS_FLOAT(v) || (nd_is_scalar(vm, v) && nd_is_float(((NDScalar *)AS_OBJ(v))->dtype));
}

/* An integer argument of arange (Python int or numpy integer scalar). */
static int64_t int_of(VM *vm, Value v) {
    if (IS_INTLIKE(v)) return AS_INTLIKE(v);
    if (nd_is_scalar(vm, v)) return nd_load_i(((NDScalar *)AS_OBJ(v))->dtype, &((NDScalar *)AS_OBJ(v))->v);
    return (int64_t)num_of(vm, v);
}

static Value f_arange(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype");
    Value kstart = kw_take(vm, kwargs, "start"), kstop = kw_take(vm, kwargs, "stop"), kstep = kw_take(vm, kwargs, "step");
    kw_done(vm, "arange", kwargs);
    arg_between(vm, "arange", argc, IS_EMPTY(kstop) ? 1 : 0, 4);
    Value start = INT_VAL(0), stop = EMPTY_VAL, step = INT_VAL(1);
    if (argc == 1) stop = argv[0];
    if (argc >= 2) { start = argv[0]; stop = argv[1]; }
    if (argc >= 3) step = argv[2];
    if (argc == 4) dtv = argv[3];
    if (!IS_EMPTY(kstart)) start = kstart;
    if (!IS_EMPTY(kstop)) stop = kstop;
    if (!IS_EMPTY(kstep)) step = kstep;
    bool anyf = is_floatish(vm, start) || is_floatish(vm, stop) || is_floatish(vm, step);
    double s0 = num_of(vm, start), s1 = num_of(vm, stop), st = num_of(vm, step);
    if (st == 0) vm_raise_kind(vm, ZeroDivisionError, "division by zero");
    /* numpy's length: the exact difference of integer bounds, divided as
    ** doubles, rounded up; NaN or a length beyond int64 is an error */
    int64_t i0 = anyf ? 0 : int_of(vm, start), i1 = anyf ? 0 : int_of(vm, stop), di = anyf ? 0 : int_of(vm, step);
    double cnt = anyf ? ceil((s1 - s0) / st) : ceil((double)((__int128)i1 - i0) / (double)di);
    if (isnan(cnt)) vm_raise_kind(vm, ValueError, "arange: cannot compute length");
    if (cnt >= 9223372036854775808.0) vm_raise_kind(vm, ValueError, "Maximum allowed size exceeded");
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    int dt = dtype_arg(vm, dtv);
    if (dt < 0) dt = anyf ? ND_FLOAT64 : ND_INT64;
    NDArray *a = nd_empty(vm, (NDType)dt, 1, &n); /* every element is written below */
    size_t is = nd_itemsize((NDType)dt);
    if (!anyf && dt == ND_INT64) {
        int64_t *p = (int64_t *)a->data;
        for (int64_t i = 0; i < n; i++) p[i] = (int64_t)((uint64_t)i0 + (uint64_t)i * (uint64_t)di);
    } else if (!anyf) {
        /* start + i*step in wrapping arithmetic: exact, as every value lies
        ** between start and stop, though i*step alone may overflow */
        for (int64_t i = 0; i < n; i++)
            nd_store_i((NDType)dt, a->data + (size_t)i * is, (int64_t)((uint64_t)i0 + (uint64_t)i * (uint64_t)di));
    } else if (dt == ND_FLOAT64) {
        double *p = (double *)a->data;
        for (int64_t i = 0; i < n; i++) p[i] = s0 + (double)i * st;
    } else {
        for (int64_t i = 0; i < n; i++) nd_store_f((NDType)dt, a->data + (size_t)i * is, s0 + (double)i * st);
    }
    return OBJ_VAL(a);
}

static Value f_linspace(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype"), numv = kw_take(vm, kwargs, "num"), epv = kw_take(vm, kwargs, "endpoint");
    kw_done(vm, "linspace", kwargs);
    arg_between(vm, "linspace", argc, 2, 4);
    if (argc >= 3) numv = argv[2];
    if (argc == 4) epv = argv[3];
    double a = num_of(vm, argv[0]), b = num_of(vm, argv[1]);
    int64_t n = IS_EMPTY(numv) ? 50 : vm_to_index(vm, numv);
    if (n < 0) vm_raise_kind(vm, ValueError, "Number of samples, %lld, must be non-negative.", (long long)n);
    bool endpoint = IS_EMPTY(epv) || vm_truthy(vm, epv);
    int dt = dtype_arg(vm, dtv);
    if (dt < 0) dt = ND_FLOAT64;
    NDArray *r = nd_new(vm, (NDType)dt, 1, &n);
    int64_t div = endpoint ? n - 1 : n;
    double step = div > 0 ? (b - a) / (double)div : 0;
    size_t is = nd_itemsize((NDType)dt);
    for (int64_t i = 0; i < n; i++) {
        double x = div > 0 ? a + (double)i * step : a;
        if (endpoint && i == n - 1 && n > 1) x = b;
        nd_store_f((NDType)dt, r->data + (size_t)i * is, nd_is_float((NDType)dt) ? x : floor(x));
    }
    return OBJ_VAL(r);
}

static Value f_eye(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype"), mv = kw_take(vm, kwargs, "M"), kv = kw_take(vm, kwargs, "k");
    kw_done(vm, "eye", kwargs);
    arg_between(vm, "eye", argc, 1, 3);
    if (argc >= 2) mv = argv[1];
    if (argc == 3) kv = argv[2];
    int64_t shape[2];
    shape[0] = vm_to_index(vm, argv[0]);
    shape[1] = IS_EMPTY(mv) || IS_NONE(mv) ? shape[0] : vm_to_index(vm, mv);
    int64_t k = IS_EMPTY(kv) ? 0 : vm_to_index(vm, kv);
    int dt = dtype_arg(vm, dtv);
    NDArray *r = nd_new(vm, dt < 0 ? ND_FLOAT64 : (NDType)dt, 2, shape);
    if (k >= shape[1] || k <= -shape[0]) return OBJ_VAL(r); /* no diagonal; i + k below cannot overflow */
    for (int64_t i = 0; i < shape[0]; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < shape[1]) nd_store_i(r->dtype, r->data + i * r->strides[0] + j * r->strides[1], 1);
    }
    return OBJ_VAL(r);
}
static Value f_identity(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype");
    kw_done(vm, "identity", kwargs);
    arg_between(vm, "identity", argc, 1, 2);
    Value a[3] = {argv[0], NONE_VAL, INT_VAL(0)};
    Dict *kw = NULL;
    Value r = f_eye(vm, 1, a, kw);
    Value d = argc == 2 ? argv[1] : dtv;
    if (!IS_EMPTY(d) && !IS_NONE(d)) r = OBJ_VAL(nd_astype(vm, ND_AS(r), nd_dtype_from_value(vm, d)));
    return r;
}

/* Arrays of a sequence argument, rooted in a list the caller pops. */
static List *arrays_of(VM *vm, Value seq, const char *fname) {
    if (nd_check(vm, seq)) seq = OBJ_VAL(list_from_iterable(vm, seq));
    if (!is_seq(vm, seq)) vm_raise_kind(vm, TypeError, "%s() argument must be a sequence of arrays", fname);
    vm_push_root(vm, seq);
    List *l = list_new(vm, seq_len(vm, seq));
    vm_push_root(vm, OBJ_VAL(l));
    for (int64_t i = 0; i < seq_len(vm, seq); i++)
        list_append(vm, l, OBJ_VAL(nd_array_from(vm, seq_items(vm, seq)[i], -1, false)));
    vm_pop_roots(vm, 2);
    if (l->len == 0) vm_raise_kind(vm, ValueError, "need at least one array to concatenate");
    return l;
}

static int norm_axis(VM *vm, int64_t axis, int ndim) {
    if (axis < -ndim || axis >= ndim)
        vm_raise_kind(vm, ValueError, "axis %lld is out of bounds for array of dimension %d", (long long)axis, ndim);
    return (int)(axis < 0 ? axis + ndim : axis);
}

static NDArray *concat(VM *vm, List *l, int64_t axisv) {
    NDArray *a0 = ND_AS(l->items[0]);
    if (a0->ndim == 0) vm_raise_kind(vm, ValueError, "zero-dimensional arrays cannot be concatenated");
    int axis = norm_axis(vm, axisv, a0->ndim);
    int64_t shape[ND_MAXDIM];
    memcpy(shape, a0->shape, sizeof(int64_t) * (size_t)a0->ndim);
    NDType dt = a0->dtype;
    shape[axis] = 0;
    for (int64_t i = 0; i < l->len; i++) {
        NDArray *a = ND_AS(l->items[i]);
        if (a->ndim != a0->ndim)
            vm_raise_kind(vm, ValueError, "all the input arrays must have same number of dimensions, but the array at index 0 has %d dimension(s) and the array at index %lld has %d dimension(s)",
                          a0->ndim, (long long)i, a->ndim);
        for (int d = 0; d < a->ndim; d++)
            if (d != axis && a->shape[d] != a0->shape[d])
                vm_raise_kind(vm, ValueError, "all the input array dimensions except for the concatenation axis must match exactly, but along dimension %d, the array at index 0 has size %lld and the array at index %lld has size %lld",
                              d, (long long)a0->shape[d], (long long)i, (long long)a->shape[d]);
        shape[axis] = nd_size_add(vm, shape[axis], a->shape[axis]);
        dt = nd_promote(dt, a->dtype);
    }
    NDArray *r = nd_new(vm, dt, a0->ndim, shape);
    vm_push_root(vm, OBJ_VAL(r));
    int64_t off = 0;
    for (int64_t i = 0; i < l->len; i++) {
        NDArray *a = ND_AS(l->items[i]);
        int64_t sub[ND_MAXDIM];
        memcpy(sub, shape, sizeof(int64_t) * (size_t)a0->ndim);
        sub[axis] = a->shape[axis];
        NDArray *dst = nd_view(vm, r, r->data + off * r->strides[axis], r->ndim, sub, r->strides);
        vm_push_root(vm, OBJ_VAL(dst));
        nd_assign(vm, dst, a);
        vm_pop_roots(vm, 1);
        off += a->shape[axis];
    }
    vm_pop_roots(vm, 1);
    return r;
}

static Value f_concatenate(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value axv = kw_take(vm, kwargs, "axis");
    kw_done(vm, "concatenate", kwargs);
    arg_between(vm, "concatenate", argc, 1, 2);
    if (argc == 2) axv = argv[1];
    List *l = arrays_of(vm, argv[0], "concatenate");
    vm_push_root(vm, OBJ_VAL(l));
    NDArray *r;
    if (!IS_EMPTY(axv) && IS_NONE(axv)) {
        for (int64_t i = 0; i < l->len; i++) {
            NDArray *a = ND_AS(l->items[i]);
            NDArray *c = a->flags & ND_C_CONTIGUOUS ? a : nd_copy(vm, a);
            l->items[i] = OBJ_VAL(nd_view(vm, c, c->data, 1, &c->size, NULL));
        }
        r = concat(vm, l, 0);
    } else {
        r = concat(vm, l, IS_EMPTY(axv) ? 0 : vm_to_index(vm, axv));
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

static Value f_stack(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value axv = kw_take(vm, kwargs, "axis");
    kw_done(vm, "stack", kwargs);
    arg_between(vm, "stack", argc, 1, 2);
    if (argc == 2) axv = argv[1];
    List *l = arrays_of(vm, argv[0], "stack");
    vm_push_root(vm, OBJ_VAL(l));
    NDArray *a0 = ND_AS(l->items[0]);
    int axis = norm_axis(vm, IS_EMPTY(axv) ? 0 : vm_to_index(vm, axv), a0->ndim + 1);
    for (int64_t i = 0; i < l->len; i++) {
        NDArray *a = ND_AS(l->items[i]);
        bool same = a->ndim == a0->ndim;
        for (int d = 0; same && d < a->ndim; d++) same = a->shape[d] == a0->shape[d];
        if (!same) vm_raise_kind(vm, ValueError, "all input arrays must have the same shape");
        int64_t sh[ND_MAXDIM], stv[ND_MAXDIM];
        for (int d = 0, k = 0; d <= a->ndim; d++) {
            if (d == axis) { sh[d] = 1; stv[d] = 0; }
            else { sh[d] = a->shape[k]; stv[d] = a->strides[k]; k++; }
        }
        l->items[i] = OBJ_VAL(nd_view(vm, a, a->data, a->ndim + 1, sh, stv));
    }
    NDArray *r = concat(vm, l, axis);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

/* vstack/hstack/column_stack/expand_dims: reshape the inputs, then concatenate. */
static NDArray *atleast(VM *vm, NDArray *a, int nd, bool col) {
    if (a->ndim >= nd) return a;
    int64_t sh[3] = {1, 1, 1};
    if (a->ndim == 1) {
        if (col) { sh[0] = a->shape[0]; sh[1] = 1; }
        else sh[1] = a->shape[0];
    }
    int64_t st[3] = {0, 0, 0};
    if (a->ndim == 1) st[col ? 0 : 1] = a->strides[0];
    return nd_view(vm, a, a->data, nd, sh, st);
}
static Value stack_like(VM *vm, int argc, Value *argv, Dict *kw, const char *name, int kind) {
    kw_done(vm, name, kw);
    arg_between(vm, name, argc, 1, 1);
    List *l = arrays_of(vm, argv[0], name);
    vm_push_root(vm, OBJ_VAL(l));
    int64_t axis = 0;
    bool all1 = true;
    for (int64_t i = 0; i < l->len; i++) all1 = all1 && ND_AS(l->items[i])->ndim <= 1;
    for (int64_t i = 0; i < l->len; i++) {
        NDArray *a = ND_AS(l->items[i]);
        if (kind == 0) l->items[i] = OBJ_VAL(atleast(vm, a, 2, false));
        else if (kind == 1) l->items[i] = OBJ_VAL(atleast(vm, a, 1, false));
        else l->items[i] = OBJ_VAL(atleast(vm, a, 2, true));
    }
    if (kind == 1) axis = all1 ? 0 : 1;
    if (kind == 2) axis = 1;
    NDArray *r = concat(vm, l, axis);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}
static Value f_vstack(VM *vm, int argc, Value *argv, Dict *kw) { return stack_like(vm, argc, argv, kw, "vstack", 0); }
static Value f_hstack(VM *vm, int argc, Value *argv, Dict *kw) { return stack_like(vm, argc, argv, kw, "hstack", 1); }
static Value f_column_stack(VM *vm, int argc, Value *argv, Dict *kw) { return stack_like(vm, argc, argv, kw, "column_stack", 2); }

static Value f_expand_dims(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axv = kw_take(vm, kw, "axis");
    kw_done(vm, "expand_dims", kw);
    arg_between(vm, "expand_dims", argc, 1, 2);
    if (argc == 2) axv = argv[1];
    NDArray *a = nd_from_value(vm, argv[0], -1);
    if (a->ndim >= ND_MAXDIM) vm_raise_kind(vm, ValueError, "too many dimensions");
    int ax = norm_axis(vm, IS_EMPTY(axv) ? 0 : vm_to_index(vm, axv), a->ndim + 1);
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    for (int d = 0, k = 0; d <= a->ndim; d++) {
        if (d == ax) { sh[d] = 1; st[d] = 0; }
        else { sh[d] = a->shape[k]; st[d] = a->strides[k]; k++; }
    }
    return OBJ_VAL(nd_view(vm, a, a->data, a->ndim + 1, sh, st));
}
static Value f_squeeze(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axisv = kw_take(vm, kw, "axis");
    kw_done(vm, "squeeze", kw);
    arg_between(vm, "squeeze", argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    NDArray *a = nd_from_value(vm, argv[0], -1);
    vm_push_root(vm, OBJ_VAL(a));
    Value r = nd_squeeze(vm, a, axisv);
    vm_pop_roots(vm, 1);
    return r;
}

static Value f_copy(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_done(vm, "copy", kwargs);
    arg_between(vm, "copy", argc, 1, 1);
    return OBJ_VAL(nd_array_from(vm, argv[0], -1, true));
}

void nd_create_init(VM *vm, Module *m) {
    static const struct { const char *name; NativeFn fn; } fns[] = {
        {"array", f_array}, {"asarray", f_asarray}, {"ascontiguousarray", f_asarray}, {"zeros", f_zeros},
        {"ones", f_ones}, {"empty", f_zeros}, {"full", f_full}, {"zeros_like", f_zeros_like},
        {"ones_like", f_ones_like}, {"empty_like", f_empty_like}, {"full_like", f_full_like},
        {"arange", f_arange}, {"linspace", f_linspace}, {"eye", f_eye}, {"identity", f_identity},
        {"concatenate", f_concatenate}, {"stack", f_stack}, {"copy", f_copy}, {"vstack", f_vstack},
        {"hstack", f_hstack}, {"column_stack", f_column_stack}, {"expand_dims", f_expand_dims},
        {"squeeze", f_squeeze},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
}

/* np.tile(a, reps): the array repeated reps times along each axis. */
static Value f_tile(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "tile", kw);
    arg_between(vm, "tile", argc, 2, 2);
    NDArray *a = nd_array_from(vm, argv[0], -1, false);
    vm_push_root(vm, OBJ_VAL(a));
    int64_t reps[ND_MAXDIM];
    int nr = nd_parse_shape(vm, argv[1], reps);
    int nd = a->ndim > nr ? a->ndim : nr;
    int64_t ash[ND_MAXDIM], ast[ND_MAXDIM], rp[ND_MAXDIM], shape[ND_MAXDIM];
    for (int d = 0; d < nd; d++) {
        int da = d - (nd - a->ndim), dr = d - (nd - nr);
        ash[d] = da >= 0 ? a->shape[da] : 1;
        ast[d] = da >= 0 ? a->strides[da] : 0;
        rp[d] = dr >= 0 ? reps[dr] : 1;
        if (rp[d] < 0) vm_raise_kind(vm, ValueError, "negative dimensions are not allowed");
        shape[d] = nd_size_mul(vm, ash[d], rp[d]);
    }
    NDArray *r = nd_new(vm, a->dtype, nd, shape);
    size_t is = nd_itemsize(a->dtype);
    int64_t idx[ND_MAXDIM] = {0};
    for (int64_t k = 0; k < r->size; k++) {
        char *p = a->data;
        for (int d = 0; d < nd; d++) p += (idx[d] % ash[d]) * ast[d];
        memcpy(r->data + (size_t)k * is, p, is);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

/* np.repeat(a, n, axis=None): each element (or slice along axis) n times. */
static Value f_repeat(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axv = kw_take(vm, kw, "axis");
    kw_done(vm, "repeat", kw);
    arg_between(vm, "repeat", argc, 2, 3);
    if (argc == 3) axv = argv[2];
    int64_t n = vm_to_index(vm, argv[1]); /* negative: nd_new's "negative dimensions", as numpy */
    NDArray *a = nd_array_from(vm, argv[0], -1, false);
    vm_push_root(vm, OBJ_VAL(a));
    if (IS_EMPTY(axv) || IS_NONE(axv)) {
        a = nd_copy(vm, a);
        a = nd_wrap(vm, a->dtype, a->data, 1, &a->size, NULL, OBJ_VAL(a));
        axv = INT_VAL(0);
    }
    vm_push_root(vm, OBJ_VAL(a));
    int ax = norm_axis(vm, vm_to_index(vm, axv), a->ndim);
    int64_t shape[ND_MAXDIM];
    memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    shape[ax] = nd_size_mul(vm, shape[ax], n);
    NDArray *r = nd_new(vm, a->dtype, a->ndim, shape);
    vm_push_root(vm, OBJ_VAL(r));
    if (r->size == 0) { /* nothing to copy, however long the repeated axis */
        vm_pop_roots(vm, 3);
        return OBJ_VAL(r);
    }
    int64_t sub[ND_MAXDIM];
    memcpy(sub, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    sub[ax] = 1;
    for (int64_t i = 0; i < a->shape[ax]; i++)
        for (int64_t j = 0; j < n; j++) {
            NDArray *src = nd_view(vm, a, a->data + i * a->strides[ax], a->ndim, sub, a->strides);
            vm_push_root(vm, OBJ_VAL(src));
            NDArray *dst = nd_view(vm, r, r->data + (i * n + j) * r->strides[ax], r->ndim, sub, r->strides);
            vm_push_root(vm, OBJ_VAL(dst));
            nd_assign(vm, dst, src);
            vm_pop_roots(vm, 2);
        }
    vm_pop_roots(vm, 3);
    return OBJ_VAL(r);
}

void nd_create_more_init(VM *vm, Module *m) {
    module_add_function(vm, m, "tile", f_tile);
    module_add_function(vm, m, "repeat", f_repeat);
}
