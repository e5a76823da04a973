/*
** test_kernel_cpu.c — a kernel a script defined, launched from C on the CPU
** device: gpy_launch over the application's buffers (host memory wrapped
** with gpy_wrap_device_array, and as a numpy array with gpy_wrap_array) and
** scalars, 100 times, sharing the specialization the script's own launch
** made; then the errors a script's launch raises, as statuses.
*/
#include "check.h"

#define N 1000

static const char *SCRIPT =
    "from numba import cuda\n"
    "import numpy as np\n"
    "\n"
    "@cuda.jit\n"
    "def axpy(out, x, a, n):\n"
    "    i = cuda.grid(1)\n"
    "    if i < n:\n"
    "        out[i] += a * x[i]\n"
    "\n"
    "@cuda.jit\n"
    "def scale2d(m, f):\n"
    "    i, j = cuda.grid(2)\n"
    "    if i < m.shape[0] and j < m.shape[1]:\n"
    "        m[i, j] *= f\n"
    "\n"
    "@cuda.jit(device=True)\n"
    "def helper(x):\n"
    "    return x\n"
    "\n"
    "# the script's own launch, with the argument types C will use\n"
    "d = cuda.to_device(np.zeros(4))\n"
    "axpy[1, 32](d, np.ones(4), 2.0, 4)\n"
    "first = d.copy_to_host()\n";

static int64_t eval_int(GpyVM *vm, const char *expr) {
    int64_t v = -1;
    CHECK_OK(vm, gpy_eval(vm, NULL, expr, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &v));
    return v;
}

