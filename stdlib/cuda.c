/*
** cuda.c — the `cuda` module (importable as `cuda`, `numba.cuda`, and as
** `from numba import cuda`) and the small `numba` module around it.
**
** Kernels are compiled by jit/ and run by a device; this file only builds
** the module objects, the per-VM state (vm->cuda) and the host-side
** stand-ins of the kernel builtins (cuda.threadIdx, cuda.syncthreads, ...):
** the kernel compiler resolves those by name inside kernels, and on the
** host they raise a clear error when used. It also decides, at first use,
** which device runs kernels (cuda_device_kind), and holds devices, streams
** and events. Device arrays live in cuda_array.c, dispatchers and launches
** in cuda_dispatch.c.
*/
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../jit/jit_loader.h"
#include "cuda_priv.h"
#include "numba_types.h"
#include "signals.h"

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

/* ---------------------------------------------------------- device choice */

/* Decides which device runs kernels: config.device (GPY_DEVICE=cpu|cuda)
** forces one; by default the GPU when the driver loads and reports a device.
** Only the first call looks (so CPU-only programs never dlopen the driver). */
CudaDevKind cuda_device_kind(VM *vm) {
    CudaState *st = cuda_state(vm);
    if (st->kind != CUDA_DEV_UNDECIDED) return st->kind;
    int device = vm->config.device;
    if (device != GPY_DEVICE_AUTO && device != GPY_DEVICE_CPU && device != GPY_DEVICE_CUDA)
        vm_raise_kind(vm, ValueError, "config.device must be GPY_DEVICE_AUTO, GPY_DEVICE_CPU or GPY_DEVICE_CUDA, not %d",
                      device);
    char why[480];
    GpuDeviceKind kind = gpu_device_select((GpuDeviceWant)device, vm->config.libcuda, &st->gpu, why, sizeof why);
    if (kind == GPU_KIND_CUDA) {
        gpu_cuda_set_interrupt(st->gpu, &vm->interrupt_requested);
        st->gen++;
        return st->kind = CUDA_DEV_GPU;
    }
    if (kind == GPU_KIND_CPU) return st->kind = CUDA_DEV_CPU;
    snprintf(st->why, sizeof st->why, "GPY_DEVICE=cuda: %s", why);
    return st->kind = CUDA_DEV_FAILED;
}

GpuCuda *cuda_gpu(VM *vm) {
    CudaDevKind k = cuda_device_kind(vm);
    if (k == CUDA_DEV_FAILED) vm_raise(vm, vm->cuda->t_api_error, "%s", vm->cuda->why);
    return k == CUDA_DEV_GPU ? vm->cuda->gpu : NULL;
}

_Noreturn void cuda_raise_status(VM *vm, int status, const char *msg) {
    CudaState *st = cuda_state(vm);
    if (status > 0) vm_raise(vm, st->t_api_error, "%s", msg);
    if (status == GPU_CUDA_ELIMIT || status == GPU_CUDA_EARG) vm_raise_kind(vm, ValueError, "%s", msg);
    if (status == GPU_CUDA_ENOMEM) vm_throw(vm, vm->memory_error);
    if (status == GPU_CUDA_EINTR) vm_raise_interrupt(vm); /* a wait that an interrupt request ended */
    vm_raise(vm, st->t_api_error, "%s", msg);
}

/* The CPU device, created at first use. */
static CpuDevice *cpu_device(VM *vm) {
    CudaState *st = cuda_state(vm);
    if (!st->device) {
        st->device = gpu_cpu_new(vm->config.cpu_threads, vm->config.cpu_fiber_stack);
        if (!st->device) vm_raise_kind(vm, RuntimeError, "cannot create the CPU device");
        gpu_cpu_set_interrupt(st->device, &vm->interrupt_requested);
    }
    return st->device;
}

const char *cuda_device_description(int device, const char *libcuda, char *buf, size_t size) {
    return gpu_device_describe((GpuDeviceWant)device, libcuda, "GPY_DEVICE", buf, size);
}

/* ---------------------------------------------------------------- devices */

typedef struct Device {
    Obj obj;
    int id;
    bool cpu;
    GpuCudaProps props;
} Device;

