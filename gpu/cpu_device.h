/*
** cpu_device.h — the CPU device: runs a compiled kernel's grid on the cores
** of this machine with CUDA's semantics.
**
** Blocks are spread over a pool of worker threads (one per core, created on
** first launch, kept for the life of the VM). Within a block:
**   - kernels without barriers: the compiled block function loops over the
**     block's threads itself (plain native loop);
**   - kernels whose barriers all sit in control flow uniform across the
**     block: the compiler splits the body at the barriers into regions,
**     each a native loop over the block's threads (jit/cpu_regions.c), and
**     the block function runs like the one above; values crossing a
**     barrier live in a per-worker scratch buffer (gpy_cpu_scratch);
**   - other kernels with barriers: each thread of the block is a fiber with its own
**     small stack; fibers run one after another on the worker and switch only
**     when a thread reaches a barrier (cuda.syncthreads), so when every live
**     thread of the block has arrived, all continue. A thread that returns
**     early no longer counts toward the barrier (as on the GPU, where exited
**     threads do not block bar.sync).
** Each block gets its own zeroed shared-memory area of shared_bytes.
** Launches are synchronous: gpu_cpu_launch returns when the grid is done.
*/
#ifndef GPY_CPU_DEVICE_H
#define GPY_CPU_DEVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../jit/jit.h"

typedef struct CpuDevice CpuDevice;

typedef struct CpuLaunch {
    uint32_t grid[3];       /* gridDim x, y, z (each ≥ 1) */
    uint32_t block[3];      /* blockDim x, y, z (each ≥ 1, product ≤ 1024) */
    size_t shared_bytes;    /* per-block shared memory (static + dynamic) */
    size_t dyn_shared;      /* of which dynamic (KernelCtx.dyn_smem: sizes cuda.shared.array(0, ...)) */
    CpuBlockFn block_fn;    /* used when non-NULL (barrier kernels too: regions) */
    CpuThreadFn thread_fn;  /* used for barrier kernels without block_fn */
    bool uses_barrier;
    void **params;          /* kernel parameters (see the ABI in jit.h) */
    void *grids;            /* where child launches queue (KernelCtx.grids; cpu_child_grids.c), or NULL */
} CpuLaunch;

/* The fiber stack size asked for (gpu_cpu_new rounds it up to pages):
** 64 KiB, or GPY_CPU_FIBER_STACK bytes when that is at least 16 KiB. The
** kernel compiler checks a fiber kernel's local arrays against it. */
static inline size_t gpu_cpu_fiber_stack_request(void) {
    const char *env = getenv("GPY_CPU_FIBER_STACK");
    return env && atol(env) >= 16384 ? (size_t)atol(env) : 64 * 1024;
}

/* Shared memory per block (static + dynamic) the CPU device offers: what
** CUDA gives a block without opting in, so kernels that fit here fit a GPU. */
#define GPU_CPU_MAX_SHARED (48 * 1024)

/* Creates the device; nthreads 0 = one worker per online core (GPY_CPU_THREADS
** overrides). Workers start lazily on the first launch. */
CpuDevice *gpu_cpu_new(int nthreads);
void gpu_cpu_free(CpuDevice *d);
/* Number of worker threads the device uses. */
int gpu_cpu_workers(CpuDevice *d);
/* Runs a grid to completion. Returns 0, or -1 with a message in err (stack
** allocation failure, invalid dimensions), or GPU_CPU_FAULT. */
int gpu_cpu_launch(CpuDevice *d, const CpuLaunch *l, char *err, size_t errsize);

/* Where the device looks for an interrupt request (the VM's flag, non-zero
** when set; NULL: none). Workers test it before each block; a launch that
** saw it stops taking blocks (blocks already run keep their writes) and
** returns GPU_CPU_INTERRUPTED. The device only reads the flag: whoever set
** it clears it. */
void gpu_cpu_set_interrupt(CpuDevice *d, const atomic_int *flag);
#define GPU_CPU_INTERRUPTED (-4)

/* gpu_cpu_launch's result when kernel code touched memory it may not: a
** guard page around a device buffer (gpu/guarded_mem.h), an unmapped
** address, a fiber stack's guard page. The worker that faulted abandoned
** its block and the launch stopped (blocks already run keep their writes);
** the device stays usable. gpu_cpu_fault_addr tells where, and whether the
** access was a read or a write (GPU_CPU_ACCESS_*; x86-64 Linux tells). */
#define GPU_CPU_FAULT (-3)
enum { GPU_CPU_ACCESS_UNKNOWN, GPU_CPU_ACCESS_READ, GPU_CPU_ACCESS_WRITE };
void *gpu_cpu_fault_addr(CpuDevice *d, int *access);

/* Called by compiled kernel code (the CPU target emits calls to it):
** the barrier of cuda.syncthreads(). ctx->block identifies the fiber group. */
void gpy_cpu_syncthreads(KernelCtx *ctx);
/* syncthreads_count (op 0) / _and (1) / _or (2) of pred across the block. */
int32_t gpy_cpu_syncthreads_reduce(KernelCtx *ctx, int32_t pred, int32_t op);
/* A warp collective (op numbers in gpu/cpu_device.c); value/result as 64 bits. */
uint64_t gpy_cpu_warp(KernelCtx *ctx, int32_t op, uint32_t mask, uint64_t value, int32_t arg);
/* Region kernels: the worker's scratch of at least bytes (64-byte
** aligned, contents undefined), or NULL when it cannot be allocated (the
** launch then fails with a message once the block returns). */
void *gpy_cpu_scratch(KernelCtx *ctx, int64_t bytes);
/* print() in a kernel: fmt uses %lld %llu %f %s; slots are 8 bytes each. */
void gpy_cpu_print(KernelCtx *ctx, const char *fmt, const uint64_t *slots);

#endif
