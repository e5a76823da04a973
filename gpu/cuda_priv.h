/*
** cuda_priv.h — internals shared by gpu/cuda_driver.c (library, device,
** memory, streams, events) and gpu/cuda_module.c (modules, launch). Not for
** other parts of gpy: they use cuda_driver.h.
*/
#ifndef GPY_CUDA_PRIV_H
#define GPY_CUDA_PRIV_H

#include "cuda_driver.h"

/* Every driver entry point gpy resolves: X(field, exported symbol, required).
** The field's type is PFN_<field> from cuda_abi.h. Optional entries may be
** NULL (older drivers). */
#define GPU_CUDA_ENTRIES(X)                                              \
    X(cuInit, "cuInit", 1)                                               \
    X(cuDriverGetVersion, "cuDriverGetVersion", 1)                       \
    X(cuGetErrorName, "cuGetErrorName", 1)                               \
    X(cuGetErrorString, "cuGetErrorString", 1)                           \
    X(cuDeviceGetCount, "cuDeviceGetCount", 1)                           \
    X(cuDeviceGet, "cuDeviceGet", 1)                                     \
    X(cuDeviceGetName, "cuDeviceGetName", 1)                             \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", 1)                   \
    X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", 1)                        \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1)           \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 1)      \
    X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", 1)          \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 1)                             \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", 1)                             \
    X(cuCtxSynchronize, "cuCtxSynchronize", 1)                           \
    X(cuMemGetInfo, "cuMemGetInfo_v2", 1)                                \
    X(cuMemAlloc, "cuMemAlloc_v2", 1)                                    \
    X(cuMemFree, "cuMemFree_v2", 1)                                      \
    X(cuMemAllocHost, "cuMemAllocHost_v2", 1)                            \
    X(cuMemHostAlloc, "cuMemHostAlloc", 1)                               \
    X(cuMemFreeHost, "cuMemFreeHost", 1)                                 \
    X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", 1)      \
    X(cuMemAllocManaged, "cuMemAllocManaged", 1)                         \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", 1)                                \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", 1)                                \
    X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", 1)                                \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", 1)                      \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", 1)                      \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", 1)                      \
    X(cuMemsetD8, "cuMemsetD8_v2", 1)                                    \
    X(cuMemsetD8Async, "cuMemsetD8Async", 1)                             \
    X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 1)                       \
    X(cuModuleGetFunction, "cuModuleGetFunction", 1)                     \
    X(cuModuleUnload, "cuModuleUnload", 1)                               \
    X(cuModuleGetGlobal, "cuModuleGetGlobal_v2", 0)                      \
    X(cuFuncGetAttribute, "cuFuncGetAttribute", 1)                       \
    X(cuFuncSetAttribute, "cuFuncSetAttribute", 1)                       \
    X(cuLaunchKernel, "cuLaunchKernel", 1)                               \
    X(cuStreamCreate, "cuStreamCreate", 1)                               \
    X(cuStreamSynchronize, "cuStreamSynchronize", 1)                     \
    X(cuStreamQuery, "cuStreamQuery", 1)                                 \
    X(cuStreamDestroy, "cuStreamDestroy_v2", 1)                          \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", 1)                         \
    X(cuEventCreate, "cuEventCreate", 1)                                 \
    X(cuEventRecord, "cuEventRecord", 1)                                 \
    X(cuEventSynchronize, "cuEventSynchronize", 1)                       \
    X(cuEventQuery, "cuEventQuery", 1)                                   \
    X(cuEventElapsedTime, "cuEventElapsedTime", 1)                       \
    X(cuEventDestroy, "cuEventDestroy_v2", 1)                            \
    X(cuLinkCreate, "cuLinkCreate_v2", 0)                                \
    X(cuLinkAddData, "cuLinkAddData_v2", 0)                              \
    X(cuLinkAddFile, "cuLinkAddFile_v2", 0)                              \
    X(cuLinkComplete, "cuLinkComplete", 0)                               \
    X(cuLinkDestroy, "cuLinkDestroy", 0)

/* A loaded driver library: process-wide, immutable once published. */
typedef struct CudaLib {
    char path[512];
    void *dl;
#define GPU_CUDA_FIELD(field, sym, req) PFN_##field field;
    GPU_CUDA_ENTRIES(GPU_CUDA_FIELD)
#undef GPU_CUDA_FIELD
    bool initialized; /* cuInit succeeded (written under the table's lock) */
} CudaLib;

struct GpuCuda {
    const CudaLib *lib;
    CUdevice dev;
    CUcontext ctx;
    GpuCudaProps props;
    int broken; /* the sticky CUresult that hit the context, or 0 */
    const atomic_int *interrupt; /* gpu_cuda_set_interrupt, or NULL */
};

/* Writes "NAME: text[ (context)]" for a driver failure, marks the handle
** broken on a sticky error (and says so), and returns r. */
int gpu_cuda_fail(GpuCuda *c, CUresult r, const char *context, char *err, size_t errsize);
/* Makes c's context current on this thread if it is not. */
int gpu_cuda_make_current(GpuCuda *c, char *err, size_t errsize);
/* snprintf into err when err is non-NULL; returns status. */
int gpu_cuda_refuse(int status, char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
