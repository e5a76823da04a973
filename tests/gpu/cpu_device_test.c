/*
** cpu_device_test.c — the CPU device runtime (gpu/cpu_device.c, gpu/fiber.c)
** alone, without the VM or LLVM: hand-written C functions with the
** CpuBlockFn / CpuThreadFn signatures stand in for compiled kernels.
**
** Checks: every (block, thread) runs exactly once for 1-D/2-D/3-D grids and
** blocks on both paths (block loop, fibers); barrier semantics (shared-memory
** reversal, tree reduction, threads that return early, syncthreads_count /
** _and / _or); per-block shared
** memory zeroed and isolated under parallel workers; 1, 2 and 4 workers;
** 1024-thread blocks; invalid launches give messages; repeated launches;
** out-of-bounds accesses to guarded buffers (gpu/guarded_mem.c) end the
** launch with GPU_CPU_FAULT, and the device keeps working.
** Prints "cpu_device_test: N checks passed" and exits 0, else lists failures.
*/
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/cpu_device.h"
#include "../../gpu/guarded_mem.h"

static int passed, failed;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (cond) passed++;                                               \
        else {                                                            \
            failed++;                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                   \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
        }                                                                 \
    } while (0)

/* What the test kernels share with the host: params[0] points to a Args *. */
typedef struct Args {
    atomic_int *count;      /* one counter per global thread (linear) */
    int32_t *in, *out;
    atomic_int *bad;        /* incremented on any inconsistency seen inside a kernel */
    size_t smem_ints;       /* shared memory, in int32s */
    int32_t expect_block[3], expect_grid[3];
} Args;

static int64_t block_linear(const KernelCtx *c) {
    return c->ctaid[0] + (int64_t)c->nctaid[0] * (c->ctaid[1] + (int64_t)c->nctaid[1] * c->ctaid[2]);
}
static int64_t thread_linear(const KernelCtx *c) {
    return c->tid[0] + (int64_t)c->ntid[0] * (c->tid[1] + (int64_t)c->ntid[1] * c->tid[2]);
}
static int64_t block_threads(const KernelCtx *c) { return (int64_t)c->ntid[0] * c->ntid[1] * c->ntid[2]; }

/* Checks the dimensions the runtime hands to the kernel. */
static void check_dims(const KernelCtx *c, Args *a) {
    for (int k = 0; k < 3; k++)
        if (c->ntid[k] != a->expect_block[k] || c->nctaid[k] != a->expect_grid[k] || c->ctaid[k] < 0 ||
            c->ctaid[k] >= c->nctaid[k])
            atomic_fetch_add(a->bad, 1);
}

/* Block-loop kernel: counts each thread and checks the block's shared memory
** starts zeroed and stays its own while other workers run other blocks. */
static void count_block(KernelCtx *c, void **params) {
    Args *a = *(Args **)params[0];
    check_dims(c, a);
    int32_t *sm = (int32_t *)c->smem;
    int32_t tag = (int32_t)block_linear(c) + 1;
    for (size_t i = 0; i < a->smem_ints; i++) {
        if (sm[i] != 0) atomic_fetch_add(a->bad, 1);
        sm[i] = tag;
    }
    KernelCtx t = *c;
    for (int z = 0; z < c->ntid[2]; z++)
        for (int y = 0; y < c->ntid[1]; y++)
            for (int x = 0; x < c->ntid[0]; x++) {
                t.tid[0] = x, t.tid[1] = y, t.tid[2] = z;
                atomic_fetch_add(&a->count[block_linear(c) * block_threads(c) + thread_linear(&t)], 1);
            }
    for (size_t i = 0; i < a->smem_ints; i++)
        if (((volatile int32_t *)sm)[i] != tag) atomic_fetch_add(a->bad, 1);
}

/* Fiber kernel: counts each thread, with barriers between the phases. */
static void count_thread(KernelCtx *c, void **params) {
    Args *a = *(Args **)params[0];
    check_dims(c, a);
    int64_t tl = thread_linear(c), n = block_threads(c);
    int32_t *sm = (int32_t *)c->smem;
    if (a->smem_ints >= (size_t)n) {
        if (sm[tl] != 0) atomic_fetch_add(a->bad, 1);
        sm[tl] = (int32_t)block_linear(c) + 1;
    }
    gpy_cpu_syncthreads(c);
    if (a->smem_ints >= (size_t)n)
        for (int64_t i = 0; i < n; i++)
            if (sm[i] != (int32_t)block_linear(c) + 1) atomic_fetch_add(a->bad, 1);
    atomic_fetch_add(&a->count[block_linear(c) * n + tl], 1);
    gpy_cpu_syncthreads(c);
}

