/*
** test_threads.c — many VMs in one process (issue 13, "Many VMs"): two VMs
** on two threads run different programs at the same time, each defining
** @cuda.jit kernels and launching them many times on the CPU device (so
** both compile kernels concurrently), while a third thread creates, uses
** and frees VMs in a loop. Each program checks every launch against the
** formula; then the C side's own arithmetic checks the totals (an assert
** run in the VM). Two more VMs compile and store the same cached kernel in
** one cache directory at once; a last one reads it back. The VMs are independent: one thread per VM, and
** the threads' CHECKs run on the main thread after the joins.
*/
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"

enum { ROUNDS = 6, CHURN = 40 };

/* Program A: out[i] = a*x[i] + scale*y[i] with x = y = arange(1000), so
** sum(out) = (a + scale) * 499500 (sum of 0..999). A fresh kernel object per
** round (make) is compiled again: the two VMs compile while the other runs. */
static const char prog_a[] =
    "from numba import cuda\n"
    "import numpy as np\n"
    "def make(scale):\n"
    "    @cuda.jit\n"
    "    def axpy(a, x, y, out):\n"
    "        i = cuda.grid(1)\n"
    "        if i < out.size:\n"
    "            out[i] = a * x[i] + y[i] * scale\n"
    "    return axpy\n"
    "n = 1000\n"
    "x = np.arange(n, dtype=np.int64)\n"
    "y = np.arange(n, dtype=np.int64)\n"
    "out = np.zeros(n, dtype=np.int64)\n"
    "total = 0\n"
    "launches = 0\n"
    "for r in range(ROUNDS):\n"
    "    scale = r % 3 + 1\n"
    "    k = make(scale)\n"
    "    for a in range(20):\n"
    "        k[(n + 127) // 128, 128](a, x, y, out)\n"
    "        s = int(out.sum())\n"
    "        if s != (a + scale) * 499500:\n"
    "            raise ValueError('round %d a=%d: sum %d' % (r, a, s))\n"
    "        total += s\n"
    "        launches += 1\n";

/* Program B: a shared-memory tree sum per block of 64 equal values v, with
** barriers: each block gives 64 * v. */
static const char prog_b[] =
    "from numba import cuda, float64\n"
    "import numpy as np\n"
    "@cuda.jit\n"
    "def block_sum(x, out):\n"
    "    buf = cuda.shared.array(64, dtype=float64)\n"
    "    t = cuda.threadIdx.x\n"
    "    buf[t] = x[cuda.blockIdx.x * 64 + t]\n"
    "    cuda.syncthreads()\n"
    "    step = 32\n"
    "    while step > 0:\n"
    "        if t < step:\n"
    "            buf[t] += buf[t + step]\n"
    "        cuda.syncthreads()\n"
    "        step //= 2\n"
    "    if t == 0:\n"
    "        out[cuda.blockIdx.x] = buf[0]\n"
    "nb = 16\n"
    "total = 0.0\n"
    "launches = 0\n"
    "for r in range(ROUNDS * 10):\n"
    "    d = cuda.to_device(np.full(nb * 64, r * 0.5))\n"
    "    dout = cuda.device_array(nb)\n"
    "    block_sum[nb, 64](d, dout)\n"
    "    got = dout.copy_to_host()\n"
    "    for b in range(nb):\n"
    "        if got[b] != 32.0 * r:\n"
    "            raise ValueError('round %d block %d: %r' % (r, b, got[b]))\n"
    "    total += float(got.sum())\n"
    "    launches += 1\n";

/* Program C, run by two VMs at once with the same kernel cache directory:
** both compile the same cached kernel and store the same entry (written to
** a temporary file and renamed: never a torn file). out[i] = 3 * i + 1. */
static const char prog_cached[] =
    "from numba import cuda\n"
    "import numpy as np\n"
    "@cuda.jit(cache=True)\n"
    "def affine(x, out):\n"
    "    i = cuda.grid(1)\n"
    "    if i < out.size:\n"
    "        out[i] = 3 * x[i] + 1\n"
    "x = np.arange(256, dtype=np.int32)\n"
    "out = np.zeros(256, dtype=np.int32)\n"
    "for r in range(ROUNDS):\n"
    "    affine[2, 128](x, out)\n"
    "    assert int(out.sum()) == 3 * 32640 + 256, int(out.sum())  # 0+..+255 = 32640\n";

typedef struct Job {
    const char *source;
    const char *check;    /* run after source: the C side's expectation (or NULL) */
    const char *cache_dir;
    GpyStatus status;     /* of the first call that failed, else GPY_OK */
    char error[2048];     /* its traceback */
} Job;

