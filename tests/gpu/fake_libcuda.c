/*
** fake_libcuda.c — a stand-in for libcuda.so.1, built only for tests
** (cc -shared -fPIC, loaded by gpy through GPY_LIBCUDA).
**
** It implements the driver entry points gpy resolves over host memory and
** checks every call against the driver API's documented contracts:
**   - cuInit first; a current, live context for the calls that need one;
**   - device pointers allocated and not freed, copies inside one allocation,
**     host pointers readable/writable at both ends;
**   - cuModuleLoadDataEx gets NUL-terminated PTX text with well-formed JIT
**     options; the PTX's .version/.target are checked as a CUDA 13 driver on
**     an sm_80 device would (a rejected PTX fills the error log buffer);
**   - cuLaunchKernel: a live function, grid/block/shared limits, a valid
**     stream, and kernelParams matching the .param list of that .entry:
**     one readable pointer per parameter, and — gpy's convention, see
**     gpu/cuda_driver.h — a NULL right after the last one, which is how a
**     wrong parameter count shows; `extra` NULL or well-formed; 8-byte
**     parameters that look like fake device addresses must point into live
**     allocations.
** It never executes PTX: a launch is recorded (entry, grid, block, shared,
** stream, each parameter's bytes) for tests to inspect through the
** fake_cuda_* functions declared in fake_libcuda.h.
**
** A contract violation is recorded with a message and makes the call return
** an error (CUDA_ERROR_INVALID_VALUE, _INVALID_CONTEXT, _NOT_INITIALIZED,
** _INVALID_HANDLE...); with FAKE_CUDA_STRICT=1 it prints the message and
** aborts instead.
**
** The fake device: "gpy fake device", sm_80, 108 SMs, 1024 threads per
** block, 48 KiB shared memory per block (163 KiB with opt-in), 40 GiB.
** Environment: FAKE_CUDA_DEVICES (default 1; 0 = a driver without devices),
** FAKE_CUDA_MEMORY (device memory in bytes), FAKE_CUDA_SHARED (default
** shared bytes per block), FAKE_CUDA_STRICT, FAKE_CUDA_LOG=path (a line per
** launch and per violation, for tests that run gpy programs: see "the log"
** below), FAKE_CUDA_NO_PROBE=1 (skip the readability probes, which cost
** system calls: for benchmarks only), FAKE_CUDA_FAIL_LAUNCH=N (the N-th
** launch that passes the checks fails as fake_cuda_inject_error would make
** it, with the code FAKE_CUDA_FAIL_CODE, default 700 = illegal address: for
** programs that cannot call fake_cuda_inject_error), FAKE_CUDA_STICKY_FATAL=1
** (a sticky error is fatal to the process, as the driver API documents and as
** an H200 with driver 580 behaves: the primary context resets, but retaining
** it again returns the sticky code), FAKE_CUDA_BUSY=1 (cuStreamQuery and
** cuEventQuery answer CUDA_ERROR_NOT_READY: work that never finishes, for
** waits that poll so that an interrupt can end them).
**
** Device addresses live at 0x0000D00000000000 and up — outside the host's
** address space, so gpy dereferencing one on the host crashes at once —
** with a gap after each allocation and no reuse (stale pointers are
** recognised as freed). Managed memory is host memory (its address works on
** both sides).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../gpu/cuda_abi.h"
#include "fake_libcuda.h"

#define EXPORT __attribute__((visibility("default")))

#define FAKE_BASE 0x0000D00000000000ull
#define FAKE_SPAN 0x0000100000000000ull
#define MAX_DEVICES 8
#define PTX_MAX_VERSION_MAJOR 9
#define PTX_MAX_VERSION_MINOR 0
#define DEVICE_SM 80
#define DRIVER_VERSION 13000
#define MAX_VIOLATIONS_KEPT 256
#define LAUNCHES_KEPT 8

/* ------------------------------------------------------------ state */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool initialized;

typedef struct FakeCtx {
    uint32_t magic;
    int device;
    int refcount;
    CUresult poisoned;  /* a sticky error: every context call returns it */
} FakeCtx;
#define CTX_MAGIC 0xC0C7C0C7u
static FakeCtx contexts[MAX_DEVICES];
static _Thread_local FakeCtx *current;

enum { K_DEVICE, K_MANAGED, K_MAPPED };
typedef struct Alloc {
    CUdeviceptr base;
    size_t size;
    unsigned char *host; /* the bytes */
    int kind;
    bool live;
    FakeCtx *ctx;
} Alloc;
static Alloc *allocs;      /* fake-range allocations, in address order */
static int nallocs, cap_allocs;
static Alloc *managed;     /* managed allocations (host addresses) */
static int nmanaged, cap_managed;
static CUdeviceptr next_address = FAKE_BASE;
static size_t used_bytes;

typedef struct Pinned {
    void *p;
    size_t size;
    bool live;
    CUdeviceptr alias; /* CU_MEMHOSTALLOC_DEVICEMAP: its device address, else 0 */
    FakeCtx *ctx;
} Pinned;
static Pinned *pinned;
static int npinned, cap_pinned;

#define MAX_ENTRY_PARAMS FAKE_CUDA_MAX_PARAMS
typedef struct Entry {
    char *name;
    int nparams;
    unsigned size[MAX_ENTRY_PARAMS], align[MAX_ENTRY_PARAMS];
    int static_shared;
    int max_threads;
    int max_dynamic_shared;
    bool prototype;  /* declared without a body (so far): a later definition replaces it */
    struct Module *module;
} Entry;
typedef struct Module Module;
struct Module {
    bool loaded;
    FakeCtx *ctx;
    int nentries;
    Entry **entries;
};
static Module **modules;  /* every module ever loaded (handles stay recognisable) */
static int nmodules, cap_modules;

static int module_number(const Module *m)
{
    for (int i = 0; i < nmodules; i++)
        if (modules[i] == m)
            return i + 1;
    return 0;
}

static void log_module_entries(FILE *f, const Module *m)
{
    for (int i = 0; i < m->nentries; i++)
        fprintf(f, "%s%s", i ? "," : "", m->entries[i]->name);
}

typedef struct Stream { bool live; FakeCtx *ctx; unsigned flags; } Stream;
typedef struct Event {
    bool live, recorded;
    FakeCtx *ctx;
    unsigned flags;
    double t_ms;
} Event;
static Stream **streams;
static int nstreams, cap_streams;
static Event **events;
static int nevents, cap_events;

typedef struct Link { bool live; char *ptx; bool has_library; } Link;
static Link **links;
static int nlinks, cap_links;

static char *violations[MAX_VIOLATIONS_KEPT];
static int nviolations;
static FakeLaunch launches[LAUNCHES_KEPT];
static long nlaunches;
static CUresult injected;
static long launch_calls; /* cuLaunchKernel calls that passed the checks (FAKE_CUDA_FAIL_LAUNCH) */

/* Appends to a growable array of T (p, n, cap). */
#define PUSH(arr, n, cap, value)                                            \
    do {                                                                    \
        if ((n) == (cap)) {                                                 \
            (cap) = (cap) ? 2 * (cap) : 16;                                 \
            void *grown_ = realloc((arr), (size_t)(cap) * sizeof *(arr));   \
            if (!grown_) {                                                  \
                fprintf(stderr, "fake_libcuda: out of host memory\n");      \
                abort();                                                    \
            }                                                               \
            (arr) = grown_;                                                 \
        }                                                                   \
        (arr)[(n)++] = (value);                                             \
    } while (0)

/* ------------------------------------------------------- the log
** FAKE_CUDA_LOG=path: one line per launch and per violation, appended and
** flushed at once, for tests that drive the fake through gpy programs
** (which cannot call the fake_cuda_* functions):
**   launch NAME grid=X,Y,Z block=X,Y,Z shared=N params=HEX,HEX,...
**   violation ENTRYPOINT: MESSAGE
**   load|unload module N entries=NAME,NAME,...  (N: the load's number, from 1)
** Each HEX is one parameter's bytes in memory order (little-endian for
** numbers): an int64 5 is 0500000000000000. */
static FILE *log_file;
static bool log_opened;

static FILE *fake_log(void)
{
    if (!log_opened) {
        log_opened = true;
        const char *path = getenv("FAKE_CUDA_LOG");
        if (path && *path)
            log_file = fopen(path, "a");
    }
    return log_file;
}

static void log_launch(const FakeLaunch *l)
{
    FILE *f = fake_log();
    if (!f)
        return;
    fprintf(f, "launch %s grid=%u,%u,%u block=%u,%u,%u shared=%u params=", l->entry, l->grid[0], l->grid[1],
            l->grid[2], l->block[0], l->block[1], l->block[2], l->shared_bytes);
    for (int i = 0; i < l->nparams; i++) {
        if (i)
            fputc(',', f);
        for (unsigned k = 0; k < l->param_size[i]; k++)
            fprintf(f, "%02x", l->bytes[l->param_offset[i] + k]);
    }
    fputc('\n', f);
    fflush(f);
}

static void log_module(const char *what, const Module *m)
{
    FILE *f = fake_log();
    if (!f)
        return;
    fprintf(f, "%s module %d entries=", what, module_number(m));
    log_module_entries(f, m);
    fputc('\n', f);
    fflush(f);
}

/* ------------------------------------------------------- violations */

