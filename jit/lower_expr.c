/*
** lower_expr.c — expressions: names, literals, operators with Python's
** (Numba's) semantics, comparisons, boolean operators, array indexing,
** tuples and device-function calls.
*/
#include <string.h>

#include "int_literal.h"
#include "target.h"

LLVMValueRef lower_fm(Lower *L, LLVMValueRef v) {
    if (L->fastmath && v && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
        LLVMSetFastMathFlags(v, LLVMFastMathAll);
    return v;
}

void lower_open_block(Lower *L) {
    if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->B)))
        LLVMPositionBuilderAtEnd(L->B, LLVMAppendBasicBlockInContext(L->C, L->fn, "dead"));
}

LLVMValueRef lower_sreg64(Lower *L, JSreg which, int dim) {
    return LLVMBuildSExt(L->B, L->tg->sreg(L, which, dim), L->t_i64, "");
}

static bool is_signed(const JType *t) { return t->kind >= JK_INT8 && t->kind <= JK_INT64; }

LLVMValueRef lower_expr_as(Lower *L, AstNode *n, const JType *to) {
    LLVMValueRef v = lower_expr(L, n);
    return lower_convert(L, v, lower_info(L, n)->type, to, n);
}

/* ---------------------------------------------------------- arithmetic */

/* Python floor division and modulo on integers; division by zero gives 0
** (Numba's numpy error model on the GPU). b_nonneg: b is known >= 0, so
** there is no -1 divisor to special-case, and the result needs the fix-up
** exactly when the remainder is negative. */
static LLVMValueRef int_divmod(Lower *L, LLVMValueRef a, LLVMValueRef b, const JType *t, bool want_mod,
                               bool b_nonneg) {
    LLVMBuilderRef B = L->B;
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMConstNull(ty), one = LLVMConstInt(ty, 1, 0);
    LLVMValueRef bz = LLVMBuildICmp(B, LLVMIntEQ, b, zero, "");
    if (!is_signed(t)) {
        LLVMValueRef sb = LLVMBuildSelect(B, bz, one, b, "");
        LLVMValueRef r = want_mod ? LLVMBuildURem(B, a, sb, "") : LLVMBuildUDiv(B, a, sb, "");
        return LLVMBuildSelect(B, bz, zero, r, "");
    }
    if (b_nonneg) {
        LLVMValueRef sb = LLVMBuildSelect(B, bz, one, b, "");
        LLVMValueRef r = want_mod ? LLVMBuildSRem(B, a, sb, "") : LLVMBuildSDiv(B, a, sb, "");
        LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, want_mod ? r : LLVMBuildSRem(B, a, sb, ""), zero, "");
        if (want_mod) /* b == 0 divides by 1: the remainder is already 0 */
            return LLVMBuildSelect(B, neg, LLVMBuildAdd(B, r, b, ""), r, "");
        r = LLVMBuildSelect(B, neg, LLVMBuildSub(B, r, one, ""), r, "");
        return LLVMBuildSelect(B, bz, zero, r, "");
    }
    LLVMValueRef m1 = LLVMConstAllOnes(ty);
    LLVMValueRef bm1 = LLVMBuildICmp(B, LLVMIntEQ, b, m1, "");
    LLVMValueRef special = LLVMBuildOr(B, bz, bm1, "");
    LLVMValueRef sb = LLVMBuildSelect(B, special, one, b, "");
    LLVMValueRef q = LLVMBuildSDiv(B, a, sb, "");
    LLVMValueRef r = LLVMBuildSRem(B, a, sb, "");
    /* adjust toward -inf when the remainder's sign differs from the divisor's */
    LLVMValueRef rnz = LLVMBuildICmp(B, LLVMIntNE, r, zero, "");
    LLVMValueRef diff = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildXor(B, r, b, ""), zero, "");
    LLVMValueRef adj = LLVMBuildAnd(B, rnz, diff, "");
    if (want_mod) {
        r = LLVMBuildSelect(B, adj, LLVMBuildAdd(B, r, b, ""), r, "");
        return LLVMBuildSelect(B, bz, zero, r, "");
    }
    q = LLVMBuildSelect(B, adj, LLVMBuildSub(B, q, one, ""), q, "");
    q = LLVMBuildSelect(B, bm1, LLVMBuildNeg(B, a, ""), q, "");
    return LLVMBuildSelect(B, bz, zero, q, "");
}

static LLVMValueRef fcmp(Lower *L, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFCmp(L->B, p, a, b, "");
}

static LLVMValueRef copysign_of(Lower *L, LLVMValueRef mag, LLVMValueRef sgn) {
    LLVMTypeRef ty = LLVMTypeOf(mag);
    LLVMValueRef args[2] = {mag, sgn};
    return lower_intrinsic(L, "llvm.copysign", &ty, 1, args, 2);
}

