/*
** tuple.c — the immutable tuple type and its iterator. The hash is
** CPython 3.11's xxHash-based tuple hash, so hash((1, 2)) matches CPython.
*/
#include <string.h>

#include "container.h"

#define MAX_ITEMS ((int64_t)1 << 56)

Tuple *tuple_new(VM *vm, int64_t len) {
    if (len < 0) len = 0;
    if (len > MAX_ITEMS) vm_throw(vm, vm->memory_error);
    Tuple *t = gc_alloc_obj(vm, vm->t_tuple, sizeof(Tuple) + (size_t)len * sizeof(Value));
    t->len = len;
    for (int64_t i = 0; i < len; i++) t->items[i] = NONE_VAL;
    return t;
}

Tuple *tuple_from_array(VM *vm, int64_t len, const Value *items) {
    Tuple *t = tuple_new(vm, len);
    if (len > 0) memcpy(t->items, items, (size_t)len * sizeof(Value));
    return t;
}

Tuple *tuple_from_iterable(VM *vm, Value it) {
    if (IS_TUPLE(vm, it)) return AS_TUPLE(it);
    if (ctr_is(it, vm->t_tuple)) return tuple_from_array(vm, AS_TUPLE(it)->len, AS_TUPLE(it)->items);
    if (ctr_is(it, vm->t_list)) return tuple_from_array(vm, AS_LIST(it)->len, AS_LIST(it)->items);
    List *l = list_from_iterable(vm, it);
    return tuple_from_array(vm, l->len, l->items);
}

/* ============================================================== hashing */

#define XXPRIME_1 11400714785074694791ULL
#define XXPRIME_2 14029467366897019727ULL
#define XXPRIME_5 2870177450012600261ULL
#define XXROTATE(x) (((x) << 31) | ((x) >> 33))

static inline uint64_t xx_step(uint64_t acc, int64_t h) {
    acc += (uint64_t)h * XXPRIME_2;
    acc = XXROTATE(acc);
    return acc * XXPRIME_1;
}

static inline int64_t xx_finish(uint64_t acc, int64_t n) {
    acc += (uint64_t)n ^ (XXPRIME_5 ^ 3527539ULL);
    return acc == (uint64_t)-1 ? 1546275796 : (int64_t)acc;
}

int64_t ctr_tuple_hash(const int64_t *hashes, int64_t n) {
    uint64_t acc = XXPRIME_5;
    for (int64_t i = 0; i < n; i++) acc = xx_step(acc, hashes[i]);
    return xx_finish(acc, n);
}

static int64_t tuple_hash(VM *vm, Value self) {
    Tuple *t = AS_TUPLE(self);
    uint64_t acc = XXPRIME_5;
    for (int64_t i = 0; i < t->len; i++) acc = xx_step(acc, vm_hash(vm, t->items[i]));
    return xx_finish(acc, t->len);
}

/* ================================================================ slots */

static Value tuple_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "tuple", kwargs);
    ctr_check_args(vm, "tuple", argc, 0, 1);
    Tuple *t = argc == 0 ? tuple_new(vm, 0) : tuple_from_iterable(vm, argv[0]);
    if (cls != vm->t_tuple) { /* a subclass: same layout, its own type */
        Tuple *s = tuple_from_array(vm, t->len, t->items);
        s->obj.type = cls;
        t = s;
    }
    return OBJ_VAL(t);
}

static void tuple_repr_body(VM *vm, Value self, StrBuf *sb) {
    Tuple *t = AS_TUPLE(self);
    sb_putc(sb, '(');
    for (int64_t i = 0; i < t->len; i++) {
        if (i) sb_appends(sb, ", ");
        ctr_repr_value(vm, sb, t->items[i]);
    }
    if (t->len == 1) sb_putc(sb, ',');
    sb_putc(sb, ')');
}

static Value tuple_repr(VM *vm, Value self) {
    Tuple *t = AS_TUPLE(self);
    if (t->len == 0) return STR_VAL(str_cstr(vm, "()"));
    if (AS_OBJ(self)->flags & OBJ_FLAG_REPR_BUSY) return STR_VAL(str_cstr(vm, "(...)"));
    bool simple = true;
    for (int64_t i = 0; i < t->len && simple; i++) simple = ctr_simple(vm, t->items[i]);
    return ctr_repr(vm, self, tuple_repr_body, simple);
}

static Value tuple_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (!ctr_is(a, vm->t_tuple) || !ctr_is(b, vm->t_tuple) || op > CMP_GE) return EMPTY_VAL;
    return ctr_seq_compare(vm, op, a, b, false);
}

static Tuple *tuple_repeat(VM *vm, Tuple *t, int64_t n) {
    if (n <= 0 || t->len == 0) return tuple_new(vm, 0);
    if (n > MAX_ITEMS / t->len) vm_throw(vm, vm->memory_error);
    Tuple *r = tuple_new(vm, t->len * n);
    for (int64_t i = 0; i < n; i++) memcpy(r->items + i * t->len, t->items, (size_t)t->len * sizeof(Value));
    return r;
}

