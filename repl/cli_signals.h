/*
** cli_signals.h — how the gpy command reacts to signals: SIGINT asks its VM
** to stop (vm_request_interrupt: KeyboardInterrupt at the next safepoint),
** SIGPIPE and SIGXFSZ are ignored so that writes fail with EPIPE / EFBIG
** (an OSError) instead of killing the process, as in CPython. The library
** installs no handler; this is the command's own choice.
*/
#ifndef GPY_CLI_SIGNALS_H
#define GPY_CLI_SIGNALS_H

#include "vm.h"

/* Ignores SIGPIPE and SIGXFSZ. Called before the VM exists. */
void cli_signals_ignore_pipes(void);

/* Installs the SIGINT handler, forwarding to vm (unless the shell started
** us with SIGINT ignored), and lets vm's blocking reads be interrupted
** (VM.interruptible_reads). Called from the main thread. */
void cli_signals_install(VM *vm);

/* Stops forwarding SIGINT to the VM (before vm_free). */
void cli_signals_release(void);

#endif
