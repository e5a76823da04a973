/*
** jit.c — the kernel compiler's driver: per-VM LLVM state (target machines,
** one ORC LLJIT, libdevice), and jit_compile: infer → lower → verify →
** O3 → PTX text and/or native code for the CPU device.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Support.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "../gpu/cpu_device.h"
#include "jit_host.h"
#include "cpu_regions.h"
#include "jit_cache.h"
#include "target.h"

struct JitModule {
    LLVMOrcResourceTrackerRef rt; /* the CPU code of one kernel */
};

/* CPUs LLVM 19 and CUDA 13's ptxas both accept (see notes/llvm19.md). */
static const int ptx_ccs[] = {75, 80, 86, 87, 89, 90};

/* ------------------------------------------------------------ state */

static void jit_state_free(VM *vm) {
    struct JitState *js = vm->jit;
    if (!js) return;
    if (js->jit) LLVMOrcDisposeLLJIT(js->jit);
    for (int i = 0; i < js->nptx; i++) LLVMDisposeTargetMachine(js->ptx_tm[i]);
    if (js->host_tm) LLVMDisposeTargetMachine(js->host_tm);
    free(js->libdevice);
    free(js);
    vm->jit = NULL;
}

static void diag_handler(LLVMDiagnosticInfoRef di, void *ctx) {
    JitDiag *d = ctx;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError) return;
    if (!d->error) {
        char *m = LLVMGetDiagInfoDescription(di);
        snprintf(d->msg, sizeof d->msg, "%s", m ? m : "LLVM error");
        LLVMDisposeMessage(m);
    }
    d->error = true;
}

/* Registers the targets and sets the one LLVM option gpy uses: 32-bit
** pointers for the shared, const and local address spaces of the NVPTX
** target (what nvcc asks of its back-end; addresses there fit in 32 bits,
** and 64-bit ones cost registers and instructions). The option is read by
** each NVPTX target machine when it is created (its data layout then says
** p3:32:32 ...) and by nothing else, so the host's code is unaffected. LLVM's
** options are process-wide and may be parsed only once, hence pthread_once
** (the loader's thread and jit_state may both get here first). */
static void llvm_init_once(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    const char *const argv[] = {"gpy", "-nvptx-short-ptr"};
    LLVMParseCommandLineOptions(2, argv, "");
}

void jit_llvm_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, llvm_init_once);
}

static struct JitState *jit_state(VM *vm) {
    if (vm->jit) return vm->jit;
    struct JitState *js = calloc(1, sizeof *js);
    if (!js) return NULL;
    jit_llvm_init(); /* done already where the loader ran it (once per process) */
    vm->jit = js;
    vm_on_free(vm, jit_state_free);
    return js;
}

static char *take_error(LLVMErrorRef e, char *err, size_t errsize, const char *what) {
    char *m = LLVMGetErrorMessage(e);
    snprintf(err, errsize, "%s: %s", what, m);
    LLVMDisposeErrorMessage(m);
    return NULL;
}

static LLVMTargetMachineRef host_tm_new(void) {
    char *triple = LLVMGetDefaultTargetTriple();
    LLVMTargetRef t = NULL;
    char *msg = NULL;
    LLVMTargetMachineRef tm = NULL;
    if (!LLVMGetTargetFromTriple(triple, &t, &msg)) {
        char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
        tm = LLVMCreateTargetMachine(t, triple, cpu, feat, LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                     LLVMCodeModelJITDefault);
        LLVMDisposeMessage(cpu);
        LLVMDisposeMessage(feat);
    }
    LLVMDisposeMessage(msg);
    LLVMDisposeMessage(triple);
    return tm;
}

