/*
** jit_module.h — the contract between libgpy and its kernel compiler.
**
** The compiler (the jit/ files that use LLVM, listed in CMakeLists.txt as
** GPY_COMPILER_SOURCES) is built as the module gpy_jit.so and loaded on
** first use by jit_loader.c: a program that never imports cuda does not pay
** for mapping and relocating LLVM at start-up. The two sides talk through
** two tables, nothing else:
**
**   JitHost  what the compiler asks of its host (libgpy): the few VM, type,
**            array and CPU-device functions it calls. jit/ defines the
**            interface; the host (stdlib/cuda_jit_host.c) implements it,
**            as GPUCompiler.jl's interface.jl has its users do.
**   JitApi   what the compiler offers: compile, free, the disk cache, ...
**
** libgpy is built with hidden visibility, so the module cannot resolve any
** VM symbol by name; it is linked with -z defs, so a call that bypasses
** JitHost fails the build instead of the dlopen.
**
** The module exports one symbol, gpy_jit_entry (JitEntryFn). Its signature
** never changes, so that each side can tell the other's GPY_ABI_VERSION even
** when they disagree: the module always reports its own version in
** *module_abi and returns NULL unless host_abi equals it; the loader refuses
** a module reporting another version. The error then names both versions.
** Any change to JitHost or JitApi (or to the types they pass) therefore
** bumps GPY_ABI_VERSION in gpy.h.
**
** With GPY_LLVM_STATIC=ON the same compiler objects are linked into libgpy
** and the loader finds gpy_jit_entry there instead of loading a module.
*/
#ifndef GPY_JIT_MODULE_H
#define GPY_JIT_MODULE_H

#include <stdatomic.h>

#include "binding.h"
#include "disk_cache.h"
#include "jit.h"
#include "lexer.h"

/* at most this many runtime symbols (JitHost.cpu_runtime) */
enum { JIT_RUNTIME_MAX = 16 };
typedef struct JitRuntimeSymbol {
    const char *name;
    void (*addr)(void);
} JitRuntimeSymbol;

typedef struct JitHost {
    /* vm/ */
    const char *(*ast_kind_name)(AstKind k);
    void (*ast_visit_children)(AstNode *n, void (*fn)(AstNode *child, void *ud), void *ud);
    void (*vm_on_free)(VM *vm, void (*hook)(VM *vm));
    /* jit/ type inference (no LLVM: part of libgpy) */
    JFunc *(*jit_infer)(VM *vm, Function *fn, int nargs, const JType *const *argtypes, bool is_kernel, char *err,
                        size_t errsize);
    JInfo *(*jf_info)(const JFunc *f, const AstNode *n);
    JVar *(*jf_var)(const JFunc *f, const char *name);
    void (*jf_free)(JFunc *f);
    const JType *(*jt_scalar)(VM *vm, JKind k);
    const char *(*jt_name)(const JType *t, char *buf, size_t size);
    JitCacheStats *(*jit_cache_stats)(VM *vm); /* the disk cache's counters (types.c) */
    size_t (*dtype_itemsize)(NDType dt); /* contracts/dtype.c */
    /* the cuda binding's answers about values (jit/binding.h) */
    const struct JitBinding *(*jit_binding)(VM *vm);
    /* the CPU device's runtime that compiled CPU kernels call by name
    ** (gpy_cpu_syncthreads, ...): jit.c defines each as an absolute symbol
    ** in every LLJIT. Only addresses cross here, never calls. */
    const JitRuntimeSymbol *cpu_runtime;
    int ncpu_runtime;
} JitHost;

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
    void (*cache_report)(VM *vm);
    JitPrepared *(*prepared_new)(void);
    void (*warm_up)(JitPrepared *p, int targets, atomic_bool *stop);
    void (*adopt)(VM *vm, JitPrepared *p);
    void (*prepared_free)(JitPrepared *p);
} JitApi;

/* The module's one export (jit_module.c). Initializes LLVM (once per
** process; the loader calls it once) and returns the compiler's table, or
** NULL when host_abi is not the module's GPY_ABI_VERSION. */
typedef const JitApi *(*JitEntryFn)(int host_abi, const JitHost *host, int *module_abi);

/* The host's table (stdlib/cuda_jit_host.c). */
extern const JitHost cuda_jit_host;

#endif
