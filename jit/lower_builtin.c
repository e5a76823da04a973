/*
** lower_builtin.c — the GPU builtins (grid, special registers, shared and
** local arrays, atomics, syncthreads), Python builtins (len, min, max, abs,
** round, conversions), the math module and compile-time constants.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "cpu_regions.h"
#include "int_literal.h"
#include "target.h"

/* A captured constant (int, float, bool, or a tuple of those) as type t. */
static LLVMValueRef const_array(Lower *L, const JType *t, LLVMValueRef data, const int64_t *shape);

/* A global array captured at compile time: its elements (C order) in a
** constant global (.const on PTX), viewed as an array value. */
static LLVMValueRef const_global_array(Lower *L, Value v, const JType *t, const AstNode *at) {
    JitArrayView view, *a = &view;
    if (!jit_binding(L->vm)->array_view(L->vm, v, false, a)) lower_fail(L, at, "bad array constant");
    if (a->ndim != t->ndim || a->dtype != t->dtype) lower_fail(L, at, "global array changed type since compilation");
    size_t isz = dtype_itemsize(a->dtype), n = (size_t)a->size;
    /* the 32-bit index variant assumes every extent and size is below 2^31 */
    if (n >= ((size_t)1 << 31)) lower_fail(L, at, "a global array of 2^31 or more elements cannot be captured as a constant");
    char *bytes = malloc(n * isz + 1);
    if (!bytes) lower_fail(L, at, "out of memory");
    int64_t idx[3] = {0, 0, 0};
    for (size_t e = 0; e < n; e++) {
        const char *src = a->data;
        for (int k = 0; k < a->ndim; k++) src += idx[k] * a->strides[k];
        memcpy(bytes + e * isz, src, isz);
        for (int k = a->ndim - 1; k >= 0; k--) {
            if (++idx[k] < a->shape[k]) break;
            idx[k] = 0;
        }
    }
    LLVMValueRef init = LLVMConstStringInContext(L->C, bytes, (unsigned)(n * isz), 1);
    free(bytes);
    unsigned as = L->tg->kind == JIT_TARGET_PTX ? 4 : 0;
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->M, LLVMTypeOf(init), "__gpy_const", as);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetAlignment(g, 16);
    LLVMValueRef data = as ? LLVMConstAddrSpaceCast(g, L->t_ptr) : g;
    int64_t shape[3] = {0, 0, 0};
    for (int k = 0; k < a->ndim; k++) shape[k] = a->shape[k];
    return const_array(L, t, data, shape);
}

LLVMValueRef lower_const(Lower *L, Value v, const JType *t, const AstNode *at) {
    if (t->kind == JK_ARRAY && lower_is_device_global(L, v)) return lower_device_global(L, v, t, at); /* lower_globals.c */
    if (t->kind == JK_ARRAY) return const_global_array(L, v, t, at);
    if (t->kind == JK_TUPLE) {
        if (!IS_TUPLE(L->vm, v) || AS_TUPLE(v)->len != t->n) lower_fail(L, at, "bad tuple constant");
        LLVMValueRef el[64];
        if (t->n > 64) lower_fail(L, at, "tuple constant too long");
        for (int i = 0; i < t->n; i++) el[i] = lower_const(L, AS_TUPLE(v)->items[i], t->elems[i], at);
        return LLVMConstStructInContext(L->C, el, (unsigned)t->n, 0);
    }
    if (!jt_is_scalar(t)) {
        if (!lower_type(L, t)) return NULL;
        lower_fail(L, at, "unsupported constant");
    }
    LLVMTypeRef ty = lower_type(L, t);
    uint64_t big;
    if (jit_bigint_u64(L->vm, v, &big)) /* a global in [2**63, 2**64) */
        return jt_is_float(t) ? LLVMConstReal(ty, (double)big) : LLVMConstInt(ty, t->kind == JK_BOOL ? big != 0 : big, 0);
    if (!IS_NUMBER(v)) lower_fail(L, at, "a global constant must be a number here");
    if (jt_is_float(t)) return LLVMConstReal(ty, AS_NUMBER(v));
    if (t->kind == JK_BOOL) return LLVMConstInt(ty, AS_NUMBER(v) != 0, 0);
    int64_t iv = IS_FLOAT(v) ? (int64_t)AS_FLOAT(v) : AS_INTLIKE(v);
    return LLVMConstInt(ty, (unsigned long long)iv, 1);
}

/* ---------------------------------------------------------------- math */

typedef struct MathName { JBuiltin b; const char *name; } MathName;
static const MathName math_names[] = {
    {JB_MATH_EXP, "exp"},     {JB_MATH_LOG, "log"},     {JB_MATH_LOG2, "log2"},
    {JB_MATH_LOG10, "log10"}, {JB_MATH_POW, "pow"},     {JB_MATH_SIN, "sin"},
    {JB_MATH_COS, "cos"},     {JB_MATH_TAN, "tan"},     {JB_MATH_ASIN, "asin"},
    {JB_MATH_ACOS, "acos"},   {JB_MATH_ATAN, "atan"},   {JB_MATH_ATAN2, "atan2"},
    {JB_MATH_SINH, "sinh"},   {JB_MATH_COSH, "cosh"},   {JB_MATH_TANH, "tanh"},
    {JB_MATH_ERF, "erf"},     {JB_MATH_ERFC, "erfc"},   {JB_MATH_GAMMA, "tgamma"},
    {JB_MATH_LGAMMA, "lgamma"},
};

static LLVMValueRef fabs_of(Lower *L, LLVMValueRef x) {
    LLVMTypeRef ty = LLVMTypeOf(x);
    return lower_intrinsic(L, "llvm.fabs", &ty, 1, &x, 1);
}

