/*
** cuda_array.c — device arrays: cuda.to_device, device_array,
** device_array_like and DeviceNDArray (copy_to_host, shape, dtype, ...).
**
** On the CPU device, device memory is host memory: a device array wraps an
** NDArray that owns a separate buffer (to_device copies), so programs see
** the same copy semantics they would on a GPU. On a GPU the data lives in
** device memory (see DevArray in cuda_priv.h) and no host copy is kept:
** the host NDArray is a descriptor whose data pointer is the device address,
** so basic indexing on it makes device views without touching data; element
** access copies one element; slices stay device arrays (views), as in Numba.
*/
#include <stdint.h>
#include <string.h>

#include "../gpu/guarded_mem.h"
#include "cuda_priv.h"

static DevArray *as_dev(Value v) { return (DevArray *)AS_OBJ(v); }
static NDArray *dev_host(Value v) { return (NDArray *)AS_OBJ(as_dev(v)->host); }

bool cuda_is_devarray(VM *vm, Value v) {
    return vm->cuda && IS_OBJ(v) && AS_OBJ(v)->type == vm->cuda->t_devarray;
}

NDArray *cuda_array_of(VM *vm, Value v) {
    if (cuda_is_devarray(vm, v)) return dev_host(v);
    if (nd_check(vm, v)) return (NDArray *)AS_OBJ(v);
    return NULL;
}

Value cuda_devarray_wrap(VM *vm, NDArray *a) {
    vm_push_root(vm, OBJ_VAL(a));
    DevArray *d = gc_alloc_obj(vm, cuda_state(vm)->t_devarray, sizeof(DevArray));
    d->host = OBJ_VAL(a);
    d->owner = NONE_VAL;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(d);
}

/* ------------------------------------------------------- CPU device memory */

/* The buffer behind a device array on the CPU device, fenced by guard
** pages (gpu/guarded_mem.h): a kernel indexing past either end faults, and
** the launch raises (cuda_cpu_fault_message) instead of overwriting another
** array or the interpreter's heap. */
typedef struct FencedMem {
    Obj obj;
    GuardedBuf *buf;
    size_t bytes; /* counted toward collection */
} FencedMem;

static void fenced_finalize(VM *vm, Obj *o) {
    FencedMem *f = (FencedMem *)o;
    if (!f->buf) return;
    guarded_free(f->buf);
    gc_account_external(vm, -(ptrdiff_t)f->bytes);
    f->buf = NULL;
}

#define FENCED_MIN_CHARGE ((size_t)64 << 10)

/* A fenced buffer of bytes (its data aligned to align), zeroed when zero is set. */
static FencedMem *fenced_new(VM *vm, size_t bytes, size_t align, bool zero) {
    FencedMem *f = gc_alloc_obj(vm, vm->cuda->t_fenced, sizeof(FencedMem));
    f->buf = guarded_alloc(bytes, align, zero);
    if (!f->buf) {
        vm_push_root(vm, OBJ_VAL(f));
        gc_collect(vm);
        f->buf = guarded_alloc(bytes, align, zero);
        if (!f->buf) vm_raise_kind(vm, MemoryError, "cannot allocate %zu bytes for a device array", bytes);
        vm_pop_roots(vm, 1);
    }
    /* Counted as at least 64 KiB: what a small buffer holds up is a slab
    ** slot (8192 at most) more than its bytes, and the collector must free
    ** dead ones before the slots run out. */
    f->bytes = bytes > FENCED_MIN_CHARGE ? bytes : FENCED_MIN_CHARGE;
    gc_account_external(vm, (ptrdiff_t)f->bytes);
    return f;
}

/* Gives the descriptor a (data NULL, contiguous strides) a fenced buffer,
** zeroed when zero is set. */
static NDArray *cpu_fenced(VM *vm, NDArray *a, bool zero) {
    vm_push_root(vm, OBJ_VAL(a));
    size_t isz = nd_itemsize(a->dtype);
    FencedMem *f = fenced_new(vm, (size_t)a->size * isz, isz, zero);
    a->base = OBJ_VAL(f);
    a->data = guarded_data(f->buf);
    vm_pop_roots(vm, 1);
    return a;
}

/* Host arrays up to this size are run on fenced copies (below); bigger
** ones are fenced where they are (nd_core.c allocates them with
** guarded_host_alloc). 60 KiB keeps the copies within guarded_mem's slab
** slots, so staging costs no system call. */
#define STAGE_MAX GUARDED_HOST_MIN

/* The array owning the heap buffer a's data lies in, or NULL (memory owned
** by something else: a device array's fenced buffer, a bytes object). */
static NDArray *owning_root(VM *vm, NDArray *a) {
    NDArray *r = a;
    for (int depth = 0; r && !r->nbytes_owned && depth < 64; depth++)
        r = IS_OBJ(r->base) && nd_check(vm, r->base) ? (NDArray *)AS_OBJ(r->base) : NULL;
    if (!r || !r->nbytes_owned || a->data < r->data || a->data > r->data + r->nbytes_owned) return NULL;
    return r;
}

/* Whether stage replaced the argument a by the copy s. */
static bool is_staged(Value a, Value s) { return IS_OBJ(a) && IS_OBJ(s) && AS_OBJ(a) != AS_OBJ(s); }

/* Where the copy of root's buffer starts, from an argument a of that root
** and its staged view s. */
static char *copy_start(NDArray *root, NDArray *a, NDArray *s) { return s->data - (a->data - root->data); }

int cuda_cpu_stage(VM *vm, int argc, const Value *argv, Value *out) {
    int pushed = 0;
    for (int i = 0; i < argc; i++) {
        out[i] = argv[i];
        if (!IS_OBJ(argv[i]) || !nd_check(vm, argv[i])) continue;
        NDArray *a = (NDArray *)AS_OBJ(argv[i]);
        NDArray *root = owning_root(vm, a);
        if (!root || root->nbytes_owned > STAGE_MAX) continue;
        /* arguments sharing a buffer share its copy, as they share the buffer */
        char *copy = NULL;
        Value owner = NONE_VAL;
        for (int j = 0; j < i && !copy; j++) {
            NDArray *aj = (NDArray *)AS_OBJ(argv[j]);
            if (is_staged(argv[j], out[j]) && owning_root(vm, aj) == root) {
                NDArray *sj = (NDArray *)AS_OBJ(out[j]);
                copy = copy_start(root, aj, sj);
                owner = sj->base;
            }
        }
        if (!copy) {
            FencedMem *f = fenced_new(vm, root->nbytes_owned, nd_itemsize(root->dtype), false);
            copy = guarded_data(f->buf);
            memcpy(copy, root->data, root->nbytes_owned);
            owner = OBJ_VAL(f);
        }
        vm_push_root(vm, owner);
        NDArray *v = nd_wrap(vm, a->dtype, copy + (a->data - root->data), a->ndim, a->shape, a->strides, owner);
        vm_pop_roots(vm, 1);
        v->flags = a->flags;
        vm_push_root(vm, OBJ_VAL(v));
        pushed++;
        out[i] = OBJ_VAL(v);
    }
    return pushed;
}

/* The fenced buffer behind a (a device array's data, a staged copy), or NULL. */
static FencedMem *fenced_of(VM *vm, NDArray *a) {
    if (!a || !IS_OBJ(a->base) || AS_OBJ(a->base)->type != vm->cuda->t_fenced) return NULL;
    return (FencedMem *)AS_OBJ(a->base);
}

static const char *param_name(const Proto *p, int i) {
    return p && i < p->nlocals && p->varnames[i] ? p->varnames[i]->chars : "?";
}

static const char *const FAULT_HINT = "(CPU device; @cuda.jit(debug=True) reports the index and the thread)";

bool cuda_cpu_unstage(VM *vm, const char *kernel, const Proto *p, int argc, const Value *argv, const Value *staged,
                      char *msg, size_t size) {
    bool dirty = false;
    for (int i = 0; i < argc; i++) {
        FencedMem *f = fenced_of(vm, cuda_array_of(vm, staged[i]));
        if (f && f->buf && !guarded_redzone_clean(f->buf) && !dirty) {
            dirty = true;
            if (msg)
                snprintf(msg, size, "kernel '%s' wrote out of bounds of array '%s' (below its first element) %s",
                         kernel, param_name(p, i), FAULT_HINT);
        }
        if (!is_staged(argv[i], staged[i])) continue;
        NDArray *a = (NDArray *)AS_OBJ(argv[i]);
        NDArray *root = owning_root(vm, a);
        bool done = false; /* an earlier argument of the same buffer wrote it back */
        for (int j = 0; j < i && !done; j++)
            done = is_staged(argv[j], staged[j]) && owning_root(vm, (NDArray *)AS_OBJ(argv[j])) == root;
        if (done) continue;
        NDArray *s = (NDArray *)AS_OBJ(staged[i]);
        memcpy(root->data, copy_start(root, a, s), root->nbytes_owned);
        /* the copy was never visible to the program: back to the cache now */
        fenced_finalize(vm, AS_OBJ(s->base));
    }
    return dirty;
}

void cuda_cpu_fault_message(VM *vm, const char *kernel, const Proto *p, int argc, const Value *argv, CpuDevice *dev,
                            char *msg, size_t size) {
    int access;
    void *addr = gpu_cpu_fault_addr(dev, &access);
    const char *verb = access == GPU_CPU_ACCESS_WRITE ? "wrote" : access == GPU_CPU_ACCESS_READ ? "read" : "accessed";
    void *data;
    size_t bytes;
    if (guarded_find(addr, &data, &bytes))
        for (int i = 0; i < argc; i++) {
            NDArray *a = cuda_array_of(vm, argv[i]);
            if (!a || a->data < (char *)data || a->data > (char *)data + bytes) continue;
            snprintf(msg, size, "kernel '%s' %s out of bounds of array '%s' %s", kernel, verb, param_name(p, i),
                     FAULT_HINT);
            return;
        }
    snprintf(msg, size, "kernel '%s' %s an invalid address (%p), outside every array it was given %s", kernel, verb,
             addr, FAULT_HINT);
}

/* ------------------------------------------------------------ GPU memory */

static DevArray *owner_of(DevArray *d) { return IS_NONE(d->owner) ? d : (DevArray *)AS_OBJ(d->owner); }