/* An LLJIT that compiles at O3 for this host, resolves libm through the
** process, and knows the CPU device's barrier function. */
static LLVMOrcLLJITRef lljit_new(char *err, size_t errsize) {
    LLVMTargetMachineRef tm = host_tm_new();
    if (!tm) {
        snprintf(err, errsize, "no LLVM target for this host");
        return NULL;
    }
    LLVMOrcLLJITBuilderRef bld = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(bld, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
    LLVMOrcLLJITRef J;
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&J, bld);
    if (e) return take_error(e, err, errsize, "cannot create the native JIT"), NULL;
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(J);
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(J), NULL, NULL);
    if (e) {
        LLVMOrcDisposeLLJIT(J);
        return take_error(e, err, errsize, "cannot create the native JIT"), NULL;
    }
    LLVMOrcJITDylibAddGenerator(jd, gen);
    LLVMJITSymbolFlags fl = {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0};
    /* the CPU device's runtime, whose addresses the host hands over (jit_module.h) */
    LLVMOrcCSymbolMapPair sym[JIT_RUNTIME_MAX];
    int nsym = jit_host->ncpu_runtime < JIT_RUNTIME_MAX ? jit_host->ncpu_runtime : JIT_RUNTIME_MAX;
    for (int i = 0; i < nsym; i++) {
        const JitRuntimeSymbol *r = &jit_host->cpu_runtime[i];
        sym[i] = (LLVMOrcCSymbolMapPair){LLVMOrcLLJITMangleAndIntern(J, r->name),
                                         {(LLVMOrcJITTargetAddress)(uintptr_t)r->addr, fl}};
    }
    e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(sym, (size_t)nsym));
    if (e) {
        LLVMOrcDisposeLLJIT(J);
        return take_error(e, err, errsize, "cannot create the native JIT"), NULL;
    }
    return J;
}

/* The VM's LLJIT. */
static LLVMOrcLLJITRef get_lljit(struct JitState *js, char *err, size_t errsize) {
    if (!js->jit) js->jit = lljit_new(err, errsize);
    return js->jit;
}

/* cc 0 → arch (config.cuda_arch: "sm_90", "90", "9.0") → 80; then the
** highest supported CPU not above it. Returns 0 with err set when below sm_75. */
static int choose_cc(int cc, const char *arch, char *err, size_t errsize) {
    if (cc <= 0) {
        const char *e = arch;
        cc = 80;
        if (e && *e) {
            const char *p = e;
            if (!strncmp(p, "sm_", 3) || !strncmp(p, "compute_", 8)) p = strchr(p, '_') + 1;
            int major = 0, minor = 0;
            if (sscanf(p, "%d.%d", &major, &minor) == 2) cc = major * 10 + minor;
            else if (major > 0) cc = major < 10 ? major * 10 : major;
            else {
                snprintf(err, errsize, "GPY_CUDA_ARCH=%s: expected e.g. sm_80 or 90", e);
                return 0;
            }
        }
    }
    int best = 0;
    for (size_t i = 0; i < sizeof ptx_ccs / sizeof *ptx_ccs; i++)
        if (ptx_ccs[i] <= cc) best = ptx_ccs[i];
    if (!best) snprintf(err, errsize, "compute capability %d.%d is not supported (need 7.5 or newer)", cc / 10, cc % 10);
    return best;
}

