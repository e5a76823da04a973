/*
** target_cpu.c — the CPU-device side of the target interface. Kernel code
** reads its indices from the KernelCtx (jit.h) passed as every function's
** first argument, finds shared arrays at ctx->smem + a static offset, and
** calls gpy_cpu_syncthreads(ctx) for barriers. Also builds the two entry
** points the CPU device calls: cpu_block (all threads of a block in a
** native loop) and cpu_thread (one thread, for fibers).
*/
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "target.h"

static LLVMValueRef ctx_field(Lower *L, size_t offset) {
    LLVMValueRef off = LLVMConstInt(L->t_i64, offset, 0);
    return LLVMBuildGEP2(L->B, L->t_i8, L->ctx, &off, 1, "");
}

/* Loads an index field of the ctx. The !range [0, 2^31-1) lets LLVM prove
** grid indices non-negative, so the negative-index wrap folds away and
** array accesses stay affine (vectorizable). */
static LLVMValueRef load_i32(Lower *L, size_t offset) {
    LLVMValueRef v = LLVMBuildLoad2(L->B, L->t_i32, ctx_field(L, offset), "");
    LLVMSetAlignment(v, 4);
    LLVMMetadataRef r[2] = {LLVMValueAsMetadata(LLVMConstInt(L->t_i32, 0, 0)),
                            LLVMValueAsMetadata(LLVMConstInt(L->t_i32, 0x7fffffff, 0))};
    LLVMSetMetadata(v, LLVMGetMDKindIDInContext(L->C, "range", 5),
                    LLVMMetadataAsValue(L->C, LLVMMDNodeInContext2(L->C, r, 2)));
    return v;
}

static LLVMValueRef cpu_sreg(Lower *L, JSreg which, int dim) {
    static const size_t base[] = {offsetof(KernelCtx, tid), offsetof(KernelCtx, ctaid),
                                  offsetof(KernelCtx, ntid), offsetof(KernelCtx, nctaid)};
    if (which == SREG_TID) return L->tid[dim];
    if (which != SREG_LANEID) return load_i32(L, base[which] + 4 * (size_t)dim);
    /* lane = linear thread index within the block, mod 32 */
    LLVMBuilderRef B = L->B;
    LLVMValueRef tx = L->tid[0], ty = L->tid[1], tz = L->tid[2];
    LLVMValueRef nx = load_i32(L, offsetof(KernelCtx, ntid)), ny = load_i32(L, offsetof(KernelCtx, ntid) + 4);
    LLVMValueRef lin = LLVMBuildAdd(B, tx, LLVMBuildMul(B, nx, LLVMBuildAdd(B, ty, LLVMBuildMul(B, ny, tz, ""), ""), ""), "");
    return LLVMBuildAnd(B, lin, LLVMConstInt(L->t_i32, 31, 0), "");
}

static void cpu_barrier(Lower *L) {
    LLVMTypeRef pt = L->t_ptr;
    LLVMValueRef a = L->ctx;
    lower_call_named(L, "gpy_cpu_syncthreads", L->t_void, &pt, &a, 1, false);
}

/* Shared arrays live at ctx->smem + a static offset (16-byte aligned). */
static LLVMValueRef cpu_shared_array(Lower *L, LLVMTypeRef elem, int64_t count, size_t itemsize) {
    (void)elem;
    if (count == 0) { /* dynamic: after every static array; the offset is known at the end */
        if (!L->dyn_off) {
            L->dyn_off = LLVMAddGlobal(L->M, L->t_i64, "__gpy_dynshared_offset");
            LLVMSetLinkage(L->dyn_off, LLVMInternalLinkage);
            LLVMSetGlobalConstant(L->dyn_off, 1);
        }
        LLVMValueRef base = LLVMBuildLoad2(L->B, L->t_ptr, ctx_field(L, offsetof(KernelCtx, smem)), "");
        LLVMValueRef o = LLVMBuildLoad2(L->B, L->t_i64, L->dyn_off, "");
        return LLVMBuildGEP2(L->B, L->t_i8, base, &o, 1, "");
    }
    size_t off = (L->smem_bytes + 15) & ~(size_t)15;
    L->smem_bytes = off + (size_t)count * itemsize;
    L->nshared++;
    LLVMValueRef base = LLVMBuildLoad2(L->B, L->t_ptr, ctx_field(L, offsetof(KernelCtx, smem)), "");
    LLVMSetAlignment(base, 8);
    LLVMValueRef o = LLVMConstInt(L->t_i64, off, 0);
    return LLVMBuildGEP2(L->B, L->t_i8, base, &o, 1, "");
}