/* Python's float floor division / modulo (CPython's float_divmod); b == 0
** gives numpy's results (a/b, nan). */
static LLVMValueRef float_divmod(Lower *L, LLVMValueRef a, LLVMValueRef b, bool want_mod) {
    LLVMBuilderRef B = L->B;
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMConstReal(ty, 0.0);
    LLVMValueRef mod = lower_fm(L, LLVMBuildFRem(B, a, b, ""));
    LLVMValueRef bz = fcmp(L, LLVMRealOEQ, b, zero);
    LLVMValueRef modnz = fcmp(L, LLVMRealUNE, mod, zero);
    LLVMValueRef bneg = fcmp(L, LLVMRealOLT, b, zero);
    LLVMValueRef mneg = fcmp(L, LLVMRealOLT, mod, zero);
    LLVMValueRef fix = LLVMBuildAnd(B, modnz, LLVMBuildXor(B, bneg, mneg, ""), "");
    if (want_mod) {
        LLVMValueRef m = LLVMBuildSelect(B, fix, lower_fm(L, LLVMBuildFAdd(B, mod, b, "")), mod, "");
        m = LLVMBuildSelect(B, modnz, m, copysign_of(L, zero, b), "");
        return LLVMBuildSelect(B, bz, mod, m, "");
    }
    LLVMValueRef div = lower_fm(L, LLVMBuildFDiv(B, lower_fm(L, LLVMBuildFSub(B, a, mod, "")), b, ""));
    div = LLVMBuildSelect(B, fix, lower_fm(L, LLVMBuildFSub(B, div, LLVMConstReal(ty, 1.0), "")), div, "");
    LLVMValueRef fd = lower_intrinsic(L, "llvm.floor", &ty, 1, &div, 1);
    LLVMValueRef up = fcmp(L, LLVMRealOGT, lower_fm(L, LLVMBuildFSub(B, div, fd, "")), LLVMConstReal(ty, 0.5));
    fd = LLVMBuildSelect(B, up, lower_fm(L, LLVMBuildFAdd(B, fd, LLVMConstReal(ty, 1.0), "")), fd, "");
    LLVMValueRef q = lower_fm(L, LLVMBuildFDiv(B, a, b, ""));
    LLVMValueRef divnz = fcmp(L, LLVMRealUNE, div, zero);
    LLVMValueRef r = LLVMBuildSelect(B, divnz, fd, copysign_of(L, zero, q), "");
    return LLVMBuildSelect(B, bz, q, r, "");
}

/* Integer power by squaring; negative exponents give 0 except for bases
** 1 and -1 (Numba's int ** negative int is undefined; this is total). */
static LLVMValueRef int_pow(Lower *L, LLVMValueRef a, LLVMValueRef e, const JType *t) {
    LLVMBuilderRef B = L->B;
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMConstNull(ty), one = LLVMConstInt(ty, 1, 0);
    LLVMValueRef r = lower_alloca(L, ty, "pow.r"), base = lower_alloca(L, ty, "pow.b"),
                 ex = lower_alloca(L, ty, "pow.e");
    LLVMBuildStore(B, one, r);
    LLVMBuildStore(B, a, base);
    LLVMBuildStore(B, e, ex);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->C, L->fn, "pow.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, L->fn, "pow.body");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->C, L->fn, "pow.done");
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, head);
    LLVMValueRef ev = LLVMBuildLoad2(B, ty, ex, "");
    LLVMBuildCondBr(B, LLVMBuildICmp(B, is_signed(t) ? LLVMIntSGT : LLVMIntUGT, ev, zero, ""), body, done);
    LLVMPositionBuilderAtEnd(B, body);
    LLVMValueRef bv = LLVMBuildLoad2(B, ty, base, "");
    LLVMValueRef rv = LLVMBuildLoad2(B, ty, r, "");
    LLVMValueRef odd = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, ev, one, ""), zero, "");
    LLVMBuildStore(B, LLVMBuildSelect(B, odd, LLVMBuildMul(B, rv, bv, ""), rv, ""), r);
    LLVMBuildStore(B, LLVMBuildMul(B, bv, bv, ""), base);
    LLVMBuildStore(B, LLVMBuildLShr(B, ev, one, ""), ex);
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, done);
    LLVMValueRef res = LLVMBuildLoad2(B, ty, r, "");
    if (is_signed(t)) {
        LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, e, zero, "");
        LLVMValueRef m1 = LLVMConstAllOnes(ty);
        LLVMValueRef eodd = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, e, one, ""), zero, "");
        LLVMValueRef negres = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, a, one, ""), one,
            LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, a, m1, ""),
                            LLVMBuildSelect(B, eodd, m1, one, ""), zero, ""), "");
        res = LLVMBuildSelect(B, neg, negres, res, "");
    }
    return res;
}

/* a op b, both already of type t; the result is of type t. */
LLVMValueRef lower_binop(Lower *L, BinOp op, LLVMValueRef a, LLVMValueRef b, const JType *t,
                         const AstNode *at) {
    LLVMBuilderRef B = L->B;
    if (jt_is_complex(t)) return lower_complex_binop(L, op, a, b, t, at);
    if (t->kind == JK_FLOAT16 && (op == BINOP_FLOORDIV || op == BINOP_MOD || op == BINOP_POW)) {
        /* no half-precision frem/pow on every target: compute in float32 */
        const JType *f32 = jt_scalar(L->vm, JK_FLOAT32);
        LLVMValueRef r = lower_binop(L, op, LLVMBuildFPExt(B, a, L->t_f32, ""), LLVMBuildFPExt(B, b, L->t_f32, ""),
                                     f32, at);
        return LLVMBuildFPTrunc(B, r, L->t_f16, "");
    }
    if (jt_is_float(t)) {
        switch (op) {
        case BINOP_ADD: return lower_fm(L, LLVMBuildFAdd(B, a, b, ""));
        case BINOP_SUB: return lower_fm(L, LLVMBuildFSub(B, a, b, ""));
        case BINOP_MUL: return lower_fm(L, LLVMBuildFMul(B, a, b, ""));
        case BINOP_TRUEDIV: return lower_fm(L, LLVMBuildFDiv(B, a, b, ""));
        case BINOP_FLOORDIV: return float_divmod(L, a, b, false);
        case BINOP_MOD: return float_divmod(L, a, b, true);
        case BINOP_POW: {
            LLVMValueRef args[2] = {a, b};
            return lower_math(L, JB_MATH_POW, args, 2, t);
        }
        default: break;
        }
    } else if (jt_is_int(t) || t->kind == JK_BOOL) {
        bool s = is_signed(t);
        switch (op) {
        case BINOP_ADD: return LLVMBuildAdd(B, a, b, "");
        case BINOP_SUB: return LLVMBuildSub(B, a, b, "");
        case BINOP_MUL: return LLVMBuildMul(B, a, b, "");
        case BINOP_FLOORDIV: return int_divmod(L, a, b, t, false, false);
        case BINOP_MOD: return int_divmod(L, a, b, t, true, false);
        case BINOP_POW: return int_pow(L, a, b, t);
        case BINOP_LSHIFT: return LLVMBuildShl(B, a, b, "");
        case BINOP_RSHIFT: return s ? LLVMBuildAShr(B, a, b, "") : LLVMBuildLShr(B, a, b, "");
        case BINOP_AND: return LLVMBuildAnd(B, a, b, "");
        case BINOP_OR: return LLVMBuildOr(B, a, b, "");
        case BINOP_XOR: return LLVMBuildXor(B, a, b, "");
        default: break;
        }
    }
    char tb[128];
    lower_fail(L, at, "unsupported operator on %s", jt_name(t, tb, sizeof tb));
}

