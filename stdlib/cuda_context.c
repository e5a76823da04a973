/*
** cuda_context.c — the runtime API around the device that Numba programs
** touch: cuda.current_context() (memory info, reset, synchronize, streams),
** cuda.gpus.current and `with cuda.gpus[i]:`, list_devices, close,
** external_stream / legacy_default_stream / per_thread_default_stream, the
** pinned / mapped / defer_cleanup context managers, require_context, the
** is_*_supported queries, mapped_array_like / pinned_array_like and
** open_ipc_array.
**
** gpy has one context per device (the primary context, as Numba uses), so a
** context object holds nothing: it asks for the current device each time.
** Devices and streams live in cuda.c; this file reaches them through the
** module's own functions (get_current_device, select_device, synchronize)
** so that they keep one implementation.
*/
#include <string.h>
#include <unistd.h>

#include "cuda_priv.h"

/* Calls the cuda module's function name (argc arguments). */
static Value call_module(VM *vm, const char *name, int argc, Value *argv) {
    Value fn = dict_get_cstr(vm, vm->cuda->cuda->dict, name);
    if (IS_EMPTY(fn)) vm_raise_kind(vm, SystemError, "cuda.%s is missing", name);
    return vm_call(vm, fn, argc, argv);
}

static Value current_device(VM *vm) { return call_module(vm, "get_current_device", 0, NULL); }

static int current_device_id(VM *vm) {
    Value d = current_device(vm);
    vm_push_root(vm, d);
    int64_t id = arg_int(vm, "device id", vm_getattr(vm, d, cstr_name(vm, "id")));
    vm_pop_roots(vm, 1);
    return (int)id;
}

static void select_device(VM *vm, int id) {
    Value arg = INT_VAL(id);
    (void)call_module(vm, "select_device", 1, &arg);
}

/* ------------------------------------------------------ context managers */

/* What cuda.pinned(), cuda.mapped() and cuda.defer_cleanup() return: a
** context manager whose `as` value is value (None, or the mapped arrays). */
typedef struct CtxMgr {
    Obj obj;
    Value value;
} CtxMgr;

static void ctxmgr_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((CtxMgr *)o)->value); }

static Value ctxmgr_new(VM *vm, Value value) {
    vm_push_root(vm, value);
    CtxMgr *c = gc_alloc_obj(vm, vm->cuda->t_ctxmgr, sizeof(CtxMgr));
    c->value = value;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(c);
}

static Value m_ctxmgr_enter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "__enter__", argc, 1, 1);
    kw_none(vm, "__enter__", kwargs);
    return ((CtxMgr *)AS_OBJ(argv[0]))->value;
}

/* never swallows the exception of the block */
static Value m_ctxmgr_exit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)vm, (void)argc, (void)argv, (void)kwargs;
    return BOOL_VAL(false);
}

/* Raises unless v is a host (numpy) array: what pinning and mapping take. */
static NDArray *host_array_arg(VM *vm, const char *fname, Value v) {
    if (!nd_check(vm, v))
        vm_raise_kind(vm, TypeError, "cuda.%s() takes host (numpy) arrays, not '%s'", fname, vm_type_name(vm, v));
    return (NDArray *)AS_OBJ(v);
}

/* cuda.pinned(*arrays): page-locks the arrays for the block. Pinning only
** speeds up transfers; gpy's copies are synchronous, so the block runs the
** same without it: the arrays are checked and left as they are. */
static Value f_pinned(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "pinned", kwargs);
    for (int i = 0; i < argc; i++) host_array_arg(vm, "pinned", argv[i]);
    return ctxmgr_new(vm, NONE_VAL);
}

/* cuda.mapped(*arrays, stream=0): device arrays over the host arrays' own
** memory for the block (one array, or a list of them). On the CPU device
** that memory is what kernels use anyway; on a GPU it would need
** cuMemHostRegister, which gpy does not call (cuda.mapped_array allocates
** mapped memory instead). */
static Value f_mapped(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "mapped", kwargs);
    for (int i = 0; i < argc; i++) host_array_arg(vm, "mapped", argv[i]);
    if (cuda_gpu(vm))
        vm_raise_kind(vm, NotImplementedError,
                      "cuda.mapped() of existing host arrays is not supported on a GPU by gpy (it would need "
                      "cuMemHostRegister); allocate them with cuda.mapped_array() instead");
    if (argc == 1) return ctxmgr_new(vm, cuda_devarray_wrap(vm, (NDArray *)AS_OBJ(argv[0])));
    List *l = list_new(vm, argc);
    vm_push_root(vm, OBJ_VAL(l));
    for (int i = 0; i < argc; i++) list_append(vm, l, cuda_devarray_wrap(vm, (NDArray *)AS_OBJ(argv[i])));
    Value r = ctxmgr_new(vm, OBJ_VAL(l));
    vm_pop_roots(vm, 1);
    return r;
}

/* cuda.defer_cleanup(): gpy frees device memory when the collector finds
** it dead, never in the middle of a block: nothing to defer. */
static Value f_defer_cleanup(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "defer_cleanup", argc, 0, 0);
    kw_none(vm, "defer_cleanup", kwargs);
    return ctxmgr_new(vm, NONE_VAL);
}

