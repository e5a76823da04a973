/*
** cuda_driver.h — the CUDA driver API as gpy uses it, with no build-time
** CUDA dependency.
**
** libcuda.so.1 (or the file named by the environment variable GPY_LIBCUDA)
** is opened with dlopen on first use; its entry points are resolved once per
** process into a read-only table (the only process-wide state, created under
** a mutex and never freed). Everything else hangs off a GpuCuda handle — one
** per VM — which holds the selected device's primary context and properties.
** This file knows nothing of the VM: tests/gpu/cuda_driver_test.c links it
** alone.
**
** Conventions
**   - Every function that can fail returns an int status: 0 on success; a
**     positive CUresult when the driver failed; a negative GPU_CUDA_E* code
**     when gpy refused the call before reaching the driver (launch limits,
**     bad arguments) or could not load the driver. The message goes to
**     err[errsize] (may be NULL/0); GPU_CUDA_ERRSIZE is a good size.
**   - Driver failures read "CUDA_ERROR_OUT_OF_MEMORY: out of memory"
**     (cuGetErrorName + ": " + cuGetErrorString), with a context suffix where
**     useful (the PTX JIT log, the kernel name). After a sticky error
**     (gpu_cuda_is_sticky: illegal address, launch failure, ...) the message
**     ends with GPU_CUDA_STICKY_NOTE and gpu_cuda_broken() turns true: every
**     later call on that context fails until gpu_cuda_reset().
**   - Calls make the handle's context current on the calling thread first
**     (a cheap check), so a handle may be used from any one thread at a time.
**   - Sizes of zero are fine everywhere (no driver call is made).
**
** Typical use (the cuda module):
**   c = gpu_cuda_open(0, &st, err, sizeof err);                 once per VM
**   gpu_cuda_module_load_ptx(c, k->ptx, &mod, NULL, 0, err, n);  per compiled kernel
**   gpu_cuda_get_function(c, mod, k->entry, &fn, err, n);
**   pb = gpu_cuda_params_new(k->nparams, sizes);                 its launch plan
**   per launch: store each value at gpu_cuda_param_slot(pb, i), then
**   gpu_cuda_launch(c, &fn, &(GpuCudaLaunch){grid, block, shared, stream, pb->ptrs}, err, n);
** Device memory: gpu_cuda_malloc/free and the memcpy functions; a finalizer
** may call gpu_cuda_free after a sticky error (it fails harmlessly).
*/
#ifndef GPY_CUDA_DRIVER_H
#define GPY_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "cuda_abi.h"

#define GPU_CUDA_ERRSIZE 4096

/* Status codes gpy produces itself (driver failures are positive CUresults). */
enum {
    GPU_CUDA_ENOLIB = -1,  /* the driver library is missing or lacks an entry point */
    GPU_CUDA_ELIMIT = -2,  /* a launch configuration exceeds the device/kernel limits */
    GPU_CUDA_EARG = -3,    /* an invalid argument caught before the driver call */
    GPU_CUDA_ENOMEM = -4,  /* host memory for gpy's own bookkeeping ran out */
    GPU_CUDA_EINTR = -5,   /* a wait ended early: an interrupt was requested (gpu_cuda_set_interrupt) */
};

/* Appended to the message of a sticky error. */
#define GPU_CUDA_STICKY_NOTE \
    " (a sticky error: the CUDA context is unusable until it is reset; device memory, modules, streams and events made before are lost)"

/* What a device is (filled from cuDeviceGetAttribute & co.). */
typedef struct GpuCudaProps {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;           /* compute capability */
    int sm_count;                     /* multiprocessors */
    size_t total_memory;              /* bytes */
    int max_threads_per_block;
    int max_block_dim[3];
    int max_grid_dim[3];
    int max_shared_per_block;         /* bytes per block without opt-in (48 KiB) */
    int max_shared_per_block_optin;   /* bytes per block with opt-in (≥ the above) */
    int warp_size;
    int max_threads_per_sm;
    int max_registers_per_block;
    int clock_khz, memory_clock_khz, memory_bus_width, l2_cache_bytes;
    int pci_domain, pci_bus, pci_device;
    bool integrated, can_map_host, unified_addressing, managed_memory, concurrent_managed_access;
} GpuCudaProps;

typedef struct GpuCuda GpuCuda;

/* ---------------------------------------------------------- the driver */

/* `libcuda` below names the driver library to use (config.libcuda,
** GPY_LIBCUDA in the CLI); NULL: libcuda.so.1. Each library is loaded and
** initialized once per process, whichever thread asks first. */