/* smem[tid] = in[gid]; barrier; out[gid] = smem[n-1-tid]. */
static void reverse_kernel(KernelCtx *c, void **params) {
    Args *a = *(Args **)params[0];
    int64_t n = block_threads(c), tl = thread_linear(c), g = block_linear(c) * n + tl;
    int32_t *sm = (int32_t *)c->smem;
    sm[tl] = a->in[g];
    gpy_cpu_syncthreads(c);
    a->out[g] = sm[n - 1 - tl];
}

/* Tree reduction over a power-of-two block: log2(n) barriers. */
static void reduce_kernel(KernelCtx *c, void **params) {
    Args *a = *(Args **)params[0];
    int64_t n = block_threads(c), tl = thread_linear(c), g = block_linear(c) * n + tl;
    int32_t *sm = (int32_t *)c->smem;
    sm[tl] = a->in[g];
    gpy_cpu_syncthreads(c);
    for (int64_t s = n / 2; s > 0; s >>= 1) {
        if (tl < s) sm[tl] += sm[tl + s];
        gpy_cpu_syncthreads(c);
    }
    if (tl == 0) a->out[block_linear(c)] = sm[0];
}

/* The upper half of the block returns after the first barrier; the lower
** half goes on through three more barriers and must not wait for them. */
static void early_return_kernel(KernelCtx *c, void **params) {
    Args *a = *(Args **)params[0];
    int64_t n = block_threads(c), tl = thread_linear(c), g = block_linear(c) * n + tl;
    int32_t *sm = (int32_t *)c->smem;
    sm[tl] = (int32_t)tl;
    gpy_cpu_syncthreads(c);
    if (tl >= n / 2) {
        a->out[g] = -1;
        return;
    }
    int32_t v = sm[tl] + sm[tl + n / 2];
    gpy_cpu_syncthreads(c);
    sm[tl] = v * 2;
    gpy_cpu_syncthreads(c);
    a->out[g] = sm[n / 2 - 1 - tl];
    gpy_cpu_syncthreads(c);
}

/* syncthreads_count / _and / _or, several in a row (their result slots are
** reused by parity): out[g*5 + k] holds call k's result seen by thread g. */
static void reduce_pred_kernel(KernelCtx *c, void **params) {
    Args *a = *(Args **)params[0];
    int64_t n = block_threads(c), tl = thread_linear(c), g = block_linear(c) * n + tl;
    int32_t *o = a->out + g * 5;
    o[0] = gpy_cpu_syncthreads_reduce(c, tl % 3 == 0, 0);
    o[1] = gpy_cpu_syncthreads_reduce(c, tl < n, 1);
    o[2] = gpy_cpu_syncthreads_reduce(c, tl != n / 2, 1);
    o[3] = gpy_cpu_syncthreads_reduce(c, tl == n - 1, 2);
    o[4] = gpy_cpu_syncthreads_reduce(c, (int32_t)(tl * 7 + block_linear(c)), 0);
}

/* Launches the counting kernels on one shape and checks every thread ran once. */
static void check_coverage(CpuDevice *d, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                           uint32_t bz, bool barrier, size_t smem_ints) {
    int64_t nthreads = (int64_t)gx * gy * gz * bx * by * bz;
    atomic_int bad = 0;
    Args a = {.count = calloc((size_t)nthreads, sizeof(atomic_int)), .bad = &bad, .smem_ints = smem_ints,
              .expect_block = {(int32_t)bx, (int32_t)by, (int32_t)bz},
              .expect_grid = {(int32_t)gx, (int32_t)gy, (int32_t)gz}};
    Args *ap = &a;
    void *params[1] = {&ap};
    CpuLaunch l = {.grid = {gx, gy, gz}, .block = {bx, by, bz}, .shared_bytes = smem_ints * 4,
                   .block_fn = barrier ? NULL : count_block, .thread_fn = count_thread,
                   .uses_barrier = barrier, .params = params};
    char err[256] = "";
    int rc = gpu_cpu_launch(d, &l, err, sizeof err);
    CHECK(rc == 0, "launch grid (%u,%u,%u) block (%u,%u,%u) %s: %s", gx, gy, gz, bx, by, bz,
          barrier ? "fibers" : "loop", err);
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < nthreads; i++)
        if (atomic_load(&a.count[i]) != 1) {
            if (first < 0) first = i;
            wrong++;
        }
    CHECK(wrong == 0, "grid (%u,%u,%u) block (%u,%u,%u) %s workers %d: %lld threads ran != once (first %lld ran %d)",
          gx, gy, gz, bx, by, bz, barrier ? "fibers" : "loop", gpu_cpu_workers(d), (long long)wrong,
          (long long)first, first >= 0 ? atomic_load(&a.count[first]) : 0);
    CHECK(atomic_load(&bad) == 0, "grid (%u,%u,%u) block (%u,%u,%u) %s: %d dimension/shared-memory inconsistencies",
          gx, gy, gz, bx, by, bz, barrier ? "fibers" : "loop", atomic_load(&bad));
    free(a.count);
}

