/*
** jit_cache.c — rebuilding a compiled kernel from the on-disk cache
** (disk_cache.c reads and writes the files). A PTX entry needs no
** LLVM at all; a CPU entry is the optimized module as IR text, parsed and
** handed to the VM's LLJIT — no lowering, no O3 — with its entry points
** renamed to fresh symbols, since the serial numbers in the stored names
** belong to the process that wrote them.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/TargetMachine.h>

#include "jit_arena.h"
#include "jit_cache.h"
#include "target.h"

uint64_t jit_fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

bool jit_cache_fingerprint(const JFunc *f, uint64_t *hash) {
    const JitArena *a = f->arena;
    uint64_t sum = 0;
    const Source *root_src = f->fn && f->fn->proto ? f->fn->proto->source : NULL;
    for (int i = 0; a && i < a->nfuncs; i++) {
        /* device functions from other files: their text too (in inference order) */
        const Function *dfn = a->funcs[i]->fn;
        const Source *src = dfn && dfn->proto ? dfn->proto->source : NULL;
        if (src && src != root_src && src->text) {
            *hash = jit_fnv1a(*hash, src->text, src->len);
            if (src->filename) *hash = jit_fnv1a(*hash, src->filename->chars, strlen(src->filename->chars));
        }
        const struct JInfoMap *m = a->funcs[i]->infos;
        for (uint32_t s = 0; m && s < m->cap; s++) {
            const JInfo *in = m->slots[s].info;
            if (!m->slots[s].key || !in) continue;
            if (in->builtin == JB_CONST_ARRAY || in->builtin == JB_LAUNCH) return false; /* launches: not cached */
            /* a dynamic shared array's accesses report through sites (lower.c) a cache entry does not keep */
            if (in->builtin == JB_SHARED_ARRAY && in->type && in->type->kind == JK_ARRAY && in->shape[0] == 0)
                return false;
            if (in->builtin != JB_CONST) continue;
            Value v = in->constant;
            uint64_t h = JIT_FNV_OFFSET;
            int tag = v.tag;
            h = jit_fnv1a(h, &tag, sizeof tag);
            if (IS_INT(v)) h = jit_fnv1a(h, &v.as.i, sizeof v.as.i);
            else if (IS_FLOAT(v)) h = jit_fnv1a(h, &v.as.f, sizeof v.as.f);
            else if (IS_BOOL(v)) h = jit_fnv1a(h, &v.as.b, sizeof v.as.b);
            else return false; /* a host object frozen into the code: never reuse */
            if (in->type) h = jit_fnv1a(h, &in->type->kind, sizeof in->type->kind);
            sum += h; /* the map's order follows addresses: combine without order */
        }
    }
    *hash = jit_fnv1a(*hash, &sum, sizeof sum);
    return true;
}

static bool abi_one(const JType *t, uint32_t *sizes, int *n, int max) {
    if (t->kind == JK_ARRAY) {
        if (*n + 1 + 2 * t->ndim > max) return false;
        for (int i = 0; i <= 2 * t->ndim; i++) sizes[(*n)++] = 8;
        return true;
    }
    if (t->kind == JK_TUPLE) {
        for (int i = 0; i < t->n; i++)
            if (!abi_one(t->elems[i], sizes, n, max)) return false;
        return true;
    }
    if (jt_is_complex(t)) { /* two parameters: real, imaginary */
        if (*n + 2 > max) return false;
        sizes[(*n)++] = t->kind == JK_COMPLEX64 ? 4 : 8;
        sizes[(*n)++] = t->kind == JK_COMPLEX64 ? 4 : 8;
        return true;
    }
    if (t->kind == JK_NONE) return true; /* None: no parameters */
    if (!jt_is_scalar(t) || *n + 1 > max) return false;
    uint32_t sz = 8;
    switch (t->kind) {
    case JK_BOOL: case JK_INT8: case JK_UINT8: sz = 1; break;
    case JK_INT16: case JK_UINT16: case JK_FLOAT16: sz = 2; break;
    case JK_INT32: case JK_UINT32: case JK_FLOAT32: sz = 4; break;
    default: sz = 8; break;
    }
    sizes[(*n)++] = sz;
    return true;
}

bool jit_cache_abi(const JType *const *argtypes, int nargs, uint32_t *sizes, int *n, int max) {
    *n = 0;
    for (int i = 0; i < nargs; i++)
        if (!abi_one(argtypes[i], sizes, n, max)) return false;
    return true;
}

