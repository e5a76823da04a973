/*
** cuda_dispatch.c — what @cuda.jit returns, and kernel launches.
**
**   @cuda.jit def k(...)          a Dispatcher: compiles at the first launch
**                                 per argument-type signature
**   @cuda.jit("void(f4[:], i8)")  eager: compiled at decoration; launches
**                                 convert arguments to the declared types
**   @cuda.jit(device=True)        a device function (called from kernels only)
**   k[grid, block(, stream, shared)](args)
**                                 a Launch object, whose call marshals the
**                                 arguments per the ABI of jit.h and runs the
**                                 grid on the CPU device, or on a GPU: PTX for
**                                 the device's compute capability, loaded
**                                 once per context, values stored straight
**                                 into the spec's GpuCudaParams block
**
** The compile cache is per dispatcher: the interned JType pointers of the
** arguments are the key, so a repeated launch only computes the argument
** types (table lookups for scalars and arrays) and compares pointers.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../vm/bigint.h"
#include "complex_num.h"
#include "cuda_priv.h"
#include "numba_types.h"
#include "signals.h"
#include "../gpu/cpu_child_grids.h"
#include "../jit/jit_loader.h"

#define MAX_ARGS 64     /* kernel arguments */
#define MAX_PARAMS 512  /* expanded ABI parameters */

/* One compiled specialization. */
typedef struct Spec {
    int nargs;
    const JType **types; /* gc_malloc'd, nargs entries (the cache key) */
    bool narrow;         /* compiled with JitOptions.narrow_index (also part of the key) */
    JitKernel *k;        /* CPU target (+ PTX when GPY_DUMP_PTX was set) */
    JitKernel *ptx;      /* a PTX-only compile made for inspect_asm, or NULL */
    /* GPU: k holds PTX for the device's compute capability, loaded lazily */
    bool gpu;            /* compiled for the GPU */
    bool loaded;         /* mod/fn valid for context generation gen */
    uint32_t gen;
    CUmodule mod;
    GpuCudaFunction fn;
    GpuCudaParams *plan; /* GPU: the kernelParams block, laid out once from k->params */
} Spec;

struct Dispatcher {
    Obj obj;
    Value fn;      /* the Python function */
    Value sigs;    /* list of the signature strings given at decoration, or None */
    bool device;   /* a device function */
    bool fastmath;
    bool debug;    /* @cuda.jit(debug=True): bounds-checked indexing (jit.h, debug mode) */
    bool cache;    /* @cuda.jit(cache=True): compiled code kept on disk (jit/disk_cache.c) */
    bool eager;    /* compiled from signatures: no new specializations at launch */
    int last;      /* index of the spec the previous launch used */
    Spec *specs;   /* gc_malloc'd */
    int nspecs, cap;
    Dispatcher *prev, *next; /* CudaState.dispatchers */
};

/* k[grid, block, stream, shared]: a launch configuration bound to a kernel. */
typedef struct Launch {
    Obj obj;
    Value disp;
    uint32_t grid[3], block[3];
    size_t dyn_shared;
    Value stream;  /* the 3rd item of the configuration, or NONE */
    bool empty;    /* k.forall(0): launches nothing, as in Numba */
} Launch;

static Dispatcher *as_disp(Value v) { return (Dispatcher *)AS_OBJ(v); }
static Function *disp_fn(Dispatcher *d) { return (Function *)AS_OBJ(d->fn); }
static const char *disp_name(Dispatcher *d) { return disp_fn(d)->name ? disp_fn(d)->name->chars : "?"; }

static bool is_disp(VM *vm, Value v) {
    return vm->cuda && IS_OBJ(v) && AS_OBJ(v)->type == vm->cuda->t_dispatcher;
}

Function *cuda_dispatcher_function(VM *vm, Value v, bool *is_device) {
    if (!is_disp(vm, v)) return NULL;
    Dispatcher *d = as_disp(v);
    if (is_device) *is_device = d->device;
    return disp_fn(d);
}

/* ------------------------------------------------------- argument types */

/* Kernel type of a numpy scalar (np.float32(1.5)); -1 when v is none. */
static int numpy_scalar_dtype(VM *vm, Value v) {
    if (!IS_OBJ(v)) return -1;
    Type *t = AS_OBJ(v)->type;
    for (int dt = 0; dt < ND__COUNT; dt++) {
        Value st = nd_scalar_type(vm, (NDType)dt);
        if (IS_OBJ(st) && AS_OBJ(st) == (Obj *)t) return dt;
    }
    return -1;
}

/* Keeps the types the launch loop meets most (arrays up to 7-d, int, float)
** where arg_type finds them without asking the compiler. */
static void remember_type(CudaState *st, const JType *t) {
    if (!t) return;
    if (t->kind == JK_ARRAY && t->ndim < 8) st->array_types[t->dtype][t->ndim][t->layout == 'C' ? 0 : 1] = t;
    else if (t->kind == JK_INT64 || t->kind == JK_FLOAT64) st->scalar_types[t->kind] = t;
}

/* The fast path of jt_of_value for the launch loop. */
static inline const JType *arg_type(VM *vm, CudaState *st, Value v, char *err, size_t errsize) {
    if (IS_OBJ(v)) {
        Type *t = AS_OBJ(v)->type;
        NDArray *a = t == st->t_devarray ? (NDArray *)AS_OBJ(((DevArray *)AS_OBJ(v))->host)
                     : nd_check(vm, v)   ? (NDArray *)AS_OBJ(v)
                                         : NULL;
        if (a && a->ndim < 8 && a->dtype != ND_FLOAT16) {
            const JType *jt = st->array_types[a->dtype][a->ndim][(a->flags & ND_C_CONTIGUOUS) ? 0 : 1];
            if (jt) return jt;
        }
    } else if (IS_INT(v) && st->scalar_types[ND_INT64]) {
        return st->scalar_types[ND_INT64];
    } else if (IS_FLOAT(v) && st->scalar_types[ND_FLOAT64]) {
        return st->scalar_types[ND_FLOAT64];
    }
    const JType *t = jt_of_value(vm, v, err, errsize);
    remember_type(st, t);
    return t;
}

/* "(array(float32, 1d, C), int64)" */
static void types_str(const JType *const *tys, int n, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    len += (size_t)snprintf(buf + len, size - len, "(");
    for (int i = 0; i < n && len < size; i++) {
        char tb[256];
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", jt_name(tys[i], tb, sizeof tb));
    }
    if (len < size) snprintf(buf + len, size - len, ")");
}

/* ------------------------------------------------------------ signatures
** (parsed by jit/signature.c) */

/* Hook for inference (jit.h): a device function declared with signatures
** is called only with arguments one of them takes, so a wrong argument gets
** an error at the call, naming what the function takes. */
bool cuda_device_signatures_accept(VM *vm, Value v, int nargs, const JType *const *argtypes, char *err,
                                   size_t errsize) {
    if (!is_disp(vm, v) || !as_disp(v)->device || !IS_LIST(vm, as_disp(v)->sigs)) return true;
    Dispatcher *d = as_disp(v);
    List *l = AS_LIST(d->sigs);
    char given[512], wanted[512];
    size_t wl = 0;
    wanted[0] = '\0';
    for (int64_t i = 0; i < l->len; i++) {
        const JType *tys[MAX_ARGS], *ret;
        char perr[256];
        int n = jit_parse_signature(vm, AS_STR(l->items[i])->chars, tys, MAX_ARGS, &ret, perr, sizeof perr);
        if (n != nargs) continue;
        bool ok = true;
        for (int k = 0; k < n && ok; k++) ok = jit_signature_param_accepts(tys[k], argtypes[k]);
        if (ok) return true;
        char one[512];
        types_str(tys, n, one, sizeof one);
        if (wl < sizeof wanted) wl += (size_t)snprintf(wanted + wl, sizeof wanted - wl, "%s%s", wl ? " or " : "", one);
    }
    types_str(argtypes, nargs, given, sizeof given);
    snprintf(err, errsize, "device function '%s' takes %s, not %s", disp_name(d), wanted, given);
    return false;
}

/* ------------------------------------------- the kernel compiler's host
** What jit/ asks of the cuda binding (jit/binding.h): arrays as it may read
** them, dtype objects, numpy scalars and @cuda.jit functions. */

static bool host_array_view(VM *vm, Value v, bool device, JitArrayView *out) {
    NDArray *a = device ? cuda_array_of(vm, v) : nd_check(vm, v) ? (NDArray *)AS_OBJ(v) : NULL;
    if (!a) return false;
    *out = (JitArrayView){.data = a->data, .dtype = a->dtype, .ndim = a->ndim, .shape = a->shape,
                          .strides = a->strides, .size = a->size,
                          .c_contiguous = (a->flags & ND_C_CONTIGUOUS) != 0};
    return true;
}

