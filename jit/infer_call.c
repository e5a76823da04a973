/*
** infer_call.c — typing of calls: device functions (specialized on their
** argument types), range/len/min/max/abs/round/int/float/bool, type casts
** (np.float32(x)), math and numpy functions, and the cuda builtins
** (grid, syncthreads, shared/local arrays, atomics).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "infer_priv.h"

/* Builtins other than shared/local.array take positional arguments only. */
static void no_keywords(Pass *p, AstNode *n, const char *what) {
    if (n->u.call.keywords.len)
        inf_fail(p, n->u.call.keywords.items[0], "keyword arguments are not supported for %s in kernels", what);
}

/* Checks the number of positional arguments (Python's wording). */
static void check_nargs(Pass *p, AstNode *n, const char *what, int got, int lo, int hi) {
    if (got < lo || got > hi) {
        if (lo == hi) inf_fail(p, n, "%s() takes %d argument%s, got %d", what, lo, lo == 1 ? "" : "s", got);
        inf_fail(p, n, "%s() takes %d to %d arguments, got %d", what, lo, hi, got);
    }
}

/* A call of a @cuda.jit(device=True) function: specializes it on the
** argument types and records it as a callee. */
static const JType *device_call(Pass *p, AstNode *n, const JType *ft) {
    VM *vm = VMOF(p);
    const JInfo *fi = jim_get(p->fx->f.infos, n->u.call.func);
    bool is_device = false;
    Function *fn = fi ? jit_binding(vm)->dispatcher_function(vm, fi->constant, &is_device) : NULL;
    bool via_arg = !fn; /* a parameter holding a device function (checked where it was passed) */
    if (!fn) {
        fn = ft->fn;
        is_device = true;
    }
    const char *fname = fn->name ? fn->name->chars : "?";
    if (!is_device)
        inf_fail(p, n, "cannot call kernel '%s' like a function: launch it with %s[grid, block](...)", fname, fname);
    no_keywords(p, n, "device functions");
    int na = n->u.call.args.len;
    const JType **at = inf_alloc(p, (size_t)(na ? na : 1) * sizeof *at);
    bool unk = false;
    for (int k = 0; k < na; k++) {
        AstNode *a = n->u.call.args.items[k];
        if (a->kind == AST_STARRED) inf_fail(p, a, "*args in calls are not supported in kernels");
        at[k] = inf_device_arg(p, a);
        if (!at[k]) unk = true;
    }
    if (unk) return inf_unknown(p, n, "unknown argument type");
    /* Types changed earlier in this pass, so the argument types may still
       widen: wait for a pass with stable types rather than specialize (and
       maybe fail to type) a callee on types that are not final. */
    if (!p->strict && p->changed) return inf_unknown(p, n, "argument types not final yet");
    char why[1200];
    if (fi && !via_arg && !jit_binding(vm)->device_signatures_accept(vm, fi->constant, na, at, why, sizeof why)) inf_fail(p, n, "%s", why);
    FuncX *cx = inf_specialize(p, n, fn, na, at, false);
    JInfo *i = inf_info(p, n);
    i->builtin = JB_DEVICE_CALL;
    i->callee = &cx->f;
    /* distinct callees of this pass */
    JFunc *f = &p->fx->f;
    bool seen = false;
    for (int k = 0; k < f->ncallees; k++)
        if (f->callees[k] == &cx->f) seen = true;
    if (!seen) {
        if (f->ncallees == p->fx->callees_cap) {
            int cap = p->fx->callees_cap ? p->fx->callees_cap * 2 : 4;
            JFunc **nc = inf_alloc(p, (size_t)cap * sizeof *nc);
            if (f->ncallees) memcpy(nc, f->callees, (size_t)f->ncallees * sizeof *nc);
            f->callees = nc;
            p->fx->callees_cap = cap;
        }
        f->callees[f->ncallees++] = &cx->f;
    }
    if (cx->f.uses_barrier) f->uses_barrier = true;
    if (cx != p->fx && cx->state == FS_ITER) p->fx->tainted = true;
    if (!cx->f.ret) {
        if (cx != p->fx && cx->state == FS_ITER) p->fx->blocked = true; /* mutual recursion, retried later */
        char msg[200];
        snprintf(msg, sizeof msg, "cannot infer the return type of recursive function '%s'", fname);
        return inf_unknown(p, n, msg);
    }
    i->type = cx->f.ret;
    return i->type;
}