/* One comparison a op b computed in type t, as an i1. */
static LLVMValueRef compare(Lower *L, CmpOp op, LLVMValueRef a, LLVMValueRef b, const JType *t,
                            const AstNode *at) {
    if (jt_is_complex(t) && (op == CMP_EQ || op == CMP_NE)) return lower_complex_eq(L, a, b, op == CMP_NE);
    if (jt_is_float(t)) {
        static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                               LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
        if (op <= CMP_GE) return lower_fm(L, LLVMBuildFCmp(L->B, fp[op], a, b, ""));
    } else if (jt_is_int(t) || t->kind == JK_BOOL) {
        bool s = is_signed(t);
        LLVMIntPredicate ip[] = {LLVMIntEQ, LLVMIntNE, s ? LLVMIntSLT : LLVMIntULT,
                                 s ? LLVMIntSLE : LLVMIntULE, s ? LLVMIntSGT : LLVMIntUGT,
                                 s ? LLVMIntSGE : LLVMIntUGE};
        if (op <= CMP_GE) return LLVMBuildICmp(L->B, ip[op], a, b, "");
    } else if (t->kind == JK_NONE && (op == CMP_IS || op == CMP_EQ)) {
        return LLVMConstInt(L->t_i1, 1, 0);
    } else if (t->kind == JK_NONE && (op == CMP_ISNOT || op == CMP_NE)) {
        return LLVMConstInt(L->t_i1, 0, 0);
    }
    char tb[128];
    lower_fail(L, at, "unsupported comparison on %s", jt_name(t, tb, sizeof tb));
}

static LLVMValueRef lower_compare(Lower *L, AstNode *n, JInfo *info) {
    LLVMBuilderRef B = L->B;
    AstNode *left = n->u.compare.left, *lnode = left;
    LLVMValueRef lv = lower_expr(L, left);
    const JType *lt = lower_info(L, left)->type;
    int nc = n->u.compare.comparators.len;
    LLVMValueRef res = NULL;
    LLVMValueRef slot = nc > 1 ? lower_alloca(L, L->t_i1, "cmp") : NULL;
    LLVMBasicBlockRef end = nc > 1 ? LLVMAppendBasicBlockInContext(L->C, L->fn, "cmp.end") : NULL;
    for (int i = 0; i < nc; i++) {
        AstNode *rn = n->u.compare.comparators.items[i];
        LLVMValueRef rv = lower_expr(L, rn);
        const JType *rt = lower_info(L, rn)->type;
        const JType *ct = info->cmp_types && info->cmp_types[i] ? info->cmp_types[i]
                        : info->op_type ? info->op_type : lt;
        CmpOp op = n->u.compare.ops[i];
        LLVMValueRef c;
        if ((op == CMP_IS || op == CMP_ISNOT) && (lt->kind == JK_NONE || rt->kind == JK_NONE)) {
            bool same = lt->kind == rt->kind;
            c = LLVMConstInt(L->t_i1, (op == CMP_IS) == same, 0);
        } else {
            LLVMValueRef a = lower_convert(L, lv, lt, ct, n), b = lower_convert(L, rv, rt, ct, n);
            if (ct->kind == JK_INT64 && op <= CMP_GE && lower_fits_i32(L, lnode) && lower_fits_i32(L, rn)) {
                /* both sides fit in 32 bits (32-bit index variant): compare there */
                a = LLVMBuildTrunc(B, a, L->t_i32, "");
                b = LLVMBuildTrunc(B, b, L->t_i32, "");
            }
            c = compare(L, op, a, b, ct, n);
        }
        if (nc == 1) {
            res = c;
            break;
        }
        LLVMBuildStore(B, c, slot);
        if (i == nc - 1) {
            LLVMBuildBr(B, end);
        } else {
            LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(L->C, L->fn, "cmp.next");
            LLVMBuildCondBr(B, c, next, end);
            LLVMPositionBuilderAtEnd(B, next);
        }
        lv = rv;
        lt = rt;
        lnode = rn;
    }
    if (nc > 1) {
        LLVMPositionBuilderAtEnd(B, end);
        res = LLVMBuildLoad2(B, L->t_i1, slot, "");
    }
    return lower_convert(L, res, jt_scalar(L->vm, JK_BOOL), info->type, n);
}

/* a and b / a or b: the value of the operand that decides, converted to the
** unified result type. */
static LLVMValueRef lower_boolop(Lower *L, AstNode *n, JInfo *info) {
    LLVMBuilderRef B = L->B;
    const JType *rt = info->type;
    LLVMTypeRef ty = lower_type(L, rt);
    LLVMValueRef slot = lower_alloca(L, ty, "boolop");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "boolop.end");
    int nv = n->u.boolop.values.len;
    for (int i = 0; i < nv; i++) {
        AstNode *vn = n->u.boolop.values.items[i];
        LLVMValueRef v = lower_expr(L, vn);
        const JType *vt = lower_info(L, vn)->type;
        LLVMBuildStore(B, lower_convert(L, v, vt, rt, vn), slot);
        if (i == nv - 1) {
            LLVMBuildBr(B, end);
            break;
        }
        LLVMValueRef truth = lower_truthy(L, v, vt);
        LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(L->C, L->fn, "boolop.next");
        if (n->u.boolop.is_and) LLVMBuildCondBr(B, truth, next, end);
        else LLVMBuildCondBr(B, truth, end, next);
        LLVMPositionBuilderAtEnd(B, next);
    }
    LLVMPositionBuilderAtEnd(B, end);
    return LLVMBuildLoad2(B, ty, slot, "");
}