static LLVMTargetMachineRef ptx_tm_new(int cc, char *err, size_t errsize) {
    LLVMTargetRef t;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &t, &msg)) {
        snprintf(err, errsize, "NVPTX target unavailable: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    char cpu[16];
    snprintf(cpu, sizeof cpu, "sm_%d", cc);
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(t, "nvptx64-nvidia-cuda", cpu, "",
                                                      LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                                      LLVMCodeModelDefault);
    if (!tm) snprintf(err, errsize, "cannot create the NVPTX target machine for %s", cpu);
    return tm;
}

static LLVMTargetMachineRef ptx_tm(struct JitState *js, int cc, char *err, size_t errsize) {
    for (int i = 0; i < js->nptx; i++)
        if (js->ptx_cc[i] == cc) return js->ptx_tm[i];
    if (js->nptx == 8) {
        snprintf(err, errsize, "too many target machines (compute capability %d)", cc);
        return NULL;
    }
    LLVMTargetMachineRef tm = ptx_tm_new(cc, err, errsize);
    if (!tm) return NULL;
    js->ptx_cc[js->nptx] = cc;
    js->ptx_tm[js->nptx++] = tm;
    return tm;
}

/* ------------------------------------------------------------ compile */

static void lower_init(Lower *L, VM *vm, LLVMContextRef C, LLVMModuleRef M, const Target *tg,
                       bool fastmath, char *err, size_t errsize) {
    memset(L, 0, sizeof *L);
    L->vm = vm;
    L->C = C;
    L->M = M;
    L->tg = tg;
    L->fastmath = fastmath;
    L->err = err;
    L->errsize = errsize;
}

static void lower_done(Lower *L) {
    cpu_regions_free(L->regions);
    L->regions = NULL;
    free(L->vars);
    free(L->fns);
    free(L->sites);
    free(L->dyn_vars);
    L->dyn_vars = NULL;
    L->vars = NULL;
    L->fns = NULL;
    L->sites = NULL;
}

/* Debug mode: hands the site table to k (the first compile's; CPU and PTX
** lower the same source in the same order, so the ids agree). */
static void take_sites(Lower *L, JitKernel *k) {
    if (!k || k->dbg_sites || !L->sites) return;
    k->dbg_sites = L->sites;
    k->ndbg_sites = L->nsites;
    L->sites = NULL;
}

/* Verifies M; a failure names the function and LLVM's complaint. */
static bool verify(LLVMModuleRef M, const char *name, char *err, size_t errsize) {
    char *msg = NULL;
    if (LLVMVerifyModule(M, LLVMReturnStatusAction, &msg)) {
        snprintf(err, errsize, "internal error: invalid LLVM IR for '%s': %.400s", name, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMDisposeMessage(msg);
    return true;
}

static bool run_o3(LLVMModuleRef M, LLVMTargetMachineRef tm, char *err, size_t errsize) {
    LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(M, "default<O3>", tm, o);
    LLVMDisposePassBuilderOptions(o);
    if (e) {
        take_error(e, err, errsize, "LLVM optimization failed");
        return false;
    }
    return true;
}

/* Codegen of an llvm.* name LLVM does not know exits the process; find one
** first (libdevice's __nv_fast_tanhf uses llvm.nvvm.tanh.approx.f32). */
static bool check_intrinsics(LLVMModuleRef M, char *err, size_t errsize) {
    for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f)) {
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (LLVMIsDeclaration(f) && len > 5 && !strncmp(name, "llvm.", 5) && LLVMGetIntrinsicID(f) == 0 &&
            LLVMGetFirstUse(f)) {
            snprintf(err, errsize, "the GPU code needs %s, which this LLVM cannot compile", name);
            return false;
        }
    }
    return true;
}

static void fill_params(Lower *L, JitKernel *k, JFunc *f) {
    LLVMTypeRef tys[512];
    int n = 0;
    for (int i = 0; i < f->nargs; i++) lower_abi_types(L, f->argtypes[i], tys, &n, 512);
    k->nparams = n;
    k->params = calloc((size_t)(n ? n : 1), sizeof *k->params);
    for (int i = 0; i < n && k->params; i++) {
        LLVMTypeRef t = tys[i];
        uint32_t sz = 8;
        if (LLVMGetTypeKind(t) == LLVMIntegerTypeKind) sz = LLVMGetIntTypeWidth(t) / 8;
        else if (t == L->t_f32) sz = 4;
        else if (t == L->t_f16) sz = 2;
        k->params[i].size = sz;
    }
}

/* k's parameter ABI, computed with a throwaway context (its own function:
** the setjmp then clobbers nothing of the caller's). */
static bool kernel_params(VM *vm, JitKernel *k, JFunc *f, char *err, size_t errsize) {
    LLVMContextRef C = LLVMContextCreate();
    Lower L;
    lower_init(&L, vm, C, NULL, &jit_target_ptx, false, err, errsize);
    L.t_i8 = LLVMInt8TypeInContext(C);
    L.t_i1 = LLVMInt1TypeInContext(C);
    L.t_i16 = LLVMInt16TypeInContext(C);
    L.t_i32 = LLVMInt32TypeInContext(C);
    L.t_i64 = LLVMInt64TypeInContext(C);
    L.t_f16 = LLVMHalfTypeInContext(C);
    L.t_f32 = LLVMFloatTypeInContext(C);
    L.t_f64 = LLVMDoubleTypeInContext(C);
    L.t_ptr = LLVMPointerTypeInContext(C, 0);
    L.f = f;
    volatile bool ok = true;
    if (setjmp(L.fail)) ok = false;
    else fill_params(&L, k, f);
    LLVMContextDispose(C);
    if (ok && !k->params) snprintf(err, errsize, "out of memory");
    return ok && k->params;
}

/* Builds f's module for target tg into M; returns the root function. */
static LLVMValueRef build(Lower *L, JFunc *f, bool device_only) {
    return device_only ? lower_device_module(L, f) : lower_module(L, f);
}

static char *print_ir(LLVMModuleRef M) {
    char *s = LLVMPrintModuleToString(M);
    char *copy = s ? strdup(s) : NULL;
    LLVMDisposeMessage(s);
    return copy;
}

/* PTX for f (a kernel, or a device function alone when device_only). */
static char *compile_ptx(VM *vm, struct JitState *js, JFunc *f, int cc, bool fastmath, bool device_only,
                         bool keep_ir, JitKernel *k, char *entry, size_t entrysize, char *err, size_t errsize) {
    LLVMTargetMachineRef tm = ptx_tm(js, cc, err, errsize);
    if (!tm) return NULL;
    LLVMContextRef C = LLVMContextCreate();
    js->diag.error = false;
    LLVMContextSetDiagnosticHandler(C, diag_handler, &js->diag);
    LLVMModuleRef M = LLVMModuleCreateWithNameInContext(f->name, C);
    LLVMSetTarget(M, "nvptx64-nvidia-cuda");
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(M, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
    Lower L;
    lower_init(&L, vm, C, M, &jit_target_ptx, fastmath, err, errsize);
    L.debug = k && k->debug;
    L.narrow = k && k->narrow_index;
    LLVMValueRef fn = build(&L, f, device_only);
    char *ptx = NULL;
    if (!fn) goto done;
    take_sites(&L, k);
    if (k && L.smem_bytes > k->shared_bytes) k->shared_bytes = L.smem_bytes; /* the CPU layout pads: keep the larger */
    size_t len;
    snprintf(entry, entrysize, "%s", LLVMGetValueName2(fn, &len));
    if (fastmath) {
        LLVMValueRef one = LLVMConstInt(LLVMInt32TypeInContext(C), 1, 0);
        LLVMAddModuleFlag(M, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16, LLVMValueAsMetadata(one));
    }
    if (!verify(M, f->name, err, errsize)) goto done;
    if (L.needs_libdevice && !jit_link_libdevice(vm, M, err, errsize)) goto done;
    if (!run_o3(M, tm, err, errsize)) goto done;
    if (!check_intrinsics(M, err, errsize)) goto done; /* after O3 dropped dead paths */
    if (k && keep_ir) { /* inspect_llvm shows the GPU's IR when there is one, as Numba's does */
        free(k->llvm_ir);
        k->llvm_ir = print_ir(M);
    }
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, M, LLVMAssemblyFile, &msg, &buf) || js->diag.error) {
        snprintf(err, errsize, "PTX code generation failed for '%s': %s", f->name,
                 js->diag.error ? js->diag.msg : msg ? msg : "?");
        LLVMDisposeMessage(msg);
        if (buf) LLVMDisposeMemoryBuffer(buf);
        goto done;
    }
    size_t n = LLVMGetBufferSize(buf);
    ptx = malloc(n + 1);
    if (ptx) {
        memcpy(ptx, LLVMGetBufferStart(buf), n);
        ptx[n] = 0;
    } else {
        snprintf(err, errsize, "out of memory");
    }
    LLVMDisposeMemoryBuffer(buf);
done:
    lower_done(&L);
    LLVMDisposeModule(M);
    LLVMContextDispose(C);
    return ptx;
}

