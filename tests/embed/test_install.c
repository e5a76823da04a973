/*
** test_install.c — the installed library is the one this header describes,
** and it finds its kernel compiler (lib/gpy/gpy_jit.so) by itself: the
** program is linked only with pkg-config's flags, no -rdynamic, and
** tests/embed/run.sh runs it again after moving the whole prefix.
*/
#include "check.h"

/* a kernel on the CPU device, checked by the script against hand-computed values */
static const char *script = "from numba import cuda\n"
                            "import numpy as np\n"
                            "@cuda.jit\n"
                            "def axpy(out, a, x, y):\n"
                            "    i = cuda.grid(1)\n"
                            "    if i < out.size:\n"
                            "        out[i] = a * x[i] + y[i]\n"
                            "x = np.arange(6.0)\n"
                            "y = np.ones(6)\n"
                            "out = np.zeros(6)\n"
                            "axpy[2, 4](out, 2.0, x, y)\n"
                            "assert list(out) == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0], list(out)\n";

int main(void) {
    CHECK_STR(gpy_version(), GPY_VERSION);
    CHECK(gpy_abi_version() == GPY_ABI_VERSION);
    CHECK_STR(gpy_status_name(GPY_OK), "ok");

    GpyConfig config;
    gpy_config_init(&config);
    config.device = GPY_DEVICE_CPU;
    GpyVM *vm = gpy_new(&config);
    CHECK(vm != NULL);
    if (vm) {
        CHECK_OK(vm, gpy_run_string(vm, NULL, script, (size_t)-1, "kernel.py"));
        gpy_free(vm);
    }

    /* one compiler per process: a VM naming another module file is told so
    ** (ImportError at its first compile), and stays usable */
    config.jit_module = "/nonexistent/gpy_jit.so";
    vm = gpy_new(&config);
    CHECK(vm != NULL);
    if (vm) {
        CHECK(gpy_run_string(vm, NULL, script, (size_t)-1, "kernel.py") == GPY_RUNTIME_ERROR);
        CHECK_STR(gpy_error_type(vm), "ImportError");
        const char *msg = gpy_error_message(vm);
        CHECK(msg && strstr(msg, "the kernel compiler is already loaded from ") &&
              strstr(msg, "this VM asks for /nonexistent/gpy_jit.so"));
        CHECK_OK(vm, gpy_run_string(vm, NULL, "x = 1 + 1\nassert x == 2\n", (size_t)-1, NULL));
        gpy_free(vm);
    }
    return check_done("test_install");
}
