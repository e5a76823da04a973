/*
** cuda_driver.c — the CUDA driver loaded with dlopen: the process-wide
** entry-point table, error messages, device selection and properties,
** device/host/managed memory and copies, streams and events. Modules and
** launches are in cuda_module.c. See cuda_driver.h for the conventions.
*/
#include "cuda_priv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------- the library table
** One CudaLib per distinct library path (normally just libcuda.so.1; tests
** may point GPY_LIBCUDA elsewhere). Loaded under lib_lock, never unloaded.
** A failed load is not remembered, so a later attempt can succeed. */
#define MAX_LIBS 4
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static CudaLib *libs[MAX_LIBS];
static int nlibs;

typedef struct EntrySpec {
    const char *symbol;
    size_t offset;
    bool required;
} EntrySpec;

static const EntrySpec entry_specs[] = {
#define GPU_CUDA_SPEC(field, sym, req) {sym, offsetof(CudaLib, field), req},
    GPU_CUDA_ENTRIES(GPU_CUDA_SPEC)
#undef GPU_CUDA_SPEC
};

const char *gpu_cuda_library_path(const char *libcuda)
{
    return libcuda && *libcuda ? libcuda : "libcuda.so.1";
}

int gpu_cuda_refuse(int status, char *err, size_t errsize, const char *fmt, ...)
{
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* dlopen + dlsym of every entry; NULL with a message when the file is
** missing or lacks a required entry point (configured: the path was given,
** not the default). Called with lib_lock held. */
static CudaLib *load_library(const char *path, bool configured, char *err, size_t errsize)
{
    if (strlen(path) >= sizeof(((CudaLib *)0)->path)) {
        gpu_cuda_refuse(0, err, errsize, "CUDA driver path too long: %.100s...", path);
        return NULL;
    }
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        gpu_cuda_refuse(0, err, errsize, "%s not found: %s%s", path, why ? why : "dlopen failed",
                        configured ? " (from GPY_LIBCUDA)"
                            : " (is the NVIDIA driver installed? GPY_LIBCUDA names another file)");
        return NULL;
    }
    CudaLib *lib = calloc(1, sizeof *lib);
    if (!lib) {
        dlclose(dl);
        gpu_cuda_refuse(0, err, errsize, "out of host memory loading the CUDA driver");
        return NULL;
    }
    snprintf(lib->path, sizeof lib->path, "%s", path);
    lib->dl = dl;
    for (size_t i = 0; i < sizeof entry_specs / sizeof entry_specs[0]; i++) {
        void *sym = dlsym(dl, entry_specs[i].symbol);
        if (!sym && entry_specs[i].required) {
            gpu_cuda_refuse(0, err, errsize,
                            "CUDA driver %s lacks the entry point %s (driver too old? gpy needs CUDA 11 or newer)",
                            path, entry_specs[i].symbol);
            free(lib);
            dlclose(dl);
            return NULL;
        }
        memcpy((char *)lib + entry_specs[i].offset, &sym, sizeof sym);
    }
    return lib;
}

/* Names and texts for when the driver cannot give them (no library yet, or
** a stub library whose cuGetErrorName fails too); the texts are the driver's. */
typedef struct KnownError {
    int code;
    const char *name, *text;
} KnownError;
static const KnownError known_errors[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

/* Formats "NAME: text" for a CUresult using the driver's own tables. */
static void describe_with(const CudaLib *lib, int status, char *buf, size_t size)
{
    if (!buf || !size)
        return;
    if (status < 0) {
        const char *what = status == GPU_CUDA_ENOLIB   ? "CUDA driver not available"
                           : status == GPU_CUDA_ELIMIT ? "launch configuration exceeds the device's limits"
                           : status == GPU_CUDA_EARG   ? "invalid argument"
                           : status == GPU_CUDA_ENOMEM ? "out of host memory"
                                                       : "unknown gpy CUDA error";
        snprintf(buf, size, "%s", what);
        return;
    }
    const char *name = NULL, *text = NULL;
    if (lib) {
        if (lib->cuGetErrorName(status, &name) != CUDA_SUCCESS)
            name = NULL;
        if (lib->cuGetErrorString(status, &text) != CUDA_SUCCESS)
            text = NULL;
    }
    for (size_t i = 0; !name && i < sizeof known_errors / sizeof known_errors[0]; i++)
        if (known_errors[i].code == status)
            name = known_errors[i].name, text = known_errors[i].text;
    if (name && text)
        snprintf(buf, size, "%s: %s", name, text);
    else if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "CUDA error %d", status);
}