static LLVMValueRef lower_unary(Lower *L, AstNode *n, JInfo *info) {
    AstNode *on = n->u.unary.operand;
    const JType *ot = lower_info(L, on)->type;
    if (n->u.unary.op == UNOP_NOT) {
        LLVMValueRef v = lower_truthy(L, lower_expr(L, on), ot);
        v = LLVMBuildXor(L->B, v, LLVMConstInt(L->t_i1, 1, 0), "");
        return lower_convert(L, v, jt_scalar(L->vm, JK_BOOL), info->type, n);
    }
    const JType *t = info->op_type ? info->op_type : info->type;
    LLVMValueRef v = lower_expr_as(L, on, t), r;
    switch (n->u.unary.op) {
    case UNOP_NEG:
        if (jt_is_complex(t)) {
            r = lower_complex_neg(L, v, t);
            break;
        }
        r = jt_is_float(t) ? lower_fm(L, LLVMBuildFNeg(L->B, v, "")) : LLVMBuildNeg(L->B, v, "");
        break;
    case UNOP_POS: r = v; break;
    default: /* INVERT */
        if (jt_is_float(t)) lower_fail(L, n, "bad operand type for unary ~: float");
        r = LLVMBuildXor(L->B, v, LLVMConstAllOnes(LLVMTypeOf(v)), "");
        break;
    }
    return lower_convert(L, r, t, info->type, n);
}

static LLVMValueRef lower_ifexp(Lower *L, AstNode *n, JInfo *info) {
    LLVMBuilderRef B = L->B;
    AstNode *tn = n->u.ifexp.test;
    int known = lower_static_condition(L, tn); /* `x is None`: only the live branch was typed (lower_is.c) */
    if (known >= 0) return lower_expr_as(L, known ? n->u.ifexp.body : n->u.ifexp.orelse, info->type);
    LLVMValueRef c = lower_truthy(L, lower_expr(L, tn), lower_info(L, tn)->type);
    LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(L->C, L->fn, "if.t");
    LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(L->C, L->fn, "if.f");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "if.end");
    LLVMBuildCondBr(B, c, bt, bf);
    LLVMPositionBuilderAtEnd(B, bt);
    LLVMValueRef vt = lower_expr_as(L, n->u.ifexp.body, info->type);
    LLVMBasicBlockRef et = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, end);
    LLVMPositionBuilderAtEnd(B, bf);
    LLVMValueRef vf = lower_expr_as(L, n->u.ifexp.orelse, info->type);
    LLVMBasicBlockRef ef = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, end);
    LLVMPositionBuilderAtEnd(B, end);
    if (!vt || !vf) return NULL;
    LLVMValueRef phi = LLVMBuildPhi(B, lower_type(L, info->type), "");
    LLVMValueRef vals[2] = {vt, vf};
    LLVMBasicBlockRef bbs[2] = {et, ef};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

/* The 32-bit index variant: an int64 +, -, *, // or % computed in 32 bits
** when its operands and result are known to fit (lower_ranges.c), and //
** and % of a non-negative value by a positive one without Python's sign
** fix-up or zero guard. NULL when neither applies. */
static LLVMValueRef binop_narrow(Lower *L, AstNode *n, LLVMValueRef a, LLVMValueRef b) {
    BinOp op = n->u.binop.op;
    if (op != BINOP_ADD && op != BINOP_SUB && op != BINOP_MUL && op != BINOP_FLOORDIV && op != BINOP_MOD) return NULL;
    int64_t alo, ahi, blo, bhi;
    if (!lower_range(L, n->u.binop.left, &alo, &ahi) || !lower_range(L, n->u.binop.right, &blo, &bhi)) return NULL;
    bool fits = alo >= INT32_MIN && ahi <= INT32_MAX && blo >= INT32_MIN && bhi <= INT32_MAX &&
                lower_fits_i32(L, n);
    LLVMBuilderRef B = L->B;
    if ((op == BINOP_FLOORDIV || op == BINOP_MOD) && alo >= 0 && blo > 0) {
        if (fits) {
            a = LLVMBuildTrunc(B, a, L->t_i32, "");
            b = LLVMBuildTrunc(B, b, L->t_i32, "");
        }
        LLVMValueRef r = op == BINOP_MOD ? LLVMBuildURem(B, a, b, "") : LLVMBuildUDiv(B, a, b, "");
        return fits ? LLVMBuildZExt(B, r, L->t_i64, "") : r;
    }
    if (!fits) return NULL;
    a = LLVMBuildTrunc(B, a, L->t_i32, "");
    b = LLVMBuildTrunc(B, b, L->t_i32, "");
    LLVMValueRef r;
    switch (op) {
    case BINOP_ADD: r = LLVMBuildNSWAdd(B, a, b, ""); break;
    case BINOP_SUB: r = LLVMBuildNSWSub(B, a, b, ""); break;
    case BINOP_MUL: r = LLVMBuildNSWMul(B, a, b, ""); break;
    default: r = int_divmod(L, a, b, jt_scalar(L->vm, JK_INT32), op == BINOP_MOD, blo >= 0); break;
    }
    return LLVMBuildSExt(B, r, L->t_i64, "");
}

/* ------------------------------------------------------------- arrays */

