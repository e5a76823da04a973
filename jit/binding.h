/*
** binding.h — what the kernel compiler asks of the cuda binding, through a table the
** host fills (GPUCompiler.jl's interface.jl is the model). jit/ never
** includes the layer above it (stdlib/: the numpy module, the cuda binding);
** the cuda binding gives each VM its JitBinding (jit_set_binding) before the
** first compile. A VM without a host compiles plain kernels: no global
** arrays, no dtype objects, no device functions.
*/
#ifndef GPY_JIT_BINDING_H
#define GPY_JIT_BINDING_H

#include "jit.h"

/* An array's memory as the compiler sees it (a global captured as a
** constant, or a kernel argument's type). */
typedef struct JitArrayView {
    char *data;
    NDType dtype;
    int32_t ndim;
    const int64_t *shape;
    const int64_t *strides;   /* bytes */
    int64_t size;             /* elements */
    bool c_contiguous;
} JitArrayView;

typedef struct JitBinding {
    /* v as an array: a numpy array, and with device set a device array too.
    ** False when v is none. */
    bool (*array_view)(VM *vm, Value v, bool device, JitArrayView *out);
    /* The dtype v stands for as a value (np.float32, np.dtype('f4'),
    ** numba.int32, 'float32'), or -1. */
    int (*dtype_of)(VM *vm, Value v);
    /* The dtype of a numpy scalar (np.float32(1.5)), or -1. */
    int (*scalar_dtype)(VM *vm, Value v);
    /* The Python function behind a kernel or device function object
    ** (@cuda.jit), or NULL; *is_device tells which. */
    Function *(*dispatcher_function)(VM *vm, Value v, bool *is_device);
    /* False (and why in err) when v is a device function declared with
    ** signatures none of which takes these argument types. */
    bool (*device_signatures_accept)(VM *vm, Value v, int nargs, const JType *const *argtypes, char *err,
                                     size_t errsize);
    /* True when v is a device array (cuda.to_device ...); *gpu_addr: its
    ** address on the GPU, 0 on the CPU device (where array_view's data is
    ** the array's memory). Never raises. */
    bool (*device_array_address)(VM *vm, Value v, uint64_t *gpu_addr);
} JitBinding;

/* Where vm's host is kept (jit/types.c: the compiler's per-VM state);
** NULL on out-of-memory. For host.c. */
const struct JitBinding **jit_binding_slot(VM *vm);
/* Gives vm's compiler its host (host is not copied: it must outlive vm). */
void jit_set_binding(VM *vm, const JitBinding *host);
/* vm's host; never NULL (a host that knows nothing when none was set). */
const JitBinding *jit_binding(VM *vm);

#endif