static GpyVM *cpu_vm(const char *cache_dir) {
    GpyConfig c;
    gpy_config_init(&c);
    c.device = GPY_DEVICE_CPU;
    c.cpu_threads = 2;
    c.cache_dir = cache_dir;
    return gpy_new(&c);
}

/* Runs source as __main__; on failure keeps the status and traceback. */
static bool run(Job *job, GpyVM *vm, const char *source, const char *filename) {
    GpyStatus st = gpy_run_string(vm, NULL, source, (size_t)-1, filename);
    if (st == GPY_OK) return true;
    const char *tb = gpy_error_traceback(vm);
    job->status = st;
    snprintf(job->error, sizeof job->error, "%s: %s", gpy_status_name(st), tb ? tb : "");
    return false;
}

/* Runs job->source in a VM of its own, then job->check. */
static void *run_job(void *arg) {
    Job *job = arg;
    GpyVM *vm = cpu_vm(job->cache_dir);
    if (!vm) {
        job->status = GPY_OUT_OF_MEMORY;
        return NULL;
    }
    char head[32];
    snprintf(head, sizeof head, "ROUNDS = %d\n", ROUNDS);
    if (run(job, vm, head, "<head>") && run(job, vm, job->source, "<job>") && job->check)
        run(job, vm, job->check, "<check>");
    gpy_free(vm);
    return NULL;
}

/* Creates, uses and frees VMs while the others run; every fourth imports
** cuda (the compiler loader thread starts and is joined at gpy_free). */
static void *churn(void *arg) {
    Job *job = arg;
    for (int i = 0; i < CHURN && job->status == GPY_OK; i++) {
        GpyVM *vm = cpu_vm(NULL);
        if (!vm) {
            job->status = GPY_OUT_OF_MEMORY;
            break;
        }
        if (i % 4 == 0) /* 0 + 1 + ... + 9 */
            run(job, vm, "from numba import cuda\nimport numpy as np\nassert int(np.arange(10).sum()) == 45\n", "<churn>");
        else /* 0² + 1² + ... + 99² = 99·100·199/6 */
            run(job, vm, "assert sum([i * i for i in range(100)]) == 328350\n", "<churn>");
        gpy_free(vm);
    }
    return NULL;
}

int main(void) {
    /* A: rounds r with scale r%3+1 and a = 0..19: the sum of (a + scale) * 499500 */
    int64_t want_a = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < 20; k++) want_a += (int64_t)(k + r % 3 + 1) * 499500;
    /* B: 16 blocks of 32 r each for r = 0 .. 10*ROUNDS-1: 512 * (sum of r) */
    int rb = ROUNDS * 10;
    double want_b = 512.0 * (rb * (rb - 1) / 2);
    char check_a[160], check_b[160];
    snprintf(check_a, sizeof check_a, "assert launches == %d, launches\nassert total == %lld, total\n", ROUNDS * 20,
             (long long)want_a);
    snprintf(check_b, sizeof check_b, "assert launches == %d, launches\nassert total == %.1f, total\n", rb, want_b);

    char cache[] = "/tmp/gpy_test_threads_XXXXXX";
    CHECK(mkdtemp(cache) != NULL);

    Job jobs[6] = {
        {.source = prog_a, .check = check_a},
        {.source = prog_b, .check = check_b},
        {0}, /* churn */
        {.source = prog_cached, .cache_dir = cache},
        {.source = prog_cached, .cache_dir = cache},
        {.source = prog_cached, .cache_dir = cache}, /* afterwards: reads the entry back */
    };
    pthread_t t[5];
    for (int i = 0; i < 5; i++) CHECK(pthread_create(&t[i], NULL, i == 2 ? churn : run_job, &jobs[i]) == 0);
    for (int i = 0; i < 5; i++) pthread_join(t[i], NULL);
    run_job(&jobs[5]);
    for (int i = 0; i < 6; i++) {
        if (jobs[i].status != GPY_OK) fprintf(stderr, "job %d: %s\n", i, jobs[i].error);
        CHECK(jobs[i].status == GPY_OK);
    }

    /* the cache holds the kernel's one entry and no half-written file */
    int entries = 0, others = 0;
    DIR *d = opendir(cache);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".gpyk") == 0) entries++;
        else others++;
        char path[sizeof cache + 300];
        snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(cache);
    CHECK(entries == 1);
    CHECK(others == 0);
    return check_done("test_threads");
}