static LLVMValueRef cpu_dyn_shared_bytes(Lower *L) {
    LLVMValueRef v = LLVMBuildLoad2(L->B, L->t_i64, ctx_field(L, offsetof(KernelCtx, dyn_smem)), "");
    LLVMSetAlignment(v, 8);
    return v;
}

const Target jit_target_cpu = {
    .kind = JIT_TARGET_CPU,
    .sreg = cpu_sreg,
    .barrier = cpu_barrier,
    .shared_array = cpu_shared_array,
    .dyn_shared_bytes = cpu_dyn_shared_bytes,
    .math_prefix = "",
};

/* Loads the expanded parameters from params[i] (pointers to the values) into
** args[4..], with args[0] = ctx (args[1..3], the thread index, are the
** caller's). Returns the argument count. */
static unsigned unpack_params(Lower *L, LLVMValueRef body, LLVMValueRef ctx, LLVMValueRef params,
                              LLVMValueRef *args) {
    LLVMTypeRef bt = LLVMGlobalGetValueType(body);
    unsigned n = LLVMCountParamTypes(bt);
    LLVMTypeRef pts[512];
    LLVMGetParamTypes(bt, pts);
    args[0] = ctx;
    for (unsigned i = 4; i < n; i++) {
        LLVMValueRef idx = LLVMConstInt(L->t_i64, i - 4, 0);
        LLVMValueRef slot = LLVMBuildGEP2(L->B, L->t_ptr, params, &idx, 1, "");
        LLVMValueRef p = LLVMBuildLoad2(L->B, L->t_ptr, slot, "");
        LLVMValueRef v = LLVMBuildLoad2(L->B, pts[i], p, "");
        args[i] = v;
    }
    return n;
}

static LLVMMetadataRef loop_hint(Lower *L, const char *name, LLVMValueRef value) {
    LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(L->C, name, strlen(name)), value ? LLVMValueAsMetadata(value) : NULL};
    return LLVMMDNodeInContext2(L->C, ops, value ? 2 : 1);
}

/* O3 and x86 code generation time of a thread loop goes mostly into copies
** of it: the x loop vectorized 16-wide and interleaved 4x, an 8-wide vector
** epilogue, a scalar remainder unrolled 8x, and the y and z loops (one trip
** in most launches) unrolled around all that. Neither unrolling makes the
** kernels faster (bench/jit section d), so x loops keep their remainder
** rolled and y and z loops are not unrolled: a third less O3 plus code
** generation (docs/performance.md).
** The x loop may still be peeled or fully unrolled (a block-sum step
** `if t < s` with s constant needs the peeling), and its interleaving stays:
** without it the block sum runs 10-15% slower. */
void jit_cpu_thread_loop_hints(Lower *L, LLVMValueRef latch_br, int dim) {
    LLVMMetadataRef ops[2];
    size_t n = 0;
    LLVMMetadataRef self = LLVMTemporaryMDNode(L->C, NULL, 0);
    ops[n++] = self;
    if (dim == 0) {
        ops[n++] = loop_hint(L, "llvm.loop.unroll.runtime.disable", NULL);
    } else {
        ops[n++] = loop_hint(L, "llvm.loop.unroll.disable", NULL);
    }
    /* a loop ID names itself: the self-reference makes the node distinct */
    LLVMMetadataRef id = LLVMMDNodeInContext2(L->C, ops, n);
    LLVMMetadataReplaceAllUsesWith(self, id);
    LLVMSetMetadata(latch_br, LLVMGetMDKindIDInContext(L->C, "llvm.loop", 9), LLVMMetadataAsValue(L->C, id));
}

static LLVMValueRef entry_fn(Lower *L, const char *name) {
    LLVMTypeRef pt[2] = {L->t_ptr, L->t_ptr};
    LLVMValueRef fn = LLVMAddFunction(L->M, name, LLVMFunctionType(L->t_void, pt, 2, 0));
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->C, nounwind, 0));
    return fn;
}

