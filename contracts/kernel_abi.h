/*
** kernel_abi.h — what compiled kernels, the kernel compiler (jit/) and the
** devices (gpu/) share (contracts/: the bottom layer; includes nothing of gpy).
**
** The compiler emits code against these layouts and calls these entry
** points; the CPU device implements the entry points and runs the code; the
** launchers (argument marshalling in gpu/) lay parameters out the same way.
** gpu/ needs nothing else from the compiler.
*/
#ifndef GPY_CONTRACTS_KERNEL_ABI_H
#define GPY_CONTRACTS_KERNEL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------- the kernel parameter ABI
** Identical for PTX and the CPU device, so one marshalling serves both:
**   bool/intN/uintN/floatN   → one parameter of that C type (bool as uint8)
**   array(dtype, ndim, L)    → data pointer (void *), then shape[0..ndim) as
**                              int64, then strides[0..ndim) as int64 (bytes)
**   tuple                    → its elements' parameters, in order
** On the CPU device, argument i of the kernel function is passed as
** params[i], a pointer to the parameter's value (exactly like
** cuLaunchKernel's kernelParams). A launch from a kernel packs the values
** into one buffer instead, each at an offset aligned to its size. */
typedef struct KernelParam {
    uint32_t size;   /* 1, 2, 4 or 8 bytes */
} KernelParam;

/* The CPU device's view of one thread (the kernel reads its indices here). */
typedef struct KernelCtx {
    int32_t tid[3];     /* threadIdx.x/y/z */
    int32_t ctaid[3];   /* blockIdx */
    int32_t ntid[3];    /* blockDim */
    int32_t nctaid[3];  /* gridDim */
    char *smem;         /* this block's static shared memory */
    void *block;        /* runtime (gpu/cpu_device.c): the block's fiber group */
    void *grids;        /* runtime (gpu/cpu_child_grids.c): where child launches queue */
    void *worker;       /* runtime: the worker running the block (gpy_cpu_scratch) */
    int64_t dyn_smem;   /* the launch's dynamic shared memory bytes */
} KernelCtx;

/* Runs all threads of one block in a loop (kernels without barriers, and
** barrier kernels split into per-region thread loops, jit/cpu_regions.c). It
** reads ctaid, ntid, nctaid and smem from ctx and neither reads nor writes
** ctx->tid. */
typedef void (*CpuBlockFn)(KernelCtx *ctx, void **params);
/* Runs one thread (kernels with barriers run one fiber per thread): the
** thread ctx->tid; it calls gpy_cpu_syncthreads(ctx) at each barrier. */
typedef void (*CpuThreadFn)(KernelCtx *ctx, void **params);

/* ------------------------------------------------------------ debug mode
** A debug kernel checks every array index (after the negative wrap:
** 0 <= idx < shape[d]). A failing thread writes the error record (first
** writer wins, by an atomic compare-and-swap on flag) and returns; any
** thread returning from a device call while flag is set returns too. The
** record is a global of the kernel's module: on the CPU device the kernel
** points at it; in PTX it is the .global JIT_DEBUG_ERR_SYMBOL, read back by
** the launcher with the driver's module-global API. No trap: a trap makes
** the CUDA context unusable, so the record could not be read. */
#define JIT_DEBUG_ERR_SYMBOL "__gpy_err"
#define JIT_DEBUG_MAXDIM 4
typedef struct JitErrRecord {
    int32_t flag;                    /* 0 none; 1 recorded */
    int32_t site;                    /* which checked access (the compiler's numbering) */
    int32_t axis;                    /* the first axis out of bounds */
    int32_t ndim;                    /* indices recorded (at most JIT_DEBUG_MAXDIM) */
    int64_t idx[JIT_DEBUG_MAXDIM];   /* the indices as written (before the negative wrap) */
    int64_t shape[JIT_DEBUG_MAXDIM];
    int32_t tid[3];                  /* threadIdx of the failing thread */
    int32_t ctaid[3];                /* blockIdx */
} JitErrRecord;

/* ------------------------------------------- a compiled kernel, CPU device
** What the CPU device needs to run a kernel that another kernel launches
** (the compiler fills one per CPU kernel and bakes its address into the
** launching code). */
typedef struct CpuKernel {
    const char *name;          /* for messages */
    int nparams;
    const KernelParam *params; /* the expanded parameter list (ABI above) */
    size_t shared_bytes;       /* static shared memory per block */
    bool uses_barrier;
    CpuBlockFn block_fn;       /* one of these two is set */
    CpuThreadFn thread_fn;
    JitErrRecord *dbg_err;     /* debug mode: the kernel's error record; else NULL */
    /* debug mode: writes the IndexError message for a recorded error into
    ** msg (the compiler knows the access sites); owner is passed back */
    void (*dbg_message)(const void *owner, const JitErrRecord *rec, char *msg, size_t size);
    const void *owner;
} CpuKernel;

/* ---------------------------------- the CPU device's runtime entry points
** Called by compiled kernel code (the CPU target emits calls to them);
** implemented by gpu/cpu_device.c and gpu/cpu_child_grids.c. */
/* The barrier of cuda.syncthreads(). ctx->block identifies the fiber group. */
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
/* Thread (tx, ty, tz) of ctx's block launches kernel k. args holds size
** bytes of parameters laid out by the ABI above, each at an offset aligned
** to its size; they are copied. Thread-safe. */
void gpy_cpu_launch_child(KernelCtx *ctx, int32_t tx, int32_t ty, int32_t tz, const CpuKernel *k, uint32_t gx,
                          uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t shared,
                          const void *args, uint32_t size);

#endif
