/*
** cuda_embed.h — what the embedding API (api/) uses of the cuda module:
** device arrays over application memory, describing arrays, and launching
** a kernel without a script. Implemented in stdlib/cuda_array.c and
** stdlib/cuda_dispatch.c.
*/
#ifndef GPY_STDLIB_CUDA_EMBED_H
#define GPY_STDLIB_CUDA_EMBED_H

#include <stdint.h>

#include "ndarray.h"

/* True when v is a device array. */
bool cuda_is_devarray(VM *vm, Value v);
/* The NDArray behind a host or device array; NULL when v is neither. On a
** GPU a device array's NDArray is a descriptor whose data pointer holds the
** device address (never dereferenced). */
NDArray *cuda_array_of(VM *vm, Value v);
/* A device array over memory gpy does not own (the embedding API,
** __cuda_array_interface__): on a GPU, ptr is a device address in the VM's
** context; on the CPU device, host memory. Nothing is copied or freed;
** keep (may be NONE) stays alive while the array or a view of it does.
** readonly clears the descriptor's WRITEABLE flag (host-side writes raise;
** kernels are not checked, as in Numba). */
Value cuda_devarray_external(VM *vm, NDType dt, uintptr_t ptr, int ndim, const int64_t *shape,
                             const int64_t *strides, bool readonly, Value keep);
/* kernel[grid, block, stream, shared_bytes](*argv) without building the
** launch configuration object: the same checks, specializations, compile
** cache and launch plans. grid and block entries must be ≥ 1. */
void cuda_launch(VM *vm, Value kernel, const uint32_t grid[3], const uint32_t block[3], size_t shared_bytes,
                 Value stream, int argc, Value *argv);

#endif
