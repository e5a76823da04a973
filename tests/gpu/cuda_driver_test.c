/*
** cuda_driver_test.c — tests gpu/cuda_driver.c + gpu/cuda_module.c alone
** (no VM), against tests/gpu/fake_libcuda.so or a real driver.
**
**   GPY_LIBCUDA=fake_libcuda.so cuda_driver_test tests/gpu/vadd.ptx [more.ptx...]
**       every check (more PTX files must load and their kernels be found), including the fake's records (exact parameter bytes of
**       each launch, contract violations, injected sticky errors);
**   GPY_CUDA_TEST_REAL=1 cuda_driver_test tests/gpu/vadd.ptx
**       against the real libcuda.so.1: only checks that hold on hardware,
**       plus results computed by the GPU (vadd) and a real illegal address.
**
** Prints "cuda_driver_test: N checks passed" and exits 0, or lists the
** failures and exits 1. Every contract violation the fake records must be
** one this test provoked on purpose (counted in expected_violations).
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/cuda_driver.h"
#include "fake_libcuda.h"

static int passed, failed;
static bool real;
static int expected_violations;
static char err[GPU_CUDA_ERRSIZE];
/* what gpy's CLI passes the driver layer: GPY_LIBCUDA, GPY_CUDA_HOME/CUDA_HOME */
static const char *libcuda, *cuda_home;

/* the fake's test functions (NULL on a real driver) */
static fake_cuda_launch_count_fn launch_count;
static fake_cuda_get_launch_fn get_launch;
static fake_cuda_violations_fn violations;
static fake_cuda_last_violation_fn last_violation;
static fake_cuda_inject_error_fn inject_error;
static fake_cuda_live_bytes_fn live_bytes;
static fake_cuda_live_allocations_fn live_allocations;

static void check_at(bool ok, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check_at(bool ok, int line, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL line %d: ", line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n   last error: %s\n", err);
    va_end(ap);
}
#define CHECK(cond, ...) check_at((cond), __LINE__, __VA_ARGS__)
#define OK(call) check_at((call) == 0, __LINE__, "%s", #call)