LLVMValueRef lower_math(Lower *L, JBuiltin b, LLVMValueRef *args, int nargs, const JType *t) {
    LLVMTypeRef ty = lower_type(L, t);
    if (!jt_is_float(t)) lower_fail(L, NULL, "internal error: math on a non-float type");
    if (t->kind == JK_FLOAT16) { /* compute half precision math in float32 */
        const JType *f32 = jt_scalar(L->vm, JK_FLOAT32);
        LLVMValueRef a2[2];
        for (int i = 0; i < nargs; i++) a2[i] = LLVMBuildFPExt(L->B, args[i], L->t_f32, "");
        LLVMValueRef r = lower_math(L, b, a2, nargs, f32);
        if (LLVMTypeOf(r) == L->t_f32) r = LLVMBuildFPTrunc(L->B, r, ty, "");
        return r;
    }
    switch (b) {
    case JB_MATH_SQRT: return lower_fm(L, lower_intrinsic(L, "llvm.sqrt", &ty, 1, args, 1));
    case JB_MATH_FABS: return fabs_of(L, args[0]);
    case JB_MATH_FLOOR: return lower_intrinsic(L, "llvm.floor", &ty, 1, args, 1);
    case JB_MATH_CEIL: return lower_intrinsic(L, "llvm.ceil", &ty, 1, args, 1);
    case JB_MATH_ISNAN: return LLVMBuildFCmp(L->B, LLVMRealUNO, args[0], args[0], "");
    case JB_MATH_ISINF:
        return LLVMBuildFCmp(L->B, LLVMRealOEQ, fabs_of(L, args[0]), LLVMConstReal(ty, INFINITY), "");
    case JB_MATH_ISFINITE:
        return LLVMBuildFCmp(L->B, LLVMRealOLT, fabs_of(L, args[0]), LLVMConstReal(ty, INFINITY), "");
    default: break;
    }
    const char *base = NULL;
    for (size_t i = 0; i < sizeof math_names / sizeof *math_names; i++)
        if (math_names[i].b == b) base = math_names[i].name;
    if (!base) lower_fail(L, NULL, "internal error: unknown math function %d", (int)b);
    char name[64];
    snprintf(name, sizeof name, "%s%s%s", L->tg->math_prefix, base, t->kind == JK_FLOAT32 ? "f" : "");
    if (L->tg->kind == JIT_TARGET_PTX) L->needs_libdevice = true;
    LLVMTypeRef pt[2] = {ty, ty};
    return lower_fm(L, lower_call_named(L, name, ty, pt, args, nargs, true));
}

/* --------------------------------------------------------------- grids */

static int tuple_width(const JType *t) { return t->kind == JK_TUPLE ? t->n : 1; }

/* cuda.grid(n) / cuda.gridsize(n) in 32 bits, when the launch guarantees
** gridDim * blockDim < 2^31 (L->narrow): no overflow, so nuw nsw. */
static LLVMValueRef grid_narrow(Lower *L, int d, bool size) {
    LLVMBuilderRef B = L->B;
    LLVMValueRef ntid = L->tg->sreg(L, SREG_NTID, d), r;
    if (size) {
        r = LLVMBuildMul(B, ntid, L->tg->sreg(L, SREG_NCTAID, d), "");
    } else {
        LLVMValueRef m = LLVMBuildMul(B, L->tg->sreg(L, SREG_CTAID, d), ntid, "");
        LLVMSetNUW(m, 1);
        LLVMSetNSW(m, 1);
        r = LLVMBuildAdd(B, m, L->tg->sreg(L, SREG_TID, d), "");
    }
    LLVMSetNUW(r, 1);
    LLVMSetNSW(r, 1);
    LLVMValueRef z = LLVMBuildZExt(B, r, L->t_i64, "");
    LLVMSetNNeg(z, 1);
    return z;
}

/* cuda.grid(n) / cuda.gridsize(n) in int64, as Numba computes them. */
static LLVMValueRef lower_grid(Lower *L, JInfo *info, bool size) {
    int n = tuple_width(info->type);
    LLVMValueRef el[3];
    for (int d = 0; d < n && d < 3; d++) {
        if (L->narrow) {
            el[d] = grid_narrow(L, d, size);
            continue;
        }
        LLVMValueRef ntid = lower_sreg64(L, SREG_NTID, d);
        if (size) {
            el[d] = LLVMBuildNSWMul(L->B, ntid, lower_sreg64(L, SREG_NCTAID, d), "");
        } else { /* 32-bit operands: the int64 arithmetic cannot overflow */
            LLVMValueRef ctaid = lower_sreg64(L, SREG_CTAID, d);
            el[d] = LLVMBuildNSWAdd(L->B, LLVMBuildNSWMul(L->B, ctaid, ntid, ""), lower_sreg64(L, SREG_TID, d), "");
        }
    }
    if (info->type->kind != JK_TUPLE) return el[0];
    LLVMValueRef v = LLVMGetUndef(lower_type(L, info->type));
    for (int d = 0; d < n; d++) v = LLVMBuildInsertValue(L->B, v, el[d], (unsigned)d, "");
    return v;
}

/* An array value over data with the constant shape of a shared/local array. */
static LLVMValueRef const_array(Lower *L, const JType *t, LLVMValueRef data, const int64_t *shape) {
    LLVMTypeRef dims = LLVMArrayType2(L->t_i64, (uint64_t)t->ndim);
    LLVMValueRef s[3], st[3];
    int64_t stride = (int64_t)dtype_itemsize(t->dtype);
    for (int k = t->ndim - 1; k >= 0; k--) {
        s[k] = LLVMConstInt(L->t_i64, (unsigned long long)shape[k], 0);
        st[k] = LLVMConstInt(L->t_i64, (unsigned long long)stride, 0);
        stride *= shape[k];
    }
    LLVMValueRef v = LLVMGetUndef(lower_type(L, t));
    v = LLVMBuildInsertValue(L->B, v, data, 0, "");
    v = LLVMBuildInsertValue(L->B, v, LLVMConstArray2(L->t_i64, s, (uint64_t)t->ndim), 1, "");
    (void)dims;
    return LLVMBuildInsertValue(L->B, v, LLVMConstArray2(L->t_i64, st, (uint64_t)t->ndim), 2, "");
}

