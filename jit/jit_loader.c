/*
** jit_loader.c — finds and loads the kernel compiler (gpy_jit.so: the jit/
** files that use LLVM, with the LLVM components they need linked in) and
** defines libgpy's entry points into it (compiler_compile_opts, ...; see
** jit_loader.h) as calls through its table.
**
** When: at the import of cuda or numba, on a background thread, so that a
** program that never compiles a kernel does not load LLVM, and one that does
** overlaps the load and LLVM's warm-up (jit_warm_up) with its own work until
** its first compile. The entry points wait for the load.
**
** Where: the VM's config.jit_module when set; otherwise relative to the
** object libgpy itself is part of (dladdr), so that a prefix copied
** elsewhere keeps working: lib/gpy/gpy_jit.so beside lib/libgpy.so.*; beside
** it (the build tree); ../lib/gpy/ from a program in bin/ that linked
** libgpy.a. With GPY_LLVM_STATIC=ON the compiler is linked into libgpy and
** found there (gpy_jit_entry, a weak reference) instead.
**
** The compiler is loaded once per process; each side checks the other's
** GPY_ABI_VERSION (jit_module.h). The loading thread belongs to the VM whose
** import started it (jit_loader_slot) and is joined by that VM's free hook
** at the latest.
*/
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disk_cache.h"
#include "gpy.h"
#include "jit_loader.h"
#include "jit_module.h"

/* The compiler linked into libgpy (GPY_LLVM_STATIC=ON), else NULL. Hidden:
** resolved when libgpy is linked, never by the dynamic linker. */
extern const JitApi *gpy_jit_entry(int host_abi, const JitHost *host, int *module_abi)
    __attribute__((weak, visibility("hidden")));

/* Process-wide: the compiler once loaded, and where from; written under
** lock, once. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const JitApi *_Atomic loaded;
static char loaded_from[PATH_MAX + 64];

/* The file libgpy's code lives in (libgpy.so, or the program libgpy.a was
** linked into), as an absolute path; false when it cannot be told. */
static bool libgpy_path(char *out, size_t size) {
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1((void *)&cuda_jit_host, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) return false;
    /* the main program's link map has an empty name; dladdr would give argv[0] */
    const char *name = map->l_name && map->l_name[0] ? map->l_name : "/proc/self/exe";
    char real[PATH_MAX];
    if (!realpath(name, real) || strlen(real) >= size) return false;
    strcpy(out, real);
    return true;
}

/* Loads the module at path and checks both ABI versions; NULL with err set on failure. */
static const JitApi *load_module(const char *path, const char *libgpy, char *err, size_t errsize) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errsize, "the kernel compiler could not be loaded: %s", dlerror());
        return NULL;
    }
    JitEntryFn entry = (JitEntryFn)dlsym(h, "gpy_jit_entry");
    if (!entry) {
        snprintf(err, errsize, "the kernel compiler could not be loaded: %s has no gpy_jit_entry (not a gpy module)",
                 path);
        return NULL;
    }
    int module_abi = -1;
    const JitApi *api = entry(GPY_ABI_VERSION, &cuda_jit_host, &module_abi);
    if (!api || module_abi != GPY_ABI_VERSION) {
        snprintf(err, errsize,
                 "the kernel compiler %s has ABI version %d, but libgpy (%s) has ABI version %d: "
                 "install both from the same build of gpy",
                 path, module_abi, libgpy, GPY_ABI_VERSION);
        return NULL;
    }
    return api;
}

