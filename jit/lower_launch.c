/*
** lower_launch.c — child[grid, block](args) in a kernel (JB_LAUNCH, typed by
** infer_launch.c): a kernel launching a kernel.
**
** The arguments are expanded to the kernel parameter ABI (jit.h) and stored
** into a parameter buffer, each parameter at an offset aligned to its size,
** as CUDA lays out kernel parameters.
**   PTX: the CUDA device runtime (CDP2, CUDA 12+), as nvcc emits it:
**        buf = __cudaCDP2GetParameterBufferV2(&child, grid, block, shared);
**        if (buf) { store the parameters; __cudaCDP2LaunchDeviceV2(buf, 0); }
**        The child is a second .entry of the same module; loading the module
**        links libcudadevrt (gpu/cuda_module.c). A launch the runtime
**        refuses (no buffer) is skipped, as in CUDA.
**   CPU: the buffer is a stack temporary handed to gpy_cpu_launch_child
**        with the child's separately compiled JitKernel; the runtime copies
**        it and runs the child grid when the launching grid is done
**        (gpu/cpu_child_grids.c).
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "target.h"

#define MAX_LAUNCH_PARAMS 512

/* The device runtime entry points of CUDA 13's libcudadevrt. */
#define CDP_PARAM_BUFFER "__cudaCDP2GetParameterBufferV2"
#define CDP_LAUNCH "__cudaCDP2LaunchDeviceV2"

/* Expands v (of type t) into ABI parameters, as lower_from_abi reads them. */
static void flatten(Lower *L, const JType *t, LLVMValueRef v, LLVMValueRef *out, int *n, const AstNode *at) {
    LLVMBuilderRef B = L->B;
    if (t->kind == JK_ARRAY) {
        if (*n + 1 + 2 * t->ndim > MAX_LAUNCH_PARAMS) lower_fail(L, at, "too many kernel parameters");
        out[(*n)++] = LLVMBuildExtractValue(B, v, 0, "");
        for (unsigned part = 1; part <= 2; part++) {
            LLVMValueRef d = LLVMBuildExtractValue(B, v, part, "");
            for (int k = 0; k < t->ndim; k++) out[(*n)++] = LLVMBuildExtractValue(B, d, (unsigned)k, "");
        }
        return;
    }
    if (t->kind == JK_TUPLE) {
        for (int k = 0; k < t->n; k++)
            flatten(L, t->elems[k], LLVMBuildExtractValue(B, v, (unsigned)k, ""), out, n, at);
        return;
    }
    if (jt_is_complex(t)) { /* two parameters: real, imaginary */
        if (*n + 2 > MAX_LAUNCH_PARAMS) lower_fail(L, at, "too many kernel parameters");
        out[(*n)++] = LLVMBuildExtractValue(B, v, 0, "");
        out[(*n)++] = LLVMBuildExtractValue(B, v, 1, "");
        return;
    }
    if (t->kind == JK_NONE) return; /* None: no parameters */
    if (!jt_is_scalar(t)) {
        char tb[128];
        lower_fail(L, at, "a kernel cannot take an argument of type %s", jt_name(t, tb, sizeof tb));
    }
    if (*n + 1 > MAX_LAUNCH_PARAMS) lower_fail(L, at, "too many kernel parameters");
    out[(*n)++] = t->kind == JK_BOOL ? LLVMBuildZExt(B, v, L->t_i8, "") : v;
}

/* Bytes of one expanded parameter (1, 2, 4 or 8). */
static unsigned param_size(Lower *L, LLVMValueRef v) {
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) == LLVMIntegerTypeKind) return LLVMGetIntTypeWidth(t) / 8;
    if (t == L->t_f16) return 2;
    if (t == L->t_f32) return 4;
    return 8; /* double, pointer */
}

/* A grid or block expression as three i32 (missing dimensions are 1). */
static void dims3(Lower *L, AstNode *e, LLVMValueRef out[3]) {
    const JType *t = lower_info(L, e)->type;
    LLVMValueRef v = lower_expr(L, e);
    const JType *u32 = jt_scalar(L->vm, JK_UINT32);
    for (int k = 0; k < 3; k++) out[k] = LLVMConstInt(L->t_i32, 1, 0);
    if (t->kind == JK_TUPLE) {
        for (int k = 0; k < t->n && k < 3; k++)
            out[k] = lower_convert(L, LLVMBuildExtractValue(L->B, v, (unsigned)k, ""), t->elems[k], u32, e);
    } else {
        out[0] = lower_convert(L, v, t, u32, e);
    }
}

static LLVMValueRef struct3(Lower *L, LLVMTypeRef ty, LLVMValueRef d[3]) {
    LLVMValueRef s = LLVMGetUndef(ty);
    for (unsigned k = 0; k < 3; k++) s = LLVMBuildInsertValue(L->B, s, d[k], k, "");
    return s;
}