static Value device_new(VM *vm, int id) {
    CudaState *st = cuda_state(vm);
    Device *d = gc_alloc_obj(vm, st->t_device, sizeof(Device));
    d->id = id;
    if (cuda_gpu(vm)) {
        char err[GPU_CUDA_ERRSIZE];
        int status = gpu_cuda_device_props(vm->config.libcuda, id, &d->props, err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
        return OBJ_VAL(d);
    }
    d->cpu = true;
    GpuCudaProps *p = &d->props;
    snprintf(p->name, sizeof p->name, "gpy CPU device");
    p->cc_major = 8, p->cc_minor = 0;
    p->sm_count = gpu_cpu_workers(cpu_device(vm));
    p->max_threads_per_block = 1024;
    p->max_shared_per_block = p->max_shared_per_block_optin = 48 * 1024;
    p->warp_size = 32;
    p->max_block_dim[0] = p->max_block_dim[1] = 1024, p->max_block_dim[2] = 64;
    p->max_grid_dim[0] = 0x7fffffff, p->max_grid_dim[1] = p->max_grid_dim[2] = 65535;
    return OBJ_VAL(d);
}

static Value device_getattr(VM *vm, Value self, Str *name) {
    Device *d = (Device *)AS_OBJ(self);
    const GpuCudaProps *p = &d->props;
    const char *n = name->chars;
    if (strcmp(n, "id") == 0) return INT_VAL(d->id);
    if (strcmp(n, "name") == 0) return STR_VAL(str_cstr(vm, p->name));
    if (strcmp(n, "compute_capability") == 0) {
        Value items[2] = {INT_VAL(p->cc_major), INT_VAL(p->cc_minor)};
        return OBJ_VAL(tuple_from_array(vm, 2, items));
    }
    static const struct {
        const char *name;
        size_t off;
    } ints[] = {
        {"MULTIPROCESSOR_COUNT", offsetof(GpuCudaProps, sm_count)},
        {"MAX_THREADS_PER_BLOCK", offsetof(GpuCudaProps, max_threads_per_block)},
        {"MAX_SHARED_MEMORY_PER_BLOCK", offsetof(GpuCudaProps, max_shared_per_block)},
        {"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", offsetof(GpuCudaProps, max_shared_per_block_optin)},
        {"WARP_SIZE", offsetof(GpuCudaProps, warp_size)},
        {"MAX_BLOCK_DIM_X", offsetof(GpuCudaProps, max_block_dim)},
        {"MAX_BLOCK_DIM_Y", offsetof(GpuCudaProps, max_block_dim) + sizeof(int)},
        {"MAX_BLOCK_DIM_Z", offsetof(GpuCudaProps, max_block_dim) + 2 * sizeof(int)},
        {"MAX_GRID_DIM_X", offsetof(GpuCudaProps, max_grid_dim)},
        {"MAX_GRID_DIM_Y", offsetof(GpuCudaProps, max_grid_dim) + sizeof(int)},
        {"MAX_GRID_DIM_Z", offsetof(GpuCudaProps, max_grid_dim) + 2 * sizeof(int)},
        {"MAX_THREADS_PER_MULTI_PROCESSOR", offsetof(GpuCudaProps, max_threads_per_sm)},
        {"CLOCK_RATE", offsetof(GpuCudaProps, clock_khz)},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (strcmp(n, ints[i].name) == 0) return INT_VAL(*(const int *)((const char *)p + ints[i].off));
    if (strcmp(n, "total_memory") == 0) return INT_VAL((int64_t)p->total_memory);
    return generic_getattr(vm, self, name);
}

static Value device_repr(VM *vm, Value self) {
    Device *d = (Device *)AS_OBJ(self);
    return STR_VAL(str_printf(vm, "<CUDA device %d '%s'>", d->id, d->props.name));
}

/* dev.reset(): the way out of a sticky error (every device object made before is lost). */
static Value m_device_reset(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "reset", argc, 1, 1);
    kw_none(vm, "reset", kwargs);
    GpuCuda *c = cuda_gpu(vm);
    if (!c) return NONE_VAL;
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_reset(c, err, sizeof err);
    vm->cuda->gen++;
    if (status) cuda_raise_status(vm, status, err);
    return NONE_VAL;
}

static int device_count(VM *vm) {
    if (!cuda_gpu(vm)) return 1;
    int n = 0;
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_device_count(vm->config.libcuda, &n, err, sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    return n;
}

static int current_id(VM *vm) {
    GpuCuda *c = cuda_gpu(vm);
    return c ? gpu_cuda_props(c)->ordinal : 0;
}

static Value f_get_current_device(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "get_current_device", argc, 0, 0);
    kw_none(vm, "get_current_device", kwargs);
    return device_new(vm, current_id(vm));
}

/* cuda.select_device(i): switches the GPU (device arrays, streams and
** compiled modules made on the previous one are lost). */
static Value f_select_device(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "select_device", argc, 1, 1);
    kw_none(vm, "select_device", kwargs);
    int64_t id = arg_int(vm, "select_device", argv[0]);
    int n = device_count(vm);
    if (id < 0 || id >= n)
        vm_raise_kind(vm, ValueError, "select_device(%lld): there %s %d device%s", (long long)id, n == 1 ? "is" : "are",
                      n, n == 1 ? "" : "s");
    CudaState *st = vm->cuda;
    if (st->gpu && gpu_cuda_props(st->gpu)->ordinal != id) {
        char err[GPU_CUDA_ERRSIZE];
        int status = 0;
        GpuCuda *c = gpu_cuda_open(vm->config.libcuda, (int)id, &status, err, sizeof err);
        if (!c) cuda_raise_status(vm, status, err);
        gpu_cuda_set_interrupt(c, &vm->interrupt_requested);
        cuda_dispatch_free_all(vm, st);
        gpu_cuda_close(st->gpu);
        st->gpu = c;
        st->gen++;
    }
    return device_new(vm, (int)id);
}

