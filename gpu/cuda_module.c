/*
** cuda_module.c — PTX modules, kernels and launches on the CUDA driver:
** cuModuleLoadDataEx with the JIT logs, cuLink* with a device library,
** kernel attributes, and cuLaunchKernel behind a limit check that explains
** which limit a configuration breaks before the driver sees it.
*/
#include "cuda_priv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JIT_LOG_SIZE 16384

/* The JIT options every load passes: info and error log buffers (the sizes
** are in/out: capacity in, bytes written out) and, when the caller wants the
** info log, verbose output (registers and spills per kernel). */
typedef struct JitLogs {
    CUjit_option opts[5];
    void *values[5];
    unsigned n;
    char info[JIT_LOG_SIZE];
    char error[JIT_LOG_SIZE];
} JitLogs;

static void jit_logs_init(JitLogs *l, bool verbose)
{
    l->info[0] = l->error[0] = '\0';
    l->n = 0;
    l->opts[l->n] = CU_JIT_INFO_LOG_BUFFER, l->values[l->n++] = l->info;
    l->opts[l->n] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, l->values[l->n++] = (void *)(uintptr_t)sizeof l->info;
    l->opts[l->n] = CU_JIT_ERROR_LOG_BUFFER, l->values[l->n++] = l->error;
    l->opts[l->n] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, l->values[l->n++] = (void *)(uintptr_t)sizeof l->error;
    if (verbose)
        l->opts[l->n] = CU_JIT_LOG_VERBOSE, l->values[l->n++] = (void *)(uintptr_t)1;
}

/* NUL-terminates the logs at the length the driver reports and strips
** trailing newlines. */
static void jit_logs_finish(JitLogs *l)
{
    char *bufs[2] = {l->info, l->error};
    for (int i = 0; i < 2; i++) {
        size_t written = (size_t)(uintptr_t)l->values[2 * i + 1];
        if (written >= JIT_LOG_SIZE)
            written = JIT_LOG_SIZE - 1;
        bufs[i][JIT_LOG_SIZE - 1] = '\0';
        size_t len = strnlen(bufs[i], written);
        while (len && (bufs[i][len - 1] == '\n' || bufs[i][len - 1] == '\r'))
            len--;
        bufs[i][len] = '\0';
    }
}

static void copy_text(char *dst, size_t size, const char *src)
{
    if (dst && size)
        snprintf(dst, size, "%s", src);
}

/* Appends "\n<log>" to err when the log says something. */
static void append_log(char *err, size_t errsize, const char *log)
{
    if (!err || !errsize || !*log)
        return;
    size_t len = strlen(err);
    if (len + 1 < errsize)
        snprintf(err + len, errsize - len, "\n%s", log);
}

int gpu_cuda_module_load_ptx(GpuCuda *c, const char *ptx, CUmodule *out, char *info_log, size_t info_size,
                             char *err, size_t errsize)
{
    *out = NULL;
    copy_text(info_log, info_size, "");
    if (!ptx)
        return gpu_cuda_refuse(GPU_CUDA_EARG, err, errsize, "no PTX to load");
    int st = gpu_cuda_make_current(c, err, errsize);
    if (st)
        return st;
    JitLogs *logs = malloc(sizeof *logs); /* 32 KiB: kept off the stack */
    if (!logs)
        return gpu_cuda_refuse(GPU_CUDA_ENOMEM, err, errsize, "out of host memory loading a module");
    jit_logs_init(logs, info_log != NULL);
    CUresult r = c->lib->cuModuleLoadDataEx(out, ptx, logs->n, logs->opts, logs->values);
    jit_logs_finish(logs);
    copy_text(info_log, info_size, logs->info);
    if (r != CUDA_SUCCESS) {
        *out = NULL;
        gpu_cuda_fail(c, r, NULL, err, errsize);
        append_log(err, errsize, logs->error);
    }
    free(logs);
    return r == CUDA_SUCCESS ? 0 : r;
}