/* Records a contract violation by entry point fn and returns code. */
static CUresult violation(CUresult code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static CUresult violation(CUresult code, const char *fn, const char *fmt, ...)
{
    char msg[1024];
    int len = snprintf(msg, sizeof msg, "%s: ", fn);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
    va_end(ap);
    FILE *f = fake_log();
    if (f) {
        fprintf(f, "violation %s\n", msg);
        fflush(f);
    }
    const char *strict = getenv("FAKE_CUDA_STRICT");
    if (strict && strcmp(strict, "1") == 0) {
        fprintf(stderr, "fake_libcuda: contract violation: %s\n", msg);
        abort();
    }
    int slot = nviolations % MAX_VIOLATIONS_KEPT;
    free(violations[slot]);
    violations[slot] = strdup(msg);
    nviolations++;
    return code;
}

/* Entry/exit of every entry point: the lock, and the common checks. */
#define ENTER() pthread_mutex_lock(&lock)
#define RETURN(x)                          \
    do {                                   \
        CUresult r_ = (x);                 \
        pthread_mutex_unlock(&lock);       \
        return r_;                         \
    } while (0)
/* cuInit must have succeeded. */
#define NEED_INIT(fn)                                                                             \
    do {                                                                                          \
        if (!initialized)                                                                         \
            RETURN(violation(CUDA_ERROR_NOT_INITIALIZED, fn, "called before cuInit"));            \
    } while (0)
/* ...and a current context that is alive (and not poisoned). */
#define NEED_CTX(fn)                                                                              \
    do {                                                                                          \
        NEED_INIT(fn);                                                                            \
        if (!current)                                                                             \
            RETURN(violation(CUDA_ERROR_INVALID_CONTEXT, fn, "no current context"));              \
        if (current->refcount <= 0)                                                               \
            RETURN(violation(CUDA_ERROR_INVALID_CONTEXT, fn,                                      \
                             "the current context was released (destroyed)"));                    \
        if (current->poisoned)                                                                    \
            RETURN(current->poisoned);                                                            \
    } while (0)

/* FAKE_CUDA_STICKY_FATAL=1: the sticky code no context can be retained past */
static CUresult process_poisoned;

static long env_long(const char *name, long fallback)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    char *end;
    long v = strtol(s, &end, 0);
    return *end ? fallback : v;
}

static int device_count(void)
{
    long n = env_long("FAKE_CUDA_DEVICES", 1);
    return n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : (int)n;
}
static size_t device_memory(void) { return (size_t)env_long("FAKE_CUDA_MEMORY", 40L << 30); }
static int shared_per_block(void) { return (int)env_long("FAKE_CUDA_SHARED", 48 << 10); }
#define SHARED_OPTIN (163 << 10)

/* ----------------------------------------------- pointer checking */

/* Whether n bytes at p can be read, without faulting: the kernel's copy
** into a pipe fails with EFAULT when they cannot. Checks the first and last
** byte of large ranges (enough for off-by-something bugs). */
static int probe_pipe[2] = {-1, -1};
static int probing = -1; /* FAKE_CUDA_NO_PROBE=1 (benchmarks): only NULL is caught */
static bool probe(const void *p, size_t n, bool write_access)
{
    if (!p)
        return false;
    if (probing < 0)
        probing = !(getenv("FAKE_CUDA_NO_PROBE") && strcmp(getenv("FAKE_CUDA_NO_PROBE"), "1") == 0);
    if (n == 0 || !probing)
        return true;
    if (probe_pipe[0] < 0 && pipe2(probe_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return true; /* cannot check: assume fine */
    const unsigned char *b = p;
    const unsigned char *spots[2] = {b, b + n - 1};
    for (int i = 0; i < 2; i++) {
        unsigned char tmp;
        if (write_access) {
            /* reading from the pipe into the byte faults if it is not writable;
               write back the byte's own value (it is about to be overwritten) */
            tmp = 0;
            if (write(probe_pipe[1], &tmp, 1) != 1)
                return true;
            if (read(probe_pipe[0], (void *)spots[i], 1) < 0 && errno == EFAULT) {
                if (read(probe_pipe[0], &tmp, 1) < 0) { /* drain */ }
                return false;
            }
        } else {
            if (write(probe_pipe[1], spots[i], 1) < 0)
                return errno != EFAULT;
            if (read(probe_pipe[0], &tmp, 1) < 0) { /* drain */ }
        }
    }
    return true;
}

static bool in_fake_range(uint64_t a) { return a >= FAKE_BASE && a < FAKE_BASE + FAKE_SPAN; }

/* The allocation (live or freed) containing address a, or NULL. */
static Alloc *find_alloc(uint64_t a)
{
    if (in_fake_range(a)) {
        int lo = 0, hi = nallocs - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            Alloc *m = &allocs[mid];
            if (a < m->base)
                hi = mid - 1;
            else if (a >= m->base + m->size)
                lo = mid + 1;
            else
                return m;
        }
        return NULL;
    }
    for (int i = nmanaged - 1; i >= 0; i--)
        if (a >= managed[i].base && a < managed[i].base + managed[i].size)
            return &managed[i];
    return NULL;
}

/* Checks [p, p+n) lies in one live allocation of the current context and
** gives its host bytes; records a violation otherwise. */
static CUresult device_range(const char *fn, const char *what, CUdeviceptr p, size_t n, unsigned char **host)
{
    *host = NULL;
    Alloc *a = find_alloc(p);
    if (!a) {
        if (p == 0)
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "%s is the NULL device pointer", what);
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "%s 0x%llx is not in any device allocation", what,
                         (unsigned long long)p);
    }
    if (!a->live)
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "%s 0x%llx points into freed memory (allocation 0x%llx, %zu bytes)",
                         what, (unsigned long long)p, (unsigned long long)a->base, a->size);
    size_t off = (size_t)(p - a->base);
    if (n > a->size - off)
        return violation(CUDA_ERROR_INVALID_VALUE, fn,
                         "%s: %zu bytes at offset %zu overrun the allocation of %zu bytes at 0x%llx", what, n, off,
                         a->size, (unsigned long long)a->base);
    if (a->ctx != current)
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "%s belongs to another context", what);
    *host = a->host + off;
    return CUDA_SUCCESS;
}

/* A host pointer for n bytes: not a device address, readable/writable. */
static CUresult host_range(const char *fn, const char *what, const void *p, size_t n, bool write_access)
{
    if (!p)
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "%s is NULL", what);
    if (in_fake_range((uint64_t)(uintptr_t)p))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "%s %p is a device address, not host memory", what, p);
    if (!probe(p, n, write_access))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "%s %p is not %s for %zu bytes", what, p,
                         write_access ? "writable" : "readable", n);
    return CUDA_SUCCESS;
}

/* NULL, the special handles, or a live stream of the current context. */
static CUresult check_stream(const char *fn, CUstream s)
{
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return CUDA_SUCCESS;
    for (int i = 0; i < nstreams; i++)
        if ((CUstream)streams[i] == s) {
            if (!streams[i]->live)
                return violation(CUDA_ERROR_INVALID_HANDLE, fn, "stream %p was destroyed", (void *)s);
            if (streams[i]->ctx != current)
                return violation(CUDA_ERROR_INVALID_HANDLE, fn, "stream %p belongs to another context", (void *)s);
            return CUDA_SUCCESS;
        }
    return violation(CUDA_ERROR_INVALID_HANDLE, fn, "%p is not a stream", (void *)s);
}

static Event *find_event(const char *fn, CUevent e, CUresult *r)
{
    for (int i = 0; i < nevents; i++)
        if ((CUevent)events[i] == e) {
            if (!events[i]->live) {
                *r = violation(CUDA_ERROR_INVALID_HANDLE, fn, "event %p was destroyed", (void *)e);
                return NULL;
            }
            *r = CUDA_SUCCESS;
            return events[i];
        }
    *r = violation(CUDA_ERROR_INVALID_HANDLE, fn, "%p is not an event", (void *)e);
    return NULL;
}

/* A live function of a loaded module of the current context. */
static Entry *find_function(const char *fn, CUfunction f, CUresult *r)
{
    for (int i = 0; i < nmodules; i++)
        for (int j = 0; j < modules[i]->nentries; j++)
            if ((CUfunction)modules[i]->entries[j] == f) {
                if (!modules[i]->loaded) {
                    *r = violation(CUDA_ERROR_INVALID_HANDLE, fn, "function %p's module was unloaded", (void *)f);
                    return NULL;
                }
                *r = CUDA_SUCCESS;
                return modules[i]->entries[j];
            }
    *r = violation(CUDA_ERROR_INVALID_HANDLE, fn, "%p is not a function", (void *)f);
    return NULL;
}

/* Frees everything a context owns (release to zero, or reset). */
static void destroy_context_resources(FakeCtx *ctx)
{
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].live && allocs[i].ctx == ctx) {
            allocs[i].live = false;
            if (allocs[i].kind == K_DEVICE) {
                used_bytes -= allocs[i].size;
                free(allocs[i].host);
            }
            allocs[i].host = NULL;
        }
    for (int i = 0; i < nmanaged; i++)
        if (managed[i].live && managed[i].ctx == ctx) {
            managed[i].live = false;
            used_bytes -= managed[i].size;
            free(managed[i].host);
        }
    for (int i = 0; i < npinned; i++)
        if (pinned[i].live && pinned[i].ctx == ctx) {
            pinned[i].live = false;
            free(pinned[i].p);
        }
    for (int i = 0; i < nmodules; i++)
        if (modules[i]->ctx == ctx)
            modules[i]->loaded = false;
    for (int i = 0; i < nstreams; i++)
        if (streams[i]->ctx == ctx)
            streams[i]->live = false;
    for (int i = 0; i < nevents; i++)
        if (events[i]->ctx == ctx)
            events[i]->live = false;
    ctx->poisoned = CUDA_SUCCESS;
}

