/*
** launch_bench.c — host-side cost of gpu_cuda_launch for a kernel with 3
** one-dimensional array arguments (9 parameters under the ABI of jit/jit.h:
** data pointer, shape[0], strides[0] per array), against a driver loaded
** through GPY_LIBCUDA (normally tests/gpu/fake_libcuda.so with
** FAKE_CUDA_NO_PROBE=1; see run.sh).
**
** Measures, as the median over RUNS runs of LAUNCHES launches each:
**   total   storing the 9 values into a GpuCudaParams block + gpu_cuda_launch
**           (limit checks, current-context check, driver call)
**   driver  the driver's cuLaunchKernel called directly with the same arguments
** and prints both and their difference, gpy's own share of a launch. The
** marshalling of gpy values into the parameter block is the cuda module's
** and is not part of this figure.
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../gpu/cuda_driver.h"

#define RUNS 21
#define LAUNCHES 20000

static const char ptx[] =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry add3(\n"
    "\t.param .u64 add3_param_0, .param .u64 add3_param_1, .param .u64 add3_param_2,\n"
    "\t.param .u64 add3_param_3, .param .u64 add3_param_4, .param .u64 add3_param_5,\n"
    "\t.param .u64 add3_param_6, .param .u64 add3_param_7, .param .u64 add3_param_8\n"
    ")\n"
    "{\n"
    "\tret;\n"
    "}\n";

/* the driver library gpy's CLI would open (GPY_LIBCUDA; NULL: libcuda.so.1) */
static const char *libcuda;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "launch_bench: %s: %s\n", what, err);
    exit(1);
}

int main(void)
{
    char err[GPU_CUDA_ERRSIZE];
    int status;
    libcuda = getenv("GPY_LIBCUDA");
    GpuCuda *c = gpu_cuda_open(libcuda, 0, &status, err, sizeof err);
    if (!c)
        die("open", err);
    CUmodule mod;
    GpuCudaFunction f;
    if (gpu_cuda_module_load_ptx(c, ptx, &mod, NULL, 0, err, sizeof err) ||
        gpu_cuda_get_function(c, mod, "add3", &f, err, sizeof err))
        die("module", err);
    const size_t n = 1 << 20;
    CUdeviceptr arr[3];
    for (int i = 0; i < 3; i++)
        if (gpu_cuda_malloc(c, n * sizeof(float), &arr[i], err, sizeof err))
            die("malloc", err);
    /* the parameter block of a cached launch plan: 9 slots of 8 bytes */
    static const uint32_t sizes[9] = {8, 8, 8, 8, 8, 8, 8, 8, 8};
    GpuCudaParams *block = gpu_cuda_params_new(9, sizes);
    if (!block)
        die("params", "out of memory");
    unsigned long long values[9];
    for (int i = 0; i < 3; i++) {
        values[3 * i] = arr[i];
        values[3 * i + 1] = n;
        values[3 * i + 2] = sizeof(float);
    }
    void **params = block->ptrs;
    GpuCudaLaunch l = {{(uint32_t)(n / 256), 1, 1}, {256, 1, 1}, 0, NULL, params};

    void *dl = dlopen(gpu_cuda_library_path(libcuda), RTLD_NOW | RTLD_NOLOAD);
    PFN_cuLaunchKernel raw = dl ? (PFN_cuLaunchKernel)dlsym(dl, "cuLaunchKernel") : NULL;
    if (!raw)
        die("dlsym", "cuLaunchKernel");

    double total[RUNS], driver[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < LAUNCHES; i++) {
            for (int k = 0; k < 9; k++) /* what a plan stores per launch */
                memcpy(gpu_cuda_param_slot(block, k), &values[k], 8);
            if (gpu_cuda_launch(c, &f, &l, err, sizeof err))
                die("launch", err);
        }
        double t1 = now_ns();
        for (int i = 0; i < LAUNCHES; i++)
            if (raw(f.fn, l.grid[0], 1, 1, 256, 1, 1, 0, NULL, params, NULL))
                die("raw launch", "failed");
        double t2 = now_ns();
        total[r] = (t1 - t0) / LAUNCHES;
        driver[r] = (t2 - t1) / LAUNCHES;
        if (gpu_cuda_synchronize(c, err, sizeof err))
            die("synchronize", err);
    }
    qsort(total, RUNS, sizeof total[0], cmp_double);
    qsort(driver, RUNS, sizeof driver[0], cmp_double);
    double t = total[RUNS / 2], d = driver[RUNS / 2];
    printf("driver: %s\n", gpu_cuda_library_path(libcuda));
    printf("gpu_cuda_launch, 3 array arguments (9 params): %.0f ns per launch (median of %d x %d)\n", t, RUNS,
           LAUNCHES);
    printf("cuLaunchKernel called directly:                %.0f ns per launch\n", d);
    printf("gpy's share (slot stores, limit and context checks): %.0f ns per launch\n", t - d);
    for (int i = 0; i < 3; i++)
        gpu_cuda_free(c, arr[i], err, sizeof err);
    gpu_cuda_params_free(block);
    gpu_cuda_module_unload(c, mod, err, sizeof err);
    gpu_cuda_close(c);
    return 0;
}
