/*
** infer_launch.c — typing of a kernel launched from a kernel (CUDA dynamic
** parallelism): child[grid, block](args) or child[grid, block, stream,
** shared_bytes](args) inside a @cuda.jit kernel or device function.
**
** The child must be a @cuda.jit kernel named by a global; it is specialized
** on the argument types at the call site, like a device function, but as a
** kernel (its own .entry in the PTX module; a separately compiled kernel on
** the CPU device). grid and block are ints or tuples of 1 to 3 ints; the
** stream can only be the default one (0 or None); shared_bytes is the
** child's dynamic shared memory. The launch has no value.
*/
#include <stdio.h>
#include <string.h>

#include "binding.h"
#include "infer_priv.h"

/* A grid or block dimension: an integer or a tuple of 1 to 3 integers. */
static bool dims_ok(const JType *t) {
    if (t->kind != JK_BOOL && jt_is_int(t)) return true;
    if (t->kind != JK_TUPLE || t->n < 1 || t->n > 3) return false;
    for (int k = 0; k < t->n; k++)
        if (t->elems[k]->kind == JK_BOOL || !jt_is_int(t->elems[k])) return false;
    return true;
}

/* Records f as a kernel the current function launches (once). */
static void add_launch(Pass *p, JFunc *child) {
    JFunc *f = &p->fx->f;
    for (int k = 0; k < f->nlaunches; k++)
        if (f->launches[k] == child) return;
    /* the list is rebuilt each pass; grow by copying into the arena */
    JFunc **nl = inf_alloc(p, (size_t)(f->nlaunches + 1) * sizeof *nl);
    if (f->nlaunches) memcpy(nl, f->launches, (size_t)f->nlaunches * sizeof *nl);
    nl[f->nlaunches] = child;
    f->launches = nl;
    f->nlaunches++;
}

bool inf_is_launch(const AstNode *n) {
    return n->kind == AST_CALL && n->u.call.func->kind == AST_SUBSCRIPT;
}

const JType *inf_launch_expr(Pass *p, AstNode *n) {
    VM *vm = VMOF(p);
    AstNode *sub = n->u.call.func;
    AstNode *callee = sub->u.subscript.value, *cfg = sub->u.subscript.index;
    const JType *ct = inf_expr(p, callee);
    if (!ct) {
        for (int k = 0; k < n->u.call.args.len; k++) inf_expr(p, n->u.call.args.items[k]);
        return inf_unknown(p, n, "unknown kernel");
    }
    const JInfo *ci = jim_get(p->fx->f.infos, callee);
    bool is_device = false;
    Function *fn = ct->kind == JK_FUNCTION && ci ? jit_binding(vm)->dispatcher_function(vm, ci->constant, &is_device) : NULL;
    if (!fn)
        inf_fail(p, n, "only a @cuda.jit kernel can be launched with [grid, block](...) from a kernel, not %s",
                 tname(ct));
    const char *cname = fn->name ? fn->name->chars : "?";
    if (is_device)
        inf_fail(p, n, "'%s' is a device function (device=True): call it as %s(...); only kernels are launched "
                 "with [grid, block]", cname, cname);
    if (n->u.call.keywords.len)
        inf_fail(p, n->u.call.keywords.items[0], "kernel launches take no keyword arguments");
    /* the launch configuration: [grid, block] or [grid, block, stream, shared_bytes] */
    int nc = cfg->kind == AST_TUPLE ? cfg->u.seq.elts.len : 1;
    if (nc < 2 || nc > 4)
        inf_fail(p, cfg, "a launch of '%s' takes [grid, block], [grid, block, stream] or "
                 "[grid, block, stream, shared_bytes], got %d item%s", cname, nc, nc == 1 ? "" : "s");
    AstNode **items = cfg->u.seq.elts.items;
    static const char *const what[4] = {"grid", "block", "stream", "shared memory size"};
    bool unknown = false;
    for (int k = 0; k < nc; k++) {
        AstNode *e = items[k];
        if (k == 2) { /* a device-side stream: only the default one */
            int64_t z;
            inf_expr(p, e);
            if (e->kind != AST_NONE && !(inf_const_int(p, e, &z) && z == 0))
                inf_fail(p, e, "a launch from a kernel can only use the default stream (0 or None)");
            continue;
        }
        const JType *t = inf_value(p, e);
        if (!t) {
            unknown = true;
            continue;
        }
        bool ok = k < 2 ? dims_ok(t) : (t->kind != JK_BOOL && jt_is_int(t));
        if (!ok)
            inf_fail(p, e, "the %s of a launch must be %s, got %s", what[k],
                     k < 2 ? "an integer or a tuple of 1 to 3 integers" : "an integer", tname(t));
    }
    inf_set_type(p, cfg, S(p, JK_VOID));
    int na = n->u.call.args.len;
    const JType **at = inf_alloc(p, (size_t)(na ? na : 1) * sizeof *at);
    for (int k = 0; k < na; k++) {
        AstNode *a = n->u.call.args.items[k];
        if (a->kind == AST_STARRED) inf_fail(p, a, "*args in calls are not supported in kernels");
        at[k] = inf_value(p, a);
        if (!at[k]) unknown = true;
    }
    if (unknown) return inf_unknown(p, n, "unknown launch argument type");
    /* types that may still widen: specialize the child once they are final */
    if (!p->strict && p->changed) return inf_unknown(p, n, "argument types not final yet");
    FuncX *cx = inf_specialize(p, n, fn, na, at, true);
    JInfo *i = inf_info(p, n);
    i->builtin = JB_LAUNCH;
    i->callee = &cx->f;
    i->shape[0] = nc;
    add_launch(p, &cx->f);
    return inf_set_type(p, n, S(p, JK_VOID));
}