/* Raises unless the array's allocation belongs to the live context. */
static GpuCuda *live_gpu(VM *vm, DevArray *d) {
    CudaState *st = vm->cuda;
    if (owner_of(d)->gen != st->gen)
        vm_raise_kind(vm, ValueError, "this device array belongs to a CUDA context that was reset or replaced");
    return st->gpu;
}

/* The device address an array descriptor of a GPU device array points at
** (its data pointer holds the device address; it is never dereferenced). */
static CUdeviceptr daddr(const NDArray *h) { return (CUdeviceptr)(uintptr_t)h->data; }

/* A GPU device array shaped like a (shape, strides, dtype; a contiguous):
** allocates the device memory and uploads a's data (upload) or zeroes it.
** No host buffer is kept: the descriptor's data pointer is the device
** address, and the device bytes count toward collection. When the device
** is full, collects garbage once (freeing unreachable device arrays) and
** retries. */
static Value gpu_array_new(VM *vm, GpuCuda *c, NDArray *a, bool upload) {
    vm_push_root(vm, OBJ_VAL(a));
    DevArray *d = gc_alloc_obj(vm, vm->cuda->t_devarray, sizeof(DevArray));
    d->host = NONE_VAL;
    d->owner = NONE_VAL;
    Value v = OBJ_VAL(d);
    vm_push_root(vm, v);
    size_t bytes = (size_t)a->size * nd_itemsize(a->dtype);
    char err[GPU_CUDA_ERRSIZE];
    int status = gpu_cuda_malloc(c, bytes, &d->base, err, sizeof err);
    if (status == CUDA_ERROR_OUT_OF_MEMORY) {
        gc_collect(vm);
        status = gpu_cuda_malloc(c, bytes, &d->base, err, sizeof err);
    }
    if (status) cuda_raise_status(vm, status, err);
    d->dptr = d->base;
    d->bytes = bytes;
    d->gen = vm->cuda->gen;
    if (d->base) {
        CudaState *st = vm->cuda;
        d->next = st->allocations;
        if (st->allocations) st->allocations->prev = d;
        st->allocations = d;
        gc_account_external(vm, (ptrdiff_t)bytes);
    }
    d->host = OBJ_VAL(nd_wrap(vm, a->dtype, (void *)(uintptr_t)d->base, a->ndim, a->shape, a->strides, NONE_VAL));
    if (bytes) {
        status = upload ? gpu_cuda_memcpy_htod(c, d->base, a->data, bytes, err, sizeof err)
                        : gpu_cuda_memset(c, d->base, 0, bytes, err, sizeof err);
        if (status) cuda_raise_status(vm, status, err);
    }
    vm_pop_roots(vm, 2);
    return v;
}

/* Unlinks d from the live allocations and frees its device memory (when
** its context is still the live one). */
static void release(VM *vm, CudaState *st, DevArray *d) {
    if (d->prev) d->prev->next = d->next;
    else if (st->allocations == d) st->allocations = d->next;
    if (d->next) d->next->prev = d->prev;
    d->prev = d->next = NULL;
    if (st->gpu && d->gen == st->gen) gpu_cuda_free(st->gpu, d->base, NULL, 0);
    gc_account_external(vm, -(ptrdiff_t)d->bytes);
    d->base = 0;
}

static void devarray_finalize(VM *vm, Obj *o) {
    DevArray *d = (DevArray *)o;
    if (!d->base || d->borrowed || !vm->cuda) return;
    release(vm, vm->cuda, d);
}

void cuda_array_free_all(VM *vm, CudaState *st) {
    while (st->allocations) release(vm, st, st->allocations);
}

CUdeviceptr cuda_devarray_ptr(VM *vm, Value v) {
    DevArray *d = as_dev(v);
    if (d->dptr) live_gpu(vm, d);
    return d->dptr;
}

/* Checks a driver status. */
static void check(VM *vm, int status, const char *err) {
    if (status) cuda_raise_status(vm, status, err);
}

/* GPU: the whole allocation behind v, downloaded into a new 1-d host array
** of v's dtype, and (in *view) v's layout over it. For strided access only. */
static NDArray *owner_on_host(VM *vm, Value v, NDArray **view) {
    DevArray *d = as_dev(v), *o = owner_of(d);
    GpuCuda *c = live_gpu(vm, d);
    NDArray *h = dev_host(v);
    size_t isz = nd_itemsize(h->dtype);
    int64_t n = (int64_t)(o->bytes / isz);
    NDArray *tmp = nd_new(vm, h->dtype, 1, &n);
    vm_push_root(vm, OBJ_VAL(tmp));
    char err[GPU_CUDA_ERRSIZE];
    check(vm, gpu_cuda_memcpy_dtoh(c, tmp->data, o->base, o->bytes, err, sizeof err), err);
    *view = nd_wrap(vm, h->dtype, tmp->data + (d->dptr - o->base), h->ndim, h->shape, h->strides, OBJ_VAL(tmp));
    vm_pop_roots(vm, 1);
    return tmp;
}

/* GPU: a new C-contiguous host array with v's contents (a contiguous v is
** copied straight; a strided view through its allocation). */
static NDArray *to_host(VM *vm, Value v) {
    NDArray *h = dev_host(v);
    NDArray *r = nd_new(vm, h->dtype, h->ndim, h->shape);
    if (!r->size) return r;
    vm_push_root(vm, OBJ_VAL(r));
    if (h->flags & ND_C_CONTIGUOUS) {
        char err[GPU_CUDA_ERRSIZE];
        GpuCuda *c = live_gpu(vm, as_dev(v));
        check(vm, gpu_cuda_memcpy_dtoh(c, r->data, as_dev(v)->dptr, (size_t)r->size * nd_itemsize(h->dtype), err,
                                       sizeof err), err);
    } else {
        NDArray *view;
        owner_on_host(vm, v, &view);
        cuda_copy_strided(r, view);
    }
    vm_pop_roots(vm, 1);
    return r;
}

/* GPU: writes src (same shape and dtype) into v's device memory. */
static void from_host(VM *vm, Value v, NDArray *src) {
    NDArray *h = dev_host(v);
    if (!h->size) return;
    GpuCuda *c = live_gpu(vm, as_dev(v));
    char err[GPU_CUDA_ERRSIZE];
    if (h->flags & ND_C_CONTIGUOUS) {
        if (!(src->flags & ND_C_CONTIGUOUS)) src = nd_copy(vm, src);
        vm_push_root(vm, OBJ_VAL(src));
        check(vm, gpu_cuda_memcpy_htod(c, as_dev(v)->dptr, src->data, (size_t)h->size * nd_itemsize(h->dtype), err,
                                       sizeof err), err);
        vm_pop_roots(vm, 1);
        return;
    }
    /* a strided view: read-modify-write of its allocation */
    vm_push_root(vm, OBJ_VAL(src));
    NDArray *view;
    NDArray *tmp = owner_on_host(vm, v, &view);
    vm_push_root(vm, OBJ_VAL(tmp));
    cuda_copy_strided(view, src);
    DevArray *o = owner_of(as_dev(v));
    check(vm, gpu_cuda_memcpy_htod(c, o->base, tmp->data, o->bytes, err, sizeof err), err);
    vm_pop_roots(vm, 2);
}

/* Wraps an NDArray derived from v's descriptor: on a GPU, a view of the
** same allocation becomes a device view; anything else is a host copy that
** becomes a new device array. */
static Value wrap_derived(VM *vm, Value v, NDArray *r) {
    DevArray *d = as_dev(v);
    if (!d->dptr) return cuda_devarray_wrap(vm, r);
    DevArray *o = owner_of(d);
    if (r->nbytes_owned == 0 && daddr(r) >= o->base && daddr(r) <= o->base + o->bytes) {
        vm_push_root(vm, OBJ_VAL(r));
        Value w = cuda_devarray_wrap(vm, r);
        DevArray *wd = as_dev(w);
        wd->owner = OBJ_VAL(o);
        wd->dptr = daddr(r);
        vm_pop_roots(vm, 1);
        return w;
    }
    if (!(r->flags & ND_C_CONTIGUOUS) || r->nbytes_owned == 0) {
        vm_push_root(vm, OBJ_VAL(r));
        r = nd_copy(vm, r);
        vm_pop_roots(vm, 1);
    }
    return gpu_array_new(vm, vm->cuda->gpu, r, true);
}

void cuda_copy_strided(NDArray *dst, const NDArray *src) {
    size_t isz = nd_itemsize(src->dtype);
    if (src->size == 0) return;
    if ((dst->flags & ND_C_CONTIGUOUS) && (src->flags & ND_C_CONTIGUOUS)) {
        memmove(dst->data, src->data, (size_t)src->size * isz);
        return;
    }
    int64_t idx[ND_MAXDIM] = {0};
    int nd = src->ndim;
    for (int64_t n = 0; n < src->size; n++) {
        int64_t od = 0, os = 0;
        for (int i = 0; i < nd; i++) {
            od += idx[i] * dst->strides[i];
            os += idx[i] * src->strides[i];
        }
        memcpy(dst->data + od, src->data + os, isz);
        for (int i = nd - 1; i >= 0; i--) {
            if (++idx[i] < src->shape[i]) break;
            idx[i] = 0;
        }
    }
}

/* "(3, 4)", "(3,)", "()": n ints as a Python tuple prints them, into buf. */
static const char *tuple_str(int n, const int64_t *v, char *buf, size_t size) {
    size_t len = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (len < size) snprintf(buf + len, size - len, "%s)", n == 1 ? "," : "");
    return buf;
}

/* The axes of a that are longer than 1 (Numba's squeeze): their count, and
** their lengths and strides in shape and strides. */
static int squeezed(const NDArray *a, int64_t *shape, int64_t *strides) {
    int n = 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != 1) shape[n] = a->shape[i], strides[n++] = a->strides[i];
    return n;
}