/* -------------------------------------------------- init & errors */

typedef struct ErrorText {
    CUresult code;
    const char *name, *text;
} ErrorText;
static const ErrorText error_texts[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "operation not supported on global/shared address space"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const ErrorText *error_text(CUresult e)
{
    for (size_t i = 0; i < sizeof error_texts / sizeof error_texts[0]; i++)
        if (error_texts[i].code == e)
            return &error_texts[i];
    return NULL;
}

/* Documented: unknown codes give CUDA_ERROR_INVALID_VALUE and *str = NULL;
** no cuInit needed. */
EXPORT CUresult cuGetErrorName(CUresult error, const char **str)
{
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    const ErrorText *t = error_text(error);
    *str = t ? t->name : NULL;
    return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **str)
{
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    const ErrorText *t = error_text(error);
    *str = t ? t->text : NULL;
    return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuInit(unsigned flags)
{
    ENTER();
    if (flags != 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuInit", "flags must be 0, got %u", flags));
    if (device_count() == 0)
        RETURN(CUDA_ERROR_NO_DEVICE);
    initialized = true;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDriverGetVersion(int *version)
{
    ENTER();
    if (!version)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuDriverGetVersion", "NULL version"));
    *version = DRIVER_VERSION;
    RETURN(CUDA_SUCCESS);
}

/* ---------------------------------------------------------- devices */

EXPORT CUresult cuDeviceGetCount(int *count)
{
    ENTER();
    NEED_INIT("cuDeviceGetCount");
    if (!count)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetCount", "NULL count"));
    *count = device_count();
    RETURN(CUDA_SUCCESS);
}

static CUresult check_device(const char *fn, CUdevice dev)
{
    if (dev < 0 || dev >= device_count())
        return violation(CUDA_ERROR_INVALID_DEVICE, fn, "device %d does not exist", dev);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    ENTER();
    NEED_INIT("cuDeviceGet");
    if (!dev)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuDeviceGet", "NULL device"));
    CUresult r = check_device("cuDeviceGet", ordinal);
    if (r == CUDA_SUCCESS)
        *dev = ordinal;
    RETURN(r);
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    ENTER();
    NEED_INIT("cuDeviceGetName");
    if (!name || len <= 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetName", "NULL name or length %d", len));
    CUresult r = check_device("cuDeviceGetName", dev);
    if (r == CUDA_SUCCESS)
        snprintf(name, (size_t)len, "gpy fake device");
    RETURN(r);
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    ENTER();
    NEED_INIT("cuDeviceTotalMem_v2");
    if (!bytes)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuDeviceTotalMem_v2", "NULL bytes"));
    CUresult r = check_device("cuDeviceTotalMem_v2", dev);
    if (r == CUDA_SUCCESS)
        *bytes = device_memory();
    RETURN(r);
}

static bool attribute_value(CUdevice_attribute a, int *v)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = shared_per_block(); break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = SHARED_OPTIN; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1410000; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 108; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 1215000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 40 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = DEVICE_SM / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = DEVICE_SM % 10; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: *v = 1; break;
    default: return false;
    }
    return true;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice dev)
{
    ENTER();
    NEED_INIT("cuDeviceGetAttribute");
    if (!v)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute", "NULL value"));
    CUresult r = check_device("cuDeviceGetAttribute", dev);
    if (r != CUDA_SUCCESS)
        RETURN(r);
    if (!attribute_value(a, v))
        RETURN(CUDA_ERROR_INVALID_VALUE); /* an attribute this fake does not model */
    RETURN(CUDA_SUCCESS);
}

/* --------------------------------------------------------- contexts */

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    ENTER();
    NEED_INIT("cuDevicePrimaryCtxRetain");
    if (!ctx)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuDevicePrimaryCtxRetain", "NULL context"));
    CUresult r = check_device("cuDevicePrimaryCtxRetain", dev);
    if (r != CUDA_SUCCESS)
        RETURN(r);
    if (process_poisoned)
        RETURN(process_poisoned);
    FakeCtx *c = &contexts[dev];
    c->magic = CTX_MAGIC;
    c->device = dev;
    c->refcount++;
    *ctx = (CUcontext)c;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    ENTER();
    NEED_INIT("cuDevicePrimaryCtxRelease_v2");
    CUresult r = check_device("cuDevicePrimaryCtxRelease_v2", dev);
    if (r != CUDA_SUCCESS)
        RETURN(r);
    FakeCtx *c = &contexts[dev];
    if (c->refcount <= 0)
        RETURN(violation(CUDA_ERROR_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease_v2",
                         "the primary context of device %d is not retained", dev));
    if (--c->refcount == 0)
        destroy_context_resources(c);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    ENTER();
    NEED_INIT("cuDevicePrimaryCtxReset_v2");
    CUresult r = check_device("cuDevicePrimaryCtxReset_v2", dev);
    if (r != CUDA_SUCCESS)
        RETURN(r);
    destroy_context_resources(&contexts[dev]);
    RETURN(CUDA_SUCCESS);
}

static bool is_context(CUcontext ctx)
{
    for (int i = 0; i < MAX_DEVICES; i++)
        if ((CUcontext)&contexts[i] == ctx)
            return contexts[i].magic == CTX_MAGIC;
    return false;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    ENTER();
    NEED_INIT("cuCtxSetCurrent");
    if (ctx && !is_context(ctx))
        RETURN(violation(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent", "%p is not a context", (void *)ctx));
    if (ctx && ((FakeCtx *)ctx)->refcount <= 0)
        RETURN(violation(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent", "context %p was destroyed", (void *)ctx));
    current = (FakeCtx *)ctx;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    ENTER();
    NEED_INIT("cuCtxGetCurrent");
    if (!ctx)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuCtxGetCurrent", "NULL context"));
    *ctx = (CUcontext)current;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxSynchronize(void)
{
    ENTER();
    NEED_CTX("cuCtxSynchronize");
    RETURN(CUDA_SUCCESS);
}

/* ----------------------------------------------------------- memory */

static CUdeviceptr reserve_addresses(size_t bytes)
{
    CUdeviceptr base = next_address;
    /* a guard gap of at least one page after every allocation */
    next_address = (base + bytes + 4096 + 4095) & ~(CUdeviceptr)4095;
    return base;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    ENTER();
    NEED_CTX("cuMemGetInfo_v2");
    if (!free_bytes || !total_bytes)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemGetInfo_v2", "NULL output"));
    *total_bytes = device_memory();
    *free_bytes = device_memory() - used_bytes;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    ENTER();
    NEED_CTX("cuMemAlloc_v2");
    if (!dptr)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc_v2", "NULL dptr"));
    if (bytes == 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc_v2", "bytesize 0"));
    if (bytes > device_memory() - used_bytes || bytes >= FAKE_SPAN / 4)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    unsigned char *host = malloc(bytes);
    if (!host)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    memset(host, 0xA5, bytes); /* uninitialized device memory is not zero */
    Alloc a = {reserve_addresses(bytes), bytes, host, K_DEVICE, true, current};
    PUSH(allocs, nallocs, cap_allocs, a);
    used_bytes += bytes;
    *dptr = a.base;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
    ENTER();
    NEED_CTX("cuMemAllocManaged");
    if (!dptr || bytes == 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemAllocManaged", "NULL dptr or bytesize 0"));
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemAllocManaged",
                         "flags must be CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST, got %u", flags));
    if (bytes > device_memory() - used_bytes)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    unsigned char *host = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (!host)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    Alloc a = {(CUdeviceptr)(uintptr_t)host, bytes, host, K_MANAGED, true, current};
    PUSH(managed, nmanaged, cap_managed, a);
    used_bytes += bytes;
    *dptr = a.base;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    ENTER();
    NEED_CTX("cuMemFree_v2");
    Alloc *a = find_alloc(p);
    if (!a || a->base != p || a->kind == K_MAPPED)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemFree_v2",
                         "0x%llx is not the start of a cuMemAlloc/cuMemAllocManaged allocation", (unsigned long long)p));
    if (!a->live)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemFree_v2", "0x%llx was already freed (double free)",
                         (unsigned long long)p));
    if (a->ctx != current)
        RETURN(violation(CUDA_ERROR_INVALID_CONTEXT, "cuMemFree_v2", "0x%llx belongs to another context",
                         (unsigned long long)p));
    a->live = false;
    used_bytes -= a->size;
    free(a->host);
    a->host = NULL;
    RETURN(CUDA_SUCCESS);
}

static CUresult host_alloc(const char *fn, void **pp, size_t bytes, unsigned flags)
{
    if (!pp || bytes == 0)
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "NULL pointer or bytesize 0");
    if (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "unknown flags 0x%x", flags);
    void *p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    Pinned h = {p, bytes, true, 0, current};
    if (flags & CU_MEMHOSTALLOC_DEVICEMAP) {
        Alloc a = {reserve_addresses(bytes), bytes, p, K_MAPPED, true, current};
        PUSH(allocs, nallocs, cap_allocs, a);
        h.alias = a.base;
    }
    PUSH(pinned, npinned, cap_pinned, h);
    *pp = p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytes)
{
    ENTER();
    NEED_CTX("cuMemAllocHost_v2");
    RETURN(host_alloc("cuMemAllocHost_v2", pp, bytes, 0));
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned flags)
{
    ENTER();
    NEED_CTX("cuMemHostAlloc");
    RETURN(host_alloc("cuMemHostAlloc", pp, bytes, flags));
}

static Pinned *find_pinned(const void *p)
{
    for (int i = npinned - 1; i >= 0; i--)
        if ((const char *)p >= (const char *)pinned[i].p && (const char *)p < (const char *)pinned[i].p + pinned[i].size)
            return &pinned[i];
    return NULL;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    ENTER();
    NEED_CTX("cuMemFreeHost");
    Pinned *h = find_pinned(p);
    if (!h || h->p != p)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost", "%p is not from cuMemHostAlloc/cuMemAllocHost", p));
    if (!h->live)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost", "%p was already freed", p));
    h->live = false;
    if (h->alias) {
        Alloc *a = find_alloc(h->alias);
        if (a)
            a->live = false, a->host = NULL;
    }
    free(h->p);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *dptr, void *p, unsigned flags)
{
    ENTER();
    NEED_CTX("cuMemHostGetDevicePointer_v2");
    if (!dptr || flags != 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer_v2", "NULL dptr or flags %u != 0", flags));
    Pinned *h = find_pinned(p);
    if (!h || !h->live)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer_v2", "%p is not live pinned memory", p));
    if (!h->alias)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer_v2",
                         "%p was not allocated with CU_MEMHOSTALLOC_DEVICEMAP", p));
    *dptr = h->alias + (CUdeviceptr)((const char *)p - (const char *)h->p);
    RETURN(CUDA_SUCCESS);
}

static CUresult copy_htod(const char *fn, CUdeviceptr dst, const void *src, size_t n)
{
    unsigned char *d;
    CUresult r = device_range(fn, "destination", dst, n, &d);
    if (r == CUDA_SUCCESS)
        r = host_range(fn, "source", src, n, false);
    if (r == CUDA_SUCCESS)
        memmove(d, src, n);
    return r;
}

static CUresult copy_dtoh(const char *fn, void *dst, CUdeviceptr src, size_t n)
{
    unsigned char *s;
    CUresult r = device_range(fn, "source", src, n, &s);
    if (r == CUDA_SUCCESS)
        r = host_range(fn, "destination", dst, n, true);
    if (r == CUDA_SUCCESS)
        memmove(dst, s, n);
    return r;
}

static CUresult copy_dtod(const char *fn, CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    unsigned char *d, *s;
    CUresult r = device_range(fn, "destination", dst, n, &d);
    if (r == CUDA_SUCCESS)
        r = device_range(fn, "source", src, n, &s);
    if (r == CUDA_SUCCESS)
        memmove(d, s, n);
    return r;
}

static CUresult set_d8(const char *fn, CUdeviceptr dst, unsigned char v, size_t n)
{
    unsigned char *d;
    CUresult r = device_range(fn, "destination", dst, n, &d);
    if (r == CUDA_SUCCESS)
        memset(d, v, n);
    return r;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    ENTER();
    NEED_CTX("cuMemcpyHtoD_v2");
    RETURN(copy_htod("cuMemcpyHtoD_v2", dst, src, n));
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    ENTER();
    NEED_CTX("cuMemcpyDtoH_v2");
    RETURN(copy_dtoh("cuMemcpyDtoH_v2", dst, src, n));
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    ENTER();
    NEED_CTX("cuMemcpyDtoD_v2");
    RETURN(copy_dtod("cuMemcpyDtoD_v2", dst, src, n));
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    ENTER();
    NEED_CTX("cuMemsetD8_v2");
    RETURN(set_d8("cuMemsetD8_v2", dst, v, n));
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    ENTER();
    NEED_CTX("cuMemcpyHtoDAsync_v2");
    CUresult r = check_stream("cuMemcpyHtoDAsync_v2", s);
    RETURN(r ? r : copy_htod("cuMemcpyHtoDAsync_v2", dst, src, n));
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    ENTER();
    NEED_CTX("cuMemcpyDtoHAsync_v2");
    CUresult r = check_stream("cuMemcpyDtoHAsync_v2", s);
    RETURN(r ? r : copy_dtoh("cuMemcpyDtoHAsync_v2", dst, src, n));
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    ENTER();
    NEED_CTX("cuMemcpyDtoDAsync_v2");
    CUresult r = check_stream("cuMemcpyDtoDAsync_v2", s);
    RETURN(r ? r : copy_dtod("cuMemcpyDtoDAsync_v2", dst, src, n));
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    ENTER();
    NEED_CTX("cuMemsetD8Async");
    CUresult r = check_stream("cuMemsetD8Async", s);
    RETURN(r ? r : set_d8("cuMemsetD8Async", dst, v, n));
}

/* --------------------------------------------------- streams, events */

EXPORT CUresult cuStreamCreate(CUstream *out, unsigned flags)
{
    ENTER();
    NEED_CTX("cuStreamCreate");
    if (!out)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate", "NULL stream"));
    if (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate", "unknown flags 0x%x", flags));
    Stream *s = calloc(1, sizeof *s);
    if (!s)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    s->live = true, s->ctx = current, s->flags = flags;
    PUSH(streams, nstreams, cap_streams, s);
    *out = (CUstream)s;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    ENTER();
    NEED_CTX("cuStreamSynchronize");
    RETURN(check_stream("cuStreamSynchronize", s));
}

EXPORT CUresult cuStreamQuery(CUstream s)
{
    ENTER();
    NEED_CTX("cuStreamQuery");
    CUresult r = check_stream("cuStreamQuery", s); /* all work is done at once */
    RETURN(r == CUDA_SUCCESS && env_long("FAKE_CUDA_BUSY", 0) == 1 ? CUDA_ERROR_NOT_READY : r);
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    ENTER();
    NEED_CTX("cuStreamDestroy_v2");
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        RETURN(violation(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy_v2", "cannot destroy a default stream"));
    CUresult r = check_stream("cuStreamDestroy_v2", s);
    if (r == CUDA_SUCCESS)
        ((Stream *)s)->live = false;
    RETURN(r);
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent ev, unsigned flags)
{
    ENTER();
    NEED_CTX("cuStreamWaitEvent");
    if (flags != 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuStreamWaitEvent", "flags must be 0, got %u", flags));
    CUresult r = check_stream("cuStreamWaitEvent", s);
    if (r == CUDA_SUCCESS)
        find_event("cuStreamWaitEvent", ev, &r);
    RETURN(r);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

EXPORT CUresult cuEventCreate(CUevent *out, unsigned flags)
{
    ENTER();
    NEED_CTX("cuEventCreate");
    if (!out)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuEventCreate", "NULL event"));
    if (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | 0x4))
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuEventCreate", "unknown flags 0x%x", flags));
    Event *e = calloc(1, sizeof *e);
    if (!e)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    e->live = true, e->ctx = current, e->flags = flags;
    PUSH(events, nevents, cap_events, e);
    *out = (CUevent)e;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuEventRecord(CUevent ev, CUstream s)
{
    ENTER();
    NEED_CTX("cuEventRecord");
    CUresult r;
    Event *e = find_event("cuEventRecord", ev, &r);
    if (!e)
        RETURN(r);
    if (e->ctx != current)
        RETURN(violation(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord", "event and stream are from different contexts"));
    r = check_stream("cuEventRecord", s);
    if (r == CUDA_SUCCESS)
        e->recorded = true, e->t_ms = now_ms();
    RETURN(r);
}

EXPORT CUresult cuEventSynchronize(CUevent ev)
{
    ENTER();
    NEED_CTX("cuEventSynchronize");
    CUresult r;
    find_event("cuEventSynchronize", ev, &r);
    RETURN(r);
}

EXPORT CUresult cuEventQuery(CUevent ev)
{
    ENTER();
    NEED_CTX("cuEventQuery");
    CUresult r;
    find_event("cuEventQuery", ev, &r);
    RETURN(r == CUDA_SUCCESS && env_long("FAKE_CUDA_BUSY", 0) == 1 ? CUDA_ERROR_NOT_READY : r);
}

/* Documented: CUDA_ERROR_INVALID_HANDLE when either event was made with
** CU_EVENT_DISABLE_TIMING or has not been recorded (not a contract
** violation: a legitimate answer). */
EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    ENTER();
    NEED_CTX("cuEventElapsedTime");
    if (!ms)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuEventElapsedTime", "NULL ms"));
    CUresult r;
    Event *a = find_event("cuEventElapsedTime", start, &r);
    Event *b = a ? find_event("cuEventElapsedTime", end, &r) : NULL;
    if (!a || !b)
        RETURN(r);
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING || !a->recorded || !b->recorded)
        RETURN(CUDA_ERROR_INVALID_HANDLE);
    *ms = (float)(b->t_ms - a->t_ms);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuEventDestroy_v2(CUevent ev)
{
    ENTER();
    NEED_CTX("cuEventDestroy_v2");
    CUresult r;
    Event *e = find_event("cuEventDestroy_v2", ev, &r);
    if (e)
        e->live = false;
    RETURN(r);
}

/* ------------------------------------------------------ PTX parsing
** Enough of PTX to know each .entry's parameters (size and alignment), its
** static shared memory and its thread limit; plus the .version/.target
** checks a driver makes. Comments are blanked first. */

typedef struct Lexer {
    const char *s;
    size_t pos;
    int line;
    char tok[4096]; /* longer words are cut (mangled names run to a few hundred characters) */
    int tok_line;
} Lexer;

/* Next token: a word of [A-Za-z0-9_.$%] characters, a quoted string, or one
** punctuation character. Empty string at the end. */
static const char *next_token(Lexer *lx)
{
    const char *s = lx->s;
    while (s[lx->pos] && isspace((unsigned char)s[lx->pos])) {
        if (s[lx->pos] == '\n')
            lx->line++;
        lx->pos++;
    }
    lx->tok_line = lx->line;
    size_t n = 0;
    char c = s[lx->pos];
    if (!c) {
        lx->tok[0] = '\0';
        return lx->tok;
    }
    if (c == '"') {
        lx->tok[n++] = s[lx->pos++];
        while (s[lx->pos] && s[lx->pos] != '"' && s[lx->pos] != '\n') {
            if (n < sizeof lx->tok - 2)
                lx->tok[n++] = s[lx->pos];
            lx->pos++;
        }
        if (s[lx->pos] == '"')
            lx->pos++;
        lx->tok[n++] = '"';
    } else if (isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' || c == '%') {
        while (isalnum((unsigned char)s[lx->pos]) || s[lx->pos] == '_' || s[lx->pos] == '.' || s[lx->pos] == '$' ||
               s[lx->pos] == '%') {
            if (n < sizeof lx->tok - 1)
                lx->tok[n++] = s[lx->pos];
            lx->pos++;
        }
    } else {
        lx->tok[n++] = c;
        lx->pos++;
    }
    lx->tok[n] = '\0';
    return lx->tok;
}

/* Size in bytes of a PTX fundamental type (.u32 → 4), 0 if not one. */
static unsigned type_size(const char *t)
{
    static const struct { const char *name; unsigned size; } types[] = {
        {".b8", 1},  {".u8", 1},  {".s8", 1},  {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2},
        {".bf16", 2}, {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".f16x2", 4}, {".bf16x2", 4},
        {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b128", 16},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(t, types[i].name) == 0)
            return types[i].size;
    return 0;
}

typedef struct ModShared {
    char name[512];
    unsigned bytes;
} ModShared;

typedef struct Parse {
    char log[2048];
    CUresult status;
    int version_major, version_minor, target_sm;
    Entry **entries;
    int nentries, cap_entries;
    ModShared *shared;
    int nshared, cap_shared;
} Parse;

static bool parse_fail(Parse *p, CUresult status, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool parse_fail(Parse *p, CUresult status, int line, const char *fmt, ...)
{
    int n = snprintf(p->log, sizeof p->log, "ptxas application ptx input, line %d; %s   : ", line,
                     status == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ? "fatal" : "error");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->log + n, sizeof p->log - (size_t)n, fmt, ap);
    va_end(ap);
    p->status = status;
    return false;
}

/* A declaration's type/alignment/name/[dims] after its state space, up to
** and including the terminator (';', ',' or ')'), which is returned in
** *term. Used for .param and .shared. */
static bool parse_declaration(Lexer *lx, Parse *p, const char *what, unsigned *size, unsigned *align, char *name,
                              size_t namesz, char *term)
{
    unsigned elem = 0, alignment = 0;
    const char *t;
    name[0] = '\0';
    for (;;) {
        t = next_token(lx);
        if (strcmp(t, ".align") == 0) {
            alignment = (unsigned)strtoul(next_token(lx), NULL, 0);
        } else if (t[0] == '.') {
            unsigned ts = type_size(t);
            if (ts)
                elem = ts;
            else if (strcmp(t, ".ptr") && strcmp(t, ".global") && strcmp(t, ".const") && strcmp(t, ".local") &&
                     strcmp(t, ".shared") && strcmp(t, ".param"))
                return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line, "Unexpected '%s' in %s declaration", t,
                                  what);
        } else {
            break;
        }
    }
    if (!elem)
        return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line, "%s declaration without a type", what);
    if (!(isalpha((unsigned char)t[0]) || t[0] == '_' || t[0] == '$' || t[0] == '%'))
        return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line, "syntax error at '%s' in %s declaration", t, what);
    snprintf(name, namesz, "%s", t);
    unsigned long count = 1;
    t = next_token(lx);
    while (strcmp(t, "[") == 0) {
        t = next_token(lx);
        if (strcmp(t, "]") == 0) {
            count = 0; /* extern, unsized */
        } else {
            count *= strtoul(t, NULL, 0);
            if (strcmp(next_token(lx), "]") != 0)
                return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line, "syntax error: expected ']'");
        }
        t = next_token(lx);
    }
    *term = t[0];
    *size = (unsigned)(elem * count);
    *align = alignment ? alignment : elem;
    return true;
}

static bool parse_entry(Lexer *lx, Parse *p)
{
    Entry *e = calloc(1, sizeof *e);
    if (!e)
        return parse_fail(p, CUDA_ERROR_OUT_OF_MEMORY, lx->line, "out of memory");
    const char *t = next_token(lx);
    if (!(isalpha((unsigned char)t[0]) || t[0] == '_' || t[0] == '$')) {
        free(e);
        return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line, "syntax error: expected a name after .entry");
    }
    e->name = strdup(t);
    if (!e->name) {
        free(e);
        return parse_fail(p, CUDA_ERROR_OUT_OF_MEMORY, lx->line, "out of memory");
    }
    for (int i = 0; i < p->nentries; i++)
        if (strcmp(p->entries[i]->name, e->name) == 0 && p->entries[i]->prototype) {
            /* a kernel named before its definition (one kernel launching another) */
            free(p->entries[i]->name);
            free(p->entries[i]);
            p->entries[i] = p->entries[--p->nentries];
            break;
        }
    for (int i = 0; i < p->nentries; i++)
        if (strcmp(p->entries[i]->name, e->name) == 0) {
            free(e->name);
            free(e);
            return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line, "Duplicate definition of function '%s'",
                              t);
        }
    PUSH(p->entries, p->nentries, p->cap_entries, e);
    e->max_threads = 1024;
    t = next_token(lx);
    if (strcmp(t, "(") == 0) {
        t = next_token(lx);
        if (strcmp(t, ")") != 0) {
            for (;;) {
                if (strcmp(t, ".param") != 0)
                    return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line,
                                      "syntax error: expected .param in the parameters of '%s', got '%s'", e->name, t);
                if (e->nparams == MAX_ENTRY_PARAMS)
                    return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line, "too many parameters");
                char name[160], term;
                unsigned size, align;
                if (!parse_declaration(lx, p, ".param", &size, &align, name, sizeof name, &term))
                    return false;
                e->size[e->nparams] = size;
                e->align[e->nparams] = align;
                e->nparams++;
                if (term == ')')
                    break;
                if (term != ',')
                    return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->tok_line,
                                      "syntax error in the parameters of '%s'", e->name);
                t = next_token(lx);
            }
        }
        t = next_token(lx);
    }
    /* performance directives up to the body */
    while (t[0] && strcmp(t, "{") != 0 && strcmp(t, ";") != 0) {
        if (strcmp(t, ".maxntid") == 0 || strcmp(t, ".reqntid") == 0) {
            long n = 1;
            for (;;) {
                n *= strtol(next_token(lx), NULL, 0);
                size_t save = lx->pos;
                int save_line = lx->line;
                if (strcmp(next_token(lx), ",") != 0) {
                    lx->pos = save, lx->line = save_line;
                    break;
                }
            }
            if (n > 0 && n < e->max_threads)
                e->max_threads = (int)n;
        }
        t = next_token(lx);
    }
    if (strcmp(t, "{") != 0) {
        e->prototype = true; /* a declaration without a body */
        return true;
    }
    int depth = 1;
    while (depth > 0) {
        t = next_token(lx);
        if (!t[0])
            return parse_fail(p, CUDA_ERROR_INVALID_PTX, lx->line, "syntax error: '%s' has no closing '}'", e->name);
        if (strcmp(t, "{") == 0) {
            depth++;
        } else if (strcmp(t, "}") == 0) {
            depth--;
        } else if (strcmp(t, ".shared") == 0) {
            char name[160], term;
            unsigned size, align;
            if (!parse_declaration(lx, p, ".shared", &size, &align, name, sizeof name, &term))
                return false;
            e->static_shared += (int)size;
        } else {
            for (int i = 0; i < p->nshared; i++)
                if (p->shared[i].bytes && strcmp(p->shared[i].name, t) == 0) {
                    e->static_shared += (int)p->shared[i].bytes;
                    p->shared[i].bytes = 0; /* count each module-scope array once per entry */
                }
        }
    }
    return true; /* parse_ptx restores the module-scope sizes zeroed above */
}

