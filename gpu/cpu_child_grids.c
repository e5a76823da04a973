/*
** cpu_child_grids.c — kernels launching kernels on the CPU device (see
** cpu_child_grids.h for the semantics).
**
** Each launch run by gpu_cpu_launch_tree owns a GridQueue, reached by its
** threads through KernelCtx.grids. Launching threads push records onto it
** with a lock-free stack (many workers may launch at once); when the grid is
** done the records are sorted into a reproducible order and run.
*/
#include "cpu_child_grids.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One queued child grid; the parameter bytes follow it. */
typedef struct ChildGrid {
    struct ChildGrid *next;
    const CpuKernel *k;
    uint64_t block, thread, seq;   /* who launched it, and when: the run order */
    uint32_t grid[3], dims[3];
    uint32_t shared;               /* dynamic shared memory bytes */
    uint32_t size;
    _Alignas(16) unsigned char args[];
} ChildGrid;

typedef struct GridQueue {
    _Atomic(ChildGrid *) head;
    atomic_uint_fast64_t seq;
    atomic_bool oom;               /* a record could not be allocated */
} GridQueue;

void gpy_cpu_launch_child(KernelCtx *ctx, int32_t tx, int32_t ty, int32_t tz, const CpuKernel *k, uint32_t gx,
                          uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t shared,
                          const void *args, uint32_t size) {
    GridQueue *q = ctx->grids;
    if (!q) return; /* not run through gpu_cpu_launch_tree: nowhere to queue */
    ChildGrid *c = malloc(sizeof *c + size);
    if (!c) {
        atomic_store(&q->oom, true);
        return;
    }
    c->k = k;
    c->block = (uint64_t)ctx->ctaid[0] +
               (uint64_t)ctx->nctaid[0] * ((uint64_t)ctx->ctaid[1] + (uint64_t)ctx->nctaid[1] * (uint64_t)ctx->ctaid[2]);
    c->thread = (uint64_t)(uint32_t)tx +
                (uint64_t)ctx->ntid[0] * ((uint64_t)(uint32_t)ty + (uint64_t)ctx->ntid[1] * (uint64_t)(uint32_t)tz);
    c->seq = atomic_fetch_add(&q->seq, 1);
    c->grid[0] = gx, c->grid[1] = gy, c->grid[2] = gz;
    c->dims[0] = bx, c->dims[1] = by, c->dims[2] = bz;
    c->shared = shared;
    c->size = size;
    if (size) memcpy(c->args, args, size);
    ChildGrid *old = atomic_load_explicit(&q->head, memory_order_relaxed);
    do c->next = old;
    while (!atomic_compare_exchange_weak_explicit(&q->head, &old, c, memory_order_release, memory_order_relaxed));
}

