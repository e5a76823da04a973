/*
** signals.c — SIGINT as KeyboardInterrupt, SIGPIPE and SIGXFSZ ignored.
** The handler only sets a flag: raising needs the VM in a consistent
** state, which the interpreter has at its safepoints.
*/
#include <pthread.h>
#include <string.h>

#include "signals.h"

volatile sig_atomic_t vm_sigint_pending = 0;

static bool installed = false;
static pthread_t main_thread;

static void on_sigint(int sig) {
    /* the kernel may pick a CPU-device worker thread: pass the signal on,
    ** so that a sleep or read in the interpreter's thread ends with EINTR */
    if (!pthread_equal(pthread_self(), main_thread)) {
        pthread_kill(main_thread, sig);
        return;
    }
    vm_sigint_pending = 1;
}

/* SA_RESTART keeps stdio calls from failing half-way through with EINTR;
** sleeps (nanosleep) return EINTR either way. */
static void set_sigint_handler(bool restart) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGINT, &sa, NULL);
}

void signals_install(void) {
    struct sigaction old;
    main_thread = pthread_self();
    /* a shell starting a background job sets SIGINT to ignored: keep it so */
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
        set_sigint_handler(true);
        installed = true;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
}

void signals_interrupt_reads(bool on) {
    if (installed) set_sigint_handler(!on);
}

void vm_check_signals(VM *vm) {
    if (!vm_sigint_pending) return;
    vm_sigint_pending = 0;
    vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyboardInterrupt], 0, NULL));
}
