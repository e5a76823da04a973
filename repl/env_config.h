/*
** env_config.h — the command-line program's settings from the environment.
** The CLI is the only place in gpy that reads the environment: it turns
** GPY_* variables into a VMConfig (vm.h); the library only sees the config.
*/
#ifndef GPY_ENV_CONFIG_H
#define GPY_ENV_CONFIG_H

#include "vm.h"

/* Defaults, then every GPY_* variable that is set, then sys.argv and the
** standard library. The strings point into the environment and argv (vm_new
** copies them). */
void env_config(VMConfig *config, int argc, char **argv);

#endif