/* Numba's check_array_compatibility(a, b): the same dtype (TypeError), the
** same shape once axes of length 1 are dropped, and, when strides is set
** and the arrays hold elements, the same strides on those axes. */
static void check_compatible(VM *vm, const NDArray *a, const NDArray *b, bool strides) {
    char sa[400], sb[400];
    if (a->dtype != b->dtype)
        vm_raise_kind(vm, TypeError, "incompatible dtype: %s vs. %s", nd_dtype_name(a->dtype), nd_dtype_name(b->dtype));
    int64_t ash[ND_MAXDIM], ast[ND_MAXDIM], bsh[ND_MAXDIM], bst[ND_MAXDIM];
    int an = squeezed(a, ash, ast), bn = squeezed(b, bsh, bst);
    bool same_shape = an == bn, same_strides = true;
    for (int i = 0; same_shape && i < an; i++) same_shape = ash[i] == bsh[i], same_strides &= ast[i] == bst[i];
    if (!same_shape)
        vm_raise_kind(vm, ValueError, "incompatible shape: %s vs. %s", tuple_str(a->ndim, a->shape, sa, sizeof sa),
                      tuple_str(b->ndim, b->shape, sb, sizeof sb));
    if (strides && a->size && !same_strides)
        vm_raise_kind(vm, ValueError, "incompatible strides: %s vs. %s", tuple_str(a->ndim, a->strides, sa, sizeof sa),
                      tuple_str(b->ndim, b->strides, sb, sizeof sb));
}

/* Numba's sentry_contiguous: a copy between host and device is one range of
** bytes, so the array (broadcast axes and axes of length 1 aside) must be
** C- or F-contiguous. */
static void check_contiguous(VM *vm, const NDArray *a) {
    bool c = true, f = true;
    int64_t next = (int64_t)nd_itemsize(a->dtype);
    for (int i = a->ndim - 1; i >= 0 && a->size; i--)
        if (a->shape[i] > 1 && a->strides[i] != 0) c = c && a->strides[i] == next, next *= a->shape[i];
    next = (int64_t)nd_itemsize(a->dtype);
    for (int i = 0; i < a->ndim && a->size; i++)
        if (a->shape[i] > 1 && a->strides[i] != 0) f = f && a->strides[i] == next, next *= a->shape[i];
    if (!c && !f)
        vm_raise_kind(vm, ValueError, "Array contains non-contiguous buffer and cannot be transferred as a single "
                                      "memory region. Please ensure contiguous buffer with numpy .ascontiguousarray()");
}

/* a seen with like's shape, when the two differ only in axes of length 1
** (checked before): a view of a's data, a itself when the shapes are equal. */
static NDArray *shaped_like(VM *vm, NDArray *a, const NDArray *like) {
    bool same = a->ndim == like->ndim;
    for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == like->shape[i];
    if (same) return a;
    int64_t ash[ND_MAXDIM], ast[ND_MAXDIM], strides[ND_MAXDIM];
    squeezed(a, ash, ast);
    for (int i = 0, k = 0; i < like->ndim; i++) strides[i] = like->shape[i] == 1 ? 0 : ast[k++];
    return nd_wrap(vm, a->dtype, a->data, like->ndim, like->shape, strides, OBJ_VAL(a));
}

/* The host data of a host or device array (a GPU device array is
** downloaded into a new host array); NULL when v is neither. */
static NDArray *host_data(VM *vm, Value v) {
    if (cuda_is_devarray(vm, v) && as_dev(v)->dptr) return to_host(vm, v);
    return cuda_array_of(vm, v);
}

/* Writes src (same shape and dtype, checked) into the device array v. */
static void write_from(VM *vm, Value v, NDArray *src) {
    if (!(dev_host(v)->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "assignment destination is read-only");
    if (as_dev(v)->dptr) from_host(vm, v, src);
    else cuda_copy_strided(dev_host(v), src);
}

/* dev.copy_to_device(src) with Numba's rules: nothing for an empty src;
** dev contiguous; a device src contiguous with dev's strides; a host src in
** any layout (Numba makes a copy in dev's order); lists as dev's dtype. */
static void copy_into(VM *vm, Value dev, Value src) {
    NDArray *h = dev_host(dev);
    NDArray *sh = cuda_array_of(vm, src);
    if (!sh) sh = nd_from_value(vm, src, h->dtype);
    vm_push_root(vm, OBJ_VAL(sh));
    if (sh->size) {
        check_contiguous(vm, h);
        if (cuda_is_devarray(vm, src)) check_contiguous(vm, sh);
        check_compatible(vm, h, sh, cuda_is_devarray(vm, src));
        NDArray *data = cuda_is_devarray(vm, src) ? host_data(vm, src) : sh;
        vm_push_root(vm, OBJ_VAL(data));
        NDArray *view = shaped_like(vm, data, h);
        vm_push_root(vm, OBJ_VAL(view));
        write_from(vm, dev, view);
        vm_pop_roots(vm, 2);
    }
    vm_pop_roots(vm, 1);
}

/* ------------------------------------------------------- module functions */

static NDArray *new_array(VM *vm, NDType dt, int ndim, const int64_t *shape, bool fortran, bool descriptor);

/* cuda.to_device(obj, stream=0, copy=True, to=None) */
Value cuda_f_to_device(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value to = kw_take(vm, kwargs, "to");
    Value stream = kw_take(vm, kwargs, "stream");
    Value copy = kw_take(vm, kwargs, "copy");
    (void)stream, (void)copy;
    kw_done(vm, "to_device", kwargs);
    arg_count(vm, "to_device", argc, 1, 3);
    if (argc >= 3) to = argv[2];
    if (!IS_EMPTY(to) && !IS_NONE(to)) { /* to.copy_to_device(obj), as Numba does */
        if (!cuda_is_devarray(vm, to))
            vm_raise_kind(vm, TypeError, "to_device(): 'to' must be a device array, not '%s'", vm_type_name(vm, to));
        copy_into(vm, to, argv[0]);
        return to;
    }
    NDArray *src = host_data(vm, argv[0]);
    if (!src) src = nd_from_value(vm, argv[0], -1);
    vm_push_root(vm, OBJ_VAL(src));
    GpuCuda *gpu = cuda_gpu(vm);
    /* a contiguous host array uploads straight from its own buffer (an
       extra host copy made to_device 3x slower than Numba's on an H200) */
    if (gpu && (src->flags & (ND_C_CONTIGUOUS | ND_F_CONTIGUOUS))) {
        Value d = gpu_array_new(vm, gpu, src, true);
        vm_pop_roots(vm, 1);
        return d;
    }
    if (gpu) {
        NDArray *c = nd_copy(vm, src);
        vm_pop_roots(vm, 1);
        return gpu_array_new(vm, gpu, c, true);
    }
    /* an F-contiguous array stays F-contiguous, as in Numba (and on a GPU above) */
    bool fortran = !(src->flags & ND_C_CONTIGUOUS) && (src->flags & ND_F_CONTIGUOUS);
    NDArray *c = cpu_fenced(vm, new_array(vm, src->dtype, src->ndim, src->shape, fortran, true), false);
    vm_push_root(vm, OBJ_VAL(c));
    cuda_copy_strided(c, src);
    Value r = cuda_devarray_wrap(vm, c);
    vm_pop_roots(vm, 2);
    return r;
}

/* A shape argument: an int or a tuple/list of ints. Returns ndim. */
static int parse_shape(VM *vm, const char *fname, Value v, int64_t *shape) {
    if (IS_INTLIKE(v)) {
        shape[0] = AS_INTLIKE(v);
        if (shape[0] < 0) vm_raise_kind(vm, ValueError, "%s(): negative dimensions are not allowed", fname);
        return 1;
    }
    if (!IS_TUPLE(vm, v) && !IS_LIST(vm, v))
        vm_raise_kind(vm, TypeError, "%s(): shape must be an int or a tuple of ints, not '%s'", fname,
                      vm_type_name(vm, v));
    int64_t n = IS_TUPLE(vm, v) ? AS_TUPLE(v)->len : AS_LIST(v)->len;
    Value *items = IS_TUPLE(vm, v) ? AS_TUPLE(v)->items : AS_LIST(v)->items;
    if (n > ND_MAXDIM) vm_raise_kind(vm, ValueError, "%s(): too many dimensions (%lld)", fname, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        shape[i] = arg_int(vm, fname, items[i]);
        if (shape[i] < 0) vm_raise_kind(vm, ValueError, "%s(): negative dimensions are not allowed", fname);
    }
    return (int)n;
}

/* Makes a zeroed array of the shape in C or Fortran order; on a GPU
** (descriptor) only its descriptor, with no host buffer. */
static NDArray *new_array(VM *vm, NDType dt, int ndim, const int64_t *shape, bool fortran, bool descriptor) {
    if (descriptor) { /* nd_new checks this for host buffers */
        int64_t bytes = (int64_t)nd_itemsize(dt);
        for (int i = 0; i < ndim; i++)
            if (shape[i] && bytes > INT64_MAX / shape[i])
                vm_raise_kind(vm, ValueError, "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
            else bytes *= shape[i];
    }
    NDArray *a = descriptor ? nd_wrap(vm, dt, NULL, ndim, shape, NULL, NONE_VAL) : nd_new(vm, dt, ndim, shape);
    if (fortran && ndim > 1) {
        int64_t s = (int64_t)nd_itemsize(dt);
        for (int i = 0; i < ndim; i++) {
            a->strides[i] = s;
            s *= shape[i] ? shape[i] : 1;
        }
        nd_update_flags(a);
    }
    return a;
}

/* The (shape, dtype, order) arguments shared by device_array and pinned_array. */
static NDArray *array_from_args(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, bool descriptor) {
    Value dtype = kw_take(vm, kwargs, "dtype");
    Value order = kw_take(vm, kwargs, "order");
    Value strides = kw_take(vm, kwargs, "strides");
    (void)kw_take(vm, kwargs, "stream");
    (void)kw_take(vm, kwargs, "portable");
    (void)kw_take(vm, kwargs, "wc");
    kw_done(vm, fname, kwargs);
    arg_count(vm, fname, argc, 1, 3);
    if (argc >= 2) dtype = argv[1];
    if (argc >= 3) order = argv[2];
    if (!IS_EMPTY(strides) && !IS_NONE(strides))
        vm_raise_kind(vm, NotImplementedError, "%s(): explicit strides are not supported", fname);
    int64_t shape[ND_MAXDIM];
    int ndim = parse_shape(vm, fname, argv[0], shape);
    NDType dt = IS_EMPTY(dtype) || IS_NONE(dtype) ? ND_FLOAT64 : nd_dtype_from_value(vm, dtype);
    bool fortran = false;
    if (!IS_EMPTY(order) && !IS_NONE(order)) {
        Str *o = arg_str(vm, fname, order);
        if (strcmp(o->chars, "F") == 0) fortran = true;
        else if (strcmp(o->chars, "C") != 0)
            vm_raise_kind(vm, ValueError, "%s(): order must be 'C' or 'F', not '%s'", fname, o->chars);
    }
    return new_array(vm, dt, ndim, shape, fortran, descriptor);
}

/* cuda.device_array(shape, dtype=np.float64, strides=None, order='C', stream=0) */
Value cuda_f_device_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    GpuCuda *gpu = cuda_gpu(vm);
    NDArray *a = array_from_args(vm, "device_array", argc, argv, kwargs, true);
    if (gpu) return gpu_array_new(vm, gpu, a, false);
    return cuda_devarray_wrap(vm, cpu_fenced(vm, a, true));
}

/* GPU memory a host array lives in: page-locked (pinned, mapped) or managed. */
typedef enum HostKind { HOST_PINNED, HOST_MAPPED, HOST_MANAGED } HostKind;
typedef struct HostBuf {
    Obj obj;
    HostKind kind;
    void *p;
    CUdeviceptr managed;
    uint32_t gen;
} HostBuf;

static void hostbuf_finalize(VM *vm, Obj *o) {
    HostBuf *b = (HostBuf *)o;
    if (!vm->cuda || !vm->cuda->gpu || b->gen != vm->cuda->gen) return;
    if (b->kind == HOST_MANAGED) gpu_cuda_free(vm->cuda->gpu, b->managed, NULL, 0);
    else if (b->p) gpu_cuda_host_free(vm->cuda->gpu, b->p, NULL, 0);
    b->p = NULL;
    b->managed = 0;
}

/* pinned_array / mapped_array / managed_array: on a GPU the array's memory
** comes from the driver (cuMemHostAlloc / cuMemAllocManaged); on the CPU
** device they are ordinary host arrays. Kernels receive them like any host
** array (copied in and out). */
static Value host_array(VM *vm, const char *fname, HostKind kind, int argc, Value *argv, Dict *kwargs) {
    NDArray *a = array_from_args(vm, fname, argc, argv, kwargs, false);
    GpuCuda *gpu = cuda_gpu(vm);
    if (!gpu || a->size == 0) return OBJ_VAL(a);
    vm_push_root(vm, OBJ_VAL(a));
    HostBuf *b = gc_alloc_obj(vm, vm->cuda->t_hostbuf, sizeof(HostBuf));
    vm_push_root(vm, OBJ_VAL(b));
    b->kind = kind;
    b->gen = vm->cuda->gen;
    size_t bytes = (size_t)a->size * nd_itemsize(a->dtype);
    char err[GPU_CUDA_ERRSIZE];
    int status = kind == HOST_MANAGED ? gpu_cuda_managed_alloc(gpu, bytes, &b->managed, err, sizeof err)
                                      : gpu_cuda_host_alloc(gpu, bytes, kind == HOST_MAPPED, &b->p, err, sizeof err);
    if (status) cuda_raise_status(vm, status, err);
    if (kind == HOST_MANAGED) b->p = (void *)(uintptr_t)b->managed;
    memset(b->p, 0, bytes);
    NDArray *w = nd_wrap(vm, a->dtype, b->p, a->ndim, a->shape, a->strides, OBJ_VAL(b));
    vm_pop_roots(vm, 2);
    return OBJ_VAL(w);
}

Value cuda_f_pinned_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return host_array(vm, "pinned_array", HOST_PINNED, argc, argv, kwargs);
}

