/* fuzz_vm.c — the shared VM of a fuzz target (see fuzz_vm.h). */
#include "fuzz_vm.h"
#include "open_libs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static VM *the_vm;
static FILE *null_file;

FILE *fuzz_null_file(void) {
    if (!null_file) null_file = fopen("/dev/null", "w");
    if (!null_file) abort();
    return null_file;
}

VM *fuzz_vm(void) {
    if (the_vm) return the_vm;
    if (!getenv("GPY_FUZZ_VERBOSE")) {
        /* libFuzzer reports on stderr; programs' prints would only slow it down */
        fflush(stdout);
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            close(fd);
        }
    }
    char *argv[] = {"fuzz"};
    VMConfig config;
    vm_config_defaults(&config);
    config.argc = 1;
    config.argv = argv;
    config.open_libs = stdlib_open_libs;
    the_vm = vm_new(&config);
    if (!the_vm) abort();
    return the_vm;
}

bool fuzz_pcall(VM *vm, void (*fn)(VM *vm, void *ud), void *ud) {
    bool ok = vm_pcall(vm, fn, ud);
    vm->exc_value = NONE_VAL;
    return ok;
}

void fuzz_collect(VM *vm) {
    static unsigned calls;
    if (++calls % 64 == 0) gc_collect(vm);
}