static Value tuple_binop(VM *vm, BinOp op, Value a, Value b) {
    bool at = ctr_is(a, vm->t_tuple), bt = ctr_is(b, vm->t_tuple);
    if (op == BINOP_ADD && at && bt) {
        Tuple *x = AS_TUPLE(a), *y = AS_TUPLE(b);
        if (y->len == 0 && IS_TUPLE(vm, a)) return a;
        if (x->len == 0 && IS_TUPLE(vm, b)) return b;
        Tuple *r = tuple_new(vm, x->len + y->len);
        memcpy(r->items, x->items, (size_t)x->len * sizeof(Value));
        memcpy(r->items + x->len, y->items, (size_t)y->len * sizeof(Value));
        return OBJ_VAL(r);
    }
    if (op == BINOP_MUL) {
        if (at && ctr_index_like(vm, b)) {
            int64_t n = vm_to_index(vm, b);
            if (n == 1 && IS_TUPLE(vm, a)) return a;
            return OBJ_VAL(tuple_repeat(vm, AS_TUPLE(a), n));
        }
        if (bt && ctr_index_like(vm, a)) {
            int64_t n = vm_to_index(vm, a);
            if (n == 1 && IS_TUPLE(vm, b)) return b;
            return OBJ_VAL(tuple_repeat(vm, AS_TUPLE(b), n));
        }
    }
    return EMPTY_VAL;
}

static Value tuple_getitem(VM *vm, Value self, Value key) {
    Tuple *t = AS_TUPLE(self);
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) {
        int64_t start, stop, step;
        int64_t n = slice_indices(vm, (Slice *)AS_OBJ(key), t->len, &start, &stop, &step);
        if (n == t->len && step == 1 && IS_TUPLE(vm, self)) return self;
        Tuple *r = tuple_new(vm, n);
        for (int64_t i = 0, j = start; i < n; i++, j += step) r->items[i] = t->items[j];
        return OBJ_VAL(r);
    }
    int64_t i = ctr_index_key(vm, key, "tuple");
    if (i < 0) i += t->len;
    if (i < 0 || i >= t->len) vm_raise_kind(vm, IndexError, "tuple index out of range");
    return t->items[i];
}

static int64_t tuple_len(VM *vm, Value self) {
    (void)vm;
    return AS_TUPLE(self)->len;
}

static bool tuple_contains(VM *vm, Value self, Value item) {
    Tuple *t = AS_TUPLE(self);
    for (int64_t i = 0; i < t->len; i++)
        if (ctr_eq(vm, t->items[i], item)) return true;
    return false;
}

static bool tuple_truthy(VM *vm, Value self) {
    (void)vm;
    return AS_TUPLE(self)->len > 0;
}

static void tuple_mark(VM *vm, Obj *o) {
    Tuple *t = (Tuple *)o;
    for (int64_t i = 0; i < t->len; i++) gc_mark_value(vm, t->items[i]);
}

static Value tuple_iter(VM *vm, Value self) {
    SeqIter *it = gc_alloc_obj(vm, vm->t_tuple_iter, sizeof(SeqIter));
    it->seq = self;
    it->index = 0;
    return OBJ_VAL(it);
}

static bool tuple_iter_next(VM *vm, Value self, Value *out) {
    (void)vm;
    SeqIter *it = (SeqIter *)AS_OBJ(self);
    if (!IS_OBJ(it->seq)) return false;
    Tuple *t = AS_TUPLE(it->seq);
    if (it->index < t->len) {
        *out = t->items[it->index++];
        return true;
    }
    it->seq = NONE_VAL;
    return false;
}

/* ============================================================== methods */

static Value m_index(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "tuple.index", kwargs);
    ctr_check_args(vm, "index", argc - 1, 1, 3);
    Tuple *t = AS_TUPLE(argv[0]);
    int64_t start = 0, stop = t->len;
    if (argc > 2) {
        start = vm_to_index(vm, argv[2]);
        if (start < 0 && (start += t->len) < 0) start = 0;
    }
    if (argc > 3) {
        stop = vm_to_index(vm, argv[3]);
        if (stop < 0 && (stop += t->len) < 0) stop = 0;
    }
    for (int64_t i = start; i < stop && i < t->len; i++)
        if (ctr_eq(vm, t->items[i], argv[1])) return INT_VAL(i);
    vm_raise_kind(vm, ValueError, "tuple.index(x): x not in tuple");
}

static Value m_count(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "tuple.count", kwargs);
    arg_count(vm, "tuple.count", argc - 1, 1, 1);
    Tuple *t = AS_TUPLE(argv[0]);
    int64_t n = 0;
    for (int64_t i = 0; i < t->len; i++)
        if (ctr_eq(vm, t->items[i], argv[1])) n++;
    return INT_VAL(n);
}

void tuple_init(VM *vm) {
    Type *t = vm->t_tuple;
    t->new_ = tuple_new_slot;
    t->repr = tuple_repr;
    t->hash = tuple_hash;
    t->compare = tuple_compare;
    t->binop = tuple_binop;
    t->getitem = tuple_getitem;
    t->len = tuple_len;
    t->contains = tuple_contains;
    t->iter = tuple_iter;
    t->truthy = tuple_truthy;
    t->mark = tuple_mark;

    type_add_method(vm, t, "index", m_index);
    type_add_method(vm, t, "count", m_count);

    Type *it = vm->t_tuple_iter;
    it->iter = ctr_iter_self;
    it->next = tuple_iter_next;
    it->mark = ctr_seqiter_mark;
}