/* The library at libcuda (NULL: the default), loaded and cuInit'ed. On
** failure returns the status (GPU_CUDA_ENOLIB or cuInit's CUresult) and a
** message; *out is still set when the library loaded but cuInit failed. */
static int get_library(const char *libcuda, const CudaLib **out, char *err, size_t errsize)
{
    const char *path = gpu_cuda_library_path(libcuda);
    *out = NULL;
    pthread_mutex_lock(&lib_lock);
    CudaLib *lib = NULL;
    for (int i = 0; i < nlibs; i++)
        if (strcmp(libs[i]->path, path) == 0)
            lib = libs[i];
    if (!lib) {
        if (nlibs == MAX_LIBS) {
            pthread_mutex_unlock(&lib_lock);
            return gpu_cuda_refuse(GPU_CUDA_ENOLIB, err, errsize, "too many different CUDA driver libraries loaded");
        }
        lib = load_library(path, path == libcuda, err, errsize);
        if (!lib) {
            pthread_mutex_unlock(&lib_lock);
            return GPU_CUDA_ENOLIB;
        }
        libs[nlibs++] = lib;
    }
    CUresult r = CUDA_SUCCESS;
    if (!lib->initialized) {
        r = lib->cuInit(0);
        if (r == CUDA_SUCCESS)
            lib->initialized = true;
    }
    pthread_mutex_unlock(&lib_lock);
    *out = lib;
    if (r != CUDA_SUCCESS) {
        char what[256];
        describe_with(lib, r, what, sizeof what);
        if (r == CUDA_ERROR_NO_DEVICE)
            return gpu_cuda_refuse(r, err, errsize, "no CUDA device (%s)", what);
        if (r == CUDA_ERROR_STUB_LIBRARY)
            return gpu_cuda_refuse(r, err, errsize,
                                   "CUDA driver initialization failed: %s (%s is the toolkit's stub, not the NVIDIA "
                                   "driver)",
                                   what, path);
        return gpu_cuda_refuse(r, err, errsize, "CUDA driver initialization failed: %s", what);
    }
    return 0;
}

void gpu_cuda_describe(int status, char *buf, size_t size)
{
    pthread_mutex_lock(&lib_lock);
    const CudaLib *lib = nlibs ? libs[0] : NULL;
    pthread_mutex_unlock(&lib_lock);
    describe_with(lib, status, buf, size);
}

bool gpu_cuda_is_sticky(int status)
{
    switch (status) {
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_EXTERNAL_DEVICE:
        return true;
    default:
        return false;
    }
}

int gpu_cuda_fail(GpuCuda *c, CUresult r, const char *context, char *err, size_t errsize)
{
    bool sticky = gpu_cuda_is_sticky(r);
    if (sticky && c)
        c->broken = r;
    if (err && errsize) {
        describe_with(c ? c->lib : NULL, r, err, errsize);
        size_t len = strlen(err);
        if (context && len < errsize)
            len += (size_t)snprintf(err + len, errsize - len, " (%s)", context);
        if (sticky && len < errsize)
            snprintf(err + len, errsize - len, "%s", GPU_CUDA_STICKY_NOTE);
    }
    return r;
}

int gpu_cuda_make_current(GpuCuda *c, char *err, size_t errsize)
{
    CUcontext cur = NULL;
    CUresult r = c->lib->cuCtxGetCurrent(&cur);
    if (r == CUDA_SUCCESS && cur != c->ctx)
        r = c->lib->cuCtxSetCurrent(c->ctx);
    return r == CUDA_SUCCESS ? 0 : gpu_cuda_fail(c, r, "making the context current", err, errsize);
}