/* Parses the whole module; false with p->log/p->status on rejection. */
static bool parse_ptx(const char *text, Parse *p)
{
    /* blank out comments, keeping newlines for line numbers */
    size_t len = strlen(text);
    char *s = malloc(len + 1);
    if (!s)
        return parse_fail(p, CUDA_ERROR_OUT_OF_MEMORY, 0, "out of memory");
    memcpy(s, text, len + 1);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '/' && s[i + 1] == '/') {
            while (i < len && s[i] != '\n')
                s[i++] = ' ';
        } else if (s[i] == '/' && s[i + 1] == '*') {
            while (i < len && !(s[i] == '*' && s[i + 1] == '/')) {
                if (s[i] != '\n')
                    s[i] = ' ';
                i++;
            }
            if (i < len)
                s[i] = s[i + 1] = ' ';
        } else if (s[i] == '"') {
            for (i++; i < len && s[i] != '"' && s[i] != '\n'; i++) {}
        }
    }
    Lexer lx = {s, 0, 1, {0}, 1};
    bool ok = true;
    int depth = 0;
    bool seen_version = false, seen_target = false;
    /* module-scope shared arrays must be known before entries use them: a
       first pass collects them */
    for (const char *t = next_token(&lx); t[0] && ok; t = next_token(&lx)) {
        if (strcmp(t, "{") == 0)
            depth++;
        else if (strcmp(t, "}") == 0)
            depth--;
        else if (depth == 0 && strcmp(t, ".shared") == 0) {
            ModShared m;
            unsigned align;
            char term;
            ok = parse_declaration(&lx, p, ".shared", &m.bytes, &align, m.name, sizeof m.name, &term);
            if (ok)
                PUSH(p->shared, p->nshared, p->cap_shared, m);
        }
    }
    ModShared *saved = NULL;
    if (ok && p->nshared) {
        saved = malloc((size_t)p->nshared * sizeof *saved);
        if (!saved)
            ok = parse_fail(p, CUDA_ERROR_OUT_OF_MEMORY, 0, "out of memory");
        else
            memcpy(saved, p->shared, (size_t)p->nshared * sizeof *saved);
    }
    lx.pos = 0, lx.line = 1, depth = 0;
    for (const char *t = next_token(&lx); t[0] && ok; t = next_token(&lx)) {
        if (strcmp(t, "{") == 0) {
            depth++;
        } else if (strcmp(t, "}") == 0) {
            depth--;
        } else if (depth != 0) {
            continue;
        } else if (strcmp(t, ".version") == 0) {
            int line = lx.tok_line;
            const char *v = next_token(&lx);
            if (sscanf(v, "%d.%d", &p->version_major, &p->version_minor) != 2)
                ok = parse_fail(p, CUDA_ERROR_INVALID_PTX, line, "syntax error in .version '%s'", v);
            else if (p->version_major > PTX_MAX_VERSION_MAJOR ||
                     (p->version_major == PTX_MAX_VERSION_MAJOR && p->version_minor > PTX_MAX_VERSION_MINOR))
                ok = parse_fail(p, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, line,
                                "Unsupported .version %d.%d; current version is '%d.%d'", p->version_major,
                                p->version_minor, PTX_MAX_VERSION_MAJOR, PTX_MAX_VERSION_MINOR);
            seen_version = true;
        } else if (strcmp(t, ".target") == 0) {
            int line = lx.tok_line;
            const char *v = next_token(&lx);
            if (strncmp(v, "sm_", 3) != 0 || !isdigit((unsigned char)v[3]))
                ok = parse_fail(p, CUDA_ERROR_INVALID_PTX, line, "Unknown target '%s'", v);
            else {
                p->target_sm = atoi(v + 3);
                if (p->target_sm > DEVICE_SM)
                    ok = parse_fail(p, CUDA_ERROR_INVALID_PTX, line,
                                    "SM version specified by .target is higher than default SM version assumed");
            }
            seen_target = true;
        } else if (strcmp(t, ".address_size") == 0) {
            int line = lx.tok_line;
            if (strcmp(next_token(&lx), "64") != 0)
                ok = parse_fail(p, CUDA_ERROR_INVALID_PTX, line, ".address_size must be 64 on this device");
        } else if (strcmp(t, ".entry") == 0) {
            if (!seen_version || !seen_target)
                ok = parse_fail(p, CUDA_ERROR_INVALID_PTX, lx.tok_line,
                                "a .version and a .target directive must come before any .entry");
            else
                ok = parse_entry(&lx, p);
            if (saved)
                memcpy(p->shared, saved, (size_t)p->nshared * sizeof *saved);
        }
    }
    if (ok && (!seen_version || !seen_target))
        ok = parse_fail(p, CUDA_ERROR_INVALID_PTX, lx.line, "missing .version or .target directive (not PTX?)");
    free(saved);
    free(s);
    return ok;
}

