/* A C application running a script-defined kernel over its own buffer.
** Build against an installed gpy:  cc app.c $(pkg-config --cflags --libs gpy) */
#include <gpy.h>
#include <stdio.h>

static const char *script = "from numba import cuda\n"
                            "@cuda.jit\n"
                            "def scale(a, factor):\n"
                            "    i = cuda.grid(1)\n"
                            "    if i < a.size:\n"
                            "        a[i] *= factor\n";

static int fail(GpyVM *vm) {
    fprintf(stderr, "%s", vm ? gpy_error_traceback(vm) : "gpy: out of memory\n");
    gpy_free(vm);
    return 1;
}

int main(void) {
    GpyVM *vm = gpy_new(NULL); /* defaults: a GPU if there is one, else the CPU device */
    if (!vm || gpy_run_string(vm, NULL, script, (size_t)-1, "script.py") != GPY_OK) return fail(vm);

    float data[1000];
    for (int i = 0; i < 1000; i++) data[i] = (float)i;
    int64_t shape[1] = {1000};
    GpyArray array = {.data = data, .dtype = GPY_FLOAT32, .ndim = 1, .shape = shape};

    gpy_ensure_slots(vm, 3);
    if (gpy_get_global(vm, NULL, "scale", 0) != GPY_OK) return fail(vm); /* slot 0: the kernel */
    gpy_wrap_array(vm, 1, &array);                                        /* slot 1: data, not copied */
    gpy_set_float(vm, 2, 2.5);                                            /* slot 2: factor */
    GpyLaunch launch = {.grid = {4}, .block = {256}, .stream = -1};
    if (gpy_launch(vm, 0, &launch, 1, 2) != GPY_OK) return fail(vm);

    printf("data[999] = %g\n", data[999]); /* 999 * 2.5 = 2497.5 */
    gpy_free(vm);
    return 0;
}
