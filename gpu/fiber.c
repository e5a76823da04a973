/*
** fiber.c — context switching for the CPU device's barrier kernels.
** See fiber.h. On x86-64 the switch is a handful of instructions (System V
** ABI: rbx, rbp, r12–r15 are callee-saved; everything else is dead across a
** call). Other architectures use ucontext.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, ucontext */
#endif
#include "fiber.h"

#include <stdint.h>

#if defined(__x86_64__) && !defined(GPY_FIBER_UCONTEXT)

/* gpy_fiber_swap(void **save_sp, void *new_sp): pushes the callee-saved
** registers, saves rsp, loads the new rsp, pops that context's registers and
** returns into it. */
__asm__(".text\n"
        ".globl gpy_fiber_swap\n"
        ".hidden gpy_fiber_swap\n" /* not part of libgpy.so's API */
        ".type gpy_fiber_swap,@function\n"
        "gpy_fiber_swap:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size gpy_fiber_swap, .-gpy_fiber_swap\n"
        /* First entry of a fiber: r12 = fn, r13 = arg (set up by fiber_init);
        ** the stack is 16-byte aligned here, as a call requires. */
        ".globl gpy_fiber_trampoline\n"
        ".hidden gpy_fiber_trampoline\n"
        ".type gpy_fiber_trampoline,@function\n"
        "gpy_fiber_trampoline:\n"
        "  movq %r13, %rdi\n"
        "  callq *%r12\n"
        "  ud2\n"
        ".size gpy_fiber_trampoline, .-gpy_fiber_trampoline\n");

void gpy_fiber_swap(void **save_sp, void *new_sp);
void gpy_fiber_trampoline(void);

void fiber_init(FiberCtx *ctx, void *stack, size_t stack_size, FiberFn fn, void *arg) {
    uintptr_t top = ((uintptr_t)stack + stack_size) & ~(uintptr_t)15;
    /* After the six pops and the ret, rsp = top - 16 (aligned). */
    void **sp = (void **)(top - 72);
    sp[0] = 0;                            /* r15 */
    sp[1] = 0;                            /* r14 */
    sp[2] = arg;                          /* r13 */
    sp[3] = (void *)fn;                   /* r12 */
    sp[4] = 0;                            /* rbx */
    sp[5] = 0;                            /* rbp */
    sp[6] = (void *)gpy_fiber_trampoline; /* return address */
    ctx->sp = sp;
}

void fiber_switch(FiberCtx *from, FiberCtx *to) { gpy_fiber_swap(&from->sp, to->sp); }

#else

/* makecontext passes int arguments only: split the pointers into halves. */
static void uc_entry(unsigned fn_lo, unsigned fn_hi, unsigned arg_lo, unsigned arg_hi) {
    FiberFn fn = (FiberFn)(((uintptr_t)fn_hi << 32) | fn_lo);
    void *arg = (void *)(((uintptr_t)arg_hi << 32) | arg_lo);
    fn(arg);
}

void fiber_init(FiberCtx *ctx, void *stack, size_t stack_size, FiberFn fn, void *arg) {
    getcontext(&ctx->uc);
    ctx->uc.uc_stack.ss_sp = stack;
    ctx->uc.uc_stack.ss_size = stack_size;
    ctx->uc.uc_link = NULL;
    uintptr_t f = (uintptr_t)fn, a = (uintptr_t)arg;
    makecontext(&ctx->uc, (void (*)(void))uc_entry, 4, (unsigned)f, (unsigned)(f >> 32), (unsigned)a,
                (unsigned)(a >> 32));
}

void fiber_switch(FiberCtx *from, FiberCtx *to) { swapcontext(&from->uc, &to->uc); }

#endif