/* Loads and initializes the driver (cuInit) if not done yet, and tells how
** many devices it sees. Fails with GPU_CUDA_ENOLIB ("libcuda.so.1 not found:
** ...") when there is no driver; *count = 0 (and status 0) when the driver
** works but has no device. */
int gpu_cuda_device_count(const char *libcuda, int *count, char *err, size_t errsize);
/* The driver's CUDA version (e.g. 12040 for 12.4). */
int gpu_cuda_driver_version(const char *libcuda, int *version, char *err, size_t errsize);
/* Properties of device `ordinal` (no context needed). */
int gpu_cuda_device_props(const char *libcuda, int ordinal, GpuCudaProps *props, char *err, size_t errsize);
/* The path the driver library is (or would be) loaded from. */
const char *gpu_cuda_library_path(const char *libcuda);

/* Opens device `ordinal`: retains its primary context, makes it current on
** the calling thread, reads its properties. Returns NULL with the status in
** *status (may be NULL) and a message: "libcuda.so.1 not found: ...",
** "no CUDA device", "CUDA device 3 does not exist (2 devices)". */
GpuCuda *gpu_cuda_open(const char *libcuda, int ordinal, int *status, char *err, size_t errsize);
/* Releases the primary context (the driver destroys it, with everything in
** it, when no one else holds it) and frees the handle. NULL is fine. */
void gpu_cuda_close(GpuCuda *c);
const GpuCudaProps *gpu_cuda_props(const GpuCuda *c);
/* The context (for callers that must compare contexts). */
CUcontext gpu_cuda_context(const GpuCuda *c);
/* Whether a sticky error has hit the context (the CUresult, or 0). */
int gpu_cuda_broken(const GpuCuda *c);
/* Resets the device's primary context (cuDevicePrimaryCtxReset) and retains
** it afresh: the way out of a sticky error. Every pointer, module, function,
** stream and event made before is invalid afterwards — for every handle on
** this device (handles of one device share its primary context). */
int gpu_cuda_reset(GpuCuda *c, char *err, size_t errsize);
/* Whether a CUresult leaves the context unusable (illegal address, launch
** failure, misaligned address, device assert, ...). */
bool gpu_cuda_is_sticky(int status);
/* Formats a status as gpy reports it ("CUDA_ERROR_INVALID_VALUE: invalid
** argument"); negative gpy codes get a generic text. */
void gpu_cuda_describe(int status, char *buf, size_t size);

/* Where the synchronizing calls below look for an interrupt request (the
** VM's flag, non-zero when set; NULL: none). With a flag they poll the work
** (cuStreamQuery / cuEventQuery, sleeping 20 µs growing to 1 ms between
** queries) instead of blocking in the driver, and return GPU_CUDA_EINTR when
** the flag is set; the work goes on on the device. The handle only reads
** the flag. */
void gpu_cuda_set_interrupt(GpuCuda *c, const atomic_int *flag);

/* Waits for all work on the context (cuCtxSynchronize). Interruptible while
** the legacy default stream, and so every blocking stream, has work; work
** only on non-blocking streams is waited for in the driver. */
int gpu_cuda_synchronize(GpuCuda *c, char *err, size_t errsize);

/* -------------------------------------------------------------- memory */

int gpu_cuda_mem_info(GpuCuda *c, size_t *free_bytes, size_t *total_bytes, char *err, size_t errsize);
/* Device memory. bytes 0 gives *out = 0 (and freeing 0 does nothing). */
int gpu_cuda_malloc(GpuCuda *c, size_t bytes, CUdeviceptr *out, char *err, size_t errsize);
int gpu_cuda_free(GpuCuda *c, CUdeviceptr p, char *err, size_t errsize);
/* Page-locked host memory (cuda.pinned_array); mapped = also visible to the
** device (cuda.mapped_array), whose address gpu_cuda_host_device_pointer gives. */
int gpu_cuda_host_alloc(GpuCuda *c, size_t bytes, bool mapped, void **out, char *err, size_t errsize);
int gpu_cuda_host_free(GpuCuda *c, void *p, char *err, size_t errsize);
int gpu_cuda_host_device_pointer(GpuCuda *c, void *host, CUdeviceptr *out, char *err, size_t errsize);
/* Managed (unified) memory: the same address works on host and device.
** Freed with gpu_cuda_free. */
int gpu_cuda_managed_alloc(GpuCuda *c, size_t bytes, CUdeviceptr *out, char *err, size_t errsize);

