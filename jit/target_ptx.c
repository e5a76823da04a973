/*
** target_ptx.c — the NVPTX side of the target interface: special registers
** through llvm.nvvm.read.ptx.sreg.*, shared arrays as addrspace(3) globals,
** bar.sync through llvm.nvvm.barrier0, math through libdevice (__nv_*).
*/
#include <stdio.h>

#include "target.h"

static LLVMValueRef ptx_sreg(Lower *L, JSreg which, int dim) {
    static const char *const base[] = {"tid", "ctaid", "ntid", "nctaid", "laneid"};
    char name[64];
    if (which == SREG_LANEID) snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.laneid");
    else snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", base[which], "xyz"[dim]);
    return lower_intrinsic(L, name, NULL, 0, NULL, 0);
}

static void ptx_barrier(Lower *L) {
    lower_intrinsic(L, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
}

/* A static shared array: an internal addrspace(3) global with an undef
** initializer (a zeroinitializer would be dropped silently by NVPTX). */
static LLVMValueRef ptx_shared_array(Lower *L, LLVMTypeRef elem, int64_t count, size_t itemsize) {
    char name[64];
    if (count == 0) { /* .extern .shared: the launch's dynamic shared memory */
        LLVMValueRef g = LLVMGetNamedGlobal(L->M, "__gpy_dynshared");
        if (!g) {
            g = LLVMAddGlobalInAddressSpace(L->M, LLVMArrayType2(L->t_i8, 0), "__gpy_dynshared", 3);
            LLVMSetLinkage(g, LLVMExternalLinkage);
            LLVMSetAlignment(g, 16);
        }
        (void)elem;
        return LLVMConstAddrSpaceCast(g, L->t_ptr);
    }
    snprintf(name, sizeof name, "__gpy_shared_%d", L->nshared++);
    LLVMTypeRef at = LLVMArrayType2(elem, (uint64_t)count);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->M, at, name, 3);
    LLVMSetInitializer(g, LLVMGetUndef(at));
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetAlignment(g, itemsize < 16 ? 16 : (unsigned)itemsize);
    L->smem_bytes += (size_t)count * itemsize;
    return LLVMConstAddrSpaceCast(g, L->t_ptr);
}

/* %dynamic_smem_size (PTX ISA 4.1): LLVM 19 has no intrinsic for it */
static LLVMValueRef ptx_dyn_shared_bytes(Lower *L) {
    LLVMTypeRef fty = LLVMFunctionType(L->t_i32, NULL, 0, 0);
    static const char text[] = "mov.u32 $0, %dynamic_smem_size;";
    LLVMValueRef asm_fn = LLVMGetInlineAsm(fty, text, sizeof text - 1, "=r", 2, 0, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef v = LLVMBuildCall2(L->B, fty, asm_fn, NULL, 0, "dynsmem");
    return LLVMBuildZExt(L->B, v, L->t_i64, "");
}

const Target jit_target_ptx = {
    .kind = JIT_TARGET_PTX,
    .sreg = ptx_sreg,
    .barrier = ptx_barrier,
    .shared_array = ptx_shared_array,
    .dyn_shared_bytes = ptx_dyn_shared_bytes,
    .math_prefix = "__nv_",
};
