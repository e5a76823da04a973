/*
** disk_cache.c — @cuda.jit(cache=True): compiled kernels kept on disk.
**
** Directory: $GPY_CACHE_DIR, else $XDG_CACHE_HOME/gpy, else ~/.cache/gpy.
** One file per (kernel, argument types, target): "<name>-<key>.gpyk". The
** key is FNV-1a 64 over the text of the file defining the kernel (so device
** functions and globals it reads are covered), the kernel's qualified name,
** the argument type names, the target, the compute capability (and
** GPY_CUDA_ARCH), fastmath, the 32-bit index variant (JitOptions), the gpy and LLVM versions, and the values of
** the globals inference froze into the code as constants.
**
** File layout (little-endian host order; a cache is per machine):
**   header  magic "GPYKCACH", u32 format, u32 target, u64 key,
**           u64 payload length, u64 FNV-1a of the payload
**   payload u64 shared_bytes, then five strings (u64 length + bytes):
**           entry name (PTX: the .entry; CPU: the object's thread entry),
**           PTX text, LLVM IR text, the object's block entry (CPU), the
**           native object file (CPU; built for this host's CPU, which is
**           part of the key)
** A file whose header, length or checksum disagrees is a miss (and is
** rewritten). Writers write a temporary file in the same directory and
** rename it into place, so concurrent processes never see half a file.
** Nothing here raises: any failure is a miss or a skipped write.
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "disk_cache.h"
#include "jit_cache.h"

#define CACHE_MAX_BYTES (256u << 20) /* larger files are not ours */

static uint64_t fnv_str(uint64_t h, const char *s) {
    h = jit_fnv1a(h, s ? s : "", s ? strlen(s) : 0);
    return jit_fnv1a(h, "\0", 1); /* separator: ("ab","c") ≠ ("a","bc") */
}

/* The configured cache directory (config.cache_dir) into buf, created with
** its parents; false when there is none or it is unusable. */
static bool cache_dir(const char *configured, char *buf, size_t size) {
    if (!configured || !*configured) return false;
    int n = snprintf(buf, size, "%s", configured);
    if (n <= 0 || (size_t)n >= size - 64) return false;
    /* mkdir -p */
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            *p = '/';
            return false;
        }
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
    struct stat sb;
    return stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The key of f's specialization for target; false when it must not be cached. */
static bool cache_key(VM *vm, const JFunc *f, Function *fn, int target, int cc, const JitOptions *o, uint64_t *key) {
    uint64_t h = JIT_FNV_OFFSET;
    h = fnv_str(h, "gpy-kernel-cache");
    h = fnv_str(h, GPY_VERSION);
    unsigned maj = 0, min = 0, patch = 0;
    LLVMGetVersion(&maj, &min, &patch);
    char num[64];
    snprintf(num, sizeof num, "llvm %u.%u.%u target %d cc %d fm %d narrow %d", maj, min, patch, target, cc,
             o->fastmath ? 1 : 0, o->narrow_index ? 1 : 0);
    h = fnv_str(h, num);
    h = fnv_str(h, target == JIT_TARGET_PTX ? vm->config.cuda_arch : NULL);
    /* how jit_llvm_init sets up NVPTX code generation: PTX cached before
    ** 32-bit shared/const/local pointers is a miss, not reused */
    h = fnv_str(h, target == JIT_TARGET_PTX ? "nvptx-short-ptr" : NULL);
    if (target == JIT_TARGET_CPU) { /* native code is for this CPU */
        char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
        h = fnv_str(h, cpu);
        h = fnv_str(h, feat);
        LLVMDisposeMessage(cpu);
        LLVMDisposeMessage(feat);
    }
    Source *src = fn->proto ? fn->proto->source : NULL;
    if (!src || !src->text) return false;
    h = fnv_str(h, src->filename ? src->filename->chars : "");
    h = jit_fnv1a(h, src->text, src->len);
    h = fnv_str(h, fn->qualname ? fn->qualname->chars : fn->name ? fn->name->chars : "");
    for (int i = 0; i < f->nargs; i++) {
        char b[256];
        h = fnv_str(h, jt_name(f->argtypes[i], b, sizeof b));
    }
    if (!jit_cache_fingerprint(f, &h)) return false;
    *key = h;
    return true;
}

