/*
** bisect.c — the bisect module: binary search and insertion in a sorted
** sequence (any object with len/getitem; insort calls its insert method),
** with lo/hi bounds and key= as in CPython 3.11. Lists are read directly.
*/
#include "stdlib_priv.h"

typedef struct BisectArgs {
    Value a, x, key;
    int64_t lo, hi;
} BisectArgs;

static void parse(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, BisectArgs *b) {
    static const char *const names[] = {"a", "x", "lo", "hi", "key"};
    Value v[5];
    if (argc > 4)
        vm_raise_kind(vm, TypeError, "%s() takes at most 4 positional arguments (%d given)", fname, argc);
    for (int i = 0; i < 5; i++) v[i] = i < argc ? argv[i] : EMPTY_VAL;
    for (int i = 0; kwargs && i < 5; i++) {
        Value k = kw_take(vm, kwargs, names[i]);
        if (IS_EMPTY(k)) continue;
        if (i < argc)
            vm_raise_kind(vm, TypeError, "argument for %s() given by name ('%s') and position (%d)", fname, names[i],
                          i + 1);
        v[i] = k;
    }
    kw_done(vm, fname, kwargs);
    for (int i = 0; i < 2; i++)
        if (IS_EMPTY(v[i]))
            vm_raise_kind(vm, TypeError, "%s() missing required argument '%s' (pos %d)", fname, names[i], i + 1);
    b->a = v[0];
    b->x = v[1];
    b->key = IS_EMPTY(v[4]) ? NONE_VAL : v[4];
    b->lo = IS_EMPTY(v[2]) ? 0 : vm_to_index(vm, v[2]);
    if (b->lo < 0) vm_raise_kind(vm, ValueError, "lo must be non-negative");
    b->hi = IS_EMPTY(v[3]) || IS_NONE(v[3]) ? vm_len(vm, b->a) : vm_to_index(vm, v[3]);
}

static bool less(VM *vm, Value a, Value b) {
    if (IS_INT(a) && IS_INT(b)) return a.as.i < b.as.i;
    if (IS_FLOAT(a) && IS_FLOAT(b)) return a.as.f < b.as.f;
    return vm_truthy(vm, vm_compare(vm, CMP_LT, a, b));
}

static Value item_at(VM *vm, Value a, int64_t i) {
    if (IS_LIST(vm, a) && i < AS_LIST(a)->len) return AS_LIST(a)->items[i];
    return vm_getitem(vm, a, INT_VAL(i));
}

/* right: first index whose item is > x; else first index whose item is >= x.
** key applies to the items, not to x (as in CPython). */
static int64_t search(VM *vm, BisectArgs *b, bool right) {
    int64_t lo = b->lo, hi = b->hi;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        Value item = item_at(vm, b->a, mid);
        vm_push_root(vm, item);
        if (!IS_NONE(b->key)) item = vm_call(vm, b->key, 1, &item);
        vm_push_root(vm, item);
        bool go_left = right ? less(vm, b->x, item) : !less(vm, item, b->x);
        vm_pop_roots(vm, 2);
        if (go_left) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

static Value f_bisect_right(VM *vm, int argc, Value *argv, Dict *kwargs) {
    BisectArgs b;
    parse(vm, "bisect_right", argc, argv, kwargs, &b);
    return INT_VAL(search(vm, &b, true));
}

static Value f_bisect_left(VM *vm, int argc, Value *argv, Dict *kwargs) {
    BisectArgs b;
    parse(vm, "bisect_left", argc, argv, kwargs, &b);
    return INT_VAL(search(vm, &b, false));
}

static Value insort(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, bool right) {
    BisectArgs b;
    parse(vm, fname, argc, argv, kwargs, &b);
    Value x = b.x;
    if (!IS_NONE(b.key)) {
        vm_push_root(vm, x);
        b.x = vm_call(vm, b.key, 1, &x);
        vm_pop_roots(vm, 1);
    }
    vm_push_root(vm, b.x);
    int64_t i = search(vm, &b, right);
    vm_pop_roots(vm, 1);
    if (IS_LIST(vm, b.a)) {
        List *l = AS_LIST(b.a);
        list_append(vm, l, x);
        for (int64_t k = l->len - 1; k > i && k > 0; k--) l->items[k] = l->items[k - 1];
        if (i < l->len) l->items[i] = x;
    } else {
        Value args[2] = {INT_VAL(i), x};
        vm_call_method(vm, b.a, cstr_name(vm, "insert"), 2, args);
    }
    return NONE_VAL;
}

static Value f_insort_right(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return insort(vm, "insort_right", argc, argv, kwargs, true);
}

static Value f_insort_left(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return insort(vm, "insort_left", argc, argv, kwargs, false);
}

static Module *build_bisect(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "bisect"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "bisect_right", f_bisect_right);
    module_add_function(vm, m, "bisect_left", f_bisect_left);
    module_add_function(vm, m, "insort_right", f_insort_right);
    module_add_function(vm, m, "insort_left", f_insort_left);
    dict_set_cstr(vm, m->dict, "bisect", dict_get_cstr(vm, m->dict, "bisect_right"));
    dict_set_cstr(vm, m->dict, "insort", dict_get_cstr(vm, m->dict, "insort_right"));
    vm_pop_roots(vm, 1);
    return m;
}

void bisect_register(VM *vm) { module_register_native(vm, "bisect", build_bisect); }
