/*
** signals.h — how the gpy command reacts to signals: SIGINT becomes a
** KeyboardInterrupt raised in the running code, SIGPIPE and SIGXFSZ are
** ignored so that writes fail with EPIPE / EFBIG (an OSError) instead of
** killing the process, as in CPython.
*/
#ifndef GPY_SIGNALS_H
#define GPY_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

#include "vm.h"

/* Set by the SIGINT handler; the interpreter tests it at its safepoints
** (backward jumps and calls) and blocking calls test it after EINTR. */
extern volatile sig_atomic_t vm_sigint_pending;

/* Installs the handlers (the gpy command only: an embedding program keeps
** its own). */
void signals_install(void);

/* Raises KeyboardInterrupt when a SIGINT arrived since the last check. */
void vm_check_signals(VM *vm);

/* While on, a SIGINT interrupts blocking reads (they fail with EINTR)
** instead of restarting them: used around prompts and input(). */
void signals_interrupt_reads(bool on);

#endif
