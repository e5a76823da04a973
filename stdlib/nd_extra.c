/*
** nd_extra.c — smaller numpy functions: diagonal and trace (functions and
** methods), argwhere, nan_to_num, meshgrid, and np.seterr / np.geterr /
** np.errstate (remembered only: gpy never warns about float errors).
*/
#include <float.h>

#include "nd_priv.h"

/* The offset-th diagonal of a 2-D array: a read-only view, like numpy. */
static NDArray *diagonal(VM *vm, NDArray *a, int64_t off) {
    if (a->ndim < 2) vm_raise_kind(vm, ValueError, "diag requires an array of at least two dimensions");
    if (a->ndim != 2) vm_raise_kind(vm, ValueError, "gpy's numpy: diagonal/trace need a 2-D array (got %d-D)", a->ndim);
    int64_t r = a->shape[0], c = a->shape[1], n;
    char *p = a->data;
    if (off >= 0) {
        n = c - off < r ? c - off : r;
        if (n > 0) p += off * a->strides[1];
    } else {
        n = r + off < c ? r + off : c;
        if (n > 0) p += -off * a->strides[0];
    }
    if (n < 0) n = 0;
    int64_t st = a->strides[0] + a->strides[1];
    NDArray *v = nd_view(vm, a, n > 0 ? p : a->data, 1, &n, &st);
    v->flags &= ~ND_WRITEABLE;
    return v;
}

/* (a, offset=0) from a function or method call. */
static int64_t offset_arg(VM *vm, const char *name, int argc, Value *argv, Dict *kw) {
    Value ov = kw_take(vm, kw, "offset");
    kw_done(vm, name, kw);
    arg_between(vm, name, argc, 1, 2);
    if (argc == 2) ov = argv[1];
    return IS_EMPTY(ov) ? 0 : vm_to_index(vm, ov);
}

static Value f_diagonal(VM *vm, int argc, Value *argv, Dict *kw) {
    int64_t off = offset_arg(vm, "diagonal", argc, argv, kw);
    return OBJ_VAL(diagonal(vm, nd_from_value(vm, argv[0], -1), off));
}

static Value f_trace(VM *vm, int argc, Value *argv, Dict *kw) {
    int64_t off = offset_arg(vm, "trace", argc, argv, kw);
    NDArray *d = diagonal(vm, nd_from_value(vm, argv[0], -1), off);
    vm_push_root(vm, OBJ_VAL(d));
    Value r = nd_sum_all(vm, d);
    vm_pop_roots(vm, 1);
    return r;
}

/* argwhere(a): the (N, ndim) int64 indices of the nonzero elements. */
static Value f_argwhere(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "argwhere", kw);
    arg_between(vm, "argwhere", argc, 1, 1);
    NDArray *a = nd_from_value(vm, argv[0], -1);
    vm_push_root(vm, OBJ_VAL(a));
    int64_t cnt = 0;
    for (int64_t i = 0; i < a->size; i++) cnt += nd_get_double(a, i) != 0;
    int nd = a->ndim;
    int64_t shape[2] = {cnt, nd};
    NDArray *r = nd_empty(vm, ND_INT64, 2, shape);
    int64_t *o = (int64_t *)r->data, idx[ND_MAXDIM] = {0};
    for (int64_t i = 0, w = 0; i < a->size; i++) {
        if (nd_get_double(a, i) != 0) {
            memcpy(o + w * nd, idx, sizeof(int64_t) * (size_t)nd);
            w++;
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < a->shape[d]) break;
            idx[d] = 0;
        }
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

/* nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) */
static Value f_nan_to_num(VM *vm, int argc, Value *argv, Dict *kw) {
    Value cv = kw_take(vm, kw, "copy"), nv = kw_take(vm, kw, "nan");
    Value pv = kw_take(vm, kw, "posinf"), mv = kw_take(vm, kw, "neginf");
    kw_done(vm, "nan_to_num", kw);
    arg_between(vm, "nan_to_num", argc, 1, 2);
    if (argc == 2) cv = argv[1];
    bool copy = IS_EMPTY(cv) || vm_truthy(vm, cv);
    NDArray *a = nd_from_value(vm, argv[0], -1);
    bool arr = nd_check(vm, argv[0]) || IS_LIST(vm, argv[0]) || IS_TUPLE(vm, argv[0]);
    if (!copy && !nd_check(vm, argv[0])) copy = true;
    NDArray *r = copy ? nd_copy(vm, a) : a;
    vm_push_root(vm, OBJ_VAL(r));
    if (nd_is_float(r->dtype)) {
        double big = r->dtype == ND_FLOAT64 ? DBL_MAX : r->dtype == ND_FLOAT32 ? (double)FLT_MAX : 65504.0;
        double nan_v = IS_EMPTY(nv) || IS_NONE(nv) ? 0.0 : num_arg(vm, nv);
        double pos_v = IS_EMPTY(pv) || IS_NONE(pv) ? big : num_arg(vm, pv);
        double neg_v = IS_EMPTY(mv) || IS_NONE(mv) ? -big : num_arg(vm, mv);
        if (!(r->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "assignment destination is read-only");
        int64_t idx[ND_MAXDIM] = {0};
        char *p = r->data;
        for (int64_t i = 0; i < r->size; i++) {
            double d = nd_load_f(r->dtype, p);
            if (isnan(d)) nd_store_f(r->dtype, p, nan_v);
            else if (isinf(d)) nd_store_f(r->dtype, p, d > 0 ? pos_v : neg_v);
            nd_advance(r->ndim, r->shape, idx, &p, r->strides, NULL, NULL);
        }
    }
    vm_pop_roots(vm, 1);
    return arr ? OBJ_VAL(r) : nd_result(vm, r);
}

/* meshgrid(*xi, indexing='xy'): a tuple of N-d copies. */
static Value f_meshgrid(VM *vm, int argc, Value *argv, Dict *kw) {
    Value iv = kw_take(vm, kw, "indexing");
    kw_done(vm, "meshgrid", kw);
    bool xy = true;
    if (!IS_EMPTY(iv)) {
        if (!IS_STR(vm, iv) || (strcmp(AS_STR(iv)->chars, "xy") && strcmp(AS_STR(iv)->chars, "ij")))
            vm_raise_kind(vm, ValueError, "Valid values for `indexing` are 'xy' and 'ij'.");
        xy = !strcmp(AS_STR(iv)->chars, "xy");
    }
    if (argc > ND_MAXDIM) vm_raise_kind(vm, ValueError, "too many arrays for meshgrid");
    Tuple *t = tuple_new(vm, argc);
    vm_push_root(vm, OBJ_VAL(t));
    for (int i = 0; i < argc; i++) t->items[i] = OBJ_VAL(nd_from_value(vm, argv[i], -1));
    int64_t shape[ND_MAXDIM];
    for (int i = 0; i < argc; i++) shape[i] = ND_AS(t->items[i])->size;
    if (xy && argc >= 2) {
        int64_t s = shape[0];
        shape[0] = shape[1];
        shape[1] = s;
    }
    for (int i = 0; i < argc; i++) {
        NDArray *x = ND_AS(t->items[i]);
        NDArray *flat = nd_copy(vm, x); /* C order, 1-D data */
        vm_push_root(vm, OBJ_VAL(flat));
        int ax = xy && argc >= 2 && i < 2 ? 1 - i : i;
        int64_t st[ND_MAXDIM] = {0};
        st[ax] = (int64_t)nd_itemsize(flat->dtype);
        NDArray *v = nd_view(vm, flat, flat->data, argc, shape, st);
        vm_push_root(vm, OBJ_VAL(v));
        t->items[i] = OBJ_VAL(nd_copy(vm, v));
        vm_pop_roots(vm, 2);
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(t);
}

/* ---- np.seterr / np.geterr / np.errstate: accepted and remembered; gpy
** never warns or raises for floating-point errors (results are inf/nan) */

static const char *const err_kinds[4] = {"divide", "over", "under", "invalid"};
static const char *const err_modes[6] = {"ignore", "warn", "raise", "call", "print", "log"};
static const uint8_t err_default[4] = {1, 1, 0, 1}; /* warn warn ignore warn */

static int err_get(NDState *st, int i) { return st->err[i] ? st->err[i] - 1 : err_default[i]; }

static Value err_dict(VM *vm, NDState *st) {
    Dict *d = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(d));
    for (int i = 0; i < 4; i++) dict_set_cstr(vm, d, err_kinds[i], STR_VAL(str_cstr(vm, err_modes[err_get(st, i)])));
    vm_pop_roots(vm, 1);
    return OBJ_VAL(d);
}

/* Parses all=/divide=/over=/under=/invalid= into want[4] (-1: unchanged). */
static void err_args(VM *vm, const char *fname, Dict *kw, int8_t want[4]) {
    Value all = kw_take(vm, kw, "all"), v[4];
    for (int i = 0; i < 4; i++) v[i] = kw_take(vm, kw, err_kinds[i]);
    kw_done(vm, fname, kw);
    for (int i = 0; i < 4; i++) {
        Value x = !IS_EMPTY(v[i]) && !IS_NONE(v[i]) ? v[i] : all;
        want[i] = -1;
        if (IS_EMPTY(x) || IS_NONE(x)) continue;
        if (!IS_STR(vm, x)) vm_raise_kind(vm, ValueError, "invalid error mode");
        for (int k = 0; k < 6; k++)
            if (!strcmp(AS_STR(x)->chars, err_modes[k])) want[i] = (int8_t)k;
        if (want[i] < 0) vm_raise_kind(vm, ValueError, "invalid error mode '%s'", AS_STR(x)->chars);
    }
}

static Value f_geterr(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)argv;
    kw_done(vm, "geterr", kw);
    arg_between(vm, "geterr", argc, 0, 0);
    return err_dict(vm, nd_state(vm));
}

