/*
** cpu_device.c — runs kernel grids on the cores of this machine (see
** cpu_device.h for the execution model).
**
** Work distribution: the launching thread publishes the launch, wakes the
** workers, and all of them (the launcher included) take blocks from one
** atomic counter until none are left. Small grids run on the launcher alone,
** so a tiny launch costs no thread wake-up.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, ucontext */
#endif
#include "cpu_device.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "fiber.h"

/* RUN: runnable; WAIT: at a barrier; DONE: exited; YIELD: waiting at a warp
** collective for lanes that have not arrived yet (rerun next pass). */
enum { FIBER_RUN, FIBER_WAIT, FIBER_DONE, FIBER_YIELD };

/* What a lane is parked at (ThreadFiber.wpark; see gpy_cpu_warp). */
enum { WPARK_NONE, WPARK_SYNC, WPARK_ACTIVE };

/* One CUDA thread of a barrier kernel. */
typedef struct ThreadFiber {
    FiberCtx ctx;
    KernelCtx kctx;
    int state;
    struct BlockSched *sched;
    uint32_t nred;                /* syncthreads_count/_and/_or calls so far */
    /* the warp collective this lane is parked at (gpy_cpu_warp) */
    uint8_t wpark;                /* WPARK_*: none, a *_sync collective, activemask */
    bool wreleased;               /* its group met: wres holds the result */
    int32_t wop, warg;            /* op number; shfl lane/delta, or the activemask call site */
    uint32_t wmask;
    uint64_t wval, wres;
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
    struct CpuDevice *dev;
    int32_t red[2];               /* barrier reductions, by parity of the call number */
    uint32_t red_gen[2];
    bool progress;                /* a lane arrived at a collective during this pass */
    bool force;                   /* last pass made no progress: collectives take the lanes present */
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
    char *scratch;       /* region kernels' per-thread values (gpy_cpu_scratch) */
    size_t scratch_cap;
    bool scratch_failed;
    char err[160];
    /* out-of-bounds protection: where the fault handler resumes (work), and what it saw */
    sigjmp_buf fault_jmp;
    bool faulted;        /* the failure recorded in err was a memory fault */
    void *fault_addr;
    int fault_access;    /* GPU_CPU_ACCESS_* */
    bool fault_stack;    /* the fault was a stack overflow */
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
    int64_t chunk;              /* blocks taken per atomic fetch */
    atomic_int_fast64_t next_block;
    atomic_int failed;
    const atomic_int *interrupt; /* gpu_cpu_set_interrupt: stop between blocks when non-zero */
    atomic_bool interrupted;     /* the current launch stopped for it */
    void *fault_addr;           /* the last launch's memory fault (GPU_CPU_FAULT) */
    int fault_access;
    /* print() lines of the current launch, flushed in thread order at its end */
    pthread_mutex_t print_mu;
    struct PrintLine *lines;
    size_t nlines, caplines;
    GpuCpuOutputFn output; /* where they go (gpu_cpu_set_output); NULL: stdout */
    void *output_ctx;
};

typedef struct PrintLine {
    uint64_t key;   /* block linear index * threads per block + thread linear index */
    uint64_t seq;   /* order of the calls (per thread, calls come in program order) */
    char *text;
} PrintLine;

/* ------------------------------------------------- out-of-bounds faults */

/* A kernel that indexes outside its arrays touches a guard page around a
** device buffer (gpu/guarded_mem.c) or an unmapped address and gets SIGSEGV
** (or SIGBUS). While a worker runs kernel code, kernel_worker points at it
** and the handler jumps back into work(), which marks the launch failed:
** the launch raises instead of the process dying, and the device stays
** usable. Any other fault goes to the handler that was there before (by
** default: the process dies of the signal, as it would without us). The
** handler runs on an alternate stack so that a kernel overflowing its stack
** is caught too. */
static _Thread_local Worker *kernel_worker;
static _Thread_local bool altstack_ready;
static struct sigaction prev_segv, prev_bus;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

enum { ALTSTACK_BYTES = 64 * 1024 };