Value cuda_f_mapped_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return host_array(vm, "mapped_array", HOST_MAPPED, argc, argv, kwargs);
}

Value cuda_f_managed_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return host_array(vm, "managed_array", HOST_MANAGED, argc, argv, kwargs);
}

/* cuda.device_array_like(ary, stream=0) */
Value cuda_f_device_array_like(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "device_array_like", kwargs);
    arg_count(vm, "device_array_like", argc, 1, 2);
    NDArray *src = cuda_array_of(vm, argv[0]);
    if (!src)
        vm_raise_kind(vm, TypeError, "device_array_like() needs an array, not '%s'", vm_type_name(vm, argv[0]));
    bool fortran = !(src->flags & ND_C_CONTIGUOUS) && (src->flags & ND_F_CONTIGUOUS);
    GpuCuda *gpu = cuda_gpu(vm);
    NDArray *a = new_array(vm, src->dtype, src->ndim, src->shape, fortran, true);
    if (gpu) return gpu_array_new(vm, gpu, a, false);
    return cuda_devarray_wrap(vm, cpu_fenced(vm, a, true));
}

/* --------------------------------------------------------- DeviceNDArray */

static void dev_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((DevArray *)o)->host);
    gc_mark_value(vm, ((DevArray *)o)->owner);
    gc_mark_value(vm, ((DevArray *)o)->stream);
}

static Value dev_repr(VM *vm, Value self) {
    return STR_VAL(str_printf(vm, "<numba.cuda.cudadrv.devicearray.DeviceNDArray object at %p>", (void *)AS_OBJ(self)));
}

static Value int_tuple(VM *vm, int n, const int64_t *v) {
    Tuple *t = tuple_new(vm, n);
    for (int i = 0; i < n; i++) t->items[i] = INT_VAL(v[i]);
    return OBJ_VAL(t);
}

/* ------------------------------------------- __cuda_array_interface__ */

/* numpy's dtype.str: "<f4", "|u1", "|b1". */
static void typestr_of(NDType dt, char out[8]) {
    size_t isz = nd_itemsize(dt);
    char kind = dt == ND_BOOL ? 'b' : nd_is_float(dt) ? 'f' : nd_is_signed(dt) ? 'i' : 'u';
    snprintf(out, 8, "%c%c%zu", isz == 1 ? '|' : '<', kind, isz);
}

/* The dtype a typestr names ("<f4", "|b1", "=i8"); raises for the types
** gpy has no arrays of (complex, structured, big-endian). */
static NDType typestr_parse(VM *vm, Value v) {
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "__cuda_array_interface__: typestr must be a str, not '%s'", vm_type_name(vm, v));
    const char *t = AS_STR(v)->chars;
    static const struct { const char *code; NDType dt; } codes[] = {
        {"b1", ND_BOOL},  {"i1", ND_INT8},  {"i2", ND_INT16},  {"i4", ND_INT32},   {"i8", ND_INT64},   {"u1", ND_UINT8},
        {"u2", ND_UINT16}, {"u4", ND_UINT32}, {"u8", ND_UINT64}, {"f2", ND_FLOAT16}, {"f4", ND_FLOAT32}, {"f8", ND_FLOAT64},
    };
    if (t[0] == '<' || t[0] == '|' || t[0] == '=' || t[0] == '>')
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
            if (strcmp(t + 1, codes[i].code) == 0 && (t[0] != '>' || nd_itemsize(codes[i].dt) == 1)) return codes[i].dt;
    vm_raise_kind(vm, TypeError, "__cuda_array_interface__: data type '%s' is not supported by gpy arrays", t);
}

/* d[key] = v with v kept alive while the key is interned. */
static void set_rooted(VM *vm, Dict *d, const char *key, Value v) {
    vm_push_root(vm, v);
    dict_set_cstr(vm, d, key, v);
    vm_pop_roots(vm, 1);
}

/* d.__cuda_array_interface__ (version 3): shape, strides (None when
** C-contiguous), data (pointer, read-only), typestr, descr, stream, version.
** The pointer is the device address on a GPU, host memory on the CPU device. */

static Value interface_of(VM *vm, Value self) {
    NDArray *a = dev_host(self);
    uintptr_t ptr = as_dev(self)->dptr ? (uintptr_t)as_dev(self)->dptr : (uintptr_t)a->data;
    char ts[8];
    typestr_of(a->dtype, ts);
    Dict *d = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(d));
    set_rooted(vm, d, "shape", int_tuple(vm, a->ndim, a->shape));
    set_rooted(vm, d, "strides", (a->flags & ND_C_CONTIGUOUS) ? NONE_VAL : int_tuple(vm, a->ndim, a->strides));
    Value data[2] = {INT_VAL((int64_t)ptr), BOOL_VAL(!(a->flags & ND_WRITEABLE))};
    set_rooted(vm, d, "data", OBJ_VAL(tuple_from_array(vm, 2, data)));
    Value field[2] = {STR_VAL(str_cstr(vm, "")), NONE_VAL};
    vm_push_root(vm, field[0]);
    field[1] = STR_VAL(str_cstr(vm, ts));
    set_rooted(vm, d, "typestr", field[1]);
    /* a bound stream's handle (d.bind(s)), as Numba gives it; None for the default */
    Value bound = as_dev(self)->stream;
    int64_t handle = IS_EMPTY(bound) || IS_INTLIKE(bound) ? 0 : (int64_t)(uintptr_t)cuda_stream_of(vm, bound);
    set_rooted(vm, d, "stream", handle ? INT_VAL(handle) : NONE_VAL);
    set_rooted(vm, d, "version", INT_VAL(3));
    vm_push_root(vm, field[1]);
    Tuple *f = tuple_from_array(vm, 2, field);
    vm_push_root(vm, OBJ_VAL(f));
    List *descr = list_new(vm, 1);
    vm_push_root(vm, OBJ_VAL(descr));
    list_append(vm, descr, OBJ_VAL(f));
    dict_set_cstr(vm, d, "descr", OBJ_VAL(descr));
    vm_pop_roots(vm, 5);
    return OBJ_VAL(d);
}

/* The bytes [lo, hi) around a's data pointer that its elements cover;
** ValueError when strides (from an interface dict) overflow. */
static void extent(VM *vm, const NDArray *a, int64_t *lo, int64_t *hi) {
    *lo = 0;
    *hi = a->size ? (int64_t)nd_itemsize(a->dtype) : 0;
    for (int i = 0; a->size && i < a->ndim; i++) {
        int64_t span;
        if (__builtin_mul_overflow(a->shape[i] - 1, a->strides[i], &span) ||
            __builtin_add_overflow(span < 0 ? *lo : *hi, span, span < 0 ? lo : hi))
            vm_raise_kind(vm, ValueError, "the strides of a device array reach outside the address space");
    }
}

