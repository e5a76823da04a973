/*
** jit_cache.h — the back-end half of @cuda.jit(cache=True): rebuilding a
** JitKernel from what disk_cache.c read from disk, without lowering
** or optimizing again. The file format, keys and directories belong to
** disk_cache.c; this side only knows compiled artefacts.
*/
#ifndef GPY_JIT_CACHE_H
#define GPY_JIT_CACHE_H

#include <llvm-c/LLJIT.h>

#include "jit.h"

/* What a cache entry holds for one kernel specialization and one target. */
typedef struct JitCachedCode {
    int target;             /* JIT_TARGET_CPU or JIT_TARGET_PTX */
    const char *entry;      /* PTX: the .entry name */
    const char *ptx;        /* PTX: the text */
    const char *ir;         /* CPU: optimized IR text (loaded into ORC); PTX: the IR shown by inspect_llvm */
    uint64_t shared_bytes;  /* static shared memory per block */
    const char *obj;        /* CPU: the native object file, or NULL */
    size_t obj_len;
    const char *obj_tname;  /* CPU: its thread entry symbol */
    const char *obj_bname;  /* CPU: its block entry symbol ("" when the kernel has barriers) */
} JitCachedCode;

/* The native object of a CPU kernel, for the cache. */
typedef struct JitCpuObject {
    char *data;             /* malloc'd */
    size_t len;
    char tname[256], bname[256];
} JitCpuObject;

/* Compiles k's optimized CPU IR (k->llvm_ir, right after jit_compile for the
** CPU alone) to an object file whose entries are named after key. */
bool jit_cache_cpu_object(VM *vm, const JitKernel *k, uint64_t key, JitCpuObject *out, char *err, size_t errsize);

/* Adds what the kernel's code depends on beyond its own file and argument
** types — the values of the globals inference froze into it as constants,
** and the text of other files defining device functions it calls — to *hash. False when the kernel cannot be cached
** (a constant that is not a number, a constant array, debug mode). */
bool jit_cache_fingerprint(const JFunc *f, uint64_t *hash);
/* FNV-1a 64 over n bytes, continuing from h (start with JIT_FNV_OFFSET):
** the one hash of cache keys and file checksums. */
#define JIT_FNV_OFFSET 0xcbf29ce484222325ULL
uint64_t jit_fnv1a(uint64_t h, const void *p, size_t n);

/* The expanded parameter sizes of argument types (the ABI of jit.h); false
** when a type has no ABI this code knows or there are more than max. */
bool jit_cache_abi(const JType *const *argtypes, int nargs, uint32_t *sizes, int *n, int max);

/* A kernel from cached code for the typed function f (from jit_infer), which
** it takes over (freed on failure too). NULL with a message on failure. */
JitKernel *jit_kernel_from_cache(VM *vm, JFunc *f, const JitCachedCode *c, char *err, size_t errsize);

/* jit.c, for the loader above: the VM's LLJIT (created on first use), and
** handing k the ORC tracker of its native code (released by
** jit_kernel_free; on failure released here). */
LLVMOrcLLJITRef jit_lljit(VM *vm, char *err, size_t errsize);
bool jit_kernel_set_tracker(JitKernel *k, LLVMOrcResourceTrackerRef rt);

#endif
