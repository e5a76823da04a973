/*
** infer_array_methods.c — array methods in kernels, where Numba's CUDA
** target allows them: a.reshape(shape) on a C-contiguous array is a view
** (no memory is allocated: lower_reshape.c); a.copy() allocates, which
** CUDA kernels cannot do, so it is a typing error naming the alternative,
** as Numba refuses it.
*/
#include <string.h>

#include "infer_priv.h"

/* a.reshape(t) / a.reshape(n0, n1, ...): the new extents (integers, at most one -1). */
static const JType *reshape(Pass *p, AstNode *n, const JType *base) {
    AstList *args = &n->u.call.args;
    if (n->u.call.keywords.len) inf_fail(p, n, "reshape() takes no keyword arguments in kernels");
    if (base->layout != 'C') inf_fail(p, n, "reshape() supports contiguous array only");
    int ndim;
    if (args->len == 1) {
        const JType *t = inf_value(p, args->items[0]);
        if (!t) return inf_unknown(p, n, "unknown shape");
        if (t->kind == JK_TUPLE) {
            for (int k = 0; k < t->n; k++)
                if (!jt_is_int(t->elems[k])) inf_fail(p, args->items[0], "reshape() takes integers, not %s", tname(t));
            ndim = t->n;
        } else if (jt_is_int(t)) {
            ndim = 1;
        } else {
            inf_fail(p, args->items[0], "reshape() takes a shape tuple or integers, not %s", tname(t));
        }
    } else {
        for (int k = 0; k < args->len; k++) {
            const JType *t = inf_value(p, args->items[k]);
            if (!t) return inf_unknown(p, n, "unknown shape");
            if (!jt_is_int(t)) inf_fail(p, args->items[k], "reshape() takes integers, not %s", tname(t));
        }
        ndim = args->len;
    }
    if (ndim < 1 || ndim > ND_MAXDIM) inf_fail(p, n, "reshape() in kernels makes 1 to %d dimensions", ND_MAXDIM);
    JInfo *i = inf_info(p, n);
    i->builtin = JB_ARRAY_RESHAPE;
    return inf_set_type(p, n, jt_array(VMOF(p), base->dtype, ndim, 'C'));
}

bool inf_array_method(Pass *p, AstNode *n, const JType **out) {
    AstNode *f = n->u.call.func;
    if (f->kind != AST_ATTRIBUTE) return false;
    const char *m = f->u.attr.attr;
    if (strcmp(m, "reshape") != 0 && strcmp(m, "copy") != 0) return false;
    const JType *base = inf_expr(p, f->u.attr.value);
    if (!base) {
        *out = inf_unknown(p, n, "unknown array");
        return true;
    }
    if (base->kind != JK_ARRAY) return false;
    if (m[0] == 'c')
        inf_fail(p, n, "array.copy() allocates memory, which CUDA kernels cannot do: copy into a "
                       "cuda.local.array or cuda.shared.array instead");
    inf_set_type(p, f, S(p, JK_VOID)); /* the bound method has no value of its own */
    *out = reshape(p, n, base);
    return true;
}
