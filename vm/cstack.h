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

typedef struct VM VM;

/* True when the calling thread is within its reserve of the end of its C stack. */
bool c_stack_exhausted(void);

/* Raises RecursionError "maximum recursion depth exceeded<what>" (what may
** be "") when the C stack is nearly exhausted. */
void vm_check_c_stack(VM *vm, const char *what);

#endif
