/*
** infer_slice.c — basic slicing of arrays in kernels: a[1:5], a[::2],
** a[i, :], a[:, j], a[::-1, 1:3] ... give views (no copy), as in Numba.
** Integer indices drop their dimension, slices keep it; dimensions left
** out are taken whole. The view's layout follows Numba's rule, so types
** print as Numba prints them: a C array stays C when every index but the
** last given is an integer and the last is an integer or a slice without
** a step; anything else is 'A' (any strides). lower_slice.c builds the view.
*/
#include "infer_priv.h"

bool inf_has_slice(const AstNode *idx) {
    if (idx->kind == AST_SLICE) return true;
    if (idx->kind != AST_TUPLE) return false;
    for (int k = 0; k < idx->u.seq.elts.len; k++)
        if (idx->u.seq.elts.items[k]->kind == AST_SLICE) return true;
    return false;
}

/* One bound or step of a slice: absent, None, or an integer. */
static bool slice_part(Pass *p, AstNode *x) {
    if (!x) return true;
    if (x->kind == AST_NONE) {
        inf_set_type(p, x, S(p, JK_NONE));
        return true;
    }
    const JType *t = inf_value(p, x);
    if (!t) return false;
    if (!is_intlike(t)) inf_fail(p, x, "slice indices must be integers or None, not %s", tname(t));
    return true;
}

static bool has_step(const AstNode *s) { return s->u.slice.step && s->u.slice.step->kind != AST_NONE; }

const JType *inf_slice_expr(Pass *p, AstNode *n, const JType *base) {
    AstNode *idx = n->u.subscript.index;
    AstNode *one[1] = {idx};
    AstNode **items = idx->kind == AST_TUPLE ? idx->u.seq.elts.items : one;
    int count = idx->kind == AST_TUPLE ? idx->u.seq.elts.len : 1;
    if (count > base->ndim) inf_fail(p, n, "too many indices for %s: got %d", tname(base), count);
    bool known = true;
    int ndim = base->ndim;
    for (int k = 0; k < count; k++) {
        AstNode *x = items[k];
        if (x->kind == AST_SLICE) {
            known &= slice_part(p, x->u.slice.lower);
            known &= slice_part(p, x->u.slice.upper);
            known &= slice_part(p, x->u.slice.step);
            int64_t st;
            if (has_step(x) && inf_const_int(p, x->u.slice.step, &st) && st == 0)
                inf_fail(p, x, "slice step cannot be zero");
            inf_set_type(p, x, S(p, JK_NONE)); /* no value of its own */
            continue;
        }
        const JType *t = inf_value(p, x);
        if (!t) {
            known = false;
            continue;
        }
        if (!jt_is_int(t)) inf_fail(p, x, "cannot index %s with %s", tname(base), tname(t));
        ndim--;
    }
    if (!known) return inf_unknown(p, n, "unknown index");
    char layout = 'A';
    if (base->layout == 'C') {
        layout = 'C';
        for (int k = 0; k < count; k++) {
            bool last = k == count - 1;
            if (items[k]->kind == AST_SLICE && (!last || has_step(items[k]))) layout = 'A';
        }
    }
    JInfo *i = inf_info(p, n);
    i->builtin = JB_ARRAY_SLICE;
    i->op_type = NULL;
    return inf_set_type(p, n, jt_array(VMOF(p), base->dtype, ndim, layout));
}

/* a[1:5] = x / a[i, :] = b: x a number (every item of the view gets it) or
** an array of the view's dimensions (copied item by item; lower_slice.c
** checks the extents at run time). */
void inf_slice_store(Pass *p, AstNode *tg, const JType *base, const JType *t) {
    const JType *view = inf_slice_expr(p, tg, base);
    if (!view || !t) {
        inf_unknown(p, tg, "unknown slice assignment");
        return;
    }
    bool ok = jt_is_scalar(t) || (jt_is_complex(t) && nd_is_complex_dtype(base->dtype)) ||
              (t->kind == JK_ARRAY && t->ndim == view->ndim &&
               (nd_is_complex_dtype(t->dtype) ? nd_is_complex_dtype(base->dtype) : true));
    if (!ok) inf_fail(p, tg, "cannot assign %s to a slice of %s", tname(t), tname(base));
}

/* One bound or the step of a tuple slice: a compile-time integer, or absent. */
static bool const_part(Pass *p, AstNode *x, int64_t *v) {
    if (!x || x->kind == AST_NONE) return false;
    if (!inf_const_int(p, x, v)) inf_fail(p, x, "tuples in kernels are sliced with constant bounds only");
    inf_set_type(p, x, S(p, JK_INT64));
    return true;
}

/* t[1:], t[::-1], t[a:b:c] with constants: a tuple of the items selected,
** as Python selects them. JInfo.shape holds start, step and count. */
const JType *inf_tuple_slice(Pass *p, AstNode *n, const JType *base) {
    AstNode *x = n->u.subscript.index;
    int64_t len = base->n, lo, hi, st = 1;
    bool has_lo, has_hi;
    if (const_part(p, x->u.slice.step, &st) && st == 0) inf_fail(p, x, "slice step cannot be zero");
    has_lo = const_part(p, x->u.slice.lower, &lo);
    has_hi = const_part(p, x->u.slice.upper, &hi);
    /* Python's clamping (as lower_slice.c does at run time for arrays) */
    int64_t lob = st > 0 ? 0 : -1, hib = st > 0 ? len : len - 1;
    if (!has_lo) lo = st > 0 ? 0 : len - 1;
    else {
        if (lo < 0) lo += len;
        lo = lo < lob ? lob : lo > hib ? hib : lo;
    }
    if (!has_hi) hi = st > 0 ? len : -1;
    else {
        if (hi < 0) hi += len;
        hi = hi < lob ? lob : hi > hib ? hib : hi;
    }
    /* (span - 1) / |step| + 1: no overflow for any step */
    uint64_t mag = st > 0 ? (uint64_t)st : 0 - (uint64_t)st;
    int64_t count = st > 0 ? (hi > lo ? (int64_t)((uint64_t)(hi - lo - 1) / mag) + 1 : 0)
                           : (lo > hi ? (int64_t)((uint64_t)(lo - hi - 1) / mag) + 1 : 0);
    const JType **e = inf_alloc(p, (size_t)(count ? count : 1) * sizeof *e);
    for (int64_t k = 0; k < count; k++) e[k] = base->elems[lo + k * st];
    inf_set_type(p, x, S(p, JK_NONE));
    JInfo *i = inf_info(p, n);
    i->builtin = JB_ARRAY_SLICE;
    i->shape[0] = lo;
    i->shape[1] = st;
    i->shape[2] = count;
    return inf_set_type(p, n, jt_tuple(VMOF(p), (int)count, e));
}
