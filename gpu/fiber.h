/*
** fiber.h — cooperative user-level threads for the CPU device.
**
** A block whose kernel uses barriers runs each CUDA thread as a fiber; the
** fibers of a block switch only at barriers, so a switch must be cheap (a
** few nanoseconds: six callee-saved registers and the stack pointer on
** x86-64; ucontext elsewhere).
*/
#ifndef GPY_FIBER_H
#define GPY_FIBER_H

#include <stddef.h>

typedef struct Fiber Fiber;
typedef void (*FiberFn)(void *arg);

#if defined(__x86_64__) && !defined(GPY_FIBER_UCONTEXT)
typedef struct FiberCtx {
    void *sp; /* saved stack pointer; the registers are on that stack */
} FiberCtx;
#else
#include <ucontext.h>
typedef struct FiberCtx {
    ucontext_t uc;
} FiberCtx;
#endif

/* Prepares ctx to run fn(arg) on the given stack at its first switch.
** fn must never return: it ends by switching away for the last time. */
void fiber_init(FiberCtx *ctx, void *stack, size_t stack_size, FiberFn fn, void *arg);
/* Saves the running context in from and resumes to. */
void fiber_switch(FiberCtx *from, FiberCtx *to);

#endif