/* Whether name ends in "<tag><digits>" (e.g. "_thread_12"); *stem_len is
** the length before tag. */
static bool entry_suffix(const char *name, size_t len, const char *tag, size_t *stem_len) {
    size_t e = len;
    while (e > 0 && name[e - 1] >= '0' && name[e - 1] <= '9') e--;
    size_t tl = strlen(tag);
    if (e == len || e < tl || memcmp(name + e - tl, tag, tl) != 0) return false;
    *stem_len = e - tl;
    return true;
}

/* Parses CPU module text into C and renames its entries "<stem>_thread_<tag>"
** and "<stem>_block_<tag>" (names into tname/bname, 256 bytes each; bname
** stays empty without a block entry); everything else defined in it becomes
** internal, so two kernels' modules never clash. NULL with err on failure. */
static LLVMModuleRef parse_renamed(LLVMContextRef C, const char *ir, const char *tag, bool need_block, char *tname,
                                   char *bname, char *err, size_t errsize) {
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "gpy-cache");
    LLVMModuleRef M = NULL;
    char *msg = NULL;
    tname[0] = bname[0] = '\0';
    if (LLVMParseIRInContext(C, buf, &M, &msg)) { /* consumes buf */
        snprintf(err, errsize, "cached kernel IR does not parse: %.300s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    /* IR read back from disk may parse yet break LLVM's invariants (a
    ** damaged entry), and the optimizer assumes them: verify first, and a
    ** module that fails is a miss rather than a crash in a pass. */
    if (LLVMVerifyModule(M, LLVMReturnStatusAction, &msg)) {
        snprintf(err, errsize, "cached kernel IR is not valid: %.300s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        LLVMDisposeModule(M);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    for (LLVMValueRef fn = LLVMGetFirstFunction(M); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn)) continue;
        size_t len, stem;
        const char *name = LLVMGetValueName2(fn, &len);
        LLVMLinkage lk = LLVMGetLinkage(fn);
        if (lk == LLVMInternalLinkage || lk == LLVMPrivateLinkage) continue;
        char *want = NULL;
        const char *kind = NULL;
        if (entry_suffix(name, len, "_thread_", &stem)) want = tname, kind = "_thread_";
        else if (entry_suffix(name, len, "_block_", &stem)) want = bname, kind = "_block_";
        if (!want || stem > 150) {
            LLVMSetLinkage(fn, LLVMInternalLinkage);
            continue;
        }
        char fresh[256];
        snprintf(fresh, sizeof fresh, "%.*s%s%s", (int)stem, name, kind, tag);
        LLVMSetValueName2(fn, fresh, strlen(fresh));
        memcpy(want, fresh, strlen(fresh) + 1);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(M); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g) && LLVMGetLinkage(g) != LLVMPrivateLinkage) LLVMSetLinkage(g, LLVMInternalLinkage);
    if ((!tname[0] && !bname[0]) || (need_block && !bname[0])) { /* region kernels: a block entry only */
        snprintf(err, errsize, "cached kernel IR has no entry points");
        LLVMDisposeModule(M);
        return NULL;
    }
    return M;
}

bool jit_cache_cpu_object(VM *vm, const JitKernel *k, uint64_t key, JitCpuObject *out, char *err, size_t errsize) {
    memset(out, 0, sizeof *out);
    struct JitState *js = vm->jit;
    if (!js || !js->host_tm || !k->llvm_ir) {
        snprintf(err, errsize, "no native target");
        return false;
    }
    char tag[32];
    snprintf(tag, sizeof tag, "k%016llx", (unsigned long long)key);
    LLVMContextRef C = LLVMContextCreate();
    LLVMModuleRef M = parse_renamed(C, k->llvm_ir, tag, !k->uses_barrier, out->tname, out->bname, err, errsize);
    bool ok = false;
    if (M) {
        LLVMMemoryBufferRef buf = NULL;
        char *msg = NULL;
        if (LLVMTargetMachineEmitToMemoryBuffer(js->host_tm, M, LLVMObjectFile, &msg, &buf)) {
            snprintf(err, errsize, "object emission failed: %.300s", msg ? msg : "?");
            LLVMDisposeMessage(msg);
        } else {
            out->len = LLVMGetBufferSize(buf);
            out->data = malloc(out->len ? out->len : 1);
            if (out->data) {
                memcpy(out->data, LLVMGetBufferStart(buf), out->len);
                ok = true;
            } else {
                snprintf(err, errsize, "out of memory");
            }
            LLVMDisposeMemoryBuffer(buf);
        }
        LLVMDisposeModule(M);
    }
    LLVMContextDispose(C);
    return ok;
}

