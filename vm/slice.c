/*
** slice.c — slice objects: slice(stop), slice(start, stop[, step]),
** their attributes, repr, comparison and indices(). Resolving a slice
** against a length is slice_indices in ops.c.
*/
#include <string.h>

#include "container.h"

Value slice_new(VM *vm, Value start, Value stop, Value step) {
    Slice *s = gc_alloc_obj(vm, vm->t_slice, sizeof(Slice));
    s->start = IS_EMPTY(start) ? NONE_VAL : start;
    s->stop = IS_EMPTY(stop) ? NONE_VAL : stop;
    s->step = IS_EMPTY(step) ? NONE_VAL : step;
    return OBJ_VAL(s);
}

static Slice *as_slice(Value v) { return (Slice *)AS_OBJ(v); }

static Value slice_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    arg_no_kwargs(vm, "slice", kwargs);
    ctr_check_args(vm, "slice", argc, 1, 3);
    if (argc == 1) return slice_new(vm, NONE_VAL, argv[0], NONE_VAL);
    return slice_new(vm, argv[0], argv[1], argc == 3 ? argv[2] : NONE_VAL);
}

static void slice_repr_body(VM *vm, Value self, StrBuf *sb) {
    Slice *s = as_slice(self);
    sb_appends(sb, "slice(");
    ctr_repr_value(vm, sb, s->start);
    sb_appends(sb, ", ");
    ctr_repr_value(vm, sb, s->stop);
    sb_appends(sb, ", ");
    ctr_repr_value(vm, sb, s->step);
    sb_putc(sb, ')');
}

static Value slice_repr(VM *vm, Value self) {
    Slice *s = as_slice(self);
    bool simple = ctr_simple(vm, s->start) && ctr_simple(vm, s->stop) && ctr_simple(vm, s->step);
    return ctr_repr(vm, self, slice_repr_body, simple);
}

static Tuple *as_tuple(VM *vm, Slice *s) {
    Value items[3] = {s->start, s->stop, s->step};
    return tuple_from_array(vm, 3, items);
}

/* Slices compare like the tuples (start, stop, step). */
static Value slice_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (op > CMP_GE || !IS_OBJ(a) || !IS_OBJ(b) || AS_OBJ(a)->type != vm->t_slice || AS_OBJ(b)->type != vm->t_slice)
        return EMPTY_VAL;
    if (AS_OBJ(a) == AS_OBJ(b) && (op == CMP_EQ || op == CMP_NE)) return BOOL_VAL(op == CMP_EQ);
    Tuple *x = as_tuple(vm, as_slice(a));
    vm_push_root(vm, OBJ_VAL(x));
    Tuple *y = as_tuple(vm, as_slice(b));
    vm_push_root(vm, OBJ_VAL(y));
    Value r = vm_compare(vm, op, OBJ_VAL(x), OBJ_VAL(y));
    vm_pop_roots(vm, 2);
    return r;
}

static Value slice_getattr(VM *vm, Value self, Str *name) {
    Slice *s = as_slice(self);
    const char *n = name->chars;
    if (strcmp(n, "start") == 0) return s->start;
    if (strcmp(n, "stop") == 0) return s->stop;
    if (strcmp(n, "step") == 0) return s->step;
    return generic_getattr(vm, self, name);
}

static void slice_mark(VM *vm, Obj *o) {
    Slice *s = (Slice *)o;
    gc_mark_value(vm, s->start);
    gc_mark_value(vm, s->stop);
    gc_mark_value(vm, s->step);
}

/* slice.indices(len) -> (start, stop, step) resolved against len. */
static Value m_indices(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "slice.indices", kwargs);
    arg_count(vm, "slice.indices", argc - 1, 1, 1);
    int64_t len = vm_to_index(vm, argv[1]);
    if (len < 0) vm_raise_kind(vm, ValueError, "length should not be negative");
    int64_t start, stop, step;
    slice_indices(vm, as_slice(argv[0]), len, &start, &stop, &step);
    Value items[3] = {INT_VAL(start), INT_VAL(stop), INT_VAL(step)};
    return OBJ_VAL(tuple_from_array(vm, 3, items));
}

void slice_init(VM *vm) {
    Type *t = vm->t_slice;
    t->new_ = slice_new_slot;
    t->repr = slice_repr;
    t->compare = slice_compare;
    t->hash = ctr_unhashable;
    t->getattr = slice_getattr;
    t->mark = slice_mark;
    type_add_method(vm, t, "indices", m_indices);
}
