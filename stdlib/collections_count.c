/*
** collections_count.c — _collections._count_elements(mapping, iterable):
** the loop behind Counter(iterable) and Counter.update(iterable). Into an
** exact dict it counts with dict_get/dict_set and no method calls; any
** other mapping goes through its get and __setitem__, as CPython does.
*/
#include "stdlib_priv.h"

static Value f_count_elements(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "_count_elements", kwargs);
    arg_between(vm, "_count_elements", argc, 2, 2);
    Value mapping = argv[0], it = vm_iter(vm, argv[1]), v;
    vm_push_root(vm, it);
    if (IS_OBJ(mapping) && AS_OBJ(mapping)->type == vm->t_dict && ((Dict *)AS_OBJ(mapping))->count == 0) {
        /* an empty dict (what Counter passes): one lookup per item in a
        ** private key -> slot dict, the counts in a list, copied out at the
        ** end in first-seen order */
        Dict *d = (Dict *)AS_OBJ(mapping), *slots = dict_new(vm);
        vm_push_root(vm, OBJ_VAL(slots));
        List *counts = list_new(vm, 0);
        vm_push_root(vm, OBJ_VAL(counts));
        while (vm_next(vm, it, &v)) {
            Value ix;
            vm_push_root(vm, v);
            if (dict_get(vm, slots, v, &ix)) {
                Value *c = &counts->items[ix.as.i];
                if (c->as.i == INT64_MAX) vm_raise_kind(vm, OverflowError, "integer overflow");
                c->as.i++;
            } else {
                dict_set(vm, slots, v, INT_VAL(counts->len));
                list_append(vm, counts, INT_VAL(1));
            }
            vm_pop_roots(vm, 1);
        }
        int64_t pos = 0;
        Value k, ix;
        while (dict_next(slots, &pos, &k, &ix)) dict_set(vm, d, k, counts->items[ix.as.i]);
        vm_pop_roots(vm, 2);
    } else if (IS_OBJ(mapping) && AS_OBJ(mapping)->type == vm->t_dict) {
        Dict *d = (Dict *)AS_OBJ(mapping);
        while (vm_next(vm, it, &v)) {
            Value n;
            vm_push_root(vm, v); /* a generator's item is held by nobody else */
            if (!dict_get(vm, d, v, &n)) n = INT_VAL(0);
            if (IS_INT(n) && n.as.i < INT64_MAX) n = INT_VAL(n.as.i + 1);
            else n = vm_binop(vm, BINOP_ADD, n, INT_VAL(1));
            dict_set(vm, d, v, n);
            vm_pop_roots(vm, 1);
        }
    } else {
        Value get = vm_getattr(vm, mapping, cstr_name(vm, "get"));
        vm_push_root(vm, get);
        while (vm_next(vm, it, &v)) {
            vm_push_root(vm, v);
            Value args[2] = {v, INT_VAL(0)};
            Value n = vm_call(vm, get, 2, args);
            n = vm_binop(vm, BINOP_ADD, n, INT_VAL(1));
            vm_setitem(vm, mapping, v, n);
            vm_pop_roots(vm, 1);
        }
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return NONE_VAL;
}

void collections_count_add(VM *vm, Module *m) { module_add_function(vm, m, "_count_elements", f_count_elements); }
