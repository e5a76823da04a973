/*
** cuda_priv.h — shared by the files of the cuda module (stdlib/cuda*.c):
**   cuda.c           the `cuda` / `numba` modules, host-side stubs of the
**                    kernel builtins, per-VM state, device choice (CPU
**                    device or a GPU through gpu/cuda_driver.h), devices,
**                    streams, events
**   cuda_array.c     device arrays (to_device, device_array, copy_to_host),
**                    in host memory on the CPU device, device memory on a GPU
**   cuda_dispatch.c  @cuda.jit dispatchers: signatures, the compile cache,
**                    argument marshalling, launch on the CPU device or GPU
**   cuda_ufunc.c     numba.vectorize and cuda.reduce (gpy source generating kernels)
**   cuda_context.c   current_context(), cuda.gpus.current and `with cuda.gpus[i]`,
**                    external/legacy/per-thread streams, pinned/mapped/defer_cleanup
** Nothing outside stdlib/cuda*.c includes this header (api/ uses cuda_embed.h).
*/
#ifndef GPY_STDLIB_CUDA_PRIV_H
#define GPY_STDLIB_CUDA_PRIV_H

#include "../gpu/cpu_device.h"
#include "../gpu/cuda_driver.h"
#include "../gpu/device_select.h"
#include "../gpu/kernel_args.h"
#include "../jit/binding.h"
#include "../jit/jit.h"
#include "cuda_embed.h"
#include "ndarray.h"
#include "stdlib_priv.h"

typedef struct Dispatcher Dispatcher;

/* Which device runs kernels (decided at first use, never at import). */
typedef enum CudaDevKind { CUDA_DEV_UNDECIDED, CUDA_DEV_CPU, CUDA_DEV_GPU, CUDA_DEV_FAILED } CudaDevKind;

/* Per-VM state of the cuda module (vm->cuda). */
typedef struct CudaState {
    Module *cuda;             /* the `cuda` module (also numba.cuda) */
    Module *numba;            /* the `numba` module */
    Type *t_dispatcher;       /* what @cuda.jit returns */
    Type *t_launch;           /* k[grid, block]: a launch configuration */
    Type *t_devarray;         /* DeviceNDArray */
    Type *t_hostbuf;          /* GPU: page-locked / managed memory behind pinned, mapped and managed arrays */
    Type *t_fenced;           /* CPU device: the guarded memory behind a device array (cuda_array.c) */
    Type *t_intrinsic;        /* host-side stand-ins for threadIdx, syncthreads, ... */
    Type *t_stream;           /* cuda.stream(): launches are synchronous on the CPU device */
    Type *t_typing_error;     /* TypingError (a TypeError): kernel compile errors */
    Type *t_event;            /* cuda.event() */
    Type *t_device;           /* cuda.gpus[i], cuda.get_current_device() */
    Type *t_api_error;        /* CudaAPIError (a RuntimeError): driver failures */
    CpuDevice *device;        /* created at the first launch */
    CudaDevKind kind;         /* see cuda_device_kind */
    GpuCuda *gpu;             /* CUDA_DEV_GPU: the selected device */
    uint32_t gen;             /* bumped at each context reset/device change: older handles are dead */
    char why[512];            /* CUDA_DEV_FAILED: why GPY_DEVICE=cuda cannot run */
    Dispatcher *dispatchers;  /* every live dispatcher (their kernels are freed at vm_free) */
    struct DevArray *allocations; /* GPU device arrays owning device memory (freed at vm_free) */
    /* interned kernel types of scalars and arrays, looked up without hashing
    ** on the launch path: [dtype][ndim][layout C=0 / A=1] */
    const JType *scalar_types[ND__COUNT];
    const JType *array_types[ND__COUNT][8][2];
    Type *t_context;          /* cuda.current_context() (cuda_context.c) */
    Type *t_ctxmgr;           /* cuda.pinned(), cuda.mapped(), cuda.defer_cleanup() */
    int gpus_stack[16];       /* `with cuda.gpus[i]:` the devices to restore on exit */
    int gpus_depth;
    Type *numba_types; /* numba.core.types.abstract.Type, carrying stdlib/numba_types.c's state */
} CudaState;

/* The state, created on first use (the module types are made there). */
CudaState *cuda_state(VM *vm);
/* The device that runs kernels, decided at the first call: GPY_DEVICE=cpu|cuda
** forces one; otherwise the GPU when the driver opens with ≥1 device. */
CudaDevKind cuda_device_kind(VM *vm);
/* The GPU handle, or NULL on the CPU device; raises when GPY_DEVICE=cuda failed. */
GpuCuda *cuda_gpu(VM *vm);
/* Raises the exception for a gpu_cuda_* status (CudaAPIError for driver
** errors, ValueError for limits, MemoryError, RuntimeError). */
_Noreturn void cuda_raise_status(VM *vm, int status, const char *msg);
/* The CUstream of a stream argument (a Stream, 0 or None → the default). */
CUstream cuda_stream_of(VM *vm, Value v);
/* A stream object for a handle gpy did not create (cuda.c). */
Value cuda_stream_from_handle(VM *vm, uintptr_t handle, bool external);
/* cuda_context.c: adds current_context, list_devices, external_stream, pinned,
** ... to the module m, `current` to cuda.gpus and `with` to its devices. */
void cuda_context_init(VM *vm, CudaState *st, Module *m);
/* Makes sure the cuda free hook runs before the jit's (see cuda.c). */
void cuda_hook_order(VM *vm);