/* cuda.gpus: len() and indexing, looked up when used (not at import). */
static int64_t gpus_len(VM *vm, Value self) {
    (void)self;
    return device_count(vm);
}

static Value gpus_getitem(VM *vm, Value self, Value key) {
    (void)self;
    int64_t i = arg_int(vm, "gpus", key), n = device_count(vm);
    if (i < 0) i += n;
    if (i < 0 || i >= n) vm_raise_kind(vm, IndexError, "device index out of range (%lld devices)", (long long)n);
    return device_new(vm, (int)i);
}

static Value gpus_repr(VM *vm, Value self) {
    (void)self;
    return STR_VAL(str_printf(vm, "<Managed Device list of %d device%s>", device_count(vm), device_count(vm) == 1 ? "" : "s"));
}

/* ------------------------------------------------------- small functions */

static Value f_is_available(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "is_available", argc, 0, 0);
    kw_none(vm, "is_available", kwargs);
    return BOOL_VAL(cuda_device_kind(vm) == CUDA_DEV_GPU);
}

static Value f_synchronize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "synchronize", argc, 0, 0);
    kw_none(vm, "synchronize", kwargs);
    GpuCuda *c = cuda_gpu(vm);
    if (c) {
        char err[GPU_CUDA_ERRSIZE];
        int status = gpu_cuda_synchronize(c, err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
    }
    return NONE_VAL; /* CPU-device launches are synchronous */
}

/* Prints the devices like Numba's cuda.detect() and which one runs kernels. */
static Value f_detect(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "detect", argc, 0, 0);
    kw_none(vm, "detect", kwargs);
    StrBuf sb;
    sb_init(&sb);
    GpuCuda *c = cuda_gpu(vm);
    if (c) {
        int n = device_count(vm);
        sb_printf(&sb, "Found %d CUDA devices\n", n);
        for (int i = 0; i < n; i++) {
            GpuCudaProps p;
            char err[GPU_CUDA_ERRSIZE];
            if (gpu_cuda_device_props(vm->config.libcuda, i, &p, err, sizeof err) != 0) continue;
            sb_printf(&sb, "id %d    b'%s'    [SUPPORTED]\n", i, p.name);
            sb_printf(&sb, "                      Compute Capability: %d.%d\n", p.cc_major, p.cc_minor);
            sb_printf(&sb, "                              PCI Bus ID: 0x%x\n", (unsigned)p.pci_bus);
            sb_printf(&sb, "                        Multiprocessors: %d\n", p.sm_count);
        }
        sb_printf(&sb, "Summary:\n\t%d/%d devices are supported\n", n, n);
        sb_printf(&sb, "gpy runs kernels on CUDA device %d (driver %s)\n", gpu_cuda_props(c)->ordinal,
                  gpu_cuda_library_path(vm->config.libcuda));
    } else {
        int workers = gpu_cpu_workers(cpu_device(vm));
        sb_printf(&sb,
                  "Found 1 CUDA devices\n"
                  "id 0    gpy CPU device (%d worker thread%s)    [SUPPORTED]\n"
                  "Summary:\n\t1/1 devices are supported\n"
                  "gpy runs kernels on the CPU device\n",
                  workers, workers == 1 ? "" : "s");
    }
    Str *s = sb_finish(vm, &sb);
    vm_push_root(vm, STR_VAL(s));
    file_write(vm, file_sys_stream(vm, "stdout"), s);
    vm_pop_roots(vm, 1);
    return BOOL_VAL(true);
}

