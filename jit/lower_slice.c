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
    /* items: ceil((b - a) / step) when positive, as Python counts them */
    LLVMValueRef span = sel(L, up, LLVMBuildSub(B, b, a, ""), LLVMBuildSub(B, a, b, ""));
    LLVMValueRef mag = sel(L, up, st, LLVMBuildNeg(B, st, ""));
    LLVMValueRef n = LLVMBuildSDiv(B, LLVMBuildAdd(B, span, LLVMBuildSub(B, mag, i64c(L, 1), ""), ""), mag, "");
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
