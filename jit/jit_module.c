/*
** jit_module.c — the kernel compiler's side of jit_module.h: its one export,
** gpy_jit_entry, which checks the host's ABI version, keeps the host's table
** for every call the compiler makes into libgpy (jit_host.h routes them),
** initializes LLVM and hands back the compiler's table.
*/
#include "jit_module.h"

#include "gpy.h"

/* Set once by gpy_jit_entry, under the loader's lock, before any other
** compiler function runs; read-only afterwards. */
const JitHost *jit_host;

static const JitApi api = {
    .compile = jit_compile,
    .compile_opts = jit_compile_opts,
    .compile_ptx_device = jit_compile_ptx_device,
    .kernel_free = jit_kernel_free,
    .debug_reset = jit_debug_reset,
    .debug_message = jit_debug_message,
    .cache_load = jit_disk_cache_load,
    .cache_store = jit_disk_cache_store,
    .cache_report = jit_disk_cache_report,
    .prepared_new = jit_prepared_new,
    .warm_up = jit_warm_up,
    .adopt = jit_adopt,
    .prepared_free = jit_prepared_free,
};

/* The one symbol the module exports (JitEntryFn, jit_module.h). */
__attribute__((visibility("default"))) const JitApi *gpy_jit_entry(int host_abi, const JitHost *host,
                                                                   int *module_abi);
const JitApi *gpy_jit_entry(int host_abi, const JitHost *host, int *module_abi) {
    *module_abi = GPY_ABI_VERSION;
    if (host_abi != GPY_ABI_VERSION || !host) return NULL;
    jit_host = host;
    jit_llvm_init();
    return &api;
}
