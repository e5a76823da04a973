/*
** infer_warp_match.c — typing of cuda.match_any_sync / match_all_sync and
** cuda.lanemask_lt (lowered in jit/lower_warp_match.c).
**
** As in Numba: match_any_sync(mask, value) → uint32, match_all_sync(mask,
** value) → (uint32, bool); value is a 32- or 64-bit integer or float
** (narrower integers widen to 32 bits); lanemask_lt() → uint32.
*/
#include "infer_builtins.h"
#include "infer_priv.h"

const JType *inf_warp_match_call(Pass *p, AstNode *n, const JitPath *jp) {
    JInfo *i;
    if (jp->builtin == JB_LANEMASK_LT) {
        i = inf_info(p, n);
        i->builtin = jp->builtin;
        return inf_set_type(p, n, S(p, JK_UINT32));
    }
    AstNode *ma = n->u.call.args.items[0], *va = n->u.call.args.items[1];
    const JType *mt = inf_value(p, ma), *vt = inf_value(p, va);
    if (!mt || !vt) return inf_unknown(p, n, "unknown argument type");
    if (!jt_is_scalar(mt) || !is_intlike(mt))
        inf_fail(p, ma, "%s() needs an integer mask, got %s", jp->path, tname(mt));
    JKind k = vt->kind;
    if (!jt_is_scalar(vt) || k == JK_BOOL || k == JK_FLOAT16)
        inf_fail(p, va, "%s() does not support %s", jp->path, tname(vt));
    if (k == JK_INT8 || k == JK_INT16) k = JK_INT32;
    else if (k == JK_UINT8 || k == JK_UINT16) k = JK_UINT32;
    i = inf_info(p, n);
    i->builtin = jp->builtin;
    i->op_type = S(p, k);
    p->fx->f.uses_barrier = true; /* the CPU device runs the kernel as fibers: lanes meet */
    if (jp->builtin == JB_MATCH_ANY) return inf_set_type(p, n, S(p, JK_UINT32));
    const JType *el[2] = {S(p, JK_UINT32), S(p, JK_BOOL)};
    return inf_set_type(p, n, jt_tuple(VMOF(p), 2, el));
}