Value cuda_devarray_external(VM *vm, NDType dt, uintptr_t ptr, int ndim, const int64_t *shape,
                             const int64_t *strides, bool readonly, Value keep) {
    GpuCuda *gpu = cuda_gpu(vm);
    NDArray *h = nd_wrap(vm, dt, (void *)ptr, ndim, shape, strides, keep);
    if (readonly) h->flags &= ~ND_WRITEABLE;
    if (!ptr && h->size)
        vm_raise_kind(vm, ValueError, "a null pointer cannot hold an array of %lld elements", (long long)h->size);
    int64_t lo, hi;
    extent(vm, h, &lo, &hi);
    if (!gpu) return cuda_devarray_wrap(vm, h);
    /* an owner whose "allocation" is the span [lo, hi) the elements cover,
    ** so that views and host round trips stay inside it */
    vm_push_root(vm, OBJ_VAL(h));
    DevArray *d = gc_alloc_obj(vm, vm->cuda->t_devarray, sizeof(DevArray));
    d->host = OBJ_VAL(h);
    d->owner = NONE_VAL;
    d->dptr = (CUdeviceptr)ptr;
    d->base = (CUdeviceptr)ptr + (CUdeviceptr)lo;
    d->bytes = (size_t)(hi - lo);
    d->gen = vm->cuda->gen;
    d->borrowed = true;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(d);
}

/* A shape or strides (an int or a tuple of ints) into out; returns how many. */
static int interface_dims(VM *vm, Value v, const char *what, int64_t *out) {
    if (IS_INTLIKE(v)) {
        out[0] = AS_INTLIKE(v);
        return 1;
    }
    if (!IS_TUPLE(vm, v) && !IS_LIST(vm, v))
        vm_raise_kind(vm, TypeError, "__cuda_array_interface__: %s must be a tuple of ints, not '%s'", what,
                      vm_type_name(vm, v));
    int64_t n = IS_TUPLE(vm, v) ? AS_TUPLE(v)->len : AS_LIST(v)->len;
    Value *items = IS_TUPLE(vm, v) ? AS_TUPLE(v)->items : AS_LIST(v)->items;
    if (n > ND_MAXDIM)
        vm_raise_kind(vm, ValueError, "maximum supported dimension for an ndarray is currently %d, found %lld",
                      ND_MAXDIM, (long long)n);
    for (int64_t i = 0; i < n; i++) out[i] = vm_to_index(vm, items[i]);
    return (int)n;
}

/* A required key of the interface dict (KeyError as desc['shape'] raises). */
static Value interface_key(VM *vm, Dict *desc, const char *key) {
    Value v = dict_get_cstr(vm, desc, key);
    if (IS_EMPTY(v)) vm_raise_kind(vm, KeyError, "%s", key);
    return v;
}

/* from_cuda_array_interface(desc, owner, sync): the device array viewing
** the memory desc describes, owner kept alive. */
static Value from_interface(VM *vm, Value desc, Value owner, bool sync) {
    if (!IS_DICT(vm, desc))
        vm_raise_kind(vm, TypeError, "__cuda_array_interface__ must be a dict, not '%s'", vm_type_name(vm, desc));
    Dict *d = AS_DICT(desc);
    Value version = dict_get_cstr(vm, d, "version");
    if (!IS_INTLIKE(version))
        vm_raise_kind(vm, TypeError, "'<=' not supported between instances of 'int' and '%s'",
                      IS_EMPTY(version) ? "NoneType" : vm_type_name(vm, version));
    Value mask = dict_get_cstr(vm, d, "mask");
    if (AS_INTLIKE(version) >= 1 && !IS_EMPTY(mask) && !IS_NONE(mask))
        vm_raise_kind(vm, NotImplementedError, "Masked arrays are not supported");
    int64_t shape[ND_MAXDIM], strides[ND_MAXDIM];
    int ndim = interface_dims(vm, interface_key(vm, d, "shape"), "shape", shape);
    Value sv = dict_get_cstr(vm, d, "strides");
    bool has_strides = !IS_EMPTY(sv) && !IS_NONE(sv);
    if (has_strides && interface_dims(vm, sv, "strides", strides) != ndim)
        vm_raise_kind(vm, ValueError, "__cuda_array_interface__: strides and shape have different lengths");
    NDType dt = typestr_parse(vm, interface_key(vm, d, "typestr"));
    Value data = interface_key(vm, d, "data");
    if (!IS_TUPLE(vm, data) || AS_TUPLE(data)->len != 2 || !IS_INTLIKE(AS_TUPLE(data)->items[0]))
        vm_raise_kind(vm, TypeError, "__cuda_array_interface__: data must be a tuple (pointer, read_only)");
    uintptr_t ptr = (uintptr_t)AS_INTLIKE(AS_TUPLE(data)->items[0]);
    bool readonly = vm_truthy(vm, AS_TUPLE(data)->items[1]);
    Value stream = dict_get_cstr(vm, d, "stream");
    if (!IS_EMPTY(stream) && !IS_NONE(stream)) {
        if (!IS_INTLIKE(stream) || AS_INTLIKE(stream) == 0)
            vm_raise_kind(vm, ValueError, "__cuda_array_interface__: stream must be None or a nonzero int");
        GpuCuda *gpu = cuda_gpu(vm);
        char err[GPU_CUDA_ERRSIZE];
        /* the producer's work on that stream finishes before the consumer's (the spec's synchronization) */
        if (gpu && sync)
            check(vm, gpu_cuda_stream_synchronize(gpu, (CUstream)(uintptr_t)AS_INTLIKE(stream), err, sizeof err), err);
    }
    return cuda_devarray_external(vm, dt, ptr, ndim, shape, has_strides ? strides : NULL, readonly, owner);
}

Value cuda_interface_array(VM *vm, Value v) {
    Value desc = vm_getattr_opt(vm, v, cstr_name(vm, "__cuda_array_interface__"));
    if (IS_EMPTY(desc)) return EMPTY_VAL;
    vm_push_root(vm, desc);
    Value r = from_interface(vm, desc, v, true);
    vm_pop_roots(vm, 1);
    return r;
}

/* cuda.from_cuda_array_interface(desc, owner=None, sync=True) */
Value cuda_f_from_cuda_array_interface(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value owner = kw_take(vm, kwargs, "owner");
    Value sync = kw_take(vm, kwargs, "sync");
    Value desc = kw_take(vm, kwargs, "desc");
    kw_done(vm, "from_cuda_array_interface", kwargs);
    if (argc > 3)
        vm_raise_kind(vm, TypeError, "from_cuda_array_interface() takes from 1 to 3 positional arguments but %d were given", argc);
    if (argc >= 1) desc = argv[0];
    if (argc >= 2) owner = argv[1];
    if (argc >= 3) sync = argv[2];
    if (IS_EMPTY(desc))
        vm_raise_kind(vm, TypeError, "from_cuda_array_interface() missing 1 required positional argument: 'desc'");
    return from_interface(vm, desc, IS_EMPTY(owner) ? NONE_VAL : owner, IS_EMPTY(sync) || vm_truthy(vm, sync));
}

/* cuda.as_cuda_array(obj, sync=True) */
Value cuda_f_as_cuda_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value sync = kw_take(vm, kwargs, "sync");
    kw_done(vm, "as_cuda_array", kwargs);
    arg_count(vm, "as_cuda_array", argc, 1, 2);
    if (argc >= 2) sync = argv[1];
    Value desc = vm_getattr_opt(vm, argv[0], cstr_name(vm, "__cuda_array_interface__"));
    if (IS_EMPTY(desc)) vm_raise_kind(vm, TypeError, "*obj* doesn't implement the cuda array interface.");
    vm_push_root(vm, desc);
    Value r = from_interface(vm, desc, argv[0], IS_EMPTY(sync) || vm_truthy(vm, sync));
    vm_pop_roots(vm, 1);
    return r;
}

/* cuda.is_cuda_array(obj): whether obj has __cuda_array_interface__. */
Value cuda_f_is_cuda_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "is_cuda_array", kwargs);
    arg_count(vm, "is_cuda_array", argc, 1, 1);
    return BOOL_VAL(!IS_EMPTY(vm_getattr_opt(vm, argv[0], cstr_name(vm, "__cuda_array_interface__"))));
}

static Value m_transpose(VM *vm, int argc, Value *argv, Dict *kwargs);

static Value dev_getattr(VM *vm, Value self, Str *name) {
    NDArray *a = dev_host(self);
    const char *n = name->chars;
    if (strcmp(n, "shape") == 0) return int_tuple(vm, a->ndim, a->shape);
    if (strcmp(n, "strides") == 0) return int_tuple(vm, a->ndim, a->strides);
    if (strcmp(n, "size") == 0) return INT_VAL(a->size);
    if (strcmp(n, "ndim") == 0) return INT_VAL(a->ndim);
    if (strcmp(n, "dtype") == 0) return nd_dtype_object(vm, a->dtype);
    if (strcmp(n, "nbytes") == 0 || strcmp(n, "alloc_size") == 0)
        return INT_VAL(a->size * (int64_t)nd_itemsize(a->dtype));
    if (strcmp(n, "itemsize") == 0) return INT_VAL((int64_t)nd_itemsize(a->dtype));
    if (strcmp(n, "__cuda_array_interface__") == 0) return interface_of(vm, self);
    if (strcmp(n, "T") == 0) return m_transpose(vm, 1, &self, NULL);
    if (strcmp(n, "stream") == 0) return IS_EMPTY(as_dev(self)->stream) ? INT_VAL(0) : as_dev(self)->stream;
    if (strcmp(n, "flags") == 0) { /* Numba's: a dict of the two contiguity flags */
        Dict *d = dict_new(vm);
        vm_push_root(vm, OBJ_VAL(d));
        dict_set_cstr(vm, d, "C_CONTIGUOUS", BOOL_VAL(a->flags & ND_C_CONTIGUOUS));
        dict_set_cstr(vm, d, "F_CONTIGUOUS", BOOL_VAL(a->flags & ND_F_CONTIGUOUS));
        vm_pop_roots(vm, 1);
        return OBJ_VAL(d);
    }
    return generic_getattr(vm, self, name);
}

