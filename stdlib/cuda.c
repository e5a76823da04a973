/*
** cuda.c — the `cuda` module (importable as `cuda`, `numba.cuda`, and as
** `from numba import cuda`) and the small `numba` module around it.
**
** Kernels are compiled by jit/ and run by a device; this file only builds
** the module objects, the per-VM state (vm->cuda) and the host-side
** stand-ins of the kernel builtins (cuda.threadIdx, cuda.syncthreads, ...):
** the kernel compiler resolves those by name inside kernels, and on the
** host they raise a clear error when used. Device arrays live in
** cuda_array.c, dispatchers and launches in cuda_dispatch.c.
*/
#include <stdlib.h>
#include <string.h>

#include "cuda_priv.h"

/* ------------------------------------------------------------- intrinsics */

typedef enum IntrKind {
    INTR_DIM3,      /* threadIdx, blockIdx, blockDim, gridDim: .x/.y/.z */
    INTR_FUNC,      /* grid(), syncthreads(), atomic.add() ... */
    INTR_VALUE,     /* laneid, warpsize */
    INTR_NAMESPACE, /* shared, local, const, atomic: attributes in dict */
} IntrKind;

/* A host-side stand-in for something that only exists inside kernels. */
typedef struct Intrinsic {
    Obj obj;
    const char *name; /* "threadIdx", "atomic.add" (static string) */
    IntrKind kind;
    Dict *attrs;      /* INTR_NAMESPACE */
} Intrinsic;

static void intr_mark(VM *vm, Obj *o) { gc_mark_obj(vm, (Obj *)((Intrinsic *)o)->attrs); }

static Value intr_repr(VM *vm, Value self) {
    Intrinsic *in = (Intrinsic *)AS_OBJ(self);
    return STR_VAL(str_printf(vm, "<cuda.%s (only available inside kernels)>", in->name));
}

static Value intr_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    (void)argc, (void)argv, (void)kwargs;
    Intrinsic *in = (Intrinsic *)AS_OBJ(self);
    if (in->kind == INTR_FUNC)
        vm_raise_kind(vm, RuntimeError, "cuda.%s() is only available inside kernels", in->name);
    vm_raise_kind(vm, TypeError, "cuda.%s is not callable (and only available inside kernels)", in->name);
}

static Value intr_getattr(VM *vm, Value self, Str *name) {
    Intrinsic *in = (Intrinsic *)AS_OBJ(self);
    const char *n = name->chars;
    if (in->kind == INTR_NAMESPACE && in->attrs) {
        Value v = dict_get_str(vm, in->attrs, name);
        if (!IS_EMPTY(v)) return v;
    }
    if (in->kind == INTR_DIM3 && (strcmp(n, "x") == 0 || strcmp(n, "y") == 0 || strcmp(n, "z") == 0))
        vm_raise_kind(vm, RuntimeError, "cuda.%s.%s is only available inside kernels", in->name, n);
    return generic_getattr(vm, self, name);
}

static Value intr_binop(VM *vm, BinOp op, Value a, Value b) {
    (void)op;
    Value self = IS_OBJ(a) && AS_OBJ(a)->type == vm->cuda->t_intrinsic ? a : b;
    vm_raise_kind(vm, RuntimeError, "cuda.%s is only available inside kernels", ((Intrinsic *)AS_OBJ(self))->name);
}

static Value intr_new(VM *vm, const char *name, IntrKind kind) {
    Intrinsic *in = gc_alloc_obj(vm, vm->cuda->t_intrinsic, sizeof(Intrinsic));
    in->name = name;
    in->kind = kind;
    if (kind == INTR_NAMESPACE) {
        vm_push_root(vm, OBJ_VAL(in));
        in->attrs = dict_new(vm);
        vm_pop_roots(vm, 1);
    }
    return OBJ_VAL(in);
}

/* A namespace (cuda.atomic ...) with the given kernel-only functions. */
static Value namespace_new(VM *vm, const char *name, const char *const *fns, const char *const *qual, int n) {
    Value ns = intr_new(vm, name, INTR_NAMESPACE);
    vm_push_root(vm, ns);
    Intrinsic *in = (Intrinsic *)AS_OBJ(ns);
    for (int i = 0; i < n; i++) dict_set_cstr(vm, in->attrs, fns[i], intr_new(vm, qual[i], INTR_FUNC));
    vm_pop_roots(vm, 1);
    return ns;
}

/* ------------------------------------------------------- small functions */

static Value f_is_available(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "is_available", argc, 0, 0);
    kw_none(vm, "is_available", kwargs);
    return BOOL_VAL(false); /* no GPU driver yet: kernels run on the CPU device */
}

static Value f_synchronize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "synchronize", argc, 0, 0);
    kw_none(vm, "synchronize", kwargs);
    return NONE_VAL; /* CPU-device launches are synchronous */
}