static LLVMValueRef lower_alloc_array(Lower *L, AstNode *n, JInfo *info, bool shared) {
    const JType *t = info->type;
    if (t->kind != JK_ARRAY || t->ndim < 1 || t->ndim > 3)
        lower_fail(L, n, "internal error: bad array type for a shared/local array");
    const char *what = shared ? "cuda.shared.array" : "cuda.local.array";
    int64_t count = 1, bytes;
    for (int k = 0; k < t->ndim; k++) {
        if (info->shape[k] < 0 || (!shared && info->shape[k] == 0))
            lower_fail(L, n, "array dimensions must be positive");
        if (__builtin_mul_overflow(count, info->shape[k], &count)) count = INT64_MAX;
    }
    if (__builtin_mul_overflow(count, (int64_t)dtype_itemsize(t->dtype), &bytes)) bytes = INT64_MAX;
    /* a GPU refuses what does not fit its limits; the CPU device would
       overrun a stack or its shared-memory area instead */
    size_t smem_used = (L->smem_bytes + 15) & ~(size_t)15; /* as the CPU device aligns them */
    if (shared && (smem_used > JIT_MAX_STATIC_SHARED || (uint64_t)bytes > JIT_MAX_STATIC_SHARED - smem_used))
        lower_fail(L, n,
                   "%s of %lld bytes: the static shared memory of the kernel would exceed the %d bytes (48 KiB) "
                   "a CUDA block may use",
                   what, (long long)bytes, JIT_MAX_STATIC_SHARED);
    if (!shared && (uint64_t)bytes > JIT_MAX_LOCAL_PER_THREAD - L->fn_local_bytes)
        lower_fail(L, n,
                   "%s of %lld bytes: the local arrays of '%s' would exceed the %d bytes (512 KiB) of local memory "
                   "a CUDA thread may use",
                   what, (long long)bytes, L->f->name, JIT_MAX_LOCAL_PER_THREAD);
    if (!shared) {
        L->fn_local_bytes += ((size_t)bytes + 15) & ~(size_t)15;
        if ((size_t)bytes > L->local_big_bytes) {
            L->local_big = n;
            L->local_big_f = L->f;
            L->local_big_bytes = (size_t)bytes;
        }
    }
    LLVMTypeRef et = lower_mem_type(L, jt_scalar(L->vm, (JKind)t->dtype));
    LLVMValueRef data;
    if (shared) {
        data = L->tg->shared_array(L, et, count, dtype_itemsize(t->dtype));
    } else if (L->regions && L->f->is_kernel) {
        data = cpu_regions_local_array(L, n); /* one per thread of the block */
    } else {
        data = lower_alloca(L, LLVMArrayType2(et, (uint64_t)count), "local");
        LLVMSetAlignment(data, 16);
    }
    LLVMValueRef arr = const_array(L, t, data, info->shape);
    if (shared && count == 0 && t->ndim == 1) {
        /* cuda.shared.array(0, dtype): as many elements as the launch's
           dynamic shared memory holds (Numba does the same) */
        LLVMValueRef n = LLVMBuildUDiv(L->B, L->tg->dyn_shared_bytes(L),
                                       LLVMConstInt(L->t_i64, dtype_itemsize(t->dtype), 0), "dyn.count");
        LLVMValueRef shape = LLVMBuildExtractValue(L->B, arr, 1, "");
        shape = LLVMBuildInsertValue(L->B, shape, n, 0, "");
        arr = LLVMBuildInsertValue(L->B, arr, shape, 1, "");
    }
    return arr;
}

/* ------------------------------------------------------------- atomics */

static LLVMValueRef float_minmax_cas(Lower *L, LLVMValueRef addr, LLVMValueRef v, LLVMTypeRef fty,
                                     bool is_max, bool nan_missing) {
    LLVMBuilderRef B = L->B;
    LLVMTypeRef ity = fty == L->t_f32 ? L->t_i32 : L->t_i64;
    LLVMValueRef init = LLVMBuildLoad2(B, ity, addr, "");
    LLVMSetAlignment(init, fty == L->t_f32 ? 4 : 8);
    LLVMSetOrdering(init, LLVMAtomicOrderingMonotonic);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(B);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(L->C, L->fn, "cas.loop");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->C, L->fn, "cas.done");
    LLVMBuildBr(B, loop);
    LLVMPositionBuilderAtEnd(B, loop);
    LLVMValueRef old = LLVMBuildPhi(B, ity, "");
    LLVMValueRef oldf = LLVMBuildBitCast(B, old, fty, "");
    /* Python's max(old, v): v only when v > old (NaN never replaces) */
    LLVMValueRef take = LLVMBuildFCmp(B, is_max ? LLVMRealOGT : LLVMRealOLT, v, oldf, "");
    if (nan_missing) /* Numba's nanmax/nanmin: a NaN v changes nothing, a NaN old is replaced */
        take = LLVMBuildAnd(B, LLVMBuildFCmp(B, LLVMRealORD, v, v, ""),
                            LLVMBuildFCmp(B, is_max ? LLVMRealUGT : LLVMRealULT, v, oldf, ""), "");
    LLVMValueRef nf = LLVMBuildSelect(B, take, v, oldf, "");
    LLVMValueRef ni = LLVMBuildBitCast(B, nf, ity, "");
    LLVMValueRef pair = LLVMBuildAtomicCmpXchg(B, addr, old, ni, LLVMAtomicOrderingMonotonic,
                                               LLVMAtomicOrderingMonotonic, 0);
    LLVMValueRef seen = LLVMBuildExtractValue(B, pair, 0, "");
    LLVMValueRef ok = LLVMBuildExtractValue(B, pair, 1, "");
    LLVMValueRef inc[2] = {init, seen};
    LLVMBasicBlockRef bbs[2] = {pre, loop};
    LLVMAddIncoming(old, inc, bbs, 2);
    LLVMBuildCondBr(B, ok, done, loop);
    LLVMPositionBuilderAtEnd(B, done);
    return oldf;
}