/* When key names one element of h (an int per dimension): its byte offset
** from h's data, bounds-checked as numpy does. */
static bool element_offset(VM *vm, NDArray *h, Value key, int64_t *off) {
    const Value *items = &key;
    int n = 1;
    if (IS_TUPLE(vm, key)) {
        items = AS_TUPLE(key)->items;
        n = (int)AS_TUPLE(key)->len;
    }
    if (n != h->ndim || n == 0) return false;
    for (int i = 0; i < n; i++)
        if (!IS_INT(items[i])) return false;
    *off = 0;
    for (int i = 0; i < n; i++) {
        int64_t k = AS_INT(items[i]);
        if (k < -h->shape[i] || k >= h->shape[i])
            vm_raise_kind(vm, IndexError, "index %lld is out of bounds for axis %d with size %lld", (long long)k, i,
                          (long long)h->shape[i]);
        if (k < 0) k += h->shape[i];
        *off += k * h->strides[i];
    }
    return true;
}

/* True when key is basic indexing (ints, slices, None, ...): the result
** is a view computed from the descriptor alone, never reading its data. */
static bool basic_key(VM *vm, Value key) {
    const Value *items = &key;
    int64_t n = 1;
    if (IS_TUPLE(vm, key)) {
        items = AS_TUPLE(key)->items;
        n = AS_TUPLE(key)->len;
    }
    for (int64_t i = 0; i < n; i++) {
        Value k = items[i];
        if (IS_INT(k) || IS_NONE(k)) continue;
        if (IS_OBJ(k) && (AS_OBJ(k)->type == vm->t_slice || AS_OBJ(k)->type == vm->t_ellipsis)) continue;
        return false;
    }
    return true;
}

/* GPU d[key]: one element is copied alone; basic indexing makes a device
** view; fancy indexing copies (through the host) into a new device array. */
static Value gpu_getitem(VM *vm, Value self, Value key) {
    NDArray *h = dev_host(self);
    int64_t off;
    if (element_offset(vm, h, key, &off)) {
        int64_t one = 1;
        NDArray *tmp = nd_new(vm, h->dtype, 1, &one);
        vm_push_root(vm, OBJ_VAL(tmp));
        char err[GPU_CUDA_ERRSIZE];
        GpuCuda *c = live_gpu(vm, as_dev(self));
        check(vm, gpu_cuda_memcpy_dtoh(c, tmp->data, as_dev(self)->dptr + (CUdeviceptr)off, nd_itemsize(h->dtype), err,
                                       sizeof err), err);
        Value r = vm_getitem(vm, OBJ_VAL(tmp), INT_VAL(0));
        vm_pop_roots(vm, 1);
        return r;
    }
    if (basic_key(vm, key)) {
        Value r = vm_getitem(vm, as_dev(self)->host, key);
        if (nd_check(vm, r)) return wrap_derived(vm, self, (NDArray *)AS_OBJ(r));
        return r;
    }
    NDArray *all = to_host(vm, self);
    vm_push_root(vm, OBJ_VAL(all));
    Value r = vm_getitem(vm, OBJ_VAL(all), key);
    vm_push_root(vm, r);
    if (nd_check(vm, r)) {
        NDArray *ra = (NDArray *)AS_OBJ(r);
        if (!(ra->flags & ND_C_CONTIGUOUS) || ra->nbytes_owned == 0) ra = nd_copy(vm, ra);
        r = gpu_array_new(vm, vm->cuda->gpu, ra, true);
    }
    vm_pop_roots(vm, 2);
    return r;
}

static Value dev_getitem(VM *vm, Value self, Value key) {
    if (as_dev(self)->dptr) return gpu_getitem(vm, self, key);
    Value r = vm_getitem(vm, as_dev(self)->host, key);
    if (nd_check(vm, r)) return wrap_derived(vm, self, (NDArray *)AS_OBJ(r));
    return r;
}

/* GPU d[key] = value: one element is written alone; anything else is a
** read-modify-write of the allocation through the host. */
static void gpu_setitem(VM *vm, Value self, Value key, Value value) {
    NDArray *h = dev_host(self);
    if (cuda_is_devarray(vm, value)) value = OBJ_VAL(host_data(vm, value));
    vm_push_root(vm, value);
    int64_t off;
    GpuCuda *c = live_gpu(vm, as_dev(self));
    char err[GPU_CUDA_ERRSIZE];
    if (element_offset(vm, h, key, &off)) {
        int64_t one = 1;
        NDArray *tmp = nd_new(vm, h->dtype, 1, &one);
        vm_push_root(vm, OBJ_VAL(tmp));
        vm_setitem(vm, OBJ_VAL(tmp), INT_VAL(0), value);
        check(vm, gpu_cuda_memcpy_htod(c, as_dev(self)->dptr + (CUdeviceptr)off, tmp->data, nd_itemsize(h->dtype), err,
                                       sizeof err), err);
        vm_pop_roots(vm, 2);
        return;
    }
    NDArray *view;
    NDArray *tmp = owner_on_host(vm, self, &view);
    vm_push_root(vm, OBJ_VAL(tmp));
    vm_push_root(vm, OBJ_VAL(view));
    vm_setitem(vm, OBJ_VAL(view), key, value);
    DevArray *o = owner_of(as_dev(self));
    check(vm, gpu_cuda_memcpy_htod(c, o->base, tmp->data, o->bytes, err, sizeof err), err);
    vm_pop_roots(vm, 3);
}

static void dev_setitem(VM *vm, Value self, Value key, Value value) {
    if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "device arrays do not support item deletion");
    if (!(dev_host(self)->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "assignment destination is read-only");
    if (as_dev(self)->dptr) {
        gpu_setitem(vm, self, key, value);
        return;
    }
    if (cuda_is_devarray(vm, value)) value = as_dev(value)->host;
    vm_setitem(vm, as_dev(self)->host, key, value);
}

static int64_t dev_len(VM *vm, Value self) {
    NDArray *a = dev_host(self);
    if (a->ndim == 0) vm_raise_kind(vm, TypeError, "len() of unsized object");
    return a->shape[0];
}

/* d.copy_to_host(ary=None, stream=0): a new host array, or fills ary. */
static Value m_copy_to_host(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value ary = kw_take(vm, kwargs, "ary");
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "copy_to_host", kwargs);
    arg_count(vm, "copy_to_host", argc, 1, 3);
    if (argc >= 2) ary = argv[1];
    NDArray *a = dev_host(argv[0]);
    if ((IS_EMPTY(ary) || IS_NONE(ary)) && !(a->flags & ND_C_CONTIGUOUS) && (a->flags & ND_F_CONTIGUOUS)) {
        /* a Fortran-ordered array comes back Fortran-ordered, as in Numba */
        NDArray *r = new_array(vm, a->dtype, a->ndim, a->shape, true, false);
        vm_push_root(vm, OBJ_VAL(r));
        if (as_dev(argv[0])->dptr && a->size) {
            char err[GPU_CUDA_ERRSIZE];
            check(vm, gpu_cuda_memcpy_dtoh(live_gpu(vm, as_dev(argv[0])), r->data, as_dev(argv[0])->dptr,
                                           (size_t)a->size * nd_itemsize(a->dtype), err, sizeof err), err);
        } else {
            cuda_copy_strided(r, a);
        }
        vm_pop_roots(vm, 1);
        return OBJ_VAL(r);
    }
    if (as_dev(argv[0])->dptr) {
        if (IS_EMPTY(ary) || IS_NONE(ary)) return OBJ_VAL(to_host(vm, argv[0]));
        if (!nd_check(vm, ary))
            vm_raise_kind(vm, TypeError, "copy_to_host(): ary must be a numpy array, not '%s'", vm_type_name(vm, ary));
        check_compatible(vm, a, (NDArray *)AS_OBJ(ary), true);
        NDArray *dst = shaped_like(vm, (NDArray *)AS_OBJ(ary), a);
        vm_push_root(vm, OBJ_VAL(dst));
        if ((dst->flags & ND_C_CONTIGUOUS) && (a->flags & ND_C_CONTIGUOUS) && a->size) {
            char err[GPU_CUDA_ERRSIZE];
            check(vm, gpu_cuda_memcpy_dtoh(live_gpu(vm, as_dev(argv[0])), dst->data, as_dev(argv[0])->dptr,
                                           (size_t)a->size * nd_itemsize(a->dtype), err, sizeof err), err);
        } else {
            cuda_copy_strided(dst, to_host(vm, argv[0]));
        }
        vm_pop_roots(vm, 1);
        return ary;
    }
    if (IS_EMPTY(ary) || IS_NONE(ary)) return OBJ_VAL(nd_copy(vm, a));
    if (!nd_check(vm, ary))
        vm_raise_kind(vm, TypeError, "copy_to_host(): ary must be a numpy array, not '%s'", vm_type_name(vm, ary));
    check_compatible(vm, a, (NDArray *)AS_OBJ(ary), true);
    cuda_copy_strided(shaped_like(vm, (NDArray *)AS_OBJ(ary), a), a);
    return ary;
}

/* d.copy_to_device(ary, stream=0) */
static Value m_copy_to_device(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "copy_to_device", kwargs);
    arg_count(vm, "copy_to_device", argc, 2, 3);
    copy_into(vm, argv[0], argv[1]);
    return NONE_VAL;
}

static Value m_is_c_contiguous(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "is_c_contiguous", argc, 1, 1);
    kw_none(vm, "is_c_contiguous", kwargs);
    return BOOL_VAL(dev_host(argv[0])->flags & ND_C_CONTIGUOUS);
}

static Value m_is_f_contiguous(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, "is_f_contiguous", argc, 1, 1);
    kw_none(vm, "is_f_contiguous", kwargs);
    return BOOL_VAL(dev_host(argv[0])->flags & ND_F_CONTIGUOUS);
}

/* ------------------------------------------ views and Numba's methods */

/* A view of self over the same memory, described by dt, shape and strides
** starting offset bytes into self's data (a device view on a GPU). */
static Value dev_view(VM *vm, Value self, NDType dt, int64_t offset, int ndim, const int64_t *shape,
                      const int64_t *strides) {
    NDArray *h = dev_host(self);
    NDArray *r = nd_wrap(vm, dt, h->data + offset, ndim, shape, strides, as_dev(self)->host);
    if (!(h->flags & ND_WRITEABLE)) r->flags &= ~ND_WRITEABLE;
    vm_push_root(vm, OBJ_VAL(r));
    Value v = wrap_derived(vm, self, r);
    as_dev(v)->stream = as_dev(self)->stream;
    vm_pop_roots(vm, 1);
    return v;
}

