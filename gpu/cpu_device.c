/*
** cpu_device.c — runs kernel grids on the cores of this machine (see
** cpu_device.h for the execution model).
**
** Work distribution: the launching thread publishes the launch, wakes the
** workers, and all of them (the launcher included) take blocks from one
** atomic counter until none are left. Small grids run on the launcher alone,
** so a tiny launch costs no thread wake-up.
*/
#include "cpu_device.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fiber.h"

enum { FIBER_RUN, FIBER_WAIT, FIBER_DONE };

/* One CUDA thread of a barrier kernel. */
typedef struct ThreadFiber {
    FiberCtx ctx;
    KernelCtx kctx;
    int state;
    struct BlockSched *sched;
} ThreadFiber;

/* The fibers of the block a worker is running, and the scheduler's own
** context (fibers switch back to it at each barrier and at exit). */
typedef struct BlockSched {
    FiberCtx main;
    ThreadFiber *fibers;
    int n;
    int current;
    CpuThreadFn fn;
    void **params;
} BlockSched;

/* Per worker: shared memory and fiber stacks, reused across blocks and launches. */
typedef struct Worker {
    char *smem;
    size_t smem_cap;
    char *stacks;        /* nstacks stacks of stack_size bytes (mmap'ed, guard page each) */
    size_t stacks_len;
    int nstacks;
    ThreadFiber *fibers;
    int nfibers_cap;
    char err[160];
} Worker;

struct CpuDevice {
    int nworkers;               /* including the launching thread (worker 0) */
    size_t stack_size;
    Worker *workers;
    pthread_t *threads;         /* nworkers - 1 helper threads, once started */
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    uint64_t generation;        /* bumped per parallel launch */
    int busy;                   /* helper threads still working on the current launch */
    bool quit;
    const CpuLaunch *launch;    /* the launch being run */
    int64_t nblocks;
    atomic_int_fast64_t next_block;
    atomic_int failed;
};

/* ------------------------------------------------------------ one block */

static void fiber_main(void *arg) {
    ThreadFiber *f = arg;
    BlockSched *s = f->sched;
    s->fn(&f->kctx, s->params);
    f->state = FIBER_DONE;
    fiber_switch(&f->ctx, &s->main);
}

void gpy_cpu_syncthreads(KernelCtx *ctx) {
    BlockSched *s = ctx->block;
    if (!s) return; /* block-loop kernels never call this; be safe */
    ThreadFiber *f = &s->fibers[s->current];
    f->state = FIBER_WAIT;
    fiber_switch(&f->ctx, &s->main);
}

/* Makes sure the worker has n fiber stacks. */
static bool ensure_stacks(CpuDevice *d, Worker *w, int n) {
    if (w->nstacks >= n) return true;
    ThreadFiber *nf = realloc(w->fibers, sizeof(ThreadFiber) * (size_t)n);
    if (!nf) return false;
    w->fibers = nf;
    w->nfibers_cap = n;
    if (w->stacks) munmap(w->stacks, w->stacks_len);
    w->stacks = NULL;
    w->nstacks = 0;
    size_t len = d->stack_size * (size_t)n;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < n; i++) /* guard page at the low end of each stack */
        mprotect((char *)p + (size_t)i * d->stack_size, (size_t)page, PROT_NONE);
    w->stacks = p;
    w->stacks_len = len;
    w->nstacks = n;
    return true;
}