/* Prints the devices like Numba's cuda.detect() and returns True. */
static Value f_detect(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "detect", argc, 0, 0);
    kw_none(vm, "detect", kwargs);
    CudaState *st = cuda_state(vm);
    if (!st->device) {
        st->device = gpu_cpu_new(0);
        if (!st->device) vm_raise_kind(vm, RuntimeError, "cannot create the CPU device");
    }
    int workers = gpu_cpu_workers(st->device);
    Value out = file_sys_stream(vm, "stdout");
    Str *s = str_printf(vm,
                        "Found 1 CUDA devices\n"
                        "id 0    gpy CPU device (%d worker thread%s)    [SUPPORTED]\n"
                        "Summary:\n\t1/1 devices are supported\n",
                        workers, workers == 1 ? "" : "s");
    file_write(vm, out, s);
    return BOOL_VAL(true);
}

/* ---- streams: accepted everywhere Numba takes one; all work is synchronous ---- */

static Value f_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "stream", argc, 0, 0);
    kw_none(vm, "stream", kwargs);
    return OBJ_VAL(gc_alloc_obj(vm, cuda_state(vm)->t_stream, sizeof(Obj)));
}

static Value m_stream_synchronize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "synchronize", argc, 1, 1);
    kw_none(vm, "synchronize", kwargs);
    return NONE_VAL;
}

static Value stream_repr(VM *vm, Value self) {
    return STR_VAL(str_printf(vm, "<CPU device stream %p>", (void *)AS_OBJ(self)));
}

static Value f_host_jit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc, (void)argv, (void)kwargs;
    vm_raise_kind(vm, NotImplementedError, "host @jit is not supported yet (use @cuda.jit kernels)");
}

/* ------------------------------------------------------------------ state */

/* vm_free hook: frees compiled kernels and the device while the jit and
** the objects still exist. */
static void cuda_free_hook(VM *vm) {
    CudaState *st = vm->cuda;
    if (!st) return;
    cuda_dispatch_free_all(vm, st);
    if (st->device) gpu_cpu_free(st->device);
    st->device = NULL;
    free(st);
    vm->cuda = NULL;
}

/* Hooks run newest first; ours frees kernels through the jit, so it must
** run before the jit's own hook, which registers at the jit's first use:
** after each compile we move ours to the newest position. */
void cuda_hook_order(VM *vm) {
    int32_t n = vm->nfree_hooks, at = -1;
    for (int32_t i = 0; i < n; i++)
        if (vm->free_hooks[i] == cuda_free_hook) at = i;
    if (at < 0) {
        vm_on_free(vm, cuda_free_hook);
        return;
    }
    for (int32_t i = at; i < n - 1; i++) vm->free_hooks[i] = vm->free_hooks[i + 1];
    vm->free_hooks[n - 1] = cuda_free_hook;
}

static const struct {
    const char *name;
    NDType dt;
} scalar_names[] = {
    {"float16", ND_FLOAT16}, {"float32", ND_FLOAT32}, {"float64", ND_FLOAT64}, {"int8", ND_INT8},
    {"int16", ND_INT16},     {"int32", ND_INT32},     {"int64", ND_INT64},     {"uint8", ND_UINT8},
    {"uint16", ND_UINT16},   {"uint32", ND_UINT32},   {"uint64", ND_UINT64},   {"boolean", ND_BOOL},
    {"bool_", ND_BOOL},      {"intp", ND_INT64},      {"uintp", ND_UINT64},    {"double", ND_FLOAT64},
    {"f4", ND_FLOAT32},      {"f8", ND_FLOAT64},      {"i4", ND_INT32},        {"i8", ND_INT64},
};