/* ----------------------------------------------------------- modules */

/* Validates the JIT options; fills the logs and output values at the end. */
typedef struct JitOptions {
    char *info, *error;
    size_t info_size, error_size;
    int info_slot, error_slot, wall_slot;
    bool verbose;
} JitOptions;

static CUresult read_jit_options(const char *fn, unsigned n, CUjit_option *opts, void **values, JitOptions *o)
{
    memset(o, 0, sizeof *o);
    o->info_slot = o->error_slot = o->wall_slot = -1;
    if (n == 0)
        return CUDA_SUCCESS;
    if (!opts || !values)
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "%u options but options or optionValues is NULL", n);
    if (!probe(opts, n * sizeof *opts, false) || !probe(values, n * sizeof *values, false))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "options/optionValues arrays are not readable for %u entries", n);
    bool info_buf = false, error_buf = false;
    for (unsigned i = 0; i < n; i++) {
        switch (opts[i]) {
        case CU_JIT_INFO_LOG_BUFFER: o->info = values[i], info_buf = true; break;
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: o->info_size = (size_t)(uintptr_t)values[i], o->info_slot = (int)i; break;
        case CU_JIT_ERROR_LOG_BUFFER: o->error = values[i], error_buf = true; break;
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: o->error_size = (size_t)(uintptr_t)values[i], o->error_slot = (int)i; break;
        case CU_JIT_WALL_TIME: o->wall_slot = (int)i; break;
        case CU_JIT_LOG_VERBOSE: o->verbose = values[i] != NULL; break;
        case CU_JIT_MAX_REGISTERS: case CU_JIT_THREADS_PER_BLOCK: case CU_JIT_OPTIMIZATION_LEVEL:
        case CU_JIT_TARGET_FROM_CUCONTEXT: case CU_JIT_TARGET: case CU_JIT_FALLBACK_STRATEGY:
        case CU_JIT_GENERATE_DEBUG_INFO: case CU_JIT_GENERATE_LINE_INFO: case CU_JIT_CACHE_MODE:
            break;
        default:
            if (opts[i] < 0 || opts[i] > 40)
                return violation(CUDA_ERROR_INVALID_VALUE, fn, "option %u: unknown CUjit_option %d", i, opts[i]);
        }
    }
    if (info_buf != (o->info_slot >= 0) || error_buf != (o->error_slot >= 0))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "a log buffer and its _SIZE_BYTES option must be given together");
    if ((o->info_size && !probe(o->info, o->info_size, true)) || (o->error_size && !probe(o->error, o->error_size, true)))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "a log buffer is not writable for its stated size");
    return CUDA_SUCCESS;
}