static LLVMValueRef lower_atomic(Lower *L, AstNode *n, JInfo *info) {
    AstList *args = &n->u.call.args;
    bool cas = info->builtin == JB_ATOMIC_CAS;
    if (args->len != (cas ? 4 : 3)) lower_fail(L, n, "wrong number of arguments to an atomic operation");
    AstNode *an = args->items[0];
    const JType *at = lower_info(L, an)->type;
    if (at->kind != JK_ARRAY) lower_fail(L, n, "atomic operations need an array");
    LLVMValueRef arr = lower_expr(L, an);
    LLVMValueRef addr = lower_elem_addr(L, arr, at, args->items[1], n);
    const JType *et = jt_scalar(L->vm, (JKind)at->dtype);
    LLVMTypeRef ety = lower_type(L, et);
    bool fl = jt_is_float(et), sg = et->kind >= JK_INT8 && et->kind <= JK_INT64;
    if (!(et->kind == JK_INT32 || et->kind == JK_INT64 || et->kind == JK_UINT32 || et->kind == JK_UINT64 ||
          et->kind == JK_FLOAT32 || et->kind == JK_FLOAT64)) {
        char tb[128];
        lower_fail(L, n, "atomic operations are not supported on %s", jt_name(at, tb, sizeof tb));
    }
    LLVMValueRef v = lower_expr_as(L, args->items[2], et), r;
    LLVMBuilderRef B = L->B;
    LLVMAtomicOrdering mo = LLVMAtomicOrderingMonotonic;
    switch (info->builtin) {
    case JB_ATOMIC_ADD:
        r = LLVMBuildAtomicRMW(B, fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd, addr, v, mo, 0);
        break;
    case JB_ATOMIC_SUB:
        r = LLVMBuildAtomicRMW(B, fl ? LLVMAtomicRMWBinOpFSub : LLVMAtomicRMWBinOpSub, addr, v, mo, 0);
        break;
    case JB_ATOMIC_MAX: case JB_ATOMIC_MIN: case JB_ATOMIC_NANMAX: case JB_ATOMIC_NANMIN: {
        bool mx = info->builtin == JB_ATOMIC_MAX || info->builtin == JB_ATOMIC_NANMAX;
        if (fl) {
            r = float_minmax_cas(L, addr, v, ety, mx,
                                 info->builtin == JB_ATOMIC_NANMAX || info->builtin == JB_ATOMIC_NANMIN);
        } else {
            LLVMAtomicRMWBinOp op = mx ? (sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax)
                                       : (sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin);
            r = LLVMBuildAtomicRMW(B, op, addr, v, mo, 0);
        }
        break;
    }
    case JB_ATOMIC_EXCH:
        r = LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpXchg, addr, v, mo, 0);
        break;
    case JB_ATOMIC_AND: r = LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpAnd, addr, v, mo, 0); break;
    case JB_ATOMIC_OR: r = LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpOr, addr, v, mo, 0); break;
    case JB_ATOMIC_XOR: r = LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpXor, addr, v, mo, 0); break;
    /* CUDA's wrapping inc/dec: old >= v ? 0 : old+1; (old == 0 || old > v) ? v : old-1 */
    case JB_ATOMIC_INC: r = LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpUIncWrap, addr, v, mo, 0); break;
    case JB_ATOMIC_DEC: r = LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpUDecWrap, addr, v, mo, 0); break;
    default: { /* CAS(array, index, old, new) */
        LLVMValueRef nv = lower_expr_as(L, args->items[3], et);
        LLVMTypeRef ity = fl ? (ety == L->t_f32 ? L->t_i32 : L->t_i64) : ety;
        LLVMValueRef cmpv = fl ? LLVMBuildBitCast(B, v, ity, "") : v;
        LLVMValueRef newv = fl ? LLVMBuildBitCast(B, nv, ity, "") : nv;
        LLVMValueRef pair = LLVMBuildAtomicCmpXchg(B, addr, cmpv, newv, mo, mo, 0);
        r = LLVMBuildExtractValue(B, pair, 0, "");
        if (fl) r = LLVMBuildBitCast(B, r, ety, "");
        break;
    }
    }
    return lower_convert(L, r, et, info->type, n);
}

/* cuda.atomic.compare_and_swap(array, old, new) on array[0]. */
static LLVMValueRef lower_cas1(Lower *L, AstNode *n, JInfo *info) {
    AstList *args = &n->u.call.args;
    const JType *et = info->op_type;
    LLVMValueRef arr = lower_expr(L, args->items[0]);
    LLVMValueRef addr = LLVMBuildExtractValue(L->B, arr, 0, "");
    LLVMValueRef cmpv = lower_expr_as(L, args->items[1], et);
    LLVMValueRef newv = lower_expr_as(L, args->items[2], et);
    LLVMAtomicOrdering mo = LLVMAtomicOrderingMonotonic;
    LLVMValueRef pair = LLVMBuildAtomicCmpXchg(L->B, addr, cmpv, newv, mo, mo, 0);
    return lower_convert(L, LLVMBuildExtractValue(L->B, pair, 0, ""), et, info->type, n);
}

/* ------------------------------------------------- barriers and fences */

/* syncthreads_count/_and/_or(pred): PTX bar.red; the CPU device's fibers
** deposit their predicate and meet at a barrier (gpy_cpu_syncthreads_reduce). */
static LLVMValueRef lower_barrier_reduce(Lower *L, AstNode *n, JInfo *info) {
    LLVMValueRef pred = lower_truthy(L, lower_expr(L, n->u.call.args.items[0]), info->op_type);
    LLVMValueRef p32 = LLVMBuildZExt(L->B, pred, L->t_i32, "");
    int op = (int)(info->builtin - JB_SYNCTHREADS_COUNT);
    LLVMValueRef r;
    if (L->tg->kind == JIT_TARGET_PTX) {
        static const char *const names[3] = {"llvm.nvvm.barrier0.popc", "llvm.nvvm.barrier0.and",
                                             "llvm.nvvm.barrier0.or"};
        r = lower_intrinsic(L, names[op], NULL, 0, &p32, 1);
    } else {
        LLVMTypeRef pt[3] = {L->t_ptr, L->t_i32, L->t_i32};
        LLVMValueRef a[3] = {L->ctx, p32, LLVMConstInt(L->t_i32, (unsigned long long)op, 0)};
        r = lower_call_named(L, "gpy_cpu_syncthreads_reduce", L->t_i32, pt, a, 3, false);
    }
    return lower_convert(L, r, jt_scalar(L->vm, JK_INT32), info->type, n);
}