/* Positional arguments typed as values; false when one is unknown. */
static bool value_args(Pass *p, AstNode *n, const JType **out, int max) {
    bool ok = true;
    for (int k = 0; k < n->u.call.args.len && k < max; k++) {
        AstNode *a = n->u.call.args.items[k];
        if (a->kind == AST_STARRED) inf_fail(p, a, "*args in calls are not supported in kernels");
        out[k] = inf_value(p, a);
        if (!out[k]) ok = false;
    }
    return ok;
}

/* Scalar-only builtins reject arrays and tuples. */
static void require_scalar(Pass *p, AstNode *a, const JType *t, const char *what) {
    if (!jt_is_scalar(t)) inf_fail(p, a, "%s() does not accept %s", what, tname(t));
}

/* The dtype a dtype argument names: a string ('float32'), a numpy or numba
** type, np.dtype(...) of one, or Python's float/int/bool. -1 when it names
** none; DTYPE_UNKNOWN while its type is not inferred yet. */
#define DTYPE_UNKNOWN (-2)
static int dtype_arg(Pass *p, AstNode *a) {
    if (a->kind == AST_STR) {
        inf_set_type(p, a, S(p, JK_STRING));
        return dtype_from_numpy_str(a->u.str.s);
    }
    const JType *t = inf_expr(p, a);
    if (!t) return DTYPE_UNKNOWN;
    if (t->kind == JK_DTYPE) return (int)t->dtype;
    if (t->kind == JK_MODULE) {
        if (strcmp(t->path, "float") == 0) return ND_FLOAT64;
        if (strcmp(t->path, "int") == 0) return ND_INT64;
        if (strcmp(t->path, "bool") == 0) return ND_BOOL;
    }
    return -1;
}

/* cuda.shared.array / cuda.local.array (shape, dtype). */
static const JType *array_alloc_call(Pass *p, AstNode *n, JBuiltin b, const char *what) {
    AstNode *shape = NULL, *dtype = NULL;
    int na = n->u.call.args.len;
    if (na > 0) shape = n->u.call.args.items[0];
    if (na > 1) dtype = n->u.call.args.items[1];
    for (int k = 0; k < n->u.call.keywords.len; k++) {
        AstNode *kw = n->u.call.keywords.items[k];
        const char *nm = kw->u.keyword.name;
        if (nm && strcmp(nm, "shape") == 0 && !shape) shape = kw->u.keyword.value;
        else if (nm && strcmp(nm, "dtype") == 0 && !dtype) dtype = kw->u.keyword.value;
        else inf_fail(p, kw, "%s() got an unexpected keyword argument '%s'", what, nm ? nm : "**");
    }
    if (na > 2) inf_fail(p, n, "%s() takes 2 arguments (shape, dtype), got %d", what, na);
    if (!shape || !dtype) inf_fail(p, n, "%s() needs a shape and a dtype", what);
    JInfo *i = inf_info(p, n);
    int ndim = 0;
    int64_t dims[3];
    if (shape->kind == AST_TUPLE) {
        ndim = shape->u.seq.elts.len;
        if (ndim < 1 || ndim > 3) inf_fail(p, shape, "%s() supports 1 to 3 dimensions, got %d", what, ndim);
        for (int k = 0; k < ndim; k++) {
            AstNode *d = shape->u.seq.elts.items[k];
            inf_value(p, d);
            if (!inf_const_int(p, d, &dims[k])) inf_fail(p, d, "the shape of %s() must be a constant", what);
        }
        inf_value(p, shape);
    } else {
        const JType *st = inf_value(p, shape);
        const JInfo *si = jim_get(p->fx->f.infos, shape);
        if (st && st->kind == JK_TUPLE && si && si->builtin == JB_CONST && IS_TUPLE(VMOF(p), si->constant)) {
            Tuple *tv = AS_TUPLE(si->constant); /* a global tuple: SHAPE = (16, 16) */
            ndim = (int)tv->len;
            if (ndim < 1 || ndim > 3) inf_fail(p, shape, "%s() supports 1 to 3 dimensions, got %d", what, ndim);
            for (int k = 0; k < ndim; k++) {
                if (!IS_INT(tv->items[k])) inf_fail(p, shape, "the shape of %s() must hold integers", what);
                dims[k] = AS_INT(tv->items[k]);
            }
        } else {
            ndim = 1;
            if (!inf_const_int(p, shape, &dims[0])) inf_fail(p, shape, "the shape of %s() must be a constant", what);
        }
    }
    int64_t total = 1;
    for (int k = 0; k < ndim; k++) {
        bool dynamic = b == JB_SHARED_ARRAY && ndim == 1 && dims[k] == 0; /* sized by the launch */
        if (dims[k] <= 0 && !dynamic) inf_fail(p, shape, "invalid %s() dimension %lld", what, (long long)dims[k]);
        if (dims[k] > ((int64_t)1 << 31) / total) inf_fail(p, shape, "%s() is too large", what);
        total *= dims[k];
        i = inf_info(p, n);
        i->shape[k] = dims[k];
    }
    int dt = dtype_arg(p, dtype);
    if (dt == DTYPE_UNKNOWN) return inf_unknown(p, n, "unknown dtype");
    if (dt < 0) inf_fail(p, dtype, "%s(): dtype must be a numeric type such as numpy.float32", what);
    i = inf_info(p, n);
    i->builtin = b;
    return inf_set_type(p, n, jt_array(VMOF(p), (NDType)dt, ndim, 'C'));
}