static void on_fault(int sig, siginfo_t *si, void *uctx) {
    Worker *w = kernel_worker;
    if (w) {
        kernel_worker = NULL;
        w->fault_addr = si->si_addr;
        w->fault_access = GPU_CPU_ACCESS_UNKNOWN;
        w->fault_stack = false;
#if defined(__x86_64__) && defined(__linux__)
        /* the page-fault error code: bit 1 set for a write */
        const greg_t *r = ((ucontext_t *)uctx)->uc_mcontext.gregs;
        w->fault_access = r[REG_ERR] & 2 ? GPU_CPU_ACCESS_WRITE : GPU_CPU_ACCESS_READ;
        /* a frame too big for the stack faults just above the new stack
        ** pointer (a big cuda.local.array): report it as such */
        uintptr_t sp = (uintptr_t)r[REG_RSP], a = (uintptr_t)si->si_addr;
        w->fault_stack = a + 4096 >= sp && a < sp + 65536;
#endif
        siglongjmp(w->fault_jmp, 1);
    }
    const struct sigaction *p = sig == SIGBUS ? &prev_bus : &prev_segv;
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction) {
            p->sa_sigaction(sig, si, uctx);
            return;
        }
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    /* the default action: returning re-runs the faulting instruction, which
    ** now kills the process; a signal sent by kill() is raised again */
    signal(sig, SIG_DFL);
    if (si->si_code <= 0) raise(sig);
}

static void drop_altstack(void *p);
/* The alternate stacks given to launching threads (an application's own
** threads among them), unmapped when such a thread exits. */
static pthread_key_t launcher_altstack;

static void install_handler(void) {
    (void)pthread_key_create(&launcher_altstack, drop_altstack);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    /* SA_NODEFER: the jump out of the handler leaves SIGSEGV unblocked
    ** without saving the signal mask at every sigsetjmp (a system call) */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &prev_segv);
    sigaction(SIGBUS, &sa, &prev_bus);
}

/* Gives the calling thread an alternate signal stack unless it has one
** (the interpreter's, a sanitizer's). Returns the stack we mapped, to be
** unmapped by the thread that exits, or NULL. */
static void *ensure_altstack(void) {
    if (altstack_ready) return NULL;
    altstack_ready = true;
    stack_t old;
    if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE)) return NULL;
    void *p = mmap(NULL, ALTSTACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    stack_t ss = {.ss_sp = p, .ss_size = ALTSTACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(p, ALTSTACK_BYTES);
        return NULL;
    }
    return p;
}