/* Runs a barrier kernel's block: every live fiber runs until it reaches the
** barrier or exits; when a pass leaves no runnable fiber, all waiting ones
** are released together. */
static bool run_block_fibers(CpuDevice *d, Worker *w, const CpuLaunch *l, const KernelCtx *base) {
    int n = (int)(l->block[0] * l->block[1] * l->block[2]);
    if (!ensure_stacks(d, w, n)) {
        snprintf(w->err, sizeof w->err, "cannot allocate %d fiber stacks of %zu bytes", n, d->stack_size);
        return false;
    }
    BlockSched s = {.fibers = w->fibers, .n = n, .fn = l->thread_fn, .params = l->params};
    int i = 0;
    for (uint32_t z = 0; z < l->block[2]; z++)
        for (uint32_t y = 0; y < l->block[1]; y++)
            for (uint32_t x = 0; x < l->block[0]; x++, i++) {
                ThreadFiber *f = &w->fibers[i];
                f->kctx = *base;
                f->kctx.tid[0] = (int32_t)x;
                f->kctx.tid[1] = (int32_t)y;
                f->kctx.tid[2] = (int32_t)z;
                f->kctx.block = &s;
                f->state = FIBER_RUN;
                f->sched = &s;
                fiber_init(&f->ctx, w->stacks + (size_t)i * d->stack_size, d->stack_size, fiber_main, f);
            }
    for (;;) {
        int waiting = 0;
        for (i = 0; i < n; i++) {
            if (w->fibers[i].state != FIBER_RUN) continue;
            s.current = i;
            fiber_switch(&s.main, &w->fibers[i].ctx);
        }
        for (i = 0; i < n; i++)
            if (w->fibers[i].state == FIBER_WAIT) {
                w->fibers[i].state = FIBER_RUN;
                waiting++;
            }
        if (!waiting) return true;
    }
}

/* Runs block number b (linear, x fastest) of the launch on worker w. */
static bool run_block(CpuDevice *d, Worker *w, const CpuLaunch *l, int64_t b) {
    if (l->shared_bytes > w->smem_cap) {
        char *p = realloc(w->smem, l->shared_bytes);
        if (!p) {
            snprintf(w->err, sizeof w->err, "cannot allocate %zu bytes of shared memory", l->shared_bytes);
            return false;
        }
        w->smem = p;
        w->smem_cap = l->shared_bytes;
    }
    if (l->shared_bytes) memset(w->smem, 0, l->shared_bytes);
    KernelCtx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.ctaid[0] = (int32_t)(b % l->grid[0]);
    ctx.ctaid[1] = (int32_t)(b / l->grid[0] % l->grid[1]);
    ctx.ctaid[2] = (int32_t)(b / ((int64_t)l->grid[0] * l->grid[1]));
    for (int k = 0; k < 3; k++) {
        ctx.ntid[k] = (int32_t)l->block[k];
        ctx.nctaid[k] = (int32_t)l->grid[k];
    }
    ctx.smem = w->smem;
    if (l->uses_barrier || !l->block_fn) return run_block_fibers(d, w, l, &ctx);
    l->block_fn(&ctx, l->params);
    return true;
}

/* Takes blocks from the shared counter until the grid is exhausted. */
static void work(CpuDevice *d, Worker *w) {
    const CpuLaunch *l = d->launch;
    for (;;) {
        int64_t b = atomic_fetch_add(&d->next_block, 1);
        if (b >= d->nblocks || atomic_load(&d->failed)) return;
        if (!run_block(d, w, l, b)) {
            atomic_store(&d->failed, (int)(w - d->workers) + 1);
            return;
        }
    }
}

typedef struct WorkerStart {
    CpuDevice *d;
    int index;
} WorkerStart;

static void *helper_main(void *arg) {
    WorkerStart st = *(WorkerStart *)arg;
    free(arg);
    CpuDevice *d = st.d;
    Worker *w = &d->workers[st.index];
    uint64_t seen = 0;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->quit && d->generation == seen) pthread_cond_wait(&d->wake, &d->mu);
        if (d->quit) break;
        seen = d->generation;
        pthread_mutex_unlock(&d->mu);
        work(d, w);
        pthread_mutex_lock(&d->mu);
        if (--d->busy == 0) pthread_cond_signal(&d->done);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* --------------------------------------------------------------- device */

