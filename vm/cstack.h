/*
** cstack.h — how much of the C stack is left.
**
** Interpreter entries, nested reprs/comparisons/hashes, iterator chains, the
** parser and the compiler all recurse in C. Counting levels is not enough:
** the bytes per level vary and the stack may be small (ulimit -s 256), so
** each such path asks where the stack pointer is against the real end of
** this thread's stack.
*/
#ifndef GPY_CSTACK_H
#define GPY_CSTACK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct VM VM;

/* This thread's stack: [cstack_low, cstack_high); guarded code stays above
** cstack_floor. All 0 until cstack_find fills them in. initial-exec TLS:
** libgpy is linked, not dlopen'ed late, so these fit the static TLS block
** and reading them costs no __tls_get_addr call in the shared library. */
#define CSTACK_TLS __attribute__((tls_model("initial-exec")))
extern _Thread_local CSTACK_TLS uintptr_t cstack_low, cstack_high, cstack_floor;
void cstack_find(void);

/* True when the calling thread is within its reserve of the end of its C
** stack. Inline: every call from C into a script asks. */
static inline bool c_stack_exhausted(void) {
    if (!cstack_high) cstack_find();
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    /* on some other stack (a fiber's), there is nothing to judge by */
    return sp < cstack_floor && sp >= cstack_low;
}

/* Raises RecursionError "maximum recursion depth exceeded<what>" (what may
** be "") when the C stack is nearly exhausted. */
void vm_check_c_stack(VM *vm, const char *what);

#endif