static void lower_fence(Lower *L, JBuiltin b) {
    if (L->tg->kind == JIT_TARGET_PTX) {
        const char *name = b == JB_THREADFENCE ? "llvm.nvvm.membar.gl"
                           : b == JB_THREADFENCE_BLOCK ? "llvm.nvvm.membar.cta" : "llvm.nvvm.membar.sys";
        lower_intrinsic(L, name, NULL, 0, NULL, 0);
    } else {
        LLVMBuildFence(L->B, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
    }
}

/* ------------------------------------------------------ warp collectives */

/* One 32-bit shuffle on PTX: kind is idx, up, down or bfly. */
static LLVMValueRef ptx_shfl32(Lower *L, const char *kind, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef lane) {
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.i32", kind);
    LLVMValueRef c = LLVMConstInt(L->t_i32, strcmp(kind, "up") == 0 ? 0 : 0x1f, 0);
    LLVMValueRef a[4] = {mask, v, lane, c};
    return lower_intrinsic(L, name, NULL, 0, a, 4);
}

/* The CPU device's warp meeting: gpy_cpu_warp(ctx, op, mask, bits, arg). */
static LLVMValueRef cpu_warp(Lower *L, int op, LLVMValueRef mask, LLVMValueRef bits, LLVMValueRef arg) {
    LLVMTypeRef pt[5] = {L->t_ptr, L->t_i32, L->t_i32, L->t_i64, L->t_i32};
    LLVMValueRef a[5] = {L->ctx, LLVMConstInt(L->t_i32, (unsigned long long)op, 0), mask,
                         bits ? bits : LLVMConstInt(L->t_i64, 0, 0), arg ? arg : LLVMConstInt(L->t_i32, 0, 0)};
    return lower_call_named(L, "gpy_cpu_warp", L->t_i64, pt, a, 5, false);
}

/* The CPU device groups the lanes at an activemask() by its call site;
** sites are ordered as in the source (see gpu/cpu_device.c). */
static LLVMValueRef activemask_site(Lower *L, const AstNode *n) {
    return LLVMConstInt(L->t_i32, (unsigned long long)((n->line & 0x1fffff) << 10 | (n->col & 1023)), 0);
}

static LLVMValueRef lower_warp(Lower *L, AstNode *n, JInfo *info) {
    AstList *args = &n->u.call.args;
    LLVMBuilderRef B = L->B;
    const JType *u32 = jt_scalar(L->vm, JK_UINT32), *i32 = jt_scalar(L->vm, JK_INT32);
    JBuiltin b = info->builtin;
    bool ptx = L->tg->kind == JIT_TARGET_PTX;
    LLVMValueRef mask = b == JB_ACTIVEMASK ? NULL
                        : args->len > 0 ? lower_expr_as(L, args->items[0], u32)
                                        : LLVMConstInt(L->t_i32, 0xffffffffu, 0);
    int op = (int)(b - JB_SHFL_IDX);
    if (b >= JB_SHFL_IDX && b <= JB_SHFL_XOR) {
        const JType *t = info->op_type;
        LLVMTypeRef ty = lower_type(L, t);
        unsigned bits = LLVMGetIntTypeWidth(ty == L->t_f32 ? L->t_i32 : ty == L->t_f64 ? L->t_i64 : ty);
        LLVMTypeRef ity = bits == 64 ? L->t_i64 : L->t_i32;
        LLVMValueRef v = lower_expr_as(L, args->items[1], t);
        LLVMValueRef iv = jt_is_float(t) ? LLVMBuildBitCast(B, v, ity, "") : v;
        LLVMValueRef lane = lower_expr_as(L, args->items[2], i32), r;
        if (ptx) {
            static const char *const kinds[4] = {"idx", "up", "down", "bfly"};
            if (bits == 32) {
                r = ptx_shfl32(L, kinds[op], mask, iv, lane);
            } else { /* two 32-bit shuffles */
                LLVMValueRef lo = LLVMBuildTrunc(B, iv, L->t_i32, "");
                LLVMValueRef hi = LLVMBuildTrunc(B, LLVMBuildLShr(B, iv, LLVMConstInt(L->t_i64, 32, 0), ""), L->t_i32, "");
                lo = LLVMBuildZExt(B, ptx_shfl32(L, kinds[op], mask, lo, lane), L->t_i64, "");
                hi = LLVMBuildZExt(B, ptx_shfl32(L, kinds[op], mask, hi, lane), L->t_i64, "");
                r = LLVMBuildOr(B, lo, LLVMBuildShl(B, hi, LLVMConstInt(L->t_i64, 32, 0), ""), "");
            }
        } else {
            LLVMValueRef wide = bits == 64 ? iv : LLVMBuildZExt(B, iv, L->t_i64, "");
            r = cpu_warp(L, op, mask, wide, lane);
            if (bits == 32) r = LLVMBuildTrunc(B, r, L->t_i32, "");
        }
        if (jt_is_float(t)) r = LLVMBuildBitCast(B, r, ty, "");
        return lower_convert(L, r, t, info->type, n);
    }
    if (b >= JB_VOTE_ALL && b <= JB_BALLOT) {
        LLVMValueRef pred = lower_truthy(L, lower_expr(L, args->items[1]), info->op_type);
        if (ptx) {
            static const char *const names[4] = {"llvm.nvvm.vote.all.sync", "llvm.nvvm.vote.any.sync",
                                                 "llvm.nvvm.vote.uni.sync", "llvm.nvvm.vote.ballot.sync"};
            LLVMValueRef a[2] = {mask, pred};
            LLVMValueRef r = lower_intrinsic(L, names[b - JB_VOTE_ALL], NULL, 0, a, 2);
            if (b == JB_BALLOT) return lower_convert(L, r, u32, info->type, n);
            return lower_convert(L, r, jt_scalar(L->vm, JK_BOOL), info->type, n);
        }
        LLVMValueRef r = cpu_warp(L, op, mask, LLVMBuildZExt(B, pred, L->t_i64, ""), NULL);
        if (b == JB_BALLOT) return lower_convert(L, LLVMBuildTrunc(B, r, L->t_i32, ""), u32, info->type, n);
        LLVMValueRef t = LLVMBuildICmp(B, LLVMIntNE, r, LLVMConstInt(L->t_i64, 0, 0), "");
        return lower_convert(L, t, jt_scalar(L->vm, JK_BOOL), info->type, n);
    }
    if (b == JB_ACTIVEMASK) {
        LLVMValueRef r = ptx ? lower_intrinsic(L, "llvm.nvvm.activemask", NULL, 0, NULL, 0)
                             : LLVMBuildTrunc(B, cpu_warp(L, op, LLVMConstInt(L->t_i32, 0xffffffffu, 0), NULL,
                                                          activemask_site(L, n)),
                                              L->t_i32, "");
        return lower_convert(L, r, u32, info->type, n);
    }
    /* syncwarp */
    if (ptx) lower_intrinsic(L, "llvm.nvvm.bar.warp.sync", NULL, 0, &mask, 1);
    else cpu_warp(L, op, mask, NULL, NULL);
    return NULL;
}

/* ---------------------------------------------------------------- print */

/* A constant C string as a generic pointer (NVPTX moves it to .global). */
static LLVMValueRef cstring(Lower *L, const char *text, size_t len) {
    LLVMValueRef init = LLVMConstStringInContext(L->C, text, (unsigned)len, 0);
    LLVMValueRef g = LLVMAddGlobal(L->M, LLVMTypeOf(init), "__gpy_str");
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    return g;
}

/* print(a, b, ...): one printf-style format (%lld, %llu, %f, %s; strings
** are literal text) and a buffer of 8-byte slots, as vprintf wants. PTX
** calls vprintf; the CPU device calls gpy_cpu_print, which formats the line
** and keeps it until the launch ends. Floats print as %f, as Numba's CUDA
** target does; bools as True/False. */
static void lower_print(Lower *L, AstNode *n) {
    AstList *args = &n->u.call.args;
    LLVMBuilderRef B = L->B;
    char fmt[1024];
    size_t fl = 0;
    LLVMValueRef slots[96]; /* a Dim3 takes three */
    int ns = 0;
    for (int k = 0; k < args->len && k < 32; k++) {
        AstNode *a = args->items[k];
        if (k && fl < sizeof fmt - 1) fmt[fl++] = ' ';
        if (a->kind == AST_STR) {
            for (size_t c = 0; c < a->u.str.len && fl < sizeof fmt - 3; c++) {
                if (a->u.str.s[c] == '%') fmt[fl++] = '%';
                fmt[fl++] = a->u.str.s[c] ? a->u.str.s[c] : ' ';
            }
            continue;
        }
        const JType *t = lower_info(L, a)->type;
        if (jit_dim3_sreg(t) >= 0) { /* Numba prints a Dim3 as "(x, y, z)" */
            if (fl + 20 >= sizeof fmt - 2 || ns + 3 > 96) lower_fail(L, n, "print() line is too long");
            memcpy(fmt + fl, "(%lld, %lld, %lld)", 18);
            fl += 18;
            for (int d = 0; d < 3; d++)
                slots[ns++] = LLVMBuildSExt(B, L->tg->sreg(L, (JSreg)jit_dim3_sreg(t), d), L->t_i64, "");
            continue;
        }
        LLVMValueRef v = lower_expr(L, a);
        if (t->kind == JK_TUPLE) { /* "(1, 2.500000)": lower_print_tuple.c */
            lower_print_tuple(L, v, t, fmt, &fl, sizeof fmt, slots, &ns, 32, a);
            continue;
        }
        const char *spec;
        if (t->kind == JK_BOOL) {
            LLVMValueRef yes = cstring(L, "True", 5), no = cstring(L, "False", 6);
            v = LLVMBuildPtrToInt(B, LLVMBuildSelect(B, v, yes, no, ""), L->t_i64, "");
            spec = "%s";
        } else if (jt_is_float(t)) {
            v = LLVMBuildBitCast(B, lower_convert(L, v, t, jt_scalar(L->vm, JK_FLOAT64), a), L->t_i64, "");
            spec = "%f";
        } else if (t->kind >= JK_INT8 && t->kind <= JK_INT64) {
            v = lower_convert(L, v, t, jt_scalar(L->vm, JK_INT64), a);
            spec = "%lld";
        } else {
            v = lower_convert(L, v, t, jt_scalar(L->vm, JK_UINT64), a);
            spec = "%llu";
        }
        size_t sl = strlen(spec);
        if (fl + sl >= sizeof fmt - 2) lower_fail(L, n, "print() line is too long");
        memcpy(fmt + fl, spec, sl);
        fl += sl;
        slots[ns++] = v;
    }
    fmt[fl++] = '\n';
    fmt[fl] = 0;
    LLVMValueRef f = cstring(L, fmt, fl + 1);
    LLVMValueRef buf = ns ? lower_alloca(L, LLVMArrayType2(L->t_i64, (uint64_t)ns), "printbuf")
                          : LLVMConstNull(L->t_ptr);
    for (int k = 0; k < ns; k++) {
        LLVMValueRef idx = LLVMConstInt(L->t_i64, (unsigned long long)k, 0);
        LLVMValueRef p = LLVMBuildGEP2(B, L->t_i64, buf, &idx, 1, "");
        LLVMValueRef st = LLVMBuildStore(B, slots[k], p);
        LLVMSetAlignment(st, 8);
    }
    if (L->tg->kind == JIT_TARGET_PTX) {
        LLVMTypeRef pt[2] = {L->t_ptr, L->t_ptr};
        LLVMValueRef a[2] = {f, buf};
        lower_call_named(L, "vprintf", L->t_i32, pt, a, 2, false);
    } else {
        LLVMTypeRef pt[3] = {L->t_ptr, L->t_ptr, L->t_ptr};
        LLVMValueRef a[3] = {L->ctx, f, buf};
        lower_call_named(L, "gpy_cpu_print", L->t_void, pt, a, 3, false);
    }
}

/* ------------------------------------------------------ python builtins */

static LLVMValueRef minmax(Lower *L, AstNode *n, JInfo *info, bool is_max) {
    const JType *t = info->op_type ? info->op_type : info->type;
    LLVMValueRef vals[64];
    int nv = 0;
    AstList *args = &n->u.call.args;
    if (args->len == 1) {
        AstNode *an = args->items[0];
        const JType *tt = lower_info(L, an)->type;
        if (tt->kind != JK_TUPLE || tt->n < 1 || tt->n > 64) lower_fail(L, n, "min/max of a non-tuple");
        LLVMValueRef tv = lower_expr(L, an);
        for (int i = 0; i < tt->n; i++)
            vals[nv++] = lower_convert(L, LLVMBuildExtractValue(L->B, tv, (unsigned)i, ""), tt->elems[i], t, n);
    } else {
        for (int i = 0; i < args->len && nv < 64; i++) vals[nv++] = lower_expr_as(L, args->items[i], t);
    }
    if (!nv) lower_fail(L, n, "min/max of nothing");
    LLVMValueRef r = vals[0];
    bool s = t->kind >= JK_INT8 && t->kind <= JK_INT64;
    for (int i = 1; i < nv; i++) {
        LLVMValueRef take;
        if (jt_is_float(t))
            take = LLVMBuildFCmp(L->B, is_max ? LLVMRealOGT : LLVMRealOLT, vals[i], r, "");
        else
            take = LLVMBuildICmp(L->B, is_max ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT),
                                 vals[i], r, "");
        r = LLVMBuildSelect(L->B, take, vals[i], r, "");
    }
    return lower_convert(L, r, t, info->type, n);
}