/* The i64 index value idx (of type t), wrapped when negative; *raw (when
** not NULL) receives it before the wrap. */
static LLVMValueRef wrap_index_raw(Lower *L, LLVMValueRef idx, const JType *t, LLVMValueRef dim,
                                   const AstNode *at, LLVMValueRef *raw) {
    if (!jt_is_int(t) && t->kind != JK_BOOL) {
        char tb[128];
        lower_fail(L, at, "array index of type %s", jt_name(t, tb, sizeof tb));
    }
    LLVMValueRef i = lower_convert(L, idx, t, jt_scalar(L->vm, JK_INT64), at);
    if (raw) *raw = i;
    if (!is_signed(t)) return i;
    LLVMValueRef neg = LLVMBuildICmp(L->B, LLVMIntSLT, i, LLVMConstInt(L->t_i64, 0, 0), "");
    return LLVMBuildSelect(L->B, neg, LLVMBuildAdd(L->B, i, dim, ""), i, "");
}

static LLVMValueRef wrap_index(Lower *L, LLVMValueRef idx, const JType *t, LLVMValueRef dim,
                               const AstNode *at) {
    return wrap_index_raw(L, idx, t, dim, at, NULL);
}

/* ---- the 32-bit index variant (L->narrow, JitOptions.narrow_index)
** Every extent is below 2^31, so an in-bounds index fits in an i32 and so
** does the linear element index of an in-bounds C-order access (it is below
** the size). An out-of-bounds access is undefined in Numba's model (no
** bounds checks outside debug mode), so the 32-bit arithmetic may assume
** in-bounds: nsw on the Horner steps. Indices are truncated first; LLVM
** then evaluates the index expression itself in 32 bits. */

LLVMValueRef lower_narrow_extent(Lower *L, LLVMValueRef v64) {
    LLVMValueRef z = LLVMBuildZExt(L->B, LLVMBuildTrunc(L->B, v64, L->t_i32, ""), L->t_i64, "");
    if (LLVMIsAInstruction(z)) LLVMSetNNeg(z, 1);
    return z;
}

/* idx (of integer type t) as an i32, wrapped by dim32 when negative
** (unless known non-negative). */
static LLVMValueRef narrow_index(Lower *L, LLVMValueRef idx, const JType *t, LLVMValueRef dim32, bool nonneg,
                                 const AstNode *at) {
    LLVMBuilderRef B = L->B;
    if (!jt_is_int(t) && t->kind != JK_BOOL) {
        char tb[128];
        lower_fail(L, at, "array index of type %s", jt_name(t, tb, sizeof tb));
    }
    unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(idx));
    LLVMValueRef i = bits > 32 ? LLVMBuildTrunc(B, idx, L->t_i32, "")
                     : bits == 32 ? idx
                     : is_signed(t) ? LLVMBuildSExt(B, idx, L->t_i32, "") : LLVMBuildZExt(B, idx, L->t_i32, "");
    if (!is_signed(t) || nonneg) return i;
    LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, i, LLVMConstInt(L->t_i32, 0, 0), "");
    return LLVMBuildSelect(B, neg, LLVMBuildNSWAdd(B, i, dim32, ""), i, "");
}

static LLVMValueRef elem_addr_narrow(Lower *L, LLVMValueRef arr, const JType *at, LLVMValueRef *vals,
                                     const JType **types, const bool *nonneg, int nidx, const AstNode *node) {
    LLVMBuilderRef B = L->B;
    LLVMValueRef data = LLVMBuildExtractValue(B, arr, 0, "");
    LLVMValueRef shape = LLVMBuildExtractValue(B, arr, 1, "");
    if (at->layout == 'C') {
        LLVMValueRef lin = NULL;
        for (int k = 0; k < at->ndim; k++) {
            LLVMValueRef dim = LLVMBuildTrunc(B, LLVMBuildExtractValue(B, shape, (unsigned)k, ""), L->t_i32, "");
            LLVMValueRef ik = k < nidx ? narrow_index(L, vals[k], types[k], dim, nonneg[k], node) : LLVMConstInt(L->t_i32, 0, 0);
            lin = lin ? LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, lin, dim, ""), ik, "") : ik;
        }
        if (!lin) return data;
        LLVMValueRef lin64 = LLVMBuildZExt(B, lin, L->t_i64, "");
        if (LLVMIsAInstruction(lin64)) LLVMSetNNeg(lin64, 1);
        return LLVMBuildGEP2(B, lower_mem_type(L, jt_scalar(L->vm, (JKind)at->dtype)), data, &lin64, 1, "");
    }
    /* strided: 32-bit indices, 64-bit byte offsets (strides are not bounded) */
    LLVMValueRef strides = LLVMBuildExtractValue(B, arr, 2, "");
    LLVMValueRef off = NULL;
    for (int k = 0; k < nidx; k++) {
        LLVMValueRef dim = LLVMBuildTrunc(B, LLVMBuildExtractValue(B, shape, (unsigned)k, ""), L->t_i32, "");
        LLVMValueRef ik = LLVMBuildSExt(B, narrow_index(L, vals[k], types[k], dim, nonneg[k], node), L->t_i64, "");
        LLVMValueRef term = LLVMBuildMul(B, ik, LLVMBuildExtractValue(B, strides, (unsigned)k, ""), "");
        off = off ? LLVMBuildAdd(B, off, term, "") : term;
    }
    if (!off) return data;
    return LLVMBuildGEP2(B, L->t_i8, data, &off, 1, "");
}

/* Gathers the index values of a subscript: a tuple literal, a tuple value
** or a single scalar. Returns their count. nonneg[i]: index i is known to
** be >= 0 (32-bit index variant only). */
static int gather_indices(Lower *L, AstNode *index, LLVMValueRef *vals, const JType **types, bool *nonneg,
                          int max) {
    for (int i = 0; i < max; i++) nonneg[i] = false;
    if (index->kind == AST_TUPLE) {
        int n = index->u.seq.elts.len;
        if (n > max) lower_fail(L, index, "too many indices");
        for (int i = 0; i < n; i++) {
            AstNode *e = index->u.seq.elts.items[i];
            vals[i] = lower_expr(L, e);
            types[i] = lower_info(L, e)->type;
            nonneg[i] = lower_index_nonneg(L, e);
        }
        return n;
    }
    LLVMValueRef v = lower_expr(L, index);
    const JType *t = lower_info(L, index)->type;
    if (t->kind == JK_TUPLE) {
        if (t->n > max) lower_fail(L, index, "too many indices");
        for (int i = 0; i < t->n; i++) {
            vals[i] = LLVMBuildExtractValue(L->B, v, (unsigned)i, "");
            types[i] = t->elems[i];
        }
        return t->n;
    }
    vals[0] = v;
    types[0] = t;
    nonneg[0] = lower_index_nonneg(L, index);
    return 1;
}