/* @cuda.require_context: a context always exists once a device is chosen. */
static Value f_require_context(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "require_context", argc, 1, 1);
    kw_none(vm, "require_context", kwargs);
    return argv[0];
}

/* ---------------------------------------------------------------- devices */

/* cuda.gpus.current: the device of the current context. */
static Value gpus_getattr(VM *vm, Value self, Str *name) {
    if (strcmp(name->chars, "current") == 0) return current_device(vm);
    return generic_getattr(vm, self, name);
}

/* `with cuda.gpus[i]:` makes device i current for the block (Numba's
** _DeviceContextManager: __enter__ gives None) and restores the one
** before on exit. */
static Value m_device_enter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "__enter__", argc, 1, 1);
    kw_none(vm, "__enter__", kwargs);
    CudaState *st = vm->cuda;
    int n = (int)(sizeof st->gpus_stack / sizeof st->gpus_stack[0]);
    if (st->gpus_depth >= n) vm_raise_kind(vm, RuntimeError, "more than %d nested 'with cuda.gpus[i]' blocks", n);
    int id = (int)arg_int(vm, "device id", vm_getattr(vm, argv[0], cstr_name(vm, "id")));
    int prev = current_device_id(vm);
    select_device(vm, id);
    st->gpus_stack[st->gpus_depth++] = prev;
    return NONE_VAL;
}

static Value m_device_exit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc, (void)argv, (void)kwargs;
    CudaState *st = vm->cuda;
    if (st->gpus_depth > 0) select_device(vm, st->gpus_stack[--st->gpus_depth]);
    return BOOL_VAL(false);
}

static Value f_list_devices(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "list_devices", argc, 0, 0);
    kw_none(vm, "list_devices", kwargs);
    return dict_get_cstr(vm, vm->cuda->cuda->dict, "gpus");
}

/* What a launch can use: float16 arithmetic yes; bfloat16 and fp8 have no
** type in gpy's kernel compiler, so programs take their fallback paths. */
static Value f_is_float16_supported(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "is_float16_supported", argc, 0, 0);
    kw_none(vm, "is_float16_supported", kwargs);
    return BOOL_VAL(true);
}

static Value f_is_bfloat16_supported(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "is_bfloat16_supported", argc, 0, 0);
    kw_none(vm, "is_bfloat16_supported", kwargs);
    return BOOL_VAL(false);
}

static Value f_is_fp8_supported(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "is_fp8_supported", argc, 0, 0);
    kw_none(vm, "is_fp8_supported", kwargs);
    return BOOL_VAL(false);
}

/* ---------------------------------------------------------------- streams */

static Value f_legacy_default_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "legacy_default_stream", argc, 0, 0);
    kw_none(vm, "legacy_default_stream", kwargs);
    return cuda_stream_from_handle(vm, 1, false); /* CU_STREAM_LEGACY */
}

static Value f_per_thread_default_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "per_thread_default_stream", argc, 0, 0);
    kw_none(vm, "per_thread_default_stream", kwargs);
    return cuda_stream_from_handle(vm, 2, false); /* CU_STREAM_PER_THREAD */
}

/* cuda.external_stream(ptr): a stream another library created; gpy queues
** work on it (on a GPU) and never destroys it. */
static Value f_external_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "external_stream", argc, 1, 1);
    kw_none(vm, "external_stream", kwargs);
    int64_t ptr = arg_int(vm, "external_stream", argv[0]);
    return cuda_stream_from_handle(vm, (uintptr_t)ptr, true);
}

/* ---------------------------------------------------------------- context */

static Value context_new(VM *vm) { return OBJ_VAL(gc_alloc_obj(vm, vm->cuda->t_context, sizeof(Obj))); }

/* cuda.current_context(devnum=None) */
static Value f_current_context(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value devnum = kw_take(vm, kwargs, "devnum");
    kw_done(vm, "current_context", kwargs);
    arg_count(vm, "current_context", argc, 0, 1);
    if (argc == 1) devnum = argv[0];
    if (!IS_EMPTY(devnum) && !IS_NONE(devnum)) select_device(vm, (int)arg_int(vm, "current_context", devnum));
    else (void)cuda_gpu(vm); /* GPY_DEVICE=cuda without a GPU raises here, as Numba does without CUDA */
    return context_new(vm);
}

/* ctx.get_memory_info() -> MemoryInfo(free, total), bytes. On the CPU
** device, device memory is host memory: the machine's available and total
** physical memory. */
static Value m_get_memory_info(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "get_memory_info", argc, 1, 1);
    kw_none(vm, "get_memory_info", kwargs);
    size_t free_b = 0, total_b = 0;
    GpuCuda *c = cuda_gpu(vm);
    if (c) {
        char err[GPU_CUDA_ERRSIZE];
        int status = gpu_cuda_mem_info(c, &free_b, &total_b, err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
    } else {
        long page = sysconf(_SC_PAGESIZE), avail = sysconf(_SC_AVPHYS_PAGES), phys = sysconf(_SC_PHYS_PAGES);
        if (page > 0 && phys > 0) total_b = (size_t)phys * (size_t)page;
        if (page > 0 && avail > 0) free_b = (size_t)avail * (size_t)page;
        if (free_b > total_b) free_b = total_b;
    }
    static const char *const fields[] = {"free", "total"};
    Value values[2] = {INT_VAL((int64_t)free_b), INT_VAL((int64_t)total_b)};
    return structseq_new(vm, "MemoryInfo", fields, 2, 2, values);
}