/* "<dir>/<safe name>-<key>-<cpu|ptx>.gpyk" */
static void cache_path(char *buf, size_t size, const char *dir, Function *fn, int target, uint64_t key) {
    char safe[64];
    size_t n = 0;
    const char *name = fn->name ? fn->name->chars : "kernel";
    for (const char *c = name; *c && n < sizeof safe - 1; c++)
        safe[n++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_') ? *c : '_';
    safe[n] = '\0';
    snprintf(buf, size, "%s/%s-%016llx-%s.gpyk", dir, safe, (unsigned long long)key,
             target == JIT_TARGET_PTX ? "ptx" : "cpu");
}

/* Reads the whole file (malloc'd) or NULL. */
static char *read_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *data = NULL;
    if (fseek(fp, 0, SEEK_END) == 0) {
        long n = ftell(fp);
        if (n > 0 && (unsigned long)n <= CACHE_MAX_BYTES && fseek(fp, 0, SEEK_SET) == 0 && (data = malloc((size_t)n + 1))) {
            if (fread(data, 1, (size_t)n, fp) != (size_t)n) {
                free(data);
                data = NULL;
            } else {
                *len = (size_t)n;
            }
        }
    }
    fclose(fp);
    return data;
}

/* Readers of the payload: each advances *p, false/NULL past end. */
static bool take_u64(const char **p, const char *end, uint64_t *out) {
    if ((size_t)(end - *p) < sizeof *out) return false;
    memcpy(out, *p, sizeof *out);
    *p += sizeof *out;
    return true;
}

/* A length-prefixed string, copied NUL-terminated (malloc'd). */
static char *take_str(const char **p, const char *end) {
    uint64_t n;
    if (!take_u64(p, end, &n) || n > (uint64_t)(end - *p)) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    memcpy(s, *p, (size_t)n);
    s[n] = '\0';
    *p += n;
    return s;
}

JitKernel *jit_disk_cache_load(VM *vm, Function *fn, int nargs, const JType *const *tys, int target, int cc,
                               const JitOptions *o) {
    JitCacheStats *st = jit_cache_stats(vm);
    char dir[2048], path[4096], err[512];
    if (st) st->misses++; /* undone on a hit */
    if (target != JIT_TARGET_CPU && target != JIT_TARGET_PTX) return NULL;
    if (!cache_dir(vm->config.cache_dir, dir, sizeof dir)) return NULL;
    JFunc *f = jit_infer(vm, fn, nargs, tys, true, err, sizeof err);
    if (!f) return NULL; /* the compile that follows reports the error */
    uint64_t key;
    if (!cache_key(vm, f, fn, target, cc, o, &key)) {
        jf_free(f);
        return NULL;
    }
    cache_path(path, sizeof path, dir, fn, target, key);
    size_t len = 0;
    char *data = read_file(path, &len);
    CacheHeader h;
    bool ok = data && len >= sizeof h;
    if (ok) {
        memcpy(&h, data, sizeof h);
        ok = memcmp(h.magic, CACHE_MAGIC, 8) == 0 && h.format == CACHE_FORMAT && h.target == (uint32_t)target &&
             h.key == key && h.len == len - sizeof h && h.sum == jit_fnv1a(JIT_FNV_OFFSET, data + sizeof h, len - sizeof h);
    }
    JitCachedCode c = {.target = target};
    char *entry = NULL, *ptx = NULL, *ir = NULL, *bname = NULL, *obj = NULL;
    uint64_t obj_len = 0;
    if (ok) {
        const char *p = data + sizeof h, *end = data + len;
        ok = take_u64(&p, end, &c.shared_bytes) && (entry = take_str(&p, end)) && (ptx = take_str(&p, end)) &&
             (ir = take_str(&p, end)) && (bname = take_str(&p, end));
        const char *objp = p;
        ok = ok && take_u64(&objp, end, &obj_len) && (obj = take_str(&p, end)) && p == end;
    }
    free(data);
    JitKernel *k = NULL;
    if (ok) {
        c.entry = entry;
        c.ptx = ptx;
        c.ir = ir;
        if (target == JIT_TARGET_CPU && obj_len > 0) {
            c.obj = obj;
            c.obj_len = (size_t)obj_len;
            c.obj_tname = entry;
            c.obj_bname = bname;
        }
        k = jit_kernel_from_cache(vm, f, &c, err, sizeof err); /* takes f */
        f = NULL;
    }
    if (f) jf_free(f);
    free(entry);
    free(ptx);
    free(ir);
    free(bname);
    free(obj);
    if (k && st) {
        st->misses--;
        st->hits++;
    }
    return k;
}

