/*
** infer_device_args.c — what a device function may be passed: values, and
** compile-time values that specialize it as Numba does: None (a none
** parameter, so `x is None` folds), another device function (called
** through the parameter: `def apply(f, x): return f(x)`), and a dtype
** (`np.float32`, then `dt(x)` casts), or a builtin function (`cuda.atomic.add`).
** Each distinct function or dtype is a distinct argument type, so a callee
** is compiled once per one of them.
*/
#include "binding.h"
#include "infer_priv.h"

const JType *inf_device_arg(Pass *p, AstNode *a) {
    const JType *t = inf_expr(p, a);
    if (!t) return NULL;
    if (t->kind == JK_NONE || t->kind == JK_DTYPE || inf_is_builtin_fn(t)) return t;
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

/* A builtin function as a value (cuda.atomic.add, math.sqrt): the callee
** calls it through the parameter, as numba-cuda's own tests pass
** `cuda.atomic.add` to a helper. */
bool inf_is_builtin_fn(const JType *t) {
    if (t->kind != JK_MODULE || !t->path) return false;
    const JitPath *jp = jit_path_lookup(t->path);
    return jp && jp->kind == JP_CALL;
}

bool inf_is_static_arg(const JType *t, bool is_kernel) {
    if (t->kind == JK_NONE) return true;
    return !is_kernel && (t->kind == JK_FUNCTION || t->kind == JK_DTYPE || inf_is_builtin_fn(t));
}

bool inf_printable_tuple(const JType *t) {
    if (t->kind != JK_TUPLE) return false;
    for (int k = 0; k < t->n; k++)
        if (!jt_is_scalar(t->elems[k]) && !inf_printable_tuple(t->elems[k])) return false;
    return true;
}
