/*
** class_mro_entries.c — PEP 560: a base in a class statement that is not a
** class but has __mro_entries__ (typing's Generic[T], NamedTuple,
** TypedDict) stands for the classes that method returns.
*/
#include "class_internal.h"

static bool is_class(VM *vm, Value v) {
    return IS_OBJ(v) && (AS_OBJ(v)->type == vm->t_type || (AS_OBJ(v)->type->flags & TYPEF_METATYPE));
}

Tuple *class_mro_entries(VM *vm, Tuple *bases) {
    bool any = false;
    for (int64_t i = 0; i < bases->len && !any; i++) {
        Value b = bases->items[i];
        any = !is_class(vm, b) && !IS_EMPTY(vm_getattr_opt(vm, b, str_cstr(vm, "__mro_entries__")));
    }
    if (!any) return bases;
    List *out = list_new(vm, bases->len);
    vm_push_root(vm, OBJ_VAL(out));
    for (int64_t i = 0; i < bases->len; i++) {
        Value b = bases->items[i];
        Value m = is_class(vm, b) ? EMPTY_VAL : vm_getattr_opt(vm, b, str_cstr(vm, "__mro_entries__"));
        if (IS_EMPTY(m)) {
            list_append(vm, out, b);
            continue;
        }
        Value arg = OBJ_VAL(bases);
        Value r = vm_call(vm, m, 1, &arg);
        if (!IS_TUPLE(vm, r)) vm_raise_kind(vm, TypeError, "__mro_entries__ must return a tuple");
        for (int64_t k = 0; k < AS_TUPLE(r)->len; k++) list_append(vm, out, AS_TUPLE(r)->items[k]);
    }
    Tuple *t = tuple_from_array(vm, out->len, out->items);
    vm_pop_roots(vm, 1);
    return t;
}
