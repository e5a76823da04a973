/*
** disk_cache.h — @cuda.jit(cache=True): compiled kernels kept on disk
** (disk_cache.c, part of the kernel compiler; libgpy reaches it through
** jit_loader.h). The file layout, keys and directory are described in
** disk_cache.c; jit_cache.h is the back end that rebuilds a kernel from
** what it read.
*/
#ifndef GPY_JIT_DISK_CACHE_H
#define GPY_JIT_DISK_CACHE_H

#include "jit.h"

/* A cache file: this header, then len bytes of payload whose FNV-1a
** checksum is sum (tests/fuzz/fuzz_cache.c writes entries with it too). */
#define CACHE_MAGIC "GPYKCACH"
#define CACHE_FORMAT 3u
typedef struct CacheHeader {
    char magic[8];
    uint32_t format;
    uint32_t target;
    uint64_t key;
    uint64_t len;
    uint64_t sum;
} CacheHeader;

/* What the cache did in one VM, for GPY_CACHE_STATS=1. */
typedef struct JitCacheStats {
    unsigned hits, misses, writes;
} JitCacheStats;

/* The VM's counters (types.c: kept in libgpy, so that it can tell whether
** there is anything to report without loading the compiler); NULL only on
** out-of-memory. */
JitCacheStats *jit_cache_stats(VM *vm);

/* The cached compile of fn for the argument types and one target
** (JIT_TARGET_CPU or JIT_TARGET_PTX), or NULL (a miss: the caller compiles
** and stores). Never raises. */
JitKernel *jit_disk_cache_load(VM *vm, Function *fn, int nargs, const JType *const *tys, int target, int cc,
                               const JitOptions *o);
/* Writes k (compiled for that single target) to the cache; failures are ignored. */
void jit_disk_cache_store(VM *vm, Function *fn, const JitKernel *k, int target, int cc, const JitOptions *o);
/* GPY_CACHE_STATS=1: prints "gpy cache: N hits, M misses, W writes" to
** stderr (once: the counters restart). */
void jit_disk_cache_report(VM *vm);

#endif