/* Bytes of a fiber stack kept for frames, calls and the runtime's own
** (print formats its line on the stack) beside a thread's local arrays. */
#define FIBER_STACK_RESERVE (16 * 1024)

/* Native code for kernel f through the VM's LLJIT. */
static bool compile_cpu(VM *vm, struct JitState *js, JFunc *f, bool fastmath, JitKernel *k,
                        const JitChildMap *children, char *err, size_t errsize) {
    LLVMOrcLLJITRef J = get_lljit(js, err, errsize);
    if (!J) return false;
    if (!js->host_tm) js->host_tm = host_tm_new();
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMContextRef C = LLVMOrcThreadSafeContextGetContext(tsc);
    js->diag.error = false;
    LLVMContextSetDiagnosticHandler(C, diag_handler, &js->diag);
    LLVMModuleRef M = LLVMModuleCreateWithNameInContext(f->name, C);
    LLVMSetTarget(M, LLVMOrcLLJITGetTripleString(J));
    LLVMSetDataLayout(M, LLVMOrcLLJITGetDataLayoutStr(J));
    Lower L;
    lower_init(&L, vm, C, M, &jit_target_cpu, fastmath, err, errsize);
    L.debug = k->debug;
    L.children = children;
    L.narrow = k->narrow_index;
    /* the record's symbol is unique in the JITDylib, like the entries */
    snprintf(L.err_symbol, sizeof L.err_symbol, "%s_%u", JIT_DEBUG_ERR_SYMBOL, js->serial + 1);
    /* barrier kernels run as loops over the block's threads when their
    ** barriers allow it (cpu_regions.c); debug kernels keep the fibers */
    if (f->uses_barrier && !k->debug && vm->config.cpu_regions != 0) L.regions = cpu_regions_plan(f);
    bool regions = L.regions != NULL;
    LLVMValueRef body = build(&L, f, false);
    char bname[200], tname[200], ename[64];
    size_t len;
    if (!body) goto fail;
    bool has_err = L.dbg_err != NULL;
    snprintf(ename, sizeof ename, "%s", L.err_symbol);
    take_sites(&L, k);
    unsigned serial = ++js->serial;
    const char *bn = LLVMGetValueName2(body, &len);
    snprintf(bname, sizeof bname, "%.150s_block_%u", bn, serial);
    snprintf(tname, sizeof tname, "%.150s_thread_%u", bn, serial);
    /* one entry: the block loop, or for barrier kernels on fibers the
    ** thread entry (a barrier-free kernel always runs through its block
    ** loop, so a thread entry would only cost O3 and code generation) */
    bool fibers = f->uses_barrier && !regions;
    /* a fiber's stack holds its thread's local arrays (regions keep them
       in the heap); what is left of it must do for the frames and calls */
    size_t fiber_stack = gpu_cpu_fiber_stack_request(vm->config.cpu_fiber_stack);
    if (fibers && L.local_chain_bytes > fiber_stack - FIBER_STACK_RESERVE) {
        L.f = L.local_big_f;
        const AstNode *at = L.local_big;
        char where[320] = "";
        const Proto *pr = L.f && L.f->fn ? L.f->fn->proto : NULL;
        if (at && pr && pr->source && pr->source->filename)
            snprintf(where, sizeof where, " (the largest at %s:%d)", pr->source->filename->chars, at->line);
        snprintf(err, errsize,
                 "kernel '%s': its local arrays need %zu bytes per thread%s, more than the %zu bytes the CPU device's "
                 "%zu-byte fiber stacks leave for them (a kernel whose barriers run on fibers; set "
                 "GPY_CPU_FIBER_STACK to a larger size in bytes)",
                 f->name, L.local_chain_bytes, where, fiber_stack - FIBER_STACK_RESERVE, fiber_stack);
        goto fail;
    }
    jit_cpu_entries(&L, body, fibers ? NULL : bname, fibers ? tname : NULL);
    k->shared_bytes = L.smem_bytes;
    if (!verify(M, f->name, err, errsize)) goto fail;
    if (js->host_tm && !run_o3(M, js->host_tm, err, errsize)) goto fail;
    free(k->llvm_ir);
    k->llvm_ir = print_ir(M);
    lower_done(&L);
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(J);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(jd);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(M, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc);
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModuleWithRT(J, rt, tsm);
    if (e) { /* tsm was consumed either way */
        LLVMOrcReleaseResourceTracker(rt);
        take_error(e, err, errsize, "native compile failed");
        return false;
    }
    k->module = calloc(1, sizeof *k->module);
    if (!k->module) {
        LLVMErrorRef e2 = LLVMOrcResourceTrackerRemove(rt);
        if (e2) LLVMConsumeError(e2);
        LLVMOrcReleaseResourceTracker(rt);
        snprintf(err, errsize, "out of memory");
        return false;
    }
    k->module->rt = rt;
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(J, &addr, fibers ? tname : bname);
    if (e || js->diag.error) {
        if (e) take_error(e, err, errsize, "native compile failed");
        else snprintf(err, errsize, "native compile failed: %s", js->diag.msg);
        return false;
    }
    if (fibers) k->cpu_thread = (CpuThreadFn)(uintptr_t)addr;
    else k->cpu_block = (CpuBlockFn)(uintptr_t)addr; /* no thread entry: no fibers */
    if (has_err) {
        e = LLVMOrcLLJITLookup(J, &addr, ename);
        if (e) {
            take_error(e, err, errsize, "native compile failed");
            return false;
        }
        k->dbg_err = (JitErrRecord *)(uintptr_t)addr;
    }
    return true;
fail:
    lower_done(&L);
    LLVMDisposeModule(M);
    LLVMOrcDisposeThreadSafeContext(tsc);
    return false;
}