/* Adds the module (IR text, or an object file when obj is given) to the
** LLJIT under a tracker of its own and looks up the entries. */
static bool load_cpu(VM *vm, JitKernel *k, const char *ir, const JitCachedCode *c, char *err, size_t errsize) {
    LLVMOrcLLJITRef J = jit_lljit(vm, err, errsize);
    if (!J) return false;
    struct JitState *js = vm->jit;
    char tname[256], bname[256];
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(J);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(jd);
    LLVMErrorRef e;
    if (c->obj && c->obj_len && ((c->obj_tname && c->obj_tname[0]) || (c->obj_bname && c->obj_bname[0]))) {
        snprintf(tname, sizeof tname, "%s", c->obj_tname ? c->obj_tname : "");
        snprintf(bname, sizeof bname, "%s", c->obj_bname ? c->obj_bname : "");
        LLVMMemoryBufferRef ob = LLVMCreateMemoryBufferWithMemoryRangeCopy(c->obj, c->obj_len, "gpy-cache-obj");
        e = LLVMOrcLLJITAddObjectFileWithRT(J, rt, ob); /* takes ob */
    } else {
        LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
        char tag[32];
        snprintf(tag, sizeof tag, "%u_c", ++js->serial);
        LLVMModuleRef M = parse_renamed(LLVMOrcThreadSafeContextGetContext(tsc), ir, tag, !k->uses_barrier, tname,
                                        bname, err, errsize);
        if (!M) {
            LLVMOrcDisposeThreadSafeContext(tsc);
            LLVMOrcReleaseResourceTracker(rt);
            return false;
        }
        LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(M, tsc);
        LLVMOrcDisposeThreadSafeContext(tsc);
        e = LLVMOrcLLJITAddLLVMIRModuleWithRT(J, rt, tsm);
    }
    char *msg;
    if (e) {
        LLVMOrcReleaseResourceTracker(rt);
        msg = LLVMGetErrorMessage(e);
        snprintf(err, errsize, "cached kernel: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return false;
    }
    if (!jit_kernel_set_tracker(k, rt)) {
        snprintf(err, errsize, "out of memory");
        return false;
    }
    LLVMOrcExecutorAddress addr = 0;
    e = NULL;
    if (tname[0]) {
        e = LLVMOrcLLJITLookup(J, &addr, tname);
        if (!e) k->cpu_thread = (CpuThreadFn)(uintptr_t)addr;
    }
    if (!e && bname[0]) { /* barrier kernels have one when they run as regions */
        e = LLVMOrcLLJITLookup(J, &addr, bname);
        if (!e) k->cpu_block = (CpuBlockFn)(uintptr_t)addr;
    }
    if (e) {
        msg = LLVMGetErrorMessage(e);
        snprintf(err, errsize, "cached kernel: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return false;
    }
    jit_cpu_describe(k);
    return true;
}

/* The static shared memory the CPU layout gives f and the device
** functions it calls (target_cpu.c: each array 16-byte aligned, the total
** rounded up to 16), or SIZE_MAX past the limit. */
static size_t cpu_static_shared(const JFunc *f, const JFunc **seen, int *nseen, int max) {
    for (int i = 0; i < *nseen; i++)
        if (seen[i] == f) return 0;
    if (*nseen == max) return SIZE_MAX;
    seen[(*nseen)++] = f;
    size_t total = 0;
    const struct JInfoMap *m = f->infos;
    for (uint32_t s = 0; m && s < m->cap; s++) {
        const JInfo *in = m->slots[s].info;
        if (!m->slots[s].key || !in || in->builtin != JB_SHARED_ARRAY || !in->type || in->type->kind != JK_ARRAY)
            continue;
        uint64_t bytes = dtype_itemsize(in->type->dtype);
        for (int d = 0; d < in->type->ndim && d < 3; d++) {
            if (in->shape[d] < 0 || (in->shape[d] && bytes > JIT_MAX_STATIC_SHARED / (uint64_t)in->shape[d]))
                return SIZE_MAX;
            bytes *= (uint64_t)in->shape[d];
        }
        total += (bytes + 15) & ~(uint64_t)15; /* 0: the dynamic array, sized at launch */
    }
    for (int i = 0; i < f->ncallees; i++) {
        size_t b = cpu_static_shared(f->callees[i], seen, nseen, max);
        if (b == SIZE_MAX) return SIZE_MAX;
        total += b;
    }
    return total > JIT_MAX_STATIC_SHARED ? SIZE_MAX : total;
}

/* Whether the fields of a cache entry make sense for f: the file's checksum
** only catches accidents, and every number read here sizes memory later
** (shared_bytes sizes each block's shared area, which the cached code
** indexes at offsets it was compiled with). */
static bool cached_code_valid(const JFunc *f, const JitCachedCode *c, char *err, size_t errsize) {
    const char *why = NULL;
    if (c->target != JIT_TARGET_CPU && c->target != JIT_TARGET_PTX) why = "unknown target";
    else if (c->shared_bytes > JIT_MAX_STATIC_SHARED) why = "static shared memory past the limit";
    else if (c->target == JIT_TARGET_PTX && (!c->ptx || !c->ptx[0] || !c->entry || !c->entry[0] ||
                                             strlen(c->entry) >= sizeof ((JitKernel *)0)->entry))
        why = "no PTX or entry name";
    else if (c->target == JIT_TARGET_CPU && (!c->ir || !c->ir[0])) why = "no IR";
    else if (c->obj && ((c->obj_tname && strlen(c->obj_tname) >= 256) || (c->obj_bname && strlen(c->obj_bname) >= 256)))
        why = "entry names too long";
    if (!why && c->target == JIT_TARGET_CPU) {
        const JFunc *seen[256];
        int nseen = 0;
        if (c->shared_bytes != cpu_static_shared(f, seen, &nseen, 256))
            why = "static shared memory differs from the kernel's shared arrays";
    }
    if (why) snprintf(err, errsize, "cached kernel: %s", why);
    return !why;
}

JitKernel *jit_kernel_from_cache(VM *vm, JFunc *f, const JitCachedCode *c, char *err, size_t errsize) {
    if (!cached_code_valid(f, c, err, errsize)) {
        jf_free(f);
        return NULL;
    }
    JitKernel *k = calloc(1, sizeof *k);
    if (!k) {
        jf_free(f);
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    k->func = f;
    k->uses_barrier = f->uses_barrier;
    k->shared_bytes = (size_t)c->shared_bytes;
    uint32_t sizes[512];
    int n = 0;
    if (!jit_cache_abi(f->argtypes, f->nargs, sizes, &n, 512)) {
        snprintf(err, errsize, "cached kernel: unknown parameter layout");
        goto fail;
    }
    k->nparams = n;
    k->params = calloc((size_t)(n ? n : 1), sizeof *k->params);
    if (!k->params) goto oom;
    for (int i = 0; i < n; i++) k->params[i].size = sizes[i];
    if (c->ir && c->ir[0] && !(k->llvm_ir = strdup(c->ir))) goto oom;
    if (c->target == JIT_TARGET_PTX) {
        if (!c->ptx || !c->entry) {
            snprintf(err, errsize, "cached kernel: no PTX");
            goto fail;
        }
        snprintf(k->entry, sizeof k->entry, "%s", c->entry);
        if (!(k->ptx = strdup(c->ptx))) goto oom;
        return k;
    }
    if (!k->llvm_ir) {
        snprintf(err, errsize, "cached kernel: no IR");
        goto fail;
    }
    if (!load_cpu(vm, k, k->llvm_ir, c, err, errsize)) {
        /* the object may clash with the same kernel already loaded in this
        ** process (same symbols): the IR, renamed afresh, always loads */
        if (!c->obj || k->module) goto fail;
        JitCachedCode ir_only = *c;
        ir_only.obj = NULL;
        if (!load_cpu(vm, k, k->llvm_ir, &ir_only, err, errsize)) goto fail;
    }
    /* the entry the CPU device will call: a block loop, or fibers' thread entry */
    if (!k->cpu_block && !(k->uses_barrier && k->cpu_thread)) {
        snprintf(err, errsize, "cached kernel: no entry point for the CPU device");
        goto fail;
    }
    return k;
oom:
    snprintf(err, errsize, "out of memory");
fail:
    jit_kernel_free(vm, k);
    return NULL;
}
