/*
** lower_complex.c — complex64/complex128 in kernels (Numba's complex
** support): a value is an LLVM pair {re, im} of float or double; this file
** converts to and from it and lowers + - * / unary minus, abs (hypot, as
** Numba), .real/.imag and .conjugate(). Division is Smith's method, the
** algorithm Numba (like CPython) uses, without its zero-division error.
*/
#include <math.h>
#include <stdio.h>

#include "target.h"

static LLVMValueRef part(Lower *L, LLVMValueRef z, unsigned k) { return LLVMBuildExtractValue(L->B, z, k, ""); }

static LLVMValueRef pair(Lower *L, const JType *t, LLVMValueRef re, LLVMValueRef im) {
    LLVMValueRef v = LLVMGetUndef(lower_type(L, t));
    v = LLVMBuildInsertValue(L->B, v, re, 0, "");
    return LLVMBuildInsertValue(L->B, v, im, 1, "");
}

/* The float type of t's parts. */
const JType *lower_complex_part_type(Lower *L, const JType *t) {
    return jt_scalar(L->vm, t->kind == JK_COMPLEX64 ? JK_FLOAT32 : JK_FLOAT64);
}

LLVMValueRef lower_complex_convert(Lower *L, LLVMValueRef v, const JType *from, const JType *to, const AstNode *at) {
    const JType *pt = lower_complex_part_type(L, to);
    if (jt_is_complex(from)) {
        const JType *fp = lower_complex_part_type(L, from);
        return pair(L, to, lower_convert(L, part(L, v, 0), fp, pt, at), lower_convert(L, part(L, v, 1), fp, pt, at));
    }
    if (!jt_is_scalar(from)) {
        char a[128], b[128];
        lower_fail(L, at, "cannot convert %s to %s", jt_name(from, a, sizeof a), jt_name(to, b, sizeof b));
    }
    return pair(L, to, lower_convert(L, v, from, pt, at), LLVMConstReal(lower_type(L, pt), 0.0));
}

LLVMValueRef lower_complex_binop(Lower *L, BinOp op, LLVMValueRef a, LLVMValueRef b, const JType *t,
                                 const AstNode *at) {
    LLVMBuilderRef B = L->B;
    LLVMValueRef ar = part(L, a, 0), ai = part(L, a, 1), br = part(L, b, 0), bi = part(L, b, 1);
#define ADD(x, y) lower_fm(L, LLVMBuildFAdd(B, x, y, ""))
#define SUB(x, y) lower_fm(L, LLVMBuildFSub(B, x, y, ""))
#define MUL(x, y) lower_fm(L, LLVMBuildFMul(B, x, y, ""))
#define DIV(x, y) lower_fm(L, LLVMBuildFDiv(B, x, y, ""))
    switch (op) {
    case BINOP_ADD: return pair(L, t, ADD(ar, br), ADD(ai, bi));
    case BINOP_SUB: return pair(L, t, SUB(ar, br), SUB(ai, bi));
    case BINOP_MUL: return pair(L, t, SUB(MUL(ar, br), MUL(ai, bi)), ADD(MUL(ar, bi), MUL(ai, br)));
    case BINOP_TRUEDIV: {
        /* scale by the larger part of b: |br| >= |bi| ? (ratio = bi/br) : (ratio = br/bi) */
        LLVMTypeRef ty = LLVMTypeOf(br);
        LLVMValueRef abr = lower_intrinsic(L, "llvm.fabs", &ty, 1, &br, 1);
        LLVMValueRef abi = lower_intrinsic(L, "llvm.fabs", &ty, 1, &bi, 1);
        LLVMValueRef big_re = LLVMBuildFCmp(B, LLVMRealOGE, abr, abi, "");
        LLVMValueRef r1 = DIV(bi, br), d1 = ADD(br, MUL(bi, r1));
        LLVMValueRef re1 = DIV(ADD(ar, MUL(ai, r1)), d1), im1 = DIV(SUB(ai, MUL(ar, r1)), d1);
        LLVMValueRef r2 = DIV(br, bi), d2 = ADD(MUL(br, r2), bi);
        LLVMValueRef re2 = DIV(ADD(MUL(ar, r2), ai), d2), im2 = DIV(SUB(MUL(ai, r2), ar), d2);
        return pair(L, t, LLVMBuildSelect(B, big_re, re1, re2, ""), LLVMBuildSelect(B, big_re, im1, im2, ""));
    }
    default: break;
    }
#undef ADD
#undef SUB
#undef MUL
#undef DIV
    char tb[128];
    lower_fail(L, at, "unsupported operator on %s", jt_name(t, tb, sizeof tb));
}

LLVMValueRef lower_complex_neg(Lower *L, LLVMValueRef z, const JType *t) {
    return pair(L, t, lower_fm(L, LLVMBuildFNeg(L->B, part(L, z, 0), "")), lower_fm(L, LLVMBuildFNeg(L->B, part(L, z, 1), "")));
}

LLVMValueRef lower_complex_conj(Lower *L, LLVMValueRef z, const JType *t) {
    return pair(L, t, part(L, z, 0), lower_fm(L, LLVMBuildFNeg(L->B, part(L, z, 1), "")));
}

LLVMValueRef lower_complex_part(Lower *L, LLVMValueRef z, bool imag) { return part(L, z, imag ? 1 : 0); }

