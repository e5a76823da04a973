/*
** cstack.c — the C stack guard (see cstack.h).
**
** The lowest usable address of each thread's stack is found once: from
** pthread_getattr_np (for the main thread glibc derives the size from
** getrlimit(RLIMIT_STACK) and the [stack] mapping), else from getrlimit
** and the current position. A reserve above that end is kept for the work
** done between two checks and for raising the error itself.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cstack.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#include "vm.h"

#define RESERVE_MIN ((uintptr_t)64 << 10)
#define RESERVE_MAX ((uintptr_t)1 << 20)

_Thread_local CSTACK_TLS uintptr_t cstack_low, cstack_high, cstack_floor;

static inline uintptr_t stack_position(void) {
    return (uintptr_t)__builtin_frame_address(0);
}

static uintptr_t reserve_for(uintptr_t size) {
    uintptr_t r = size / 4;
    return r < RESERVE_MIN ? RESERVE_MIN : r > RESERVE_MAX ? RESERVE_MAX : r;
}

void cstack_find(void) {
    uintptr_t here = stack_position();
    uintptr_t low = 0, size = 0;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr;
        size_t sz;
        if (pthread_attr_getstack(&attr, &addr, &sz) == 0 && (uintptr_t)addr < here && here - (uintptr_t)addr < sz) {
            low = (uintptr_t)addr;
            size = sz;
        }
        pthread_attr_destroy(&attr);
    }
    if (low) {
        cstack_high = low + size;
    } else {
        /* unknown extent: assume we are near the top of an rlimit-sized
        ** stack, and only trust half of it */
        struct rlimit rl;
        size = (uintptr_t)8 << 20;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
            size = (uintptr_t)rl.rlim_cur;
        size /= 2;
        low = here > size ? here - size : 0;
        cstack_high = UINTPTR_MAX;
    }
    cstack_low = low;
    uintptr_t floor = low + reserve_for(size);
    /* never above where we are now: a tiny stack still gets an error, not a fault */
    cstack_floor = floor < here ? floor : here;
}

void vm_check_c_stack(VM *vm, const char *what) {
    if (c_stack_exhausted())
        vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded%s", what);
}
