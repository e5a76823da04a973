/*
** nd_sort.c — sorting: np.sort / a.sort() (in place) along the last axis,
** argsort (stable merge sort, so ties keep their order) and np.unique.
** NaNs sort last, like numpy.
*/
#include "nd_priv.h"

/* Sort keys: doubles for floats, int64 for signed/bool, uint64 for unsigned. */
typedef enum KeyKind { K_F, K_I, K_U } KeyKind;

static bool key_less(KeyKind k, const void *keys, int64_t i, int64_t j) {
    switch (k) {
    case K_F: {
        double a = ((const double *)keys)[i], b = ((const double *)keys)[j];
        if (isnan(b)) return !isnan(a);
        return a < b;
    }
    case K_I: return ((const int64_t *)keys)[i] < ((const int64_t *)keys)[j];
    default: return ((const uint64_t *)keys)[i] < ((const uint64_t *)keys)[j];
    }
}

/* Stable merge sort of idx[0..n) by keys; tmp has n slots. */
static void msort(KeyKind k, const void *keys, int64_t *idx, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            int64_t v = idx[i], j = i;
            while (j > 0 && key_less(k, keys, v, idx[j - 1])) { idx[j] = idx[j - 1]; j--; }
            idx[j] = v;
        }
        return;
    }
    int64_t h = n / 2;
    msort(k, keys, idx, tmp, h);
    msort(k, keys, idx + h, tmp, n - h);
    int64_t i = 0, j = h, w = 0;
    while (i < h && j < n) tmp[w++] = key_less(k, keys, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < h) tmp[w++] = idx[i++];
    while (j < n) tmp[w++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
}

static KeyKind kind_of(NDType t, NDType *kt) {
    if (nd_is_float(t)) { *kt = ND_FLOAT64; return K_F; }
    if (nd_is_unsigned(t)) { *kt = ND_UINT64; return K_U; }
    *kt = ND_INT64;
    return K_I;
}

/* Sorts along the last axis: writes sorted values into dst (same shape as
** a) and/or the permutation into idxout (int64, same shape). */
static void sort_last(VM *vm, NDArray *a, NDArray *dst, NDArray *idxout) {
    if (nd_is_complex(a->dtype)) vm_raise_kind(vm, TypeError, "gpy's numpy cannot sort complex arrays");
    NDType kt;
    KeyKind k = kind_of(a->dtype, &kt);
    NDArray *keys = nd_astype(vm, a, kt); /* C-contiguous rows */
    vm_push_root(vm, OBJ_VAL(keys));
    int64_t n = a->ndim ? a->shape[a->ndim - 1] : 1, rows = n ? a->size / n : 0;
    int64_t cnt = a->size ? nd_size_mul(vm, n, 2) : 1; /* an empty array may have a huge last axis */
    NDArray *work = nd_new(vm, ND_INT64, 1, &cnt);
    vm_push_root(vm, OBJ_VAL(work));
    int64_t *idx = (int64_t *)work->data, *tmp = idx + (a->size ? n : 0);
    NDArray *cd = dst ? nd_copy(vm, a) : NULL; /* source values, C order */
    if (cd) vm_push_root(vm, OBJ_VAL(cd));
    NDArray *out = dst ? nd_new(vm, a->dtype, a->ndim, a->shape) : NULL;
    if (out) vm_push_root(vm, OBJ_VAL(out));
    size_t is = nd_itemsize(a->dtype);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++) idx[i] = i;
        const char *kb = keys->data + (size_t)(r * n) * 8;
        msort(k, kb, idx, tmp, n);
        if (out)
            for (int64_t i = 0; i < n; i++)
                memcpy(out->data + (size_t)(r * n + i) * is, cd->data + (size_t)(r * n + idx[i]) * is, is);
        if (idxout) memcpy(idxout->data + (size_t)(r * n) * 8, idx, (size_t)n * 8);
    }
    if (out) {
        nd_assign(vm, dst, out);
        vm_pop_roots(vm, 2);
    }
    vm_pop_roots(vm, 2);
}

/* Moves axis ax of a to the end (a view). */
static NDArray *axis_last(VM *vm, NDArray *a, int ax) {
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    int k = 0;
    for (int i = 0; i < a->ndim; i++)
        if (i != ax) { sh[k] = a->shape[i]; st[k++] = a->strides[i]; }
    sh[k] = a->shape[ax];
    st[k] = a->strides[ax];
    return nd_view(vm, a, a->data, a->ndim, sh, st);
}