/* Stores the parameters at their offsets from buf. */
static void store_params(Lower *L, LLVMValueRef buf, LLVMValueRef *vals, const unsigned *offs, int n) {
    for (int k = 0; k < n; k++) {
        LLVMValueRef off = LLVMConstInt(L->t_i64, offs[k], 0);
        LLVMValueRef addr = LLVMBuildGEP2(L->B, L->t_i8, buf, &off, 1, "");
        LLVMValueRef st = LLVMBuildStore(L->B, vals[k], addr);
        LLVMSetAlignment(st, param_size(L, vals[k]));
    }
}

static JitKernel *cpu_child(Lower *L, JFunc *child, const AstNode *at) {
    for (int k = 0; L->children && k < L->children->n; k++)
        if (L->children->f[k] == child) return L->children->k[k];
    lower_fail(L, at, "internal error: kernel '%s' launched here was not compiled", child->name);
}

LLVMValueRef lower_launch(Lower *L, AstNode *n, JInfo *info) {
    JFunc *child = info->callee;
    AstNode *cfg = n->u.call.func->u.subscript.index;
    AstNode **items = cfg->u.seq.elts.items;
    int nc = (int)info->shape[0];
    LLVMValueRef grid[3], block[3];
    dims3(L, items[0], grid);
    dims3(L, items[1], block);
    LLVMValueRef shared = LLVMConstInt(L->t_i32, 0, 0);
    if (nc == 4) shared = lower_expr_as(L, items[3], jt_scalar(L->vm, JK_UINT32));
    /* the arguments, expanded and laid out */
    LLVMValueRef vals[MAX_LAUNCH_PARAMS];
    unsigned offs[MAX_LAUNCH_PARAMS];
    int np = 0;
    if (n->u.call.args.len != child->nargs) lower_fail(L, n, "internal error: launch arity");
    for (int k = 0; k < child->nargs; k++) {
        AstNode *a = n->u.call.args.items[k];
        LLVMValueRef v = lower_expr_as(L, a, child->argtypes[k]);
        flatten(L, child->argtypes[k], v, vals, &np, a);
    }
    unsigned size = 0;
    for (int k = 0; k < np; k++) {
        unsigned sz = param_size(L, vals[k]);
        size = (size + sz - 1) / sz * sz;
        offs[k] = size;
        size += sz;
    }
    LLVMTypeRef dim3 = LLVMStructTypeInContext(L->C, (LLVMTypeRef[]){L->t_i32, L->t_i32, L->t_i32}, 3, 0);
    if (L->tg->kind == JIT_TARGET_PTX) {
        LLVMValueRef fn = lower_fn_for(L, child); /* emitted as an .entry of this module */
        LLVMTypeRef pt[4] = {L->t_ptr, dim3, dim3, L->t_i32};
        LLVMValueRef args[4] = {fn, struct3(L, dim3, grid), struct3(L, dim3, block), shared};
        LLVMValueRef buf = lower_call_named(L, CDP_PARAM_BUFFER, L->t_ptr, pt, args, 4, false);
        LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(L->C, L->fn, "launch");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->C, L->fn, "launched");
        LLVMValueRef ok = LLVMBuildICmp(L->B, LLVMIntNE, buf, LLVMConstNull(L->t_ptr), "");
        LLVMBuildCondBr(L->B, ok, go, done);
        LLVMPositionBuilderAtEnd(L->B, go);
        store_params(L, buf, vals, offs, np);
        LLVMTypeRef lt[2] = {L->t_ptr, L->t_ptr};
        LLVMValueRef la[2] = {buf, LLVMConstNull(L->t_ptr)}; /* the default stream */
        lower_call_named(L, CDP_LAUNCH, L->t_i32, lt, la, 2, false);
        LLVMBuildBr(L->B, done);
        LLVMPositionBuilderAtEnd(L->B, done);
        return NULL;
    }
    JitKernel *ck = cpu_child(L, child, n);
    LLVMValueRef buf = lower_alloca(L, LLVMArrayType2(L->t_i8, size ? size : 1), "launch_params");
    LLVMSetAlignment(buf, 16);
    store_params(L, buf, vals, offs, np);
    /* the child's CpuKernel (filled once the child's code exists, before any launch) */
    LLVMValueRef kp = LLVMConstIntToPtr(LLVMConstInt(L->t_i64, (uint64_t)(uintptr_t)&ck->cpu, 0), L->t_ptr);
    LLVMTypeRef pt[14] = {L->t_ptr, L->t_i32, L->t_i32, L->t_i32, L->t_ptr, L->t_i32, L->t_i32,
                          L->t_i32, L->t_i32, L->t_i32, L->t_i32, L->t_i32, L->t_ptr, L->t_i32};
    LLVMValueRef args[14] = {L->ctx, L->tid[0], L->tid[1], L->tid[2], kp, grid[0], grid[1], grid[2],
                             block[0], block[1], block[2], shared, buf, LLVMConstInt(L->t_i32, size, 0)};
    lower_call_named(L, "gpy_cpu_launch_child", L->t_void, pt, args, 14, false);
    return NULL;
}
