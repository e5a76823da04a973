/*
** libdevice.c — NVIDIA's libdevice (the __nv_* math functions as LLVM
** bitcode), linked into PTX modules that call math functions. The file is
** read once per VM; each module parses it lazily and links only what it
** references (linkonce_odr), then internalizes it so O3 inlines and drops it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

#include "target.h"

#ifndef GPY_CUDA_HOME
#define GPY_CUDA_HOME "/usr/local/cuda"
#endif

static char *read_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = NULL;
    if (fseek(fp, 0, SEEK_END) == 0) {
        long n = ftell(fp);
        if (n > 0 && fseek(fp, 0, SEEK_SET) == 0) {
            buf = malloc((size_t)n);
            if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
                free(buf);
                buf = NULL;
            }
            *len = (size_t)n;
        }
    }
    fclose(fp);
    return buf;
}

/* Looks for libdevice under config.cuda_home (GPY_CUDA_HOME, CUDA_HOME), the
** toolkit gpy was built with and /usr/local/cuda. */
static bool load_libdevice(struct JitState *js, const char *cuda_home, char *err, size_t errsize) {
    if (js->libdevice) return true;
    const char *roots[3] = {cuda_home, GPY_CUDA_HOME, "/usr/local/cuda"};
    char tried[600] = "";
    size_t off = 0;
    for (int i = 0; i < 3; i++) {
        if (!roots[i] || !*roots[i]) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/nvvm/libdevice/libdevice.10.bc", roots[i]);
        js->libdevice = read_file(path, &js->libdevice_len);
        if (js->libdevice) return true;
        if (off < sizeof tried - 2)
            off += (size_t)snprintf(tried + off, sizeof tried - off, "%s%s", off ? ", " : "", path);
    }
    snprintf(err, errsize,
             "math functions on the GPU need CUDA's libdevice, which was not found (tried %s); "
             "set GPY_CUDA_HOME to the CUDA toolkit", tried);
    return false;
}

bool jit_link_libdevice(VM *vm, LLVMModuleRef M, char *err, size_t errsize) {
    struct JitState *js = vm->jit;
    if (!load_libdevice(js, vm->config.cuda_home, err, errsize)) return false;
    LLVMContextRef C = LLVMGetModuleContext(M);
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRange(js->libdevice, js->libdevice_len, "libdevice", 0);
    LLVMModuleRef lib = NULL;
    if (LLVMGetBitcodeModuleInContext2(C, buf, &lib)) {
        snprintf(err, errsize, "cannot read libdevice bitcode");
        return false;
    }
    LLVMSetTarget(lib, LLVMGetTarget(M));
    LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(M));
    for (LLVMValueRef f = LLVMGetFirstFunction(lib); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f)) LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
    if (LLVMLinkModules2(M, lib)) {
        snprintf(err, errsize, "linking libdevice failed");
        return false;
    }
    /* only the kernel stays visible */
    for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && LLVMGetFunctionCallConv(f) != LLVMPTXKernelCallConv &&
            LLVMGetLinkage(f) != LLVMExternalLinkage)
            LLVMSetLinkage(f, LLVMInternalLinkage);
    return true;
}