static void write_log(char *buf, size_t size, int slot, void **values, const char *text)
{
    size_t written = 0;
    if (buf && size) {
        snprintf(buf, size, "%s", text);
        written = strlen(buf);
    }
    if (slot >= 0)
        values[slot] = (void *)(uintptr_t)written;
}

static void finish_jit_options(JitOptions *o, void **values, const char *info, const char *error)
{
    write_log(o->info, o->info_size, o->info_slot, values, info);
    write_log(o->error, o->error_size, o->error_slot, values, error);
    if (o->wall_slot >= 0) {
        float ms = 0.25f;
        memcpy(&values[o->wall_slot], &ms, sizeof ms);
    }
}

/* Whether image is the output of a live link that added a library. */
static bool linked_with_library(const void *image)
{
    for (int i = 0; i < nlinks; i++)
        if (links[i]->live && links[i]->ptx == image)
            return links[i]->has_library;
    return false;
}

/* Loads PTX text as a module of the current context. */
static CUresult load_module(const char *fn, CUmodule *out, const char *image, JitOptions *o, void **values)
{
    if (!probe(image, 1, false))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "image %p is not readable", (const void *)image);
    if ((unsigned char)image[0] == 0x7f && strncmp(image + 1, "ELF", 3) == 0) {
        finish_jit_options(o, values, "", "fake_libcuda: only PTX text is supported, not cubin");
        return CUDA_ERROR_INVALID_IMAGE;
    }
    /* PTX must be NUL-terminated text: look for the NUL, checking each page is readable */
    size_t n = 0;
    for (;;) {
        if (((uintptr_t)(image + n) & 4095) == 0 && !probe(image + n, 1, false))
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "PTX image is not NUL-terminated (unreadable at byte %zu)", n);
        unsigned char c = (unsigned char)image[n];
        if (!c)
            break;
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r' && c != '\f' && c != '\v')
            return violation(CUDA_ERROR_INVALID_VALUE, fn,
                             "image is neither PTX text nor a known binary (byte 0x%02x at offset %zu)", c, n);
        n++;
    }
    /* PTX calling the CUDA device runtime (a kernel that launches kernels)
    ** has unresolved extern functions: the JIT alone rejects it; it loads
    ** only as the output of a link that added libcudadevrt */
    const char *devrt = strstr(image, "__cudaCDP2");
    if (devrt && !linked_with_library(image)) {
        char log[200];
        int len = (int)strspn(devrt, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        snprintf(log, sizeof log, "ptxas fatal   : Unresolved extern function '%.*s'", len < 80 ? len : 80, devrt);
        finish_jit_options(o, values, "", log);
        return CUDA_ERROR_INVALID_PTX;
    }
    Parse p;
    memset(&p, 0, sizeof p);
    if (!parse_ptx(image, &p)) {
        finish_jit_options(o, values, "", p.log);
        for (int i = 0; i < p.nentries; i++) {
            free(p.entries[i]->name);
            free(p.entries[i]);
        }
        free(p.entries);
        free(p.shared);
        return p.status;
    }
    Module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->loaded = true, m->ctx = current, m->nentries = p.nentries, m->entries = p.entries;
    char info[2048] = "";
    size_t il = 0;
    for (int i = 0; i < p.nentries; i++) {
        Entry *e = p.entries[i];
        e->module = m;
        if (e->static_shared > shared_per_block())
            e->max_dynamic_shared = 0;
        else
            e->max_dynamic_shared = shared_per_block() - e->static_shared;
        if (o->verbose && il < sizeof info)
            il += (size_t)snprintf(info + il, sizeof info - il,
                                   "%sptxas info    : Compiling entry function '%s' for 'sm_%d'\n"
                                   "ptxas info    : Used 32 registers, %d bytes smem",
                                   i ? "\n" : "", e->name, DEVICE_SM, e->static_shared);
    }
    free(p.shared);
    PUSH(modules, nmodules, cap_modules, m);
    log_module("load", m);
    finish_jit_options(o, values, info, "");
    *out = (CUmodule)m;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *out, const void *image, unsigned n, CUjit_option *opts, void **values)
{
    ENTER();
    NEED_CTX("cuModuleLoadDataEx");
    if (!out || !image)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadDataEx", "NULL module or image"));
    JitOptions o;
    CUresult r = read_jit_options("cuModuleLoadDataEx", n, opts, values, &o);
    if (r == CUDA_SUCCESS)
        r = load_module("cuModuleLoadDataEx", out, image, &o, values);
    RETURN(r);
}

