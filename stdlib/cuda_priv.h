/*
** cuda_priv.h — shared by the files of the cuda module (stdlib/cuda*.c):
**   cuda.c           the `cuda` / `numba` modules, host-side stubs of the
**                    kernel builtins, per-VM state
**   cuda_array.c     device arrays (to_device, device_array, copy_to_host)
**   cuda_dispatch.c  @cuda.jit dispatchers: signatures, the compile cache,
**                    argument marshalling, launch on the CPU device
** Nothing outside stdlib/cuda*.c includes this header.
*/
#ifndef GPY_STDLIB_CUDA_PRIV_H
#define GPY_STDLIB_CUDA_PRIV_H

#include "../gpu/cpu_device.h"
#include "../jit/jit.h"
#include "ndarray.h"
#include "stdlib_priv.h"

typedef struct Dispatcher Dispatcher;

/* Per-VM state of the cuda module (vm->cuda). */
typedef struct CudaState {
    Module *cuda;             /* the `cuda` module (also numba.cuda) */
    Module *numba;            /* the `numba` module */
    Type *t_dispatcher;       /* what @cuda.jit returns */
    Type *t_launch;           /* k[grid, block]: a launch configuration */
    Type *t_devarray;         /* DeviceNDArray */
    Type *t_intrinsic;        /* host-side stand-ins for threadIdx, syncthreads, ... */
    Type *t_stream;           /* cuda.stream(): launches are synchronous on the CPU device */
    Type *t_typing_error;     /* TypingError (a TypeError): kernel compile errors */
    CpuDevice *device;        /* created at the first launch */
    Dispatcher *dispatchers;  /* every live dispatcher (their kernels are freed at vm_free) */
    /* interned kernel types of scalars and arrays, looked up without hashing
    ** on the launch path: [dtype][ndim][layout C=0 / A=1] */
    const JType *scalar_types[ND__COUNT];
    const JType *array_types[ND__COUNT][8][2];
} CudaState;

/* The state, created on first use (the module types are made there). */
CudaState *cuda_state(VM *vm);
/* Makes sure the cuda free hook runs before the jit's (see cuda.c). */
void cuda_hook_order(VM *vm);

/* ---- cuda_array.c ---- */
typedef struct DevArray {
    Obj obj;
    Value host; /* the NDArray holding the data (CPU device memory is host memory) */
} DevArray;
void cuda_array_init(VM *vm, CudaState *st);
/* True when v is a device array. */
bool cuda_is_devarray(VM *vm, Value v);
/* A device array holding a (no copy). */
Value cuda_devarray_wrap(VM *vm, NDArray *a);
/* The NDArray behind a host or device array; NULL when v is neither. */
NDArray *cuda_array_of(VM *vm, Value v);
/* Copies src into dst element by element (same shape and dtype, any strides). */
void cuda_copy_strided(NDArray *dst, const NDArray *src);
/* Module functions. */
Value cuda_f_to_device(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_device_array(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_device_array_like(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_pinned_array(VM *vm, int argc, Value *argv, Dict *kwargs);

/* ---- cuda_dispatch.c ---- */
void cuda_dispatch_init(VM *vm, CudaState *st);
/* Frees the compiled kernels of every live dispatcher (vm_free). */
void cuda_dispatch_free_all(VM *vm, CudaState *st);
Value cuda_f_jit(VM *vm, int argc, Value *argv, Dict *kwargs);
Value cuda_f_compile_ptx(VM *vm, int argc, Value *argv, Dict *kwargs);
/* Parses a Numba signature string "void(float32[:], int64)". Returns the
** number of arguments (types in out, return type in *ret), or -1 with a
** message in err. */
int cuda_parse_signature(VM *vm, const char *s, const JType **out, int max, const JType **ret, char *err,
                         size_t errsize);

#endif