/* Builds block_name(ctx, params) — loops z, y, x over blockDim running the
** body with that thread index (ctx->tid is not written) — and
** thread_name(ctx, params), which runs the thread given by ctx->tid. */
void jit_cpu_entries(Lower *L, LLVMValueRef body, const char *block_name, const char *thread_name) {
    LLVMBuilderRef B = LLVMCreateBuilderInContext(L->C);
    L->B = B;
    LLVMTypeRef bt = LLVMGlobalGetValueType(body);
    LLVMValueRef args[512];
    unsigned n;
    if (thread_name) { /* thread entry */
        LLVMValueRef tf = entry_fn(L, thread_name);
        LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(L->C, tf, "entry"));
        L->ctx = LLVMGetParam(tf, 0);
        n = unpack_params(L, body, L->ctx, LLVMGetParam(tf, 1), args);
        for (int d = 0; d < 3; d++) args[d + 1] = load_i32(L, offsetof(KernelCtx, tid) + 4 * (size_t)d);
        LLVMBuildCall2(B, bt, body, args, n, "");
        LLVMBuildRetVoid(B);
    }
    if (block_name && L->regions) { /* the body loops over the threads itself (cpu_regions.c) */
        LLVMValueRef bf = entry_fn(L, block_name);
        LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(L->C, bf, "entry"));
        L->ctx = LLVMGetParam(bf, 0);
        n = unpack_params(L, body, L->ctx, LLVMGetParam(bf, 1), args);
        for (int d = 0; d < 3; d++) args[d + 1] = LLVMConstInt(L->t_i32, 0, 0);
        LLVMBuildCall2(B, bt, body, args, n, "");
        LLVMBuildRetVoid(B);
    } else if (block_name) {
        LLVMValueRef bf = entry_fn(L, block_name);
        LLVMValueRef ctx = LLVMGetParam(bf, 0);
        LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->C, bf, "entry");
        LLVMPositionBuilderAtEnd(B, entry);
        L->ctx = ctx;
        n = unpack_params(L, body, ctx, LLVMGetParam(bf, 1), args);
        LLVMValueRef nd[3];
        for (int d = 0; d < 3; d++) nd[d] = load_i32(L, offsetof(KernelCtx, ntid) + 4 * (size_t)d);
        LLVMBasicBlockRef head[3], bodyb[3], latch[3];
        LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->C, bf, "exit");
        for (int d = 2; d >= 0; d--) {
            head[d] = LLVMAppendBasicBlockInContext(L->C, bf, "head");
            bodyb[d] = LLVMAppendBasicBlockInContext(L->C, bf, "body");
            latch[d] = LLVMAppendBasicBlockInContext(L->C, bf, "latch");
        }
        LLVMValueRef iv[3];
        LLVMBasicBlockRef from = entry;
        LLVMBuildBr(B, head[2]);
        for (int d = 2; d >= 0; d--) {
            LLVMPositionBuilderAtEnd(B, head[d]);
            iv[d] = LLVMBuildPhi(B, L->t_i32, "");
            LLVMValueRef zero = LLVMConstInt(L->t_i32, 0, 0);
            LLVMAddIncoming(iv[d], &zero, &from, 1);
            LLVMValueRef c = LLVMBuildICmp(B, LLVMIntSLT, iv[d], nd[d], "");
            LLVMBuildCondBr(B, c, bodyb[d], d == 2 ? exit : latch[d + 1]);
            LLVMPositionBuilderAtEnd(B, bodyb[d]);
            args[d + 1] = iv[d];
            if (d > 0) LLVMBuildBr(B, head[d - 1]);
            from = bodyb[d];
        }
        /* innermost body: run the thread */
        LLVMBuildCall2(B, bt, body, args, n, "");
        LLVMBuildBr(B, latch[0]);
        for (int d = 0; d < 3; d++) {
            LLVMPositionBuilderAtEnd(B, latch[d]);
            LLVMValueRef nx = LLVMBuildAdd(B, iv[d], LLVMConstInt(L->t_i32, 1, 0), "");
            jit_cpu_thread_loop_hints(L, LLVMBuildBr(B, head[d]), d);
            LLVMBasicBlockRef lb = latch[d];
            LLVMAddIncoming(iv[d], &nx, &lb, 1);
        }
        LLVMPositionBuilderAtEnd(B, exit);
        LLVMBuildRetVoid(B);
    }
    LLVMDisposeBuilder(B);
    L->B = NULL;
}
