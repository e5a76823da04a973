/*
** signals.h — interrupting a running VM, and the budget hook.
**
** An interrupt is a per-VM request flag: vm_request_interrupt may be called
** from any thread or from a signal handler; the interpreter tests the flag
** at its safepoints (calls and backward jumps), the CPU device between
** blocks, a wait on a GPU while it polls, and raises KeyboardInterrupt.
** The library installs no signal handler: the gpy command's SIGINT handler
** (repl/cli_signals.c) forwards to its VM with vm_request_interrupt.
**
** The safepoints' fast path is one countdown (and the collector's
** threshold): the interrupt flag is tested when the countdown runs out, at
** least every 16384 counted instructions; the budget hook (VMConfig.hook /
** hook_every / time_budget) is due on the same countdown. A VM without a
** hook pays nothing per instruction.
*/
#ifndef GPY_SIGNALS_H
#define GPY_SIGNALS_H

#include <stdatomic.h>
#include <stdbool.h>

#include "vm.h"

/* Asks vm to stop with KeyboardInterrupt at its next safepoint.
** Async-signal-safe (a lock-free atomic store); any thread. */
void vm_request_interrupt(VM *vm);

/* Whether an interrupt was requested and not yet raised. */
static inline bool vm_interrupt_pending(VM *vm) {
    return atomic_load_explicit(&vm->interrupt_requested, memory_order_relaxed) != 0;
}

/* Drops a pending request (the REPL: a Ctrl-C at the prompt). */
void vm_clear_interrupt(VM *vm);

/* Raises KeyboardInterrupt when an interrupt was requested (and clears the
** request). Blocking calls use it after EINTR; the interpreter at safepoints. */
void vm_check_signals(VM *vm);

/* Raises KeyboardInterrupt now (clearing any pending request): a CPU-device
** launch or a GPU wait that stopped because of a request. */
_Noreturn void vm_raise_interrupt(VM *vm);

/* The interpreter's safepoint slow path: collection, interrupt, budget hook.
** Entered when vm->safepoint_countdown ran out (at least every 16384
** counted instructions, so a pending interrupt is seen) or the GC threshold
** was passed. */
void vm_safepoint(VM *vm);

/* The most counted instructions between two tests of the interrupt flag:
** the safepoints' fast path only counts down (and watches the collector's
** threshold), so a request is seen within this many, tens of microseconds. */
#define VM_INTERRUPT_POLL 16384

/* Starts the time budget and the instruction countdown afresh: called when
** an outermost run begins (vm_pcall with no protected call around it).
** Inline for the common case of no hook and no time budget: every gpy_call
** from C is such a run. */
void vm_budget_reset_full(VM *vm);
static inline void vm_budget_reset(VM *vm) {
    if (!vm->budget_plain) {
        vm_budget_reset_full(vm);
        return;
    }
    vm->budget.armed = vm->safepoint_countdown = VM_INTERRUPT_POLL;
}

/* While on, a SIGINT interrupts blocking reads (they fail with EINTR)
** instead of restarting them: used around prompts and input(). Calls the
** host's VM.interruptible_reads (the gpy command sets it); a no-op for an
** embedded VM. */
void vm_interruptible_reads(VM *vm, bool on);

#endif
