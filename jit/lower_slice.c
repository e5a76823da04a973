/*
** lower_slice.c — the view an array subscript with slices selects (types
** from infer_slice.c). Each slice is clamped as Python clamps it (negative
** bounds count from the end, out-of-range bounds stop at the edges); the
** view's data pointer moves to the first item, its extent is the item
** count and its stride the array's times the step. Integer indices wrap
** when negative and drop their dimension. Nothing is copied.
*/
#include "target.h"

static LLVMValueRef i64c(Lower *L, long long v) { return LLVMConstInt(L->t_i64, (unsigned long long)v, 1); }

static LLVMValueRef sel(Lower *L, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(L->B, c, a, b, "");
}

/* A slice bound: from the end when negative, then clamped to [lo, hi]. */
static LLVMValueRef bound(Lower *L, LLVMValueRef v, LLVMValueRef len, LLVMValueRef lo, LLVMValueRef hi) {
    LLVMBuilderRef B = L->B;
    v = sel(L, LLVMBuildICmp(B, LLVMIntSLT, v, i64c(L, 0), ""), LLVMBuildAdd(B, v, len, ""), v);
    v = sel(L, LLVMBuildICmp(B, LLVMIntSLT, v, lo, ""), lo, v);
    return sel(L, LLVMBuildICmp(B, LLVMIntSGT, v, hi, ""), hi, v);
}

static bool absent(const AstNode *x) { return !x || x->kind == AST_NONE; }

/* Slice x over an axis of extent len: *start, *count, *step (i64). */
static void slice_axis(Lower *L, AstNode *x, LLVMValueRef len, LLVMValueRef *start, LLVMValueRef *count,
                       LLVMValueRef *step) {
    LLVMBuilderRef B = L->B;
    const JType *i64 = jt_scalar(L->vm, JK_INT64);
    LLVMValueRef st = absent(x->u.slice.step) ? i64c(L, 1) : lower_expr_as(L, x->u.slice.step, i64);
    /* a zero step (only at run time: a literal 0 is a compile error) selects nothing */
    LLVMValueRef zero = LLVMBuildICmp(B, LLVMIntEQ, st, i64c(L, 0), "");
    st = sel(L, zero, i64c(L, 1), st);
    LLVMValueRef up = LLVMBuildICmp(B, LLVMIntSGT, st, i64c(L, 0), "");
    LLVMValueRef lo = sel(L, up, i64c(L, 0), i64c(L, -1));
    LLVMValueRef hi = sel(L, up, len, LLVMBuildSub(B, len, i64c(L, 1), ""));
    LLVMValueRef a = absent(x->u.slice.lower) ? sel(L, up, i64c(L, 0), LLVMBuildSub(B, len, i64c(L, 1), ""))
                                               : bound(L, lower_expr_as(L, x->u.slice.lower, i64), len, lo, hi);
    LLVMValueRef b = absent(x->u.slice.upper) ? sel(L, up, len, i64c(L, -1))
                                               : bound(L, lower_expr_as(L, x->u.slice.upper, i64), len, lo, hi);
    /* items: ceil((b - a) / step) when positive, as Python counts them
       ((span - 1) / |step| + 1, unsigned: no overflow for any step, INT64_MIN too) */
    LLVMValueRef span = sel(L, up, LLVMBuildSub(B, b, a, ""), LLVMBuildSub(B, a, b, ""));
    LLVMValueRef mag = sel(L, up, st, LLVMBuildNeg(B, st, ""));
    LLVMValueRef n = LLVMBuildAdd(B, LLVMBuildUDiv(B, LLVMBuildSub(B, span, i64c(L, 1), ""), mag, ""), i64c(L, 1), "");
    n = sel(L, LLVMBuildICmp(B, LLVMIntSGT, span, i64c(L, 0), ""), n, i64c(L, 0));
    *count = sel(L, zero, i64c(L, 0), n);
    *start = sel(L, LLVMBuildICmp(B, LLVMIntEQ, *count, i64c(L, 0), ""), i64c(L, 0), a);
    *step = st;
}

LLVMValueRef lower_slice(Lower *L, AstNode *n, LLVMValueRef arr, const JType *at, const JType *rt) {
    LLVMBuilderRef B = L->B;
    AstNode *idx = n->u.subscript.index;
    AstNode *one[1] = {idx};
    AstNode **items = idx->kind == AST_TUPLE ? idx->u.seq.elts.items : one;
    int count = idx->kind == AST_TUPLE ? idx->u.seq.elts.len : 1;
    if (rt->kind != JK_ARRAY || count > at->ndim) lower_fail(L, n, "internal error: bad slice type");
    const JType *i64 = jt_scalar(L->vm, JK_INT64);
    LLVMValueRef data = LLVMBuildExtractValue(B, arr, 0, "");
    LLVMValueRef shape = LLVMBuildExtractValue(B, arr, 1, "");
    LLVMValueRef strides = LLVMBuildExtractValue(B, arr, 2, "");
    LLVMValueRef off = i64c(L, 0);
    LLVMTypeRef dims = LLVMArrayType2(L->t_i64, (uint64_t)rt->ndim);
    LLVMValueRef ns = LLVMGetUndef(dims), nt = LLVMGetUndef(dims);
    int out = 0;
    for (int k = 0; k < at->ndim; k++) {
        LLVMValueRef len = LLVMBuildExtractValue(B, shape, (unsigned)k, "");
        LLVMValueRef stride = LLVMBuildExtractValue(B, strides, (unsigned)k, "");
        AstNode *x = k < count ? items[k] : NULL;
        LLVMValueRef start, cnt, step;
        if (x && x->kind != AST_SLICE) {
            LLVMValueRef i = lower_expr_as(L, x, i64);
            i = sel(L, LLVMBuildICmp(B, LLVMIntSLT, i, i64c(L, 0), ""), LLVMBuildAdd(B, i, len, ""), i);
            off = LLVMBuildAdd(B, off, LLVMBuildMul(B, i, stride, ""), "");
            continue;
        }
        if (x) {
            slice_axis(L, x, len, &start, &cnt, &step);
            off = LLVMBuildAdd(B, off, LLVMBuildMul(B, start, stride, ""), "");
            stride = LLVMBuildMul(B, stride, step, "");
        } else {
            cnt = len; /* an axis left out: whole */
        }
        if (out >= rt->ndim) lower_fail(L, n, "internal error: bad slice rank");
        ns = LLVMBuildInsertValue(B, ns, cnt, (unsigned)out, "");
        nt = LLVMBuildInsertValue(B, nt, stride, (unsigned)out, "");
        out++;
    }
    if (out != rt->ndim) lower_fail(L, n, "internal error: bad slice rank");
    LLVMValueRef r = LLVMGetUndef(lower_type(L, rt));
    r = LLVMBuildInsertValue(B, r, LLVMBuildGEP2(B, L->t_i8, data, &off, 1, ""), 0, "");
    r = LLVMBuildInsertValue(B, r, ns, 1, "");
    return LLVMBuildInsertValue(B, r, nt, 2, "");
}