static bool host_device_array_address(VM *vm, Value v, uint64_t *gpu_addr) {
    if (!cuda_is_devarray(vm, v)) return false;
    *gpu_addr = (uint64_t)((DevArray *)AS_OBJ(v))->dptr;
    return true;
}

const JitBinding cuda_jit_binding = {
    .array_view = host_array_view,
    .dtype_of = nd_dtype_try,
    .scalar_dtype = numpy_scalar_dtype,
    .dispatcher_function = cuda_dispatcher_function,
    .device_signatures_accept = cuda_device_signatures_accept,
    .device_array_address = host_device_array_address,
};

/* ---------------------------------------------------------------- compile */

static void free_spec(VM *vm, Spec *s) {
    CudaState *st = vm->cuda;
    if (s->loaded && st && st->gpu && s->gen == st->gen) gpu_cuda_module_unload(st->gpu, s->mod, NULL, 0);
    if (s->plan) gpu_cuda_params_free(s->plan);
    if (s->k) compiler_kernel_free(vm, s->k);
    if (s->ptx) compiler_kernel_free(vm, s->ptx);
    if (s->types) gc_free(vm, (void *)s->types, (size_t)(s->nargs ? s->nargs : 1) * sizeof(JType *));
    memset(s, 0, sizeof *s);
}

static void free_specs(VM *vm, Dispatcher *d) {
    for (int i = 0; i < d->nspecs; i++) free_spec(vm, &d->specs[i]);
    if (d->specs) gc_free(vm, d->specs, (size_t)d->cap * sizeof(Spec));
    d->specs = NULL;
    d->nspecs = d->cap = 0;
}

void cuda_dispatch_free_all(VM *vm, CudaState *st) {
    compiler_cache_report(vm);
    for (Dispatcher *d = st->dispatchers; d; d = d->next) free_specs(vm, d);
    st->dispatchers = NULL;
}

/* Writes the PTX of k into $GPY_DUMP_PTX/<mangled>.ptx; false on failure. */
static bool dump_ptx(const char *dir, JitKernel *k, char *err, size_t errsize) {
    if (!k->ptx) return true;
    const char *name = k->func && k->func->mangled[0] ? k->func->mangled : k->entry;
    char safe[200];
    size_t n = 0;
    for (const char *c = name; *c && n < sizeof safe - 1; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                  *c == '.' || *c == '-';
        safe[n++] = ok ? *c : '_';
    }
    safe[n] = '\0';
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.ptx", dir, safe[0] ? safe : "kernel");
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errsize, "GPY_DUMP_PTX: cannot write '%.1024s': %s", path, strerror(errno));
        return false;
    }
    size_t len = strlen(k->ptx);
    bool ok = fwrite(k->ptx, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) snprintf(err, errsize, "GPY_DUMP_PTX: cannot write '%.1024s'", path);
    return ok;
}

/* Compiles d for the argument types and adds the specialization to its cache. */
static Spec *compile_spec(VM *vm, Dispatcher *d, int nargs, const JType *const *tys, bool narrow) {
    CudaState *st = cuda_state(vm);
    compiler_require(vm); /* ImportError when gpy_jit.so is missing or of another ABI version */
    if (d->nspecs == d->cap) {
        int cap = d->cap ? d->cap * 2 : 4;
        d->specs = gc_realloc(vm, d->specs, (size_t)d->cap * sizeof(Spec), (size_t)cap * sizeof(Spec));
        d->cap = cap;
    }
    const JType **types = gc_malloc(vm, (size_t)(nargs ? nargs : 1) * sizeof(JType *));
    for (int i = 0; i < nargs; i++) types[i] = tys[i];
    const char *dump = vm->config.dump_ptx;
    GpuCuda *gpu = cuda_gpu(vm);
    int targets = gpu ? JIT_TARGET_PTX : JIT_TARGET_CPU | (dump && *dump ? JIT_TARGET_PTX : 0);
    int cc = 0;
    if (gpu) {
        const GpuCudaProps *p = gpu_cuda_props(gpu);
        cc = p->cc_major * 10 + p->cc_minor;
    }
    char err[4096];
    err[0] = '\0';
    JitOptions jo = {.fastmath = d->fastmath, .debug = d->debug, .narrow_index = narrow && !d->debug};
    /* the disk cache holds one target per entry (not the CPU+PTX of GPY_DUMP_PTX) */
    bool use_cache = d->cache && !d->debug && (targets == JIT_TARGET_CPU || targets == JIT_TARGET_PTX);
    JitKernel *k = use_cache ? compiler_cache_load(vm, disp_fn(d), nargs, types, targets, cc, &jo) : NULL;
    if (!k) {
        k = compiler_compile_opts(vm, disp_fn(d), nargs, types, targets, cc, &jo, err, sizeof err);
        if (k && use_cache) compiler_cache_store(vm, disp_fn(d), k, targets, cc, &jo);
    }
    if (!k) {
        gc_free(vm, (void *)types, (size_t)(nargs ? nargs : 1) * sizeof(JType *));
        vm_raise(vm, st->t_typing_error, "%s", err[0] ? err : "kernel compilation failed");
    }
    cuda_hook_order(vm);
    Spec *s = &d->specs[d->nspecs++];
    s->nargs = nargs;
    s->types = types;
    s->narrow = jo.narrow_index;
    s->k = k;
    s->ptx = NULL;
    s->gpu = gpu != NULL;
    s->loaded = false;
    s->plan = NULL;
    if (gpu) {
        uint32_t sizes[MAX_PARAMS];
        bool ok = k->nparams <= MAX_PARAMS;
        for (int i = 0; ok && i < k->nparams; i++) sizes[i] = k->params[i].size;
        s->plan = ok ? gpu_cuda_params_new(k->nparams, sizes) : NULL;
        if (!s->plan) vm_raise_kind(vm, SystemError, "kernel '%s': cannot lay out its %d parameters", disp_name(d), k->nparams);
    }
    if ((targets & JIT_TARGET_PTX) && dump && *dump && !dump_ptx(dump, k, err, sizeof err)) vm_raise_kind(vm, OSError, "%s", err);
    return s;
}

static inline bool spec_is(const Spec *s, int nargs, const JType *const *tys, bool narrow) {
    return s->nargs == nargs && s->narrow == narrow && memcmp(s->types, tys, (size_t)nargs * sizeof(JType *)) == 0;
}

/* The cached specialization whose key is exactly (tys, narrow), or NULL. */
static inline Spec *find_spec(Dispatcher *d, int nargs, const JType *const *tys, bool narrow) {
    if (d->last < d->nspecs && spec_is(&d->specs[d->last], nargs, tys, narrow)) return &d->specs[d->last];
    for (int i = 0; i < d->nspecs; i++) {
        Spec *s = &d->specs[i];
        if (spec_is(s, nargs, tys, narrow)) {
            d->last = i;
            return s;
        }
    }
    return NULL;
}

/* Whether a value of type have may be passed where want was declared
** (eager signatures convert scalars; arrays must agree on dtype and ndim). */
static bool accepts(const JType *want, const JType *have) {
    if (want == have) return true;
    if (jt_is_scalar(want) && jt_is_scalar(have)) return true;
    if (want->kind == JK_ARRAY && have->kind == JK_ARRAY)
        return want->dtype == have->dtype && want->ndim == have->ndim &&
               (want->layout == 'A' || want->layout == have->layout || want->layout == 'F');
    if (want->kind == JK_TUPLE && have->kind == JK_TUPLE && want->n == have->n) {
        for (int i = 0; i < want->n; i++)
            if (!accepts(want->elems[i], have->elems[i])) return false;
        return true;
    }
    return false;
}

static Spec *find_eager(Dispatcher *d, int nargs, const JType *const *tys) {
    for (int i = 0; i < d->nspecs; i++) {
        Spec *s = &d->specs[i];
        if (s->nargs != nargs) continue;
        bool ok = true;
        for (int j = 0; ok && j < nargs; j++) ok = accepts(s->types[j], tys[j]);
        if (ok) return s;
    }
    return NULL;
}

/* ---------------------------------------------------------- marshalling */

/* A host array passed to a GPU kernel: copied in before, back out after. */
typedef struct HostTemp {
    NDArray *a;      /* the argument */
    NDArray *c;      /* its contiguous copy (when a is not C-contiguous), or NULL */
    CUdeviceptr d;
    size_t bytes;
} HostTemp;

/* The gpy-value half of marshalling; gpu/kernel_args.c lays the decoded
** values out by the kernel ABI. */
typedef struct Marshal {
    GpuArgs args;                /* GPU: straight into the spec's parameter block (args.plan) */
    GpuCuda *gpu;                /* launching on a GPU: arrays pass device pointers */
    int status;                  /* a driver failure while copying a host array in */
    int ntemps;
    HostTemp temps[MAX_ARGS];
} Marshal;