/* Strides of a contiguous array of shape in C (fortran false) or F order. */
static void contiguous_strides(int ndim, const int64_t *shape, size_t itemsize, bool fortran, int64_t *out) {
    int64_t s = (int64_t)itemsize;
    for (int k = 0; k < ndim; k++) {
        int i = fortran ? k : ndim - 1 - k;
        out[i] = s;
        s *= shape[i] ? shape[i] : 1;
    }
}

/* An order argument: 'C', 'F' or 'A' (A: F when the array is F-contiguous
** and not C-contiguous... as Numba's dummy array decides it). */
static char order_arg(VM *vm, Value v) {
    if (IS_EMPTY(v) || IS_NONE(v)) return 'C';
    Str *o = arg_str(vm, "order", v);
    if (o->len != 1 || !strchr("CFA", o->chars[0])) vm_raise_kind(vm, ValueError, "order not C|F|A");
    return o->chars[0];
}

/* d.view(dtype): the same memory as another dtype (Numba's rules: a
** different itemsize needs a C-contiguous array and rescales the last axis). */
static Value m_view(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "view", kwargs);
    arg_count(vm, "view", argc, 2, 2);
    NDArray *h = dev_host(argv[0]);
    NDType dt = nd_dtype_from_value(vm, argv[1]);
    int64_t shape[ND_MAXDIM], strides[ND_MAXDIM];
    memcpy(shape, h->shape, sizeof(int64_t) * (size_t)h->ndim);
    memcpy(strides, h->strides, sizeof(int64_t) * (size_t)h->ndim);
    size_t from = nd_itemsize(h->dtype), to = nd_itemsize(dt);
    if (from != to) {
        if (!(h->flags & ND_C_CONTIGUOUS))
            vm_raise_kind(vm, ValueError, "To change to a dtype of a different size, the array must be C-contiguous");
        if (h->ndim == 0) vm_raise_kind(vm, IndexError, "list index out of range");
        int64_t bytes = shape[h->ndim - 1] * (int64_t)from;
        if (bytes % (int64_t)to)
            vm_raise_kind(vm, ValueError, "When changing to a larger dtype, its size must be a divisor of the total "
                                          "size in bytes of the last axis of the array.");
        shape[h->ndim - 1] = bytes / (int64_t)to;
        strides[h->ndim - 1] = (int64_t)to;
    }
    return dev_view(vm, argv[0], dt, 0, h->ndim, shape, strides);
}

/* The strides that give the non-contiguous array h the shape nshape[0..n)
** over the same memory, when such strides exist (numpy's no-copy reshape,
** which Numba uses too): the axes of h, size-1 ones left out, and the new
** axes fall into runs holding equal numbers of elements; each run of old
** axes must step through memory as one axis would, in the order asked
** (fortran: first axis fastest). False when the reshape needs a copy. */
static bool nocopy_strides(const NDArray *h, int n, const int64_t *nshape, bool fortran, int64_t *out) {
    int64_t os[ND_MAXDIM], ost[ND_MAXDIM];
    int on = 0;
    for (int i = 0; i < h->ndim; i++)
        if (h->shape[i] != 1) os[on] = h->shape[i], ost[on++] = h->strides[i];
    if (h->size == 0) return false;
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < n && oi < on) {
        int64_t np_ = nshape[ni], op = os[oi];
        while (np_ != op) {
            if (np_ < op) {
                if (nj >= n) return false;
                np_ *= nshape[nj++];
            } else {
                if (oj >= on) return false;
                op *= os[oj++];
            }
        }
        for (int k = oi; k < oj - 1; k++)
            if (fortran ? ost[k + 1] != os[k] * ost[k] : ost[k] != os[k + 1] * ost[k + 1]) return false;
        if (fortran) {
            out[ni] = ost[oi];
            for (int k = ni + 1; k < nj; k++) out[k] = out[k - 1] * nshape[k - 1];
        } else {
            out[nj - 1] = ost[oj - 1];
            for (int k = nj - 1; k > ni; k--) out[k - 1] = out[k] * nshape[k];
        }
        ni = nj++;
        oi = oj++;
    }
    /* trailing axes of length 1 */
    int64_t last = ni >= 1 ? out[ni - 1] : (int64_t)nd_itemsize(h->dtype);
    if (fortran && ni >= 1) last *= nshape[ni - 1];
    for (int k = ni; k < n; k++) out[k] = last;
    return true;
}

/* d.reshape(*shape, order='C'): a view, as Numba makes it: a contiguous
** array takes the new shape's C (or F) strides over the same memory; a
** strided one reshapes without a copy where numpy could, else raises. */
static Value m_reshape(VM *vm, int argc, Value *argv, Dict *kwargs) {
    char order = order_arg(vm, kw_take(vm, kwargs, "order"));
    if (kwargs && kwargs->count > 0) { /* Numba's dummy array words it so */
        List *keys = list_new(vm, 0);
        vm_push_root(vm, OBJ_VAL(keys));
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v)) list_append(vm, keys, k);
        vm_raise_kind(vm, TypeError, "unknown keyword arguments dict_keys(%s)", vm_repr(vm, OBJ_VAL(keys))->chars);
    }
    NDArray *h = dev_host(argv[0]);
    const Value *items = argv + 1;
    int64_t n = argc - 1;
    if (n == 1 && (IS_TUPLE(vm, argv[1]) || IS_LIST(vm, argv[1]))) {
        n = IS_TUPLE(vm, argv[1]) ? AS_TUPLE(argv[1])->len : AS_LIST(argv[1])->len;
        items = IS_TUPLE(vm, argv[1]) ? AS_TUPLE(argv[1])->items : AS_LIST(argv[1])->items;
    }
    if (n > ND_MAXDIM)
        vm_raise_kind(vm, ValueError, "maximum supported dimension for an ndarray is currently %d, found %lld",
                      ND_MAXDIM, (long long)n);
    int64_t shape[ND_MAXDIM], strides[ND_MAXDIM], known = 1, bytes = (int64_t)nd_itemsize(h->dtype);
    int unknown = -1;
    bool same = n == h->ndim;
    for (int i = 0; i < n; i++) {
        shape[i] = vm_to_index(vm, items[i]);
        same = same && shape[i] == h->shape[i];
        /* the strides must fit, even for a zero-sized shape (and then known cannot overflow) */
        if (shape[i] > 0 && __builtin_mul_overflow(bytes, shape[i], &bytes))
            vm_raise_kind(vm, ValueError, "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
        if (shape[i] >= 0) known *= shape[i];
        else if (unknown < 0) unknown = i;
        else vm_raise_kind(vm, ValueError, "can only specify one unknown dimension");
    }
    if (same) return dev_view(vm, argv[0], h->dtype, 0, h->ndim, h->shape, h->strides);
    if (unknown >= 0) {
        if (known == 0 || h->size % known) vm_raise_kind(vm, ValueError, "cannot infer valid shape for unknown dimension");
        shape[unknown] = h->size / known;
        known = h->size;
    }
    if (known != h->size) vm_raise_kind(vm, ValueError, "reshape changes the size of the array");
    bool c = h->flags & ND_C_CONTIGUOUS, f = h->flags & ND_F_CONTIGUOUS;
    if (order == 'A') order = f ? 'F' : 'C';
    if (c || f) contiguous_strides((int)n, shape, nd_itemsize(h->dtype), order == 'F', strides);
    else if (!nocopy_strides(h, (int)n, shape, order == 'F', strides))
        vm_raise_kind(vm, NotImplementedError, "reshape would require copy");
    return dev_view(vm, argv[0], h->dtype, 0, (int)n, shape, strides);
}

/* d.ravel(order='C', stream=0): a 1-d view of a contiguous array. */
static Value m_ravel(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value orderv = kw_take(vm, kwargs, "order");
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "ravel", kwargs);
    arg_count(vm, "ravel", argc, 1, 3);
    if (argc >= 2) orderv = argv[1];
    char order = order_arg(vm, orderv);
    NDArray *h = dev_host(argv[0]);
    bool c = h->flags & ND_C_CONTIGUOUS, f = h->flags & ND_F_CONTIGUOUS;
    if (!((order != 'F' && c) || (order != 'C' && f)))
        vm_raise_kind(vm, NotImplementedError, "ravel on non-contiguous array");
    int64_t size = h->size, stride = (int64_t)nd_itemsize(h->dtype);
    return dev_view(vm, argv[0], h->dtype, 0, 1, &size, &stride);
}

/* d.squeeze(axis=None, stream=0): a view without the axes of length 1. */
static Value m_squeeze(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value axis = kw_take(vm, kwargs, "axis");
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "squeeze", kwargs);
    arg_count(vm, "squeeze", argc, 1, 3);
    if (argc >= 2) axis = argv[1];
    NDArray *h = dev_host(argv[0]);
    bool drop[ND_MAXDIM] = {false};
    if (IS_EMPTY(axis) || IS_NONE(axis)) {
        for (int i = 0; i < h->ndim; i++) drop[i] = h->shape[i] == 1;
    } else {
        const Value *items = &axis;
        int64_t n = 1;
        if (IS_TUPLE(vm, axis)) items = AS_TUPLE(axis)->items, n = AS_TUPLE(axis)->len;
        for (int64_t k = 0; k < n; k++) {
            int64_t ax = vm_to_index(vm, items[k]);
            if (ax < -h->ndim || ax >= h->ndim) vm_raise_kind(vm, IndexError, "tuple index out of range");
            if (ax < 0) ax += h->ndim;
            if (h->shape[ax] != 1)
                vm_raise_kind(vm, ValueError, "cannot select an axis to squeeze out which has size not equal to one");
            drop[ax] = true;
        }
    }
    int64_t shape[ND_MAXDIM], strides[ND_MAXDIM];
    int nd = 0;
    for (int i = 0; i < h->ndim; i++)
        if (!drop[i]) shape[nd] = h->shape[i], strides[nd++] = h->strides[i];
    return dev_view(vm, argv[0], h->dtype, 0, nd, shape, strides);
}

