/*
** cuda_params.c — kernel parameter blocks (the layout half of a launch
** plan): offsets computed once per compiled kernel, a kernelParams array
** that already points at each slot and ends with gpy's closing NULL.
*/
#include "cuda_driver.h"

#include <stdlib.h>
#include <string.h>

/* Natural alignment of a parameter: its size up to 8 for powers of two,
** 8 for the rest (aggregates passed as byte arrays). */
static size_t param_align(uint32_t size)
{
    if (size >= 8 || (size & (size - 1)) != 0)
        return 8;
    return size;
}

GpuCudaParams *gpu_cuda_params_new(int n, const uint32_t *sizes)
{
    if (n < 0 || (n > 0 && !sizes))
        return NULL;
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] == 0 || sizes[i] > 4096)
            return NULL;
        size_t a = param_align(sizes[i]);
        bytes = (bytes + a - 1) / a * a + sizes[i];
    }
    bytes = (bytes + 15) & ~(size_t)15;
    /* one block: header | ptrs[n+1] | size[n] | offset[n] | pad | data */
    size_t head = sizeof(GpuCudaParams) + (size_t)(n + 1) * sizeof(void *) + 2 * (size_t)n * sizeof(uint32_t);
    head = (head + 15) & ~(size_t)15;
    unsigned char *mem = aligned_alloc(16, head + (bytes ? bytes : 16));
    if (!mem)
        return NULL;
    memset(mem, 0, head + (bytes ? bytes : 16));
    GpuCudaParams *p = (GpuCudaParams *)mem;
    p->n = n;
    p->ptrs = (void **)(mem + sizeof *p);
    uint32_t *size = (uint32_t *)(p->ptrs + n + 1);
    uint32_t *offset = size + n;
    p->data = mem + head;
    p->bytes = bytes;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t a = param_align(sizes[i]);
        at = (at + a - 1) / a * a;
        size[i] = sizes[i];
        offset[i] = (uint32_t)at;
        p->ptrs[i] = p->data + at;
        at += sizes[i];
    }
    p->ptrs[n] = NULL;
    p->size = size;
    p->offset = offset;
    return p;
}

void gpu_cuda_params_free(GpuCudaParams *p) { free(p); }