/* Copies a host array argument to a fresh device buffer (Numba's implicit
** transfer); the launch copies it back and frees it (temps_finish). */
static bool host_temp(VM *vm, Marshal *m, NDArray *a, CUdeviceptr *out, const int64_t **strides, char *err,
                      size_t errsize) {
    if (m->ntemps >= MAX_ARGS) {
        snprintf(err, errsize, "too many host arrays in one launch");
        return false;
    }
    HostTemp *t = &m->temps[m->ntemps];
    t->a = a;
    t->c = NULL;
    t->d = 0;
    t->bytes = (size_t)a->size * nd_itemsize(a->dtype);
    const char *src = a->data;
    if (!(a->flags & ND_C_CONTIGUOUS)) {
        t->c = nd_copy(vm, a);
        vm_push_root(vm, OBJ_VAL(t->c));
        src = t->c->data;
        *strides = t->c->strides;
    }
    m->ntemps++;
    int status = gpu_cuda_malloc(m->gpu, t->bytes, &t->d, err, errsize);
    if (status == 0) status = gpu_cuda_memcpy_htod(m->gpu, t->d, src, t->bytes, err, errsize);
    *out = t->d;
    m->status = status;
    return status == 0;
}

/* After a GPU launch (or a failed marshalling): copies host arrays back
** (copy_back) and frees their device buffers. Returns a status, with the
** first error's message in err. */
static int temps_finish(VM *vm, Marshal *m, bool copy_back, char *err, size_t errsize) {
    int first = 0;
    for (int i = 0; i < m->ntemps; i++) {
        HostTemp *t = &m->temps[i];
        if (copy_back && first == 0 && t->d) {
            first = gpu_cuda_memcpy_dtoh(m->gpu, t->c ? t->c->data : t->a->data, t->d, t->bytes, err, errsize);
            if (first == 0 && t->c) cuda_copy_strided(t->a, t->c);
        }
        if (t->d) gpu_cuda_free(m->gpu, t->d, NULL, 0);
        if (t->c) vm_pop_roots(vm, 1);
    }
    m->ntemps = 0;
    return first;
}

/* Reads a numeric argument: a Python number or a numpy scalar. */
static bool read_number(VM *vm, Value v, GpuNumber *x) {
    *x = (GpuNumber){0};
    if (IS_INTLIKE(v)) {
        x->is_int = true;
        x->i = AS_INTLIKE(v);
        return true;
    }
    if (IS_FLOAT(v)) {
        x->f = AS_FLOAT(v);
        return true;
    }
    int dt = numpy_scalar_dtype(vm, v);
    if (dt < 0 || dt == ND_FLOAT16 || nd_is_complex((NDType)dt)) return false;
    NDArray *a = nd_from_value(vm, v, dt);
    const char *p = a->data;
    x->is_int = !nd_is_float((NDType)dt);
    switch ((NDType)dt) {
    case ND_BOOL: x->i = *(const uint8_t *)p != 0; break;
    case ND_INT8: x->i = *(const int8_t *)p; break;
    case ND_INT16: x->i = *(const int16_t *)p; break;
    case ND_INT32: x->i = *(const int32_t *)p; break;
    case ND_INT64: x->i = *(const int64_t *)p; break;
    case ND_UINT8: x->i = *(const uint8_t *)p; break;
    case ND_UINT16: x->i = *(const uint16_t *)p; break;
    case ND_UINT32: x->i = *(const uint32_t *)p; break;
    case ND_UINT64:
        x->u = *(const uint64_t *)p;
        x->i = (int64_t)x->u;
        x->is_unsigned = true;
        break;
    case ND_FLOAT32: x->f = *(const float *)p; break;
    default: x->f = *(const double *)p; break;
    }
    return true;
}

/* Appends the ABI parameters of value v passed as type t; an error message
** in err (false) when it does not fit. */
static bool marshal_value(VM *vm, const JType *t, Value v, Marshal *m, char *err, size_t errsize) {
    if (jt_is_complex(t)) { /* the ABI's two parameters: real, imaginary */
        double re, im;
        int dt = numpy_scalar_dtype(vm, v);
        if (dt >= 0 && dt != ND_FLOAT16) {
            NDArray *a = nd_from_value(vm, v, dt);
            nd_load_c(a->dtype, a->data, &re, &im);
        } else if (!complex_parts(vm, v, &re, &im)) {
            snprintf(err, errsize, "cannot pass a '%s' as %s", vm_type_name(vm, v), nd_dtype_name((NDType)t->kind));
            return false;
        }
        NDType part = t->kind == JK_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
        GpuNumber x = {0};
        x.f = re;
        int rc = gpu_args_push_scalar(&m->args, part, &x);
        x.f = im;
        if (!rc) rc = gpu_args_push_scalar(&m->args, part, &x);
        if (rc) snprintf(err, errsize, "the parameters do not match the compiled kernel's");
        return rc == 0;
    }
    if (jt_is_scalar(t)) {
        GpuNumber x;
        if (!read_number(vm, v, &x)) {
            snprintf(err, errsize, "cannot pass a '%s' as %s", vm_type_name(vm, v), nd_dtype_name((NDType)t->kind));
            return false;
        }
        int rc = gpu_args_push_scalar(&m->args, (NDType)t->kind, &x);
        if (rc == GPU_ARGS_UNSUPPORTED) snprintf(err, errsize, "float16 scalar arguments are not supported yet");
        else if (rc) snprintf(err, errsize, "the parameters do not match the compiled kernel's");
        return rc == 0;
    }
    if (t->kind == JK_ARRAY) {
        NDArray *a = cuda_array_of(vm, v);
        if (!a || a->dtype != t->dtype || a->ndim != t->ndim) {
            char tb[128];
            snprintf(err, errsize, "cannot pass a '%s' as %s", vm_type_name(vm, v), jt_name(t, tb, sizeof tb));
            return false;
        }
        if ((t->layout == 'C' && !(a->flags & ND_C_CONTIGUOUS)) || (t->layout == 'F' && !(a->flags & ND_F_CONTIGUOUS))) {
            snprintf(err, errsize, "array is not %c-contiguous as the signature requires", t->layout);
            return false;
        }
        uint64_t address = (uint64_t)(uintptr_t)a->data;
        const int64_t *strides = a->strides;
        if (m->gpu && cuda_is_devarray(vm, v)) {
            address = cuda_devarray_ptr(vm, v);
        } else if (m->gpu) {
            CUdeviceptr p = 0;
            if (!host_temp(vm, m, a, &p, &strides, err, errsize)) return false;
            address = p;
        }
        if (gpu_args_push_array(&m->args, address, a->ndim, a->shape, strides) != 0) {
            snprintf(err, errsize, "the parameters do not match the compiled kernel's");
            return false;
        }
        return true;
    }
    if (t->kind == JK_TUPLE) {
        if (t->path) v = class_unbox(vm, v); /* a namedtuple: its tuple */
        if (!IS_TUPLE(vm, v) || AS_TUPLE(v)->len != t->n) {
            snprintf(err, errsize, "expected a tuple of %d elements, got '%s'", t->n, vm_type_name(vm, v));
            return false;
        }
        for (int i = 0; i < t->n; i++)
            if (!marshal_value(vm, t->elems[i], AS_TUPLE(v)->items[i], m, err, errsize)) return false;
        return true;
    }
    if (t->kind == JK_NONE && IS_NONE(v)) return true; /* None: no parameters */
    snprintf(err, errsize, "unsupported kernel argument type");
    return false;
}

/* ----------------------------------------------------------------- launch */

/* Kernels' print() on the CPU device, for a VM whose configuration has a
** write callback: the application gets it like the script's own output. */
static void kernel_output(const char *text, size_t len, void *ctx) {
    VM *vm = ctx;
    vm->config.write(vm->api, text, len, vm->config.user_data);
}

/* Whether v is an integer as numbers.Integral sees it (int, bool, numpy ints). */
static bool integral(VM *vm, Value v) {
    if (bigint_is_anyint(vm, v)) return true;
    int dt = numpy_scalar_dtype(vm, v);
    return dt >= 0 && !nd_is_float((NDType)dt) && dt != ND_BOOL;
}

/* "[1, 2, 3, 4]": the items of a launch dimension as Numba lists them in its errors. */
static const char *dims_repr(VM *vm, int n, const Value *items, char *buf, size_t size) {
    List *l = list_new(vm, n);
    vm_push_root(vm, OBJ_VAL(l));
    for (int i = 0; i < n; i++) list_append(vm, l, items[i]);
    snprintf(buf, size, "%s", vm_repr(vm, OBJ_VAL(l))->chars);
    vm_pop_roots(vm, 1);
    return buf;
}