/* d.split(section, stream=0): consecutive views of section elements (the
** last may be shorter) of a 1-d array with unit stride. */
static Value m_split(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "split", kwargs);
    arg_count(vm, "split", argc, 2, 3);
    NDArray *h = dev_host(argv[0]);
    int64_t section = arg_int(vm, "split", argv[1]);
    if (h->ndim != 1) vm_raise_kind(vm, ValueError, "only support 1d array");
    int64_t isz = (int64_t)nd_itemsize(h->dtype);
    if (h->strides[0] != isz) vm_raise_kind(vm, ValueError, "only support unit stride");
    if (section == 0) vm_raise_kind(vm, ZeroDivisionError, "float division by zero");
    List *l = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(l));
    for (int64_t begin = 0; section > 0 && begin < h->size; begin += section) { /* none when negative, as Numba */
        int64_t len = h->size - begin < section ? h->size - begin : section;
        list_append(vm, l, dev_view(vm, argv[0], h->dtype, begin * isz, 1, &len, &isz));
    }
    Value it = vm_iter(vm, OBJ_VAL(l)); /* Numba's is a generator */
    vm_pop_roots(vm, 1);
    return it;
}

/* d.transpose(axes=None), d.T: a new C-contiguous device array holding
** the transpose of a 2-d array (Numba copies with a transpose kernel);
** the identity permutation gives d itself. */
static Value m_transpose(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value axes = kw_take(vm, kwargs, "axes");
    kw_done(vm, "transpose", kwargs);
    arg_count(vm, "transpose", argc, 1, 2);
    if (argc >= 2) axes = argv[1];
    NDArray *h = dev_host(argv[0]);
    if (!IS_EMPTY(axes) && !IS_NONE(axes)) {
        if (!IS_TUPLE(vm, axes) && !IS_LIST(vm, axes))
            vm_raise_kind(vm, TypeError, "transpose(): axes must be a tuple or list, not '%s'", vm_type_name(vm, axes));
        int64_t n = IS_TUPLE(vm, axes) ? AS_TUPLE(axes)->len : AS_LIST(axes)->len;
        Value *items = IS_TUPLE(vm, axes) ? AS_TUPLE(axes)->items : AS_LIST(axes)->items;
        bool identity = n == h->ndim, seen[ND_MAXDIM] = {false}, valid = n == h->ndim;
        for (int64_t i = 0; i < n; i++) {
            int64_t a = vm_to_index(vm, items[i]);
            identity = identity && a == i;
            if (a < 0 || a >= h->ndim || seen[a]) valid = false;
            else seen[a] = true;
        }
        if (n > 0 && identity) return argv[0];
        if (h->ndim == 2 && !valid)
            vm_raise_kind(vm, ValueError, "invalid axes list %s", vm_repr(vm, IS_TUPLE(vm, axes) ? axes : OBJ_VAL(tuple_from_array(vm, (int)n, items)))->chars);
    }
    if (h->ndim != 2) vm_raise_kind(vm, NotImplementedError, "transposing a non-2D DeviceNDArray isn't supported");
    int64_t shape[2] = {h->shape[1], h->shape[0]}, strides[2] = {h->strides[1], h->strides[0]};
    GpuCuda *gpu = cuda_gpu(vm);
    if (gpu) {
        NDArray *all = to_host(vm, argv[0]);
        vm_push_root(vm, OBJ_VAL(all));
        int64_t tstrides[2] = {all->strides[1], all->strides[0]};
        NDArray *t = nd_wrap(vm, all->dtype, all->data, 2, shape, tstrides, OBJ_VAL(all));
        vm_push_root(vm, OBJ_VAL(t));
        NDArray *c = nd_copy(vm, t);
        vm_push_root(vm, OBJ_VAL(c));
        Value r = gpu_array_new(vm, gpu, c, true);
        vm_pop_roots(vm, 3);
        return r;
    }
    NDArray *view = nd_wrap(vm, h->dtype, h->data, 2, shape, strides, as_dev(argv[0])->host);
    vm_push_root(vm, OBJ_VAL(view));
    NDArray *c = cpu_fenced(vm, new_array(vm, h->dtype, 2, shape, false, true), false);
    vm_push_root(vm, OBJ_VAL(c));
    cuda_copy_strided(c, view);
    Value r = cuda_devarray_wrap(vm, c);
    vm_pop_roots(vm, 2);
    return r;
}

/* d.bind(stream=0): the same array with stream as its default stream. */
static Value m_bind(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value stream = kw_take(vm, kwargs, "stream");
    kw_done(vm, "bind", kwargs);
    arg_count(vm, "bind", argc, 1, 2);
    if (argc >= 2) stream = argv[1];
    if (IS_EMPTY(stream)) stream = INT_VAL(0);
    (void)cuda_stream_of(vm, stream); /* checks it */
    NDArray *h = dev_host(argv[0]);
    Value v = dev_view(vm, argv[0], h->dtype, 0, h->ndim, h->shape, h->strides);
    as_dev(v)->stream = stream;
    return v;
}

/* d.getitem(item, stream=0), d.setitem(key, value, stream=0): indexing
** with a stream (gpy's copies are synchronous). */
static Value m_getitem(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "getitem", kwargs);
    arg_count(vm, "getitem", argc, 2, 3);
    return dev_getitem(vm, argv[0], argv[1]);
}

static Value m_setitem(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kw_take(vm, kwargs, "stream");
    kw_done(vm, "setitem", kwargs);
    arg_count(vm, "setitem", argc, 3, 4);
    dev_setitem(vm, argv[0], argv[1], argv[2]);
    return NONE_VAL;
}

/* d.__array__(dtype=None, copy=None): np.array(d) / np.asarray(d) copy to the host, as in Numba. */
static Value m_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtype = kw_take(vm, kwargs, "dtype");
    Value copy = kw_take(vm, kwargs, "copy");
    kw_done(vm, "__array__", kwargs);
    arg_count(vm, "__array__", argc, 1, 3);
    if (argc >= 2) dtype = argv[1];
    if (argc >= 3) copy = argv[2];
    if (IS_BOOL(copy) && !AS_BOOL(copy))
        vm_raise_kind(vm, ValueError, "`copy=False` is not supported. A copy is always created.");
    Value host = m_copy_to_host(vm, 1, argv, NULL);
    if (IS_EMPTY(dtype) || IS_NONE(dtype)) return host;
    vm_push_root(vm, host);
    Value r = vm_call_method(vm, host, cstr_name(vm, "astype"), 1, &dtype);
    vm_pop_roots(vm, 1);
    return r;
}

/* IPC shares an allocation with another process: the CPU device's memory
** is the process's own, and gpy does not call cuIpc* on a GPU. */
static _Noreturn void no_ipc(VM *vm) {
    vm_raise_kind(vm, NotImplementedError, "CUDA IPC is not supported by gpy (%s)",
                  cuda_gpu(vm) ? "gpy does not use the driver's cuIpc* calls"
                               : "the CPU device's memory cannot be shared with another process");
}

static Value m_get_ipc_handle(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_count(vm, "get_ipc_handle", argc, 1, 1);
    kw_none(vm, "get_ipc_handle", kwargs);
    no_ipc(vm);
}

Value cuda_f_open_ipc_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc, (void)argv, (void)kwargs;
    no_ipc(vm);
}

/* cuda.mapped_array_like(ary, stream=0, portable=False, wc=False) and
** cuda.pinned_array_like(ary): the shape, dtype and order of ary. */
static Value host_array_like(VM *vm, const char *fname, HostKind kind, int argc, Value *argv, Dict *kwargs) {
    arg_count(vm, fname, argc, 1, kind == HOST_MAPPED ? 4 : 1);
    NDArray *src = cuda_array_of(vm, argv[0]);
    if (!src) vm_raise_kind(vm, TypeError, "%s() needs an array, not '%s'", fname, vm_type_name(vm, argv[0]));
    bool fortran = !(src->flags & ND_C_CONTIGUOUS) && (src->flags & ND_F_CONTIGUOUS);
    Value args[3] = {int_tuple(vm, src->ndim, src->shape), NONE_VAL, NONE_VAL};
    vm_push_root(vm, args[0]);
    args[1] = nd_dtype_object(vm, src->dtype);
    vm_push_root(vm, args[1]);
    args[2] = STR_VAL(str_cstr(vm, fortran ? "F" : "C"));
    vm_push_root(vm, args[2]);
    Value r = host_array(vm, fname, kind, 3, args, kwargs);
    vm_pop_roots(vm, 3);
    return r;
}

Value cuda_f_mapped_array_like(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return host_array_like(vm, "mapped_array_like", HOST_MAPPED, argc, argv, kwargs);
}

Value cuda_f_pinned_array_like(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return host_array_like(vm, "pinned_array_like", HOST_PINNED, argc, argv, kwargs);
}

void cuda_array_init(VM *vm, CudaState *st) {
    Type *t = type_new_builtin(vm, "DeviceNDArray", vm->t_object, 0);
    t->repr = dev_repr;
    t->getattr = dev_getattr;
    t->getitem = dev_getitem;
    t->setitem = dev_setitem;
    t->len = dev_len;
    t->mark = dev_mark;
    t->finalize = devarray_finalize;
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "numba.cuda.cudadrv.devicearray")));
    type_add_method(vm, t, "copy_to_host", m_copy_to_host);
    type_add_method(vm, t, "copy_to_device", m_copy_to_device);
    type_add_method(vm, t, "is_c_contiguous", m_is_c_contiguous);
    type_add_method(vm, t, "is_f_contiguous", m_is_f_contiguous);
    type_add_method(vm, t, "reshape", m_reshape);
    type_add_method(vm, t, "ravel", m_ravel);
    type_add_method(vm, t, "view", m_view);
    type_add_method(vm, t, "squeeze", m_squeeze);
    type_add_method(vm, t, "split", m_split);
    type_add_method(vm, t, "transpose", m_transpose);
    type_add_method(vm, t, "bind", m_bind);
    type_add_method(vm, t, "getitem", m_getitem);
    type_add_method(vm, t, "setitem", m_setitem);
    type_add_method(vm, t, "get_ipc_handle", m_get_ipc_handle);
    type_add_method(vm, t, "__array__", m_array);
    st->t_devarray = t;
    t = type_new_builtin(vm, "_HostMemory", vm->t_object, 0);
    t->finalize = hostbuf_finalize;
    st->t_hostbuf = t;
    t = type_new_builtin(vm, "_DeviceMemory", vm->t_object, 0);
    t->finalize = fenced_finalize;
    st->t_fenced = t;
}