static Value f_seterr(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)argv;
    int8_t want[4];
    err_args(vm, "seterr", kw, want);
    arg_between(vm, "seterr", argc, 0, 0);
    NDState *st = nd_state(vm);
    Value old = err_dict(vm, st);
    for (int i = 0; i < 4; i++)
        if (want[i] >= 0) st->err[i] = (uint8_t)(want[i] + 1);
    return old;
}

typedef struct ErrState {
    Obj obj;
    int8_t want[4];
    uint8_t saved[4];
} ErrState;

static Value es_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kw) {
    (void)argv;
    arg_between(vm, "errstate", argc, 0, 0);
    int8_t want[4];
    err_args(vm, "errstate", kw, want);
    ErrState *e = gc_alloc_obj(vm, cls, sizeof(ErrState));
    memcpy(e->want, want, sizeof want);
    return OBJ_VAL(e);
}
static Value es_enter(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)argc; (void)kw;
    ErrState *e = (ErrState *)AS_OBJ(argv[0]);
    NDState *st = nd_state(vm);
    memcpy(e->saved, st->err, sizeof e->saved);
    for (int i = 0; i < 4; i++)
        if (e->want[i] >= 0) st->err[i] = (uint8_t)(e->want[i] + 1);
    return NONE_VAL; /* numpy's errstate.__enter__ returns None */
}
static Value es_exit(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)argc; (void)kw;
    ErrState *e = (ErrState *)AS_OBJ(argv[0]);
    memcpy(nd_state(vm)->err, e->saved, sizeof e->saved);
    return BOOL_VAL(false);
}

void nd_extra_init(VM *vm, NDState *st, Module *m) {
    if (!st->t_errstate) {
        Type *t = type_new_builtin(vm, "errstate", vm->t_object, 0);
        t->new_ = es_new;
        type_add_method(vm, t, "__enter__", es_enter);
        type_add_method(vm, t, "__exit__", es_exit);
        st->t_errstate = t;
    }
    dict_set_cstr(vm, m->dict, "errstate", OBJ_VAL(st->t_errstate));
    module_add_function(vm, m, "seterr", f_seterr);
    module_add_function(vm, m, "geterr", f_geterr);
    module_add_function(vm, m, "diagonal", f_diagonal);
    module_add_function(vm, m, "trace", f_trace);
    module_add_function(vm, m, "argwhere", f_argwhere);
    module_add_function(vm, m, "nan_to_num", f_nan_to_num);
    module_add_function(vm, m, "meshgrid", f_meshgrid);
    type_add_method(vm, st->t_array, "diagonal", f_diagonal);
    type_add_method(vm, st->t_array, "trace", f_trace);
}