/* round(x) → int (half to even); round(x, nd) → float (Numba's algorithm). */
static LLVMValueRef lower_round(Lower *L, AstNode *n, JInfo *info) {
    AstList *args = &n->u.call.args;
    AstNode *xn = args->items[0];
    const JType *xt = lower_info(L, xn)->type;
    LLVMValueRef x = lower_expr(L, xn);
    if (!jt_is_float(xt)) return lower_convert(L, x, xt, info->type, n);
    LLVMTypeRef ty = LLVMTypeOf(x);
    if (args->len == 1) {
        LLVMValueRef r = lower_intrinsic(L, "llvm.roundeven", &ty, 1, &x, 1);
        return lower_convert(L, r, xt, info->type, n);
    }
    LLVMBuilderRef B = L->B;
    LLVMValueRef nd = lower_expr_as(L, args->items[1], jt_scalar(L->vm, JK_INT64));
    LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, nd, LLVMConstInt(L->t_i64, 0, 0), "");
    LLVMValueRef absnd = LLVMBuildSelect(B, neg, LLVMBuildNeg(B, nd, ""), nd, "");
    LLVMValueRef pargs[2] = {LLVMConstReal(ty, 10.0), LLVMBuildSIToFP(B, absnd, ty, "")};
    LLVMValueRef p = lower_math(L, JB_MATH_POW, pargs, 2, xt);
    LLVMValueRef y = LLVMBuildSelect(B, neg, LLVMBuildFDiv(B, x, p, ""), LLVMBuildFMul(B, x, p, ""), "");
    LLVMValueRef z = lower_intrinsic(L, "llvm.roundeven", &ty, 1, &y, 1);
    LLVMValueRef back = LLVMBuildSelect(B, neg, LLVMBuildFMul(B, z, p, ""), LLVMBuildFDiv(B, z, p, ""), "");
    /* overflow of x*10^nd: x itself */
    LLVMValueRef yinf = LLVMBuildFCmp(B, LLVMRealOEQ, fabs_of(L, y), LLVMConstReal(ty, INFINITY), "");
    back = LLVMBuildSelect(B, yinf, x, back, "");
    return lower_convert(L, back, xt, info->type, n);
}