/* Tries the places named at the top of the file; sets loaded_from. */
static const JitApi *find_and_load(const char *configured, char *err, size_t errsize) {
    char libgpy[PATH_MAX] = "libgpy";
    bool located = libgpy_path(libgpy, sizeof libgpy);
    if (configured && *configured) {
        const JitApi *api = load_module(configured, libgpy, err, errsize);
        if (api) snprintf(loaded_from, sizeof loaded_from, "%s", configured);
        return api;
    }
    if (!located) {
        snprintf(err, errsize,
                 "the kernel compiler could not be loaded: cannot tell where libgpy is "
                 "(set GpyConfig.jit_module, or GPY_JIT_MODULE for gpy, to the path of gpy_jit.so)");
        return NULL;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", libgpy);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    static const char *const places[] = {"gpy/gpy_jit.so", "gpy_jit.so", "../" GPY_INSTALL_LIBDIR "/gpy/gpy_jit.so"};
    char tried[3 * PATH_MAX] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dir, places[i]);
        if (access(path, F_OK) != 0) {
            int n = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", path);
            if (n > 0 && (size_t)n < sizeof tried - used) used += (size_t)n;
            continue;
        }
        const JitApi *api = load_module(path, libgpy, err, errsize);
        if (api) snprintf(loaded_from, sizeof loaded_from, "%s", path);
        return api;
    }
    snprintf(err, errsize,
             "the kernel compiler gpy_jit.so was not found beside libgpy (%s); looked for %s "
             "(set GpyConfig.jit_module, or GPY_JIT_MODULE for gpy, to its path)",
             libgpy, tried);
    return NULL;
}

/* The compiler's table, loading it first if need be; NULL with err set when
** it cannot be loaded. configured: the VM's config.jit_module (or NULL). */
static const JitApi *compiler(const char *configured, char *err, size_t errsize) {
    const JitApi *api = atomic_load(&loaded);
    char why[2 * PATH_MAX + 512];
    why[0] = '\0';
    if (!api) {
        pthread_mutex_lock(&lock);
        api = atomic_load(&loaded);
        if (!api && gpy_jit_entry) {
            int module_abi = -1;
            api = gpy_jit_entry(GPY_ABI_VERSION, &cuda_jit_host, &module_abi); /* same build: cannot disagree */
            snprintf(loaded_from, sizeof loaded_from, "(linked into libgpy)");
        }
        if (!api) api = find_and_load(configured, why, sizeof why);
        if (api) atomic_store(&loaded, api);
        pthread_mutex_unlock(&lock);
    } else if (configured && *configured && !gpy_jit_entry && strcmp(configured, loaded_from) != 0) {
        /* one compiler per process: a second one would bring a second LLVM */
        char a[PATH_MAX], b[PATH_MAX];
        if (!realpath(configured, a) || !realpath(loaded_from, b) || strcmp(a, b) != 0) {
            snprintf(why, sizeof why,
                     "the kernel compiler is already loaded from %s; this VM asks for %s (one per process)",
                     loaded_from, configured);
            api = NULL;
        }
    }
    if (!api && err) snprintf(err, errsize, "%s", why);
    return api;
}

/* The compiler, only when it was loaded already (for what only exists once it was). */
static const JitApi *compiler_if_loaded(void) { return atomic_load(&loaded); }

struct JitLoader {
    pthread_t thread;
    char *configured;               /* the VM's config.jit_module (a copy) or NULL */
    int targets;                    /* what to warm up (likely_targets) */
    atomic_bool stop;               /* the VM compiles or is being freed: warm up no more */
    _Atomic(JitPrepared *) prepared; /* set by the thread once the module is loaded */
};

static void *loader_main(void *arg) {
    struct JitLoader *l = arg;
    const JitApi *a = compiler(l->configured, NULL, 0);
    JitPrepared *p = a ? a->prepared_new() : NULL;
    if (!p) return NULL;
    atomic_store(&l->prepared, p);
    a->warm_up(p, l->targets, &l->stop);
    return NULL;
}

/* The targets the program will likely compile for, without deciding the
** device (that may initialize the CUDA driver): the configured device, else
** whether an NVIDIA driver is installed. Only the order of the warm-up
** depends on it. */
static int likely_targets(VM *vm) {
    if (vm->config.device == GPY_DEVICE_CUDA) return JIT_TARGET_PTX;
    if (vm->config.device == GPY_DEVICE_AUTO && access("/dev/nvidiactl", F_OK) == 0) return JIT_TARGET_PTX;
    return JIT_TARGET_CPU | JIT_TARGET_PTX;
}