/* cuda.atomic.op(array, index, value[, value]): the old element value. */
static const JType *atomic_call(Pass *p, AstNode *n, const JitPath *jp) {
    int na = n->u.call.args.len;
    const JType *at[4] = {0};
    for (int k = 0; k < na; k++) {
        AstNode *a = n->u.call.args.items[k];
        if (k == 1) {
            at[1] = NULL; /* typed by array_index below */
            continue;
        }
        at[k] = inf_value(p, a);
    }
    AstNode *arrn = n->u.call.args.items[0];
    if (!at[0]) {
        inf_expr(p, n->u.call.args.items[1]);
        return inf_unknown(p, n, "unknown array");
    }
    if (at[0]->kind != JK_ARRAY)
        inf_fail(p, arrn, "%s() needs an array as first argument, got %s", jp->path, tname(at[0]));
    NDType dt = at[0]->dtype;
    bool ints_only = jp->builtin >= JB_ATOMIC_AND && jp->builtin <= JB_ATOMIC_DEC;
    if (!(dt == ND_INT32 || dt == ND_INT64 || dt == ND_UINT32 || dt == ND_UINT64 ||
          (!ints_only && (dt == ND_FLOAT32 || dt == ND_FLOAT64))))
        inf_fail(p, arrn, "%s() does not support %s", jp->path, tname(at[0]));
    if (!inf_array_index(p, n, at[0], n->u.call.args.items[1], false)) return inf_unknown(p, n, "unknown index");
    for (int k = 2; k < na; k++) {
        if (!at[k]) return inf_unknown(p, n, "unknown value");
        if (!jt_is_scalar(at[k]))
            inf_fail(p, n->u.call.args.items[k], "%s() needs a scalar value, got %s", jp->path, tname(at[k]));
    }
    JInfo *i = inf_info(p, n);
    i->builtin = jp->builtin;
    i->op_type = S(p, (JKind)dt);
    return inf_set_type(p, n, i->op_type);
}

/* cuda.atomic.compare_and_swap(array, old, new): on array[0] of a 1-D
** integer array; the old element value. */
static const JType *cas1_call(Pass *p, AstNode *n, const JitPath *jp) {
    const JType *at[3];
    for (int k = 0; k < 3; k++) at[k] = inf_value(p, n->u.call.args.items[k]);
    if (!at[0] || !at[1] || !at[2]) return inf_unknown(p, n, "unknown argument type");
    NDType dt = at[0]->kind == JK_ARRAY ? at[0]->dtype : ND_FLOAT64;
    if (at[0]->kind != JK_ARRAY || at[0]->ndim != 1 ||
        !(dt == ND_INT32 || dt == ND_INT64 || dt == ND_UINT32 || dt == ND_UINT64))
        inf_fail(p, n->u.call.args.items[0], "%s() needs a 1-D integer array, got %s", jp->path, tname(at[0]));
    for (int k = 1; k < 3; k++)
        if (!jt_is_scalar(at[k]))
            inf_fail(p, n->u.call.args.items[k], "%s() needs a scalar value, got %s", jp->path, tname(at[k]));
    JInfo *i = inf_info(p, n);
    i->builtin = jp->builtin;
    i->op_type = S(p, (JKind)dt);
    return inf_set_type(p, n, i->op_type);
}