static LLVMValueRef lower_abs(Lower *L, AstNode *n, JInfo *info) {
    const JType *t = info->op_type ? info->op_type : info->type;
    LLVMValueRef v = lower_expr_as(L, n->u.call.args.items[0], t), r;
    if (jt_is_complex(t)) return lower_complex_abs(L, v, t);
    if (jt_is_float(t)) r = fabs_of(L, v);
    else if (t->kind >= JK_INT8 && t->kind <= JK_INT64)
        r = LLVMBuildSelect(L->B, LLVMBuildICmp(L->B, LLVMIntSLT, v, LLVMConstNull(LLVMTypeOf(v)), ""),
                            LLVMBuildNeg(L->B, v, ""), v, "");
    else r = v;
    return lower_convert(L, r, t, info->type, n);
}

LLVMValueRef lower_builtin_call(Lower *L, AstNode *n, JInfo *info) {
    AstList *args = &n->u.call.args;
    switch (info->builtin) {
    case JB_GRID: return lower_grid(L, info, false);
    case JB_GRIDSIZE: return lower_grid(L, info, true);
    case JB_SYNCTHREADS: L->tg->barrier(L); return NULL;
    case JB_SHARED_ARRAY: return lower_alloc_array(L, n, info, true);
    case JB_LOCAL_ARRAY: return lower_alloc_array(L, n, info, false);
    case JB_ATOMIC_ADD: case JB_ATOMIC_SUB: case JB_ATOMIC_MAX: case JB_ATOMIC_MIN:
    case JB_ATOMIC_EXCH: case JB_ATOMIC_CAS: case JB_ATOMIC_AND: case JB_ATOMIC_OR:
    case JB_ATOMIC_XOR: case JB_ATOMIC_INC: case JB_ATOMIC_DEC: case JB_ATOMIC_NANMAX: case JB_ATOMIC_NANMIN:
        return lower_atomic(L, n, info);
    case JB_ATOMIC_CAS1: return lower_cas1(L, n, info);
    case JB_PRINT: lower_print(L, n); return NULL;
    case JB_CONST_ARRAY: return lower_expr(L, args->items[0]);
    case JB_SYNCTHREADS_COUNT: case JB_SYNCTHREADS_AND: case JB_SYNCTHREADS_OR:
        return lower_barrier_reduce(L, n, info);
    case JB_THREADFENCE: case JB_THREADFENCE_BLOCK: case JB_THREADFENCE_SYSTEM:
        lower_fence(L, info->builtin);
        return NULL;
    case JB_SHFL_IDX: case JB_SHFL_UP: case JB_SHFL_DOWN: case JB_SHFL_XOR: case JB_VOTE_ALL:
    case JB_VOTE_ANY: case JB_VOTE_EQ: case JB_BALLOT: case JB_ACTIVEMASK: case JB_SYNCWARP:
        return lower_warp(L, n, info);
    case JB_MATCH_ANY: case JB_MATCH_ALL: case JB_LANEMASK_LT: return lower_warp_match(L, n, info);
    case JB_LEN: {
        if (args->len != 1) lower_fail(L, n, "len() takes one argument");
        const JType *t = lower_info(L, args->items[0])->type;
        if (t->kind == JK_TUPLE) return LLVMConstInt(lower_type(L, info->type), (unsigned long long)t->n, 0);
        if (t->kind != JK_ARRAY) lower_fail(L, n, "len() of a non-array");
        LLVMValueRef a = lower_expr(L, args->items[0]);
        LLVMValueRef d0 = LLVMBuildExtractValue(L->B, LLVMBuildExtractValue(L->B, a, 1, ""), 0, "");
        return lower_convert(L, d0, jt_scalar(L->vm, JK_INT64), info->type, n);
    }
    case JB_MIN: return minmax(L, n, info, false);
    case JB_MAX: return minmax(L, n, info, true);
    case JB_ABS: return lower_abs(L, n, info);
    case JB_ROUND: return lower_round(L, n, info);
    case JB_CMATH_EXP: case JB_CMATH_LOG: case JB_CMATH_SQRT: case JB_CMATH_PHASE:
        return lower_complex_cmath(L, info->builtin, lower_expr_as(L, args->items[0], info->op_type), info->op_type);
    case JB_COMPLEX_CONJ: {
        AstNode *zn = n->u.call.func->u.attr.value;
        LLVMValueRef z = lower_expr(L, zn);
        const JType *zt = lower_info(L, zn)->type;
        return jt_is_complex(zt) ? lower_complex_conj(L, z, zt) : z;
    }
    case JB_COMPLEX: {
        if (args->len == 0) return LLVMConstNull(lower_type(L, info->type));
        const JType *rt = lower_info(L, args->items[0])->type;
        LLVMValueRef re = lower_expr(L, args->items[0]), im = NULL;
        const JType *it = NULL;
        if (args->len == 2) {
            it = lower_info(L, args->items[1])->type;
            im = lower_expr(L, args->items[1]);
        }
        return lower_complex_make(L, info->type, re, rt, im, it, n);
    }
    case JB_INT: case JB_FLOAT: case JB_BOOL: case JB_CAST:
        if (args->len == 0) return LLVMConstNull(lower_type(L, info->type));
        return lower_expr_as(L, args->items[0], info->type);
    case JB_RANGE:
        lower_fail(L, n, "range() is only supported as the iterable of a for loop");
    default:
        break;
    }
    if (info->builtin >= JB_MATH_SQRT && info->builtin <= JB_MATH_ISFINITE) {
        const JType *t = info->op_type ? info->op_type : jt_scalar(L->vm, JK_FLOAT64);
        LLVMValueRef av[2];
        int na = args->len;
        if (na < 1 || na > 2) lower_fail(L, n, "wrong number of arguments to a math function");
        for (int i = 0; i < na; i++) av[i] = lower_expr_as(L, args->items[i], t);
        LLVMValueRef r = lower_math(L, info->builtin, av, na, t);
        const JType *rt = info->builtin >= JB_MATH_ISNAN ? jt_scalar(L->vm, JK_BOOL) : t;
        return lower_convert(L, r, rt, info->type, n);
    }
    lower_fail(L, n, "unsupported call in a kernel");
}