static int launch_order(const void *a, const void *b) {
    const ChildGrid *x = *(ChildGrid *const *)a, *y = *(ChildGrid *const *)b;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *kname(const CpuKernel *k) { return k->name ? k->name : "?"; }

static int run_tree(CpuDevice *d, const CpuLaunch *l, int depth, char *err, size_t errsize);

/* Runs one queued grid (and its descendants) at nesting depth depth. */
static int run_child(CpuDevice *d, const ChildGrid *c, int depth, char *err, size_t errsize) {
    const CpuKernel *k = c->k;
    if (depth > GPU_CPU_MAX_NESTING) {
        snprintf(err, errsize, "kernel '%s' launched at nesting depth %d: grids launched from kernels nest at "
                 "most %d levels deep", kname(k), depth, GPU_CPU_MAX_NESTING);
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (c->grid[i] > INT32_MAX || c->dims[i] > INT32_MAX) {
            snprintf(err, errsize, "launch of kernel '%s' from a kernel: grid (%d, %d, %d), block (%d, %d, %d) "
                     "is out of range", kname(k), (int32_t)c->grid[0], (int32_t)c->grid[1], (int32_t)c->grid[2],
                     (int32_t)c->dims[0], (int32_t)c->dims[1], (int32_t)c->dims[2]);
            return -1;
        }
    if ((uint64_t)k->shared_bytes + c->shared > GPU_CPU_MAX_SHARED) {
        snprintf(err, errsize, "launch of kernel '%s' from a kernel: %llu bytes of shared memory (%llu dynamic) "
                 "exceed the device's %d per block (CUDA_ERROR_INVALID_VALUE)", kname(k),
                 (unsigned long long)k->shared_bytes + c->shared, (unsigned long long)c->shared, GPU_CPU_MAX_SHARED);
        return -1;
    }
    /* the parameters, where the launching code laid them out */
    void *stack_ptrs[64];
    void **ptrs = k->nparams <= 64 ? stack_ptrs : malloc((size_t)k->nparams * sizeof *ptrs);
    if (!ptrs) {
        snprintf(err, errsize, "out of memory launching kernel '%s'", kname(k));
        return -1;
    }
    uint32_t off = 0;
    for (int i = 0; i < k->nparams; i++) {
        uint32_t sz = k->params[i].size;
        off = (off + sz - 1) / sz * sz;
        ptrs[i] = (void *)(c->args + off);
        off += sz;
    }
    int rc = 0;
    if (off != c->size) {
        snprintf(err, errsize, "internal error: kernel '%s' launched with %u parameter bytes, it takes %u", kname(k),
                 c->size, off);
        rc = -1;
    }
    CpuLaunch cl = {.shared_bytes = k->shared_bytes + c->shared, .dyn_shared = c->shared, .block_fn = k->block_fn,
                    .thread_fn = k->thread_fn, .uses_barrier = k->uses_barrier, .params = ptrs};
    for (int i = 0; i < 3; i++) {
        cl.grid[i] = c->grid[i];
        cl.block[i] = c->dims[i];
    }
    if (!rc && k->dbg_err) memset(k->dbg_err, 0, sizeof *k->dbg_err);
    if (!rc) {
        char inner[512];
        rc = run_tree(d, &cl, depth, inner, sizeof inner);
        if (rc) snprintf(err, errsize, "%s", inner);
    }
    if (!rc && k->dbg_err && k->dbg_err->flag) { /* debug mode: an index out of bounds in the child */
        k->dbg_message(k->owner, k->dbg_err, err, errsize);
        memset(k->dbg_err, 0, sizeof *k->dbg_err);
        rc = GPU_CPU_CHILD_INDEX_ERROR;
    }
    if (ptrs != stack_ptrs) free(ptrs);
    return rc;
}

/* Runs l, then what it queued, in launch order, each with its descendants. */
static int run_tree(CpuDevice *d, const CpuLaunch *l, int depth, char *err, size_t errsize) {
    GridQueue q;
    atomic_init(&q.head, NULL);
    atomic_init(&q.seq, 0);
    atomic_init(&q.oom, false);
    CpuLaunch mine = *l;
    mine.grids = &q;
    int rc = gpu_cpu_launch(d, &mine, err, errsize);
    ChildGrid *list = atomic_load(&q.head);
    size_t n = 0;
    for (ChildGrid *c = list; c; c = c->next) n++;
    ChildGrid **order = n ? malloc(n * sizeof *order) : NULL;
    if (n && !order) {
        if (!rc) snprintf(err, errsize, "out of memory queueing child grids");
        rc = -1;
    }
    if (!rc && atomic_load(&q.oom)) {
        snprintf(err, errsize, "out of memory queueing child grids");
        rc = -1;
    }
    if (order) {
        size_t i = 0;
        for (ChildGrid *c = list; c; c = c->next) order[i++] = c;
        qsort(order, n, sizeof *order, launch_order);
    }
    for (size_t i = 0; !rc && i < n; i++) rc = run_child(d, order[i], depth + 1, err, errsize);
    while (list) {
        ChildGrid *next = list->next;
        free(list);
        list = next;
    }
    free(order);
    return rc;
}

int gpu_cpu_launch_tree(CpuDevice *d, const CpuLaunch *l, char *err, size_t errsize) {
    return run_tree(d, l, 0, err, errsize);
}