/* Warp collectives: shfl_*_sync(mask, value, lane/delta), *_sync(mask,
** pred), activemask(), syncwarp([mask]). On the CPU device they make the
** kernel run as fibers (the warp's lanes meet at each one). */
static const JType *warp_call(Pass *p, AstNode *n, const JitPath *jp) {
    JBuiltin b = jp->builtin;
    int na = n->u.call.args.len;
    const JType *at[3] = {0};
    for (int k = 0; k < na; k++) at[k] = inf_value(p, n->u.call.args.items[k]);
    for (int k = 0; k < na; k++) {
        if (!at[k]) return inf_unknown(p, n, "unknown argument type");
        require_scalar(p, n->u.call.args.items[k], at[k], jp->path);
        if (k != 1 || b < JB_SHFL_IDX || b > JB_SHFL_XOR) {
            if (!is_intlike(at[k]) && !(k == 1 && b >= JB_VOTE_ALL && b <= JB_BALLOT))
                inf_fail(p, n->u.call.args.items[k], "%s() needs an integer here, got %s", jp->path, tname(at[k]));
        }
    }
    JInfo *i = inf_info(p, n);
    i->builtin = b;
    p->fx->f.uses_barrier = true;
    switch (b) {
    case JB_SHFL_IDX: case JB_SHFL_UP: case JB_SHFL_DOWN: case JB_SHFL_XOR: {
        JKind k = at[1]->kind;
        if (k == JK_BOOL || k == JK_FLOAT16)
            inf_fail(p, n->u.call.args.items[1], "%s() does not support %s", jp->path, tname(at[1]));
        if (k == JK_INT8 || k == JK_INT16) k = JK_INT32;
        else if (k == JK_UINT8 || k == JK_UINT16) k = JK_UINT32;
        i->op_type = S(p, k);
        return inf_set_type(p, n, i->op_type);
    }
    case JB_VOTE_ALL: case JB_VOTE_ANY: case JB_VOTE_EQ:
        i->op_type = at[1];
        return inf_set_type(p, n, S(p, JK_BOOL));
    case JB_BALLOT:
        i->op_type = at[1];
        return inf_set_type(p, n, S(p, JK_UINT32));
    case JB_ACTIVEMASK: return inf_set_type(p, n, S(p, JK_UINT32));
    default: return inf_set_type(p, n, S(p, JK_VOID)); /* syncwarp */
    }
}