void compiler_preload(VM *vm) {
    struct JitLoader **slot = jit_loader_slot(vm);
    if (!slot || *slot) return;
    struct JitLoader *l = calloc(1, sizeof *l);
    if (!l) return; /* the first compile loads it */
    if (vm->config.jit_module && !(l->configured = strdup(vm->config.jit_module))) {
        free(l);
        return;
    }
    atomic_init(&l->stop, false);
    atomic_init(&l->prepared, NULL);
    l->targets = likely_targets(vm);
    if (pthread_create(&l->thread, NULL, loader_main, l) != 0) {
        free(l->configured);
        free(l);
        return;
    }
    *slot = l;
}

void compiler_preload_join(VM *vm) {
    struct JitLoader **slot = jit_loader_slot(vm);
    struct JitLoader *l = slot ? *slot : NULL;
    if (!l) return;
    atomic_store(&l->stop, true);
    pthread_join(l->thread, NULL);
    JitPrepared *p = atomic_load(&l->prepared);
    if (p) compiler_if_loaded()->prepared_free(p); /* what the VM did not take */
    free(l->configured);
    free(l);
    *slot = NULL;
}

/* The table, with what the loader's thread has made ready for vm handed to
** it; from the first compile on, the thread stops warming up. */
static const JitApi *compiler_vm(VM *vm, char *err, size_t errsize) {
    const JitApi *a = compiler(vm->config.jit_module, err, errsize);
    struct JitLoader **slot = jit_loader_slot(vm);
    struct JitLoader *l = slot ? *slot : NULL;
    if (l) atomic_store(&l->stop, true);
    JitPrepared *p = l ? atomic_load(&l->prepared) : NULL;
    if (a && p) a->adopt(vm, p);
    return a;
}

void compiler_require(VM *vm) {
    char err[2 * PATH_MAX + 512];
    if (!compiler_vm(vm, err, sizeof err)) vm_raise_kind(vm, ImportError, "%s", err);
}

/* ------------------------------------------------- the entry points */

JitKernel *compiler_compile(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                            bool fastmath, char *err, size_t errsize) {
    const JitApi *a = compiler_vm(vm, err, errsize);
    return a ? a->compile(vm, fn, nargs, argtypes, targets, cc, fastmath, err, errsize) : NULL;
}

JitKernel *compiler_compile_opts(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets, int cc,
                                 const JitOptions *opts, char *err, size_t errsize) {
    const JitApi *a = compiler_vm(vm, err, errsize);
    return a ? a->compile_opts(vm, fn, nargs, argtypes, targets, cc, opts, err, errsize) : NULL;
}

char *compiler_compile_ptx_device(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int cc,
                                  bool fastmath, const JType **ret, char *err, size_t errsize) {
    const JitApi *a = compiler_vm(vm, err, errsize);
    return a ? a->compile_ptx_device(vm, fn, nargs, argtypes, cc, fastmath, ret, err, errsize) : NULL;
}

/* A kernel exists only when the compiler was loaded; the rest follow suit. */
void compiler_kernel_free(VM *vm, JitKernel *k) {
    const JitApi *a = k ? compiler_if_loaded() : NULL;
    if (a) a->kernel_free(vm, k);
}

void compiler_debug_reset(JitKernel *k) {
    const JitApi *a = k ? compiler_if_loaded() : NULL;
    if (a) a->debug_reset(k);
}

bool compiler_debug_message(const JitKernel *k, const JitErrRecord *rec, char *msg, size_t size) {
    const JitApi *a = compiler_if_loaded();
    return a ? a->debug_message(k, rec, msg, size) : false;
}

JitKernel *compiler_cache_load(VM *vm, Function *fn, int nargs, const JType *const *tys, int target, int cc,
                               const JitOptions *o) {
    const JitApi *a = compiler_vm(vm, NULL, 0);
    return a ? a->cache_load(vm, fn, nargs, tys, target, cc, o) : NULL;
}

void compiler_cache_store(VM *vm, Function *fn, const JitKernel *k, int target, int cc, const JitOptions *o) {
    const JitApi *a = k ? compiler_if_loaded() : NULL;
    if (a) a->cache_store(vm, fn, k, target, cc, o);
}

void compiler_cache_report(VM *vm) {
    JitCacheStats *st = jit_cache_stats(vm);
    if (!st || st->hits + st->misses + st->writes == 0) return; /* nothing to say: do not load */
    const JitApi *a = compiler_if_loaded();
    if (a) a->cache_report(vm);
}
