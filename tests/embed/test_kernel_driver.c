/*
** test_kernel_driver.c — an application's own device memory, through the
** test-only CUDA driver (tests/gpu/fake_libcuda.c, named by
** GpyConfig.libcuda): the application retains the primary context and
** cuMemAllocs a buffer, wraps the pointer (gpy_wrap_device_array), and
** launches a script's kernel on it from C; the driver's record of the
** launch must carry that exact pointer (and shape, stride, scalar, grid,
** block, shared bytes). The script sees the same pointer through
** __cuda_array_interface__, its views and objects carrying the interface
** launch on it too, gpy never frees it, and a release callback runs once.
** The driver never runs PTX: numbers are checked on the CPU device
** (test_kernel_cpu.c).
**
** Usage: test_kernel_driver FAKE_LIBCUDA.so (or GPY_TEST_FAKE_LIBCUDA);
** tests/gpu/build-fake.sh builds it. Without it the test is skipped, or
** fails under GPY_TEST_STRICT=1.
*/
#include <dlfcn.h>

#include "../gpu/fake_libcuda.h"
#include "check.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef int CUdevice;

static struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*release)(CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    fake_cuda_get_launch_fn get_launch;
    fake_cuda_launch_count_fn launch_count;
    fake_cuda_violations_fn violations;
    fake_cuda_last_violation_fn last_violation;
} cu;

static CUcontext app_ctx;
static int released;

/* What an application's release callback does: free its allocation in its
** own (retained) context, which may not be current any more. */
static void free_device(void *data, void *user) {
    (void)user;
    CHECK(cu.set_current(app_ctx) == 0);
    CHECK(cu.free((CUdeviceptr)(uintptr_t)data) == 0);
    released++;
}

static void churn(GpyVM *vm) {
    CHECK_OK(vm, gpy_run_string(vm, NULL, "for _ in range(100):\n    junk = [0] * 100000\njunk = None\n",
                                (size_t)-1, "<churn>"));
}

static uint64_t param_u64(const FakeLaunch *l, int i) {
    uint64_t v = 0;
    CHECK(i < l->nparams && l->param_size[i] == 8);
    if (i < l->nparams) memcpy(&v, l->bytes + l->param_offset[i], 8);
    return v;
}

static int64_t eval_int(GpyVM *vm, const char *expr) {
    int64_t v = -1;
    CHECK_OK(vm, gpy_eval(vm, NULL, expr, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &v));
    return v;
}

static const char *SCRIPT =
    "from numba import cuda\n"
    "import numpy as np\n"
    "\n"
    "@cuda.jit\n"
    "def fill(a, v):\n"
    "    i = cuda.grid(1)\n"
    "    if i < a.shape[0]:\n"
    "        a[i] = v\n"
    "\n"
    "class Foreign:\n"
    "    # another library's array: only the interface\n"
    "    def __init__(self, iface):\n"
    "        self.__cuda_array_interface__ = iface\n"
    "\n"
    "cuda.synchronize()  # opens the device\n";

#define N 1000

int main(int argc, char **argv) {
    const char *lib = argc > 1 ? argv[1] : getenv("GPY_TEST_FAKE_LIBCUDA");
    if (!lib || !*lib) {
        const char *strict = getenv("GPY_TEST_STRICT");
        printf("SKIP: test_kernel_driver needs the test driver (tests/gpu/build-fake.sh) as argument\n");
        return strict && strcmp(strict, "1") == 0 ? 1 : 0;
    }
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "cannot open %s: %s\n", lib, dlerror());
        return 1;
    }