/* Runs a barrier kernel over nblocks 1-D blocks of n threads with in[i] = f(i). */
static int run_barrier(CpuDevice *d, CpuThreadFn fn, uint32_t nblocks, uint32_t n, int32_t *in, int32_t *out) {
    Args a = {.in = in, .out = out};
    Args *ap = &a;
    void *params[1] = {&ap};
    CpuLaunch l = {.grid = {nblocks, 1, 1}, .block = {n, 1, 1}, .shared_bytes = n * 4, .thread_fn = fn,
                   .uses_barrier = true, .params = params};
    char err[256] = "";
    int rc = gpu_cpu_launch(d, &l, err, sizeof err);
    if (rc) printf("launch error: %s\n", err);
    return rc;
}

static void check_barriers(CpuDevice *d, uint32_t nblocks, uint32_t n) {
    size_t total = (size_t)nblocks * n;
    int32_t *in = malloc(total * 4), *out = malloc(total * 4);
    for (size_t i = 0; i < total; i++) in[i] = (int32_t)((i * 7919) % 1000) - 300;

    memset(out, 0x55, total * 4);
    CHECK(run_barrier(d, reverse_kernel, nblocks, n, in, out) == 0, "reverse launch");
    size_t bad = 0;
    for (size_t b = 0; b < nblocks; b++)
        for (size_t t = 0; t < n; t++)
            if (out[b * n + t] != in[b * n + (n - 1 - t)]) bad++;
    CHECK(bad == 0, "reverse %u blocks x %u threads (workers %d): %zu wrong", nblocks, n, gpu_cpu_workers(d), bad);

    if ((n & (n - 1)) == 0) {
        memset(out, 0, total * 4);
        CHECK(run_barrier(d, reduce_kernel, nblocks, n, in, out) == 0, "reduce launch");
        bad = 0;
        for (size_t b = 0; b < nblocks; b++) {
            int64_t s = 0;
            for (size_t t = 0; t < n; t++) s += in[b * n + t];
            if (out[b] != s) bad++;
        }
        CHECK(bad == 0, "tree reduction %u blocks x %u threads (workers %d): %zu wrong sums", nblocks, n,
              gpu_cpu_workers(d), bad);
    }

    if (n >= 2 && n % 2 == 0) {
        memset(out, 0x55, total * 4);
        CHECK(run_barrier(d, early_return_kernel, nblocks, n, in, out) == 0, "early-return launch");
        bad = 0;
        uint32_t h = n / 2;
        for (size_t b = 0; b < nblocks; b++)
            for (uint32_t t = 0; t < n; t++) {
                /* lower thread t reads sm[h-1-t] = 2 * ((h-1-t) + (h-1-t+h)) */
                int32_t want = t >= h ? -1 : (int32_t)(2 * (2 * (h - 1 - t) + h));
                if (out[b * n + t] != want) bad++;
            }
        CHECK(bad == 0, "early return %u blocks x %u threads: %zu wrong", nblocks, n, bad);
    }
    free(in);
    free(out);
}