CpuDevice *gpu_cpu_new(int nthreads) {
    const char *env = getenv("GPY_CPU_THREADS");
    if (env && atoi(env) > 0) nthreads = atoi(env);
    if (nthreads <= 0) nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nthreads <= 0) nthreads = 1;
    if (nthreads > 256) nthreads = 256;
    CpuDevice *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->nworkers = nthreads;
    d->workers = calloc((size_t)nthreads, sizeof(Worker));
    if (!d->workers) {
        free(d);
        return NULL;
    }
    size_t stack = 64 * 1024;
    const char *senv = getenv("GPY_CPU_FIBER_STACK");
    if (senv && atol(senv) >= 16384) stack = (size_t)atol(senv);
    long page = sysconf(_SC_PAGESIZE);
    d->stack_size = (stack + (size_t)page - 1) / (size_t)page * (size_t)page;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->wake, NULL);
    pthread_cond_init(&d->done, NULL);
    return d;
}

int gpu_cpu_workers(CpuDevice *d) { return d->nworkers; }

void gpu_cpu_free(CpuDevice *d) {
    if (!d) return;
    if (d->started) {
        pthread_mutex_lock(&d->mu);
        d->quit = true;
        pthread_cond_broadcast(&d->wake);
        pthread_mutex_unlock(&d->mu);
        for (int i = 1; i < d->nworkers; i++) pthread_join(d->threads[i - 1], NULL);
    }
    for (int i = 0; i < d->nworkers; i++) {
        Worker *w = &d->workers[i];
        free(w->smem);
        if (w->stacks) munmap(w->stacks, w->stacks_len);
        free(w->fibers);
    }
    free(d->threads);
    free(d->workers);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->wake);
    pthread_cond_destroy(&d->done);
    free(d);
}

/* Starts the helper threads (once); false if none could start. */
static bool start_helpers(CpuDevice *d) {
    if (d->started) return true;
    d->threads = calloc((size_t)d->nworkers, sizeof(pthread_t));
    if (!d->threads) return false;
    int ok = 1;
    for (int i = 1; i < d->nworkers; i++) {
        WorkerStart *st = malloc(sizeof *st);
        if (!st) break;
        st->d = d;
        st->index = i;
        if (pthread_create(&d->threads[i - 1], NULL, helper_main, st) != 0) {
            free(st);
            break;
        }
        ok++;
    }
    d->nworkers = ok; /* run with the helpers that did start */
    d->started = true;
    return true;
}

int gpu_cpu_launch(CpuDevice *d, const CpuLaunch *l, char *err, size_t errsize) {
    for (int k = 0; k < 3; k++)
        if (l->grid[k] == 0 || l->block[k] == 0) {
            snprintf(err, errsize, "grid and block dimensions must be at least 1 (got grid (%u, %u, %u), block (%u, %u, %u))",
                     l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
            return -1;
        }
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (threads > 1024) {
        snprintf(err, errsize, "a block has at most 1024 threads (got %llu = %u x %u x %u)",
                 (unsigned long long)threads, l->block[0], l->block[1], l->block[2]);
        return -1;
    }
    if (l->block[2] > 64) {
        snprintf(err, errsize, "blockDim.z is at most 64 (got %u)", l->block[2]);
        return -1;
    }
    if (!l->thread_fn && (l->uses_barrier || !l->block_fn)) {
        snprintf(err, errsize, "kernel has no entry point for the CPU device");
        return -1;
    }
    int64_t nblocks = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
    d->launch = l;
    d->nblocks = nblocks;
    atomic_store(&d->next_block, 0);
    atomic_store(&d->failed, 0);
    /* Small grids: the launcher alone (no wake-up latency). */
    bool parallel = d->nworkers > 1 && nblocks > 1 && (uint64_t)nblocks * threads >= 4096;
    if (parallel && start_helpers(d) && d->nworkers > 1) {
        pthread_mutex_lock(&d->mu);
        d->busy = d->nworkers - 1;
        d->generation++;
        pthread_cond_broadcast(&d->wake);
        pthread_mutex_unlock(&d->mu);
        work(d, &d->workers[0]);
        pthread_mutex_lock(&d->mu);
        while (d->busy > 0) pthread_cond_wait(&d->done, &d->mu);
        pthread_mutex_unlock(&d->mu);
    } else {
        work(d, &d->workers[0]);
    }
    int failed = atomic_load(&d->failed);
    d->launch = NULL;
    if (failed) {
        snprintf(err, errsize, "%s", d->workers[failed - 1].err);
        return -1;
    }
    return 0;
}
