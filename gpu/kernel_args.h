/*
** kernel_args.h — a kernel's parameters laid out by the kernel ABI
** (contracts/kernel_abi.h), from values already decoded by the caller
** (numbers, array addresses and extents): the half of argument marshalling
** that knows no gpy values, shared by the cuda module's launches and the
** embedding API's.
**
** The parameters go either into a GPU launch plan's parameter block (plan
** set: each size is checked against the compiled kernel's), or into slots
** of their own, which ptrs points at (the CPU device's void **params).
*/
#ifndef GPY_KERNEL_ARGS_H
#define GPY_KERNEL_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../contracts/dtype.h"
#include "cuda_driver.h"

#define GPU_ARGS_MAX 512 /* expanded ABI parameters */

typedef struct GpuArgs {
    int n;                            /* parameters so far */
    GpuCudaParams *plan;              /* GPU: the compiled kernel's parameter block, or NULL */
    uint64_t slots[GPU_ARGS_MAX];
    void *ptrs[GPU_ARGS_MAX + 1];     /* + gpy's closing NULL (cuda_driver.h) */
} GpuArgs;

static inline void gpu_args_init(GpuArgs *a, GpuCudaParams *plan) {
    a->n = 0;
    a->plan = plan;
}

/* Appends one parameter of size bytes (1, 2, 4 or 8); false when it does
** not match the plan's next parameter, or there are too many. */
static inline bool gpu_args_push(GpuArgs *a, const void *p, size_t size) {
    if (a->plan) {
        if (a->n >= a->plan->n || a->plan->size[a->n] != size) return false;
        memcpy(gpu_cuda_param_slot(a->plan, a->n), p, size);
        a->n++;
        return true;
    }
    if (a->n >= GPU_ARGS_MAX) return false;
    a->slots[a->n] = 0;
    memcpy(&a->slots[a->n], p, size);
    a->ptrs[a->n] = &a->slots[a->n];
    a->n++;
    return true;
}

/* A number to pass as a scalar: an integer (signed, or unsigned past
** INT64_MAX) or a double. */
typedef struct GpuNumber {
    bool is_int;
    bool is_unsigned;
    int64_t i;
    uint64_t u;
    double f;
} GpuNumber;

/* What gpu_args_push_scalar and _array return besides 0. */
enum { GPU_ARGS_MISMATCH = -1, GPU_ARGS_UNSUPPORTED = -2 };

/* Appends x converted to dt as C converts (bool: nonzero). 0, or
** GPU_ARGS_MISMATCH, or GPU_ARGS_UNSUPPORTED (float16 scalars). */
int gpu_args_push_scalar(GpuArgs *a, NDType dt, const GpuNumber *x);
/* Appends an array: its data address (host, or device on a GPU), then
** shape[0..ndim), then strides[0..ndim) in bytes. 0 or GPU_ARGS_MISMATCH. */
int gpu_args_push_array(GpuArgs *a, uint64_t address, int ndim, const int64_t *shape, const int64_t *strides);

#endif
