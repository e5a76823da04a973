/*
** lower_globals.c — a device array global (infer_globals.c) as an array
** value whose data pointer is the array's address (on the GPU its device
** address, on the CPU device its memory) and whose shape and strides are
** constants: the kernel reads and writes the array itself.
*/
#include "binding.h"
#include "target.h"

bool lower_is_device_global(Lower *L, Value v) {
    const JitBinding *host = jit_binding(L->vm);
    uint64_t gpu;
    return host->device_array_address && host->device_array_address(L->vm, v, &gpu);
}

LLVMValueRef lower_device_global(Lower *L, Value v, const JType *t, const AstNode *at) {
    const JitBinding *host = jit_binding(L->vm);
    uint64_t gpu = 0;
    JitArrayView a;
    if (!host->device_array_address(L->vm, v, &gpu) || !host->array_view(L->vm, v, true, &a))
        lower_fail(L, at, "bad device array global");
    if (a.ndim != t->ndim || a.dtype != t->dtype) lower_fail(L, at, "global array changed type since compilation");
    uint64_t addr = L->tg->kind == JIT_TARGET_PTX && gpu ? gpu : (uint64_t)(uintptr_t)a.data;
    LLVMValueRef data = LLVMConstIntToPtr(LLVMConstInt(L->t_i64, addr, 0), L->t_ptr);
    LLVMValueRef s[3], st[3];
    for (int k = 0; k < a.ndim; k++) {
        s[k] = LLVMConstInt(L->t_i64, (unsigned long long)a.shape[k], 0);
        st[k] = LLVMConstInt(L->t_i64, (unsigned long long)a.strides[k], 1);
    }
    LLVMValueRef r = LLVMGetUndef(lower_type(L, t));
    r = LLVMBuildInsertValue(L->B, r, data, 0, "");
    r = LLVMBuildInsertValue(L->B, r, LLVMConstArray2(L->t_i64, s, (uint64_t)a.ndim), 1, "");
    return LLVMBuildInsertValue(L->B, r, LLVMConstArray2(L->t_i64, st, (uint64_t)a.ndim), 2, "");
}