int gpu_cuda_module_link_ptx(GpuCuda *c, const char *ptx, const char *library_path, CUmodule *out,
                             char *info_log, size_t info_size, char *err, size_t errsize)
{
    const CudaLib *lib = c->lib;
    *out = NULL;
    copy_text(info_log, info_size, "");
    if (!ptx || !library_path)
        return gpu_cuda_refuse(GPU_CUDA_EARG, err, errsize, "no PTX or no library to link");
    if (!lib->cuLinkCreate || !lib->cuLinkAddData || !lib->cuLinkAddFile || !lib->cuLinkComplete ||
        !lib->cuLinkDestroy)
        return gpu_cuda_refuse(GPU_CUDA_ENOLIB, err, errsize,
                               "the CUDA driver %s cannot link modules (no cuLinkCreate_v2)", lib->path);
    int st = gpu_cuda_make_current(c, err, errsize);
    if (st)
        return st;
    JitLogs *logs = malloc(sizeof *logs);
    if (!logs)
        return gpu_cuda_refuse(GPU_CUDA_ENOMEM, err, errsize, "out of host memory linking a module");
    jit_logs_init(logs, info_log != NULL);
    CUlinkState link = NULL;
    const char *step = "creating a linker";
    CUresult r = lib->cuLinkCreate(logs->n, logs->opts, logs->values, &link);
    if (r == CUDA_SUCCESS) {
        step = "adding the kernel's PTX";
        r = lib->cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "kernel.ptx", 0, NULL, NULL);
    }
    if (r == CUDA_SUCCESS) {
        step = "adding the device library";
        r = lib->cuLinkAddFile(link, CU_JIT_INPUT_LIBRARY, library_path, 0, NULL, NULL);
    }
    void *cubin = NULL;
    size_t cubin_size = 0;
    if (r == CUDA_SUCCESS) {
        step = "linking";
        r = lib->cuLinkComplete(link, &cubin, &cubin_size);
    }
    if (r == CUDA_SUCCESS) {
        step = "loading the linked module";
        r = lib->cuModuleLoadDataEx(out, cubin, 0, NULL, NULL); /* the cubin lives until cuLinkDestroy */
    }
    jit_logs_finish(logs);
    if (link)
        lib->cuLinkDestroy(link);
    copy_text(info_log, info_size, logs->info);
    if (r != CUDA_SUCCESS) {
        *out = NULL;
        bool names_library = strcmp(step, "adding the device library") == 0;
        char context[320];
        snprintf(context, sizeof context, "%s%s%.250s", step, names_library ? " " : "",
                 names_library ? library_path : "");
        gpu_cuda_fail(c, r, context, err, errsize);
        append_log(err, errsize, logs->error);
    }
    free(logs);
    return r == CUDA_SUCCESS ? 0 : r;
}

int gpu_cuda_module_unload(GpuCuda *c, CUmodule m, char *err, size_t errsize)
{
    if (!m)
        return 0;
    int st = gpu_cuda_make_current(c, err, errsize);
    if (st)
        return st;
    CUresult r = c->lib->cuModuleUnload(m);
    return r ? gpu_cuda_fail(c, r, "unloading a module", err, errsize) : 0;
}

int gpu_cuda_module_get_global(GpuCuda *c, CUmodule m, const char *name, CUdeviceptr *dptr, size_t *bytes,
                               char *err, size_t errsize)
{
    *dptr = 0;
    *bytes = 0;
    if (!m || !name)
        return gpu_cuda_refuse(GPU_CUDA_EARG, err, errsize, "no module or no global name");
    if (!c->lib->cuModuleGetGlobal)
        return gpu_cuda_refuse(GPU_CUDA_ENOLIB, err, errsize, "the driver has no cuModuleGetGlobal");
    int st = gpu_cuda_make_current(c, err, errsize);
    if (st)
        return st;
    CUresult r = c->lib->cuModuleGetGlobal(dptr, bytes, m, name);
    if (r != CUDA_SUCCESS) {
        char context[200];
        snprintf(context, sizeof context, "global '%.180s'", name);
        return gpu_cuda_fail(c, r, context, err, errsize);
    }
    return 0;
}

