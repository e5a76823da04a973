/*
** fuzz_cache.c — libFuzzer target: the disk cache loader
** (jit_disk_cache_load, jit/disk_cache.c) and what it hands the cached code
** to (jit_kernel_from_cache, jit/jit_cache.c).
**
** The input is a cache file. Its header's target field picks the CPU or
** the PTX entry of a fixed kernel; the harness rewrites the rest of the
** header (magic, format, key, payload length and checksum) to what the
** loader expects for that kernel, or every mutation would be a plain miss:
** the fuzzing happens in the payload (lengths, strings, IR, object file).
** Nothing loaded is ever launched. Seeds: cache files written by running a
** kernel test with cache=True (scripts/fuzz.sh).
*/
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../jit/disk_cache.h"
#include "../../jit/jit_cache.h"
#include "../../jit/jit_loader.h"
#include "fuzz_vm.h"

static const char kernel_source[] = "from numba import cuda\n"
                                    "def fuzzed(a, n):\n"
                                    "    i = cuda.grid(1)\n"
                                    "    if i < a.shape[0]:\n"
                                    "        a[i] = a[i] * 2.0 + n\n";

static struct {
    Function *fn;
    const JType *tys[2];
    JitOptions opts;
    char path[2][4096]; /* [0]: CPU entry, [1]: PTX entry */
    uint64_t key[2];
} kc;

static const int targets[2] = {JIT_TARGET_CPU, JIT_TARGET_PTX};

/* Compiles the kernel for both targets and stores both in the cache. */
static void make_entries(VM *vm, void *ud) {
    (void)ud;
    Module *m = module_new(vm, str_cstr(vm, "__fuzz__"));
    vm_push_root(vm, OBJ_VAL(m)); /* for the whole run */
    module_exec_source(vm, m, "<fuzz-cache>", kernel_source, sizeof kernel_source - 1);
    kc.fn = (Function *)AS_OBJ(dict_get_cstr(vm, m->dict, "fuzzed"));
    kc.tys[0] = jt_array(vm, ND_FLOAT32, 1, 'C');
    kc.tys[1] = jt_scalar(vm, JK_INT64);
    for (int t = 0; t < 2; t++) {
        char err[4096];
        JitKernel *k = compiler_compile_opts(vm, kc.fn, 2, kc.tys, targets[t], 0, &kc.opts, err, sizeof err);
        if (!k) {
            fprintf(stderr, "fuzz_cache: compiling the kernel failed: %s\n", err);
            abort();
        }
        compiler_cache_store(vm, kc.fn, k, targets[t], 0, &kc.opts);
        compiler_kernel_free(vm, k);
    }
}

/* Finds the entries make_entries wrote and reads their keys. */
static void find_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) abort();
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 9) continue;
        int t = strcmp(e->d_name + n - 9, "-cpu.gpyk") == 0 ? 0 : strcmp(e->d_name + n - 9, "-ptx.gpyk") == 0 ? 1 : -1;
        if (t < 0) continue;
        snprintf(kc.path[t], sizeof kc.path[t], "%s/%s", dir, e->d_name);
        FILE *f = fopen(kc.path[t], "rb");
        CacheHeader h;
        if (!f || fread(&h, sizeof h, 1, f) != 1) abort();
        fclose(f);
        kc.key[t] = h.key;
    }
    closedir(d);
    if (!kc.path[0][0] || !kc.path[1][0]) {
        fprintf(stderr, "fuzz_cache: the cache entries were not written in %s\n", dir);
        abort();
    }
}

static char cache_dir[] = "/tmp/gpy-fuzz-cache-XXXXXX";

/* At exit: the two entries and their directory go. */
static void remove_entries(void) {
    for (int t = 0; t < 2; t++)
        if (kc.path[t][0]) unlink(kc.path[t]);
    rmdir(cache_dir);
}

static void setup(VM *vm) {
    char *dir = cache_dir;
    if (!mkdtemp(dir)) abort();
    atexit(remove_entries);
    free(vm->config.cache_dir); /* the VM owns its config's strings */
    vm->config.cache_dir = strdup(dir);
    if (!fuzz_pcall(vm, make_entries, NULL)) abort();
    find_entries(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    VM *vm = fuzz_vm();
    if (!kc.fn) setup(vm);
    if (size < sizeof(CacheHeader)) return 0;
    CacheHeader h;
    memcpy(&h, data, sizeof h);
    int t = (h.target & JIT_TARGET_PTX) ? 1 : 0;
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.format = CACHE_FORMAT;
    h.target = (uint32_t)targets[t];
    h.key = kc.key[t];
    h.len = size - sizeof h;
    h.sum = jit_fnv1a(JIT_FNV_OFFSET, data + sizeof h, size - sizeof h);
    FILE *f = fopen(kc.path[t], "wb");
    if (!f) abort();
    fwrite(&h, sizeof h, 1, f);
    fwrite(data + sizeof h, 1, size - sizeof h, f);
    if (fclose(f) != 0) abort();
    JitKernel *k = compiler_cache_load(vm, kc.fn, 2, kc.tys, targets[t], 0, &kc.opts);
    if (k) compiler_kernel_free(vm, k);
    return 0;
}