int main(void) {
    GpyConfig cfg;
    gpy_config_init(&cfg);
    cfg.device = GPY_DEVICE_CPU;
    cfg.cpu_threads = 2;
    GpyVM *vm = gpy_new(&cfg);
    CHECK(vm != NULL);
    CHECK_OK(vm, gpy_ensure_slots(vm, 8));
    CHECK_OK(vm, gpy_run_string(vm, NULL, SCRIPT, (size_t)-1, "script.gpy"));
    CHECK(eval_int(vm, "int(first.sum())") == 8);
    CHECK(eval_int(vm, "len(axpy.signatures)") == 1);

    /* slots: 0 scratch, 1 kernel, 2 out (device array), 3 x (numpy), 4 a, 5 n */
    static double out[N], x[N];
    for (int i = 0; i < N; i++) x[i] = i;
    int64_t n = N;
    GpyArray out_desc = {.data = out, .dtype = GPY_FLOAT64, .ndim = 1, .shape = &n};
    GpyArray x_desc = {.data = x, .dtype = GPY_FLOAT64, .ndim = 1, .shape = &n, .readonly = true};
    CHECK_OK(vm, gpy_eval(vm, NULL, "axpy", 1));
    CHECK_OK(vm, gpy_wrap_device_array(vm, 2, &out_desc));
    CHECK(gpy_slot_type(vm, 2) == GPY_TYPE_DEVICE_ARRAY);
    CHECK_OK(vm, gpy_wrap_array(vm, 3, &x_desc));
    CHECK_OK(vm, gpy_set_float(vm, 4, 0.5));
    CHECK_OK(vm, gpy_set_int(vm, 5, N));

    GpyArray got;
    CHECK_OK(vm, gpy_get_array(vm, 2, &got));
    CHECK(got.device && got.data == (void *)out && got.ndim == 1 && got.shape[0] == N && got.strides[0] == 8);

    GpyLaunch launch = {.grid = {(N + 127) / 128}, .block = {128}, .stream = -1};
    for (int rep = 0; rep < 100; rep++) CHECK_OK(vm, gpy_launch(vm, 1, &launch, 2, 4));
    int wrong = 0;
    for (int i = 0; i < N; i++) wrong += out[i] != 50.0 * i; /* 100 * 0.5 * i, exact in binary */
    CHECK(wrong == 0);
    CHECK(x[999] == 999);
    /* the script's specialization served every launch from C */
    CHECK(eval_int(vm, "len(axpy.signatures)") == 1);

    /* a 2-D launch with a stream from the script and zero grid entries counting as 1 */
    static float grid2[6][5];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++) grid2[i][j] = (float)(i * 5 + j);
    int64_t shape2[2] = {6, 5};
    GpyArray g2 = {.data = grid2, .dtype = GPY_FLOAT32, .ndim = 2, .shape = shape2};
    CHECK_OK(vm, gpy_eval(vm, NULL, "scale2d", 1));
    CHECK_OK(vm, gpy_wrap_device_array(vm, 2, &g2));
    CHECK_OK(vm, gpy_eval(vm, NULL, "np.float32(3)", 3));
    CHECK_OK(vm, gpy_eval(vm, NULL, "cuda.stream()", 6));
    GpyLaunch l2 = {.grid = {2, 0, 0}, .block = {4, 8, 0}, .stream = 6};
    CHECK_OK(vm, gpy_launch(vm, 1, &l2, 2, 2));
    wrong = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++) wrong += grid2[i][j] != (float)(3 * (i * 5 + j));
    CHECK(wrong == 0);
    CHECK(eval_int(vm, "len(scale2d.signatures)") == 1);

    /* ---- errors are statuses with the script path's messages */
    CHECK_OK(vm, gpy_eval(vm, NULL, "axpy", 1));
    CHECK_OK(vm, gpy_wrap_device_array(vm, 2, &out_desc));
    CHECK_OK(vm, gpy_wrap_array(vm, 3, &x_desc));
    CHECK_OK(vm, gpy_set_int(vm, 7, 3));
    CHECK(gpy_launch(vm, 7, &launch, 2, 4) == GPY_RUNTIME_ERROR); /* not a kernel */
    CHECK_STR(gpy_error_type(vm), "TypeError");
    CHECK_STR(gpy_error_message(vm), "'int' object is not a kernel (a @cuda.jit function)");
    CHECK_OK(vm, gpy_eval(vm, NULL, "helper", 7));
    CHECK(gpy_launch(vm, 7, &launch, 2, 1) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "device function 'helper' cannot be launched: only kernels are launched");
    CHECK(gpy_launch(vm, 1, &launch, 2, 3) == GPY_RUNTIME_ERROR); /* wrong count */
    CHECK_STR(gpy_error_type(vm), "TypeError");
    CHECK_STR(gpy_error_message(vm), "kernel 'axpy' takes 4 arguments (3 given)");
    CHECK_OK(vm, gpy_eval(vm, NULL, "'half'", 4));
    CHECK(gpy_launch(vm, 1, &launch, 2, 4) == GPY_RUNTIME_ERROR); /* wrong type */
    CHECK_STR(gpy_error_type(vm), "TypeError");
    CHECK_STR(gpy_error_message(vm), "kernel 'axpy' argument 3: cannot pass a value of type 'str' to a kernel");
    CHECK_OK(vm, gpy_set_float(vm, 4, 0.5));
    GpyLaunch bad = {.grid = {1}, .block = {2048}, .stream = -1};
    CHECK(gpy_launch(vm, 1, &bad, 2, 4) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "CudaAPIError");
    CHECK_STR(gpy_error_message(vm), "[1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE: blockdim (2048, 1, 1) exceeds the limits of a block (1024 threads; z \xe2\x89\xa4 64)");
    GpyLaunch tall = {.grid = {1, 70000}, .block = {1}, .stream = -1};
    CHECK(gpy_launch(vm, 1, &tall, 2, 4) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "[1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE: griddim (1, 70000, 1): y and z must be at most 65535");
    GpyLaunch badstream = {.grid = {1}, .block = {1}, .stream = 5}; /* slot 5 holds the int 1000 */
    CHECK(gpy_launch(vm, 1, &badstream, 2, 4) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "expected a CUDA stream (cuda.stream()) or 0, not 'int'");
    CHECK(gpy_launch(vm, 1, &launch, 6, 4) == GPY_RUNTIME_ERROR); /* slots 6..9 do not all exist */
    CHECK_STR(gpy_error_type(vm), "IndexError");
    CHECK(gpy_launch(vm, 1, NULL, 2, 4) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ValueError");

    /* ---- device wraps: refused descriptions, read-only, a script's device array described */
    GpyArray nodata = {.data = NULL, .dtype = GPY_FLOAT64, .ndim = 1, .shape = &n};
    CHECK(gpy_wrap_device_array(vm, 7, &nodata) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ValueError");
    CHECK_STR(gpy_error_message(vm), "gpy_wrap_device_array: data is NULL for an array of 1000 elements");
    static int32_t ro_dev[4] = {4, 3, 2, 1};
    int64_t four = 4;
    GpyArray ro = {.data = ro_dev, .dtype = GPY_INT32, .ndim = 1, .shape = &four, .readonly = true};
    CHECK_OK(vm, gpy_wrap_device_array(vm, 7, &ro));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "ro", 7));
    CHECK(eval_int(vm, "int(ro.copy_to_host().sum())") == 10);
    CHECK(eval_int(vm, "int(ro.__cuda_array_interface__['data'][1])") == 1);
    CHECK(gpy_run_string(vm, NULL, "ro[0] = 7\n", (size_t)-1, NULL) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "assignment destination is read-only");
    CHECK(gpy_run_string(vm, NULL, "ro.copy_to_device(np.zeros(4, dtype=np.int32))\n", (size_t)-1, NULL) ==
          GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "assignment destination is read-only");
    CHECK(ro_dev[0] == 4);
    CHECK_OK(vm, gpy_eval(vm, NULL, "cuda.to_device(np.arange(6, dtype=np.int64).reshape(2, 3))", 7));
    CHECK_OK(vm, gpy_get_array(vm, 7, &got));
    CHECK(got.device && !got.readonly && got.dtype == GPY_INT64 && got.ndim == 2 && got.shape[0] == 2 &&
          got.shape[1] == 3 && got.strides[0] == 24 && ((const int64_t *)got.data)[5] == 5); /* host memory here */

    /* the VM is still usable, and out saw no launch that failed */
    for (int rep = 0; rep < 2; rep++) CHECK_OK(vm, gpy_launch(vm, 1, &launch, 2, 4));
    CHECK(out[10] == 510.0 && out[999] == 999.0 * 51);
    CHECK(eval_int(vm, "len(axpy.signatures)") == 1);
    gpy_free(vm);
    return check_done("test_kernel_cpu");
}