/* Calls of builtins, math, cuda.* (callee a JK_MODULE path). */
static const JType *path_call(Pass *p, AstNode *n, const JType *ft) {
    const JitPath *jp = jit_path_lookup(ft->path);
    if (!jp || jp->kind != JP_CALL) inf_fail(p, n, "'%s' is not callable in kernels", ft->path);
    const char *what = jp->path;
    int na = n->u.call.args.len;
    JBuiltin b = jp->builtin;
    if (b == JB_SHARED_ARRAY || b == JB_LOCAL_ARRAY) return array_alloc_call(p, n, b, what);
    no_keywords(p, n, what);
    check_nargs(p, n, what, na, jp->minargs, jp->maxargs);
    if ((b >= JB_ATOMIC_ADD && b <= JB_ATOMIC_CAS) || (b >= JB_ATOMIC_AND && b <= JB_ATOMIC_DEC) ||
        b == JB_ATOMIC_NANMAX || b == JB_ATOMIC_NANMIN)
        return atomic_call(p, n, jp);
    if (b == JB_ATOMIC_CAS1) return cas1_call(p, n, jp);
    if (b >= JB_SHFL_IDX && b <= JB_SYNCWARP) return warp_call(p, n, jp);
    if (b == JB_MATCH_ANY || b == JB_MATCH_ALL || b == JB_LANEMASK_LT) return inf_warp_match_call(p, n, jp);
    const JType *at[64] = {0};
    JInfo *i;
    switch (b) {
    case JB_NP_DTYPE: { /* np.dtype(np.int32) or np.dtype('int32'), as a dtype= argument */
        AstNode *a = n->u.call.args.items[0];
        int dt = dtype_arg(p, a);
        if (dt == DTYPE_UNKNOWN) return inf_unknown(p, n, "unknown dtype");
        if (dt < 0) inf_fail(p, a, "numpy.dtype() in a kernel takes a numeric type such as numpy.float32 or 'float32'");
        inf_info(p, n)->builtin = b;
        return inf_set_type(p, n, jt_dtype(VMOF(p), (NDType)dt));
    }
    case JB_GRID:
    case JB_GRIDSIZE: {
        AstNode *a = n->u.call.args.items[0];
        inf_value(p, a);
        int64_t k;
        if (!inf_const_int(p, a, &k) || k < 1 || k > 3) inf_fail(p, a, "%s() takes a constant 1, 2 or 3", what);
        i = inf_info(p, n);
        i->builtin = b;
        if (k == 1) return inf_set_type(p, n, S(p, JK_INT64));
        const JType *e[3] = {S(p, JK_INT64), S(p, JK_INT64), S(p, JK_INT64)};
        return inf_set_type(p, n, jt_tuple(VMOF(p), (int)k, e));
    }
    case JB_SYNCTHREADS_COUNT:
    case JB_SYNCTHREADS_AND:
    case JB_SYNCTHREADS_OR: {
        const JType *pt = inf_value(p, n->u.call.args.items[0]);
        if (!pt) return inf_unknown(p, n, "unknown predicate");
        require_scalar(p, n, pt, what);
        i = inf_info(p, n);
        i->builtin = b;
        i->op_type = pt;
        p->fx->f.uses_barrier = true;
        return inf_set_type(p, n, S(p, JK_INT32));
    }
    case JB_THREADFENCE:
    case JB_THREADFENCE_BLOCK:
    case JB_THREADFENCE_SYSTEM:
        i = inf_info(p, n);
        i->builtin = b;
        return inf_set_type(p, n, S(p, JK_VOID));
    case JB_SYNCTHREADS:
        i = inf_info(p, n);
        i->builtin = b;
        p->fx->f.uses_barrier = true;
        return inf_set_type(p, n, S(p, JK_VOID));
    default: break;
    }
    if (!value_args(p, n, at, na)) return inf_unknown(p, n, "unknown argument type");
    i = inf_info(p, n);
    i->builtin = b;
    switch (b) {
    case JB_RANGE:
        for (int k = 0; k < na; k++)
            if (!is_intlike(at[k]))
                inf_fail(p, n->u.call.args.items[k], "range() arguments must be integers, got %s", tname(at[k]));
        i->op_type = S(p, JK_INT64);
        return inf_set_type(p, n, S(p, JK_RANGE));
    case JB_CONST_ARRAY: {
        const JInfo *ai = jim_get(p->fx->f.infos, n->u.call.args.items[0]);
        if (at[0]->kind != JK_ARRAY || !ai || ai->builtin != JB_CONST)
            inf_fail(p, n, "cuda.const.array_like() needs a global array, got %s", tname(at[0]));
        return inf_set_type(p, n, at[0]);
    }
    case JB_LEN:
        if (at[0]->kind != JK_ARRAY && at[0]->kind != JK_TUPLE)
            inf_fail(p, n, "len() of %s is not supported", tname(at[0]));
        return inf_set_type(p, n, S(p, JK_INT64));
    case JB_MIN:
    case JB_MAX: {
        const JType *const *xs = at;
        int nx = na;
        if (na == 1) {
            if (at[0]->kind != JK_TUPLE || at[0]->n == 0)
                inf_fail(p, n, "%s() of one argument needs a non-empty tuple, got %s", what, tname(at[0]));
            xs = at[0]->elems;
            nx = at[0]->n;
        }
        const JType *r = NULL;
        for (int k = 0; k < nx; k++) {
            require_scalar(p, n, xs[k], what);
            r = !r ? xs[k] : S(p, inf_unify_scalar(r->kind, xs[k]->kind));
        }
        i->op_type = r;
        return inf_set_type(p, n, r);
    }
    case JB_ABS: {
        if (jt_is_complex(at[0])) { /* abs(z): hypot of the parts */
            i->op_type = at[0];
            return inf_set_type(p, n, S(p, at[0]->kind == JK_COMPLEX64 ? JK_FLOAT32 : JK_FLOAT64));
        }
        require_scalar(p, n, at[0], what);
        const JType *r = at[0]->kind == JK_BOOL ? S(p, JK_INT8) : at[0]; /* Numba: abs(bool) → int8 */
        i->op_type = r;
        return inf_set_type(p, n, r);
    }
    case JB_ROUND:
        require_scalar(p, n, at[0], what);
        if (na == 1) {
            i->op_type = at[0]->kind == JK_BOOL ? S(p, JK_INT64) : at[0];
            return inf_set_type(p, n, S(p, JK_INT64));
        }
        if (!is_intlike(at[1])) inf_fail(p, n->u.call.args.items[1], "round() ndigits must be an integer");
        i->op_type = S(p, jt_is_float(at[0]) ? at[0]->kind : inf_float_with_int(JK_FLOAT32, at[0]->kind));
        return inf_set_type(p, n, i->op_type);
    case JB_CMATH_EXP: case JB_CMATH_LOG: case JB_CMATH_SQRT: case JB_CMATH_PHASE: {
        const JType *z = jt_is_complex(at[0]) ? at[0] : NULL;
        if (!z) {
            require_scalar(p, n, at[0], what);
            z = S(p, JK_COMPLEX128);
        }
        i->op_type = z;
        if (b == JB_CMATH_PHASE) return inf_set_type(p, n, S(p, z->kind == JK_COMPLEX64 ? JK_FLOAT32 : JK_FLOAT64));
        return inf_set_type(p, n, z);
    }
    case JB_COMPLEX:
        for (int k = 0; k < na; k++) require_scalar(p, n, at[k], what);
        i->op_type = na ? at[0] : NULL;
        return inf_set_type(p, n, S(p, JK_COMPLEX128));
    case JB_INT:
    case JB_FLOAT:
    case JB_BOOL:
        require_scalar(p, n, at[0], what);
        i->op_type = at[0];
        if (b == JB_INT && jt_is_int(at[0])) return inf_set_type(p, n, at[0]); /* Numba: int(int8) is int8 */
        return inf_set_type(p, n, S(p, b == JB_INT ? JK_INT64 : b == JB_FLOAT ? JK_FLOAT64 : JK_BOOL));
    default: break;
    }
    if (b >= JB_MATH_SQRT && b <= JB_MATH_ISFINITE) {
        bool all32 = true;
        for (int k = 0; k < na; k++) {
            require_scalar(p, n->u.call.args.items[k], at[k], what);
            if (at[k]->kind != JK_FLOAT32 && at[k]->kind != JK_FLOAT16) all32 = false;
        }
        i->op_type = S(p, all32 ? JK_FLOAT32 : JK_FLOAT64);
        if (b == JB_MATH_ISNAN || b == JB_MATH_ISINF || b == JB_MATH_ISFINITE) return inf_set_type(p, n, S(p, JK_BOOL));
        if ((b == JB_MATH_FLOOR || b == JB_MATH_CEIL) && strncmp(what, "math.", 5) == 0) /* returns an int */
            return inf_set_type(p, n, S(p, jt_is_int(at[0]) && !is_signed_k(at[0]->kind) ? JK_UINT64 : JK_INT64));
        return inf_set_type(p, n, i->op_type);
    }
    inf_fail(p, n, "'%s' is not supported in kernels", what);
}