/* Raises what cuLaunchKernel returns for a configuration it refuses, as Numba shows it. */
static _Noreturn void invalid_launch(VM *vm, const char *fmt, ...) {
    char why[256], msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "[1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE: %s", why);
    cuda_raise_status(vm, CUDA_ERROR_INVALID_VALUE, msg);
}

/* A launch dimension: an int or a sequence of up to 3 integers (missing
** ones are 1), with Numba's errors (normalize_kernel_dimensions); values
** the driver would refuse raise as its refusal does. */
static void parse_dim3(VM *vm, Value v, uint32_t out[3], const char *what) {
    out[0] = out[1] = out[2] = 1;
    int64_t vals[3] = {1, 1, 1};
    const Value *items = &v;
    int64_t n = 1;
    if (IS_TUPLE(vm, v) || IS_LIST(vm, v)) {
        n = IS_TUPLE(vm, v) ? AS_TUPLE(v)->len : AS_LIST(v)->len;
        items = IS_TUPLE(vm, v) ? AS_TUPLE(v)->items : AS_LIST(v)->items;
    }
    char buf[256];
    if (n > 3)
        vm_raise_kind(vm, ValueError, "%s must be a sequence of 1, 2 or 3 integers, got %s", what,
                      dims_repr(vm, (int)(n < 16 ? n : 16), items, buf, sizeof buf));
    for (int i = 0; i < n; i++)
        if (!integral(vm, items[i]))
            vm_raise_kind(vm, TypeError, "%s must be a sequence of integers, got %s", what,
                          dims_repr(vm, (int)n, items, buf, sizeof buf));
    for (int i = 0; i < n; i++) { /* numpy integers through int() */
        Value x = items[i];
        vals[i] = vm_to_index(vm, bigint_is_anyint(vm, x) ? x : vm_call(vm, OBJ_VAL(vm->t_int), 1, &x));
    }
    for (int i = 0; i < 3; i++) {
        if (vals[i] < 1) invalid_launch(vm, "%s must be positive in every dimension, got %lld", what, (long long)vals[i]);
        if (vals[i] > 0x7fffffff) invalid_launch(vm, "%s is too large: %lld", what, (long long)vals[i]);
        out[i] = (uint32_t)vals[i];
    }
}

/* Raises unless l's block and grid are within a GPU's limits. */
static void check_limits(VM *vm, const Launch *l) {
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (l->block[0] > 1024 || l->block[1] > 1024 || l->block[2] > 64 || threads > 1024)
        invalid_launch(vm, "blockdim (%u, %u, %u) exceeds the limits of a block (1024 threads; z ≤ 64)", l->block[0],
                       l->block[1], l->block[2]);
    if (l->grid[0] > 0x7fffffff) invalid_launch(vm, "griddim is too large: %u", l->grid[0]);
    if (l->grid[1] > 65535 || l->grid[2] > 65535)
        invalid_launch(vm, "griddim (%u, %u, %u): y and z must be at most 65535", l->grid[0], l->grid[1], l->grid[2]);
}

static Value disp_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs);

static Value disp_getitem(VM *vm, Value self, Value key) {
    Dispatcher *d = as_disp(self);
    if (d->device)
        vm_raise_kind(vm, TypeError, "device function '%s' cannot be launched: only kernels are launched", disp_name(d));
    if (!IS_TUPLE(vm, key) || AS_TUPLE(key)->len < 2 || AS_TUPLE(key)->len > 4)
        vm_raise_kind(vm, ValueError,
                      "launch configuration must be [blocks_per_grid, threads_per_block(, stream(, shared_bytes))]");
    Tuple *t = AS_TUPLE(key);
    if (IS_NONE(t->items[0]) || IS_NONE(t->items[1])) disp_call(vm, self, 0, NULL, NULL);
    Launch *l = gc_alloc_obj(vm, cuda_state(vm)->t_launch, sizeof(Launch));
    l->disp = self;
    l->stream = t->len >= 3 ? t->items[2] : NONE_VAL;
    parse_dim3(vm, t->items[0], l->grid, "griddim");
    parse_dim3(vm, t->items[1], l->block, "blockdim");
    if (t->len == 4) {
        int64_t sh = arg_int(vm, "launch", t->items[3]);
        if (sh < 0 || sh > (1 << 20)) vm_raise_kind(vm, ValueError, "dynamic shared memory size %lld is out of range", (long long)sh);
        l->dyn_shared = (size_t)sh;
    }
    check_limits(vm, l);
    return OBJ_VAL(l);
}