static LLVMValueRef elem_addr_checked(Lower *L, LLVMValueRef arr, const JType *at, LLVMValueRef *vals,
                                      const JType **types, const bool *nonneg, int nidx, const AstNode *node);

/* Address of the element (or first element of the sub-array) selected by
** nidx leading indices. */
static LLVMValueRef elem_addr_n(Lower *L, LLVMValueRef arr, const JType *at, LLVMValueRef *vals,
                                const JType **types, const bool *nonneg, int nidx, const AstNode *node) {
    if (nidx > at->ndim) {
        char tb[128];
        lower_fail(L, node, "too many indices for %s", jt_name(at, tb, sizeof tb));
    }
    const AstNode *base = node->kind == AST_SUBSCRIPT                      ? node->u.subscript.value
                          : node->kind == AST_CALL && node->u.call.args.len ? node->u.call.args.items[0]
                                                                             : NULL;
    /* a dynamic shared array: checked as in debug mode, for this access only */
    bool was_debug = L->debug;
    if (!L->debug && lower_is_dyn_shared(L, base)) L->debug = true;
    LLVMValueRef a = elem_addr_checked(L, arr, at, vals, types, nonneg, nidx, node);
    L->debug = was_debug;
    return a;
}

static LLVMValueRef elem_addr_checked(Lower *L, LLVMValueRef arr, const JType *at, LLVMValueRef *vals,
                                      const JType **types, const bool *nonneg, int nidx, const AstNode *node) {
    LLVMBuilderRef B = L->B;
    if (L->narrow && !L->debug) return elem_addr_narrow(L, arr, at, vals, types, nonneg, nidx, node);
    LLVMValueRef data = LLVMBuildExtractValue(B, arr, 0, "");
    LLVMValueRef shape = LLVMBuildExtractValue(B, arr, 1, "");
    LLVMTypeRef et = lower_mem_type(L, jt_scalar(L->vm, (JKind)at->dtype));
    /* debug mode: the wrapped and raw indices and the dimensions, checked below */
    LLVMValueRef dbg_idx[32], dbg_raw[32], dbg_dim[32];
    if (at->layout == 'C') {
        /* linear element index by Horner's rule over the shape */
        LLVMValueRef lin = NULL;
        for (int k = 0; k < at->ndim; k++) {
            LLVMValueRef dim = LLVMBuildExtractValue(B, shape, (unsigned)k, "");
            LLVMValueRef ik = k < nidx ? wrap_index_raw(L, vals[k], types[k], dim, node, &dbg_raw[k])
                                       : LLVMConstInt(L->t_i64, 0, 0);
            if (k < nidx && k < 32) {
                dbg_idx[k] = ik;
                dbg_dim[k] = dim;
            }
            lin = lin ? LLVMBuildAdd(B, LLVMBuildMul(B, lin, dim, ""), ik, "") : ik;
        }
        lower_debug_bounds(L, dbg_idx, dbg_raw, dbg_dim, nidx, node);
        if (!lin) return data;
        return LLVMBuildGEP2(B, et, data, &lin, 1, "");
    }
    LLVMValueRef strides = LLVMBuildExtractValue(B, arr, 2, "");
    LLVMValueRef off = NULL;
    for (int k = 0; k < nidx; k++) {
        LLVMValueRef dim = LLVMBuildExtractValue(B, shape, (unsigned)k, "");
        LLVMValueRef ik = wrap_index_raw(L, vals[k], types[k], dim, node, &dbg_raw[k < 32 ? k : 31]);
        if (k < 32) {
            dbg_idx[k] = ik;
            dbg_dim[k] = dim;
        }
        LLVMValueRef term = LLVMBuildMul(B, ik, LLVMBuildExtractValue(B, strides, (unsigned)k, ""), "");
        off = off ? LLVMBuildAdd(B, off, term, "") : term;
    }
    lower_debug_bounds(L, dbg_idx, dbg_raw, dbg_dim, nidx, node);
    if (!off) return data;
    return LLVMBuildGEP2(B, L->t_i8, data, &off, 1, "");
}

LLVMValueRef lower_elem_addr(Lower *L, LLVMValueRef arr, const JType *at, AstNode *index,
                             const AstNode *node) {
    LLVMValueRef vals[32];
    const JType *types[32];
    bool nonneg[32];
    int n = gather_indices(L, index, vals, types, nonneg, 32);
    if (n != at->ndim) {
        char tb[128];
        lower_fail(L, node, "%s needs %d indices here, got %d", jt_name(at, tb, sizeof tb), at->ndim, n);
    }
    return elem_addr_n(L, arr, at, vals, types, nonneg, n, node);
}

LLVMValueRef lower_load_elem(Lower *L, LLVMValueRef addr, NDType dt) {
    const JType *t = jt_scalar(L->vm, (JKind)dt);
    LLVMValueRef v = LLVMBuildLoad2(L->B, lower_mem_type(L, t), addr, "");
    LLVMSetAlignment(v, (unsigned)dtype_itemsize(dt) / (jt_is_complex(t) ? 2 : 1)); /* complex: its parts' */
    if (dt == ND_BOOL) v = LLVMBuildICmp(L->B, LLVMIntNE, v, LLVMConstInt(L->t_i8, 0, 0), "");
    return v;
}