/* ctx.reset(): frees everything the context holds, as Numba's does (the
** device's reset: device arrays, streams and events made before are dead).
** The CPU device has no context to lose: nothing happens. */
static Value m_context_reset(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "reset", argc, 1, 1);
    kw_none(vm, "reset", kwargs);
    if (!cuda_gpu(vm)) return NONE_VAL;
    Value d = current_device(vm);
    vm_push_root(vm, d);
    (void)vm_call_method(vm, d, cstr_name(vm, "reset"), 0, NULL);
    vm_pop_roots(vm, 1);
    return NONE_VAL;
}

static Value m_context_synchronize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "synchronize", argc, 1, 1);
    kw_none(vm, "synchronize", kwargs);
    return call_module(vm, "synchronize", 0, NULL);
}

static Value m_context_get_default_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "get_default_stream", argc, 1, 1);
    kw_none(vm, "get_default_stream", kwargs);
    return call_module(vm, "default_stream", 0, NULL);
}

static Value m_context_create_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "create_stream", argc, 1, 1);
    kw_none(vm, "create_stream", kwargs);
    return call_module(vm, "stream", 0, NULL);
}

static Value m_context_legacy(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return f_legacy_default_stream(vm, argc - 1, argv + 1, kwargs);
}

static Value m_context_per_thread(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return f_per_thread_default_stream(vm, argc - 1, argv + 1, kwargs);
}

static Value m_context_external(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return f_external_stream(vm, argc - 1, argv + 1, kwargs);
}

static Value context_getattr(VM *vm, Value self, Str *name) {
    if (strcmp(name->chars, "device") == 0) return current_device(vm);
    return generic_getattr(vm, self, name);
}

static Value context_repr(VM *vm, Value self) {
    (void)self;
    return STR_VAL(str_printf(vm, "<CUDA context of device %d>", current_device_id(vm)));
}

/* cuda.close(): drops the context; on a GPU what reset does, on the CPU
** device nothing (the next kernel finds the device as before). */
static Value f_close(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "close", argc, 0, 0);
    kw_none(vm, "close", kwargs);
    Value ctx = context_new(vm);
    return m_context_reset(vm, 1, &ctx, NULL);
}

/* ------------------------------------------------------------------ setup */

void cuda_context_init(VM *vm, CudaState *st, Module *m) {
    Type *t = type_new_builtin(vm, "Context", vm->t_object, 0);
    t->getattr = context_getattr;
    t->repr = context_repr;
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "numba.cuda.cudadrv.driver")));
    type_add_method(vm, t, "get_memory_info", m_get_memory_info);
    type_add_method(vm, t, "reset", m_context_reset);
    type_add_method(vm, t, "synchronize", m_context_synchronize);
    type_add_method(vm, t, "get_default_stream", m_context_get_default_stream);
    type_add_method(vm, t, "get_legacy_default_stream", m_context_legacy);
    type_add_method(vm, t, "get_per_thread_default_stream", m_context_per_thread);
    type_add_method(vm, t, "create_stream", m_context_create_stream);
    type_add_method(vm, t, "create_external_stream", m_context_external);
    st->t_context = t;
    t = type_new_builtin(vm, "_ContextManager", vm->t_object, 0);
    t->mark = ctxmgr_mark;
    type_add_method(vm, t, "__enter__", m_ctxmgr_enter);
    type_add_method(vm, t, "__exit__", m_ctxmgr_exit);
    st->t_ctxmgr = t;
    /* the device list and devices are cuda.c's types: they gain `current` and `with` here */
    Value gpus = dict_get_cstr(vm, m->dict, "gpus");
    AS_OBJ(gpus)->type->getattr = gpus_getattr;
    type_add_method(vm, st->t_device, "__enter__", m_device_enter);
    type_add_method(vm, st->t_device, "__exit__", m_device_exit);

    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"current_context", f_current_context},
        {"list_devices", f_list_devices},
        {"close", f_close},
        {"is_float16_supported", f_is_float16_supported},
        {"is_bfloat16_supported", f_is_bfloat16_supported},
        {"is_fp8_supported", f_is_fp8_supported},
        {"legacy_default_stream", f_legacy_default_stream},
        {"per_thread_default_stream", f_per_thread_default_stream},
        {"external_stream", f_external_stream},
        {"pinned", f_pinned},
        {"mapped", f_mapped},
        {"defer_cleanup", f_defer_cleanup},
        {"require_context", f_require_context},
        {"mapped_array_like", cuda_f_mapped_array_like},
        {"pinned_array_like", cuda_f_pinned_array_like},
        {"open_ipc_array", cuda_f_open_ipc_array},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
}