/* Loads a GPU spec's PTX into the current context (once per context). */
static void load_spec(VM *vm, Dispatcher *d, Spec *s) {
    CudaState *st = vm->cuda;
    if (s->loaded && s->gen == st->gen) return;
    s->loaded = false;
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_module_load_kernels(st->gpu, s->k->ptx ? s->k->ptx : "", vm->config.cuda_home, &s->mod, err,
                                              sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    status = gpu_cuda_get_function(st->gpu, s->mod, s->k->entry, &s->fn, err, sizeof err);
    if (status) {
        gpu_cuda_module_unload(st->gpu, s->mod, NULL, 0);
        char msg[GPU_CUDA_ERRSIZE + 64];
        snprintf(msg, sizeof msg, "kernel '%s': %s", disp_name(d), err);
        cuda_raise_status(vm, status, msg);
    }
    s->gen = st->gen;
    s->loaded = true;
}

/* Debug kernels on the GPU: the device address of the module's error record
** (JIT_DEBUG_ERR_SYMBOL), or 0 when there is none or the driver cannot say. */
static CUdeviceptr debug_record_ptr(VM *vm, Spec *s) {
    if (!s->k->debug || !s->k->ndbg_sites) return 0;
    CUdeviceptr p = 0;
    size_t bytes = 0;
    if (gpu_cuda_module_get_global(vm->cuda->gpu, s->mod, JIT_DEBUG_ERR_SYMBOL, &p, &bytes, NULL, 0) != 0 ||
        bytes < sizeof(JitErrRecord))
        return 0;
    return p;
}

/* The GPU half of a launch: marshals device pointers (copying host arrays
** in), launches on the stream, and copies host arrays back out (which waits
** for the kernel, as in Numba). */
static Value launch_gpu(VM *vm, Launch *l, Dispatcher *d, Spec *s, Marshal *m, int argc, Value *argv) {
    char err[GPU_CUDA_ERRSIZE];
    int status;
    if (!s->plan) vm_raise_kind(vm, SystemError, "kernel '%s' has no parameter layout", disp_name(d));
    load_spec(vm, d, s);
    CUstream stream = cuda_stream_of(vm, l->stream);
    for (int i = 0; i < argc; i++)
        if (!marshal_value(vm, s->types[i], argv[i], m, err, sizeof err)) {
            char msg[GPU_CUDA_ERRSIZE + 64];
            snprintf(msg, sizeof msg, "kernel '%s' argument %d: %s", disp_name(d), i + 1, err);
            temps_finish(vm, m, false, err, sizeof err);
            if (m->status) cuda_raise_status(vm, m->status, msg);
            vm_raise_kind(vm, TypeError, "%s", msg);
        }
    CUdeviceptr dbg = debug_record_ptr(vm, s);
    if (dbg && (status = gpu_cuda_memset_async(vm->cuda->gpu, dbg, 0, sizeof(JitErrRecord), stream, err,
                                               sizeof err)) != 0) {
        temps_finish(vm, m, false, err, sizeof err);
        cuda_raise_status(vm, status, "debug mode: cannot clear the kernel's error record");
    }
    GpuCudaLaunch gl = {.shared_bytes = l->dyn_shared, .stream = stream, .params = s->plan->ptrs};
    for (int i = 0; i < 3; i++) {
        gl.grid[i] = l->grid[i];
        gl.block[i] = l->block[i];
    }
    status = m->args.n != s->k->nparams ? GPU_CUDA_EARG : gpu_cuda_launch(vm->cuda->gpu, &s->fn, &gl, err, sizeof err);
    if (m->args.n != s->k->nparams)
        snprintf(err, sizeof err, "%d parameters marshalled, the compiled kernel takes %d", m->args.n, s->k->nparams);
    char err2[GPU_CUDA_ERRSIZE];
    int status2 = temps_finish(vm, m, status == 0, err2, sizeof err2);
    if (status) {
        char msg[GPU_CUDA_ERRSIZE + 64];
        snprintf(msg, sizeof msg, "launch of kernel '%s' failed: %s", disp_name(d), err);
        cuda_raise_status(vm, status, msg);
    }
    if (status2) cuda_raise_status(vm, status2, err2);
    if (dbg) { /* debug mode: wait for the kernel, read its error record back */
        JitErrRecord rec;
        status = gpu_cuda_stream_synchronize(vm->cuda->gpu, stream, err, sizeof err);
        if (!status) status = gpu_cuda_memcpy_dtoh(vm->cuda->gpu, &rec, dbg, sizeof rec, err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
        char msg[1024];
        cuda_raise_kernel_exception(vm, s->k, &rec); /* raise E(...) in the kernel: cuda_kernel_raise.c */
        if (compiler_debug_message(s->k, &rec, msg, sizeof msg)) vm_raise_kind(vm, IndexError, "%s", msg);
    }
    return NONE_VAL;
}

/* ------------------------------------------- the 32-bit index variant */

#define NARROW_LIMIT ((uint64_t)1 << 31)

/* Whether every array in v has extents and a size below 2^31 (the
** kernel then computes element indices in 32 bits; byte offsets of
** strided arrays stay 64-bit). */
static bool value_is_narrow(VM *vm, Value v, int depth) {
    if (!IS_OBJ(v)) return true;
    if (depth > 8) return false; /* deeply nested tuples: the general variant */
    if (IS_TUPLE(vm, v)) {
        Tuple *t = AS_TUPLE(v);
        for (int64_t i = 0; i < t->len; i++)
            if (!value_is_narrow(vm, t->items[i], depth + 1)) return false;
        return true;
    }
    NDArray *a = cuda_array_of(vm, v);
    if (!a) return true;
    if ((uint64_t)a->size >= NARROW_LIMIT) return false;
    for (int k = 0; k < a->ndim; k++)
        if ((uint64_t)a->shape[k] >= NARROW_LIMIT) return false;
    return true;
}

/* Whether launch l with these arguments may run the 32-bit index variant
** (JitOptions.narrow_index): arrays as above, gridDim * blockDim < 2^31. */
static bool launch_is_narrow(VM *vm, Launch *l, int argc, Value *argv) {
    for (int i = 0; i < 3; i++)
        if ((uint64_t)l->grid[i] * l->block[i] >= NARROW_LIMIT) return false;
    for (int i = 0; i < argc; i++)
        if (!value_is_narrow(vm, argv[i], 0)) return false;
    return true;
}

/* Runs one launch: types, cache, marshalling, CPU device. argv may be
** replaced by conv (an object carrying __cuda_array_interface__ becomes a
** device array viewing its memory, as Numba does). */
static Value launch_run(VM *vm, Launch *l, int argc, Value *argv) {
    if (l->empty) return NONE_VAL;
    Dispatcher *d = as_disp(l->disp);
    CudaState *st = vm->cuda;
    Proto *p = disp_fn(d)->proto;
    if (argc != p->nparams || argc > MAX_ARGS)
        vm_raise_kind(vm, TypeError, "kernel '%s' takes %d argument%s (%d given)", disp_name(d), p->nparams,
                      p->nparams == 1 ? "" : "s", argc);
    const JType *tys[MAX_ARGS];
    char err[512];
    Value conv[MAX_ARGS];
    int nconv = 0;
    for (int i = 0; i < argc; i++) {
        tys[i] = arg_type(vm, st, argv[i], err, sizeof err);
        if (tys[i]) continue;
        if (IS_OBJ(argv[i]) && AS_OBJ(argv[i])->type == vm->t_int) /* a big int: kernel ints are fixed-width */
            vm_raise_kind(vm, OverflowError, "kernel '%s' argument '%s': Python int too large to convert to int64",
                          disp_name(d), p->varnames && p->varnames[i] ? p->varnames[i]->chars : "?");
        Value c = cuda_interface_array(vm, argv[i]);
        if (IS_EMPTY(c)) vm_raise_kind(vm, TypeError, "kernel '%s' argument %d: %s", disp_name(d), i + 1, err);
        if (argv != conv) {
            memcpy(conv, argv, (size_t)argc * sizeof(Value));
            argv = conv;
        }
        conv[i] = c;
        vm_push_root(vm, c);
        nconv++;
        tys[i] = arg_type(vm, st, c, err, sizeof err);
        if (!tys[i]) vm_raise_kind(vm, TypeError, "kernel '%s' argument %d: %s", disp_name(d), i + 1, err);
    }
    bool narrow = !d->eager && !d->debug && launch_is_narrow(vm, l, argc, argv);
    Spec *s = d->eager ? find_eager(d, argc, tys) : find_spec(d, argc, tys, narrow);
    if (!s) {
        if (d->eager) {
            char tb[1024];
            types_str(tys, argc, tb, sizeof tb);
            vm_raise(vm, st->t_typing_error, "No matching definition for argument type(s) %s of kernel '%s'", tb,
                     disp_name(d));
        }
        s = compile_spec(vm, d, argc, tys, narrow);
    }
    JitKernel *k = s->k;
    Marshal m;
    gpu_args_init(&m.args, s->gpu ? s->plan : NULL);
    m.ntemps = 0;
    m.gpu = s->gpu ? st->gpu : NULL;
    m.status = 0;
    if (m.gpu) {
        launch_gpu(vm, l, d, s, &m, argc, argv);
        vm_pop_roots(vm, nconv);
        return NONE_VAL;
    }
    Value staged[MAX_ARGS]; /* small host arrays run on fenced copies (cuda_array.c) */
    int nstaged = cuda_cpu_stage(vm, argc, argv, staged);
    for (int i = 0; i < argc; i++)
        if (!marshal_value(vm, s->types[i], staged[i], &m, err, sizeof err))
            vm_raise_kind(vm, TypeError, "kernel '%s' argument %d: %s", disp_name(d), i + 1, err);
    if (m.args.n != k->nparams)
        vm_raise_kind(vm, SystemError, "kernel '%s': %d parameters marshalled, the compiled kernel takes %d",
                      disp_name(d), m.args.n, k->nparams);
    if (!st->device) {
        st->device = gpu_cpu_new(vm->config.cpu_threads, vm->config.cpu_fiber_stack);
        if (!st->device) vm_raise_kind(vm, RuntimeError, "cannot create the CPU device");
        gpu_cpu_set_interrupt(st->device, &vm->interrupt_requested);
        cuda_hook_order(vm);
    }
    (void)cuda_stream_of(vm, l->stream); /* checks the argument; CPU launches are synchronous */
    if (vm->config.write) gpu_cpu_set_output(st->device, kernel_output, vm);
    /* more shared memory than a block may have: what cuLaunchKernel refuses, as Numba shows it */
    if (k->shared_bytes > JIT_MAX_STATIC_SHARED || l->dyn_shared > JIT_MAX_STATIC_SHARED - k->shared_bytes) {
        char msg[512];
        snprintf(msg, sizeof msg,
                 "[1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE: kernel '%s' asks for %zu bytes of "
                 "shared memory per block (%zu static + %zu dynamic), more than the %d bytes (48 KiB) a block may use",
                 disp_name(d), k->shared_bytes + l->dyn_shared, k->shared_bytes, l->dyn_shared, JIT_MAX_STATIC_SHARED);
        cuda_raise_status(vm, CUDA_ERROR_INVALID_VALUE, msg);
    }
    CpuLaunch cl;
    for (int i = 0; i < 3; i++) {
        cl.grid[i] = l->grid[i];
        cl.block[i] = l->block[i];
    }
    cl.shared_bytes = k->shared_bytes + l->dyn_shared;
    cl.dyn_shared = l->dyn_shared;
    cl.block_fn = k->cpu_block;
    cl.thread_fn = k->cpu_thread;
    cl.uses_barrier = k->uses_barrier;
    cl.params = m.args.ptrs;
    cl.grids = NULL;
    compiler_debug_reset(k);
    int rc = gpu_cpu_launch_tree(st->device, &cl, err, sizeof err); /* with the grids it launches */
    if (rc == GPU_CPU_FAULT) cuda_cpu_fault_message(vm, disp_name(d), p, argc, staged, st->device, err, sizeof err);
    if (cuda_cpu_unstage(vm, disp_name(d), p, argc, argv, staged, rc ? NULL : err, sizeof err) && !rc)
        rc = GPU_CPU_FAULT; /* a write just below an array */
    vm_pop_roots(vm, nstaged);
    if (rc == GPU_CPU_INTERRUPTED) vm_raise_interrupt(vm); /* stopped between blocks */
    if (rc == GPU_CPU_CHILD_INDEX_ERROR || rc == GPU_CPU_FAULT) vm_raise_kind(vm, IndexError, "%s", err);
    if (rc != 0) vm_raise_kind(vm, RuntimeError, "launch of kernel '%s' failed: %s", disp_name(d), err);
    if (k->dbg_err && k->dbg_err->flag) { /* debug mode: an index was out of bounds */
        char msg[1024];
        JitErrRecord rec = *k->dbg_err;
        compiler_debug_message(k, k->dbg_err, msg, sizeof msg);
        compiler_debug_reset(k);
        cuda_raise_kernel_exception(vm, k, &rec); /* raise E(...) in the kernel: cuda_kernel_raise.c */
        vm_raise_kind(vm, IndexError, "%s", msg);
    }
    vm_pop_roots(vm, nconv);
    return NONE_VAL;
}

static Value launch_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    if (kwargs && kwargs->count > 0) vm_raise_kind(vm, TypeError, "kernels take no keyword arguments");
    return launch_run(vm, (Launch *)AS_OBJ(self), argc, argv);
}

void cuda_launch(VM *vm, Value kernel, const uint32_t grid[3], const uint32_t block[3], size_t shared_bytes,
                 Value stream, int argc, Value *argv) {
    if (!is_disp(vm, kernel))
        vm_raise_kind(vm, TypeError, "'%s' object is not a kernel (a @cuda.jit function)", vm_type_name(vm, kernel));
    Dispatcher *d = as_disp(kernel);
    if (d->device)
        vm_raise_kind(vm, TypeError, "device function '%s' cannot be launched: only kernels are launched", disp_name(d));
    /* what k[grid, block, stream, shared] makes, on the C stack: no object per launch */
    Launch l = {.disp = kernel, .stream = stream, .dyn_shared = shared_bytes};
    for (int i = 0; i < 3; i++) {
        if (!grid[i] || !block[i])
            invalid_launch(vm, "%s must be positive in every dimension, got 0", !grid[i] ? "griddim" : "blockdim");
        l.grid[i] = grid[i];
        l.block[i] = block[i];
    }
    if (shared_bytes > (1 << 20))
        vm_raise_kind(vm, ValueError, "dynamic shared memory size %zu is out of range", shared_bytes);
    check_limits(vm, &l);
    launch_run(vm, &l, argc, argv);
}

static void launch_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((Launch *)o)->disp);
    gc_mark_value(vm, ((Launch *)o)->stream);
}