/* print(...) in a kernel: constant strings and scalars. On the CPU device
** the kernel runs as fibers so each line is tagged with its thread. */
static const JType *print_call(Pass *p, AstNode *n) {
    no_keywords(p, n, "print()");
    if (n->u.call.args.len > 32) inf_fail(p, n, "print() in kernels takes at most 32 arguments");
    for (int k = 0; k < n->u.call.args.len; k++) {
        AstNode *a = n->u.call.args.items[k];
        if (a->kind == AST_STR) {
            inf_set_type(p, a, S(p, JK_STRING));
            continue;
        }
        const JType *d3 = a->kind == AST_ATTRIBUTE ? inf_expr(p, a) : NULL;
        if (d3 && jit_dim3_sreg(d3) >= 0) continue; /* print(cuda.threadIdx): "(x, y, z)" as Numba */
        const JType *t = inf_value(p, a);
        if (!t) return inf_unknown(p, n, "unknown argument type");
        if (!jt_is_scalar(t) && !inf_printable_tuple(t))
            inf_fail(p, a, "print() in kernels takes numbers, tuples of numbers and constant strings, got %s",
                     tname(t));
    }
    JInfo *i = inf_info(p, n);
    i->builtin = JB_PRINT;
    p->fx->f.uses_barrier = true;
    return inf_set_type(p, n, S(p, JK_VOID));
}