/* ---- cuda_array.c ---- */
/* On the CPU device, host is the data. On a GPU, the data lives only in
** device memory at dptr: host is a descriptor (shape, strides, dtype) whose
** data pointer holds the device address and is never dereferenced; the
** owner's device bytes count toward collection (gc_account_external); views
** share their owner's allocation and keep it alive. */
typedef struct DevArray {
    Obj obj;
    Value host;        /* the NDArray (data on the CPU device; descriptor on a GPU) */
    Value owner;       /* GPU views: the DevArray owning the allocation; NONE when this owns it */
    CUdeviceptr dptr;  /* GPU: device address of host->data; 0 on the CPU device */
    CUdeviceptr base;  /* GPU owner: the allocation */
    size_t bytes;      /* GPU owner: its size */
    uint32_t gen;      /* CudaState.gen when allocated */
    bool borrowed;     /* GPU owner of memory gpy did not allocate (cuda_devarray_external): never freed */
    struct DevArray *prev, *next; /* GPU owners: CudaState.allocations */
    Value stream;      /* d.bind(stream): the array's default stream (EMPTY: 0) */
} DevArray;
void cuda_array_init(VM *vm, CudaState *st);
/* A device array holding a (no copy). */
Value cuda_devarray_wrap(VM *vm, NDArray *a);
/* The device array viewing the memory that v's __cuda_array_interface__
** describes (v kept alive), or EMPTY when v carries no such attribute. */
Value cuda_interface_array(VM *vm, Value v);
/* GPU: frees the device memory of every live device array (vm_free). */
void cuda_array_free_all(VM *vm, CudaState *st);
/* GPU: the device address of a device array's data. */
CUdeviceptr cuda_devarray_ptr(VM *vm, Value v);
/* CPU device: a kernel runs host arrays of up to 60 KiB (their whole
** buffer) on fenced copies, as a GPU runs them on device copies, so that
** it cannot index into the heap next to them. cuda_cpu_stage fills out[i]
** with argv[i] or its copy (a view of the same shape and strides; arguments
** sharing a buffer share one copy) and returns how many GC roots it pushed;
** cuda_cpu_unstage, after the launch, writes the copies back and frees
** them, and checks the redzone below every fenced argument: true when one
** was written (the IndexError's message in msg unless msg is NULL). */
int cuda_cpu_stage(VM *vm, int argc, const Value *argv, Value *out);
bool cuda_cpu_unstage(VM *vm, const char *kernel, const Proto *p, int argc, const Value *argv, const Value *staged,
                      char *msg, size_t size);
/* CPU device: the message of the IndexError for a launch of kernel that
** ended in GPU_CPU_FAULT, naming the array argument (of p's parameters,
** values argv: the staged ones) whose guard region the access hit. */
void cuda_cpu_fault_message(VM *vm, const char *kernel, const Proto *p, int argc, const Value *argv, CpuDevice *dev,
                            char *msg, size_t size);
/* Copies src into dst element by element (same shape and dtype, any strides). */
void cuda_copy_strided(NDArray *dst, const NDArray *src);
/* Module functions. */
Value cuda_f_to_device(VM *vm, int argc, Value *argv, Dict *kwargs);
/* cuda_random.c: builds the numba.cuda.random module */
Module *cuda_random_build_module(VM *vm);
Value cuda_f_device_array(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_device_array_like(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_pinned_array(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_mapped_array(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_managed_array(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_as_cuda_array(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_from_cuda_array_interface(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_is_cuda_array(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_mapped_array_like(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_pinned_array_like(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_open_ipc_array(VM *vm, int argc, Value *argv, Dict *kwargs);

/* ---- cuda_dispatch.c ---- */
void cuda_dispatch_init(VM *vm, CudaState *st);
/* Frees the compiled kernels of every live dispatcher (vm_free). */
void cuda_dispatch_free_all(VM *vm, CudaState *st);
Value cuda_f_jit(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_compile_ptx(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_compile_ptx_for_current_device(VM *vm, int argc, Value *argv, Dict *kwargs);

/* cuda_ufunc.c: numba.vectorize(target='cuda'), cuda.reduce */
Value cuda_f_vectorize(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_reduce(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_guvectorize(VM *vm, int argc, Value *argv, Dict *kwargs);
void cuda_ufunc_register(VM *vm);

/* numba_layout.c: numba.types, numba.core.*, numba.extending and numba-cuda's
** numba.cuda.types/config/core/np/extending, built with the numba module. */
void numba_layout_build(VM *vm, CudaState *st, Module *numba);
void numba_layout_register(VM *vm);
/* cuda.c: the numba module (built on first use) */
Module *cuda_numba_module(VM *vm);

/* cuda_dispatch.c: what the kernel compiler asks of this module (jit/binding.h);
** cuda_state gives it to each VM. */
extern const JitBinding cuda_jit_binding;
/* The Python function behind a @cuda.jit dispatcher (kernel or device
** function), or NULL when v is not one. *is_device tells which. */
Function *cuda_dispatcher_function(VM *vm, Value v, bool *is_device);
/* False (and why in err) when v is a device function declared with
** signatures none of which takes these argument types. */
bool cuda_device_signatures_accept(VM *vm, Value v, int nargs, const JType *const *argtypes, char *err,
                                   size_t errsize);

/* After a debug-mode launch: raises the exception a kernel's `raise`
** recorded in rec (cuda_kernel_raise.c); returns when rec holds none. */
void cuda_raise_kernel_exception(VM *vm, const JitKernel *k, const JitErrRecord *rec);

#endif
