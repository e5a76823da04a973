/*
** lower_reshape.c — a.reshape(shape) of a C-contiguous array
** (infer_array_methods.c): the same data with the new extents and C
** strides. One extent may be -1 (the rest of the size). When the new shape
** does not hold exactly the array's elements, where Numba raises
** NotImplementedError("incompatible shape for array"), the thread leaves
** the function (what a raised exception does in a kernel without debug).
*/
#include "target.h"

LLVMValueRef lower_reshape(Lower *L, AstNode *n, JInfo *info) {
    LLVMBuilderRef B = L->B;
    const JType *rt = info->type, *i64 = jt_scalar(L->vm, JK_INT64);
    AstNode *an = n->u.call.func->u.attr.value;
    const JType *at = lower_info(L, an)->type;
    LLVMValueRef arr = lower_expr(L, an);
    AstList *args = &n->u.call.args;
    LLVMValueRef dims[ND_MAXDIM];
    int nd = rt->ndim;
    if (args->len == 1) {
        const JType *t = lower_info(L, args->items[0])->type;
        LLVMValueRef v = lower_expr(L, args->items[0]);
        for (int k = 0; k < nd; k++)
            dims[k] = t->kind == JK_TUPLE ? lower_convert(L, LLVMBuildExtractValue(B, v, (unsigned)k, ""), t->elems[k], i64, n)
                                          : lower_convert(L, v, t, i64, n);
    } else {
        for (int k = 0; k < nd; k++) dims[k] = lower_expr_as(L, args->items[k], i64);
    }
    /* the old size, and the product of the new extents other than -1 */
    LLVMValueRef shape = LLVMBuildExtractValue(B, arr, 1, "");
    LLVMValueRef size = LLVMConstInt(L->t_i64, 1, 0), known = LLVMConstInt(L->t_i64, 1, 0);
    LLVMValueRef minus1 = LLVMConstInt(L->t_i64, (unsigned long long)-1, 1), zero = LLVMConstInt(L->t_i64, 0, 0);
    LLVMValueRef nunknown = zero, bad = LLVMConstInt(L->t_i1, 0, 0);
    for (int k = 0; k < at->ndim; k++) size = LLVMBuildMul(B, size, LLVMBuildExtractValue(B, shape, (unsigned)k, ""), "");
    for (int k = 0; k < nd; k++) {
        LLVMValueRef is_unknown = LLVMBuildICmp(B, LLVMIntEQ, dims[k], minus1, "");
        nunknown = LLVMBuildAdd(B, nunknown, LLVMBuildZExt(B, is_unknown, L->t_i64, ""), "");
        bad = LLVMBuildOr(B, bad, LLVMBuildAnd(B, LLVMBuildNot(B, is_unknown, ""),
                                               LLVMBuildICmp(B, LLVMIntSLT, dims[k], zero, ""), ""), "");
        known = LLVMBuildMul(B, known, LLVMBuildSelect(B, is_unknown, LLVMConstInt(L->t_i64, 1, 0), dims[k], ""), "");
    }
    /* -1: size / known, which must divide exactly */
    LLVMValueRef safe = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, known, zero, ""), LLVMConstInt(L->t_i64, 1, 0), known, "");
    LLVMValueRef rest = LLVMBuildSDiv(B, size, safe, "");
    LLVMValueRef one_unknown = LLVMBuildICmp(B, LLVMIntEQ, nunknown, LLVMConstInt(L->t_i64, 1, 0), "");
    bad = LLVMBuildOr(B, bad, LLVMBuildICmp(B, LLVMIntUGT, nunknown, LLVMConstInt(L->t_i64, 1, 0), ""), "");
    LLVMValueRef fits = LLVMBuildSelect(B, one_unknown,
                                        LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntNE, known, zero, ""),
                                                     LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildMul(B, rest, known, ""), size, ""), ""),
                                        LLVMBuildICmp(B, LLVMIntEQ, known, size, ""), "");
    bad = LLVMBuildOr(B, bad, LLVMBuildNot(B, fits, ""), "");
    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(L->C, L->fn, "reshape.bad");
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(L->C, L->fn, "reshape.ok");
    LLVMBuildCondBr(B, bad, fail, ok);
    LLVMPositionBuilderAtEnd(B, fail);
    if (L->ret_slot) LLVMBuildStore(B, LLVMConstNull(LLVMGetAllocatedType(L->ret_slot)), L->ret_slot);
    LLVMBuildBr(B, L->ret_bb);
    LLVMPositionBuilderAtEnd(B, ok);
    LLVMTypeRef dt = LLVMArrayType2(L->t_i64, (uint64_t)nd);
    LLVMValueRef ns = LLVMGetUndef(dt), nt = LLVMGetUndef(dt);
    LLVMValueRef stride = LLVMConstInt(L->t_i64, dtype_itemsize(rt->dtype), 0);
    for (int k = nd - 1; k >= 0; k--) {
        LLVMValueRef d = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, dims[k], minus1, ""), rest, dims[k], "");
        ns = LLVMBuildInsertValue(B, ns, d, (unsigned)k, "");
        nt = LLVMBuildInsertValue(B, nt, stride, (unsigned)k, "");
        stride = LLVMBuildMul(B, stride, d, "");
    }
    LLVMValueRef r = LLVMGetUndef(lower_type(L, rt));
    r = LLVMBuildInsertValue(B, r, LLVMBuildExtractValue(B, arr, 0, ""), 0, "");
    r = LLVMBuildInsertValue(B, r, ns, 1, "");
    return LLVMBuildInsertValue(B, r, nt, 2, "");
}
