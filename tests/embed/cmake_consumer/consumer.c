/* Built through find_package(gpy CONFIG) and gpy::gpy alone. */
#include <gpy.h>
#include <stdio.h>

int main(void) {
    if (gpy_abi_version() != GPY_ABI_VERSION) {
        fprintf(stderr, "consumer: libgpy has ABI %d, gpy.h says %d\n", gpy_abi_version(), GPY_ABI_VERSION);
        return 1;
    }
    GpyVM *vm = gpy_new(NULL);
    if (!vm) return 1;
    GpyStatus st = gpy_run_string(vm, NULL, "assert sum(range(10)) == 45\n", (size_t)-1, NULL);
    if (st != GPY_OK) fprintf(stderr, "consumer: %s\n%s", gpy_status_name(st), gpy_error_traceback(vm));
    gpy_free(vm);
    if (st != GPY_OK) return 1;
    printf("cmake consumer: ok (gpy %s)\n", gpy_version());
    return 0;
}
