/*
** cuda_abi.h — the part of the CUDA driver API's binary interface gpy uses,
** declared here so that nothing at build time needs the CUDA toolkit.
**
** Every type, constant and prototype below mirrors the driver's own
** declaration (same names, same numeric values, taken from the CUDA driver
** API reference / cuda.h of CUDA 13.0; the values are stable ABI since CUDA
** 4–8). Shared by gpu/cuda_driver.c, which calls these through pointers it
** resolves with dlsym, and tests/gpu/fake_libcuda.c, the test driver that
** implements them. Never include the toolkit's cuda.h next to this header.
**
** The "_v2" entry points: for the functions where the driver exports several
** versions (cuMemAlloc, cuMemcpyHtoD, ...), the prototype here is that of the
** symbol named in the comment, which is the one gpy resolves.
*/
#ifndef GPY_CUDA_ABI_H
#define GPY_CUDA_ABI_H

#include <stddef.h>

typedef int CUresult;                  /* enum cudaError_enum */
typedef int CUdevice;                  /* a device ordinal */
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2: 64-bit device address */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef int CUjit_option;              /* enum CUjit_option_enum */
typedef int CUdevice_attribute;        /* enum CUdevice_attribute_enum */
typedef int CUfunction_attribute;      /* enum CUfunction_attribute_enum */
typedef int CUjitInputType;            /* enum CUjitInputType_enum */

/* ------------------------------------------------------------ CUresult */
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_CONTAINED = 226,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_ASSERT = 710,
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    CUDA_ERROR_INVALID_PC = 718,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_EXTERNAL_DEVICE = 911,
    CUDA_ERROR_UNKNOWN = 999,
};

/* ------------------------------------------------- CUdevice_attribute */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
    CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* ----------------------------------------------- CUfunction_attribute */
enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* -------------------------------------------------------- CUjit_option */
enum {
    CU_JIT_MAX_REGISTERS = 0,
    CU_JIT_THREADS_PER_BLOCK = 1,
    CU_JIT_WALL_TIME = 2,                   /* out: float milliseconds */
    CU_JIT_INFO_LOG_BUFFER = 3,             /* char * */
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,  /* in: capacity; out: bytes written */
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_OPTIMIZATION_LEVEL = 7,
    CU_JIT_TARGET_FROM_CUCONTEXT = 8,
    CU_JIT_TARGET = 9,
    CU_JIT_FALLBACK_STRATEGY = 10,
    CU_JIT_GENERATE_DEBUG_INFO = 11,
    CU_JIT_LOG_VERBOSE = 12,
    CU_JIT_GENERATE_LINE_INFO = 13,
    CU_JIT_CACHE_MODE = 14,
};

/* ------------------------------------------------------ CUjitInputType */
enum {
    CU_JIT_INPUT_CUBIN = 0,
    CU_JIT_INPUT_PTX = 1,
    CU_JIT_INPUT_FATBINARY = 2,
    CU_JIT_INPUT_OBJECT = 3,
    CU_JIT_INPUT_LIBRARY = 4,
};

/* --------------------------------------------------------------- flags */
enum {
    CU_STREAM_DEFAULT = 0x0,
    CU_STREAM_NON_BLOCKING = 0x1,
    CU_EVENT_DEFAULT = 0x0,
    CU_EVENT_BLOCKING_SYNC = 0x1,
    CU_EVENT_DISABLE_TIMING = 0x2,
    CU_MEM_ATTACH_GLOBAL = 0x1,
    CU_MEM_ATTACH_HOST = 0x2,
    CU_MEMHOSTALLOC_PORTABLE = 0x01,
    CU_MEMHOSTALLOC_DEVICEMAP = 0x02,
    CU_MEMHOSTALLOC_WRITECOMBINED = 0x04,
};
/* Special stream handles (cuda.h: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
/* cuLaunchKernel's `extra` markers. */
#define CU_LAUNCH_PARAM_END ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