/* ---------------------------------------------------------------- streams */

typedef struct Stream {
    Obj obj;
    CUstream s;  /* NULL: the default stream (and every stream on the CPU device) */
    bool owned;
    uint32_t gen;
    bool external; /* cuda.external_stream(ptr) */
} Stream;

CUstream cuda_stream_of(VM *vm, Value v) {
    if (IS_EMPTY(v) || IS_NONE(v)) return NULL;
    if (IS_INTLIKE(v) && AS_INTLIKE(v) == 0) return NULL;
    if (IS_OBJ(v) && vm->cuda && AS_OBJ(v)->type == vm->cuda->t_stream) {
        Stream *s = (Stream *)AS_OBJ(v);
        if (s->s && s->owned && s->gen != vm->cuda->gen)
            vm_raise_kind(vm, ValueError, "this stream belongs to a CUDA context that was reset or replaced");
        return s->s;
    }
    vm_raise_kind(vm, TypeError, "expected a CUDA stream (cuda.stream()) or 0, not '%s'", vm_type_name(vm, v));
}

static Value stream_make(VM *vm, bool create) {
    CudaState *st = cuda_state(vm);
    GpuCuda *c = create ? cuda_gpu(vm) : NULL;
    Stream *s = gc_alloc_obj(vm, st->t_stream, sizeof(Stream));
    s->gen = st->gen;
    if (c) {
        char err[GPU_CUDA_ERRSIZE];
        int status = gpu_cuda_stream_create(c, false, &s->s, err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
        s->owned = true;
    }
    return OBJ_VAL(s);
}

static Value f_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "stream", argc, 0, 0);
    kw_none(vm, "stream", kwargs);
    return stream_make(vm, true);
}

static Value f_default_stream(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "default_stream", argc, 0, 0);
    kw_none(vm, "default_stream", kwargs);
    return stream_make(vm, false);
}

/* A stream gpy did not create: cuda.external_stream(ptr) (external), the
** legacy (1) and per-thread (2) default streams. Never destroyed by gpy. */
Value cuda_stream_from_handle(VM *vm, uintptr_t handle, bool external) {
    Stream *s = gc_alloc_obj(vm, cuda_state(vm)->t_stream, sizeof(Stream));
    s->s = (CUstream)handle;
    s->gen = vm->cuda->gen;
    s->external = external;
    return OBJ_VAL(s);
}

/* s.handle, s.external; int(s) is the handle (Numba's Stream). */
static Value stream_getattr(VM *vm, Value self, Str *name) {
    Stream *s = (Stream *)AS_OBJ(self);
    if (strcmp(name->chars, "handle") == 0) return INT_VAL((int64_t)(uintptr_t)s->s);
    if (strcmp(name->chars, "external") == 0) return BOOL_VAL(s->external);
    return generic_getattr(vm, self, name);
}

static Value m_stream_int(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "__int__", argc, 1, 1);
    kw_none(vm, "__int__", kwargs);
    return INT_VAL((int64_t)(uintptr_t)((Stream *)AS_OBJ(argv[0]))->s);
}

static void stream_finalize(VM *vm, Obj *o) {
    Stream *s = (Stream *)o;
    if (!s->owned || !vm->cuda || !vm->cuda->gpu || s->gen != vm->cuda->gen) return;
    gpu_cuda_stream_destroy(vm->cuda->gpu, s->s, NULL, 0);
}