static void drop_altstack(void *p) {
    if (!p) return;
    stack_t ss = {.ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
    munmap(p, ALTSTACK_BYTES);
}

void *gpu_cpu_fault_addr(CpuDevice *d, int *access) {
    if (access) *access = d->fault_access;
    return d->fault_addr;
}

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

/* syncthreads_count (op 0), _and (1), _or (2): every fiber adds its
** predicate to the accumulator of its call number's parity, then all meet at
** the barrier and read it. The slot of call g+1 is reset by its first
** arrival: by then every fiber has read call g-1's result. */
int32_t gpy_cpu_syncthreads_reduce(KernelCtx *ctx, int32_t pred, int32_t op) {
    BlockSched *s = ctx->block;
    if (!s) return pred != 0;
    ThreadFiber *f = &s->fibers[s->current];
    uint32_t g = ++f->nred;
    int slot = (int)(g & 1);
    if (s->red_gen[slot] != g) {
        s->red_gen[slot] = g;
        s->red[slot] = op == 1 ? 1 : 0;
    }
    if (op == 0) s->red[slot] += pred != 0;
    else if (op == 1) s->red[slot] &= pred != 0;
    else s->red[slot] |= pred != 0;
    gpy_cpu_syncthreads(ctx);
    return s->red[slot];
}

/* ------------------------------------------------------ warp collectives
**
** The lanes of a warp (32 consecutive linear thread ids) are fibers that run
** one after the other, so convergence is modelled explicitly: a lane that
** reaches a warp collective parks there (ThreadFiber.wpark) and the lanes
** that meet are released together, each with its result in wres.
**
** - A *_sync collective (shfl, votes, ballot, match, syncwarp) waits for the
**   lanes of its mask, as on sm_70+ (they may sit at another call site):
**   its group is the closure of the masks of the lanes parked with it; it
**   meets when every lane of that closure is parked at a *_sync collective
**   or has exited.
** - activemask() has no mask: the active lanes are those that reached the
**   same call site (warg) together. It is decided once every other lane of
**   the warp is blocked (parked, at a barrier or exited) and no *_sync group
**   can meet; the parked call site earliest in the source goes first, so
**   lanes that ran ahead (past a loop or a branch) wait for the ones behind,
**   as the GPU reconverges them at the end of structured control flow.
** Ops (jit/lower_builtin.c): 0-3 shfl idx/up/down/xor, 4 all, 5 any, 6 eq,
** 7 ballot, 8 activemask, 9 syncwarp, 10 match_any, 11 match_all. */

static bool lane_blocked(const ThreadFiber *f) {
    return f->state == FIBER_DONE || f->state == FIBER_WAIT || f->wpark != WPARK_NONE;
}

/* The *_sync group of lane l (bits of the parked lanes in the closure of
** the masks); false while a lane of the closure has not arrived. */
static bool sync_group(const ThreadFiber *fs, int wb, int nl, int l, uint32_t *group) {
    uint32_t want = 1u << l, seen = 0, g = 0;
    bool ready = true;
    while (want & ~seen) {
        int j = __builtin_ctz(want & ~seen);
        seen |= 1u << j;
        if (j >= nl || fs[wb + j].state == FIBER_DONE) continue; /* exited, or no such lane */
        if (fs[wb + j].wpark != WPARK_SYNC) {
            ready = false;
            continue;
        }
        g |= 1u << j;
        want |= fs[wb + j].wmask;
    }
    *group = g;
    return ready;
}

/* Lane m's result when the lanes of g meet. Shuffles read their source
** lane's value (PTX uses the low 5 bits of lane/delta; a source outside the
** warp or not in the group gives the caller's own value); votes, ballots and
** matches see the lanes of the group that are in m's mask. */
static uint64_t warp_result(const ThreadFiber *fs, int wb, int m, uint32_t g) {
    const ThreadFiber *f = &fs[wb + m];
    int op = f->wop;
    uint32_t present = (g & f->wmask) | 1u << m;
    if (op <= 3) {
        int a = f->warg & 31;
        int src = op == 0 ? a : op == 1 ? m - a : op == 2 ? m + a : m ^ a;
        if (src < 0 || src >= 32 || !(g >> src & 1)) return f->wval;
        return fs[wb + src].wval;
    }
    if (op == 9) return 0;
    uint32_t yes = 0;
    for (int j = 0; j < 32; j++) {
        if (!(present >> j & 1)) continue;
        if (op >= 10 ? fs[wb + j].wval == f->wval : fs[wb + j].wval != 0) yes |= 1u << j;
    }
    if (op == 4) return yes == present;
    if (op == 5) return yes != 0;
    if (op == 6) return yes == 0 || yes == present;
    if (op == 11) return yes == present ? present : 0;
    return yes; /* ballot, match_any */
}

static void release_lanes(BlockSched *s, int wb, uint32_t g, uint32_t activemask) {
    ThreadFiber *fs = s->fibers;
    for (int j = 0; j < 32; j++) /* results first: they read the values of the others */
        if (g >> j & 1) fs[wb + j].wres = activemask ? activemask : warp_result(fs, wb, j, g);
    for (int j = 0; j < 32; j++)
        if (g >> j & 1) {
            fs[wb + j].wpark = WPARK_NONE;
            fs[wb + j].wreleased = true;
        }
    s->progress = true;
}

/* Releases lane l's group if it can meet now; force (no progress in the
** last pass: lanes wait for ones at a barrier) takes the lanes present. */
static bool warp_try_meet(BlockSched *s, int wb, int nl, int l, bool force) {
    ThreadFiber *fs = s->fibers;
    uint32_t g;
    if (fs[wb + l].wpark == WPARK_SYNC) {
        if (!sync_group(fs, wb, nl, l, &g) && !force) return false;
        release_lanes(s, wb, g, 0);
        return true;
    }
    int32_t first = fs[wb + l].warg;
    for (int j = 0; j < nl; j++) {
        const ThreadFiber *o = &fs[wb + j];
        if (!lane_blocked(o)) return false;
        if (o->wpark == WPARK_SYNC && sync_group(fs, wb, nl, j, &g)) return false; /* it goes first */
        if (o->wpark == WPARK_ACTIVE && o->warg < first) first = o->warg;
    }
    if (first != fs[wb + l].warg) return false;
    g = 0;
    for (int j = 0; j < nl; j++)
        if (fs[wb + j].wpark == WPARK_ACTIVE && fs[wb + j].warg == first) g |= 1u << j;
    release_lanes(s, wb, g, g);
    return true;
}

uint64_t gpy_cpu_warp(KernelCtx *ctx, int32_t op, uint32_t mask, uint64_t value, int32_t arg) {
    BlockSched *s = ctx->block;
    if (!s) { /* a lone thread */
        if (op == 7 || op == 10 || op == 11) return op == 7 ? value != 0 : 1;
        if (op == 8) return 1;
        return value;
    }
    int me = s->current, wb = me / 32 * 32, l = me - wb;
    int nl = s->n - wb < 32 ? s->n - wb : 32;
    ThreadFiber *f = &s->fibers[me];
    f->wpark = op == 8 ? WPARK_ACTIVE : WPARK_SYNC;
    f->wop = op;
    f->wmask = mask;
    f->wval = value;
    f->warg = arg;
    f->wreleased = false;
    s->progress = true;
    for (bool waited = false; !f->wreleased; waited = true) {
        if (warp_try_meet(s, wb, nl, l, s->force && waited)) break;
        f->state = FIBER_YIELD;
        fiber_switch(&f->ctx, &s->main);
    }
    f->wreleased = false;
    return f->wres;
}

void *gpy_cpu_scratch(KernelCtx *ctx, int64_t bytes) {
    Worker *w = ctx->worker;
    if (!w || bytes < 0) return NULL;
    size_t want = (size_t)bytes;
    if (want > w->scratch_cap) {
        size_t cap = w->scratch_cap ? w->scratch_cap : 4096;
        while (cap < want) cap *= 2;
        void *p = NULL;
        if (posix_memalign(&p, 64, cap) != 0) {
            w->scratch_failed = true;
            snprintf(w->err, sizeof w->err, "cannot allocate %zu bytes of per-thread storage", want);
            return NULL;
        }
        free(w->scratch);
        w->scratch = p;
        w->scratch_cap = cap;
    }
    return w->scratch;
}

/* print() on the CPU device: formats one line from the format the
** compiler made (%lld, %llu, %f, %s, %%) and the 8-byte argument slots, and
** keeps it for flush_prints. */
void gpy_cpu_print(KernelCtx *ctx, const char *fmt, const uint64_t *slots) {
    BlockSched *s = ctx->block;
    char line[4096];
    size_t len = 0;
    int k = 0;
    for (const char *c = fmt; *c && len < sizeof line - 1; c++) {
        if (*c != '%') {
            line[len++] = *c;
            continue;
        }
        if (c[1] == '%') {
            line[len++] = '%';
            c++;
            continue;
        }
        char spec[8];
        size_t sl = 0;
        while (*c && sl < sizeof spec - 1) {
            spec[sl++] = *c;
            if (strchr("dufs", *c)) break;
            c++;
        }
        spec[sl] = 0;
        if (!*c) break;
        char conv = spec[sl - 1];
        uint64_t v = slots[k++];
        int w;
        if (conv == 'f') {
            double dv;
            memcpy(&dv, &v, sizeof dv);
            w = snprintf(line + len, sizeof line - len, "%f", dv);
        } else if (conv == 's') {
            w = snprintf(line + len, sizeof line - len, "%s", (const char *)(uintptr_t)v);
        } else if (conv == 'u') {
            w = snprintf(line + len, sizeof line - len, "%llu", (unsigned long long)v);
        } else {
            w = snprintf(line + len, sizeof line - len, "%lld", (long long)(int64_t)v);
        }
        if (w > 0) len += (size_t)w < sizeof line - len ? (size_t)w : sizeof line - 1 - len;
    }
    line[len] = 0;
    if (!s || !s->dev) { /* no launch to attach it to: print now */
        fputs(line, stdout);
        return;
    }
    CpuDevice *d = s->dev;
    uint64_t nt = (uint64_t)ctx->ntid[0] * (uint64_t)ctx->ntid[1] * (uint64_t)ctx->ntid[2];
    uint64_t b = (uint64_t)ctx->ctaid[0] +
                 (uint64_t)ctx->nctaid[0] * ((uint64_t)ctx->ctaid[1] + (uint64_t)ctx->nctaid[1] * (uint64_t)ctx->ctaid[2]);
    uint64_t t = (uint64_t)ctx->tid[0] +
                 (uint64_t)ctx->ntid[0] * ((uint64_t)ctx->tid[1] + (uint64_t)ctx->ntid[1] * (uint64_t)ctx->tid[2]);
    char *text = strdup(line);
    pthread_mutex_lock(&d->print_mu);
    if (text && d->nlines == d->caplines) {
        size_t cap = d->caplines ? d->caplines * 2 : 64;
        PrintLine *nl = realloc(d->lines, cap * sizeof *nl);
        if (nl) {
            d->lines = nl;
            d->caplines = cap;
        }
    }
    if (text && d->nlines < d->caplines) {
        d->lines[d->nlines] = (PrintLine){b * nt + t, d->nlines, text};
        d->nlines++;
    } else {
        free(text);
    }
    pthread_mutex_unlock(&d->print_mu);
}

static int line_order(const void *a, const void *b) {
    const PrintLine *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the launch's print() lines to stdout, block by block and thread by
** thread (each thread's lines in its order), then forgets them. */
static void flush_prints(CpuDevice *d) {
    if (!d->nlines) return;
    qsort(d->lines, d->nlines, sizeof *d->lines, line_order);
    for (size_t i = 0; i < d->nlines; i++) {
        if (d->output) d->output(d->lines[i].text, strlen(d->lines[i].text), d->output_ctx);
        else fputs(d->lines[i].text, stdout);
        free(d->lines[i].text);
    }
    if (!d->output) fflush(stdout);
    d->nlines = 0;
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
    BlockSched s = {.fibers = w->fibers, .n = n, .fn = l->thread_fn, .params = l->params, .dev = d};
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
                f->nred = 0;
                f->wpark = WPARK_NONE;
                f->wreleased = false;
                fiber_init(&f->ctx, w->stacks + (size_t)i * d->stack_size, d->stack_size, fiber_main, f);
            }
    for (;;) {
        int waiting = 0, yields = 0;
        bool progress = false;
        s.progress = false;
        for (i = 0; i < n; i++) {
            if (w->fibers[i].state != FIBER_RUN) continue;
            s.current = i;
            fiber_switch(&s.main, &w->fibers[i].ctx);
            if (w->fibers[i].state != FIBER_YIELD) progress = true;
        }
        for (i = 0; i < n; i++)
            if (w->fibers[i].state == FIBER_YIELD) {
                w->fibers[i].state = FIBER_RUN;
                yields++;
            }
        if (yields) { /* lanes still meeting at a warp collective: run them again first */
            s.force = !(progress || s.progress);
            continue;
        }
        s.force = false;
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
    ctx.grids = l->grids;
    ctx.worker = w;
    ctx.dyn_smem = (int64_t)l->dyn_shared;
    if (!l->block_fn) {
        kernel_worker = w;
        bool ok = run_block_fibers(d, w, l, &ctx);
        kernel_worker = NULL;
        return ok;
    }
    w->scratch_failed = false;
    kernel_worker = w;
    l->block_fn(&ctx, l->params);
    kernel_worker = NULL;
    return !w->scratch_failed;
}

/* Takes blocks from the shared counter until the grid is exhausted. */
static void take_blocks(CpuDevice *d, Worker *w) {
    const CpuLaunch *l = d->launch;
    /* Blocks are taken in chunks: a locked add per block costs a full
    ** fence, measurable on memory-bound kernels with small blocks. */
    int64_t chunk = d->chunk;
    for (;;) {
        int64_t first = atomic_fetch_add(&d->next_block, chunk);
        if (first >= d->nblocks) return;
        int64_t end = first + chunk < d->nblocks ? first + chunk : d->nblocks;
        for (int64_t b = first; b < end; b++) {
            if (atomic_load_explicit(&d->failed, memory_order_relaxed)) return;
            if (d->interrupt && atomic_load_explicit(d->interrupt, memory_order_relaxed)) {
                atomic_store_explicit(&d->interrupted, true, memory_order_relaxed);
                return;
            }
            if (!run_block(d, w, l, b)) {
                w->faulted = false;
                atomic_store(&d->failed, (int)(w - d->workers) + 1);
                return;
            }
        }
    }
}

/* take_blocks, resumed here by the fault handler when kernel code faults
** (its frames, and the block's fibers, are abandoned: they hold no lock
** and nothing that the next launch does not set up again). */
static void work(CpuDevice *d, Worker *w) {
    if (sigsetjmp(w->fault_jmp, 0)) {
        w->faulted = !w->fault_stack;
        if (w->fault_stack && d->launch->block_fn)
            snprintf(w->err, sizeof w->err,
                     "a thread overflowed the worker thread's stack (a cuda.local.array too big for the CPU device?)");
        else if (w->fault_stack)
            snprintf(w->err, sizeof w->err,
                     "a thread overflowed its fiber stack of %zu bytes (a cuda.local.array too big for the CPU "
                     "device? GPY_CPU_FIBER_STACK sets the size)", d->stack_size);
        else snprintf(w->err, sizeof w->err, "invalid memory access at %p", w->fault_addr);
        atomic_store(&d->failed, (int)(w - d->workers) + 1);
        return;
    }
    take_blocks(d, w);
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
    void *altstack = ensure_altstack();
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
    drop_altstack(altstack);
    return NULL;
}

/* --------------------------------------------------------------- device */

CpuDevice *gpu_cpu_new(int nthreads, size_t fiber_stack) {
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
    size_t stack = gpu_cpu_fiber_stack_request(fiber_stack);
    long page = sysconf(_SC_PAGESIZE);
    d->stack_size = (stack + (size_t)page - 1) / (size_t)page * (size_t)page;
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->print_mu, NULL);
    pthread_cond_init(&d->wake, NULL);
    pthread_cond_init(&d->done, NULL);
    return d;
}

int gpu_cpu_workers(CpuDevice *d) { return d->nworkers; }

void gpu_cpu_set_interrupt(CpuDevice *d, const atomic_int *flag) { d->interrupt = flag; }

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
        free(w->scratch);
    }
    free(d->threads);
    free(d->workers);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->print_mu);
    for (size_t i = 0; i < d->nlines; i++) free(d->lines[i].text);
    free(d->lines);
    pthread_cond_destroy(&d->wake);
    pthread_cond_destroy(&d->done);
    free(d);
}

