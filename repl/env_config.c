/*
** env_config.c — GPY_* environment variables → VMConfig (see env_config.h).
** The only file in gpy that reads the environment for settings; each
** variable keeps the meaning it had when the library read it itself.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_config.h"
#include "open_libs.h"

/* The variable's text, or NULL when unset or empty. */
static const char *env_text(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool env_flag(const char *name) {
    const char *v = env_text(name);
    return v && strcmp(v, "0") != 0;
}

/* The CLI's kernel cache directory: GPY_CACHE_DIR, else $XDG_CACHE_HOME/gpy,
** else ~/.cache/gpy (a library VM has none unless its config names one).
** The CLI makes one VM, so one buffer for the joined path will do. */
static char *cli_cache_dir(void) {
    static char joined[4096];
    const char *d = env_text("GPY_CACHE_DIR");
    if (d) return (char *)d;
    int n = -1;
    if ((d = env_text("XDG_CACHE_HOME"))) n = snprintf(joined, sizeof joined, "%s/gpy", d);
    else if ((d = env_text("HOME"))) n = snprintf(joined, sizeof joined, "%s/.cache/gpy", d);
    return n > 0 && (size_t)n < sizeof joined ? joined : NULL;
}

bool env_config(VMConfig *config, int argc, char **argv, char *err, size_t errsize) {
    vm_config_defaults(config);
    config->argc = argc;
    config->argv = argv;
    config->open_libs = stdlib_open_libs;
    config->module_path = getenv("GPY_PATH");
    config->gc_stress = env_flag("GPY_GC_STRESS");

    const char *v = env_text("GPY_DEVICE");
    if (!v) config->device = GPY_DEVICE_AUTO;
    else if (!strcmp(v, "cpu")) config->device = GPY_DEVICE_CPU;
    else if (!strcmp(v, "cuda") || !strcmp(v, "gpu")) config->device = GPY_DEVICE_CUDA;
    else {
        snprintf(err, errsize, "GPY_DEVICE must be 'cpu' or 'cuda', not '%s'", v);
        return false;
    }
    /* values that do not parse as wanted fall back to the default, as ever */
    if ((v = env_text("GPY_CPU_THREADS")) && atoi(v) > 0) config->cpu_threads = atoi(v);
    if ((v = env_text("GPY_CPU_FIBER_STACK")) && atol(v) >= 16384) config->cpu_fiber_stack = (size_t)atol(v);
    if ((v = env_text("GPY_CPU_REGIONS")) && !strcmp(v, "0")) config->cpu_regions = 0;
    config->cache_dir = cli_cache_dir();
    config->cache_stats = env_flag("GPY_CACHE_STATS");
    config->cuda_home = (char *)env_text("GPY_CUDA_HOME");
    if (!config->cuda_home) config->cuda_home = (char *)env_text("CUDA_HOME");
    config->cuda_arch = (char *)env_text("GPY_CUDA_ARCH");
    config->libcuda = (char *)env_text("GPY_LIBCUDA");
    config->dump_ptx = (char *)env_text("GPY_DUMP_PTX");
    config->jit_module = (char *)env_text("GPY_JIT_MODULE"); /* else found beside libgpy */
    return true;
}