void lower_store_elem(Lower *L, LLVMValueRef addr, NDType dt, LLVMValueRef v) {
    if (dt == ND_BOOL) v = LLVMBuildZExt(L->B, v, L->t_i8, "");
    LLVMValueRef s = LLVMBuildStore(L->B, v, addr);
    LLVMSetAlignment(s, (unsigned)dtype_itemsize(dt) / (dt == ND_COMPLEX64 || dt == ND_COMPLEX128 ? 2 : 1));
}

/* Constant index of a tuple subscript (an int literal, maybe negated). */
static int const_index(Lower *L, AstNode *ix, int n) {
    int64_t v;
    if (ix->kind == AST_INT) v = ix->u.int_;
    else if (ix->kind == AST_UNARYOP && ix->u.unary.op == UNOP_NEG && ix->u.unary.operand->kind == AST_INT)
        v = -ix->u.unary.operand->u.int_;
    else return -1;
    if (v < 0) v += n;
    if (v < 0 || v >= n) lower_fail(L, ix, "tuple index out of range");
    return (int)v;
}

static LLVMValueRef lower_subscript(Lower *L, AstNode *n, JInfo *info) {
    AstNode *vn = n->u.subscript.value;
    LLVMValueRef v = lower_expr(L, vn);
    const JType *vt = lower_info(L, vn)->type;
    if (vt->kind == JK_TUPLE && info->builtin == JB_ARRAY_SLICE) { /* t[1:]: infer_slice.c */
        LLVMValueRef r = LLVMGetUndef(lower_type(L, info->type));
        for (int64_t k = 0; k < info->shape[2]; k++)
            r = LLVMBuildInsertValue(L->B, r, LLVMBuildExtractValue(L->B, v, (unsigned)(info->shape[0] + k * info->shape[1]), ""),
                                     (unsigned)k, "");
        return r;
    }
    if (vt->kind == JK_TUPLE) {
        int k = const_index(L, n->u.subscript.index, vt->n);
        if (k >= 0)
            return lower_convert(L, LLVMBuildExtractValue(L->B, v, (unsigned)k, ""), vt->elems[k], info->type, n);
        /* a variable index into a homogeneous tuple: through memory */
        const JType *it = lower_info(L, n->u.subscript.index)->type;
        LLVMValueRef slot = lower_alloca(L, lower_type(L, vt), "tup");
        LLVMBuildStore(L->B, v, slot);
        LLVMValueRef ix = wrap_index(L, lower_expr(L, n->u.subscript.index), it,
                                     LLVMConstInt(L->t_i64, (uint64_t)vt->n, 0), n);
        LLVMValueRef gi[2] = {LLVMConstInt(L->t_i32, 0, 0), ix};
        LLVMTypeRef at = LLVMArrayType2(lower_type(L, vt->elems[0]), (uint64_t)vt->n);
        LLVMValueRef p = LLVMBuildGEP2(L->B, at, slot, gi, 2, "");
        LLVMValueRef e = LLVMBuildLoad2(L->B, lower_type(L, vt->elems[0]), p, "");
        return lower_convert(L, e, vt->elems[0], info->type, n);
    }
    if (vt->kind != JK_ARRAY) {
        char tb[128];
        lower_fail(L, n, "cannot index %s", jt_name(vt, tb, sizeof tb));
    }
    if (info->builtin == JB_ARRAY_SLICE) return lower_slice(L, n, v, vt, info->type); /* lower_slice.c */
    LLVMValueRef vals[32];
    const JType *types[32];
    bool nonneg[32];
    int ni = gather_indices(L, n->u.subscript.index, vals, types, nonneg, 32);
    LLVMValueRef addr = elem_addr_n(L, v, vt, vals, types, nonneg, ni, n);
    if (ni == vt->ndim)
        return lower_convert(L, lower_load_elem(L, addr, vt->dtype), jt_scalar(L->vm, (JKind)vt->dtype),
                             info->type, n);
    /* a sub-array view: the remaining dimensions */
    const JType *rt = info->type;
    if (rt->kind != JK_ARRAY || rt->ndim != vt->ndim - ni)
        lower_fail(L, n, "internal error: bad type for a partial index");
    LLVMBuilderRef B = L->B;
    LLVMValueRef shape = LLVMBuildExtractValue(B, v, 1, ""), strides = LLVMBuildExtractValue(B, v, 2, "");
    LLVMTypeRef dims = LLVMArrayType2(L->t_i64, (uint64_t)rt->ndim);
    LLVMValueRef ns = LLVMGetUndef(dims), nt = LLVMGetUndef(dims);
    for (int k = 0; k < rt->ndim; k++) {
        ns = LLVMBuildInsertValue(B, ns, LLVMBuildExtractValue(B, shape, (unsigned)(ni + k), ""), (unsigned)k, "");
        nt = LLVMBuildInsertValue(B, nt, LLVMBuildExtractValue(B, strides, (unsigned)(ni + k), ""), (unsigned)k, "");
    }
    LLVMValueRef r = LLVMGetUndef(lower_type(L, rt));
    r = LLVMBuildInsertValue(B, r, addr, 0, "");
    r = LLVMBuildInsertValue(B, r, ns, 1, "");
    return LLVMBuildInsertValue(B, r, nt, 2, "");
}

static LLVMValueRef lower_tuple(Lower *L, AstNode *n, JInfo *info) {
    const JType *t = info->type;
    if (t->kind != JK_TUPLE || t->n != n->u.seq.elts.len)
        lower_fail(L, n, "internal error: tuple literal with a non-tuple type");
    LLVMValueRef v = LLVMGetUndef(lower_type(L, t));
    for (int i = 0; i < t->n; i++) {
        LLVMValueRef e = lower_expr_as(L, n->u.seq.elts.items[i], t->elems[i]);
        v = LLVMBuildInsertValue(L->B, v, e, (unsigned)i, "");
    }
    return v;
}