static void cpu_debug_message(const void *owner, const JitErrRecord *rec, char *msg, size_t size) {
    jit_debug_message(owner, rec, msg, size);
}

void jit_cpu_describe(JitKernel *k) {
    k->cpu = (CpuKernel){
        .name = k->func && k->func->name ? k->func->name : "?",
        .nparams = k->nparams,
        .params = k->params,
        .shared_bytes = k->shared_bytes,
        .uses_barrier = k->uses_barrier,
        .block_fn = k->cpu_block,
        .thread_fn = k->cpu_thread,
        .dbg_err = k->dbg_err,
        .dbg_message = cpu_debug_message,
        .owner = k,
    };
}

JitKernel *jit_compile(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets,
                       int cc, bool fastmath, char *err, size_t errsize) {
    JitOptions o = {.fastmath = fastmath, .no_ptx_ir = true};
    return jit_compile_opts(vm, fn, nargs, argtypes, targets, cc, &o, err, errsize);
}

JitKernel *jit_compile_opts(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets,
                            int cc, const JitOptions *opts, char *err, size_t errsize) {
    bool fastmath = opts && opts->fastmath;
    struct JitState *js = jit_state(vm);
    if (!js) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    int chosen = 0;
    if (targets & JIT_TARGET_PTX) {
        chosen = choose_cc(cc, vm->config.cuda_arch, err, errsize);
        if (!chosen) return NULL;
    }
    JFunc *f = jit_infer(vm, fn, nargs, argtypes, true, err, errsize);
    if (!f) return NULL;
    JitKernel *k = calloc(1, sizeof *k);
    if (!k) {
        jf_free(f);
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    k->func = f;
    k->uses_barrier = f->uses_barrier;
    k->debug = opts && opts->debug;
    k->narrow_index = opts && opts->narrow_index && !k->debug && !jit_launches_kernels(f);
    if (!kernel_params(vm, k, f, err, errsize)) {
        jit_kernel_free(vm, k);
        return NULL;
    }
    if (targets & JIT_TARGET_CPU) {
        /* kernels it launches are compiled first: the code names their JitKernels */
        JitChildMap children = {0};
        bool ok = jit_compile_children(vm, k, opts, &children, err, errsize) &&
                  compile_cpu(vm, js, f, fastmath, k, &children, err, errsize);
        free(children.f);
        free(children.k);
        if (!ok) {
            jit_kernel_free(vm, k);
            return NULL;
        }
    }
    if (targets & JIT_TARGET_PTX) {
        bool keep_ir = !(opts && opts->no_ptx_ir);
        k->ptx = compile_ptx(vm, js, f, chosen, fastmath, false, keep_ir, k, k->entry, sizeof k->entry, err, errsize);
        if (!k->ptx) {
            jit_kernel_free(vm, k);
            return NULL;
        }
    }
    jit_cpu_describe(k); /* after the PTX compile, which may raise shared_bytes */
    return k;
}

void jit_kernel_free(VM *vm, JitKernel *k) {
    if (!k) return;
    if (k->module) {
        /* after the VM's LLJIT is gone (vm_free hooks run in any order) the
        ** tracker went with it: touching it would be a use after free */
        if (k->module->rt && vm->jit && vm->jit->jit) {
            LLVMErrorRef e = LLVMOrcResourceTrackerRemove(k->module->rt);
            if (e) LLVMConsumeError(e);
            LLVMOrcReleaseResourceTracker(k->module->rt);
        }
        free(k->module);
    }
    if (k->func) jf_free(k->func);
    free(k->params);
    free(k->ptx);
    free(k->llvm_ir);
    free(k->dbg_sites);
    for (int i = 0; i < k->nchildren; i++) jit_kernel_free(vm, k->children[i]);
    free(k->children);
    free(k);
}

char *jit_compile_ptx_device(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int cc,
                             bool fastmath, const JType **ret, char *err, size_t errsize) {
    struct JitState *js = jit_state(vm);
    if (!js) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    int chosen = choose_cc(cc, vm->config.cuda_arch, err, errsize);
    if (!chosen) return NULL;
    JFunc *f = jit_infer(vm, fn, nargs, argtypes, false, err, errsize);
    if (!f) return NULL;
    char entry[160];
    char *ptx = compile_ptx(vm, js, f, chosen, fastmath, true, false, NULL, entry, sizeof entry, err, errsize);
    if (ret) *ret = f->ret;
    jf_free(f);
    return ptx;
}

/* ------------------------------------------- ahead of the first compile */

/* What the loader's thread makes for one VM before its first compile (the
** NVPTX target machine for the default compute capability, the host's, and
** the LLJIT), each handed over once its warm-up compile is done. */
struct JitPrepared {
    pthread_mutex_t lock;
    int ptx_cc;
    LLVMTargetMachineRef ptx_tm, host_tm;
    LLVMOrcLLJITRef jit;
};

/* out[i] = x[i] + y[i] for i < n, i from the thread index on the GPU and
** from a parameter on the host: the seed kernel's shape, so the warm-up
** runs the optimizer and code generator paths a first kernel needs. */
static LLVMModuleRef warm_ir(LLVMContextRef C, const char *triple, const char *layout, bool ptx) {
    LLVMModuleRef M = LLVMModuleCreateWithNameInContext("gpy_warm_up", C);
    LLVMSetTarget(M, triple);
    LLVMSetDataLayout(M, layout);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(C, 0), i32 = LLVMInt32TypeInContext(C),
                i64 = LLVMInt64TypeInContext(C), f32 = LLVMFloatTypeInContext(C);
    LLVMTypeRef params[5] = {ptr, ptr, ptr, i64, i32};
    LLVMValueRef fn = LLVMAddFunction(M, "gpy_warm_up", LLVMFunctionType(LLVMVoidTypeInContext(C), params, 5, 0));
    if (ptx) LLVMSetFunctionCallConv(fn, LLVMPTXKernelCallConv);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(C);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(C, fn, "entry"),
                      body = LLVMAppendBasicBlockInContext(C, fn, "body"),
                      done = LLVMAppendBasicBlockInContext(C, fn, "done");
    LLVMPositionBuilderAtEnd(b, entry);
    LLVMValueRef tid = LLVMGetParam(fn, 4);
    if (ptx) {
        LLVMTypeRef ft = LLVMFunctionType(i32, NULL, 0, 0);
        tid = LLVMBuildCall2(b, ft, LLVMAddFunction(M, "llvm.nvvm.read.ptx.sreg.tid.x", ft), NULL, 0, "tid");
    }
    LLVMValueRef i = LLVMBuildSExt(b, tid, i64, "i");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, LLVMGetParam(fn, 3), "in"), body, done);
    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef xp = LLVMBuildGEP2(b, f32, LLVMGetParam(fn, 0), &i, 1, "xp");
    LLVMValueRef yp = LLVMBuildGEP2(b, f32, LLVMGetParam(fn, 1), &i, 1, "yp");
    LLVMValueRef sum = LLVMBuildFAdd(b, LLVMBuildLoad2(b, f32, xp, "x"), LLVMBuildLoad2(b, f32, yp, "y"), "s");
    LLVMBuildStore(b, sum, LLVMBuildGEP2(b, f32, LLVMGetParam(fn, 2), &i, 1, "op"));
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    return M;
}