#define SYM(field, name)                         \
    do {                                         \
        *(void **)&cu.field = dlsym(dl, name); \
        CHECK(cu.field != NULL);                 \
    } while (0)
    SYM(init, "cuInit");
    SYM(device_get, "cuDeviceGet");
    SYM(retain, "cuDevicePrimaryCtxRetain");
    SYM(release, "cuDevicePrimaryCtxRelease_v2");
    SYM(set_current, "cuCtxSetCurrent");
    SYM(alloc, "cuMemAlloc_v2");
    SYM(free, "cuMemFree_v2");
    SYM(htod, "cuMemcpyHtoD_v2");
    SYM(get_launch, "fake_cuda_get_launch");
    SYM(launch_count, "fake_cuda_launch_count");
    SYM(violations, "fake_cuda_violations");
    SYM(last_violation, "fake_cuda_last_violation");
    if (check_failures) return check_done("test_kernel_driver");

    GpyConfig cfg;
    gpy_config_init(&cfg);
    cfg.device = GPY_DEVICE_CUDA;
    cfg.libcuda = lib;
    GpyVM *vm = gpy_new(&cfg);
    CHECK(vm != NULL);
    CHECK_OK(vm, gpy_ensure_slots(vm, 6));
    CHECK_OK(vm, gpy_run_string(vm, NULL, SCRIPT, (size_t)-1, "script.gpy"));

    /* the application's side: its own reference on the primary context, its own buffer */
    CUdevice dev = 0;
    CHECK(cu.init(0) == 0 && cu.device_get(&dev, 0) == 0 && cu.retain(&app_ctx, dev) == 0);
    CHECK(cu.set_current(app_ctx) == 0);
    CUdeviceptr dptr = 0;
    CHECK(cu.alloc(&dptr, N * sizeof(float)) == 0 && dptr != 0);
    static float host[N];
    for (int i = 0; i < N; i++) host[i] = (float)i;
    CHECK(cu.htod(dptr, host, sizeof host) == 0);

    int64_t n = N;
    GpyArray desc = {.data = (void *)(uintptr_t)dptr, .dtype = GPY_FLOAT32, .ndim = 1, .shape = &n};
    CHECK_OK(vm, gpy_eval(vm, NULL, "fill", 1));
    CHECK_OK(vm, gpy_wrap_device_array(vm, 2, &desc));
    CHECK(gpy_slot_type(vm, 2) == GPY_TYPE_DEVICE_ARRAY);
    CHECK_OK(vm, gpy_set_float(vm, 3, 2.5));
    GpyArray got;
    CHECK_OK(vm, gpy_get_array(vm, 2, &got));
    CHECK(got.device && got.data == (void *)(uintptr_t)dptr && got.shape[0] == N && got.strides[0] == 4);

    /* ---- the launch from C carries the application's pointer */
    long before = cu.launch_count();
    GpyLaunch launch = {.grid = {4}, .block = {256}, .shared_bytes = 128, .stream = -1};
    for (int rep = 0; rep < 3; rep++) CHECK_OK(vm, gpy_launch(vm, 1, &launch, 2, 2));
    CHECK(cu.launch_count() == before + 3);
    FakeLaunch l;
    CHECK(cu.get_launch(0, &l) == 0);
    CHECK(strstr(l.entry, "fill") != NULL);
    CHECK(l.grid[0] == 4 && l.grid[1] == 1 && l.grid[2] == 1 && l.block[0] == 256 && l.block[1] == 1);
    CHECK(l.shared_bytes == 128);
    CHECK(l.nparams == 4); /* data, shape[0], strides[0], v */
    CHECK(param_u64(&l, 0) == dptr);
    CHECK(param_u64(&l, 1) == N);
    CHECK(param_u64(&l, 2) == sizeof(float));
    uint64_t vbits = param_u64(&l, 3);
    double v;
    memcpy(&v, &vbits, 8);
    CHECK(v == 2.5);

    /* ---- the script sees the same memory: contents, the interface, views, foreign objects */
    CHECK_OK(vm, gpy_set_global(vm, NULL, "app", 2));
    CHECK(eval_int(vm, "int(app.copy_to_host()[999])") == 999);
    CHECK(eval_int(vm, "app.__cuda_array_interface__['data'][0]") == (int64_t)dptr);
    CHECK(eval_int(vm, "1 if app.__cuda_array_interface__['strides'] is None else 0") == 1);
    CHECK_OK(vm, gpy_run_string(vm, NULL, "fill[1, 32](app[16:], 1.0)\n", (size_t)-1, NULL));
    CHECK(cu.get_launch(0, &l) == 0);
    CHECK(param_u64(&l, 0) == dptr + 16 * sizeof(float) && param_u64(&l, 1) == N - 16);
    CHECK_OK(vm, gpy_run_string(vm, NULL, "fill[1, 32](Foreign(app.__cuda_array_interface__), 3.0)\n"
                                          "other = cuda.as_cuda_array(Foreign(app[::2].__cuda_array_interface__))\n",
                                (size_t)-1, NULL));
    CHECK(cu.get_launch(0, &l) == 0);
    CHECK(param_u64(&l, 0) == dptr && param_u64(&l, 1) == N);
    CHECK(eval_int(vm, "other.__cuda_array_interface__['data'][0]") == (int64_t)dptr);
    CHECK(eval_int(vm, "other.strides[0]") == 8);
    CHECK_OK(vm, gpy_eval(vm, NULL, "other", 4));
    CHECK_OK(vm, gpy_set_float(vm, 5, -1.0));
    CHECK_OK(vm, gpy_launch(vm, 1, &launch, 4, 2));
    CHECK(cu.get_launch(0, &l) == 0);
    CHECK(param_u64(&l, 0) == dptr && param_u64(&l, 1) == N / 2 && param_u64(&l, 2) == 8);

    /* ---- gpy never frees the application's memory */
    for (int i = 0; i < 6; i++) CHECK_OK(vm, gpy_set_none(vm, i));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "app = other = None\n", (size_t)-1, NULL));
    churn(vm);
    churn(vm);
    CHECK(cu.set_current(app_ctx) == 0);
    CHECK(cu.free(dptr) == 0);

    /* ---- with a release callback: called once at collection, once at gpy_free */
    CUdeviceptr p1 = 0, p2 = 0;
    CHECK(cu.alloc(&p1, 256) == 0 && cu.alloc(&p2, 256) == 0);
    int64_t n64 = 64;
    GpyArray d1 = {.data = (void *)(uintptr_t)p1, .dtype = GPY_INT32, .ndim = 1, .shape = &n64,
                   .release = free_device};
    GpyArray d2 = d1;
    d2.data = (void *)(uintptr_t)p2;
    CHECK_OK(vm, gpy_wrap_device_array(vm, 1, &d1));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "kept", 1));
    CHECK_OK(vm, gpy_wrap_device_array(vm, 1, &d2));
    CHECK_OK(vm, gpy_set_none(vm, 1));
    for (int i = 0; i < 20 && released == 0; i++) churn(vm);
    CHECK(released == 1);
    CHECK(cu.violations() == 0);
    gpy_free(vm);
    CHECK(released == 2);
    CHECK(cu.release(dev) == 0);
    if (cu.violations() != 0) fprintf(stderr, "driver contract violation: %s\n", cu.last_violation());
    CHECK(cu.violations() == 0);
    dlclose(dl);
    return check_done("test_kernel_driver");
}