/* Builds the cuda module and its types (called once per VM). */
static void build_cuda(VM *vm, CudaState *st) {
    Type *t = type_new_builtin(vm, "cuda_intrinsic", vm->t_object, 0);
    t->repr = intr_repr;
    t->call = intr_call;
    t->getattr = intr_getattr;
    t->binop = intr_binop;
    t->mark = intr_mark;
    st->t_intrinsic = t;
    t = type_new_builtin(vm, "Stream", vm->t_object, 0);
    t->repr = stream_repr;
    type_add_method(vm, t, "synchronize", m_stream_synchronize);
    st->t_stream = t;
    st->t_typing_error = type_new_builtin(vm, "TypingError", vm->exc[EXC_TypeError], TYPE_EXCEPTION | TYPE_BASETYPE);
    dict_set_cstr(vm, st->t_typing_error->dict, "__module__", STR_VAL(str_cstr(vm, "numba.core.errors")));
    cuda_array_init(vm, st);
    cuda_dispatch_init(vm, st);

    Module *m = module_new(vm, str_cstr(vm, "numba.cuda"));
    st->cuda = m;
    /* the module is kept alive through a type's dict (types are GC roots) */
    dict_set_cstr(vm, st->t_intrinsic->dict, "__cuda_module__", OBJ_VAL(m));
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"jit", cuda_f_jit},
        {"compile_ptx", cuda_f_compile_ptx},
        {"to_device", cuda_f_to_device},
        {"device_array", cuda_f_device_array},
        {"device_array_like", cuda_f_device_array_like},
        {"pinned_array", cuda_f_pinned_array},
        {"mapped_array", cuda_f_pinned_array},
        {"managed_array", cuda_f_pinned_array},
        {"is_available", f_is_available},
        {"detect", f_detect},
        {"synchronize", f_synchronize},
        {"stream", f_stream},
        {"default_stream", f_stream},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);

    static const char *const dims[] = {"threadIdx", "blockIdx", "blockDim", "gridDim"};
    for (int i = 0; i < 4; i++) dict_set_cstr(vm, m->dict, dims[i], intr_new(vm, dims[i], INTR_DIM3));
    static const char *const kfns[] = {"grid", "gridsize", "syncthreads", "syncwarp", "threadfence",
                                       "threadfence_block", "threadfence_system"};
    for (size_t i = 0; i < sizeof kfns / sizeof kfns[0]; i++)
        dict_set_cstr(vm, m->dict, kfns[i], intr_new(vm, kfns[i], INTR_FUNC));
    dict_set_cstr(vm, m->dict, "laneid", intr_new(vm, "laneid", INTR_VALUE));
    dict_set_cstr(vm, m->dict, "warpsize", intr_new(vm, "warpsize", INTR_VALUE));

    static const char *const arr[] = {"array"};
    static const char *const shared_q[] = {"shared.array"};
    static const char *const local_q[] = {"local.array"};
    static const char *const const_fns[] = {"array_like"};
    static const char *const const_q[] = {"const.array_like"};
    dict_set_cstr(vm, m->dict, "shared", namespace_new(vm, "shared", arr, shared_q, 1));
    dict_set_cstr(vm, m->dict, "local", namespace_new(vm, "local", arr, local_q, 1));
    dict_set_cstr(vm, m->dict, "const", namespace_new(vm, "const", const_fns, const_q, 1));
    static const char *const atomics[] = {"add", "sub", "max", "min", "exch", "cas", "compare_and_swap"};
    static const char *const atomics_q[] = {"atomic.add", "atomic.sub", "atomic.max", "atomic.min",
                                            "atomic.exch", "atomic.cas", "atomic.compare_and_swap"};
    dict_set_cstr(vm, m->dict, "atomic", namespace_new(vm, "atomic", atomics, atomics_q, 7));
}

CudaState *cuda_state(VM *vm) {
    if (vm->cuda) return vm->cuda;
    CudaState *st = calloc(1, sizeof *st);
    if (!st) vm_throw(vm, vm->memory_error);
    vm->cuda = st;
    cuda_hook_order(vm);
    build_cuda(vm, st);
    return st;
}

/* ---------------------------------------------------------------- modules */

static Module *build_cuda_module(VM *vm) { return cuda_state(vm)->cuda; }

static Module *build_numba(VM *vm) {
    CudaState *st = cuda_state(vm);
    if (st->numba) return st->numba;
    Module *m = module_new(vm, str_cstr(vm, "numba"));
    st->numba = m;
    dict_set_cstr(vm, st->t_intrinsic->dict, "__numba_module__", OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, "__version__", STR_VAL(str_cstr(vm, "0.61.0+gpy" GPY_VERSION)));
    dict_set_cstr(vm, m->dict, "cuda", OBJ_VAL(st->cuda));
    module_add_function(vm, m, "jit", f_host_jit);
    module_add_function(vm, m, "njit", f_host_jit);
    for (size_t i = 0; i < sizeof scalar_names / sizeof scalar_names[0]; i++)
        dict_set_cstr(vm, m->dict, scalar_names[i].name, nd_scalar_type(vm, scalar_names[i].dt));
    return m;
}

/* numba.core.errors: the exception classes a program may catch. */
static Module *build_numba_core_errors(VM *vm) {
    CudaState *st = cuda_state(vm);
    Module *m = module_new(vm, str_cstr(vm, "numba.core.errors"));
    vm_push_root(vm, OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, "TypingError", OBJ_VAL(st->t_typing_error));
    vm_pop_roots(vm, 1);
    return m;
}

static Module *build_numba_core(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "numba.core"));
    vm_push_root(vm, OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, "errors", OBJ_VAL(build_numba_core_errors(vm)));
    vm_pop_roots(vm, 1);
    return m;
}

void cuda_register_modules(VM *vm) {
    module_register_native(vm, "cuda", build_cuda_module);
    module_register_native(vm, "numba", build_numba);
    module_register_native(vm, "numba.cuda", build_cuda_module);
    module_register_native(vm, "numba.core", build_numba_core);
    module_register_native(vm, "numba.core.errors", build_numba_core_errors);
}