static Module *find_module(const char *fn, CUmodule mod, CUresult *r)
{
    for (int i = 0; i < nmodules; i++)
        if ((CUmodule)modules[i] == mod) {
            if (!modules[i]->loaded) {
                *r = violation(CUDA_ERROR_INVALID_HANDLE, fn, "module %p was unloaded", (void *)mod);
                return NULL;
            }
            if (modules[i]->ctx != current) {
                *r = violation(CUDA_ERROR_INVALID_CONTEXT, fn, "module %p belongs to another context", (void *)mod);
                return NULL;
            }
            *r = CUDA_SUCCESS;
            return modules[i];
        }
    *r = violation(CUDA_ERROR_INVALID_HANDLE, fn, "%p is not a module", (void *)mod);
    return NULL;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *out, CUmodule mod, const char *name)
{
    ENTER();
    NEED_CTX("cuModuleGetFunction");
    if (!out || !name)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuModuleGetFunction", "NULL function or name"));
    CUresult r;
    Module *m = find_module("cuModuleGetFunction", mod, &r);
    if (!m)
        RETURN(r);
    for (int i = 0; i < m->nentries; i++)
        if (strcmp(m->entries[i]->name, name) == 0) {
            *out = (CUfunction)m->entries[i];
            RETURN(CUDA_SUCCESS);
        }
    RETURN(CUDA_ERROR_NOT_FOUND); /* a legitimate answer */
}

EXPORT CUresult cuModuleUnload(CUmodule mod)
{
    ENTER();
    NEED_CTX("cuModuleUnload");
    CUresult r;
    Module *m = find_module("cuModuleUnload", mod, &r);
    if (m) {
        m->loaded = false;
        log_module("unload", m);
    }
    RETURN(r);
}

EXPORT CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    ENTER();
    NEED_CTX("cuFuncGetAttribute");
    if (!v)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute", "NULL value"));
    CUresult r;
    Entry *e = find_function("cuFuncGetAttribute", f, &r);
    if (!e)
        RETURN(r);
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = e->max_threads; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = e->static_shared; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 32; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = e->max_dynamic_shared; break;
    default: RETURN(CUDA_ERROR_INVALID_VALUE);
    }
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    ENTER();
    NEED_CTX("cuFuncSetAttribute");
    CUresult r;
    Entry *e = find_function("cuFuncSetAttribute", f, &r);
    if (!e)
        RETURN(r);
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute", "attribute %d cannot be set by this fake", a));
    if (v < 0 || v > SHARED_OPTIN - e->static_shared)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute",
                         "MAX_DYNAMIC_SHARED_SIZE_BYTES %d is more than the opt-in limit %d minus the static %d", v,
                         SHARED_OPTIN, e->static_shared));
    e->max_dynamic_shared = v;
    RETURN(CUDA_SUCCESS);
}

/* ------------------------------------------------------------ launch */

static bool sticky(CUresult r)
{
    return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ASSERT ||
           r == CUDA_ERROR_MISALIGNED_ADDRESS || r == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
           r == CUDA_ERROR_HARDWARE_STACK_ERROR || r == CUDA_ERROR_INVALID_PC || r == CUDA_ERROR_LAUNCH_TIMEOUT ||
           r == CUDA_ERROR_INVALID_ADDRESS_SPACE;
}

/* Reads the parameters from kernelParams (one pointer each, then the NULL
** gpy puts after the last) into the record. */
static CUresult read_kernel_params(const Entry *e, void **params, FakeLaunch *rec)
{
    const char *fn = "cuLaunchKernel";
    /* slot by slot, never past the first NULL: a shorter array ends there */
    for (int i = 0; i < e->nparams; i++) {
        if (!probe(&params[i], sizeof *params, false))
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "kernelParams[%d] of '%s' is not readable", i, e->name);
        if (!params[i])
            return violation(CUDA_ERROR_INVALID_VALUE, fn,
                             "kernelParams has %d entries (NULL at index %d) but .entry %s has %d parameters", i, i,
                             e->name, e->nparams);
        if (!probe(params[i], e->size[i], false))
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "kernelParams[%d] of '%s' (%u bytes) is not readable", i,
                             e->name, e->size[i]);
        if (rec->nbytes + e->size[i] > sizeof rec->bytes)
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "parameters of '%s' exceed %d bytes", e->name,
                             FAKE_CUDA_MAX_PARAM_BYTES);
        rec->param_offset[i] = (unsigned)rec->nbytes;
        rec->param_size[i] = e->size[i];
        memcpy(rec->bytes + rec->nbytes, params[i], e->size[i]);
        rec->nbytes += e->size[i];
    }
    if (!probe(&params[e->nparams], sizeof *params, false))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "kernelParams of '%s' lacks the closing NULL (unreadable)",
                         e->name);
    if (params[e->nparams] != NULL)
        return violation(CUDA_ERROR_INVALID_VALUE, fn,
                         "kernelParams has more than the %d parameters of .entry %s (kernelParams[%d] is not the "
                         "closing NULL)",
                         e->nparams, e->name, e->nparams);
    return CUDA_SUCCESS;
}

