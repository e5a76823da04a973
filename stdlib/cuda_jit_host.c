/*
** cuda_jit_host.c — libgpy's implementation of the kernel compiler's host
** interface (JitHost, jit/jit_module.h): the functions the compiler may
** call, and the CPU device's runtime that compiled CPU kernels call.
*/
#include "../gpu/cpu_child_grids.h"
#include "../gpu/cpu_device.h"
#include "../jit/jit_module.h"

/* Compiled code calls these by name with the C ABI; their C types differ,
** so the table holds them as plain code addresses. */
#define RUNTIME(fn) {#fn, (void (*)(void))(fn)}
static const JitRuntimeSymbol cpu_runtime[] = {
    RUNTIME(gpy_cpu_syncthreads), RUNTIME(gpy_cpu_syncthreads_reduce), RUNTIME(gpy_cpu_warp),
    RUNTIME(gpy_cpu_print),       RUNTIME(gpy_cpu_launch_child),       RUNTIME(gpy_cpu_scratch),
};
_Static_assert(sizeof cpu_runtime / sizeof cpu_runtime[0] <= JIT_RUNTIME_MAX, "raise JIT_RUNTIME_MAX");

const JitHost cuda_jit_host = {
    .ast_kind_name = ast_kind_name,
    .ast_visit_children = ast_visit_children,
    .vm_on_free = vm_on_free,
    .jit_infer = jit_infer,
    .jf_info = jf_info,
    .jf_var = jf_var,
    .jf_free = jf_free,
    .jt_scalar = jt_scalar,
    .jt_name = jt_name,
    .jit_cache_stats = jit_cache_stats,
    .dtype_itemsize = dtype_itemsize,
    .jit_binding = jit_binding,
    .cpu_runtime = cpu_runtime,
    .ncpu_runtime = (int)(sizeof cpu_runtime / sizeof cpu_runtime[0]),
};