static int sort_axis(VM *vm, Value axisv, int ndim) {
    int64_t ax = IS_EMPTY(axisv) ? -1 : vm_to_index(vm, axisv);
    if (ax < -ndim || ax >= ndim)
        vm_raise_kind(vm, ValueError, "axis %lld is out of bounds for array of dimension %d", (long long)ax, ndim);
    return (int)(ax < 0 ? ax + ndim : ax);
}

static Value m_sort(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axisv = kw_take(vm, kw, "axis");
    kw_take(vm, kw, "kind");
    kw_done(vm, "sort", kw);
    arg_between(vm, "sort", argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    NDArray *a = ND_AS(argv[0]);
    NDArray *v = axis_last(vm, a, sort_axis(vm, axisv, a->ndim));
    vm_push_root(vm, OBJ_VAL(v));
    sort_last(vm, v, v, NULL);
    vm_pop_roots(vm, 1);
    return NONE_VAL;
}

static Value f_sort(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axisv = kw_take(vm, kw, "axis");
    kw_take(vm, kw, "kind");
    kw_done(vm, "sort", kw);
    arg_between(vm, "sort", argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    NDArray *a = nd_array_from(vm, argv[0], -1, true);
    vm_push_root(vm, OBJ_VAL(a));
    if (!IS_EMPTY(axisv) && IS_NONE(axisv)) {
        a = nd_wrap(vm, a->dtype, a->data, 1, &a->size, NULL, OBJ_VAL(a));
        axisv = INT_VAL(0);
        vm_push_root(vm, OBJ_VAL(a));
    } else vm_push_root(vm, OBJ_VAL(a));
    Value args[2] = {OBJ_VAL(a), IS_EMPTY(axisv) ? INT_VAL(-1) : axisv};
    m_sort(vm, 2, args, NULL);
    vm_pop_roots(vm, 2);
    return OBJ_VAL(a);
}

static Value argsort_impl(VM *vm, Value av, Value axisv) {
    NDArray *a = nd_from_value(vm, av, -1);
    vm_push_root(vm, OBJ_VAL(a));
    if (!IS_EMPTY(axisv) && IS_NONE(axisv)) {
        a = nd_copy(vm, a);
        a = nd_wrap(vm, a->dtype, a->data, 1, &a->size, NULL, OBJ_VAL(a));
        axisv = INT_VAL(0);
    }
    vm_push_root(vm, OBJ_VAL(a));
    if (a->ndim == 0) {
        int64_t z = 0;
        vm_pop_roots(vm, 2);
        NDArray *r = nd_new(vm, ND_INT64, 1, &z);
        r->shape[0] = 1;
        r->size = 1;
        return OBJ_VAL(nd_new(vm, ND_INT64, 0, NULL));
    }
    int ax = sort_axis(vm, axisv, a->ndim);
    NDArray *v = axis_last(vm, a, ax);
    vm_push_root(vm, OBJ_VAL(v));
    NDArray *tmp = nd_new(vm, ND_INT64, v->ndim, v->shape);
    vm_push_root(vm, OBJ_VAL(tmp));
    sort_last(vm, v, NULL, tmp);
    NDArray *R = nd_new(vm, ND_INT64, a->ndim, a->shape);
    vm_push_root(vm, OBJ_VAL(R));
    NDArray *rv = axis_last(vm, R, ax);
    vm_push_root(vm, OBJ_VAL(rv));
    nd_assign(vm, rv, tmp);
    vm_pop_roots(vm, 6);
    return OBJ_VAL(R);
}
static Value f_argsort(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axisv = kw_take(vm, kw, "axis");
    kw_take(vm, kw, "kind");
    kw_done(vm, "argsort", kw);
    arg_between(vm, "argsort", argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    return argsort_impl(vm, argv[0], axisv);
}

static Value f_unique(VM *vm, int argc, Value *argv, Dict *kw) {
    Value rc = kw_take(vm, kw, "return_counts");
    kw_done(vm, "unique", kw);
    bool counts = !IS_EMPTY(rc) && vm_truthy(vm, rc);
    arg_between(vm, "unique", argc, 1, 1);
    NDArray *a = nd_array_from(vm, argv[0], -1, true);
    vm_push_root(vm, OBJ_VAL(a));
    NDArray *flat = nd_wrap(vm, a->dtype, a->data, 1, &a->size, NULL, OBJ_VAL(a));
    vm_push_root(vm, OBJ_VAL(flat));
    sort_last(vm, flat, flat, NULL);
    size_t is = nd_itemsize(a->dtype);
    int64_t w = 0;
    int64_t one = flat->size ? flat->size : 1;
    NDArray *cnt = nd_new(vm, ND_INT64, 1, &one);
    vm_push_root(vm, OBJ_VAL(cnt));
    int64_t *cn = (int64_t *)cnt->data;
    for (int64_t i = 0; i < flat->size; i++) {
        const char *p = flat->data + (size_t)i * is;
        if (w > 0) {
            const char *q = flat->data + (size_t)(w - 1) * is;
            bool same = nd_is_float(a->dtype) ? (nd_load_f(a->dtype, p) == nd_load_f(a->dtype, q) ||
                                                 (isnan(nd_load_f(a->dtype, p)) && isnan(nd_load_f(a->dtype, q))))
                                              : memcmp(p, q, is) == 0;
            if (same) { cn[w - 1]++; continue; }
        }
        memmove(flat->data + (size_t)w * is, p, is);
        cn[w] = 1;
        w++;
    }
    NDArray *r = nd_new(vm, a->dtype, 1, &w);
    memcpy(r->data, flat->data, (size_t)w * is);
    if (counts) {
        vm_push_root(vm, OBJ_VAL(r));
        NDArray *c = nd_new(vm, ND_INT64, 1, &w);
        memcpy(c->data, cn, (size_t)w * 8);
        vm_push_root(vm, OBJ_VAL(c));
        Tuple *t = tuple_new(vm, 2);
        t->items[0] = OBJ_VAL(r);
        t->items[1] = OBJ_VAL(c);
        vm_pop_roots(vm, 5);
        return OBJ_VAL(t);
    }
    vm_pop_roots(vm, 3);
    return OBJ_VAL(r);
}

void nd_sort_init(VM *vm, NDState *st, Module *m) {
    module_add_function(vm, m, "sort", f_sort);
    module_add_function(vm, m, "argsort", f_argsort);
    module_add_function(vm, m, "unique", f_unique);
    nd_sort_more_init(vm, m);
    type_add_method(vm, st->t_array, "sort", m_sort);
    type_add_method(vm, st->t_array, "argsort", f_argsort);
}

/* np.median(a, axis=None): the middle of the sorted values (the mean of
** the two middle ones for even counts); NaN when any value is NaN. */
static Value f_median(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axisv = kw_take(vm, kw, "axis");
    kw_done(vm, "median", kw);
    arg_between(vm, "median", argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    NDArray *a = nd_array_from(vm, argv[0], -1, true);
    vm_push_root(vm, OBJ_VAL(a));
    if (IS_EMPTY(axisv) || IS_NONE(axisv)) {
        a = nd_wrap(vm, a->dtype, a->data, 1, &a->size, NULL, OBJ_VAL(a));
        axisv = INT_VAL(0);
    }
    vm_push_root(vm, OBJ_VAL(a));
    if (a->ndim == 0) vm_raise_kind(vm, ValueError, "axis 0 is out of bounds for array of dimension 0");
    int ax = sort_axis(vm, axisv, a->ndim);
    NDArray *v = axis_last(vm, a, ax);
    vm_push_root(vm, OBJ_VAL(v));
    sort_last(vm, v, v, NULL); /* a is our own copy */
    int64_t n = v->shape[v->ndim - 1], rows = n ? v->size / n : 0;
    NDType ot = nd_is_float(a->dtype) ? a->dtype : ND_FLOAT64;
    NDArray *R = nd_new(vm, ot, v->ndim - 1, v->shape);
    vm_push_root(vm, OBJ_VAL(R));
    int64_t idx[ND_MAXDIM] = {0};
    char *p = v->data, *dummy = R->data;
    for (int64_t r = 0; r < rows; r++) {
        double m;
        if (n == 0) m = NAN;
        else {
            double lo = nd_load_f(v->dtype, p + (n - 1) / 2 * v->strides[v->ndim - 1]);
            double hi = nd_load_f(v->dtype, p + n / 2 * v->strides[v->ndim - 1]);
            double last = nd_load_f(v->dtype, p + (n - 1) * v->strides[v->ndim - 1]);
            m = isnan(last) ? NAN : lo + (hi - lo) / 2; /* NaNs sort last */
            if (lo == hi && !isnan(last)) m = lo;
        }
        nd_store_f(ot, R->data + (size_t)r * nd_itemsize(ot), m);
        if (v->ndim > 1) nd_advance(v->ndim - 1, v->shape, idx, &p, v->strides, &dummy, R->strides);
    }
    vm_pop_roots(vm, 4);
    return nd_result(vm, R);
}

void nd_sort_more_init(VM *vm, Module *m) { module_add_function(vm, m, "median", f_median); }