static Value launch_repr(VM *vm, Value self) {
    Launch *l = (Launch *)AS_OBJ(self);
    return STR_VAL(str_printf(vm, "<launch of kernel '%s' grid=(%u, %u, %u) block=(%u, %u, %u)>",
                              disp_name(as_disp(l->disp)), l->grid[0], l->grid[1], l->grid[2], l->block[0],
                              l->block[1], l->block[2]));
}

/* ------------------------------------------------------------ dispatcher */

static void disp_mark(VM *vm, Obj *o) {
    Dispatcher *d = (Dispatcher *)o;
    gc_mark_value(vm, d->fn);
    gc_mark_value(vm, d->sigs);
}

static void disp_finalize(VM *vm, Obj *o) {
    Dispatcher *d = (Dispatcher *)o;
    CudaState *st = vm->cuda;
    if (!st) return; /* the vm_free hook already freed the kernels */
    if (d->prev) d->prev->next = d->next;
    else if (st->dispatchers == d) st->dispatchers = d->next;
    if (d->next) d->next->prev = d->prev;
    d->prev = d->next = NULL;
    free_specs(vm, d);
}

static Value disp_repr(VM *vm, Value self) {
    Dispatcher *d = as_disp(self);
    return STR_VAL(str_printf(vm, "<CUDA %s '%s' at %p>", d->device ? "device function" : "kernel", disp_name(d),
                              (void *)AS_OBJ(self)));
}

static Value disp_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    (void)argc, (void)argv, (void)kwargs;
    Dispatcher *d = as_disp(self);
    if (d->device)
        vm_raise_kind(vm, TypeError, "device function '%s' cannot be called from host code (only from kernels)",
                      disp_name(d));
    vm_raise_kind(vm, ValueError,
                  "Kernel launch configuration was not specified. Use the syntax: "
                  "%s[blockspergrid, threadsperblock](arg0, arg1, ..., argn)",
                  disp_name(d));
}

/* Key of a spec in the inspect_* dicts: "(array(float32, 1d, C), int64)".
** A launch-compiled spec without the 32-bit index variant (an array with
** 2^31 or more elements came in) says so: "(array(float32, 1d, C)) [int64 extents]". */
static Value spec_key(VM *vm, Spec *s, bool eager) {
    char buf[2048];
    types_str(s->types, s->nargs, buf, sizeof buf - 32);
    if (!eager && !s->narrow) strcat(buf, " [int64 extents]");
    return STR_VAL(str_cstr(vm, buf));
}

static Value disp_getattr(VM *vm, Value self, Str *name) {
    Dispatcher *d = as_disp(self);
    const char *n = name->chars;
    if (strcmp(n, "py_func") == 0) return d->fn;
    if (strcmp(n, "__name__") == 0) return disp_fn(d)->name ? STR_VAL(disp_fn(d)->name) : NONE_VAL;
    if (strcmp(n, "__qualname__") == 0) return disp_fn(d)->qualname ? STR_VAL(disp_fn(d)->qualname) : NONE_VAL;
    if (strcmp(n, "__doc__") == 0) return NONE_VAL;
    if (strcmp(n, "signatures") == 0) {
        List *l = list_new(vm, d->nspecs);
        vm_push_root(vm, OBJ_VAL(l));
        for (int i = 0; i < d->nspecs; i++) list_append(vm, l, spec_key(vm, &d->specs[i], d->eager || d->debug));
        vm_pop_roots(vm, 1);
        return OBJ_VAL(l);
    }
    return generic_getattr(vm, self, name);
}

/* The signature argument of the inspect_* methods: all specs, or the one
** whose key or types match. */
static Spec *pick_spec(VM *vm, Dispatcher *d, Value sig) {
    if (d->nspecs == 0) vm_raise_kind(vm, ValueError, "kernel '%s' has not been compiled yet", disp_name(d));
    if (IS_EMPTY(sig) || IS_NONE(sig)) return NULL;
    if (numba_is_signature(vm, sig)) sig = STR_VAL(numba_signature_text(vm, sig));
    vm_push_root(vm, sig); /* popped by the raise below or on a match */
    if (IS_STR(vm, sig)) {
        for (int i = 0; i < d->nspecs; i++)
            if (str_equal(AS_STR(spec_key(vm, &d->specs[i], d->eager || d->debug)), AS_STR(sig))) {
                vm_pop_roots(vm, 1);
                return &d->specs[i];
            }
        const JType *tys[MAX_ARGS], *ret;
        char err[256];
        int n = jit_parse_signature(vm, AS_STR(sig)->chars, tys, MAX_ARGS, &ret, err, sizeof err);
        if (n >= 0) {
            Spec *s = find_eager(d, n, tys);
            if (s) {
                vm_pop_roots(vm, 1);
                return s;
            }
        }
    }
    vm_raise_kind(vm, KeyError, "no compiled specialization of '%s' for %s", disp_name(d), vm_repr(vm, sig)->chars);
}

typedef enum InspectWhat { INSPECT_LLVM, INSPECT_ASM } InspectWhat;

/* The text of one spec for inspect_llvm / inspect_asm (compiles PTX on demand). */
static Value spec_text(VM *vm, Dispatcher *d, Spec *s, InspectWhat what) {
    if (what == INSPECT_LLVM) {
        const char *ir = s->k->llvm_ir ? s->k->llvm_ir : s->ptx && s->ptx->llvm_ir ? s->ptx->llvm_ir : NULL;
        if (!ir) vm_raise_kind(vm, NotImplementedError, "the compiler kept no LLVM IR for '%s'", disp_name(d));
        return STR_VAL(str_cstr(vm, ir));
    }
    if (s->k->ptx) return STR_VAL(str_cstr(vm, s->k->ptx));
    if (!s->ptx) {
        char err[4096];
        err[0] = '\0';
        JitOptions jo = {.fastmath = d->fastmath, .debug = d->debug, .narrow_index = s->narrow};
        bool use_cache = d->cache && !d->debug;
        s->ptx = use_cache ? compiler_cache_load(vm, disp_fn(d), s->nargs, s->types, JIT_TARGET_PTX, 0, &jo) : NULL;
        if (!s->ptx) {
            s->ptx = compiler_compile_opts(vm, disp_fn(d), s->nargs, s->types, JIT_TARGET_PTX, 0, &jo, err, sizeof err);
            if (s->ptx && use_cache) compiler_cache_store(vm, disp_fn(d), s->ptx, JIT_TARGET_PTX, 0, &jo);
        }
        if (!s->ptx) vm_raise(vm, cuda_state(vm)->t_typing_error, "%s", err[0] ? err : "PTX compilation failed");
        cuda_hook_order(vm);
    }
    if (!s->ptx->ptx) vm_raise_kind(vm, RuntimeError, "the compiler produced no PTX for '%s'", disp_name(d));
    return STR_VAL(str_cstr(vm, s->ptx->ptx));
}