/* ------------------------------------------------------------ devices */

int gpu_cuda_device_count(const char *libcuda, int *count, char *err, size_t errsize)
{
    const CudaLib *lib;
    *count = 0;
    int st = get_library(libcuda, &lib, err, errsize);
    if (st == CUDA_ERROR_NO_DEVICE)
        return 0;
    if (st)
        return st;
    CUresult r = lib->cuDeviceGetCount(count);
    if (r != CUDA_SUCCESS) {
        *count = 0;
        describe_with(lib, r, err, errsize);
        return r;
    }
    return 0;
}

int gpu_cuda_driver_version(const char *libcuda, int *version, char *err, size_t errsize)
{
    const CudaLib *lib;
    *version = 0;
    int st = get_library(libcuda, &lib, err, errsize);
    if (st && !lib)
        return st;
    CUresult r = lib->cuDriverGetVersion(version); /* works without cuInit */
    if (r != CUDA_SUCCESS) {
        describe_with(lib, r, err, errsize);
        return r;
    }
    return 0;
}

/* Reads every property; only the ones launch checks rely on are required
** (an older driver may lack the rest, which stay 0). */
static int read_props(const CudaLib *lib, CUdevice dev, int ordinal, GpuCudaProps *p, char *err, size_t errsize)
{
    memset(p, 0, sizeof *p);
    p->ordinal = ordinal;
    CUresult r = lib->cuDeviceGetName(p->name, (int)sizeof p->name - 1, dev);
    if (r == CUDA_SUCCESS)
        r = lib->cuDeviceTotalMem(&p->total_memory, dev);
    const struct {
        CUdevice_attribute attr;
        int *dst;
        bool required;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &p->cc_major, true},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &p->cc_minor, true},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &p->sm_count, true},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &p->max_threads_per_block, true},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &p->max_block_dim[0], true},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &p->max_block_dim[1], true},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &p->max_block_dim[2], true},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &p->max_grid_dim[0], true},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &p->max_grid_dim[1], true},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &p->max_grid_dim[2], true},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &p->max_shared_per_block, true},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &p->max_shared_per_block_optin, false},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &p->warp_size, true},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &p->max_threads_per_sm, false},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &p->max_registers_per_block, false},
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &p->clock_khz, false},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &p->memory_clock_khz, false},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &p->memory_bus_width, false},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &p->l2_cache_bytes, false},
        {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &p->pci_domain, false},
        {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &p->pci_bus, false},
        {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &p->pci_device, false},
    };
    for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof attrs / sizeof attrs[0]; i++) {
        CUresult ar = lib->cuDeviceGetAttribute(attrs[i].dst, attrs[i].attr, dev);
        if (ar != CUDA_SUCCESS) {
            *attrs[i].dst = 0;
            if (attrs[i].required)
                r = ar;
        }
    }
    const struct {
        CUdevice_attribute attr;
        bool *dst;
    } flags[] = {
        {CU_DEVICE_ATTRIBUTE_INTEGRATED, &p->integrated},
        {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, &p->can_map_host},
        {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, &p->unified_addressing},
        {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &p->managed_memory},
        {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &p->concurrent_managed_access},
    };
    for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof flags / sizeof flags[0]; i++) {
        int v = 0;
        *flags[i].dst = lib->cuDeviceGetAttribute(&v, flags[i].attr, dev) == CUDA_SUCCESS && v != 0;
    }
    if (r != CUDA_SUCCESS) {
        char what[256];
        describe_with(lib, r, what, sizeof what);
        return gpu_cuda_refuse(r, err, errsize, "reading the properties of CUDA device %d: %s", ordinal, what);
    }
    p->name[sizeof p->name - 1] = '\0';
    if (p->max_shared_per_block_optin < p->max_shared_per_block)
        p->max_shared_per_block_optin = p->max_shared_per_block;
    return 0;
}

