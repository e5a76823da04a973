/*
** cuda_jit_api.h — the kernel compiler's entry points as one table.
**
** The compiler (the jit/ files that use LLVM, and stdlib/cuda_cache.c) is
** built as the module gpy_jit.so and loaded on first use by
** cuda_jit_loader.c, so that a program that never imports cuda does not pay
** for mapping and relocating libLLVM at start-up (about 15 ms). The module
** exports one symbol, gpy_jit_api, which returns this table; the loader
** defines the usual names (jit_compile_opts, ...) as calls through it.
** With GPY_LLVM_STATIC=ON everything is linked into gpy and no table is used.
*/
#ifndef GPY_CUDA_JIT_API_H
#define GPY_CUDA_JIT_API_H

#include <stdatomic.h>

#include "cuda_priv.h"

typedef struct JitApi {
    JitKernel *(*compile)(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                          bool fastmath, char *err, size_t errsize);
    JitKernel *(*compile_opts)(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                               const JitOptions *opts, char *err, size_t errsize);
    char *(*compile_ptx_device)(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int cc,
                                bool fastmath, const JType **ret, char *err, size_t errsize);
    void (*kernel_free)(VM *vm, JitKernel *k);
    void (*debug_reset)(JitKernel *k);
    bool (*debug_message)(const JitKernel *k, const JitErrRecord *rec, char *msg, size_t size);
    JitKernel *(*cache_load)(VM *vm, Function *fn, int nargs, const JType *const *tys, int target, int cc,
                             const JitOptions *o);
    void (*cache_store)(VM *vm, Function *fn, const JitKernel *k, int target, int cc, const JitOptions *o);
    void (*cache_report)(VM *vm, CudaState *st);
    void (*init)(void); /* jit_llvm_init: once per process, before anything else */
    JitPrepared *(*prepared_new)(void);
    void (*warm_up)(JitPrepared *p, int targets, atomic_bool *stop);
    void (*adopt)(VM *vm, JitPrepared *p);
    void (*prepared_free)(JitPrepared *p);
} JitApi;

const JitApi *gpy_jit_api(void) __attribute__((visibility("default")));

/* cuda_jit_loader.c: starts loading the compiler for this VM on a
** background thread (at the import of cuda or numba); the join happens at
** vm_free (cuda_jit_preload_join, from the cuda free hook) at the latest. */
void cuda_jit_preload(VM *vm, CudaState *st);
void cuda_jit_preload_join(CudaState *st);

#endif
