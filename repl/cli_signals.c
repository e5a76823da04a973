/*
** cli_signals.c — the gpy command's SIGINT handler (see cli_signals.h).
** The handler only sets the VM's request flag: raising needs the VM in a
** consistent state, which the interpreter has at its safepoints.
*/
#include "cli_signals.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "signals.h"

/* The process has one SIGINT handler and the command one VM: static state
** is right here (and only here, in repl/). */
static VM *volatile interrupt_vm;
static bool installed = false;
static pthread_t main_thread;

static void on_sigint(int sig) {
    /* the kernel may pick a CPU-device worker thread: pass the signal on,
    ** so that a sleep or read in the interpreter's thread ends with EINTR */
    if (!pthread_equal(pthread_self(), main_thread)) {
        pthread_kill(main_thread, sig);
        return;
    }
    VM *vm = interrupt_vm;
    if (vm) vm_request_interrupt(vm);
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

static void interruptible_reads(bool on) {
    if (installed) set_sigint_handler(!on);
}

void cli_signals_ignore_pipes(void) {
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
}

void cli_signals_install(VM *vm) {
    struct sigaction old;
    main_thread = pthread_self();
    interrupt_vm = vm;
    vm->interruptible_reads = interruptible_reads;
    /* a shell starting a background job sets SIGINT to ignored: keep it so */
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
        set_sigint_handler(true);
        installed = true;
    }
}

void cli_signals_release(void) { interrupt_vm = NULL; }