static Value inspect(VM *vm, const char *fname, InspectWhat what, int argc, Value *argv, Dict *kwargs) {
    Value sig = kw_take(vm, kwargs, "signature");
    kw_done(vm, fname, kwargs);
    arg_count(vm, fname, argc, 1, 2);
    if (argc == 2) sig = argv[1];
    Dispatcher *d = as_disp(argv[0]);
    Spec *one = pick_spec(vm, d, sig);
    if (one) return spec_text(vm, d, one, what);
    Dict *out = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(out));
    for (int i = 0; i < d->nspecs; i++) {
        Value key = spec_key(vm, &d->specs[i], d->eager || d->debug);
        vm_push_root(vm, key);
        Value text = spec_text(vm, d, &d->specs[i], what);
        vm_push_root(vm, text);
        dict_set(vm, out, key, text);
        vm_pop_roots(vm, 2);
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(out);
}

static Value m_inspect_llvm(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return inspect(vm, "inspect_llvm", INSPECT_LLVM, argc, argv, kwargs);
}

static Value m_inspect_asm(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return inspect(vm, "inspect_asm", INSPECT_ASM, argc, argv, kwargs);
}

/* Prints every specialization's variables and their types. */
static Value m_inspect_types(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "file");
    kw_done(vm, "inspect_types", kwargs);
    arg_count(vm, "inspect_types", argc, 1, 2);
    Dispatcher *d = as_disp(argv[0]);
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < d->nspecs; i++) {
        Spec *s = &d->specs[i];
        char tb[2048];
        types_str(s->types, s->nargs, tb, sizeof tb);
        sb_printf(&sb, "%s %s\n", disp_name(d), tb);
        sb_appends(&sb, "--------------------------------------------------------------------------------\n");
        JFunc *f = s->k->func;
        for (int j = 0; f && j < f->nvars; j++) {
            char vb[256];
            sb_printf(&sb, "#   %s: %s%s\n", f->vars[j].name, jt_name(f->vars[j].type, vb, sizeof vb),
                      f->vars[j].param_index >= 0 ? "  (argument)" : "");
        }
        sb_appends(&sb, "================================================================================\n");
    }
    Str *text = sb_finish(vm, &sb);
    vm_push_root(vm, STR_VAL(text));
    file_write(vm, file_sys_stream(vm, "stdout"), text);
    vm_pop_roots(vm, 1);
    return NONE_VAL;
}

/* k.forall(ntasks, tpb=0, stream=0, sharedmem=0): a 1-D launch
** configuration covering ntasks threads (128 per block unless tpb says). */
static Value m_forall(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value tpbv = kw_take(vm, kwargs, "tpb");
    Value stream = kw_take(vm, kwargs, "stream");
    Value shared = kw_take(vm, kwargs, "sharedmem");
    kw_done(vm, "forall", kwargs);
    arg_count(vm, "forall", argc, 2, 5);
    if (argc >= 3) tpbv = argv[2];
    if (argc >= 4) stream = argv[3];
    if (argc >= 5) shared = argv[4];
    int64_t n = arg_int(vm, "forall", argv[1]);
    if (n < 0) vm_raise_kind(vm, ValueError, "Can't create ForAll with negative task count: %lld", (long long)n);
    int64_t tpb = IS_EMPTY(tpbv) ? 0 : arg_int(vm, "forall", tpbv);
    if (tpb == 0) tpb = 128;
    int64_t blocks = n ? (n + tpb - 1) / tpb : 1;
    Value items[4] = {INT_VAL(blocks), INT_VAL(tpb), IS_EMPTY(stream) ? INT_VAL(0) : stream,
                      IS_EMPTY(shared) ? INT_VAL(0) : shared};
    Tuple *key = tuple_from_array(vm, 4, items);
    vm_push_root(vm, OBJ_VAL(key));
    Value l = disp_getitem(vm, argv[0], OBJ_VAL(key));
    ((Launch *)AS_OBJ(l))->empty = n == 0;
    vm_pop_roots(vm, 1);
    return l;
}

/* A new dispatcher for fn; compiles each signature in sigs (a list of Strs or None). */
static Value dispatcher_new(VM *vm, Value fn, Value sigs, bool device, bool fastmath, bool debug, bool cache) {
    CudaState *st = cuda_state(vm);
    if (!IS_OBJ(fn) || AS_OBJ(fn)->type != vm->t_function) {
        if (is_disp(vm, fn)) vm_raise_kind(vm, TypeError, "cuda.jit: '%s' is already a CUDA function", disp_name(as_disp(fn)));
        vm_raise_kind(vm, TypeError, "cuda.jit needs a Python function, not '%s'", vm_type_name(vm, fn));
    }
    Function *f = (Function *)AS_OBJ(fn);
    if (!f->proto->ast)
        vm_raise_kind(vm, TypeError, "cuda.jit: the source of '%s' is not available", f->name ? f->name->chars : "?");
    if (f->proto->flags & (PROTO_VARARGS | PROTO_VARKW | PROTO_GENERATOR))
        vm_raise_kind(vm, TypeError, "cuda.jit: '%s' may not take *args/**kwargs or be a generator",
                      f->name ? f->name->chars : "?");
    Dispatcher *d = gc_alloc_obj(vm, st->t_dispatcher, sizeof(Dispatcher));
    d->fn = fn;
    d->sigs = IS_EMPTY(sigs) ? NONE_VAL : sigs;
    d->device = device;
    d->fastmath = fastmath;
    d->debug = debug;
    d->cache = cache;
    d->next = st->dispatchers;
    if (st->dispatchers) st->dispatchers->prev = d;
    st->dispatchers = d;
    if (IS_LIST(vm, sigs)) {
        Value dv = OBJ_VAL(d);
        vm_push_root(vm, dv);
        List *l = AS_LIST(sigs);
        for (int64_t i = 0; i < l->len; i++) {
            const JType *tys[MAX_ARGS], *ret;
            char err[512];
            const char *text = AS_STR(l->items[i])->chars;
            int n = jit_parse_signature(vm, text, tys, MAX_ARGS, &ret, err, sizeof err);
            if (n < 0) vm_raise(vm, st->t_typing_error, "invalid signature '%s': %s", text, err);
            if (n != f->proto->nparams)
                vm_raise(vm, st->t_typing_error, "signature '%s' has %d argument%s, '%s' takes %d", text, n,
                         n == 1 ? "" : "s", disp_name(d), f->proto->nparams);
            if (device) continue; /* device functions specialize at their call sites */
            if (ret->kind != JK_VOID) vm_raise(vm, st->t_typing_error, "CUDA kernel must have void return type (signature '%s')", text);
            d->eager = true;
            if (!find_spec(d, n, tys, false)) compile_spec(vm, d, n, tys, false);
        }
        vm_pop_roots(vm, 1);
    }
    return OBJ_VAL(d);
}

/* Options a decorator made by cuda.jit(...) carries: (sigs, device, fastmath, debug, cache). */
static Value f_decorator(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "jit", kwargs);
    arg_count(vm, "jit", argc, 1, 1);
    Tuple *opts = AS_TUPLE(vm_current_native(vm)->data);
    return dispatcher_new(vm, argv[0], opts->items[0], AS_BOOL(opts->items[1]), AS_BOOL(opts->items[2]),
                          opts->len > 3 && AS_BOOL(opts->items[3]), opts->len > 4 && AS_BOOL(opts->items[4]));
}

/* Normalizes the signature argument of cuda.jit: one signature (a str, a
** Signature such as void(float32[:]), a tuple of types), or a list/tuple of
** them → a list of signature texts. */
static Value signature_list(VM *vm, Value v) {
    if (numba_is_signature(vm, v)) {
        v = STR_VAL(numba_signature_text(vm, v));
        vm_push_root(vm, v);
        List *l = list_new(vm, 1);
        vm_push_root(vm, OBJ_VAL(l));
        list_append(vm, l, v);
        vm_pop_roots(vm, 2);
        return OBJ_VAL(l);
    }
    if (IS_LIST(vm, v) || IS_TUPLE(vm, v)) {
        int64_t n = IS_LIST(vm, v) ? AS_LIST(v)->len : AS_TUPLE(v)->len;
        Value *items = IS_LIST(vm, v) ? AS_LIST(v)->items : AS_TUPLE(v)->items;
        List *l = list_new(vm, n);
        vm_push_root(vm, OBJ_VAL(l));
        for (int64_t i = 0; i < n; i++) {
            Str *text = numba_is_signature(vm, items[i]) ? numba_signature_text(vm, items[i]) : NULL;
            if (!text)
                vm_raise_kind(vm, TypeError, "cuda.jit: signatures must be strings like 'void(float32[:])' or types like void(float32[:]), not '%s'",
                              vm_type_name(vm, items[i]));
            vm_push_root(vm, STR_VAL(text));
            list_append(vm, l, STR_VAL(text));
            vm_pop_roots(vm, 1);
        }
        vm_pop_roots(vm, 1);
        return OBJ_VAL(l);
    }
    vm_raise_kind(vm, TypeError, "cuda.jit: expected a function or a signature string, not '%s'", vm_type_name(vm, v));
}

