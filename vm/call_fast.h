/*
** call_fast.h — the embedding API's fast call of a gpy function (inline, so
** that gpy_call runs the checks and the frame push without a call of its
** own between it and the interpreter loop).
*/
#ifndef GPY_CALL_FAST_H
#define GPY_CALL_FAST_H

#include "cstack.h"
#include "interp.h"
#include "signals.h"

/* A call from C that needs no protected call of its own: when callee is a
** gpy function taking exactly argc positional arguments, runs it under the
** interpreter's handler and returns 1 (value in *result) or 0 (raised: the
** exception in vm->exc_value, the VM as after a failed vm_pcall); returns
** -1 having done nothing for any other call (use vm_pcall + vm_call). One
** setjmp per call instead of two: gpy_call's fast path. */
static inline int vm_call_protected_fast(VM *vm, Value callee, int argc, const Value *argv, Value *result) {
    if (!IS_OBJ(callee) || AS_OBJ(callee)->type != vm->t_function) return -1;
    Function *fn = (Function *)AS_OBJ(callee);
    Proto *p = fn->proto;
    if (argc != p->nparams || p->nkwonly != 0 || (p->flags & (PROTO_VARARGS | PROTO_VARKW | PROTO_GENERATOR)))
        return -1;
    /* what interp_check_room and interp_enter would raise, the general path raises */
    Value *base = vm->stack_top;
    /* sys.setrecursionlimit keeps the limit >= 1 */
    if (vm->nframes >= vm->recursion_limit || vm->nframes >= vm->frames_cap || base + p->nregs > vm->stack_end ||
        vm->c_depth >= vm->recursion_limit || c_stack_exhausted())
        return -1;
    if (!vm->err) vm_budget_reset(vm); /* an outermost run, as vm_pcall does */
    int32_t i = 0;
    for (; i < argc; i++) base[i] = argv[i];
    for (; i < p->nregs; i++) base[i] = EMPTY_VAL;
    vm->c_depth++;
    interp_push_entry(vm, fn, base);
    bool ok = interp_run_protected(vm, result);
    vm->stack_top = base;
    return ok;
}

#endif
