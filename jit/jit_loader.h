/*
** jit_loader.h — libgpy's way into the kernel compiler (jit_loader.c):
** each call loads the compiler first if need be (gpy_jit.so, or the one
** linked into libgpy) and goes through its table (jit_module.h). The
** compiler's own functions (jit_compile_opts, ...) are reached only this way.
*/
#ifndef GPY_JIT_LOADER_H
#define GPY_JIT_LOADER_H

#include "jit.h"

/* Starts loading the compiler for this VM on a background thread (at the
** import of cuda or numba); compiler_preload_join (the cuda free hook) joins
** it at vm_free at the latest. */
void compiler_preload(VM *vm);
void compiler_preload_join(VM *vm);
/* Where the VM keeps its loading thread (types.c: the compiler's per-VM
** state in libgpy); NULL only on out-of-memory. */
struct JitLoader **jit_loader_slot(VM *vm);
/* Raises ImportError (why, with the paths and ABI versions involved) when
** the compiler cannot be loaded. */
void compiler_require(VM *vm);

/* As jit_compile, jit_compile_opts, ... (jit.h); NULL with err set also
** when the compiler cannot be loaded. */
JitKernel *compiler_compile(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                            bool fastmath, char *err, size_t errsize);
JitKernel *compiler_compile_opts(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                                 const JitOptions *opts, char *err, size_t errsize);
char *compiler_compile_ptx_device(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int cc,
                                  bool fastmath, const JType **ret, char *err, size_t errsize);
void compiler_kernel_free(VM *vm, JitKernel *k);
void compiler_debug_reset(JitKernel *k);
bool compiler_debug_message(const JitKernel *k, const JitErrRecord *rec, char *msg, size_t size);
/* The disk cache (as jit_disk_cache_load, ... in disk_cache.h). */
JitKernel *compiler_cache_load(VM *vm, Function *fn, int nargs, const JType *const *tys, int target, int cc,
                               const JitOptions *o);
void compiler_cache_store(VM *vm, Function *fn, const JitKernel *k, int target, int cc, const JitOptions *o);
void compiler_cache_report(VM *vm);

#endif