/* A call, dispatched on what the callee denotes. */
const JType *inf_call_expr(Pass *p, AstNode *n) {
    AstNode *fnode = n->u.call.func;
    if (fnode->kind == AST_NAME && strcmp(fnode->u.name.id, "print") == 0 && !jf_var(&p->fx->f, "print"))
        return print_call(p, n);
    if (inf_is_launch(n)) return inf_launch_expr(p, n);
    if (fnode->kind == AST_ATTRIBUTE && strcmp(fnode->u.attr.attr, "conjugate") == 0 && n->u.call.args.len == 0) {
        const JType *zt = inf_expr(p, fnode->u.attr.value);
        if (!zt) return inf_unknown(p, n, "unknown value");
        if (jt_is_complex(zt) || jt_is_scalar(zt)) { /* z.conjugate(); a real number's is itself */
            JInfo *i = inf_info(p, n);
            i->builtin = JB_COMPLEX_CONJ;
            i->op_type = zt;
            return inf_set_type(p, n, zt);
        }
    }
    const JType *mt;
    if (inf_array_method(p, n, &mt)) return mt; /* a.reshape(...): infer_array_methods.c */
    const JType *ft = inf_expr(p, fnode);
    if (!ft) {
        for (int k = 0; k < n->u.call.args.len; k++) inf_expr(p, n->u.call.args.items[k]);
        return inf_unknown(p, n, "unknown callee");
    }
    switch (ft->kind) {
    case JK_FUNCTION: return device_call(p, n, ft);
    case JK_MODULE: return path_call(p, n, ft);
    case JK_DTYPE: {
        char what[32]; /* np.float32(x): "float32" */
        jt_name(S(p, (JKind)ft->dtype), what, sizeof what);
        no_keywords(p, n, what);
        if (nd_is_complex_dtype(ft->dtype) && n->u.call.args.len == 2) { /* complex(re, im) */
            const JType *a2[2];
            if (!value_args(p, n, a2, 2)) return inf_unknown(p, n, "unknown argument type");
            require_scalar(p, n, a2[0], what);
            require_scalar(p, n, a2[1], what);
            JInfo *i = inf_info(p, n);
            i->builtin = JB_COMPLEX;
            i->op_type = a2[0];
            return inf_set_type(p, n, S(p, (JKind)ft->dtype));
        }
        check_nargs(p, n, what, n->u.call.args.len, 1, 1);
        const JType *a;
        if (!value_args(p, n, &a, 1)) return inf_unknown(p, n, "unknown argument type");
        if (!(jt_is_complex(a) && nd_is_complex_dtype(ft->dtype))) require_scalar(p, n, a, what);
        JInfo *i = inf_info(p, n);
        i->builtin = JB_CAST;
        i->op_type = a;
        return inf_set_type(p, n, S(p, (JKind)ft->dtype));
    }
    default: break;
    }
    if (fnode->kind == AST_NAME && strcmp(fnode->u.name.id, "print") == 0)
        inf_fail(p, n, "print() in kernels is not supported yet");
    inf_fail(p, n, "cannot call a value of type %s", tname(ft));
}
