/*
** test_interrupt.c — interrupting a running VM and the budget hook
** (include/gpy.h: gpy_interrupt, GpyConfig.hook / hook_every / time_budget).
**
** Each interrupt comes from outside the running script: another thread, or
** a signal handler the application installed. The script first creates a
** file; the interrupting thread waits for that file, so the request always
** arrives while the script runs (no timing assumption). After every
** interrupt the same VM must run the next program normally.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "gpy.h"

static char ready_path[256];

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs src with READY replaced by the ready file's path. */
static GpyStatus run_with_ready(GpyVM *vm, const char *src) {
    char buf[4096];
    const char *at = strstr(src, "READY");
    if (!at) return gpy_run_string(vm, NULL, src, (size_t)-1, "<test>");
    snprintf(buf, sizeof buf, "%.*s'%s'%s", (int)(at - src), src, ready_path, at + 5);
    return gpy_run_string(vm, NULL, buf, (size_t)-1, "<test>");
}

typedef struct Interrupter {
    GpyVM *vm;
    long settle_ms;        /* after the file appears: let the script reach its long part */
    pthread_t signal_to;   /* when set (use_signal): send SIGUSR1 there instead of calling gpy_interrupt */
    bool use_signal;
} Interrupter;

static void *interrupter_main(void *arg) {
    Interrupter *in = arg;
    while (access(ready_path, F_OK) != 0) sleep_ms(1);
    if (in->settle_ms) sleep_ms(in->settle_ms);
    if (in->use_signal) pthread_kill(in->signal_to, SIGUSR1);
    else gpy_interrupt(in->vm);
    return NULL;
}

/* Runs src (which creates READY) while a thread interrupts it. */
static GpyStatus run_interrupted(GpyVM *vm, const char *src, long settle_ms, bool use_signal) {
    unlink(ready_path);
    Interrupter in = {vm, settle_ms, pthread_self(), use_signal};
    pthread_t t;
    if (pthread_create(&t, NULL, interrupter_main, &in) != 0) {
        fprintf(stderr, "cannot start the interrupting thread\n");
        exit(1);
    }
    GpyStatus st = run_with_ready(vm, src);
    pthread_join(t, NULL);
    unlink(ready_path);
    return st;
}

/* --- an application's own signal handler forwarding to its VM */
static GpyVM *signal_vm;
static void on_usr1(int sig) {
    (void)sig;
    gpy_interrupt(signal_vm); /* async-signal-safe */
}

/* --- budget hooks */
static int hook_calls;
static bool stop_at_fifth_call(GpyVM *vm, void *user) {
    CHECK(user == &hook_calls);
    CHECK(vm != NULL);
    return ++hook_calls < 5;
}
static bool stop_at_second_call(GpyVM *vm, void *user) {
    (void)vm;
    (void)user;
    return ++hook_calls < 2;
}

static void check_interrupted(GpyVM *vm, GpyStatus st) {
    CHECK(st == GPY_INTERRUPTED);
    CHECK_STR(gpy_error_type(vm), "KeyboardInterrupt");
    CHECK_STR(gpy_error_message(vm), ""); /* str(KeyboardInterrupt()) */
}