void gpu_cpu_set_output(CpuDevice *d, GpuCpuOutputFn fn, void *ctx) {
    d->output = fn;
    d->output_ctx = ctx;
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
    if (!l->thread_fn && !l->block_fn) {
        snprintf(err, errsize, "kernel has no entry point for the CPU device");
        return -1;
    }
    int64_t nblocks = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
    pthread_once(&handler_once, install_handler);
    if (!altstack_ready) { /* kept for the thread's life */
        void *altstack = ensure_altstack();
        if (altstack) (void)pthread_setspecific(launcher_altstack, altstack);
    }
    d->launch = l;
    d->nblocks = nblocks;
    atomic_store(&d->next_block, 0);
    atomic_store(&d->failed, 0);
    atomic_store(&d->interrupted, false);
    /* Small grids run on the launcher alone: waking the helpers costs ~10 µs,
    ** more than a few thousand loop iterations (barrier kernels pay ~40 ns per
    ** thread and barrier, so they go parallel sooner). */
    uint64_t min_threads = l->block_fn ? 16384 : 2048;
    bool parallel = d->nworkers > 1 && nblocks > 1 && (uint64_t)nblocks * threads >= min_threads;
    if (parallel && start_helpers(d) && d->nworkers > 1) {
        /* ~16 chunks per worker: balance without a fence per block */
        d->chunk = nblocks / ((int64_t)d->nworkers * 16);
        if (d->chunk < 1) d->chunk = 1;
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
        d->chunk = nblocks;
        work(d, &d->workers[0]);
    }
    flush_prints(d);
    int failed = atomic_load(&d->failed);
    d->launch = NULL;
    if (failed) {
        Worker *w = &d->workers[failed - 1];
        snprintf(err, errsize, "%s", w->err);
        if (!w->faulted) return -1;
        d->fault_addr = w->fault_addr;
        d->fault_access = w->fault_access;
        return GPU_CPU_FAULT;
    }
    if (atomic_load(&d->interrupted)) {
        snprintf(err, errsize, "interrupted");
        return GPU_CPU_INTERRUPTED;
    }
    return 0;
}