/* The CUdevice of an ordinal, with "no device" / "no such device" messages. */
static int lookup_device(const CudaLib *lib, int ordinal, CUdevice *dev, char *err, size_t errsize)
{
    int count = 0;
    CUresult r = lib->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
        char what[256];
        describe_with(lib, r, what, sizeof what);
        return gpu_cuda_refuse(r, err, errsize, "counting CUDA devices: %s", what);
    }
    if (count == 0)
        return gpu_cuda_refuse(CUDA_ERROR_NO_DEVICE, err, errsize, "no CUDA device");
    if (ordinal < 0 || ordinal >= count)
        return gpu_cuda_refuse(CUDA_ERROR_INVALID_DEVICE, err, errsize, "CUDA device %d does not exist (%d device%s)",
                               ordinal, count, count == 1 ? "" : "s");
    r = lib->cuDeviceGet(dev, ordinal);
    if (r != CUDA_SUCCESS) {
        char what[256];
        describe_with(lib, r, what, sizeof what);
        return gpu_cuda_refuse(r, err, errsize, "CUDA device %d: %s", ordinal, what);
    }
    return 0;
}

int gpu_cuda_device_props(const char *libcuda, int ordinal, GpuCudaProps *props, char *err, size_t errsize)
{
    const CudaLib *lib;
    CUdevice dev;
    int st = get_library(libcuda, &lib, err, errsize);
    if (!st)
        st = lookup_device(lib, ordinal, &dev, err, errsize);
    if (!st)
        st = read_props(lib, dev, ordinal, props, err, errsize);
    return st;
}

GpuCuda *gpu_cuda_open(const char *libcuda, int ordinal, int *status, char *err, size_t errsize)
{
    const CudaLib *lib;
    CUdevice dev = 0;
    GpuCuda *c = NULL;
    int st = get_library(libcuda, &lib, err, errsize);
    if (!st)
        st = lookup_device(lib, ordinal, &dev, err, errsize);
    if (!st) {
        c = calloc(1, sizeof *c);
        if (!c)
            st = gpu_cuda_refuse(GPU_CUDA_ENOMEM, err, errsize, "out of host memory opening CUDA device %d", ordinal);
    }
    if (!st) {
        c->lib = lib;
        c->dev = dev;
        st = read_props(lib, dev, ordinal, &c->props, err, errsize);
    }
    if (!st) {
        CUresult r = lib->cuDevicePrimaryCtxRetain(&c->ctx, dev);
        if (r != CUDA_SUCCESS) {
            c->ctx = NULL;
            st = gpu_cuda_fail(c, r, "retaining the device's primary context", err, errsize);
        }
    }
    if (!st)
        st = gpu_cuda_make_current(c, err, errsize);
    if (st) {
        if (c && c->ctx)
            lib->cuDevicePrimaryCtxRelease(dev);
        free(c);
        c = NULL;
    }
    if (status)
        *status = st;
    return c;
}

void gpu_cuda_close(GpuCuda *c)
{
    if (!c)
        return;
    CUcontext cur = NULL;
    if (c->lib->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c->ctx)
        c->lib->cuCtxSetCurrent(NULL);
    c->lib->cuDevicePrimaryCtxRelease(c->dev);
    free(c);
}

const GpuCudaProps *gpu_cuda_props(const GpuCuda *c) { return &c->props; }
CUcontext gpu_cuda_context(const GpuCuda *c) { return c->ctx; }
int gpu_cuda_broken(const GpuCuda *c) { return c->broken; }