static LLVMValueRef lower_device_call(Lower *L, AstNode *n, JInfo *info) {
    JFunc *g = info->callee;
    if (!g) lower_fail(L, n, "internal error: device call without a callee");
    if (n->u.call.keywords.len) lower_fail(L, n, "keyword arguments to device functions are not supported");
    if (n->u.call.args.len != g->nargs)
        lower_fail(L, n, "'%s' takes %d arguments, %d given", g->name, g->nargs, n->u.call.args.len);
    LLVMValueRef fn = lower_fn_for(L, g);
    LLVMValueRef args[256];
    int na = 0;
    if (L->ctx) {
        args[na++] = L->ctx;
        for (int d = 0; d < 3; d++) args[na++] = L->tid[d];
    }
    for (int i = 0; i < g->nargs && na < 256; i++) {
        AstNode *an = n->u.call.args.items[i];
        LLVMValueRef v = lower_expr_as(L, an, g->argtypes[i]);
        args[na++] = v ? v : LLVMGetUndef(L->t_i8);
    }
    LLVMValueRef r = LLVMBuildCall2(L->B, LLVMGlobalGetValueType(fn), fn, args, (unsigned)na, "");
    lower_debug_after_call(L);
    if (!lower_type(L, g->ret)) return NULL;
    return lower_convert(L, r, g->ret, info->type, n);
}

/* The value of expression n, of LLVM type lower_type(info(n)->type) (NULL
** for expressions without a value). */
/* A Dim3 value (JB_DIM3): its three special registers. */
static LLVMValueRef lower_dim3(Lower *L, JInfo *info) {
    LLVMValueRef v = LLVMGetUndef(lower_type(L, info->type));
    for (int d = 0; d < 3; d++)
        v = LLVMBuildInsertValue(L->B, v, L->tg->sreg(L, (JSreg)info->shape[0], d), (unsigned)d, "");
    return v;
}

LLVMValueRef lower_expr(Lower *L, AstNode *n) {
    JInfo *info = lower_info(L, n);
    const JType *t = info->type;
    if (info->builtin == JB_DIM3) return lower_dim3(L, info);
    switch (n->kind) {
    case AST_NAME: {
        if (info->builtin == JB_CONST) return lower_const(L, info->constant, t, n);
        JVar *var = jf_var(L->f, n->u.name.id);
        if (var) {
            LLVMValueRef slot = L->vars[var - L->f->vars];
            if (!slot) return NULL;
            LLVMValueRef v = LLVMBuildLoad2(L->B, lower_type(L, var->type), slot, "");
            return lower_convert(L, v, var->type, t, n);
        }
        if (!lower_type(L, t)) return NULL;
        lower_fail(L, n, "name '%s' has no value in a kernel", n->u.name.id);
    }
    case AST_INT:
        if (jt_is_float(t)) return LLVMConstReal(lower_type(L, t), (double)n->u.int_);
        if (t->kind == JK_BOOL) return LLVMConstInt(L->t_i1, n->u.int_ != 0, 0);
        return LLVMConstInt(lower_type(L, t), (unsigned long long)n->u.int_, 1);
    case AST_BIGINT: { /* a uint64 (inference refused wider literals) */
        uint64_t u = 0;
        jit_int_literal_u64(n->u.str.s, n->u.str.len, &u);
        if (jt_is_float(t)) return LLVMConstReal(lower_type(L, t), (double)u);
        if (t->kind == JK_BOOL) return LLVMConstInt(L->t_i1, u != 0, 0);
        return LLVMConstInt(lower_type(L, t), u, 0);
    }
    case AST_FLOAT:
        if (jt_is_float(t)) return LLVMConstReal(lower_type(L, t), n->u.float_);
        return lower_convert(L, LLVMConstReal(L->t_f64, n->u.float_), jt_scalar(L->vm, JK_FLOAT64), t, n);
    case AST_TRUE: case AST_FALSE: {
        LLVMValueRef b = LLVMConstInt(L->t_i1, n->kind == AST_TRUE, 0);
        return lower_convert(L, b, jt_scalar(L->vm, JK_BOOL), t, n);
    }
    case AST_NONE: case AST_STR: return NULL;
    case AST_BINOP: {
        const JType *ot = info->op_type ? info->op_type : t;
        LLVMValueRef a = lower_expr_as(L, n->u.binop.left, ot);
        LLVMValueRef b = lower_expr_as(L, n->u.binop.right, ot);
        LLVMValueRef r = ot->kind == JK_INT64 ? binop_narrow(L, n, a, b) : NULL;
        if (!r) r = lower_binop(L, n->u.binop.op, a, b, ot, n);
        return lower_convert(L, r, ot, t, n);
    }
    case AST_UNARYOP: return lower_unary(L, n, info);
    case AST_BOOLOP: return lower_boolop(L, n, info);
    case AST_COMPARE: return info->builtin == JB_IS ? lower_is(L, n, info) : lower_compare(L, n, info);
    case AST_IFEXP: return lower_ifexp(L, n, info);
    case AST_CALL:
        if (info->builtin == JB_DEVICE_CALL) return lower_device_call(L, n, info);
        if (info->builtin == JB_LAUNCH) return lower_launch(L, n, info);
        if (info->builtin == JB_ARRAY_RESHAPE) return lower_reshape(L, n, info); /* lower_reshape.c */
        return lower_builtin_call(L, n, info);
    case AST_ATTRIBUTE:
        if (info->builtin == JB_CONST) return lower_const(L, info->constant, t, n);
        if (info->builtin == JB_TUPLE_FIELD) /* a namedtuple's field */
            return LLVMBuildExtractValue(L->B, lower_expr(L, n->u.attr.value), (unsigned)info->shape[0], "");
        if (info->builtin != JB_NONE) return lower_builtin_attr(L, n, info);
        if (!lower_type(L, t)) return NULL;
        lower_fail(L, n, "unsupported attribute '%s'", n->u.attr.attr);
    case AST_SUBSCRIPT: return lower_subscript(L, n, info);
    case AST_TUPLE: return lower_tuple(L, n, info);
    default:
        lower_fail(L, n, "unsupported expression (%s) in a kernel", ast_kind_name(n->kind));
    }
}