/* Copies. The synchronous ones return when the copy is done; the _async
** ones are ordered on `stream` (NULL = the default stream) and the host
** buffer must stay alive (and, to be truly asynchronous, pinned) until the
** stream is synchronized. */
int gpu_cuda_memcpy_htod(GpuCuda *c, CUdeviceptr dst, const void *src, size_t n, char *err, size_t errsize);
int gpu_cuda_memcpy_dtoh(GpuCuda *c, void *dst, CUdeviceptr src, size_t n, char *err, size_t errsize);
int gpu_cuda_memcpy_dtod(GpuCuda *c, CUdeviceptr dst, CUdeviceptr src, size_t n, char *err, size_t errsize);
int gpu_cuda_memset(GpuCuda *c, CUdeviceptr dst, unsigned char value, size_t n, char *err, size_t errsize);
int gpu_cuda_memcpy_htod_async(GpuCuda *c, CUdeviceptr dst, const void *src, size_t n, CUstream s,
                               char *err, size_t errsize);
int gpu_cuda_memcpy_dtoh_async(GpuCuda *c, void *dst, CUdeviceptr src, size_t n, CUstream s,
                               char *err, size_t errsize);
int gpu_cuda_memcpy_dtod_async(GpuCuda *c, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s,
                               char *err, size_t errsize);
int gpu_cuda_memset_async(GpuCuda *c, CUdeviceptr dst, unsigned char value, size_t n, CUstream s,
                          char *err, size_t errsize);

/* ---------------------------------------------------- streams & events */

/* nonblocking: does not synchronize with the legacy default stream. */
int gpu_cuda_stream_create(GpuCuda *c, bool nonblocking, CUstream *out, char *err, size_t errsize);
int gpu_cuda_stream_synchronize(GpuCuda *c, CUstream s, char *err, size_t errsize);
/* *done = whether all work queued on s has finished. */
int gpu_cuda_stream_query(GpuCuda *c, CUstream s, bool *done, char *err, size_t errsize);
int gpu_cuda_stream_destroy(GpuCuda *c, CUstream s, char *err, size_t errsize);
/* Work queued on s after this waits until event e has completed (e.wait(s)). */
int gpu_cuda_stream_wait_event(GpuCuda *c, CUstream s, CUevent e, char *err, size_t errsize);

/* timing: the event can be used with gpu_cuda_event_elapsed. */
int gpu_cuda_event_create(GpuCuda *c, bool timing, CUevent *out, char *err, size_t errsize);
int gpu_cuda_event_record(GpuCuda *c, CUevent e, CUstream s, char *err, size_t errsize);
int gpu_cuda_event_synchronize(GpuCuda *c, CUevent e, char *err, size_t errsize);
int gpu_cuda_event_query(GpuCuda *c, CUevent e, bool *done, char *err, size_t errsize);
/* Milliseconds between two recorded, completed timing events. */
int gpu_cuda_event_elapsed(GpuCuda *c, CUevent start, CUevent end, float *ms, char *err, size_t errsize);
int gpu_cuda_event_destroy(GpuCuda *c, CUevent e, char *err, size_t errsize);

/* ------------------------------------------------- modules & functions */

/* Loads NUL-terminated PTX text (cuModuleLoadDataEx, target from the
** context). When the driver rejects it, the message carries its error log:
** "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed\nptxas ...". The
** JIT info log (register use, ...) is copied to info_log (may be NULL). */
int gpu_cuda_module_load_ptx(GpuCuda *c, const char *ptx, CUmodule *out, char *info_log, size_t info_size,
                             char *err, size_t errsize);
/* Like gpu_cuda_module_load_ptx, but links the PTX with a device library
** (libcudadevrt.a, for kernels that launch kernels) through cuLink*.
** GPU_CUDA_ENOLIB when the driver lacks the cuLink entry points. */
int gpu_cuda_module_link_ptx(GpuCuda *c, const char *ptx, const char *library_path, CUmodule *out,
                             char *info_log, size_t info_size, char *err, size_t errsize);
int gpu_cuda_module_unload(GpuCuda *c, CUmodule m, char *err, size_t errsize);
/* The device address and size of a module's global variable (cuModuleGetGlobal;
** the debug-mode error record). GPU_CUDA_ENOLIB when the driver lacks it. */
int gpu_cuda_module_get_global(GpuCuda *c, CUmodule m, const char *name, CUdeviceptr *dptr, size_t *bytes,
                               char *err, size_t errsize);