static bool contains(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* A call the fake must refuse as a contract violation mentioning `what`. */
#define VIOLATES(call, status, what)                                                                       \
    do {                                                                                                   \
        int before_ = violations();                                                                        \
        int st_ = (call);                                                                                  \
        expected_violations++;                                                                             \
        CHECK(st_ == (status), "%s: status %d, expected %d", #call, st_, (status));                        \
        CHECK(violations() == before_ + 1, "%s: recorded %d violations", #call, violations() - before_);   \
        CHECK(contains(last_violation(), (what)), "%s: violation '%s' lacks '%s'", #call, last_violation(), \
              (what));                                                                                     \
    } while (0)

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

/* ptx with its first occurrence of `from` replaced by `to`. */
static char *replaced(const char *ptx, const char *from, const char *to)
{
    const char *at = strstr(ptx, from);
    if (!at)
        return NULL;
    size_t n = strlen(ptx) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - ptx), ptx, to, at + strlen(from));
    return s;
}

static void load_fake_functions(void)
{
    void *dl = dlopen(gpu_cuda_library_path(libcuda), RTLD_NOW | RTLD_NOLOAD);
    if (!dl)
        return;
    launch_count = (fake_cuda_launch_count_fn)dlsym(dl, "fake_cuda_launch_count");
    get_launch = (fake_cuda_get_launch_fn)dlsym(dl, "fake_cuda_get_launch");
    violations = (fake_cuda_violations_fn)dlsym(dl, "fake_cuda_violations");
    last_violation = (fake_cuda_last_violation_fn)dlsym(dl, "fake_cuda_last_violation");
    inject_error = (fake_cuda_inject_error_fn)dlsym(dl, "fake_cuda_inject_error");
    live_bytes = (fake_cuda_live_bytes_fn)dlsym(dl, "fake_cuda_live_bytes");
    live_allocations = (fake_cuda_live_allocations_fn)dlsym(dl, "fake_cuda_live_allocations");
}

/* ------------------------------------------------------------- checks */

static void test_missing_library(void)
{
    const char *missing = "/nonexistent/libcuda.so.1";
    int status = 0;
    GpuCuda *c = gpu_cuda_open(missing, 0, &status, err, sizeof err);
    CHECK(c == NULL && status == GPU_CUDA_ENOLIB, "open without a driver: status %d", status);
    CHECK(contains(err, "/nonexistent/libcuda.so.1 not found: "), "missing library message: %s", err);
    int count = -1;
    CHECK(gpu_cuda_device_count(missing, &count, err, sizeof err) == GPU_CUDA_ENOLIB && count == 0,
          "count without a driver");
}

static void test_errors(void)
{
    char buf[256];
    gpu_cuda_describe(CUDA_ERROR_OUT_OF_MEMORY, buf, sizeof buf);
    CHECK(strcmp(buf, "CUDA_ERROR_OUT_OF_MEMORY: out of memory") == 0, "describe OOM: %s", buf);
    gpu_cuda_describe(CUDA_ERROR_ILLEGAL_ADDRESS, buf, sizeof buf);
    CHECK(strcmp(buf, "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered") == 0,
          "describe 700: %s", buf);
    gpu_cuda_describe(CUDA_ERROR_INVALID_VALUE, buf, sizeof buf);
    CHECK(strcmp(buf, "CUDA_ERROR_INVALID_VALUE: invalid argument") == 0, "describe 1: %s", buf);
    gpu_cuda_describe(123456, buf, sizeof buf);
    CHECK(strcmp(buf, "CUDA error 123456") == 0, "describe unknown: %s", buf);
    gpu_cuda_describe(GPU_CUDA_ELIMIT, buf, sizeof buf);
    CHECK(contains(buf, "limit"), "describe ELIMIT: %s", buf);
    CHECK(gpu_cuda_is_sticky(CUDA_ERROR_ILLEGAL_ADDRESS) && gpu_cuda_is_sticky(CUDA_ERROR_LAUNCH_FAILED) &&
              gpu_cuda_is_sticky(CUDA_ERROR_MISALIGNED_ADDRESS) && gpu_cuda_is_sticky(CUDA_ERROR_ASSERT),
          "sticky codes");
    CHECK(!gpu_cuda_is_sticky(CUDA_ERROR_OUT_OF_MEMORY) && !gpu_cuda_is_sticky(CUDA_ERROR_INVALID_VALUE) &&
              !gpu_cuda_is_sticky(0) && !gpu_cuda_is_sticky(GPU_CUDA_ELIMIT),
          "non-sticky codes");
}

static void test_devices(void)
{
    int count = 0, version = 0;
    OK(gpu_cuda_device_count(libcuda, &count, err, sizeof err));
    CHECK(count >= 1, "device count %d", count);
    OK(gpu_cuda_driver_version(libcuda, &version, err, sizeof err));
    CHECK(version >= 11000, "driver version %d", version);
    GpuCudaProps p;
    OK(gpu_cuda_device_props(libcuda, 0, &p, err, sizeof err));
    CHECK(p.warp_size == 32 && p.max_threads_per_block >= 512 && p.cc_major >= 3 && p.sm_count >= 1 &&
              p.total_memory > 0 && p.max_shared_per_block >= 16384 &&
              p.max_shared_per_block_optin >= p.max_shared_per_block && p.max_block_dim[0] >= 512 &&
              p.max_grid_dim[0] >= 65535 && p.name[0],
          "device properties look wrong");
    if (!real) {
        CHECK(strcmp(p.name, "gpy fake device") == 0, "name %s", p.name);
        CHECK(p.cc_major == 8 && p.cc_minor == 0 && p.sm_count == 108 && p.max_threads_per_block == 1024 &&
                  p.max_shared_per_block == 48 * 1024 && p.max_shared_per_block_optin == 163 * 1024 &&
                  p.total_memory == (size_t)40 << 30 && p.max_block_dim[2] == 64 && p.max_grid_dim[1] == 65535 &&
                  p.managed_memory && p.can_map_host && p.unified_addressing,
              "fake device properties");
        CHECK(version == 13000, "fake driver version %d", version);
    }
    int status = 0;
    GpuCuda *none = gpu_cuda_open(libcuda, count + 2, &status, err, sizeof err);
    CHECK(!none && status == CUDA_ERROR_INVALID_DEVICE && contains(err, "does not exist"), "open(%d): %s",
          count + 2, err);
    if (!real) {
        setenv("FAKE_CUDA_DEVICES", "0", 1);
        CHECK(gpu_cuda_device_count(libcuda, &count, err, sizeof err) == 0 && count == 0, "no devices: count %d", count);
        none = gpu_cuda_open(libcuda, 0, &status, err, sizeof err);
        CHECK(!none && status == CUDA_ERROR_NO_DEVICE && strcmp(err, "no CUDA device") == 0, "no device: %s", err);
        unsetenv("FAKE_CUDA_DEVICES");
    }
}

static void test_memory(GpuCuda *c)
{
    enum { N = 1000 };
    float host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i * 0.5f;
    CUdeviceptr d = 0, d2 = 0;
    OK(gpu_cuda_malloc(c, sizeof host, &d, err, sizeof err));
    CHECK(d != 0, "malloc gave 0");
    OK(gpu_cuda_memcpy_htod(c, d, host, sizeof host, err, sizeof err));
    memset(back, 0, sizeof back);
    OK(gpu_cuda_memcpy_dtoh(c, back, d, sizeof back, err, sizeof err));
    CHECK(memcmp(host, back, sizeof host) == 0, "round trip differs");
    OK(gpu_cuda_malloc(c, sizeof host, &d2, err, sizeof err));
    OK(gpu_cuda_memcpy_dtod(c, d2, d, sizeof host, err, sizeof err));
    OK(gpu_cuda_memset(c, d2, 0, 40, err, sizeof err)); /* first 10 floats = 0 */
    OK(gpu_cuda_memcpy_dtoh(c, back, d2, sizeof back, err, sizeof err));
    CHECK(back[9] == 0.0f && back[10] == 5.0f && back[N - 1] == (float)(N - 1) * 0.5f, "dtod/memset: %g %g", back[9],
          back[10]);
    /* async on a stream */
    CUstream s = NULL;
    OK(gpu_cuda_stream_create(c, true, &s, err, sizeof err));
    OK(gpu_cuda_memset_async(c, d2, 0x3f, sizeof host, s, err, sizeof err));
    OK(gpu_cuda_memcpy_htod_async(c, d2, host, 8, s, err, sizeof err));
    OK(gpu_cuda_memcpy_dtod_async(c, d, d2, sizeof host, s, err, sizeof err));
    OK(gpu_cuda_memcpy_dtoh_async(c, back, d, sizeof back, s, err, sizeof err));
    OK(gpu_cuda_stream_synchronize(c, s, err, sizeof err));
    unsigned char expect[4] = {0x3f, 0x3f, 0x3f, 0x3f};
    CHECK(back[0] == host[0] && back[1] == host[1] && memcmp(&back[2], expect, 4) == 0, "async copies");
    bool done = false;
    OK(gpu_cuda_stream_query(c, s, &done, err, sizeof err));
    CHECK(done, "stream not done after synchronize");
    OK(gpu_cuda_stream_destroy(c, s, err, sizeof err));
    CHECK(gpu_cuda_stream_destroy(c, NULL, err, sizeof err) == GPU_CUDA_EARG, "destroying the default stream");
    /* zero sizes are no-ops */
    CUdeviceptr z = 123;
    OK(gpu_cuda_malloc(c, 0, &z, err, sizeof err));
    CHECK(z == 0, "malloc(0) gave %llx", z);
    OK(gpu_cuda_free(c, 0, err, sizeof err));
    OK(gpu_cuda_memcpy_htod(c, 0, NULL, 0, err, sizeof err));
    /* memory info */
    size_t free_b = 0, total_b = 0;
    OK(gpu_cuda_mem_info(c, &free_b, &total_b, err, sizeof err));
    CHECK(total_b > 0 && free_b <= total_b, "mem info %zu / %zu", free_b, total_b);
    if (!real)
        CHECK(total_b - free_b == live_bytes() && live_bytes() >= 2 * sizeof host, "fake mem info");
    /* out of memory: a clean error with the driver's name and text */
    CUdeviceptr huge = 0;
    int st = gpu_cuda_malloc(c, (size_t)1 << 50, &huge, err, sizeof err);
    CHECK(st == CUDA_ERROR_OUT_OF_MEMORY && huge == 0, "huge malloc: %d", st);
    CHECK(strncmp(err, "CUDA_ERROR_OUT_OF_MEMORY: out of memory", 39) == 0, "OOM message: %s", err);
    CHECK(!gpu_cuda_broken(c), "OOM must not be sticky");
    if (!real) {
        /* contract checks of the fake */
        VIOLATES(gpu_cuda_memcpy_htod(c, d, host, sizeof host + 1, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "overrun");
        CHECK(strncmp(err, "CUDA_ERROR_INVALID_VALUE: invalid argument", 42) == 0, "bounds message: %s", err);
        VIOLATES(gpu_cuda_memcpy_dtoh(c, back, d + 8, sizeof back, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "overrun");
        VIOLATES(gpu_cuda_memcpy_dtod(c, d2 + 4, d, sizeof host, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "overrun");
        VIOLATES(gpu_cuda_memset(c, d + sizeof host, 1, 1, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "not in any device allocation");
        VIOLATES(gpu_cuda_memcpy_htod(c, d, (const void *)(uintptr_t)8, 4, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "not readable");
        VIOLATES(gpu_cuda_memcpy_dtoh(c, (void *)(uintptr_t)d2, d, 4, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "is a device address");
    }
    OK(gpu_cuda_free(c, d2, err, sizeof err));
    if (!real) {
        VIOLATES(gpu_cuda_memcpy_dtoh(c, back, d2, 4, err, sizeof err), CUDA_ERROR_INVALID_VALUE, "freed");
        VIOLATES(gpu_cuda_free(c, d2, err, sizeof err), CUDA_ERROR_INVALID_VALUE, "double free");
        VIOLATES(gpu_cuda_free(c, d + 4, err, sizeof err), CUDA_ERROR_INVALID_VALUE, "not the start");
    }
    OK(gpu_cuda_free(c, d, err, sizeof err));

    /* pinned, mapped and managed memory */
    void *pinned = NULL, *mapped = NULL;
    OK(gpu_cuda_host_alloc(c, 4096, false, &pinned, err, sizeof err));
    OK(gpu_cuda_host_alloc(c, sizeof host, true, &mapped, err, sizeof err));
    CHECK(pinned && mapped, "pinned allocations");
    CUdeviceptr md = 0;
    OK(gpu_cuda_host_device_pointer(c, mapped, &md, err, sizeof err));
    OK(gpu_cuda_memcpy_htod(c, md, host, sizeof host, err, sizeof err));
    OK(gpu_cuda_synchronize(c, err, sizeof err));
    CHECK(memcmp(mapped, host, sizeof host) == 0, "mapped memory not visible on the host");
    memcpy(pinned, host, sizeof host);
    CUdeviceptr m = 0;
    OK(gpu_cuda_managed_alloc(c, sizeof host, &m, err, sizeof err));
    OK(gpu_cuda_memcpy_htod(c, m, pinned, 4000, err, sizeof err));
    OK(gpu_cuda_synchronize(c, err, sizeof err));
    CHECK(memcmp((void *)(uintptr_t)m, host, 4000) == 0, "managed memory not visible on the host");
    ((float *)(uintptr_t)m)[3] = 42.0f;
    OK(gpu_cuda_memcpy_dtoh(c, back, m, 16, err, sizeof err));
    CHECK(back[3] == 42.0f, "host write to managed memory not visible to the device");
    if (!real)
        VIOLATES(gpu_cuda_host_device_pointer(c, pinned, &md, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "DEVICEMAP");
    OK(gpu_cuda_free(c, m, err, sizeof err));
    OK(gpu_cuda_host_free(c, pinned, err, sizeof err));
    OK(gpu_cuda_host_free(c, mapped, err, sizeof err));
    if (!real)
        CHECK(live_allocations() == 0 && live_bytes() == 0, "leak: %d allocations", live_allocations());
}

static void test_events(GpuCuda *c)
{
    CUevent a = NULL, b = NULL, nt = NULL;
    OK(gpu_cuda_event_create(c, true, &a, err, sizeof err));
    OK(gpu_cuda_event_create(c, true, &b, err, sizeof err));
    OK(gpu_cuda_event_create(c, false, &nt, err, sizeof err));
    OK(gpu_cuda_event_record(c, a, NULL, err, sizeof err));
    OK(gpu_cuda_event_record(c, b, NULL, err, sizeof err));
    OK(gpu_cuda_event_record(c, nt, NULL, err, sizeof err));
    CUstream s = NULL;
    OK(gpu_cuda_stream_create(c, true, &s, err, sizeof err));
    OK(gpu_cuda_stream_wait_event(c, s, a, err, sizeof err));
    OK(gpu_cuda_stream_synchronize(c, s, err, sizeof err));
    OK(gpu_cuda_stream_destroy(c, s, err, sizeof err));
    OK(gpu_cuda_event_synchronize(c, b, err, sizeof err));
    bool done = false;
    OK(gpu_cuda_event_query(c, b, &done, err, sizeof err));
    CHECK(done, "event not done after synchronize");
    float ms = -1;
    OK(gpu_cuda_event_elapsed(c, a, b, &ms, err, sizeof err));
    CHECK(ms >= 0 && ms < 10000, "elapsed %g ms", ms);
    int st = gpu_cuda_event_elapsed(c, a, nt, &ms, err, sizeof err);
    CHECK(st == CUDA_ERROR_INVALID_HANDLE && contains(err, "CUDA_ERROR_INVALID_HANDLE: invalid resource handle"),
          "elapsed with a non-timing event: %d %s", st, err);
    OK(gpu_cuda_event_destroy(c, a, err, sizeof err));
    OK(gpu_cuda_event_destroy(c, b, err, sizeof err));
    OK(gpu_cuda_event_destroy(c, nt, err, sizeof err));
}

/* The parameter bytes the fake recorded for the last launch equal `expect`. */
static void check_last_launch(const char *entry, const void *expect, size_t n, int nparams, const unsigned *sizes,
                              unsigned gx, unsigned bx, unsigned shared, CUstream s, int line)
{
    static FakeLaunch l;
    if (get_launch(0, &l) != 0) {
        check_at(false, line, "no launch recorded");
        return;
    }
    check_at(strcmp(l.entry, entry) == 0, line, "entry %s", l.entry);
    check_at(l.grid[0] == gx && l.grid[1] == 1 && l.grid[2] == 1 && l.block[0] == bx && l.block[1] == 1 &&
                 l.block[2] == 1,
             line, "grid/block (%u %u %u) (%u %u %u)", l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
             l.block[2]);
    check_at(l.shared_bytes == shared && l.stream == (void *)s, line, "shared %u stream %p", l.shared_bytes, l.stream);
    check_at(l.nparams == nparams && l.nbytes == n && memcmp(l.bytes, expect, n) == 0, line,
             "parameter bytes differ (%d params, %zu bytes)", l.nparams, l.nbytes);
    for (int i = 0; i < nparams && i < l.nparams; i++)
        check_at(l.param_size[i] == sizes[i], line, "param %d size %u, expected %u", i, l.param_size[i], sizes[i]);
}

static void test_modules(GpuCuda *c, const char *ptx, const char *ptx_path)
{
    const GpuCudaProps *props = gpu_cuda_props(c);
    CUmodule mod = NULL;
    char info[4096];
    OK(gpu_cuda_module_load_ptx(c, ptx, &mod, info, sizeof info, err, sizeof err));
    if (!mod)
        return;
    if (!real)
        CHECK(contains(info, "Compiling entry function 'vadd' for 'sm_80'"), "info log: %s", info);
    GpuCudaFunction vadd, pair, missing;
    OK(gpu_cuda_get_function(c, mod, "vadd", &vadd, err, sizeof err));
    OK(gpu_cuda_get_function(c, mod, "scale_pair", &pair, err, sizeof err));
    CHECK(vadd.static_shared == 0 && pair.static_shared == 512, "static shared %d %d", vadd.static_shared,
          pair.static_shared);
    CHECK(vadd.max_threads > 0 && vadd.max_threads <= props->max_threads_per_block && strcmp(vadd.name, "vadd") == 0,
          "vadd attributes");
    int st = gpu_cuda_get_function(c, mod, "nope", &missing, err, sizeof err);
    CHECK(st == CUDA_ERROR_NOT_FOUND && contains(err, "CUDA_ERROR_NOT_FOUND: named symbol not found") &&
              contains(err, "'nope'") && missing.fn == NULL,
          "missing kernel: %d %s", st, err);

    /* vadd(a, b, c, n) */
    enum { N = 1000 };
    float ha[N], hb[N], hc[N];
    for (int i = 0; i < N; i++)
        ha[i] = (float)i, hb[i] = 1000.0f - 2.0f * (float)i;
    CUdeviceptr a, b, cc;
    OK(gpu_cuda_malloc(c, sizeof ha, &a, err, sizeof err));
    OK(gpu_cuda_malloc(c, sizeof hb, &b, err, sizeof err));
    OK(gpu_cuda_malloc(c, sizeof hc, &cc, err, sizeof err));
    OK(gpu_cuda_memcpy_htod(c, a, ha, sizeof ha, err, sizeof err));
    OK(gpu_cuda_memcpy_htod(c, b, hb, sizeof hb, err, sizeof err));
    long long n = N;
    void *params[] = {&a, &b, &cc, &n, NULL};
    GpuCudaLaunch l = {{4, 1, 1}, {256, 1, 1}, 0, NULL, params};
    long launches_before = real ? 0 : launch_count();
    OK(gpu_cuda_launch(c, &vadd, &l, err, sizeof err));
    OK(gpu_cuda_synchronize(c, err, sizeof err));
    if (real) {
        OK(gpu_cuda_memcpy_dtoh(c, hc, cc, sizeof hc, err, sizeof err));
        bool right = true;
        for (int i = 0; i < N; i++)
            right = right && hc[i] == 1000.0f - (float)i;
        CHECK(right, "vadd computed wrong values on the GPU");
    } else {
        CHECK(launch_count() == launches_before + 1, "launch not recorded");
        unsigned char expect[32];
        memcpy(expect, &a, 8), memcpy(expect + 8, &b, 8), memcpy(expect + 16, &cc, 8), memcpy(expect + 24, &n, 8);
        static const unsigned sizes[] = {8, 8, 8, 8};
        check_last_launch("vadd", expect, 32, 4, sizes, 4, 256, 0, NULL, __LINE__);
    }

    /* scale_pair(out, Pair{double, int} by value, float, unsigned char): an aligned .b8[16] parameter */
    struct Pair {
        double x;
        int y;
    } pv = {2.5, 7};
    float scale = 3.0f;
    unsigned char flag = 1;
    void *pparams[] = {&cc, &pv, &scale, &flag, NULL};
    CUstream s = NULL;
    OK(gpu_cuda_stream_create(c, false, &s, err, sizeof err));
    GpuCudaLaunch pl = {{1, 1, 1}, {64, 1, 1}, 0, s, pparams};
    OK(gpu_cuda_launch(c, &pair, &pl, err, sizeof err));
    OK(gpu_cuda_stream_synchronize(c, s, err, sizeof err));
    if (real) {
        double out[64];
        OK(gpu_cuda_memcpy_dtoh(c, out, cc, sizeof out, err, sizeof err));
        CHECK(out[0] == 2.5 * 3.0 + 7 + 1 && out[63] == out[0], "scale_pair computed %g", out[0]);
    } else {
        unsigned char expect[29];
        memcpy(expect, &cc, 8), memcpy(expect + 8, &pv, 16), memcpy(expect + 24, &scale, 4), expect[28] = flag;
        static const unsigned sizes[] = {8, 16, 4, 1};
        check_last_launch("scale_pair", expect, 29, 4, sizes, 1, 64, 0, s, __LINE__);
    }

    /* the same launch through a parameter block (a launch plan's layout) */
    static const uint32_t pair_sizes[] = {8, 16, 4, 1};
    GpuCudaParams *block = gpu_cuda_params_new(4, pair_sizes);
    CHECK(block && block->offset[0] == 0 && block->offset[1] == 8 && block->offset[2] == 24 &&
              block->offset[3] == 28 && block->bytes == 32 && block->ptrs[4] == NULL &&
              block->ptrs[2] == block->data + 24 && ((uintptr_t)block->data & 15) == 0,
          "parameter block layout");
    CHECK(!gpu_cuda_params_new(1, (const uint32_t[]){0}) && !gpu_cuda_params_new(-1, NULL), "bad parameter sizes");
    GpuCudaParams *empty_block = gpu_cuda_params_new(0, NULL);
    CHECK(empty_block && empty_block->ptrs[0] == NULL, "empty parameter block");
    gpu_cuda_params_free(empty_block);
    if (block) {
        memcpy(gpu_cuda_param_slot(block, 0), &cc, 8);
        memcpy(gpu_cuda_param_slot(block, 1), &pv, 16);
        memcpy(gpu_cuda_param_slot(block, 2), &scale, 4);
        memcpy(gpu_cuda_param_slot(block, 3), &flag, 1);
        GpuCudaLaunch bl = {{1, 1, 1}, {64, 1, 1}, 0, NULL, block->ptrs};
        OK(gpu_cuda_launch(c, &pair, &bl, err, sizeof err));
        OK(gpu_cuda_synchronize(c, err, sizeof err));
        if (!real) {
            unsigned char expect[29];
            memcpy(expect, &cc, 8), memcpy(expect + 8, &pv, 16), memcpy(expect + 24, &scale, 4), expect[28] = flag;
            static const unsigned sizes[] = {8, 16, 4, 1};
            check_last_launch("scale_pair", expect, 29, 4, sizes, 1, 64, 0, NULL, __LINE__);
        }
        gpu_cuda_params_free(block);
    }

    if (!real) {
        /* the fake also reads `extra` (CU_LAUNCH_PARAM_BUFFER_*), which gpy does not use */
        void *dl = dlopen(gpu_cuda_library_path(libcuda), RTLD_NOW | RTLD_NOLOAD);
        PFN_cuLaunchKernel raw = dl ? (PFN_cuLaunchKernel)dlsym(dl, "cuLaunchKernel") : NULL;
        unsigned char packed[32] = {0};
        memcpy(packed, &cc, 8), memcpy(packed + 8, &pv, 16), memcpy(packed + 24, &scale, 4), packed[28] = flag;
        size_t packed_size = sizeof packed;
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                         CU_LAUNCH_PARAM_END};
        CHECK(raw && raw(pair.fn, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, extra) == CUDA_SUCCESS, "launch with extra");
        unsigned char expect[29];
        memcpy(expect, packed, 29);
        static const unsigned sizes[] = {8, 16, 4, 1};
        check_last_launch("scale_pair", expect, 29, 4, sizes, 1, 64, 0, NULL, __LINE__);
        size_t small = 20;
        void *short_extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                               CU_LAUNCH_PARAM_END};
        VIOLATES(raw(pair.fn, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, short_extra), CUDA_ERROR_INVALID_VALUE, "too small");
        VIOLATES(raw(pair.fn, 1, 1, 1, 64, 1, 1, 0, NULL, pparams, extra), CUDA_ERROR_INVALID_VALUE,
                 "both kernelParams and extra");
        void *bad_extra[] = {(void *)(uintptr_t)7, packed, CU_LAUNCH_PARAM_END};
        VIOLATES(raw(pair.fn, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, bad_extra), CUDA_ERROR_INVALID_VALUE,
                 "not a CU_LAUNCH_PARAM");
    }

    /* limits are checked by gpu_cuda before the driver sees the launch */
    long count_before = real ? 0 : launch_count();
    int viol_before = real ? 0 : violations();
    GpuCudaLaunch big = l;
    big.block[0] = (uint32_t)props->max_threads_per_block * 2;
    st = gpu_cuda_launch(c, &vadd, &big, err, sizeof err);
    CHECK(st == GPU_CUDA_ELIMIT && contains(err, "threads") && contains(err, "'vadd'"), "block too large: %s", err);
    big = l;
    big.block[0] = 1, big.block[2] = (uint32_t)props->max_block_dim[2] + 1;
    st = gpu_cuda_launch(c, &vadd, &big, err, sizeof err);
    CHECK(st == GPU_CUDA_ELIMIT && contains(err, "block dimension z"), "block z: %s", err);
    big = l;
    big.grid[1] = (uint32_t)props->max_grid_dim[1] + 1;
    st = gpu_cuda_launch(c, &vadd, &big, err, sizeof err);
    CHECK(st == GPU_CUDA_ELIMIT && contains(err, "grid dimension y"), "grid y: %s", err);
    big = l;
    big.grid[0] = 0;
    st = gpu_cuda_launch(c, &vadd, &big, err, sizeof err);
    CHECK(st == GPU_CUDA_ELIMIT && contains(err, "at least 1"), "zero grid: %s", err);
    big = l;
    big.shared_bytes = (size_t)props->max_shared_per_block_optin + 1;
    st = gpu_cuda_launch(c, &vadd, &big, err, sizeof err);
    CHECK(st == GPU_CUDA_ELIMIT && contains(err, "shared memory"), "too much shared: %s", err);
    big.shared_bytes = (size_t)props->max_shared_per_block_optin - 512 + 1;
    st = gpu_cuda_launch(c, &pair, &big, err, sizeof err); /* 512 static bytes count too */
    CHECK(st == GPU_CUDA_ELIMIT && contains(err, "512 static"), "static + dynamic shared: %s", err);
    if (!real)
        CHECK(launch_count() == count_before && violations() == viol_before,
              "a launch over the limits reached the driver");
    /* dynamic shared memory beyond the default budget: opted in */
    big = l;
    big.shared_bytes = (size_t)props->max_shared_per_block + 1024;
    OK(gpu_cuda_launch(c, &vadd, &big, err, sizeof err));
    CHECK(vadd.max_dynamic_shared >= (int)big.shared_bytes, "dynamic shared limit not raised");
    OK(gpu_cuda_synchronize(c, err, sizeof err));

    if (!real) {
        /* wrong parameter counts and bad parameters reach the fake, which refuses them */
        void *fewer[] = {&a, &b, &cc, NULL};
        GpuCudaLaunch w = l;
        w.params = fewer;
        VIOLATES(gpu_cuda_launch(c, &vadd, &w, err, sizeof err), CUDA_ERROR_INVALID_VALUE, "NULL at index 3");
        CHECK(contains(err, "CUDA_ERROR_INVALID_VALUE: invalid argument (launching kernel 'vadd')"), "message: %s",
              err);
        void *more[] = {&a, &b, &cc, &n, &n, NULL};
        w.params = more;
        VIOLATES(gpu_cuda_launch(c, &vadd, &w, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "more than the 4 parameters");
        w.params = NULL;
        VIOLATES(gpu_cuda_launch(c, &vadd, &w, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "neither kernelParams nor extra");
        CUdeviceptr gone;
        OK(gpu_cuda_malloc(c, 64, &gone, err, sizeof err));
        OK(gpu_cuda_free(c, gone, err, sizeof err));
        void *stale[] = {&a, &b, &gone, &n, NULL};
        w.params = stale;
        VIOLATES(gpu_cuda_launch(c, &vadd, &w, err, sizeof err), CUDA_ERROR_INVALID_VALUE, "freed memory");
        GpuCudaLaunch on_dead = l;
        on_dead.stream = s;
        OK(gpu_cuda_stream_destroy(c, s, err, sizeof err));
        VIOLATES(gpu_cuda_launch(c, &vadd, &on_dead, err, sizeof err), CUDA_ERROR_INVALID_HANDLE, "destroyed");
        s = NULL;
        /* a non-sticky launch error */
        inject_error(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
        st = gpu_cuda_launch(c, &vadd, &l, err, sizeof err);
        CHECK(st == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES &&
                  contains(err, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch") &&
                  !gpu_cuda_broken(c),
              "out of resources: %s", err);
    }
    if (s)
        OK(gpu_cuda_stream_destroy(c, s, err, sizeof err));

    /* PTX the driver rejects: the message carries the JIT error log */
    char *bad = replaced(ptx, "\n.target sm_80", "\n.target sm_99");
    CUmodule badmod = NULL;
    st = gpu_cuda_module_load_ptx(c, bad, &badmod, NULL, 0, err, sizeof err);
    CHECK(st > 0 && badmod == NULL && contains(err, "CUDA_ERROR_"), "rejected PTX: %d %s", st, err);
    if (real)
        printf("note: the driver rejected PTX for sm_99 with: %s\n", err);
    if (!real)
        CHECK(st == CUDA_ERROR_INVALID_PTX &&
                  contains(err, "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed\nptxas application ptx input, "
                                "line ") &&
                  contains(err, "SM version specified by .target is higher"),
              "rejected PTX message: %s", err);
    free(bad);
    if (!real) {
        bad = replaced(ptx, "\n.version 7.0", "\n.version 9.9");
        st = gpu_cuda_module_load_ptx(c, bad, &badmod, NULL, 0, err, sizeof err);
        CHECK(st == CUDA_ERROR_UNSUPPORTED_PTX_VERSION && contains(err, "Unsupported .version 9.9"), "PTX 9.9: %s",
              err);
        free(bad);
        st = gpu_cuda_module_load_ptx(c, "hello, world", &badmod, NULL, 0, err, sizeof err);
        CHECK(st == CUDA_ERROR_INVALID_PTX && contains(err, "missing .version"), "not PTX: %s", err);
        bad = replaced(ptx, ".param .u64 vadd_param_3", ".param vadd_param_3");
        st = gpu_cuda_module_load_ptx(c, bad, &badmod, NULL, 0, err, sizeof err);
        CHECK(st == CUDA_ERROR_INVALID_PTX && contains(err, "without a type"), "untyped param: %s", err);
        free(bad);
    }

    /* linking with a device library (libcudadevrt.a on a real toolkit) */
    char devrt[1024];
    bool have_devrt = gpu_cuda_find_devrt(cuda_home, devrt, sizeof devrt);
    CHECK(!have_devrt || contains(devrt, "libcudadevrt.a"), "devrt path %s", devrt);
    const char *library = real ? devrt : ptx_path; /* the fake only checks the file is there */
    FILE *probe_file = fopen(library, "rb");
    if (probe_file) {
        fclose(probe_file);
        CUmodule linked = NULL;
        st = gpu_cuda_module_link_ptx(c, ptx, library, &linked, NULL, 0, err, sizeof err);
        if (real && (st == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || st == 209 /* NO_BINARY_FOR_GPU */ ||
                     st == CUDA_ERROR_INVALID_IMAGE)) {
            printf("note: %s does not suit this driver/GPU (toolkit newer than the driver?): %s\n", library, err);
        } else {
            CHECK(st == 0, "linking with %s: %s", library, err);
            GpuCudaFunction lf;
            if (st == 0) {
                OK(gpu_cuda_get_function(c, linked, "vadd", &lf, err, sizeof err));
                OK(gpu_cuda_module_unload(c, linked, err, sizeof err));
            }
        }
    }
    if (!real) {
        CUmodule linked = NULL;
        st = gpu_cuda_module_link_ptx(c, ptx, "/nonexistent/libcudadevrt.a", &linked, NULL, 0, err, sizeof err);
        CHECK(st == CUDA_ERROR_FILE_NOT_FOUND && contains(err, "/nonexistent/libcudadevrt.a"), "link: %s", err);
        /* PTX calling the device runtime (a kernel launching kernels): its
           externs are unresolved without libcudadevrt; load_kernels links it */
        const char *cdp = ".version 7.0\n.target sm_80\n.address_size 64\n"
                          ".extern .func (.param .b32 r) __cudaCDP2LaunchDeviceV2(.param .b64 a, .param .b64 b);\n"
                          ".visible .entry child();\n.visible .entry child()\n{\n\tret;\n}\n";
        st = gpu_cuda_module_load_ptx(c, cdp, &linked, NULL, 0, err, sizeof err);
        CHECK(st == CUDA_ERROR_INVALID_PTX && contains(err, "Unresolved extern function '__cudaCDP2LaunchDeviceV2'"),
              "device runtime PTX loaded unlinked: %s", err);
        if (have_devrt) {
            OK(gpu_cuda_module_load_kernels(c, cdp, cuda_home, &linked, err, sizeof err));
            GpuCudaFunction cf;
            OK(gpu_cuda_get_function(c, linked, "child", &cf, err, sizeof err));
            OK(gpu_cuda_module_unload(c, linked, err, sizeof err));
        }
    }

    OK(gpu_cuda_module_unload(c, mod, err, sizeof err));
    if (!real)
        VIOLATES(gpu_cuda_launch(c, &vadd, &l, err, sizeof err), CUDA_ERROR_INVALID_HANDLE, "unloaded");
    OK(gpu_cuda_free(c, a, err, sizeof err));
    OK(gpu_cuda_free(c, b, err, sizeof err));
    OK(gpu_cuda_free(c, cc, err, sizeof err));
}

/* The fake's PTX reading: comments, module-scope and extern shared arrays,
** .func bodies, aligned byte-array parameters, .maxntid, empty lists. */
static const char features_ptx[] =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "/* a block comment with .entry ghost( .param .u8 x ) { } */\n"
    ".shared .align 4 .b8 module_tile[1024];\n"
    ".shared .align 4 .b8 unused_tile[4096];\n"
    ".extern .shared .align 16 .b8 dyn[];\n"
    ".func (.param .b32 func_retval0) helper(.param .b32 helper_param_0)\n"
    "{\n\tst.param.b32 [func_retval0+0], 0;\n\tret;\n}\n"
    ".visible .entry limited(.param .u32 limited_param_0, // a line comment )\n"
    "\t.param .align 16 .b8 limited_param_1[32]) .maxntid 128, 1, 1\n"
    "{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, module_tile;\n\tret;\n}\n"
    ".visible .entry noparams()\n"
    "{\n\tret;\n}\n";

static void test_ptx_features(GpuCuda *c)
{
    CUmodule mod = NULL;
    OK(gpu_cuda_module_load_ptx(c, features_ptx, &mod, NULL, 0, err, sizeof err));
    if (!mod)
        return;
    GpuCudaFunction limited, noparams, ghost;
    OK(gpu_cuda_get_function(c, mod, "limited", &limited, err, sizeof err));
    OK(gpu_cuda_get_function(c, mod, "noparams", &noparams, err, sizeof err));
    CHECK(gpu_cuda_get_function(c, mod, "ghost", &ghost, err, sizeof err) == CUDA_ERROR_NOT_FOUND,
          "an .entry inside a comment was parsed");
    CHECK(gpu_cuda_get_function(c, mod, "helper", &ghost, err, sizeof err) == CUDA_ERROR_NOT_FOUND,
          "a .func is not a kernel");
    CHECK(limited.max_threads == 128 && limited.static_shared == 1024 && noparams.static_shared == 0,
          "limited: %d threads, %d shared", limited.max_threads, limited.static_shared);
    unsigned value = 0xdeadbeef;
    unsigned char blob[32];
    for (int i = 0; i < 32; i++)
        blob[i] = (unsigned char)(i * 7);
    void *params[] = {&value, blob, NULL};
    GpuCudaLaunch l = {{2, 1, 1}, {256, 1, 1}, 0, NULL, params};
    int st = gpu_cuda_launch(c, &limited, &l, err, sizeof err);
    CHECK(st == GPU_CUDA_ELIMIT && contains(err, "this kernel allows at most 128"), "maxntid: %s", err);
    l.block[0] = 128;
    OK(gpu_cuda_launch(c, &limited, &l, err, sizeof err));
    unsigned char expect[36];
    memcpy(expect, &value, 4), memcpy(expect + 4, blob, 32);
    static const unsigned sizes[] = {4, 32};
    check_last_launch("limited", expect, 36, 2, sizes, 2, 128, 0, NULL, __LINE__);
    GpuCudaLaunch none = {{1, 1, 1}, {1, 1, 1}, 0, NULL, NULL};
    OK(gpu_cuda_launch(c, &noparams, &none, err, sizeof err));
    void *empty[] = {NULL};
    none.params = empty;
    OK(gpu_cuda_launch(c, &noparams, &none, err, sizeof err));
    check_last_launch("noparams", "", 0, 0, NULL, 1, 1, 0, NULL, __LINE__);
    OK(gpu_cuda_module_unload(c, mod, err, sizeof err));
}

/* Several threads, each with its own handle (as several VMs would have),
** load, copy and launch at once: each call must find its context current. */
typedef struct ThreadJob {
    const char *ptx;
    int index;
    int failures;
    char message[512];
} ThreadJob;

static void *thread_main(void *arg)
{
    ThreadJob *job = arg;
    char e[GPU_CUDA_ERRSIZE];
    int st = 0;
    GpuCuda *c = gpu_cuda_open(libcuda, 0, &st, e, sizeof e);
    CUmodule mod = NULL;
    GpuCudaFunction vadd;
    CUdeviceptr a = 0, out = 0;
    enum { N = 256 };
    float host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)(i + job->index);
    if (c)
        st = gpu_cuda_module_load_ptx(c, job->ptx, &mod, NULL, 0, e, sizeof e);
    if (!st && c)
        st = gpu_cuda_get_function(c, mod, "vadd", &vadd, e, sizeof e);
    if (!st && c)
        st = gpu_cuda_malloc(c, sizeof host, &a, e, sizeof e);
    if (!st && c)
        st = gpu_cuda_malloc(c, sizeof host, &out, e, sizeof e);
    for (int round = 0; !st && c && round < 50; round++) {
        long long n = N;
        void *params[] = {&a, &a, &out, &n, NULL};
        GpuCudaLaunch l = {{1, 1, 1}, {N, 1, 1}, 0, NULL, params};
        st = gpu_cuda_memcpy_htod(c, a, host, sizeof host, e, sizeof e);
        if (!st)
            st = gpu_cuda_launch(c, &vadd, &l, e, sizeof e);
        if (!st)
            st = gpu_cuda_memcpy_dtoh(c, back, a, sizeof back, e, sizeof e);
        if (!st && memcmp(back, host, sizeof host) != 0)
            st = -100, snprintf(e, sizeof e, "thread %d read back other data", job->index);
    }
    if (!st && real) {
        if (!(st = gpu_cuda_memcpy_dtoh(c, back, out, sizeof back, e, sizeof e)))
            for (int i = 0; i < N && !st; i++)
                if (back[i] != 2 * host[i])
                    st = -101, snprintf(e, sizeof e, "thread %d: vadd wrong at %d", job->index, i);
    }
    if (c) {
        gpu_cuda_free(c, a, NULL, 0);
        gpu_cuda_free(c, out, NULL, 0);
        gpu_cuda_module_unload(c, mod, NULL, 0);
        gpu_cuda_close(c);
    }
    if (st || !c) {
        job->failures++;
        snprintf(job->message, sizeof job->message, "%.500s", e);
    }
    return NULL;
}

static void test_threads(const char *ptx)
{
    enum { THREADS = 4 };
    pthread_t threads[THREADS];
    ThreadJob jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (ThreadJob){ptx, i, 0, ""};
        CHECK(pthread_create(&threads[i], NULL, thread_main, &jobs[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(jobs[i].failures == 0, "thread %d: %s", i, jobs[i].message);
    }
}

/* Two fake devices: each handle has its own context, and memory of one
** context is refused in the other. */
static void test_two_devices(GpuCuda *c)
{
    setenv("FAKE_CUDA_DEVICES", "2", 1);
    int status = 0, count = 0;
    OK(gpu_cuda_device_count(libcuda, &count, err, sizeof err));
    CHECK(count == 2, "two devices: %d", count);
    GpuCuda *c1 = gpu_cuda_open(libcuda, 1, &status, err, sizeof err);
    CHECK(c1 && gpu_cuda_props(c1)->ordinal == 1 && gpu_cuda_context(c1) != gpu_cuda_context(c), "device 1");
    if (c1) {
        CUdeviceptr p1 = 0, p0 = 0;
        OK(gpu_cuda_malloc(c1, 64, &p1, err, sizeof err));
        OK(gpu_cuda_malloc(c, 64, &p0, err, sizeof err));
        char buf[64] = "x";
        OK(gpu_cuda_memcpy_htod(c1, p1, buf, 64, err, sizeof err)); /* switches the current context */
        VIOLATES(gpu_cuda_memcpy_htod(c, p1, buf, 64, err, sizeof err), CUDA_ERROR_INVALID_VALUE,
                 "another context");
        OK(gpu_cuda_memcpy_htod(c, p0, buf, 64, err, sizeof err));
        OK(gpu_cuda_free(c1, p1, err, sizeof err));
        OK(gpu_cuda_free(c, p0, err, sizeof err));
        gpu_cuda_close(c1);
    }
    unsetenv("FAKE_CUDA_DEVICES");
}

/* A sticky error: the fake injects one; on a GPU, vadd writes to address 16. */
static void test_sticky(GpuCuda *c, const char *ptx)
{
    CUmodule mod = NULL;
    GpuCudaFunction vadd;
    OK(gpu_cuda_module_load_ptx(c, ptx, &mod, NULL, 0, err, sizeof err));
    OK(gpu_cuda_get_function(c, mod, "vadd", &vadd, err, sizeof err));
    CUdeviceptr a = 0, keep = 0;
    OK(gpu_cuda_malloc(c, 4096, &a, err, sizeof err));
    OK(gpu_cuda_malloc(c, 64, &keep, err, sizeof err));
    CUdeviceptr wild = real ? 16 : a;
    long long n = 1024;
    void *params[] = {&a, &a, &wild, &n, NULL};
    GpuCudaLaunch l = {{4, 1, 1}, {256, 1, 1}, 0, NULL, params};
    if (!real)
        inject_error(CUDA_ERROR_ILLEGAL_ADDRESS);
    OK(gpu_cuda_launch(c, &vadd, &l, err, sizeof err)); /* the fault shows at the next synchronization */
    int st = gpu_cuda_synchronize(c, err, sizeof err);
    CHECK(st == CUDA_ERROR_ILLEGAL_ADDRESS || (real && gpu_cuda_is_sticky(st)), "illegal address: %d %s", st, err);
    CHECK(contains(err, "sticky") && contains(err, "reset"), "sticky message: %s", err);
    CHECK(gpu_cuda_broken(c) == st, "handle not marked broken");
    CUdeviceptr more = 0;
    st = gpu_cuda_malloc(c, 64, &more, err, sizeof err);
    CHECK(gpu_cuda_is_sticky(st), "calls after a sticky error must fail: %d", st);
    char hello[6] = "hello", back[6] = "";
    if (real) {
        /* the driver API documents sticky errors as fatal to the process;
           some drivers recover after a primary-context reset (the H200 with
           driver 580 does not): either works, or the message says restart */
        st = gpu_cuda_reset(c, err, sizeof err);
        if (st) {
            CHECK(gpu_cuda_is_sticky(st) && contains(err, "restart the program"), "reset failure message: %s", err);
            CHECK(gpu_cuda_broken(c), "a failed reset leaves the handle broken");
            printf("note: this driver cannot recover from a sticky error in-process: %s\n", err);
            return;
        }
        CHECK(!gpu_cuda_broken(c), "still broken after reset");
        st = gpu_cuda_malloc(c, 64, &more, err, sizeof err);
        if (!st)
            st = gpu_cuda_memcpy_htod(c, more, hello, 6, err, sizeof err);
        if (!st)
            st = gpu_cuda_memcpy_dtoh(c, back, more, 6, err, sizeof err);
        printf("note: after a sticky error and gpu_cuda_reset the device %s\n",
               st == 0 && strcmp(back, "hello") == 0 ? "works again" : err);
        if (st == 0)
            OK(gpu_cuda_free(c, more, err, sizeof err));
        return;
    }
    OK(gpu_cuda_reset(c, err, sizeof err));
    CHECK(!gpu_cuda_broken(c), "still broken after reset");
    OK(gpu_cuda_malloc(c, 64, &more, err, sizeof err));
    OK(gpu_cuda_memcpy_htod(c, more, hello, 6, err, sizeof err));
    OK(gpu_cuda_memcpy_dtoh(c, back, more, 6, err, sizeof err));
    CHECK(strcmp(back, "hello") == 0, "device unusable after reset");
    if (!real) {
        VIOLATES(gpu_cuda_memcpy_dtoh(c, back, keep, 6, err, sizeof err), CUDA_ERROR_INVALID_VALUE, "freed");
        CHECK(live_allocations() == 1, "reset must free the context's memory (%d live)", live_allocations());
    }
    OK(gpu_cuda_free(c, more, err, sizeof err));
}

/* Extra PTX files (e.g. what gpy's compiler produced): each must load and
** each of its .entry kernels must be found. */
static void test_extra_ptx(GpuCuda *c, int n, char **paths)
{
    for (int i = 0; i < n; i++) {
        char *text = read_file(paths[i]);
        CHECK(text != NULL, "cannot read %s", paths[i]);
        if (!text)
            continue;
        CUmodule mod = NULL;
        int st = gpu_cuda_module_load_ptx(c, text, &mod, NULL, 0, err, sizeof err);
        CHECK(st == 0, "loading %s: %s", paths[i], err);
        for (const char *e = text; st == 0 && (e = strstr(e, ".entry ")) != NULL; e += 7) {
            char name[1024];
            if (sscanf(e + 7, " %1023[A-Za-z0-9_$]", name) != 1)
                continue;
            GpuCudaFunction f;
            CHECK(gpu_cuda_get_function(c, mod, name, &f, err, sizeof err) == 0, "%s: kernel %s: %s", paths[i],
                  name, err);
        }
        if (mod)
            OK(gpu_cuda_module_unload(c, mod, err, sizeof err));
        free(text);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cuda_driver_test VADD_PTX [MORE.ptx...] (GPY_LIBCUDA=fake_libcuda.so, or "
                        "GPY_CUDA_TEST_REAL=1)\n");
        return 2;
    }
    real = getenv("GPY_CUDA_TEST_REAL") && strcmp(getenv("GPY_CUDA_TEST_REAL"), "1") == 0;
    libcuda = getenv("GPY_LIBCUDA");
    cuda_home = getenv("GPY_CUDA_HOME") ? getenv("GPY_CUDA_HOME") : getenv("CUDA_HOME");
    char *ptx = read_file(argv[1]);
    if (!ptx) {
        fprintf(stderr, "cuda_driver_test: cannot read %s\n", argv[1]);
        return 2;
    }
    test_missing_library();
    int count = 0;
    if (gpu_cuda_device_count(libcuda, &count, err, sizeof err) != 0 || count == 0) {
        fprintf(stderr, "cuda_driver_test: no usable driver: %s\n", err);
        return 1;
    }
    if (!real) {
        load_fake_functions();
        if (!launch_count || !get_launch || !violations || !last_violation || !inject_error || !live_bytes ||
            !live_allocations) {
            fprintf(stderr, "cuda_driver_test: %s is not the fake driver (set GPY_CUDA_TEST_REAL=1 for a real one)\n",
                    gpu_cuda_library_path(libcuda));
            return 1;
        }
    }
    test_errors();
    test_devices();
    int status = 0;
    GpuCuda *c = gpu_cuda_open(libcuda, 0, &status, err, sizeof err);
    CHECK(c != NULL, "open(0): %d", status);
    if (c) {
        /* a second handle on the same device (another VM) shares the primary context */
        GpuCuda *other = gpu_cuda_open(libcuda, 0, &status, err, sizeof err);
        CHECK(other && gpu_cuda_context(other) == gpu_cuda_context(c), "second handle");
        test_extra_ptx(c, argc - 2, argv + 2);
        test_memory(c);
        test_events(c);
        test_modules(c, ptx, argv[1]);
        if (!real) {
            test_ptx_features(c);
            test_two_devices(c);
        }
        gpu_cuda_close(other);
        test_threads(ptx);
        CUdeviceptr still = 0; /* the first handle survives the second's close */
        OK(gpu_cuda_malloc(c, 16, &still, err, sizeof err));
        OK(gpu_cuda_free(c, still, err, sizeof err));
        test_sticky(c, ptx);
        gpu_cuda_close(c);
    }
    if (!real) {
        CHECK(live_bytes() == 0, "device memory left after close: %zu", live_bytes());
        CHECK(violations() == expected_violations, "%d contract violations, %d provoked on purpose; last: %s",
              violations(), expected_violations, last_violation());
    }
    free(ptx);
    if (failed) {
        fprintf(stderr, "cuda_driver_test: %d checks failed, %d passed\n", failed, passed);
        return 1;
    }
    printf("cuda_driver_test: %d checks passed%s\n", passed, real ? " (real driver)" : "");
    return 0;
}