/* cuda.jit(func_or_sig=None, device=False, fastmath=False, ...) */
Value cuda_f_jit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value device = kw_take(vm, kwargs, "device");
    Value fastmath = kw_take(vm, kwargs, "fastmath");
    Value debug = kw_take(vm, kwargs, "debug");
    Value cache = kw_take(vm, kwargs, "cache");
    static const char *const ignored[] = {"lineinfo", "opt", "inline", "forceinline",
                                          "max_registers", "link", "boundscheck", "lto", "launch_bounds"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) (void)kw_take(vm, kwargs, ignored[i]);
    kw_done(vm, "jit", kwargs);
    arg_count(vm, "jit", argc, 0, 1);
    bool is_device = !IS_EMPTY(device) && vm_truthy(vm, device);
    bool is_fast = !IS_EMPTY(fastmath) && vm_truthy(vm, fastmath);
    bool is_debug = !IS_EMPTY(debug) && vm_truthy(vm, debug);
    bool is_cache = !IS_EMPTY(cache) && vm_truthy(vm, cache);
    Value target = argc ? argv[0] : NONE_VAL;
    if (IS_OBJ(target) && AS_OBJ(target)->type == vm->t_function)
        return dispatcher_new(vm, target, NONE_VAL, is_device, is_fast, is_debug, is_cache);
    Value sigs = IS_NONE(target) ? NONE_VAL : signature_list(vm, target);
    vm_push_root(vm, sigs);
    Value items[5] = {sigs, BOOL_VAL(is_device), BOOL_VAL(is_fast), BOOL_VAL(is_debug), BOOL_VAL(is_cache)};
    Tuple *opts = tuple_from_array(vm, 5, items);
    vm_push_root(vm, OBJ_VAL(opts));
    Value dec = native_new(vm, "jit_decorator", f_decorator, OBJ_VAL(opts));
    vm_pop_roots(vm, 2);
    return dec;
}

/* cuda.compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False,
** fastmath=False, cc=None, opt=True) → (ptx, resty) */
Value cuda_f_compile_ptx(VM *vm, int argc, Value *argv, Dict *kwargs) {
    CudaState *st = cuda_state(vm);
    Value device = kw_take(vm, kwargs, "device");
    Value fastmath = kw_take(vm, kwargs, "fastmath");
    Value cc = kw_take(vm, kwargs, "cc");
    static const char *const ignored[] = {"debug", "lineinfo", "opt", "abi", "abi_info", "output", "forceinline",
                                          "launch_bounds"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) (void)kw_take(vm, kwargs, ignored[i]);
    kw_done(vm, "compile_ptx", kwargs);
    arg_count(vm, "compile_ptx", argc, 2, 2);
    Value fnv = argv[0];
    if (is_disp(vm, fnv)) fnv = as_disp(fnv)->fn;
    if (!IS_OBJ(fnv) || AS_OBJ(fnv)->type != vm->t_function)
        vm_raise_kind(vm, TypeError, "compile_ptx() needs a function, not '%s'", vm_type_name(vm, fnv));
    bool is_device = !IS_EMPTY(device) && vm_truthy(vm, device);
    int ccv = 0;
    if (!IS_EMPTY(cc) && !IS_NONE(cc)) {
        if (!IS_TUPLE(vm, cc) || AS_TUPLE(cc)->len != 2)
            vm_raise_kind(vm, TypeError, "compile_ptx(): cc must be a tuple (major, minor)");
        int64_t major = arg_int(vm, "compile_ptx", AS_TUPLE(cc)->items[0]);
        int64_t minor = arg_int(vm, "compile_ptx", AS_TUPLE(cc)->items[1]);
        if (major < 1 || major > 20 || minor < 0 || minor > 9)
            vm_raise_kind(vm, ValueError, "compile_ptx(): invalid compute capability (%lld, %lld)", (long long)major,
                          (long long)minor);
        ccv = (int)(major * 10 + minor);
    }
    Str *sig = numba_signature_text(vm, argv[1]); /* a str, void(float32[:]) or (float32[:], int32) */
    if (!sig) sig = arg_str(vm, "compile_ptx", argv[1]);
    vm_push_root(vm, STR_VAL(sig));
    const JType *tys[MAX_ARGS], *ret;
    char err[4096];
    int n = jit_parse_signature(vm, sig->chars, tys, MAX_ARGS, &ret, err, sizeof err);
    if (n < 0) vm_raise(vm, st->t_typing_error, "invalid signature '%s': %s", sig->chars, err);
    if (!is_device && ret->kind != JK_VOID) vm_raise(vm, st->t_typing_error, "CUDA kernel must have void return type");
    Function *f = (Function *)AS_OBJ(fnv);
    if (n != f->proto->nparams)
        vm_raise(vm, st->t_typing_error, "signature '%s' has %d arguments, the function takes %d", sig->chars, n,
                 f->proto->nparams);
    err[0] = '\0';
    bool fast = !IS_EMPTY(fastmath) && vm_truthy(vm, fastmath);
    /* copy the text out (malloc'd) and free the compiler's objects before anything can raise */
    char *copy = NULL;
    const JType *resty = ret;
    if (is_device) {
        copy = compiler_compile_ptx_device(vm, f, n, tys, ccv, fast, &resty, err, sizeof err);
        if (!copy) vm_raise(vm, st->t_typing_error, "%s", err[0] ? err : "PTX compilation failed");
    } else {
        JitKernel *k = compiler_compile(vm, f, n, tys, JIT_TARGET_PTX, ccv, fast, err, sizeof err);
        if (!k) vm_raise(vm, st->t_typing_error, "%s", err[0] ? err : "PTX compilation failed");
        copy = strdup(k->ptx ? k->ptx : "");
        compiler_kernel_free(vm, k);
        if (!copy) vm_throw(vm, vm->memory_error);
    }
    cuda_hook_order(vm);
    char rb[256];
    const char *rname = !resty || resty->kind == JK_VOID || resty->kind == JK_NONE ? "none" : jt_name(resty, rb, sizeof rb);
    StrBuf sb = {.data = copy, .len = strlen(copy), .cap = strlen(copy) + 1};
    Str *ptx = sb_finish(vm, &sb);
    vm_push_root(vm, STR_VAL(ptx));
    Value items[2] = {STR_VAL(ptx), numba_type_named(vm, rname)};
    Tuple *t = tuple_from_array(vm, 2, items);
    vm_pop_roots(vm, 2);
    return OBJ_VAL(t);
}

/* cuda.compile_ptx_for_current_device(pyfunc, sig, ...): compile_ptx for
** the compute capability of the current device. */
Value cuda_f_compile_ptx_for_current_device(VM *vm, int argc, Value *argv, Dict *kwargs) {
    CudaState *st = cuda_state(vm);
    if (kwargs && !IS_EMPTY(dict_get_cstr(vm, kwargs, "cc")))
        vm_raise_kind(vm, TypeError, "compile_ptx_for_current_device() got an unexpected keyword argument 'cc'");
    Dict *kw = kwargs ? dict_copy(vm, kwargs) : dict_new(vm);
    vm_push_root(vm, OBJ_VAL(kw));
    Value dev = vm_call(vm, dict_get_cstr(vm, st->cuda->dict, "get_current_device"), 0, NULL);
    vm_push_root(vm, dev);
    dict_set_cstr(vm, kw, "cc", vm_getattr(vm, dev, str_cstr(vm, "compute_capability")));
    Value r = cuda_f_compile_ptx(vm, argc, argv, kw);
    vm_pop_roots(vm, 2);
    return r;
}

void cuda_dispatch_init(VM *vm, CudaState *st) {
    Type *t = type_new_builtin(vm, "CUDADispatcher", vm->t_object, 0);
    t->repr = disp_repr;
    t->call = disp_call;
    t->getattr = disp_getattr;
    t->getitem = disp_getitem;
    t->mark = disp_mark;
    t->finalize = disp_finalize;
    type_add_method(vm, t, "inspect_llvm", m_inspect_llvm);
    type_add_method(vm, t, "inspect_asm", m_inspect_asm);
    type_add_method(vm, t, "inspect_types", m_inspect_types);
    type_add_method(vm, t, "forall", m_forall);
    st->t_dispatcher = t;
    t = type_new_builtin(vm, "_LaunchConfiguration", vm->t_object, 0);
    t->call = launch_call;
    t->repr = launch_repr;
    t->mark = launch_mark;
    st->t_launch = t;
}