LLVMValueRef lower_builtin_attr(Lower *L, AstNode *n, JInfo *info) {
    const JType *i32 = jt_scalar(L->vm, JK_INT32), *i64 = jt_scalar(L->vm, JK_INT64);
    JBuiltin b = info->builtin;
    if (b >= JB_THREADIDX_X && b <= JB_GRIDDIM_Z) {
        static const JSreg which[4] = {SREG_TID, SREG_CTAID, SREG_NTID, SREG_NCTAID};
        int k = (int)(b - JB_THREADIDX_X);
        return lower_convert(L, L->tg->sreg(L, which[k / 3], k % 3), i32, info->type, n);
    }
    if (b == JB_LANEID) return lower_convert(L, L->tg->sreg(L, SREG_LANEID, 0), i32, info->type, n);
    if (b == JB_WARPSIZE) return lower_convert(L, LLVMConstInt(L->t_i32, 32, 0), i32, info->type, n);
    if (b == JB_ARRAY_SHAPE || b == JB_ARRAY_SIZE || b == JB_ARRAY_NDIM) {
        AstNode *an = n->u.attr.value;
        const JType *at = lower_info(L, an)->type;
        if (at->kind != JK_ARRAY) lower_fail(L, n, "internal error: array attribute of a non-array");
        if (b == JB_ARRAY_NDIM)
            return lower_convert(L, LLVMConstInt(L->t_i64, (unsigned long long)at->ndim, 0), i64, info->type, n);
        LLVMValueRef shape = LLVMBuildExtractValue(L->B, lower_expr(L, an), 1, "");
        if (b == JB_ARRAY_SIZE) {
            if (L->narrow) {
                /* the size is below 2^31 too; a partial product of an empty
                ** array may not be, so wrapping products (exact modulo 2^32) */
                LLVMValueRef p = LLVMConstInt(L->t_i32, 1, 0);
                for (int k = 0; k < at->ndim; k++) {
                    LLVMValueRef d = LLVMBuildTrunc(L->B, LLVMBuildExtractValue(L->B, shape, (unsigned)k, ""), L->t_i32, "");
                    p = LLVMBuildMul(L->B, p, d, "");
                }
                LLVMValueRef z = LLVMBuildZExt(L->B, p, L->t_i64, "");
                if (LLVMIsAInstruction(z)) LLVMSetNNeg(z, 1);
                return lower_convert(L, z, i64, info->type, n);
            }
            LLVMValueRef p = LLVMConstInt(L->t_i64, 1, 0);
            for (int k = 0; k < at->ndim; k++)
                p = LLVMBuildMul(L->B, p, LLVMBuildExtractValue(L->B, shape, (unsigned)k, ""), "");
            return lower_convert(L, p, i64, info->type, n);
        }
        const JType *tt = info->type;
        if (tt->kind != JK_TUPLE || tt->n != at->ndim) lower_fail(L, n, "internal error: bad shape type");
        LLVMValueRef v = LLVMGetUndef(lower_type(L, tt));
        for (int k = 0; k < at->ndim; k++) {
            LLVMValueRef d = LLVMBuildExtractValue(L->B, shape, (unsigned)k, "");
            v = LLVMBuildInsertValue(L->B, v, lower_convert(L, d, i64, tt->elems[k], n), (unsigned)k, "");
        }
        return v;
    }
    if (b == JB_COMPLEX_REAL || b == JB_COMPLEX_IMAG)
        return lower_complex_part(L, lower_expr(L, n->u.attr.value), b == JB_COMPLEX_IMAG);
    lower_fail(L, n, "unsupported attribute '%s' in a kernel", n->u.attr.attr);
}
