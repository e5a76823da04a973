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

#include "../contracts/kernel_abi.h"

typedef struct CpuDevice CpuDevice;

typedef struct CpuLaunch {
    uint32_t grid[3];       /* gridDim x, y, z (each ≥ 1) */
    uint32_t block[3];      /* blockDim x, y, z (each ≥ 1, product ≤ 1024) */
    size_t shared_bytes;    /* per-block shared memory (static + dynamic) */
    size_t dyn_shared;      /* of which dynamic (KernelCtx.dyn_smem: sizes cuda.shared.array(0, ...)) */
    CpuBlockFn block_fn;    /* used when non-NULL (barrier kernels too: regions) */
    CpuThreadFn thread_fn;  /* used for barrier kernels without block_fn */
    bool uses_barrier;
    void **params;          /* kernel parameters (contracts/kernel_abi.h) */
    void *grids;            /* where child launches queue (KernelCtx.grids; cpu_child_grids.c), or NULL */
} CpuLaunch;

/* The fiber stack size asked for (gpu_cpu_new rounds it up to pages):
** 64 KiB, or configured bytes (config.cpu_fiber_stack, GPY_CPU_FIBER_STACK)
** when that is at least 16 KiB. The kernel compiler checks a fiber kernel's
** local arrays against it. */
static inline size_t gpu_cpu_fiber_stack_request(size_t configured) {
    return configured >= 16384 ? configured : 64 * 1024;
}

/* Shared memory per block (static + dynamic) the CPU device offers: what
** CUDA gives a block without opting in, so kernels that fit here fit a GPU. */
#define GPU_CPU_MAX_SHARED (48 * 1024)

/* Creates the device; nthreads 0 = one worker per online core
** (config.cpu_threads); fiber_stack 0 = the default (see
** gpu_cpu_fiber_stack_request). Workers start lazily on the first launch. */
CpuDevice *gpu_cpu_new(int nthreads, size_t fiber_stack);
void gpu_cpu_free(CpuDevice *d);
/* Number of worker threads the device uses. */
int gpu_cpu_workers(CpuDevice *d);
/* Where the lines kernels print() go, whole and in thread order after each
** launch (on the launching thread): fn, or the process's stdout when fn is
** NULL (an embedding application's write callback goes here). */
typedef void (*GpuCpuOutputFn)(const char *text, size_t len, void *ctx);
void gpu_cpu_set_output(CpuDevice *d, GpuCpuOutputFn fn, void *ctx);
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

/* The runtime entry points compiled kernels call (gpy_cpu_syncthreads ...)
** are declared in contracts/kernel_abi.h. */


#endif
