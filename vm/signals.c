/*
** signals.c — interrupt requests and the budget hook (see signals.h).
** A request only sets a flag: raising needs the VM in a consistent state,
** which the interpreter has at its safepoints.
*/
#include <stdint.h>
#include <time.h>

#include "signals.h"

/* Safepoint units (about one instruction each) between two readings of the
** clock for the time budget: a reading costs ~20 ns, this many units take
** tens of microseconds, so the budget overshoots by well under a millisecond. */
#define CLOCK_EVERY 16384

void vm_request_interrupt(VM *vm) {
    atomic_store_explicit(&vm->interrupt_requested, 1, memory_order_relaxed);
}

void vm_clear_interrupt(VM *vm) {
    atomic_store_explicit(&vm->interrupt_requested, 0, memory_order_relaxed);
}

_Noreturn void vm_raise_interrupt(VM *vm) {
    vm_clear_interrupt(vm);
    vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyboardInterrupt], 0, NULL));
}

void vm_check_signals(VM *vm) {
    if (vm_interrupt_pending(vm)) vm_raise_interrupt(vm);
}

void vm_interruptible_reads(VM *vm, bool on) {
    if (vm->interruptible_reads) vm->interruptible_reads(on);
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sets the countdown to the nearest of the budget events and the next test
** of the interrupt flag (GC stress: every safepoint takes the slow path). */
static void arm(VM *vm) {
    VMBudget *b = &vm->budget;
    int64_t next = VM_INTERRUPT_POLL;
    if (vm->config.hook && vm->config.hook_every && b->hook_left < next) next = b->hook_left;
    if (vm->config.time_budget > 0 && b->clock_left < next) next = b->clock_left;
    if (vm->gc_stress) next = 0;
    b->armed = next;
    vm->safepoint_countdown = next;
}

void vm_budget_reset_full(VM *vm) {
    VMBudget *b = &vm->budget;
    uint64_t every = vm->config.hook_every;
    b->hook_left = every && every < INT64_MAX ? (int64_t)every : INT64_MAX;
    b->clock_left = CLOCK_EVERY;
    if (vm->config.time_budget > 0) b->start = now_seconds();
    arm(vm);
}

/* Calls the hook (not from inside itself); false: interrupt. */
static bool call_hook(VM *vm) {
    if (vm->budget.in_hook) return true;
    vm->budget.in_hook = true;
    bool go_on = vm->config.hook(vm->api, vm->config.user_data);
    vm->budget.in_hook = false;
    return go_on;
}

/* The countdown ran out: account the units spent since it was armed, then
** call the hook and read the clock when they are due. */
static void budget_due(VM *vm) {
    VMBudget *b = &vm->budget;
    int64_t spent = b->armed - vm->safepoint_countdown;
    bool go_on = true;
    if (vm->config.hook && vm->config.hook_every) {
        b->hook_left = b->hook_left > spent ? b->hook_left - spent : 0;
        if (b->hook_left == 0) {
            b->hook_left = vm->config.hook_every < INT64_MAX ? (int64_t)vm->config.hook_every : INT64_MAX;
            go_on = call_hook(vm);
        }
    }
    if (vm->config.time_budget > 0) {
        b->clock_left = b->clock_left > spent ? b->clock_left - spent : 0;
        if (b->clock_left == 0) {
            b->clock_left = CLOCK_EVERY;
            double t = now_seconds();
            if (go_on && t - b->start >= vm->config.time_budget) {
                /* a new budget period starts: a hook that lets the run go
                ** on is called again after another time_budget seconds */
                b->start = t;
                go_on = vm->config.hook ? call_hook(vm) : false;
            }
        }
    }
    arm(vm);
    if (!go_on) vm_raise_interrupt(vm);
}

void vm_safepoint(VM *vm) {
    gc_safepoint(vm);
    vm_check_signals(vm);
    if (vm->safepoint_countdown <= 0) budget_due(vm);
}
