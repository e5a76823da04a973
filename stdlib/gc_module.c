/*
** gc_module.c — the `gc` module: collect() runs a full collection and then
** the finalizers it queued (abandoned generators' finally blocks), so that
** programs can make collection-time cleanup happen at a point they choose.
** enable/disable/isenabled are accepted for compatibility; gpy's collector
** runs whenever its allocation budget is spent.
*/
#include "stdlib_priv.h"

static Value f_collect(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    (void)kwargs;
    arg_count(vm, "collect", argc, 0, 1);
    gc_collect(vm);
    gen_run_finalizers(vm);
    return INT_VAL(0);
}

static Value f_enable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_no_kwargs(vm, "enable", kwargs);
    arg_count(vm, "enable", argc, 0, 0);
    return NONE_VAL;
}

static Value f_isenabled(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_no_kwargs(vm, "isenabled", kwargs);
    arg_count(vm, "isenabled", argc, 0, 0);
    return BOOL_VAL(true);
}

static Module *stdlib_gc(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "gc"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "collect", f_collect);
    module_add_function(vm, m, "enable", f_enable);
    module_add_function(vm, m, "disable", f_enable);
    module_add_function(vm, m, "isenabled", f_isenabled);
    vm_pop_roots(vm, 1);
    return m;
}

void gc_module_register(VM *vm) { module_register_native(vm, "gc", stdlib_gc); }
