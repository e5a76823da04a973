/*
** lower_is.c — `a is b` / `a is not b` as infer_is.c decided it: a
** constant, == on two values of one immutable type, or for two arrays the
** same view (data pointer, shape and strides all equal). The if statement
** of a constant test lowers only its live branch (lower_static_condition).
*/
#include "target.h"

int lower_static_condition(Lower *L, AstNode *test) {
    if (test->kind != AST_COMPARE) return -1;
    JInfo *i = jf_info(L->f, test);
    if (!i || i->builtin != JB_IS) return -1;
    return i->shape[0] == IS_TRUE ? 1 : i->shape[0] == IS_FALSE ? 0 : -1;
}

/* Whether a block ends in return / break / continue (as infer_is.c decides it). */
static bool branch_exits(const AstList *body) {
    if (!body->len) return false;
    AstKind k = body->items[body->len - 1]->kind;
    return k == AST_RETURN || k == AST_BREAK || k == AST_CONTINUE;
}

bool lower_static_exit(Lower *L, AstNode *s) {
    if (s->kind != AST_IF) return false;
    int known = lower_static_condition(L, s->u.if_.test);
    return known >= 0 && branch_exits(known ? &s->u.if_.body : &s->u.if_.orelse);
}

static LLVMValueRef same_view(Lower *L, LLVMValueRef a, LLVMValueRef b, const JType *t) {
    LLVMBuilderRef B = L->B;
    LLVMValueRef r = LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildExtractValue(B, a, 0, ""), LLVMBuildExtractValue(B, b, 0, ""), "");
    for (unsigned part = 1; part <= 2; part++) {
        LLVMValueRef da = LLVMBuildExtractValue(B, a, part, ""), db = LLVMBuildExtractValue(B, b, part, "");
        for (int k = 0; k < t->ndim; k++) {
            LLVMValueRef e = LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildExtractValue(B, da, (unsigned)k, ""),
                                           LLVMBuildExtractValue(B, db, (unsigned)k, ""), "");
            r = LLVMBuildAnd(B, r, e, "");
        }
    }
    return r;
}

LLVMValueRef lower_is(Lower *L, AstNode *n, JInfo *info) {
    bool negate = info->shape[1] != 0;
    switch ((JitIs)info->shape[0]) {
    case IS_TRUE: return LLVMConstInt(L->t_i1, 1, 0);
    case IS_FALSE: return LLVMConstInt(L->t_i1, 0, 0);
    default: break;
    }
    AstNode *an = n->u.compare.left, *bn = n->u.compare.comparators.items[0];
    const JType *t = lower_info(L, an)->type;
    LLVMValueRef a = lower_expr(L, an), b = lower_expr(L, bn);
    LLVMValueRef r;
    if (info->shape[0] == IS_SAME_VIEW) r = same_view(L, a, b, t);
    else if (jt_is_complex(t)) r = lower_complex_eq(L, a, b, false);
    else if (jt_is_float(t)) r = LLVMBuildFCmp(L->B, LLVMRealOEQ, a, b, "");
    else r = LLVMBuildICmp(L->B, LLVMIntEQ, a, b, "");
    return negate ? LLVMBuildNot(L->B, r, "") : r;
}
