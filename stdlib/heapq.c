/*
** heapq.c — _heapq: the binary-heap primitives over a list (heappush,
** heappop, heapify, heapreplace, heappushpop and the max-heap helpers
** CPython keeps private). stdlib/heapq.gpy adds merge/nlargest/nsmallest.
** Items compare with `<` only, as CPython's; a comparison may run user code
** that changes the list, so every step re-checks its length.
*/
#include "stdlib_priv.h"

static bool less(VM *vm, Value a, Value b) {
    if (IS_INT(a) && IS_INT(b)) return a.as.i < b.as.i;
    if (IS_FLOAT(a) && IS_FLOAT(b)) return a.as.f < b.as.f;
    return vm_truthy(vm, vm_compare(vm, CMP_LT, a, b));
}

/* less(a, b) for a min-heap, less(b, a) for a max-heap */
static bool before(VM *vm, Value a, Value b, bool max) { return max ? less(vm, b, a) : less(vm, a, b); }

static void changed(VM *vm, List *l, int64_t n) {
    if (l->len != n) vm_raise_kind(vm, RuntimeError, "list changed size during iteration");
}

/* Moves the item at pos up towards start while it is before its parent. */
static void sift_down(VM *vm, List *l, int64_t start, int64_t pos, bool max) {
    int64_t n = l->len;
    Value item = l->items[pos];
    vm_push_root(vm, item);
    while (pos > start) {
        int64_t parent = (pos - 1) >> 1;
        Value p = l->items[parent];
        bool lt = before(vm, item, p, max);
        changed(vm, l, n);
        if (!lt) break;
        l->items[pos] = l->items[parent];
        pos = parent;
    }
    l->items[pos] = item;
    vm_pop_roots(vm, 1);
}

/* Bubbles the smaller child up from pos to a leaf, then sifts the item
** there back down (fewer comparisons than a classic sift-up). */
static void sift_up(VM *vm, List *l, int64_t pos, bool max) {
    int64_t end = l->len, start = pos;
    Value item = l->items[pos];
    vm_push_root(vm, item);
    int64_t child = 2 * pos + 1;
    while (child < end) {
        int64_t right = child + 1;
        if (right < end) {
            bool lt = before(vm, l->items[child], l->items[right], max);
            changed(vm, l, end);
            if (!lt) child = right;
        }
        l->items[pos] = l->items[child];
        pos = child;
        child = 2 * pos + 1;
    }
    l->items[pos] = item;
    vm_pop_roots(vm, 1);
    sift_down(vm, l, start, pos, max);
}

static List *heap_arg(VM *vm, const char *fname, Value v, bool argument_n) {
    if (!IS_LIST(vm, v)) {
        if (argument_n)
            vm_raise_kind(vm, TypeError, "%s() argument 1 must be list, not %s", fname, vm_type_name(vm, v));
        vm_raise_kind(vm, TypeError, "%s() argument must be list, not %s", fname, vm_type_name(vm, v));
    }
    return AS_LIST(v);
}

static Value pop_last(VM *vm, List *l) {
    if (l->len == 0) vm_raise_kind(vm, IndexError, "index out of range");
    return l->items[--l->len];
}

static Value f_heappush(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "heappush", kwargs);
    arg_between(vm, "heappush", argc, 2, 2);
    List *l = heap_arg(vm, "heappush", argv[0], true);
    list_append(vm, l, argv[1]);
    sift_down(vm, l, 0, l->len - 1, false);
    return NONE_VAL;
}

static Value heappop_impl(VM *vm, List *l, bool max) {
    Value last = pop_last(vm, l);
    if (l->len == 0) return last;
    Value top = l->items[0];
    l->items[0] = last;
    vm_push_root(vm, top);
    sift_up(vm, l, 0, max);
    vm_pop_roots(vm, 1);
    return top;
}

static Value f_heappop(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    arg_one(vm, "heappop", argc);
    return heappop_impl(vm, heap_arg(vm, "heappop", argv[0], false), false);
}

static Value f_heappop_max(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    arg_one(vm, "_heappop_max", argc);
    return heappop_impl(vm, heap_arg(vm, "_heappop_max", argv[0], false), true);
}

static Value replace_impl(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, bool max) {
    kw_none(vm, fname, kwargs);
    arg_between(vm, fname, argc, 2, 2);
    List *l = heap_arg(vm, fname, argv[0], true);
    if (l->len == 0) vm_raise_kind(vm, IndexError, "index out of range");
    Value top = l->items[0];
    l->items[0] = argv[1];
    vm_push_root(vm, top);
    sift_up(vm, l, 0, max);
    vm_pop_roots(vm, 1);
    return top;
}

static Value f_heapreplace(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return replace_impl(vm, "heapreplace", argc, argv, kwargs, false);
}

static Value f_heapreplace_max(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return replace_impl(vm, "_heapreplace_max", argc, argv, kwargs, true);
}

static Value f_heappushpop(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "heappushpop", kwargs);
    arg_between(vm, "heappushpop", argc, 2, 2);
    List *l = heap_arg(vm, "heappushpop", argv[0], true);
    Value item = argv[1];
    if (l->len == 0) return item;
    Value top = l->items[0];
    if (!less(vm, top, item)) return item;
    if (l->len == 0) vm_raise_kind(vm, IndexError, "index out of range");
    top = l->items[0];
    l->items[0] = item;
    vm_push_root(vm, top);
    sift_up(vm, l, 0, false);
    vm_pop_roots(vm, 1);
    return top;
}

static Value heapify_impl(VM *vm, const char *fname, int argc, Value *argv, bool max) {
    arg_one(vm, fname, argc);
    List *l = heap_arg(vm, fname, argv[0], false);
    for (int64_t i = l->len / 2 - 1; i >= 0; i--) {
        if (i >= l->len) continue;
        sift_up(vm, l, i, max);
    }
    return NONE_VAL;
}

static Value f_heapify(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    return heapify_impl(vm, "heapify", argc, argv, false);
}

static Value f_heapify_max(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    return heapify_impl(vm, "_heapify_max", argc, argv, true);
}

static Module *build_heapq_c(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "_heapq"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "heappush", f_heappush);
    module_add_function(vm, m, "heappop", f_heappop);
    module_add_function(vm, m, "heapreplace", f_heapreplace);
    module_add_function(vm, m, "heappushpop", f_heappushpop);
    module_add_function(vm, m, "heapify", f_heapify);
    module_add_function(vm, m, "_heappop_max", f_heappop_max);
    module_add_function(vm, m, "_heapreplace_max", f_heapreplace_max);
    module_add_function(vm, m, "_heapify_max", f_heapify_max);
    vm_pop_roots(vm, 1);
    return m;
}

void heapq_register(VM *vm) { module_register_native(vm, "_heapq", build_heapq_c); }