int gpu_cuda_get_function(GpuCuda *c, CUmodule m, const char *name, GpuCudaFunction *out, char *err,
                          size_t errsize)
{
    memset(out, 0, sizeof *out);
    if (!m || !name)
        return gpu_cuda_refuse(GPU_CUDA_EARG, err, errsize, "no module or no kernel name");
    int st = gpu_cuda_make_current(c, err, errsize);
    if (st)
        return st;
    CUresult r = c->lib->cuModuleGetFunction(&out->fn, m, name);
    if (r != CUDA_SUCCESS) {
        char context[200];
        snprintf(context, sizeof context, "kernel '%.180s'", name);
        out->fn = NULL;
        return gpu_cuda_fail(c, r, context, err, errsize);
    }
    snprintf(out->name, sizeof out->name, "%s", name);
    /* attributes: the device's values stand in for any the driver won't give */
    const GpuCudaProps *p = &c->props;
    const struct {
        CUfunction_attribute attr;
        int *dst;
        int fallback;
    } attrs[] = {
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out->max_threads, p->max_threads_per_block},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &out->static_shared, 0},
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &out->num_regs, 0},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &out->local_bytes, 0},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &out->const_bytes, 0},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &out->max_dynamic_shared, -1},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if (c->lib->cuFuncGetAttribute(attrs[i].dst, attrs[i].attr, out->fn) != CUDA_SUCCESS)
            *attrs[i].dst = attrs[i].fallback;
    if (out->max_dynamic_shared < 0)
        out->max_dynamic_shared = p->max_shared_per_block - out->static_shared;
    if (out->max_threads <= 0 || out->max_threads > p->max_threads_per_block)
        out->max_threads = p->max_threads_per_block;
    return 0;
}

int gpu_cuda_check_launch(const GpuCuda *c, const GpuCudaFunction *f, const GpuCudaLaunch *l, char *err,
                          size_t errsize)
{
    const GpuCudaProps *p = &c->props;
    static const char axis[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; i++)
        if (l->grid[i] == 0 || l->block[i] == 0)
            return gpu_cuda_refuse(GPU_CUDA_ELIMIT, err, errsize,
                                   "kernel '%s': grid (%u, %u, %u) and block (%u, %u, %u) must be at least 1 in "
                                   "every dimension",
                                   f->name, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                                   l->block[2]);
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (threads > (uint64_t)p->max_threads_per_block)
        return gpu_cuda_refuse(GPU_CUDA_ELIMIT, err, errsize,
                               "kernel '%s': block (%u, %u, %u) has %llu threads; the device allows at most %d per "
                               "block",
                               f->name, l->block[0], l->block[1], l->block[2], (unsigned long long)threads,
                               p->max_threads_per_block);
    if (threads > (uint64_t)f->max_threads)
        return gpu_cuda_refuse(GPU_CUDA_ELIMIT, err, errsize,
                               "kernel '%s': block (%u, %u, %u) has %llu threads; this kernel allows at most %d per "
                               "block (it uses %d registers per thread)",
                               f->name, l->block[0], l->block[1], l->block[2], (unsigned long long)threads,
                               f->max_threads, f->num_regs);
    for (int i = 0; i < 3; i++) {
        if (l->block[i] > (uint32_t)p->max_block_dim[i])
            return gpu_cuda_refuse(GPU_CUDA_ELIMIT, err, errsize,
                                   "kernel '%s': block dimension %c = %u exceeds the device's limit of %d", f->name,
                                   axis[i], l->block[i], p->max_block_dim[i]);
        if (l->grid[i] > (uint32_t)p->max_grid_dim[i])
            return gpu_cuda_refuse(GPU_CUDA_ELIMIT, err, errsize,
                                   "kernel '%s': grid dimension %c = %u exceeds the device's limit of %d", f->name,
                                   axis[i], l->grid[i], p->max_grid_dim[i]);
    }
    uint64_t shared = (uint64_t)f->static_shared + l->shared_bytes;
    if (shared > (uint64_t)p->max_shared_per_block_optin)
        return gpu_cuda_refuse(GPU_CUDA_ELIMIT, err, errsize,
                               "kernel '%s': %llu bytes of shared memory per block (%d static + %zu dynamic) exceed "
                               "the device's limit of %d",
                               f->name, (unsigned long long)shared, f->static_shared, l->shared_bytes,
                               p->max_shared_per_block_optin);
    return 0;
}