/* Reads the parameters from extra's packed buffer (each at its alignment). */
static CUresult read_extra_params(const Entry *e, void **extra, FakeLaunch *rec)
{
    const char *fn = "cuLaunchKernel";
    void *buffer = NULL;
    size_t *size = NULL;
    for (int i = 0;; i += 2) {
        if (i > 16)
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "extra is not terminated by CU_LAUNCH_PARAM_END");
        if (!probe(&extra[i], sizeof *extra, false))
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "extra is not readable");
        if (extra[i] == CU_LAUNCH_PARAM_END)
            break;
        if (!probe(&extra[i + 1], sizeof *extra, false))
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "extra is not readable");
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buffer = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = extra[i + 1];
        else
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "extra[%d] is not a CU_LAUNCH_PARAM_* marker", i);
    }
    if (!buffer || !size || !probe(size, sizeof *size, false))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "extra needs both BUFFER_POINTER and BUFFER_SIZE");
    size_t off = 0;
    for (int i = 0; i < e->nparams; i++) {
        off = (off + e->align[i] - 1) / e->align[i] * e->align[i];
        if (off + e->size[i] > *size)
            return violation(CUDA_ERROR_INVALID_VALUE, fn, "extra's buffer of %zu bytes is too small for '%s'", *size,
                             e->name);
        rec->param_offset[i] = (unsigned)rec->nbytes;
        rec->param_size[i] = e->size[i];
        rec->nbytes += e->size[i];
        off += e->size[i];
    }
    if (!probe(buffer, *size, false))
        return violation(CUDA_ERROR_INVALID_VALUE, fn, "extra's buffer is not readable");
    off = 0;
    for (int i = 0; i < e->nparams; i++) {
        off = (off + e->align[i] - 1) / e->align[i] * e->align[i];
        memcpy(rec->bytes + rec->param_offset[i], (char *)buffer + off, e->size[i]);
        off += e->size[i];
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    const char *fn = "cuLaunchKernel";
    ENTER();
    NEED_CTX("cuLaunchKernel");
    CUresult r;
    Entry *e = find_function(fn, f, &r);
    if (!e)
        RETURN(r);
    if (e->module->ctx != current)
        RETURN(violation(CUDA_ERROR_INVALID_CONTEXT, fn, "'%s' belongs to another context", e->name));
    if (!gx || !gy || !gz || !bx || !by || !bz)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn, "'%s': a zero grid or block dimension", e->name));
    if (bx > 1024 || by > 1024 || bz > 64)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn, "'%s': block (%u, %u, %u) exceeds (1024, 1024, 64)", e->name,
                         bx, by, bz));
    if ((unsigned long long)bx * by * bz > (unsigned long long)e->max_threads)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn, "'%s': block of %llu threads exceeds the limit %d", e->name,
                         (unsigned long long)bx * by * bz, e->max_threads));
    if (gx > 2147483647u || gy > 65535 || gz > 65535)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn, "'%s': grid (%u, %u, %u) exceeds (2^31-1, 65535, 65535)",
                         e->name, gx, gy, gz));
    if ((int)shared < 0 || (int)shared > e->max_dynamic_shared)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn,
                         "'%s': %u bytes of dynamic shared memory exceed its limit of %d "
                         "(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; static %d)",
                         e->name, shared, e->max_dynamic_shared, e->static_shared));
    r = check_stream(fn, s);
    if (r != CUDA_SUCCESS)
        RETURN(r);
    if (params && extra)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn, "both kernelParams and extra are given"));
    static FakeLaunch rec; /* under the lock */
    memset(&rec, 0, offsetof(FakeLaunch, bytes));
    snprintf(rec.entry, sizeof rec.entry, "%s", e->name);
    rec.grid[0] = gx, rec.grid[1] = gy, rec.grid[2] = gz;
    rec.block[0] = bx, rec.block[1] = by, rec.block[2] = bz;
    rec.shared_bytes = shared;
    rec.stream = s;
    rec.nparams = e->nparams;
    if (e->nparams > 0 && !params && !extra)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn, "'%s' has %d parameters but neither kernelParams nor extra is given",
                         e->name, e->nparams));
    if (params)
        r = read_kernel_params(e, params, &rec);
    else if (extra)
        r = read_extra_params(e, extra, &rec);
    if (r != CUDA_SUCCESS)
        RETURN(r);
    /* 8-byte parameters holding fake device addresses must point into live memory */
    for (int i = 0; i < e->nparams; i++) {
        if (e->size[i] != 8)
            continue;
        uint64_t v;
        memcpy(&v, rec.bytes + rec.param_offset[i], 8);
        if (!in_fake_range(v))
            continue;
        Alloc *a = find_alloc(v);
        if (!a && v > FAKE_BASE)
            a = find_alloc(v - 1); /* one past the end (an empty view) is fine */
        if (!a || !a->live)
            RETURN(violation(CUDA_ERROR_INVALID_VALUE, fn,
                             "parameter %d of '%s' is device address 0x%llx, which is %s (it would fault on a GPU)",
                             i, e->name, (unsigned long long)v, a ? "freed memory" : "in no allocation"));
    }
    launch_calls++;
    if (!injected && env_long("FAKE_CUDA_FAIL_LAUNCH", 0) == launch_calls)
        injected = (CUresult)env_long("FAKE_CUDA_FAIL_CODE", CUDA_ERROR_ILLEGAL_ADDRESS);
    if (injected) {
        CUresult code = injected;
        injected = CUDA_SUCCESS;
        if (!sticky(code))
            RETURN(code);
        current->poisoned = code;
        if (env_long("FAKE_CUDA_STICKY_FATAL", 0) == 1)
            process_poisoned = code;
    }
    FakeLaunch *slot = &launches[nlaunches % LAUNCHES_KEPT];
    memcpy(slot, &rec, offsetof(FakeLaunch, bytes));
    memcpy(slot->bytes, rec.bytes, rec.nbytes);
    nlaunches++;
    log_launch(&rec);
    RETURN(CUDA_SUCCESS);
}

/* ------------------------------------------------------------ linking
** Enough of cuLink* for gpy's "PTX + libcudadevrt" path: the "cubin" it
** produces is the PTX text itself, which cuModuleLoadDataEx accepts. */

static Link *find_link(CUlinkState st)
{
    for (int i = 0; i < nlinks; i++)
        if ((CUlinkState)links[i] == st && links[i]->live)
            return links[i];
    return NULL;
}

EXPORT CUresult cuLinkCreate_v2(unsigned n, CUjit_option *opts, void **values, CUlinkState *out)
{
    ENTER();
    NEED_CTX("cuLinkCreate_v2");
    if (!out)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuLinkCreate_v2", "NULL state"));
    JitOptions o;
    CUresult r = read_jit_options("cuLinkCreate_v2", n, opts, values, &o);
    if (r != CUDA_SUCCESS)
        RETURN(r);
    finish_jit_options(&o, values, "", "");
    Link *l = calloc(1, sizeof *l);
    if (!l)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    l->live = true;
    PUSH(links, nlinks, cap_links, l);
    *out = (CUlinkState)l;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuLinkAddData_v2(CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name,
                                 unsigned n, CUjit_option *opts, void **values)
{
    (void)name, (void)opts, (void)values;
    ENTER();
    NEED_CTX("cuLinkAddData_v2");
    Link *l = find_link(st);
    if (!l)
        RETURN(violation(CUDA_ERROR_INVALID_HANDLE, "cuLinkAddData_v2", "%p is not a live link state", (void *)st));
    if (type != CU_JIT_INPUT_PTX || !data || size == 0 || n != 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuLinkAddData_v2", "this fake links one PTX input (type %d, size %zu)",
                         type, size));
    if (!probe(data, size, false) || ((char *)data)[size - 1] != '\0')
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuLinkAddData_v2", "PTX data must be readable and end with NUL"));
    free(l->ptx);
    l->ptx = strdup(data);
    RETURN(l->ptx ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

EXPORT CUresult cuLinkAddFile_v2(CUlinkState st, CUjitInputType type, const char *path, unsigned n,
                                 CUjit_option *opts, void **values)
{
    (void)opts, (void)values;
    ENTER();
    NEED_CTX("cuLinkAddFile_v2");
    Link *l = find_link(st);
    if (!l)
        RETURN(violation(CUDA_ERROR_INVALID_HANDLE, "cuLinkAddFile_v2", "%p is not a live link state", (void *)st));
    if (type != CU_JIT_INPUT_LIBRARY || !path || n != 0)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuLinkAddFile_v2", "this fake links a library file only"));
    if (access(path, R_OK) != 0)
        RETURN(CUDA_ERROR_FILE_NOT_FOUND);
    l->has_library = true;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuLinkComplete(CUlinkState st, void **cubin, size_t *size)
{
    ENTER();
    NEED_CTX("cuLinkComplete");
    Link *l = find_link(st);
    if (!l || !cubin || !size)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuLinkComplete", "bad state or NULL outputs"));
    if (!l->ptx)
        RETURN(violation(CUDA_ERROR_INVALID_VALUE, "cuLinkComplete", "nothing was added"));
    *cubin = l->ptx;
    *size = strlen(l->ptx) + 1;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuLinkDestroy(CUlinkState st)
{
    ENTER();
    NEED_CTX("cuLinkDestroy");
    Link *l = find_link(st);
    if (!l)
        RETURN(violation(CUDA_ERROR_INVALID_HANDLE, "cuLinkDestroy", "%p is not a live link state", (void *)st));
    l->live = false;
    free(l->ptx);
    l->ptx = NULL;
    RETURN(CUDA_SUCCESS);
}

/* ---------------------------------------------------- test functions */

EXPORT long fake_cuda_launch_count(void)
{
    ENTER();
    long n = nlaunches;
    pthread_mutex_unlock(&lock);
    return n;
}

EXPORT int fake_cuda_get_launch(int back, FakeLaunch *out)
{
    ENTER();
    int rc = -1;
    if (back >= 0 && back < LAUNCHES_KEPT && back < nlaunches) {
        *out = launches[(nlaunches - 1 - back) % LAUNCHES_KEPT];
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT int fake_cuda_violations(void)
{
    ENTER();
    int n = nviolations;
    pthread_mutex_unlock(&lock);
    return n;
}

EXPORT const char *fake_cuda_violation(int i)
{
    ENTER();
    int kept = nviolations < MAX_VIOLATIONS_KEPT ? nviolations : MAX_VIOLATIONS_KEPT;
    int first = nviolations - kept;
    const char *m = i >= 0 && i < kept ? violations[(first + i) % MAX_VIOLATIONS_KEPT] : NULL;
    pthread_mutex_unlock(&lock);
    return m;
}

EXPORT const char *fake_cuda_last_violation(void)
{
    ENTER();
    const char *m = nviolations ? violations[(nviolations - 1) % MAX_VIOLATIONS_KEPT] : NULL;
    pthread_mutex_unlock(&lock);
    return m;
}

EXPORT void fake_cuda_clear_violations(void)
{
    ENTER();
    for (int i = 0; i < MAX_VIOLATIONS_KEPT; i++) {
        free(violations[i]);
        violations[i] = NULL;
    }
    nviolations = 0;
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_inject_error(int code)
{
    ENTER();
    injected = code;
    pthread_mutex_unlock(&lock);
}

EXPORT size_t fake_cuda_live_bytes(void)
{
    ENTER();
    size_t n = used_bytes;
    pthread_mutex_unlock(&lock);
    return n;
}

EXPORT int fake_cuda_live_allocations(void)
{
    ENTER();
    int n = 0;
    for (int i = 0; i < nallocs; i++)
        n += allocs[i].live && allocs[i].kind == K_DEVICE;
    for (int i = 0; i < nmanaged; i++)
        n += managed[i].live;
    pthread_mutex_unlock(&lock);
    return n;
}