/* The warm-up kernel through O3 and NVPTX code generation; the PTX is dropped. */
static void warm_ptx(LLVMTargetMachineRef tm) {
    char err[256], *msg = NULL, *triple = LLVMGetTargetMachineTriple(tm);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *layout = LLVMCopyStringRepOfTargetData(td);
    LLVMContextRef C = LLVMContextCreate();
    LLVMModuleRef M = warm_ir(C, triple, layout, true);
    LLVMMemoryBufferRef buf = NULL;
    if (run_o3(M, tm, err, sizeof err) && !LLVMTargetMachineEmitToMemoryBuffer(tm, M, LLVMAssemblyFile, &msg, &buf))
        LLVMDisposeMemoryBuffer(buf);
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(M);
    LLVMContextDispose(C);
    LLVMDisposeMessage(layout);
    LLVMDisposeTargetData(td);
    LLVMDisposeMessage(triple);
}

/* The warm-up function through O3 and the LLJIT (native code, linked, then removed). */
static void warm_host(LLVMTargetMachineRef tm, LLVMOrcLLJITRef J) {
    char err[256];
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMModuleRef M = warm_ir(LLVMOrcThreadSafeContextGetContext(tsc), LLVMOrcLLJITGetTripleString(J),
                              LLVMOrcLLJITGetDataLayoutStr(J), false);
    if (!run_o3(M, tm, err, sizeof err)) {
        LLVMDisposeModule(M);
        LLVMOrcDisposeThreadSafeContext(tsc);
        return;
    }
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(J));
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(M, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc);
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModuleWithRT(J, rt, tsm);
    LLVMOrcExecutorAddress addr;
    if (!e) e = LLVMOrcLLJITLookup(J, &addr, "gpy_warm_up");
    if (e) LLVMConsumeError(e);
    e = LLVMOrcResourceTrackerRemove(rt);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(rt);
}

