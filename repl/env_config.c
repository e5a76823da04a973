/*
** env_config.c — GPY_* environment variables → VMConfig (see env_config.h).
*/
#include <stdlib.h>
#include <string.h>

#include "env_config.h"
#include "open_libs.h"

static bool env_flag(const char *name) {
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}

void env_config(VMConfig *config, int argc, char **argv) {
    vm_config_defaults(config);
    config->argc = argc;
    config->argv = argv;
    config->open_libs = stdlib_open_libs;
    config->module_path = getenv("GPY_PATH");
    config->gc_stress = env_flag("GPY_GC_STRESS");
    config->jit_module = getenv("GPY_JIT_MODULE"); /* else found beside libgpy */
}
