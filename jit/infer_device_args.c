/*
** infer_device_args.c — what a device function may be passed: values, and
** compile-time values that specialize it as Numba does: None (a none
** parameter, so `x is None` folds), another device function (called
** through the parameter: `def apply(f, x): return f(x)`), and a dtype
** (`np.float32`, then `dt(x)` casts). Each distinct function or dtype is a
** distinct argument type, so a callee is compiled once per one of them.
*/
#include "binding.h"
#include "infer_priv.h"

const JType *inf_device_arg(Pass *p, AstNode *a) {
    const JType *t = inf_expr(p, a);
    if (!t) return NULL;
    if (t->kind == JK_NONE || t->kind == JK_DTYPE) return t;
    if (t->kind == JK_FUNCTION) {
        const JInfo *i = inf_info(p, a);
        bool is_device = true;
        if (!IS_EMPTY(i->constant)) /* a global: its dispatcher (a parameter was checked where passed) */
            jit_binding(VMOF(p))->dispatcher_function(VMOF(p), i->constant, &is_device);
        if (!is_device) inf_fail(p, a, "a kernel cannot be passed to a device function (only device functions)");
        return t;
    }
    return inf_value(p, a);
}

bool inf_is_static_arg(const JType *t, bool is_kernel) {
    if (t->kind == JK_NONE) return true;
    return !is_kernel && (t->kind == JK_FUNCTION || t->kind == JK_DTYPE);
}

bool inf_printable_tuple(const JType *t) {
    if (t->kind != JK_TUPLE) return false;
    for (int k = 0; k < t->n; k++)
        if (!jt_is_scalar(t->elems[k]) && !inf_printable_tuple(t->elems[k])) return false;
    return true;
}
