/*
** test_threads.c — many VMs in one process (issue 13, "Many VMs"): two VMs
** on two threads run different programs at the same time, each defining
** @cuda.jit kernels and launching them many times on the CPU device (so
** both compile kernels concurrently), while a third thread creates, uses
** and frees VMs in a loop. Each program checks every launch against the
** formula; then the C side's own arithmetic checks the totals (an assert
** run in the VM). The VMs are independent: one thread per VM, and
** the threads' CHECKs run on the main thread after the joins.
*/
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

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

typedef struct Job {
    const char *source;
    const char *check;    /* run after source: the C side's expectation */
    GpyStatus status;     /* of the first call that failed, else GPY_OK */
    char error[2048];     /* its traceback */
} Job;

static GpyVM *cpu_vm(void) {
    GpyConfig c;
    gpy_config_init(&c);
    c.device = GPY_DEVICE_CPU;
    c.cpu_threads = 2;
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
    GpyVM *vm = cpu_vm();
    if (!vm) {
        job->status = GPY_OUT_OF_MEMORY;
        return NULL;
    }
    char head[32];
    snprintf(head, sizeof head, "ROUNDS = %d\n", ROUNDS);
    if (run(job, vm, head, "<head>") && run(job, vm, job->source, "<job>")) run(job, vm, job->check, "<check>");
    gpy_free(vm);
    return NULL;
}

/* Creates, uses and frees VMs while the others run; every fourth imports
** cuda (the compiler loader thread starts and is joined at gpy_free). */
static void *churn(void *arg) {
    Job *job = arg;
    for (int i = 0; i < CHURN && job->status == GPY_OK; i++) {
        GpyVM *vm = cpu_vm();
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

    Job a = {.source = prog_a, .check = check_a}, b = {.source = prog_b, .check = check_b}, c = {0};
    pthread_t ta, tb, tc;
    CHECK(pthread_create(&ta, NULL, run_job, &a) == 0);
    CHECK(pthread_create(&tb, NULL, run_job, &b) == 0);
    CHECK(pthread_create(&tc, NULL, churn, &c) == 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_join(tc, NULL);

    const Job *jobs[3] = {&a, &b, &c};
    for (int i = 0; i < 3; i++)
        if (jobs[i]->status != GPY_OK) fprintf(stderr, "job %c: %s\n", "abc"[i], jobs[i]->error);
    CHECK(a.status == GPY_OK);
    CHECK(b.status == GPY_OK);
    CHECK(c.status == GPY_OK);
    return check_done("test_threads");
}