static Value m_stream_synchronize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "synchronize", argc, 1, 1);
    kw_none(vm, "synchronize", kwargs);
    GpuCuda *c = vm->cuda->gpu;
    if (c && vm->cuda->kind == CUDA_DEV_GPU) {
        char err[GPU_CUDA_ERRSIZE];
        int status = gpu_cuda_stream_synchronize(c, cuda_stream_of(vm, argv[0]), err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
    }
    return NONE_VAL;
}

/* s.auto_synchronize(): a context manager that gives the stream and
** synchronizes it when the block ends (Numba's spelling); the stream is its
** own context manager. */
static Value m_stream_auto_synchronize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "auto_synchronize", argc, 1, 1);
    kw_none(vm, "auto_synchronize", kwargs);
    return argv[0];
}

static Value m_stream_enter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "__enter__", argc, 1, 1);
    kw_none(vm, "__enter__", kwargs);
    return argv[0];
}

/* __exit__ synchronizes even when the block raised, and never swallows the exception */
static Value m_stream_exit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    m_stream_synchronize(vm, 1, argv, kwargs);
    return BOOL_VAL(false);
}

static Value stream_repr(VM *vm, Value self) {
    Stream *s = (Stream *)AS_OBJ(self);
    if (!s->s) return STR_VAL(str_printf(vm, "<Default CUDA stream on %s>", vm->cuda->gpu ? "the GPU" : "the CPU device"));
    if (!s->owned && !s->external && (uintptr_t)s->s <= 2)
        return STR_VAL(str_printf(vm, "<%s default CUDA stream>", (uintptr_t)s->s == 1 ? "Legacy" : "Per-thread"));
    if (s->external) return STR_VAL(str_printf(vm, "<External CUDA stream %llu>", (unsigned long long)(uintptr_t)s->s));
    return STR_VAL(str_printf(vm, "<CUDA stream %p>", (void *)s->s));
}

/* ----------------------------------------------------------------- events */

typedef struct Event {
    Obj obj;
    CUevent e;     /* GPU; NULL on the CPU device */
    double host_ms; /* CPU device: host time at record(), ms; < 0 before */
    uint32_t gen;
} Event;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static Event *as_event(VM *vm, Value v) {
    if (!IS_OBJ(v) || AS_OBJ(v)->type != cuda_state(vm)->t_event)
        vm_raise_kind(vm, TypeError, "expected a CUDA event (cuda.event()), not '%s'", vm_type_name(vm, v));
    Event *e = (Event *)AS_OBJ(v);
    if (e->e && e->gen != vm->cuda->gen)
        vm_raise_kind(vm, ValueError, "this event belongs to a CUDA context that was reset or replaced");
    return e;
}