/* Invalid launches fail with a message and never run the kernel. */
static void check_invalid(CpuDevice *d) {
    static const uint32_t shapes[][6] = {
        {0, 1, 1, 32, 1, 1}, {1, 0, 1, 32, 1, 1}, {1, 1, 0, 32, 1, 1}, {4, 1, 1, 0, 1, 1},
        {4, 1, 1, 1, 0, 1},  {4, 1, 1, 1, 1, 0},  {1, 1, 1, 1025, 1, 1}, {1, 1, 1, 32, 32, 2},
        {1, 1, 1, 1, 1, 65},
    };
    atomic_int bad = 0;
    Args a = {.count = calloc(1 << 16, sizeof(atomic_int)), .bad = &bad};
    Args *ap = &a;
    void *params[1] = {&ap};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const uint32_t *s = shapes[i];
        CpuLaunch l = {.grid = {s[0], s[1], s[2]}, .block = {s[3], s[4], s[5]}, .block_fn = count_block,
                       .thread_fn = count_thread, .params = params};
        char err[256] = "";
        int rc = gpu_cpu_launch(d, &l, err, sizeof err);
        CHECK(rc == -1 && strlen(err) > 10, "invalid grid (%u,%u,%u) block (%u,%u,%u): rc %d, err '%s'", s[0], s[1],
              s[2], s[3], s[4], s[5], rc, err);
    }
    /* (a barrier kernel with a block_fn is one the compiler split into
    ** regions: it runs like any block function) */
    CpuLaunch none = {.grid = {1, 1, 1}, .block = {1, 1, 1}, .uses_barrier = true, .params = params};
    char err[256] = "";
    CHECK(gpu_cpu_launch(d, &none, err, sizeof err) == -1 && strstr(err, "entry point"),
          "barrier kernel without an entry point: '%s'", err);
    int ran = 0;
    for (int i = 0; i < 1 << 16; i++) ran += atomic_load(&a.count[i]);
    CHECK(ran == 0, "invalid launches ran %d threads", ran);
    free(a.count);
}

/* The barrier reductions agree with the counts computed here. */
static void check_reduce_pred(CpuDevice *d, uint32_t nblocks, uint32_t n) {
    int32_t *out = calloc((size_t)nblocks * n * 5, sizeof(int32_t));
    Args a = {.out = out};
    Args *ap = &a;
    void *params[1] = {&ap};
    CpuLaunch l = {.grid = {nblocks, 1, 1}, .block = {n, 1, 1}, .thread_fn = reduce_pred_kernel,
                   .uses_barrier = true, .params = params};
    char err[256] = "";
    CHECK(gpu_cpu_launch(d, &l, err, sizeof err) == 0, "syncthreads_reduce launch: %s", err);
    size_t bad = 0;
    for (uint32_t b = 0; b < nblocks; b++) {
        int32_t want[5] = {(int32_t)((n + 2) / 3), 1, 0, 1, 0};
        for (uint32_t t = 0; t < n; t++) want[4] += (t * 7 + b) != 0;
        for (uint32_t t = 0; t < n; t++)
            for (int k = 0; k < 5; k++)
                if (out[((size_t)b * n + t) * 5 + k] != want[k]) bad++;
    }
    CHECK(bad == 0, "syncthreads_count/and/or %u blocks x %u threads: %zu wrong", nblocks, n, bad);
    free(out);
}

/* A block function as the compiler emits for a barrier kernel split into
** regions: it asks for smem_ints int64s of scratch per thread, fills them in
** one loop over the threads and checks them in a second. */
static void scratch_block(KernelCtx *c, void **params) {
    Args *a = *(Args **)params[0];
    int64_t n = block_threads(c), per = (int64_t)a->smem_ints;
    int64_t *s = gpy_cpu_scratch(c, n * per * 8);
    if (!s || (uintptr_t)s % 64) {
        atomic_fetch_add(a->bad, 1);
        return;
    }
    for (int64_t t = 0; t < n; t++)
        for (int64_t k = 0; k < per; k++) s[k * n + t] = block_linear(c) * 1000003 + t * 31 + k;
    for (int64_t t = 0; t < n; t++) {
        int64_t sum = 0;
        for (int64_t k = 0; k < per; k++) sum += s[k * n + t] == block_linear(c) * 1000003 + t * 31 + k;
        if (sum != per) atomic_fetch_add(a->bad, 1);
        else atomic_fetch_add(&a->count[block_linear(c) * n + t], 1);
    }
}

