/*
** asyncio.c — the asyncio module. Its event loop, futures, tasks and
** primitives are written in gpy (stdlib/asyncio.gpy, embedded at build
** time as asyncio_source): they are plain Python over coroutine objects
** (vm/coroutine.c), and CPython's scheduling order is easiest to follow
** line by line in the same language. Only what gpy code cannot see is here.
*/
#include "stdlib_priv.h"

#include "asyncio_gpy.h"

/* _is_coroutine_function(f): f (or the function a bound method wraps) was
** defined with async def (and has no yield). */
static Value f_is_coroutine_function(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "iscoroutinefunction", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "iscoroutinefunction() takes exactly one argument (%d given)", argc);
    Value f = argv[0];
    if (IS_OBJ(f) && AS_OBJ(f)->type == vm->t_method) f = ((BoundMethod *)AS_OBJ(f))->func;
    if (!IS_OBJ(f) || AS_OBJ(f)->type != vm->t_function) return BOOL_VAL(false);
    return BOOL_VAL((((Function *)AS_OBJ(f))->proto->flags & PROTO_COROUTINE) != 0);
}

Module *stdlib_asyncio(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "asyncio"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "_is_coroutine_function", f_is_coroutine_function);
    module_exec_source(vm, m, "<asyncio>", asyncio_source, sizeof asyncio_source - 1);
    vm_pop_roots(vm, 1);
    return m;
}