JitPrepared *jit_prepared_new(void) {
    JitPrepared *p = calloc(1, sizeof *p);
    if (p) pthread_mutex_init(&p->lock, NULL);
    return p;
}

/* Each part makes its objects, warms up with them unless told to stop (the
** VM is compiling by then: competing for the core would only slow it), and
** publishes them. */
static void warm_up_ptx(JitPrepared *p, _Atomic bool *stop) {
    char err[256];
    int cc = choose_cc(0, NULL, err, sizeof err); /* a VM asking for another arch makes its own */
    LLVMTargetMachineRef tm = cc ? ptx_tm_new(cc, err, sizeof err) : NULL;
    if (!tm) return;
    if (!*stop) warm_ptx(tm);
    pthread_mutex_lock(&p->lock);
    p->ptx_cc = cc;
    p->ptx_tm = tm;
    pthread_mutex_unlock(&p->lock);
}

static void warm_up_host(JitPrepared *p, _Atomic bool *stop) {
    char err[256];
    LLVMTargetMachineRef tm = host_tm_new();
    LLVMOrcLLJITRef J = tm ? lljit_new(err, sizeof err) : NULL;
    if (J && !*stop) warm_host(tm, J);
    pthread_mutex_lock(&p->lock);
    p->host_tm = tm;
    p->jit = J;
    pthread_mutex_unlock(&p->lock);
}

