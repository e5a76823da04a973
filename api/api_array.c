/*
** api_array.c — arrays without copies: an application's host memory as a
** numpy array (gpy_wrap_array), its device memory as a cuda device array
** (gpy_wrap_device_array), and any gpy array described back to C
** (gpy_get_array).
**
** Ownership: a borrowed wrap has base None (or, read-only, a read-only root
** array); a wrap with a release callback gets a small owner object as base
** (ExternalMem) whose finalizer calls release, so it runs exactly once, when
** the last array or view of that memory is collected, or at gpy_free.
*/
#include <string.h>

#include "api.h"
#include "../stdlib/cuda_embed.h"

/* GpyDtype names NDType's values one for one. */
_Static_assert((int)GPY_BOOL == (int)ND_BOOL && (int)GPY_INT8 == (int)ND_INT8 && (int)GPY_INT64 == (int)ND_INT64 &&
                   (int)GPY_UINT8 == (int)ND_UINT8 && (int)GPY_UINT64 == (int)ND_UINT64 &&
                   (int)GPY_FLOAT16 == (int)ND_FLOAT16 && (int)GPY_FLOAT64 == (int)ND_FLOAT64 &&
                   (int)GPY_COMPLEX128 + 1 == (int)ND__COUNT,
               "GpyDtype and NDType must agree");
_Static_assert(GPY_MAX_DIMS == ND_MAXDIM, "GPY_MAX_DIMS and ND_MAXDIM must agree");

/* Memory the application lent with a release callback. */
typedef struct ExternalMem {
    Obj obj;
    void *data;
    void (*release)(void *data, void *user); /* NULL once called (or while the wrap is unfinished) */
    void *user;
} ExternalMem;

static void external_finalize(VM *vm, Obj *o) {
    (void)vm;
    ExternalMem *m = (ExternalMem *)o;
    void (*release)(void *, void *) = m->release;
    m->release = NULL;
    if (release) release(m->data, m->user);
}

static ExternalMem *external_new(VM *vm, void *data) {
    GpyVM *g = api_of(vm);
    if (!g->t_external) {
        Type *t = type_new_builtin(vm, "_ExternalMemory", vm->t_object, 0);
        t->finalize = external_finalize;
        g->t_external = t;
    }
    ExternalMem *m = gc_alloc_obj(vm, g->t_external, sizeof(ExternalMem));
    m->data = data;
    return m;
}

typedef struct WrapCtx {
    const GpyArray *array;
    int slot;
    bool device;
    const char *fname;
} WrapCtx;

/* Raises ValueError unless the description is one gpy can wrap: a known
** dtype, 0 .. GPY_MAX_DIMS dimensions, a shape without negative entries
** whose size in bytes fits an int64 (numpy's messages), data for a
** non-empty array, strides whose extent fits the address space. */
static void validate(VM *vm, const WrapCtx *c) {
    const GpyArray *a = c->array;
    if (!a) vm_raise_kind(vm, ValueError, "%s: array is NULL", c->fname);
    if ((unsigned)a->dtype >= (unsigned)ND__COUNT)
        vm_raise_kind(vm, ValueError, "%s: unknown dtype %d", c->fname, (int)a->dtype);
    if (a->ndim < 0 || a->ndim > GPY_MAX_DIMS)
        vm_raise_kind(vm, ValueError, "%s: ndim must be 0 to %d, not %d", c->fname, GPY_MAX_DIMS, a->ndim);
    if (a->ndim > 0 && !a->shape) vm_raise_kind(vm, ValueError, "%s: shape is NULL", c->fname);
    int64_t size = 1, bytes = (int64_t)nd_itemsize((NDType)a->dtype);
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] < 0) vm_raise_kind(vm, ValueError, "negative dimensions are not allowed");
        if (__builtin_mul_overflow(size, a->shape[i], &size) || __builtin_mul_overflow(bytes, a->shape[i], &bytes))
            vm_raise_kind(vm, ValueError, "array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                                          "maximum possible size.");
    }
    if (size && !a->data) vm_raise_kind(vm, ValueError, "%s: data is NULL for an array of %lld elements", c->fname,
                                        (long long)size);
    if (!a->strides || !size) return;
    /* the bytes reached from data must not wrap around the address space */
    int64_t lo = 0, hi = (int64_t)nd_itemsize((NDType)a->dtype), span;
    for (int i = 0; i < a->ndim; i++) {
        if (__builtin_mul_overflow(a->shape[i] - 1, a->strides[i], &span) ||
            __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
            vm_raise_kind(vm, ValueError, "%s: the strides reach outside the address space", c->fname);
    }
    uintptr_t p = (uintptr_t)a->data;
    if ((uint64_t)0 - (uint64_t)lo > p || (uint64_t)hi > UINTPTR_MAX - p)
        vm_raise_kind(vm, ValueError, "%s: the strides reach outside the address space", c->fname);
}