/* Finds the toolkit's device runtime (libcudadevrt.a) for
** gpu_cuda_module_link_ptx: under cuda_home (config.cuda_home; may be NULL),
** the build's GPY_CUDA_HOME and /usr/local/cuda (lib64/, then lib/), then
** /usr/lib/x86_64-linux-gnu. Writes the path; false when there is none. */
bool gpu_cuda_find_devrt(const char *cuda_home, char *path, size_t size);
/* A kernel module: PTX that calls the CUDA device runtime (a kernel that
** launches kernels: extern __cudaCDP2* functions) is linked with
** libcudadevrt.a (gpu_cuda_module_link_ptx, found by gpu_cuda_find_devrt);
** any other PTX is loaded as is (gpu_cuda_module_load_ptx). GPU_CUDA_ENOLIB
** when the device runtime is needed and no toolkit has it (cuda_home: see
** gpu_cuda_find_devrt). */
int gpu_cuda_module_load_kernels(GpuCuda *c, const char *ptx, const char *cuda_home, CUmodule *out, char *err,
                                 size_t errsize);

/* A kernel of a loaded module with the attributes launch checks need. */
typedef struct GpuCudaFunction {
    CUfunction fn;
    int max_threads;         /* per block, for this kernel (registers can make it < the device's) */
    int static_shared;       /* bytes of __shared__ declared in the kernel */
    int max_dynamic_shared;  /* current dynamic shared limit; launch raises it when needed */
    int num_regs;            /* registers per thread */
    int local_bytes;         /* local memory per thread */
    int const_bytes;         /* constant memory of the kernel */
    char name[160];          /* for messages (cut when longer) */
} GpuCudaFunction;

/* Finds kernel `name` (the .entry name) in m. A missing name gives
** "CUDA_ERROR_NOT_FOUND: named symbol not found (kernel 'name')". */
int gpu_cuda_get_function(GpuCuda *c, CUmodule m, const char *name, GpuCudaFunction *out, char *err,
                          size_t errsize);

/* One launch. params is the kernelParams array: one pointer per expanded
** parameter (see the ABI in jit/jit.h), each to that parameter's value,
** FOLLOWED BY A NULL — gpy's convention (the driver ignores it), which lets
** the test driver detect a wrong parameter count. A kernel without
** parameters takes NULL or {NULL}. */
typedef struct GpuCudaLaunch {
    uint32_t grid[3];      /* gridDim x, y, z */
    uint32_t block[3];     /* blockDim x, y, z */
    size_t shared_bytes;   /* dynamic shared memory per block */
    CUstream stream;       /* NULL = the default stream */
    void **params;
} GpuCudaLaunch;

/* Checks a configuration against the device's and the kernel's limits
** without launching: GPU_CUDA_ELIMIT with a message naming the limit
** ("block (1024, 2, 1) has 2048 threads; the device allows at most 1024
** per block"). */
int gpu_cuda_check_launch(const GpuCuda *c, const GpuCudaFunction *f, const GpuCudaLaunch *l, char *err,
                          size_t errsize);
/* Checks, raises the kernel's dynamic shared memory limit when the launch
** needs more than the default (opt-in up to max_shared_per_block_optin),
** then cuLaunchKernel. Asynchronous: errors inside the kernel surface at the
** next synchronizing call. */
int gpu_cuda_launch(GpuCuda *c, GpuCudaFunction *f, const GpuCudaLaunch *l, char *err, size_t errsize);

/* ------------------------------------------------ parameter blocks
** The kernelParams of one compiled kernel, laid out once (the launch plan):
** each parameter's value lives at a fixed, naturally aligned offset in
** `data`, ptrs[i] points at it and ptrs[n] is the closing NULL. A launch
** stores the values (memcpy into gpu_cuda_param_slot) and passes ptrs as
** GpuCudaLaunch.params. The driver copies the values during cuLaunchKernel,
** so the block may be refilled as soon as the launch call returns. */
typedef struct GpuCudaParams {
    int n;
    const uint32_t *size;    /* n sizes, as given */
    const uint32_t *offset;  /* n offsets into data */
    unsigned char *data;     /* 16-byte aligned */
    void **ptrs;             /* n + 1 entries, the last NULL */
    size_t bytes;            /* size of data */
} GpuCudaParams;

/* sizes: n parameter sizes in bytes (1..4096; the ABI of jit/jit.h uses 1,
** 2, 4 and 8). One allocation; NULL when out of memory or a size is bad. */
GpuCudaParams *gpu_cuda_params_new(int n, const uint32_t *sizes);
void gpu_cuda_params_free(GpuCudaParams *p);
static inline void *gpu_cuda_param_slot(GpuCudaParams *p, int i) { return p->data + p->offset[i]; }

#endif
