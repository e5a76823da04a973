/*
** lower_warp_match.c — cuda.match_any_sync / match_all_sync and
** cuda.lanemask_lt (typed in jit/infer_warp_match.c).
**
** PTX: match.any.sync / match.all.sync (sm_70+) through the NVVM
** intrinsics; the CPU device: gpy_cpu_warp ops 10 (match_any) and 11
** (match_all, which returns the matching lanes or 0: the predicate is "not
** 0", since the calling lane is always among them). lanemask_lt is
** (1 << laneid) - 1 on both targets.
*/
#include <stdio.h>

#include "target.h"

LLVMValueRef lower_warp_match(Lower *L, AstNode *n, JInfo *info) {
    LLVMBuilderRef B = L->B;
    const JType *u32 = jt_scalar(L->vm, JK_UINT32);
    if (info->builtin == JB_LANEMASK_LT) {
        LLVMValueRef lane = L->tg->sreg(L, SREG_LANEID, 0);
        LLVMValueRef bit = LLVMBuildShl(B, LLVMConstInt(L->t_i32, 1, 0), lane, "");
        return lower_convert(L, LLVMBuildSub(B, bit, LLVMConstInt(L->t_i32, 1, 0), ""), u32, info->type, n);
    }
    bool all = info->builtin == JB_MATCH_ALL;
    const JType *t = info->op_type;
    LLVMTypeRef ty = lower_type(L, t);
    bool wide = ty == L->t_i64 || ty == L->t_f64;
    LLVMTypeRef ity = wide ? L->t_i64 : L->t_i32;
    LLVMValueRef mask = lower_expr_as(L, n->u.call.args.items[0], u32);
    LLVMValueRef v = lower_expr_as(L, n->u.call.args.items[1], t);
    if (jt_is_float(t)) v = LLVMBuildBitCast(B, v, ity, "");
    LLVMValueRef bits, pred;
    if (L->tg->kind == JIT_TARGET_PTX) {
        char name[48];
        snprintf(name, sizeof name, "llvm.nvvm.match.%s.sync.i%d%s", all ? "all" : "any", wide ? 64 : 32,
                 all ? "p" : "");
        LLVMValueRef a[2] = {mask, v};
        LLVMValueRef r = lower_intrinsic(L, name, NULL, 0, a, 2);
        if (!all) return lower_convert(L, r, u32, info->type, n);
        bits = LLVMBuildExtractValue(B, r, 0, "");
        pred = LLVMBuildExtractValue(B, r, 1, "");
    } else {
        LLVMTypeRef pt[5] = {L->t_ptr, L->t_i32, L->t_i32, L->t_i64, L->t_i32};
        LLVMValueRef a[5] = {L->ctx, LLVMConstInt(L->t_i32, all ? 11 : 10, 0), mask,
                             wide ? v : LLVMBuildZExt(B, v, L->t_i64, ""), LLVMConstInt(L->t_i32, 0, 0)};
        bits = LLVMBuildTrunc(B, lower_call_named(L, "gpy_cpu_warp", L->t_i64, pt, a, 5, false), L->t_i32, "");
        if (!all) return lower_convert(L, bits, u32, info->type, n);
        pred = LLVMBuildICmp(B, LLVMIntNE, bits, LLVMConstInt(L->t_i32, 0, 0), "");
    }
    LLVMValueRef tup = LLVMGetUndef(lower_type(L, info->type));
    tup = LLVMBuildInsertValue(B, tup, bits, 0, "");
    tup = LLVMBuildInsertValue(B, tup, pred, 1, ""); /* bool registers are i1 */
    return tup;
}