int gpu_cuda_reset(GpuCuda *c, char *err, size_t errsize)
{
    const CudaLib *lib = c->lib;
    CUcontext cur = NULL;
    if (lib->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c->ctx)
        lib->cuCtxSetCurrent(NULL);
    CUresult r = lib->cuDevicePrimaryCtxReset(c->dev);
    if (r != CUDA_SUCCESS)
        return gpu_cuda_fail(c, r, "resetting the device's primary context", err, errsize);
    /* take the (re-initialized) primary context afresh: its handle may
       change. Retain before releasing our old reference so the count never
       drops to zero in between. */
    CUcontext fresh = NULL;
    r = lib->cuDevicePrimaryCtxRetain(&fresh, c->dev);
    if (r != CUDA_SUCCESS) {
        /* Seen on an H200 with driver 580: after an illegal address the
           reset succeeds but the context cannot be made again. The driver
           API documents these errors as fatal to the process. */
        if (!gpu_cuda_is_sticky(r))
            return gpu_cuda_fail(c, r, "retaining the device's primary context after a reset", err, errsize);
        c->broken = r;
        if (err && errsize) {
            describe_with(lib, r, err, errsize);
            size_t len = strlen(err);
            if (len < errsize)
                snprintf(err + len, errsize - len, " (the CUDA driver cannot clear this error inside a running "
                         "process: restart the program)");
        }
        return r;
    }
    lib->cuDevicePrimaryCtxRelease(c->dev);
    c->ctx = fresh;
    c->broken = 0;
    return gpu_cuda_make_current(c, err, errsize);
}

/* Kernels' printf output reaches the host at synchronizing calls; flushing
** what the program printed first keeps the two streams in program order
** whether the driver writes through stdio or straight to the descriptor. */
static void flush_host_output(void) { fflush(stdout); }

void gpu_cuda_set_interrupt(GpuCuda *c, const atomic_int *flag)
{
    c->interrupt = flag;
}

/* Waits for stream s (e NULL) or event e by polling, so that an interrupt
** request can end the wait: a blocking synchronize cannot be cut short.
** The sleep grows from 20 µs to 1 ms: a short wait costs little latency, a
** long one little CPU. Returns 0, the driver's failure, or GPU_CUDA_EINTR. */
static int poll_until_done(GpuCuda *c, CUstream s, CUevent e, char *err, size_t errsize)
{
    long nap_ns = 20000;
    for (;;) {
        CUresult r = e ? c->lib->cuEventQuery(e) : c->lib->cuStreamQuery(s);
        if (r != CUDA_ERROR_NOT_READY)
            return r == CUDA_SUCCESS ? 0 : gpu_cuda_fail(c, r, NULL, err, errsize);
        if (atomic_load_explicit(c->interrupt, memory_order_relaxed))
            return gpu_cuda_refuse(GPU_CUDA_EINTR, err, errsize, "interrupted while waiting for the device");
        struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
        if (nap_ns < 1000000)
            nap_ns *= 2;
    }
}

