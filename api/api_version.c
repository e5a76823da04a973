/*
** api_version.c — the library's version and the names of statuses.
*/
#include "api.h"

const char *gpy_version(void) { return GPY_VERSION; }

int gpy_abi_version(void) { return GPY_ABI_VERSION; }

const char *gpy_status_name(GpyStatus status) {
    switch (status) {
    case GPY_OK: return "ok";
    case GPY_SYNTAX_ERROR: return "syntax error";
    case GPY_RUNTIME_ERROR: return "runtime error";
    case GPY_OUT_OF_MEMORY: return "out of memory";
    case GPY_INTERRUPTED: return "interrupted";
    case GPY_EXIT: return "exit requested";
    }
    return "unknown status";
}
