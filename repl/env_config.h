/*
** env_config.h — the command-line program's settings from the environment.
** The CLI is the only place in gpy that reads the environment: it turns
** GPY_* variables into a VMConfig (vm.h); the library only sees the config.
*/
#ifndef GPY_ENV_CONFIG_H
#define GPY_ENV_CONFIG_H

#include "vm.h"

/* Defaults, then every GPY_* variable that is set, then sys.argv and the
** standard library. The strings point into the environment, argv or a
** static buffer (vm_new copies them). Returns false with the message in err
** when a variable's text is invalid (GPY_DEVICE). */
bool env_config(VMConfig *config, int argc, char **argv, char *err, size_t errsize);

#endif
