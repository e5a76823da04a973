/*
** cuda_jit_loader.c — loads the kernel compiler (gpy_jit.so: the jit/ files
** that use LLVM, with the LLVM components they need linked in) when a
** program imports cuda or numba, on a background thread: a program that
** never compiles a kernel does not load LLVM (the shared libLLVM once cost
** every gpy start-up about 16 ms; the module loads in about 3.5), and one
** that does overlaps that and LLVM's warm-up
** (jit_warm_up) with its own work until the first compile. The usual entry
** points (jit_compile_opts, cuda_cache_load, ...) are defined here as calls
** through the module's table; they wait for the load.
**
** The module is loaded once per process (pthread_once); the thread belongs
** to the VM whose import started it (CudaState) and is joined by that VM's
** free hook at the latest. With GPY_LLVM_STATIC=ON the compiler is linked
** into gpy, nothing is loaded, and cuda_jit_preload does nothing.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_jit_api.h"

#ifdef GPY_JIT_MODULE /* the module's path in the build tree (CMakeLists.txt) */

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

/* Process-wide, written once under load_once. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const JitApi *api;
static char load_error[PATH_MAX + 200];

/* gpy_jit.so beside the gpy executable, else where the build put it. */
static void load_module(void) {
    char here[PATH_MAX];
    const char *paths[2] = {NULL, GPY_JIT_MODULE};
    ssize_t n = readlink("/proc/self/exe", here, sizeof here - 16);
    char *slash = n > 0 ? (here[n] = '\0', strrchr(here, '/')) : NULL;
    if (slash) {
        strcpy(slash + 1, "gpy_jit.so");
        paths[0] = here;
    }
    void *h = NULL;
    const char *why = "?";
    for (int i = 0; i < 2 && !h; i++) {
        if (!paths[i] || (i == 1 && paths[0] && !strcmp(paths[0], paths[1]))) continue;
        h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) why = dlerror();
    }
    if (!h) {
        snprintf(load_error, sizeof load_error,
                 "the kernel compiler could not be loaded: %s (gpy_jit.so, built with gpy, belongs beside it)", why);
        return;
    }
    const JitApi *(*get)(void) = (const JitApi *(*)(void))dlsym(h, "gpy_jit_api");
    if (!get) {
        snprintf(load_error, sizeof load_error, "the kernel compiler could not be loaded: %s",
                 "gpy_jit.so has no gpy_jit_api");
        return;
    }
    const JitApi *a = get();
    a->init();
    api = a;
}

/* The module's table, loading it first if need be; NULL with err set when it cannot be loaded. */
static const JitApi *jit_api(char *err, size_t errsize) {
    pthread_once(&load_once, load_module);
    if (!api && err) snprintf(err, errsize, "%s", load_error);
    return api;
}

struct CudaJitLoader {
    pthread_t thread;
    int targets;                    /* what to warm up (likely_targets) */
    atomic_bool stop;               /* the VM compiles or is being freed: warm up no more */
    _Atomic(JitPrepared *) prepared; /* set by the thread once the module is loaded */
};

static void *loader_main(void *arg) {
    struct CudaJitLoader *l = arg;
    const JitApi *a = jit_api(NULL, 0);
    JitPrepared *p = a ? a->prepared_new() : NULL;
    if (!p) return NULL;
    atomic_store(&l->prepared, p);
    a->warm_up(p, l->targets, &l->stop);
    return NULL;
}

/* The targets the program will likely compile for, without deciding the
** device (that may initialize the CUDA driver): config.device, else whether
** an NVIDIA driver is installed. Only the order of the warm-up depends on it. */
static int likely_targets(int device) {
    if (device == GPY_DEVICE_CUDA) return JIT_TARGET_PTX;
    if (device == GPY_DEVICE_AUTO && access("/dev/nvidiactl", F_OK) == 0) return JIT_TARGET_PTX;
    return JIT_TARGET_CPU | JIT_TARGET_PTX;
}