/* abs(z) = hypot(re, im): libm's on the CPU, libdevice's in PTX. */
LLVMValueRef lower_complex_abs(Lower *L, LLVMValueRef z, const JType *t) {
    const JType *pt = lower_complex_part_type(L, t);
    LLVMTypeRef ty = lower_type(L, pt), ps[2] = {ty, ty};
    LLVMValueRef args[2] = {part(L, z, 0), part(L, z, 1)};
    char name[64];
    snprintf(name, sizeof name, "%shypot%s", L->tg->math_prefix, pt->kind == JK_FLOAT32 ? "f" : "");
    if (L->tg->kind == JIT_TARGET_PTX) L->needs_libdevice = true;
    return lower_call_named(L, name, ty, ps, args, 2, true);
}

/* == / != of two complex values (both parts equal). */
LLVMValueRef lower_complex_eq(Lower *L, LLVMValueRef a, LLVMValueRef b, bool ne) {
    LLVMBuilderRef B = L->B;
    LLVMValueRef re = LLVMBuildFCmp(B, LLVMRealOEQ, part(L, a, 0), part(L, b, 0), "");
    LLVMValueRef im = LLVMBuildFCmp(B, LLVMRealOEQ, part(L, a, 1), part(L, b, 1), "");
    LLVMValueRef eq = LLVMBuildAnd(B, re, im, "");
    return ne ? LLVMBuildXor(B, eq, LLVMConstInt(L->t_i1, 1, 0), "") : eq;
}

/* complex(re[, im]) */
LLVMValueRef lower_complex_make(Lower *L, const JType *t, LLVMValueRef re, const JType *rt, LLVMValueRef im,
                                const JType *it, const AstNode *at) {
    const JType *pt = lower_complex_part_type(L, t);
    LLVMValueRef r = lower_convert(L, re, rt, pt, at);
    LLVMValueRef i = im ? lower_convert(L, im, it, pt, at) : LLVMConstReal(lower_type(L, pt), 0.0);
    return pair(L, t, r, i);
}

/* cmath.exp/log/sqrt/phase of finite z with CPython's formulas (the Numba
** simulator runs CPython's cmath), through the target's libm/libdevice. */
LLVMValueRef lower_complex_cmath(Lower *L, JBuiltin b, LLVMValueRef z, const JType *t) {
    LLVMBuilderRef B = L->B;
    const JType *pt = lower_complex_part_type(L, t);
    LLVMTypeRef ty = lower_type(L, pt);
    LLVMValueRef x = part(L, z, 0), y = part(L, z, 1);
    LLVMValueRef xy[2] = {y, x};
    LLVMValueRef arg = lower_math(L, JB_MATH_ATAN2, xy, 2, pt); /* atan2(y, x) */
    if (b == JB_CMATH_PHASE) return arg;
    if (b == JB_CMATH_EXP) {
        LLVMValueRef l = lower_math(L, JB_MATH_EXP, &x, 1, pt);
        LLVMValueRef c = lower_math(L, JB_MATH_COS, &y, 1, pt), s = lower_math(L, JB_MATH_SIN, &y, 1, pt);
        return pair(L, t, lower_fm(L, LLVMBuildFMul(B, l, c, "")), lower_fm(L, LLVMBuildFMul(B, l, s, "")));
    }
    LLVMValueRef ax = lower_intrinsic(L, "llvm.fabs", &ty, 1, &x, 1), ay = lower_intrinsic(L, "llvm.fabs", &ty, 1, &y, 1);
    if (b == JB_CMATH_LOG) {
        LLVMValueRef h = lower_complex_abs(L, z, t);
        return pair(L, t, lower_math(L, JB_MATH_LOG, &h, 1, pt), arg);
    }
    /* sqrt: s = 2 sqrt(|x|/8 + hypot(|x|/8, |y|/8)), d = |y| / 2s; (s, ±d) or (d, ±s) */
    LLVMValueRef eight = LLVMConstReal(ty, 8.0), two = LLVMConstReal(ty, 2.0);
    LLVMValueRef ax8 = LLVMBuildFDiv(B, ax, eight, ""), ay8 = LLVMBuildFDiv(B, ay, eight, "");
    LLVMValueRef h = lower_complex_abs(L, pair(L, t, ax8, ay8), t);
    LLVMValueRef sum = LLVMBuildFAdd(B, ax8, h, "");
    LLVMValueRef s = LLVMBuildFMul(B, two, lower_math(L, JB_MATH_SQRT, &sum, 1, pt), "");
    LLVMValueRef d = LLVMBuildFDiv(B, ay, LLVMBuildFMul(B, two, s, ""), "");
    LLVMValueRef cs[2] = {d, y}, cs2[2] = {s, y};
    LLVMValueRef sd = lower_intrinsic(L, "llvm.copysign", &ty, 1, cs, 2);
    LLVMValueRef ss = lower_intrinsic(L, "llvm.copysign", &ty, 1, cs2, 2);
    LLVMValueRef pos = LLVMBuildFCmp(B, LLVMRealOGE, x, LLVMConstReal(ty, 0.0), "");
    LLVMValueRef re = LLVMBuildSelect(B, pos, s, d, ""), im = LLVMBuildSelect(B, pos, sd, ss, "");
    LLVMValueRef zero = LLVMBuildAnd(B, LLVMBuildFCmp(B, LLVMRealOEQ, x, LLVMConstReal(ty, 0.0), ""),
                                     LLVMBuildFCmp(B, LLVMRealOEQ, y, LLVMConstReal(ty, 0.0), ""), "");
    return pair(L, t, LLVMBuildSelect(B, zero, LLVMConstReal(ty, 0.0), re, ""), LLVMBuildSelect(B, zero, y, im, ""));
}
