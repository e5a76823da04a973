/*
** cuda_jit_api.c — the table gpy_jit.so hands to the loader (see
** cuda_jit_api.h). Built into the module; unused in a GPY_LLVM_STATIC build.
*/
#include "cuda_jit_api.h"

static const JitApi api = {
    .compile = jit_compile,
    .compile_opts = jit_compile_opts,
    .compile_ptx_device = jit_compile_ptx_device,
    .kernel_free = jit_kernel_free,
    .debug_reset = jit_debug_reset,
    .debug_message = jit_debug_message,
    .cache_load = cuda_cache_load,
    .cache_store = cuda_cache_store,
    .cache_report = cuda_cache_report,
    .init = jit_llvm_init,
    .prepared_new = jit_prepared_new,
    .warm_up = jit_warm_up,
    .adopt = jit_adopt,
    .prepared_free = jit_prepared_free,
};

const JitApi *gpy_jit_api(void) { return &api; }