/* Item `idx` (one i64 per dimension) of array value v of type t: its address. */
static LLVMValueRef item_addr(Lower *L, LLVMValueRef v, int ndim, LLVMValueRef *idx) {
    LLVMBuilderRef B = L->B;
    LLVMValueRef strides = LLVMBuildExtractValue(B, v, 2, "");
    LLVMValueRef off = i64c(L, 0);
    for (int k = 0; k < ndim; k++)
        off = LLVMBuildAdd(B, off, LLVMBuildMul(B, idx[k], LLVMBuildExtractValue(B, strides, (unsigned)k, ""), ""), "");
    return LLVMBuildGEP2(B, L->t_i8, LLVMBuildExtractValue(B, v, 0, ""), &off, 1, "");
}

/* Loops over every index of dst's view from dimension k, storing src there. */
static void store_loop(Lower *L, LLVMValueRef dst, const JType *dt, LLVMValueRef src, const JType *st,
                       LLVMValueRef *idx, int k, const AstNode *at) {
    LLVMBuilderRef B = L->B;
    if (k == dt->ndim) {
        const JType *et = jt_scalar(L->vm, (JKind)dt->dtype);
        LLVMValueRef v;
        if (st->kind == JK_ARRAY) {
            const JType *se = jt_scalar(L->vm, (JKind)st->dtype);
            v = lower_convert(L, lower_load_elem(L, item_addr(L, src, st->ndim, idx), st->dtype), se, et, at);
        } else {
            v = lower_convert(L, src, st, et, at);
        }
        lower_store_elem(L, item_addr(L, dst, dt->ndim, idx), dt->dtype, v);
        return;
    }
    LLVMValueRef n = LLVMBuildExtractValue(B, LLVMBuildExtractValue(B, dst, 1, ""), (unsigned)k, "");
    LLVMValueRef slot = lower_alloca(L, L->t_i64, "slice.i");
    LLVMBuildStore(B, i64c(L, 0), slot);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->C, L->fn, "slice.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, L->fn, "slice.body");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "slice.end");
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, head);
    LLVMValueRef i = LLVMBuildLoad2(B, L->t_i64, slot, "");
    LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, i, n, ""), body, end);
    LLVMPositionBuilderAtEnd(B, body);
    idx[k] = i;
    store_loop(L, dst, dt, src, st, idx, k + 1, at);
    LLVMBuildStore(B, LLVMBuildNSWAdd(B, LLVMBuildLoad2(B, L->t_i64, slot, ""), i64c(L, 1), ""), slot);
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, end);
}

void lower_slice_store(Lower *L, AstNode *target, LLVMValueRef v, const JType *vt) {
    LLVMBuilderRef B = L->B;
    AstNode *an = target->u.subscript.value;
    const JType *at = lower_info(L, an)->type, *view_t = lower_info(L, target)->type;
    LLVMValueRef view = lower_slice(L, target, lower_expr(L, an), at, view_t);
    if (vt->kind == JK_ARRAY) {
        /* extents must match (Numba raises ValueError there; a kernel thread leaves) */
        LLVMValueRef ds = LLVMBuildExtractValue(B, view, 1, ""), ss = LLVMBuildExtractValue(B, v, 1, "");
        LLVMValueRef same = LLVMConstInt(L->t_i1, 1, 0);
        for (int k = 0; k < view_t->ndim; k++)
            same = LLVMBuildAnd(B, same, LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildExtractValue(B, ds, (unsigned)k, ""),
                                                       LLVMBuildExtractValue(B, ss, (unsigned)k, ""), ""), "");
        LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(L->C, L->fn, "slice.badshape");
        LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(L->C, L->fn, "slice.copy");
        LLVMBuildCondBr(B, same, ok, bad);
        LLVMPositionBuilderAtEnd(B, bad);
        if (L->ret_slot) LLVMBuildStore(B, LLVMConstNull(LLVMGetAllocatedType(L->ret_slot)), L->ret_slot);
        LLVMBuildBr(B, L->ret_bb);
        LLVMPositionBuilderAtEnd(B, ok);
    }
    LLVMValueRef idx[ND_MAXDIM];
    store_loop(L, view, view_t, v, vt, idx, 0, target);
}