int main(void) {
    snprintf(ready_path, sizeof ready_path, "/tmp/gpy_test_interrupt_%ld.ready", (long)getpid());

    /* 1. host code: an infinite loop, interrupted from another thread */
    struct sigaction before;
    sigaction(SIGINT, NULL, &before);
    GpyVM *vm = gpy_new(NULL);
    CHECK(vm != NULL);
    if (!vm) return check_done("test_interrupt");
    struct sigaction after;
    sigaction(SIGINT, NULL, &after);
    CHECK(after.sa_handler == before.sa_handler); /* a library VM installs no SIGINT handler */
    sigaction(SIGPIPE, NULL, &after);
    CHECK(after.sa_handler == SIG_DFL);

    check_interrupted(vm, run_interrupted(vm, "open(READY, 'w').close()\nwhile True:\n    pass\n", 0, false));
    /* the traceback names the loop's line, as CPython's does */
    const char *tb = gpy_error_traceback(vm);
    CHECK(tb && strstr(tb, "line 3") && strstr(tb, "KeyboardInterrupt"));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "total = sum(range(10))\nassert total == 45\n", (size_t)-1, NULL));

    /* a try/finally in the script runs, and except KeyboardInterrupt catches it */
    CHECK_OK(vm, run_interrupted(vm,
                                 "caught = False\n"
                                 "try:\n"
                                 "    open(READY, 'w').close()\n"
                                 "    while True:\n"
                                 "        pass\n"
                                 "except KeyboardInterrupt:\n"
                                 "    caught = True\n"
                                 "assert caught\n",
                                 0, false));

    /* 2. the same from the application's own signal handler */
    signal_vm = vm;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    check_interrupted(vm, run_interrupted(vm, "open(READY, 'w').close()\nwhile True:\n    pass\n", 0, true));
    /* a time.sleep ends too (the signal interrupts it; a request from a thread is seen between slices) */
    check_interrupted(vm, run_interrupted(vm, "import time\nopen(READY, 'w').close()\ntime.sleep(1000)\n", 0, true));
    check_interrupted(vm, run_interrupted(vm, "import time\nopen(READY, 'w').close()\ntime.sleep(1000)\n", 0, false));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "x = [i * i for i in range(1000)]\nassert x[-1] == 998001\n", (size_t)-1, NULL));

    /* 3. a long CPU-device kernel, interrupted between blocks. The launch
    ** stops: some blocks wrote their results, the rest never ran; then the
    ** device runs the next launch normally. */
    GpyConfig config;
    gpy_config_init(&config);
    config.device = GPY_DEVICE_CPU;
    GpyVM *kvm = gpy_new(&config);
    CHECK(kvm != NULL);
    if (kvm) {
        CHECK_OK(kvm, gpy_run_string(kvm, NULL,
                                     "from numba import cuda\n"
                                     "import numpy as np\n"
                                     "@cuda.jit\n"
                                     "def spin(out, n):\n"
                                     "    i = cuda.grid(1)\n"
                                     "    s = 1\n"
                                     "    for k in range(n):\n"
                                     "        s += k % 7\n"
                                     "    out[i] = s\n"
                                     "out = cuda.to_device(np.zeros(64 * 2000, dtype=np.int64))\n"
                                     "warm = cuda.device_array(64, dtype=np.int64)\n"
                                     "spin[1, 64](warm, 10)\n",
                                     (size_t)-1, NULL));
        /* each thread takes about a millisecond, the grid minutes: the
        ** launch stops early (threads that ran wrote a non-zero result) */
        check_interrupted(kvm, run_interrupted(kvm, "open(READY, 'w').close()\nspin[2000, 64](out, 1000000)\n", 200,
                                               false));
        CHECK_OK(kvm, gpy_run_string(kvm, NULL,
                                     "done = int((out.copy_to_host() != 0).sum())\n"
                                     "assert done < 64 * 2000, done\n"
                                     "small = cuda.to_device(np.zeros(64, dtype=np.int64))\n"
                                     "spin[1, 64](small, 10)\n"
                                     "assert [int(v) for v in small.copy_to_host()[:3]] == [25, 25, 25]\n",
                                     (size_t)-1, NULL));
        gpy_free(kvm);
    }

    /* 4. a budget hook: called every 1000 instructions, stops the script at its fifth call */
    gpy_config_init(&config);
    config.hook = stop_at_fifth_call;
    config.hook_every = 1000;
    config.user_data = &hook_calls;
    GpyVM *hvm = gpy_new(&config);
    CHECK(hvm != NULL);
    if (hvm) {
        hook_calls = 0;
        check_interrupted(hvm, gpy_run_string(hvm, NULL, "i = 0\nwhile True:\n    i += 1\n", (size_t)-1, NULL));
        CHECK(hook_calls == 5);
        /* 5 x 1000 instructions of a loop of a few instructions: hundreds of iterations, not millions */
        CHECK_OK(hvm, gpy_run_string(hvm, NULL, "assert 100 < i < 5000, i\n", (size_t)-1, NULL));
        gpy_free(hvm);
    }

    /* a hook due only every 10^15 instructions does not delay an interrupt */
    gpy_config_init(&config);
    config.hook = stop_at_fifth_call;
    config.hook_every = 1000000000000000ull;
    config.user_data = &hook_calls;
    hvm = gpy_new(&config);
    CHECK(hvm != NULL);
    if (hvm) {
        hook_calls = 0;
        check_interrupted(hvm, run_interrupted(hvm, "open(READY, 'w').close()\nwhile True:\n    pass\n", 0, false));
        CHECK(hook_calls == 0);
        gpy_free(hvm);
    }

    /* 5. a time budget without a hook: the run is interrupted once it is spent */
    gpy_config_init(&config);
    config.time_budget = 0.2;
    GpyVM *tvm = gpy_new(&config);
    CHECK(tvm != NULL);
    if (tvm) {
        check_interrupted(tvm, gpy_run_string(tvm, NULL, "while True:\n    pass\n", (size_t)-1, NULL));
        /* each run gets a fresh budget */
        CHECK_OK(tvm, gpy_run_string(tvm, NULL, "assert sum(range(100)) == 4950\n", (size_t)-1, NULL));
        gpy_free(tvm);
    }

    /* 6. a time budget with a hook: the hook decides (here: go on once, then stop) */
    gpy_config_init(&config);
    config.time_budget = 0.1;
    config.hook = stop_at_second_call;
    GpyVM *thvm = gpy_new(&config);
    CHECK(thvm != NULL);
    if (thvm) {
        hook_calls = 0;
        check_interrupted(thvm, gpy_run_string(thvm, NULL, "while True:\n    pass\n", (size_t)-1, NULL));
        CHECK(hook_calls == 2);
        gpy_free(thvm);
    }

    /* an interrupt request for a VM that is not running: harmless for others */
    gpy_interrupt(NULL);
    gpy_free(vm);
    return check_done("test_interrupt");
}