void cuda_jit_preload(VM *vm, CudaState *st) {
    if (st->jit_loader) return;
    struct CudaJitLoader *l = calloc(1, sizeof *l);
    if (!l) return; /* the first compile loads it */
    atomic_init(&l->stop, false);
    atomic_init(&l->prepared, NULL);
    l->targets = likely_targets(vm->config.device);
    if (pthread_create(&l->thread, NULL, loader_main, l) != 0) {
        free(l);
        return;
    }
    st->jit_loader = l;
}

void cuda_jit_preload_join(CudaState *st) {
    struct CudaJitLoader *l = st->jit_loader;
    if (!l) return;
    atomic_store(&l->stop, true);
    pthread_join(l->thread, NULL);
    JitPrepared *p = atomic_load(&l->prepared);
    if (p) api->prepared_free(p); /* what the VM did not take */
    free(l);
    st->jit_loader = NULL;
}

/* The table, with what the loader's thread has made ready for vm handed to
** it; from the first compile on, the thread stops warming up. */
static const JitApi *jit_api_vm(VM *vm, char *err, size_t errsize) {
    const JitApi *a = jit_api(err, errsize);
    struct CudaJitLoader *l = vm->cuda ? vm->cuda->jit_loader : NULL;
    if (l) atomic_store(&l->stop, true);
    JitPrepared *p = l ? atomic_load(&l->prepared) : NULL;
    if (a && p) a->adopt(vm, p);
    return a;
}

/* ------------------------------------------------- the entry points */

JitKernel *jit_compile(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                       bool fastmath, char *err, size_t errsize) {
    const JitApi *a = jit_api_vm(vm, err, errsize);
    return a ? a->compile(vm, fn, nargs, argtypes, targets, cc, fastmath, err, errsize) : NULL;
}

JitKernel *jit_compile_opts(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                            const JitOptions *opts, char *err, size_t errsize) {
    const JitApi *a = jit_api_vm(vm, err, errsize);
    return a ? a->compile_opts(vm, fn, nargs, argtypes, targets, cc, opts, err, errsize) : NULL;
}

char *jit_compile_ptx_device(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int cc, bool fastmath,
                             const JType **ret, char *err, size_t errsize) {
    const JitApi *a = jit_api_vm(vm, err, errsize);
    return a ? a->compile_ptx_device(vm, fn, nargs, argtypes, cc, fastmath, ret, err, errsize) : NULL;
}

/* A kernel exists only when the module was loaded; the rest follow suit. */
void jit_kernel_free(VM *vm, JitKernel *k) {
    const JitApi *a = k ? jit_api(NULL, 0) : NULL;
    if (a) a->kernel_free(vm, k);
}

void jit_debug_reset(JitKernel *k) {
    const JitApi *a = k ? jit_api(NULL, 0) : NULL;
    if (a) a->debug_reset(k);
}

bool jit_debug_message(const JitKernel *k, const JitErrRecord *rec, char *msg, size_t size) {
    const JitApi *a = jit_api(NULL, 0);
    return a ? a->debug_message(k, rec, msg, size) : false;
}

JitKernel *cuda_cache_load(VM *vm, Function *fn, int nargs, const JType *const *tys, int target, int cc,
                           const JitOptions *o) {
    const JitApi *a = jit_api_vm(vm, NULL, 0);
    return a ? a->cache_load(vm, fn, nargs, tys, target, cc, o) : NULL;
}

void cuda_cache_store(VM *vm, Function *fn, const JitKernel *k, int target, int cc, const JitOptions *o) {
    const JitApi *a = k ? jit_api(NULL, 0) : NULL;
    if (a) a->cache_store(vm, fn, k, target, cc, o);
}

void cuda_cache_report(VM *vm, CudaState *st) {
    if (st->cache_hits + st->cache_misses + st->cache_writes == 0) return; /* nothing to say: do not load */
    const JitApi *a = jit_api(NULL, 0);
    if (a) a->cache_report(vm, st);
}

#else /* GPY_LLVM_STATIC: the compiler is part of gpy */

void cuda_jit_preload(VM *vm, CudaState *st) {
    (void)vm;
    (void)st;
}
void cuda_jit_preload_join(CudaState *st) { (void)st; }

#endif