static Value f_event(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value timing = kw_take(vm, kwargs, "timing");
    kw_done(vm, "event", kwargs);
    arg_count(vm, "event", argc, 0, 1);
    if (argc == 1) timing = argv[0];
    CudaState *st = cuda_state(vm);
    GpuCuda *c = cuda_gpu(vm);
    Event *e = gc_alloc_obj(vm, st->t_event, sizeof(Event));
    e->host_ms = -1;
    e->gen = st->gen;
    if (c) {
        char err[GPU_CUDA_ERRSIZE];
        int status = gpu_cuda_event_create(c, IS_EMPTY(timing) || vm_truthy(vm, timing), &e->e, err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
    }
    return OBJ_VAL(e);
}

static void event_finalize(VM *vm, Obj *o) {
    Event *e = (Event *)o;
    if (!e->e || !vm->cuda || !vm->cuda->gpu || e->gen != vm->cuda->gen) return;
    gpu_cuda_event_destroy(vm->cuda->gpu, e->e, NULL, 0);
}

/* e.record(stream=0) */
static Value m_event_record(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value stream = kw_take(vm, kwargs, "stream");
    kw_done(vm, "record", kwargs);
    arg_count(vm, "record", argc, 1, 2);
    if (argc == 2) stream = argv[1];
    Event *e = as_event(vm, argv[0]);
    CUstream s = cuda_stream_of(vm, stream);
    if (!e->e) {
        e->host_ms = now_ms();
        return NONE_VAL;
    }
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_event_record(vm->cuda->gpu, e->e, s, err, sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    return NONE_VAL;
}

static Value m_event_synchronize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "synchronize", argc, 1, 1);
    kw_none(vm, "synchronize", kwargs);
    Event *e = as_event(vm, argv[0]);
    if (!e->e) return NONE_VAL;
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_event_synchronize(vm->cuda->gpu, e->e, err, sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    return NONE_VAL;
}

/* e.wait(stream=0): work queued on stream after this waits for e. */
static Value m_event_wait(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value stream = kw_take(vm, kwargs, "stream");
    kw_done(vm, "wait", kwargs);
    arg_count(vm, "wait", argc, 1, 2);
    if (argc == 2) stream = argv[1];
    Event *e = as_event(vm, argv[0]);
    CUstream s = cuda_stream_of(vm, stream);
    if (!e->e) return NONE_VAL;
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_stream_wait_event(vm->cuda->gpu, s, e->e, err, sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    return NONE_VAL;
}

static Value m_event_query(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "query", argc, 1, 1);
    kw_none(vm, "query", kwargs);
    Event *e = as_event(vm, argv[0]);
    if (!e->e) return BOOL_VAL(true);
    bool done = false;
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_event_query(vm->cuda->gpu, e->e, &done, err, sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    return BOOL_VAL(done);
}

/* cuda.event_elapsed_time(start, end) → milliseconds (float) */
static Value f_event_elapsed_time(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "event_elapsed_time", argc, 2, 2);
    kw_none(vm, "event_elapsed_time", kwargs);
    Event *a = as_event(vm, argv[0]), *b = as_event(vm, argv[1]);
    if (!a->e || !b->e) {
        if (a->host_ms < 0 || b->host_ms < 0)
            vm_raise_kind(vm, RuntimeError, "event_elapsed_time(): both events must have been recorded");
        return FLOAT_VAL(b->host_ms - a->host_ms);
    }
    float ms = 0;
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_event_elapsed(vm->cuda->gpu, a->e, b->e, &ms, err, sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    return FLOAT_VAL((double)ms);
}

static Value m_event_elapsed_time(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "elapsed_time", argc, 2, 2);
    Value args[2] = {argv[0], argv[1]};
    return f_event_elapsed_time(vm, 2, args, kwargs);
}

static Value f_host_jit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc, (void)argv, (void)kwargs;
    vm_raise_kind(vm, NotImplementedError, "host @jit is not supported yet (use @cuda.jit kernels)");
}

/* numba.literal_unroll(t): on the host, t itself (kernels: jit/infer_iter.c) */
static Value f_literal_unroll(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc != 1 || (kwargs && kwargs->count))
        vm_raise_kind(vm, TypeError, "literal_unroll() takes exactly one argument");
    return argv[0];
}

/* ------------------------------------------------------------------ state */