int gpu_cuda_launch(GpuCuda *c, GpuCudaFunction *f, const GpuCudaLaunch *l, char *err, size_t errsize)
{
    int st = gpu_cuda_check_launch(c, f, l, err, errsize);
    if (st)
        return st;
    st = gpu_cuda_make_current(c, err, errsize);
    if (st)
        return st;
    const CudaLib *lib = c->lib;
    char context[256];
    if (l->shared_bytes > (size_t)f->max_dynamic_shared) {
        /* opt in to more dynamic shared memory than the default 48 KiB budget */
        CUresult r = lib->cuFuncSetAttribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             (int)l->shared_bytes);
        if (r != CUDA_SUCCESS) {
            snprintf(context, sizeof context, "raising the dynamic shared memory limit of kernel '%s' to %zu bytes",
                     f->name, l->shared_bytes);
            return gpu_cuda_fail(c, r, context, err, errsize);
        }
        f->max_dynamic_shared = (int)l->shared_bytes;
    }
    CUresult r = lib->cuLaunchKernel(f->fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                                     l->block[2], (unsigned)l->shared_bytes, l->stream, l->params, NULL);
    if (r != CUDA_SUCCESS) {
        snprintf(context, sizeof context, "launching kernel '%s'", f->name);
        return gpu_cuda_fail(c, r, context, err, errsize);
    }
    return 0;
}

bool gpu_cuda_find_devrt(const char *cuda_home, char *path, size_t size)
{
#ifdef GPY_CUDA_HOME
    const char *built = GPY_CUDA_HOME;
#else
    const char *built = NULL;
#endif
    const char *homes[] = {cuda_home, built, "/usr/local/cuda"};
    for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++) {
        if (!homes[i] || !*homes[i])
            continue;
        static const char *const subdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib"};
        for (size_t k = 0; k < sizeof subdirs / sizeof subdirs[0]; k++) {
            int n = snprintf(path, size, "%s/%s/libcudadevrt.a", homes[i], subdirs[k]);
            if (n > 0 && (size_t)n < size && access(path, R_OK) == 0)
                return true;
        }
    }
    int n = snprintf(path, size, "/usr/lib/x86_64-linux-gnu/libcudadevrt.a");
    if (n > 0 && (size_t)n < size && access(path, R_OK) == 0)
        return true;
    if (size)
        path[0] = '\0';
    return false;
}

int gpu_cuda_module_load_kernels(GpuCuda *c, const char *ptx, const char *cuda_home, CUmodule *out, char *err,
                                 size_t errsize)
{
    if (!ptx || !strstr(ptx, "__cudaCDP2"))
        return gpu_cuda_module_load_ptx(c, ptx, out, NULL, 0, err, errsize);
    char lib[1024];
    if (!gpu_cuda_find_devrt(cuda_home, lib, sizeof lib)) {
        *out = NULL;
        return gpu_cuda_refuse(GPU_CUDA_ENOLIB, err, errsize,
                               "a kernel that launches kernels needs the CUDA device runtime (libcudadevrt.a), "
                               "found in no toolkit: set GPY_CUDA_HOME to the CUDA toolkit");
    }
    return gpu_cuda_module_link_ptx(c, ptx, lib, out, NULL, 0, err, errsize);
}