/* The host first: where the program will likely run kernels on the CPU
** device, its first launch needs it, and compile_ptx is rarer there. */
void jit_warm_up(JitPrepared *p, int targets, _Atomic bool *stop) {
    if (targets & JIT_TARGET_CPU) warm_up_host(p, stop);
    if (!*stop && (targets & JIT_TARGET_PTX)) warm_up_ptx(p, stop);
}

void jit_adopt(VM *vm, JitPrepared *p) {
    pthread_mutex_lock(&p->lock);
    struct JitState *js = (p->ptx_tm || p->host_tm || p->jit) ? jit_state(vm) : NULL;
    if (js && p->ptx_tm && js->nptx == 0) {
        js->ptx_cc[0] = p->ptx_cc;
        js->ptx_tm[js->nptx++] = p->ptx_tm;
        p->ptx_tm = NULL;
    }
    if (js && p->host_tm && !js->host_tm) {
        js->host_tm = p->host_tm;
        p->host_tm = NULL;
    }
    if (js && p->jit && !js->jit) {
        js->jit = p->jit;
        p->jit = NULL;
    }
    pthread_mutex_unlock(&p->lock);
}

void jit_prepared_free(JitPrepared *p) {
    if (!p) return;
    if (p->ptx_tm) LLVMDisposeTargetMachine(p->ptx_tm);
    if (p->host_tm) LLVMDisposeTargetMachine(p->host_tm);
    if (p->jit) LLVMOrcDisposeLLJIT(p->jit);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* ------------------------------------------- for jit_cache.c (disk cache) */

LLVMOrcLLJITRef jit_lljit(VM *vm, char *err, size_t errsize) {
    struct JitState *js = jit_state(vm);
    if (!js) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    return get_lljit(js, err, errsize);
}

/* Gives k the tracker of its native code (removed by jit_kernel_free); on
** failure removes and releases it here. */
bool jit_kernel_set_tracker(JitKernel *k, LLVMOrcResourceTrackerRef rt) {
    if (!k->module) k->module = calloc(1, sizeof *k->module);
    if (!k->module) {
        LLVMErrorRef e = LLVMOrcResourceTrackerRemove(rt);
        if (e) LLVMConsumeError(e);
        LLVMOrcReleaseResourceTracker(rt);
        return false;
    }
    k->module->rt = rt;
    return true;
}