/* Writes all of data to fd. */
static bool write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static bool put(char **buf, size_t *len, size_t *cap, const void *p, size_t n) {
    if (*len + n > *cap) {
        size_t nc = (*cap ? *cap * 2 : 4096);
        while (nc < *len + n) nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return false;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    return true;
}

static bool put_bytes(char **buf, size_t *len, size_t *cap, const char *s, size_t size) {
    uint64_t n = s ? size : 0;
    return put(buf, len, cap, &n, sizeof n) && put(buf, len, cap, s ? s : "", (size_t)n);
}

static bool put_str(char **buf, size_t *len, size_t *cap, const char *s) {
    return put_bytes(buf, len, cap, s, s ? strlen(s) : 0);
}

void jit_disk_cache_store(VM *vm, Function *fn, const JitKernel *k, int target, int cc, const JitOptions *o) {
    if ((target != JIT_TARGET_CPU && target != JIT_TARGET_PTX) || !k || !k->func || k->debug) return;
    if (target == JIT_TARGET_PTX && !k->ptx) return;
    if (target == JIT_TARGET_CPU && !k->llvm_ir) return;
    /* the reader recomputes the parameter layout from the types: make sure it agrees */
    uint32_t sizes[512];
    int n = 0;
    if (!jit_cache_abi(k->func->argtypes, k->func->nargs, sizes, &n, 512) || n != k->nparams) return;
    for (int i = 0; i < n; i++)
        if (sizes[i] != k->params[i].size) return;
    char dir[2048], path[4096], tmp[4096 + 16];
    uint64_t key;
    if (!cache_key(vm, k->func, fn, target, cc, o, &key) || !cache_dir(vm->config.cache_dir, dir, sizeof dir)) return;
    cache_path(path, sizeof path, dir, fn, target, key);
    JitCpuObject obj;
    char err[512];
    memset(&obj, 0, sizeof obj);
    if (target == JIT_TARGET_CPU && !jit_cache_cpu_object(vm, k, key, &obj, err, sizeof err)) {
        free(obj.data); /* no object: loads will compile the IR */
        memset(&obj, 0, sizeof obj);
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    CacheHeader h;
    memset(&h, 0, sizeof h);
    uint64_t shared = k->shared_bytes;
    bool ok = put(&buf, &len, &cap, &h, sizeof h) && put(&buf, &len, &cap, &shared, sizeof shared) &&
              put_str(&buf, &len, &cap, target == JIT_TARGET_PTX ? k->entry : obj.tname) &&
              put_str(&buf, &len, &cap, target == JIT_TARGET_PTX ? k->ptx : "") && put_str(&buf, &len, &cap, k->llvm_ir) &&
              put_str(&buf, &len, &cap, obj.bname) && put_bytes(&buf, &len, &cap, obj.data, obj.len);
    free(obj.data);
    if (ok) {
        memcpy(h.magic, CACHE_MAGIC, 8);
        h.format = CACHE_FORMAT;
        h.target = (uint32_t)target;
        h.key = key;
        h.len = len - sizeof h;
        h.sum = jit_fnv1a(JIT_FNV_OFFSET, buf + sizeof h, len - sizeof h);
        memcpy(buf, &h, sizeof h);
        snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
        int fd = mkstemp(tmp);
        ok = fd >= 0;
        if (ok) {
            (void)fchmod(fd, 0644); /* mkstemp makes 0600; the cache is readable like any ~/.cache file */
            ok = write_all(fd, buf, len);
            ok = (close(fd) == 0) && ok;
            if (ok) ok = rename(tmp, path) == 0;
            if (!ok) unlink(tmp);
        }
    }
    free(buf);
    JitCacheStats *st = jit_cache_stats(vm);
    if (ok && st) st->writes++;
}

void jit_disk_cache_report(VM *vm) {
    JitCacheStats *st = jit_cache_stats(vm);
    if (!vm->config.cache_stats || !st) return;
    if (st->hits + st->misses + st->writes == 0) return;
    fprintf(stderr, "gpy cache: %u hits, %u misses, %u writes\n", st->hits, st->misses, st->writes);
    st->hits = st->misses = st->writes = 0; /* reported once */
}