/* ---------------------------------------------------------- prototypes
** As exported by libcuda.so.1 under the symbol named on the right. */
typedef CUresult (*PFN_cuInit)(unsigned flags);                                     /* cuInit */
typedef CUresult (*PFN_cuDriverGetVersion)(int *version);                           /* cuDriverGetVersion */
typedef CUresult (*PFN_cuGetErrorName)(CUresult error, const char **str);           /* cuGetErrorName */
typedef CUresult (*PFN_cuGetErrorString)(CUresult error, const char **str);         /* cuGetErrorString */
typedef CUresult (*PFN_cuDeviceGetCount)(int *count);                               /* cuDeviceGetCount */
typedef CUresult (*PFN_cuDeviceGet)(CUdevice *dev, int ordinal);                    /* cuDeviceGet */
typedef CUresult (*PFN_cuDeviceGetName)(char *name, int len, CUdevice dev);         /* cuDeviceGetName */
typedef CUresult (*PFN_cuDeviceGetAttribute)(int *v, CUdevice_attribute a, CUdevice dev); /* cuDeviceGetAttribute */
typedef CUresult (*PFN_cuDeviceTotalMem)(size_t *bytes, CUdevice dev);              /* cuDeviceTotalMem_v2 */
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);     /* cuDevicePrimaryCtxRetain */
typedef CUresult (*PFN_cuDevicePrimaryCtxRelease)(CUdevice dev);                    /* cuDevicePrimaryCtxRelease_v2 */
typedef CUresult (*PFN_cuDevicePrimaryCtxReset)(CUdevice dev);                      /* cuDevicePrimaryCtxReset_v2 */
typedef CUresult (*PFN_cuCtxSetCurrent)(CUcontext ctx);                             /* cuCtxSetCurrent */
typedef CUresult (*PFN_cuCtxGetCurrent)(CUcontext *ctx);                            /* cuCtxGetCurrent */
typedef CUresult (*PFN_cuCtxSynchronize)(void);                                     /* cuCtxSynchronize */
typedef CUresult (*PFN_cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes);      /* cuMemGetInfo_v2 */
typedef CUresult (*PFN_cuMemAlloc)(CUdeviceptr *dptr, size_t bytes);                /* cuMemAlloc_v2 */
typedef CUresult (*PFN_cuMemFree)(CUdeviceptr dptr);                                /* cuMemFree_v2 */
typedef CUresult (*PFN_cuMemAllocHost)(void **pp, size_t bytes);                    /* cuMemAllocHost_v2 */
typedef CUresult (*PFN_cuMemHostAlloc)(void **pp, size_t bytes, unsigned flags);    /* cuMemHostAlloc */
typedef CUresult (*PFN_cuMemFreeHost)(void *p);                                     /* cuMemFreeHost */
typedef CUresult (*PFN_cuMemHostGetDevicePointer)(CUdeviceptr *dptr, void *p, unsigned flags); /* cuMemHostGetDevicePointer_v2 */
typedef CUresult (*PFN_cuMemAllocManaged)(CUdeviceptr *dptr, size_t bytes, unsigned flags); /* cuMemAllocManaged */
typedef CUresult (*PFN_cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t n);   /* cuMemcpyHtoD_v2 */
typedef CUresult (*PFN_cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t n);         /* cuMemcpyDtoH_v2 */
typedef CUresult (*PFN_cuMemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t n);   /* cuMemcpyDtoD_v2 */
typedef CUresult (*PFN_cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t n, CUstream s); /* cuMemcpyHtoDAsync_v2 */
typedef CUresult (*PFN_cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t n, CUstream s);       /* cuMemcpyDtoHAsync_v2 */
typedef CUresult (*PFN_cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s); /* cuMemcpyDtoDAsync_v2 */
typedef CUresult (*PFN_cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t n); /* cuMemsetD8_v2 */
typedef CUresult (*PFN_cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t n, CUstream s); /* cuMemsetD8Async */
typedef CUresult (*PFN_cuModuleLoadDataEx)(CUmodule *m, const void *image, unsigned nopts,
                                           CUjit_option *opts, void **values); /* cuModuleLoadDataEx */
typedef CUresult (*PFN_cuModuleGetFunction)(CUfunction *f, CUmodule m, const char *name); /* cuModuleGetFunction */
typedef CUresult (*PFN_cuModuleUnload)(CUmodule m);                                 /* cuModuleUnload */
typedef CUresult (*PFN_cuModuleGetGlobal)(CUdeviceptr *dptr, size_t *bytes, CUmodule m,
                                          const char *name); /* cuModuleGetGlobal_v2 */
typedef CUresult (*PFN_cuFuncGetAttribute)(int *v, CUfunction_attribute a, CUfunction f); /* cuFuncGetAttribute */
typedef CUresult (*PFN_cuFuncSetAttribute)(CUfunction f, CUfunction_attribute a, int v);  /* cuFuncSetAttribute */
typedef CUresult (*PFN_cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                       CUstream s, void **params, void **extra); /* cuLaunchKernel */
typedef CUresult (*PFN_cuStreamCreate)(CUstream *s, unsigned flags);                /* cuStreamCreate */
typedef CUresult (*PFN_cuStreamSynchronize)(CUstream s);                            /* cuStreamSynchronize */
typedef CUresult (*PFN_cuStreamQuery)(CUstream s);                                  /* cuStreamQuery */
typedef CUresult (*PFN_cuStreamDestroy)(CUstream s);                                /* cuStreamDestroy_v2 */
typedef CUresult (*PFN_cuStreamWaitEvent)(CUstream s, CUevent e, unsigned flags);   /* cuStreamWaitEvent */
typedef CUresult (*PFN_cuEventCreate)(CUevent *e, unsigned flags);                  /* cuEventCreate */
typedef CUresult (*PFN_cuEventRecord)(CUevent e, CUstream s);                       /* cuEventRecord */
typedef CUresult (*PFN_cuEventSynchronize)(CUevent e);                              /* cuEventSynchronize */
typedef CUresult (*PFN_cuEventQuery)(CUevent e);                                    /* cuEventQuery */
typedef CUresult (*PFN_cuEventElapsedTime)(float *ms, CUevent start, CUevent end);  /* cuEventElapsedTime */
typedef CUresult (*PFN_cuEventDestroy)(CUevent e);                                  /* cuEventDestroy_v2 */
typedef CUresult (*PFN_cuLinkCreate)(unsigned nopts, CUjit_option *opts, void **values,
                                     CUlinkState *state);                           /* cuLinkCreate_v2 */
typedef CUresult (*PFN_cuLinkAddData)(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                      const char *name, unsigned nopts, CUjit_option *opts,
                                      void **values);                               /* cuLinkAddData_v2 */
typedef CUresult (*PFN_cuLinkAddFile)(CUlinkState state, CUjitInputType type, const char *path,
                                      unsigned nopts, CUjit_option *opts, void **values); /* cuLinkAddFile_v2 */
typedef CUresult (*PFN_cuLinkComplete)(CUlinkState state, void **cubin, size_t *size); /* cuLinkComplete */
typedef CUresult (*PFN_cuLinkDestroy)(CUlinkState state);                           /* cuLinkDestroy */

#endif