/* vm_free hook: frees compiled kernels and the device while the jit and
** the objects still exist. */
static void cuda_free_hook(VM *vm) {
    CudaState *st = vm->cuda;
    if (!st) return;
    compiler_preload_join(vm);
    cuda_dispatch_free_all(vm, st);
    if (st->device) gpu_cpu_free(st->device);
    st->device = NULL;
    cuda_array_free_all(vm, st);
    if (st->gpu) gpu_cuda_close(st->gpu);
    st->gpu = NULL;
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
    t->finalize = stream_finalize;
    t->getattr = stream_getattr;
    type_add_method(vm, t, "__int__", m_stream_int);
    type_add_method(vm, t, "synchronize", m_stream_synchronize);
    type_add_method(vm, t, "auto_synchronize", m_stream_auto_synchronize);
    type_add_method(vm, t, "__enter__", m_stream_enter);
    type_add_method(vm, t, "__exit__", m_stream_exit);
    st->t_stream = t;
    t = type_new_builtin(vm, "Event", vm->t_object, 0);
    t->finalize = event_finalize;
    type_add_method(vm, t, "record", m_event_record);
    type_add_method(vm, t, "synchronize", m_event_synchronize);
    type_add_method(vm, t, "wait", m_event_wait);
    type_add_method(vm, t, "query", m_event_query);
    type_add_method(vm, t, "elapsed_time", m_event_elapsed_time);
    st->t_event = t;
    t = type_new_builtin(vm, "Device", vm->t_object, 0);
    t->getattr = device_getattr;
    t->repr = device_repr;
    type_add_method(vm, t, "reset", m_device_reset);
    st->t_device = t;
    Type *tg = type_new_builtin(vm, "_DeviceList", vm->t_object, 0);
    tg->len = gpus_len;
    tg->getitem = gpus_getitem;
    tg->repr = gpus_repr;
    st->t_api_error = type_new_builtin(vm, "CudaAPIError", vm->exc[EXC_RuntimeError], TYPE_EXCEPTION | TYPE_BASETYPE);
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
        {"compile_ptx_for_current_device", cuda_f_compile_ptx_for_current_device},
        {"to_device", cuda_f_to_device},
        {"device_array", cuda_f_device_array},
        {"device_array_like", cuda_f_device_array_like},
        {"pinned_array", cuda_f_pinned_array},
        {"mapped_array", cuda_f_mapped_array},
        {"managed_array", cuda_f_managed_array},
        {"as_cuda_array", cuda_f_as_cuda_array},
        {"from_cuda_array_interface", cuda_f_from_cuda_array_interface},
        {"is_cuda_array", cuda_f_is_cuda_array},
        {"is_available", f_is_available},
        {"detect", f_detect},
        {"synchronize", f_synchronize},
        {"stream", f_stream},
        {"default_stream", f_default_stream},
        {"event", f_event},
        {"event_elapsed_time", f_event_elapsed_time},
        {"get_current_device", f_get_current_device},
        {"select_device", f_select_device},
        {"reduce", cuda_f_reduce},
        {"Reduce", cuda_f_reduce},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);

    dict_set_cstr(vm, m->dict, "CudaAPIError", OBJ_VAL(st->t_api_error));
    dict_set_cstr(vm, m->dict, "gpus", OBJ_VAL(gc_alloc_obj(vm, tg, sizeof(Obj))));
    cuda_context_init(vm, st, m); /* cuda_context.c: contexts, device lists, more streams */
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
    numba_types_install(vm, m, false); /* from numba.cuda import float32, void, types */
    dict_set_cstr(vm, m->dict, "types", OBJ_VAL(numba_types_module(vm)));
}

CudaState *cuda_state(VM *vm) {
    if (vm->cuda) return vm->cuda;
    CudaState *st = calloc(1, sizeof *st);
    if (!st) vm_throw(vm, vm->memory_error);
    vm->cuda = st;
    jit_set_binding(vm, &cuda_jit_binding);
    cuda_hook_order(vm);
    build_cuda(vm, st);
    compiler_preload(vm); /* LLVM loads while the program goes on to its first compile */
    return st;
}

/* ---------------------------------------------------------------- modules */

static Module *build_numba(VM *vm);

/* numba is built with cuda: numba.cuda's types/config/... come from it (numba_layout.c) */
static Module *build_cuda_module(VM *vm) {
    CudaState *st = cuda_state(vm);
    build_numba(vm);
    return st->cuda;
}

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
    module_add_function(vm, m, "vectorize", cuda_f_vectorize);
    module_add_function(vm, m, "guvectorize", cuda_f_guvectorize);
    module_add_function(vm, m, "literal_unroll", f_literal_unroll);
    /* numba.float32, numba.intc, numba.byte (uint8), numba.void ...: numba's type objects */
    numba_types_install(vm, m, false);
    numba_layout_build(vm, st, m); /* last: it copies the type names above */
    return m;
}

Module *cuda_numba_module(VM *vm) { return build_numba(vm); }

void cuda_register_modules(VM *vm) {
    module_register_native(vm, "cuda", build_cuda_module);
    module_register_native(vm, "numba", build_numba);
    module_register_native(vm, "numba.cuda", build_cuda_module);
    numba_layout_register(vm);
    cuda_ufunc_register(vm);
    module_register_native(vm, "numba.cuda.random", cuda_random_build_module);
}

_Static_assert((int)GPU_WANT_AUTO == GPY_DEVICE_AUTO && (int)GPU_WANT_CPU == GPY_DEVICE_CPU &&
                   (int)GPU_WANT_CUDA == GPY_DEVICE_CUDA,
               "gpu/device_select.h's GpuDeviceWant follows GpyDevice");