/* The per-worker scratch of region kernels: aligned, private to the block
** being run, grown on demand across launches. */
static void check_scratch(CpuDevice *d) {
    static const uint32_t shapes[][3] = {{1, 1, 1}, {200, 256, 4}, {3, 1024, 32}, {1000, 32, 2}, {64, 1024, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        uint32_t nb = shapes[i][0], nt = shapes[i][1];
        atomic_int bad = 0;
        Args a = {.count = calloc((size_t)nb * nt, sizeof(atomic_int)), .bad = &bad, .smem_ints = shapes[i][2]};
        Args *ap = &a;
        void *params[1] = {&ap};
        CpuLaunch l = {.grid = {nb, 1, 1}, .block = {nt, 1, 1}, .block_fn = scratch_block, .uses_barrier = true,
                       .params = params};
        char err[256] = "";
        CHECK(gpu_cpu_launch(d, &l, err, sizeof err) == 0, "scratch launch: %s", err);
        int64_t wrong = 0;
        for (int64_t t = 0; t < (int64_t)nb * nt; t++) wrong += atomic_load(&a.count[t]) != 1;
        CHECK(wrong == 0 && atomic_load(&bad) == 0, "scratch %u blocks x %u threads x %u: %lld wrong, %d bad", nb,
              nt, shapes[i][2], (long long)wrong, atomic_load(&bad));
        free(a.count);
    }
}

/* Everything above on one device. */
/* Out-of-bounds kernels: params[0] = float *buf, params[1] = int64 offset,
** params[2] = threads that write (the others only run). */
static void poke_one(KernelCtx *c, void **params, int64_t t) {
    float *buf = *(float **)params[0];
    int64_t off = *(int64_t *)params[1], n = *(int64_t *)params[2];
    int64_t i = block_linear(c) * block_threads(c) + t;
    if (i < n) buf[i + off] = (float)i;
}
static void poke_block(KernelCtx *c, void **params) {
    for (int64_t t = 0; t < block_threads(c); t++) poke_one(c, params, t);
}
static void poke_thread(KernelCtx *c, void **params) {
    gpy_cpu_syncthreads(c);
    poke_one(c, params, thread_linear(c));
}
static void peek_block(KernelCtx *c, void **params) {
    float *buf = *(float **)params[0];
    int64_t off = *(int64_t *)params[1];
    volatile float x = buf[off];
    (void)x;
    (void)c;
}

static int poke(CpuDevice *d, CpuBlockFn bf, CpuThreadFn tf, float *buf, int64_t off, int64_t n, uint32_t blocks,
                uint32_t threads) {
    void *params[3] = {&buf, &off, &n};
    CpuLaunch l = {.grid = {blocks, 1, 1}, .block = {threads, 1, 1}, .block_fn = bf, .thread_fn = tf,
                   .uses_barrier = tf != NULL, .params = params};
    char err[256] = "";
    return gpu_cpu_launch(d, &l, err, sizeof err);
}

static void check_faults(CpuDevice *d) {
    enum { N = 1000 };
    GuardedBuf *g = guarded_alloc(N * sizeof(float), sizeof(float), true), *big = guarded_alloc(1 << 20, 4, true);
    CHECK(g && guarded_is_fenced(g) && big && guarded_is_fenced(big), "guarded_alloc");
    if (!g || !big) return;
    float *buf = guarded_data(g);
    int access = -1;
    void *data;
    size_t bytes;
    /* past the end: block loop and fibers, small and parallel grids */
    for (int fibers = 0; fibers < 2; fibers++) {
        CpuBlockFn bf = fibers ? NULL : poke_block;
        CpuThreadFn tf = fibers ? poke_thread : NULL;
        CHECK(poke(d, bf, tf, buf, 1, N, 8, 128) == GPU_CPU_FAULT, "a[i + 1] faults (fibers %d)", fibers);
        void *at = gpu_cpu_fault_addr(d, &access);
        CHECK(at == buf + N, "fault at a[N] (fibers %d): %p, a[N] is %p", fibers, at, (void *)(buf + N));
#if defined(__x86_64__)
        CHECK(access == GPU_CPU_ACCESS_WRITE, "the fault is a write (fibers %d)", fibers);
#endif
        CHECK(guarded_find(at, &data, &bytes) && data == buf && bytes == N * sizeof(float),
              "the fault address is attributed to the buffer");
        CHECK(poke(d, bf, tf, buf, 0, N, 8, 128) == 0, "a launch after a fault runs (fibers %d)", fibers);
        bool right = true;
        for (int i = 0; i < N; i++) right = right && buf[i] == (float)i;
        CHECK(right, "a launch after a fault writes the right values (fibers %d)", fibers);
    }
    float *b = guarded_data(big);
    int64_t nb = (1 << 20) / 4;
    CHECK(poke(d, poke_block, NULL, b, nb / 2, nb, (uint32_t)(nb / 256), 256) == GPU_CPU_FAULT,
          "a parallel grid overshooting by half its size faults");
    CHECK(poke(d, poke_block, NULL, b, 0, nb, (uint32_t)(nb / 256), 256) == 0 && b[nb - 1] == (float)(nb - 1),
          "a parallel grid after a fault");
    CHECK(poke(d, peek_block, NULL, buf, N + 5, 1, 1, 1) == GPU_CPU_FAULT, "a read past the end faults");
    gpu_cpu_fault_addr(d, &access);
#if defined(__x86_64__)
    CHECK(access == GPU_CPU_ACCESS_READ, "the fault is a read");
#endif
    CHECK(poke(d, peek_block, NULL, buf, -(int64_t)(1 << 21), 1, 1, 1) == GPU_CPU_FAULT, "a read 8 MiB below faults");
    /* just below the start: the redzone records it */
    CHECK(guarded_redzone_clean(g), "redzone clean");
    CHECK(poke(d, poke_block, NULL, buf, -3, 2, 1, 2) == 0, "a[-3] and a[-2] land in the redzone");
    CHECK(!guarded_redzone_clean(g) && guarded_redzone_clean(g), "the redzone saw it and was cleaned");
    guarded_free(g);
    guarded_free(big);
    /* freed small buffers are reused, with zeroed data and a clean redzone */
    GuardedBuf *h = guarded_alloc(100, 8, false);
    float *hd = guarded_data(h);
    hd[-1] = 1.0f;
    guarded_free(h);
    h = guarded_alloc(100, 8, true);
    bool zero = ((float *)guarded_data(h))[0] == 0.0f && guarded_redzone_clean(h);
    CHECK(zero, "a reused slot starts clean");
    guarded_free(h);
}

static void check_device(CpuDevice *d) {
    /* 1-D, 2-D, 3-D grids and blocks; small (launcher only) and large (all workers) */
    static const uint32_t shapes[][6] = {
        {1, 1, 1, 1, 1, 1},    {1, 1, 1, 32, 1, 1},   {7, 1, 1, 33, 1, 1},   {1000, 1, 1, 128, 1, 1},
        {5, 3, 1, 8, 4, 1},    {64, 32, 1, 16, 16, 1}, {3, 4, 5, 4, 3, 2},    {16, 8, 4, 8, 4, 2},
        {2, 1, 1, 32, 32, 1},  {300, 1, 1, 1024, 1, 1}, {1, 1, 1, 1024, 1, 1}, {9, 1, 1, 16, 1, 64},
        {4096, 1, 1, 1, 1, 1}, {65537, 1, 1, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int barrier = 0; barrier < 2; barrier++) {
            const uint32_t *s = shapes[i];
            size_t smem = barrier ? (size_t)s[3] * s[4] * s[5] : 64;
            check_coverage(d, s[0], s[1], s[2], s[3], s[4], s[5], barrier, smem);
        }
    check_barriers(d, 1, 1);
    check_barriers(d, 1, 2);
    check_barriers(d, 3, 96);
    check_barriers(d, 200, 64);
    check_barriers(d, 37, 1024);
    check_barriers(d, 500, 256);
    check_invalid(d);
    check_scratch(d);
    check_reduce_pred(d, 1, 1);
    check_reduce_pred(d, 5, 33);
    check_reduce_pred(d, 300, 128);
    check_reduce_pred(d, 8, 1024);

    /* repeated launches alternate paths and shared sizes (buffers regrow, stay zeroed) */
    for (int r = 0; r < 60; r++) {
        bool barrier = r % 2;
        uint32_t bx = 1u << (r % 11);
        size_t smem = barrier ? bx : (size_t)(r * 37 % 2000);
        check_coverage(d, 50 + (uint32_t)r, 1, 1, bx, 1, 1, barrier, smem);
        if (r % 10 == 0) check_barriers(d, 20, bx < 2 ? 2 : bx);
    }
}

/* Interrupts: block 5 sets the device's interrupt flag itself (as another
** thread would), so the launch must stop taking blocks soon after, return
** GPU_CPU_INTERRUPTED, and leave the flag to its owner; cleared, the next
** launch runs every block. */
static atomic_int interrupt_flag;
static atomic_int blocks_ran;
static void interrupting_block(KernelCtx *ctx, void **params) {
    (void)params;
    if (block_linear(ctx) == 5) atomic_store(&interrupt_flag, 1);
    atomic_fetch_add(&blocks_ran, 1);
}

static void check_interrupt(CpuDevice *d) {
    gpu_cpu_set_interrupt(d, &interrupt_flag);
    CpuLaunch l = {.grid = {100000, 1, 1}, .block = {64, 1, 1}, .block_fn = interrupting_block};
    char err[256] = "";
    atomic_store(&interrupt_flag, 0);
    atomic_store(&blocks_ran, 0);
    int rc = gpu_cpu_launch(d, &l, err, sizeof err);
    CHECK(rc == GPU_CPU_INTERRUPTED, "interrupted launch returned %d (%s)", rc, err);
    CHECK(atomic_load(&blocks_ran) < 100000, "interrupted launch ran all %d blocks", atomic_load(&blocks_ran));
    CHECK(atomic_load(&interrupt_flag) == 1, "the device cleared the flag it does not own");
    atomic_store(&interrupt_flag, 0);
    /* a plain launch afterwards: the device is usable */
    atomic_int bad = 0;
    Args a = {.count = calloc(64 * 100, sizeof(atomic_int)), .bad = &bad, .expect_block = {64, 1, 1},
              .expect_grid = {100, 1, 1}};
    Args *ap = &a;
    void *params[1] = {&ap};
    l.block_fn = count_block;
    l.grid[0] = 100;
    l.params = params;
    rc = gpu_cpu_launch(d, &l, err, sizeof err);
    int wrong = 0;
    for (int i = 0; i < 64 * 100; i++) wrong += atomic_load(&a.count[i]) != 1;
    CHECK(rc == 0 && wrong == 0 && atomic_load(&bad) == 0, "launch after an interrupt: rc %d, %d threads ran != once",
          rc, wrong);
    free(a.count);
    gpu_cpu_set_interrupt(d, NULL);
}

int main(void) {
    static const int workers[] = {1, 2, 4};
    for (size_t i = 0; i < 3; i++) {
        CpuDevice *d = gpu_cpu_new(workers[i], 0);
        CHECK(d != NULL, "gpu_cpu_new");
        if (!d) continue;
        CHECK(gpu_cpu_workers(d) == workers[i], "gpu_cpu_new(%d) gave %d workers", workers[i], gpu_cpu_workers(d));
        check_device(d);
        check_interrupt(d);
        if (i == 2) check_faults(d); /* the launcher and three helpers */
        gpu_cpu_free(d);
    }
    /* the default: one worker per core; a device that never launched frees cleanly */
    CpuDevice *d = gpu_cpu_new(0, 0);
    CHECK(d && gpu_cpu_workers(d) >= 1, "default worker count");
    if (d) {
        check_coverage(d, 2000, 1, 1, 64, 1, 1, false, 16);
        check_coverage(d, 2000, 1, 1, 64, 1, 1, true, 64);
    }
    gpu_cpu_free(d);
    gpu_cpu_free(gpu_cpu_new(3, 0));

    /* fiber stacks that cannot be mapped (1 TiB each x 1024 threads): an error, not a crash */
    d = gpu_cpu_new(1, (size_t)1 << 40);
    CHECK(d != NULL, "gpu_cpu_new(1) with 1 TiB fiber stacks (stacks are made at launch)");
    if (d) {
        int32_t in[1024] = {0}, out[1024];
        Args a = {.in = in, .out = out};
        Args *ap = &a;
        void *params[1] = {&ap};
        CpuLaunch l = {.grid = {1, 1, 1}, .block = {1024, 1, 1}, .shared_bytes = 4096, .thread_fn = reverse_kernel,
                       .uses_barrier = true, .params = params};
        char err[256] = "";
        CHECK(gpu_cpu_launch(d, &l, err, sizeof err) == -1 && strstr(err, "fiber stacks"),
              "stack allocation failure: got [%s]", err);
        gpu_cpu_free(d);
    }

    if (failed) {
        printf("cpu_device_test: %d of %d checks FAILED\n", failed, passed + failed);
        return 1;
    }
    printf("cpu_device_test: %d checks passed\n", passed);
    return 0;
}