/* The interruptible part of a context synchronize: an event recorded on the
** legacy default stream completes after all earlier work of every blocking
** stream. */
static int poll_context(GpuCuda *c, char *err, size_t errsize)
{
    CUevent e = NULL;
    if (c->lib->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        return 0; /* fall back to the driver's blocking wait */
    int st = 0;
    if (c->lib->cuEventRecord(e, NULL) == CUDA_SUCCESS)
        st = poll_until_done(c, NULL, e, err, errsize);
    c->lib->cuEventDestroy(e);
    return st;
}

int gpu_cuda_synchronize(GpuCuda *c, char *err, size_t errsize)
{
    flush_host_output();
    int st = gpu_cuda_make_current(c, err, errsize);
    if (st)
        return st;
    if (c->interrupt && (st = poll_context(c, err, errsize)))
        return st;
    CUresult r = c->lib->cuCtxSynchronize();
    return r ? gpu_cuda_fail(c, r, NULL, err, errsize) : 0;
}

/* ------------------------------------------------------------- memory
** Each wrapper: make the context current, call, turn a failure into the
** message. CALL is that pattern for the plain cases. */
#define CALL(c, context, expr)                                                        \
    do {                                                                              \
        int st_ = gpu_cuda_make_current((c), err, errsize);                           \
        if (st_)                                                                      \
            return st_;                                                               \
        CUresult r_ = (expr);                                                         \
        return r_ == CUDA_SUCCESS ? 0 : gpu_cuda_fail((c), r_, (context), err, errsize); \
    } while (0)

int gpu_cuda_mem_info(GpuCuda *c, size_t *free_bytes, size_t *total_bytes, char *err, size_t errsize)
{
    CALL(c, NULL, c->lib->cuMemGetInfo(free_bytes, total_bytes));
}

int gpu_cuda_malloc(GpuCuda *c, size_t bytes, CUdeviceptr *out, char *err, size_t errsize)
{
    *out = 0;
    if (bytes == 0)
        return 0;
    char context[80];
    snprintf(context, sizeof context, "allocating %zu bytes of device memory", bytes);
    CALL(c, context, c->lib->cuMemAlloc(out, bytes));
}

int gpu_cuda_free(GpuCuda *c, CUdeviceptr p, char *err, size_t errsize)
{
    if (p == 0)
        return 0;
    CALL(c, "freeing device memory", c->lib->cuMemFree(p));
}

int gpu_cuda_host_alloc(GpuCuda *c, size_t bytes, bool mapped, void **out, char *err, size_t errsize)
{
    *out = NULL;
    if (bytes == 0)
        return 0;
    char context[80];
    snprintf(context, sizeof context, "allocating %zu bytes of pinned host memory", bytes);
    CALL(c, context,
         c->lib->cuMemHostAlloc(out, bytes, CU_MEMHOSTALLOC_PORTABLE | (mapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0)));
}

int gpu_cuda_host_free(GpuCuda *c, void *p, char *err, size_t errsize)
{
    if (!p)
        return 0;
    CALL(c, "freeing pinned host memory", c->lib->cuMemFreeHost(p));
}

int gpu_cuda_host_device_pointer(GpuCuda *c, void *host, CUdeviceptr *out, char *err, size_t errsize)
{
    *out = 0;
    if (!host)
        return 0;
    CALL(c, "device address of mapped host memory", c->lib->cuMemHostGetDevicePointer(out, host, 0));
}

int gpu_cuda_managed_alloc(GpuCuda *c, size_t bytes, CUdeviceptr *out, char *err, size_t errsize)
{
    *out = 0;
    if (bytes == 0)
        return 0;
    char context[80];
    snprintf(context, sizeof context, "allocating %zu bytes of managed memory", bytes);
    CALL(c, context, c->lib->cuMemAllocManaged(out, bytes, CU_MEM_ATTACH_GLOBAL));
}

/* A zero-byte copy or memset is a no-op (the driver would accept it, but
** NULL/0 addresses of empty arrays need no checks). */
#define COPY(c, n, context, expr) \
    do {                          \
        if ((n) == 0)             \
            return 0;             \
        CALL(c, context, expr);   \
    } while (0)

int gpu_cuda_memcpy_htod(GpuCuda *c, CUdeviceptr dst, const void *src, size_t n, char *err, size_t errsize)
{
    COPY(c, n, "copying host to device", c->lib->cuMemcpyHtoD(dst, src, n));
}

int gpu_cuda_memcpy_dtoh(GpuCuda *c, void *dst, CUdeviceptr src, size_t n, char *err, size_t errsize)
{
    flush_host_output();
    COPY(c, n, "copying device to host", c->lib->cuMemcpyDtoH(dst, src, n));
}

int gpu_cuda_memcpy_dtod(GpuCuda *c, CUdeviceptr dst, CUdeviceptr src, size_t n, char *err, size_t errsize)
{
    COPY(c, n, "copying device to device", c->lib->cuMemcpyDtoD(dst, src, n));
}

int gpu_cuda_memset(GpuCuda *c, CUdeviceptr dst, unsigned char value, size_t n, char *err, size_t errsize)
{
    COPY(c, n, "setting device memory", c->lib->cuMemsetD8(dst, value, n));
}

int gpu_cuda_memcpy_htod_async(GpuCuda *c, CUdeviceptr dst, const void *src, size_t n, CUstream s, char *err,
                               size_t errsize)
{
    COPY(c, n, "copying host to device", c->lib->cuMemcpyHtoDAsync(dst, src, n, s));
}

int gpu_cuda_memcpy_dtoh_async(GpuCuda *c, void *dst, CUdeviceptr src, size_t n, CUstream s, char *err,
                               size_t errsize)
{
    COPY(c, n, "copying device to host", c->lib->cuMemcpyDtoHAsync(dst, src, n, s));
}

int gpu_cuda_memcpy_dtod_async(GpuCuda *c, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, char *err,
                               size_t errsize)
{
    COPY(c, n, "copying device to device", c->lib->cuMemcpyDtoDAsync(dst, src, n, s));
}

int gpu_cuda_memset_async(GpuCuda *c, CUdeviceptr dst, unsigned char value, size_t n, CUstream s, char *err,
                          size_t errsize)
{
    COPY(c, n, "setting device memory", c->lib->cuMemsetD8Async(dst, value, n, s));
}

/* ---------------------------------------------------- streams & events */

int gpu_cuda_stream_create(GpuCuda *c, bool nonblocking, CUstream *out, char *err, size_t errsize)
{
    *out = NULL;
    CALL(c, "creating a stream", c->lib->cuStreamCreate(out, nonblocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
}

int gpu_cuda_stream_synchronize(GpuCuda *c, CUstream s, char *err, size_t errsize)
{
    flush_host_output();
    if (c->interrupt) {
        int st = gpu_cuda_make_current(c, err, errsize);
        if (!st)
            st = poll_until_done(c, s, NULL, err, errsize);
        if (st)
            return st;
    }
    CALL(c, NULL, c->lib->cuStreamSynchronize(s));
}

/* CUDA_ERROR_NOT_READY is an answer here, not a failure. */
static int query_result(GpuCuda *c, CUresult r, bool *done, char *err, size_t errsize)
{
    *done = r == CUDA_SUCCESS;
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)
        return 0;
    return gpu_cuda_fail(c, r, NULL, err, errsize);
}

int gpu_cuda_stream_query(GpuCuda *c, CUstream s, bool *done, char *err, size_t errsize)
{
    *done = false;
    int st = gpu_cuda_make_current(c, err, errsize);
    return st ? st : query_result(c, c->lib->cuStreamQuery(s), done, err, errsize);
}

int gpu_cuda_stream_destroy(GpuCuda *c, CUstream s, char *err, size_t errsize)
{
    if (!s)
        return gpu_cuda_refuse(GPU_CUDA_EARG, err, errsize, "the default stream cannot be destroyed");
    CALL(c, "destroying a stream", c->lib->cuStreamDestroy(s));
}

int gpu_cuda_stream_wait_event(GpuCuda *c, CUstream s, CUevent e, char *err, size_t errsize)
{
    CALL(c, "making a stream wait for an event", c->lib->cuStreamWaitEvent(s, e, 0));
}

int gpu_cuda_event_create(GpuCuda *c, bool timing, CUevent *out, char *err, size_t errsize)
{
    *out = NULL;
    CALL(c, "creating an event", c->lib->cuEventCreate(out, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
}

int gpu_cuda_event_record(GpuCuda *c, CUevent e, CUstream s, char *err, size_t errsize)
{
    CALL(c, "recording an event", c->lib->cuEventRecord(e, s));
}

int gpu_cuda_event_synchronize(GpuCuda *c, CUevent e, char *err, size_t errsize)
{
    flush_host_output();
    if (c->interrupt) {
        int st = gpu_cuda_make_current(c, err, errsize);
        if (!st)
            st = poll_until_done(c, NULL, e, err, errsize);
        if (st)
            return st;
    }
    CALL(c, NULL, c->lib->cuEventSynchronize(e));
}

int gpu_cuda_event_query(GpuCuda *c, CUevent e, bool *done, char *err, size_t errsize)
{
    *done = false;
    int st = gpu_cuda_make_current(c, err, errsize);
    return st ? st : query_result(c, c->lib->cuEventQuery(e), done, err, errsize);
}

int gpu_cuda_event_elapsed(GpuCuda *c, CUevent start, CUevent end, float *ms, char *err, size_t errsize)
{
    *ms = 0;
    CALL(c, "elapsed time between events (both must be recorded, completed and made with timing)",
         c->lib->cuEventElapsedTime(ms, start, end));
}

int gpu_cuda_event_destroy(GpuCuda *c, CUevent e, char *err, size_t errsize)
{
    CALL(c, "destroying an event", c->lib->cuEventDestroy(e));
}