static void wrap_body(VM *vm, void *ud) {
    WrapCtx *c = ud;
    validate(vm, c);
    const GpyArray *a = c->array;
    NDType dt = (NDType)a->dtype;
    /* the release callback is armed only once the wrap succeeded: on failure
    ** the memory stays the application's */
    ExternalMem *m = a->release ? external_new(vm, a->data) : NULL;
    Value keep = m ? OBJ_VAL(m) : NONE_VAL;
    vm_push_root(vm, keep);
    Value r;
    if (c->device) {
        r = cuda_devarray_external(vm, dt, (uintptr_t)a->data, a->ndim, a->shape, a->strides, a->readonly, keep);
    } else {
        NDArray *w = nd_wrap(vm, dt, a->data, a->ndim, a->shape, a->strides, keep);
        if (a->readonly) {
            /* a read-only root below the array: numpy then refuses
            ** `a.flags.writeable = True` on it and on its views */
            w->flags &= ~ND_WRITEABLE;
            vm_push_root(vm, OBJ_VAL(w));
            w = nd_wrap(vm, dt, a->data, a->ndim, a->shape, a->strides, OBJ_VAL(w));
            w->flags &= ~ND_WRITEABLE;
            vm_pop_roots(vm, 1);
        }
        r = OBJ_VAL(w);
    }
    *api_slot(api_of(vm), c->slot) = r;
    vm_pop_roots(vm, 1);
    if (m) {
        m->release = a->release;
        m->user = a->release_user;
    }
}

GpyStatus gpy_wrap_array(GpyVM *g, int slot, const GpyArray *array) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    WrapCtx c = {.array = array, .slot = slot, .device = false, .fname = "gpy_wrap_array"};
    return api_protect(g, wrap_body, &c);
}

GpyStatus gpy_wrap_device_array(GpyVM *g, int slot, const GpyArray *array) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    WrapCtx c = {.array = array, .slot = slot, .device = true, .fname = "gpy_wrap_device_array"};
    return api_protect(g, wrap_body, &c);
}

typedef struct GetCtx {
    int slot;
    GpyArray *out;
} GetCtx;

static void get_body(VM *vm, void *ud) {
    GetCtx *c = ud;
    Value v = *api_slot(api_of(vm), c->slot);
    bool device = cuda_is_devarray(vm, v);
    NDArray *a = device ? cuda_array_of(vm, v) : nd_check(vm, v) ? (NDArray *)AS_OBJ(v) : NULL;
    if (!a) vm_raise_kind(vm, TypeError, "gpy_get_array: slot %d holds a '%s', not an array", c->slot, vm_type_name(vm, v));
    GpyArray *o = c->out;
    if (!o) vm_raise_kind(vm, ValueError, "gpy_get_array: out is NULL");
    memset(o, 0, sizeof *o);
    /* a GPU device array's descriptor holds the device address as its data */
    o->data = a->data;
    o->dtype = (GpyDtype)a->dtype;
    o->ndim = a->ndim;
    o->shape = a->shape;
    o->strides = a->strides;
    o->readonly = !(a->flags & ND_WRITEABLE);
    o->device = device;
}

GpyStatus gpy_get_array(GpyVM *g, int slot, GpyArray *out) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    GetCtx c = {.slot = slot, .out = out};
    return api_protect(g, get_body, &c);
}
