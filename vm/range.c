/*
** range.c — the range type (O(1) len, indexing, slicing and int
** membership) and range_iterator, whose fields the interpreter's FOR_ITER
** reads directly: it yields next while (step > 0 ? next < stop : next > stop).
*/
#include <math.h>
#include <string.h>

#include "bigint.h"
#include "container.h"
#include "range_big.h"

Value range_new(VM *vm, int64_t start, int64_t stop, int64_t step) {
    Range *r = gc_alloc_obj(vm, vm->t_range, sizeof(Range));
    r->start = start;
    r->stop = stop;
    r->step = step;
    return OBJ_VAL(r);
}

/* Number of elements, exact in unsigned arithmetic (may exceed INT64_MAX). */
static uint64_t ulen(int64_t start, int64_t stop, int64_t step) {
    if (step > 0) {
        if (start >= stop) return 0;
        return ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    }
    if (start <= stop) return 0;
    return ((uint64_t)start - (uint64_t)stop - 1) / ((uint64_t)0 - (uint64_t)step) + 1;
}

int64_t range_len(Range *r) {
    uint64_t n = ulen(r->start, r->stop, r->step);
    return n > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)n;
}

static int64_t checked_len(VM *vm, Range *r) {
    uint64_t n = ulen(r->start, r->stop, r->step);
    if (n > (uint64_t)INT64_MAX) vm_raise_kind(vm, OverflowError, "Python int too large to convert to C ssize_t");
    return (int64_t)n;
}

/* The i-th element (0 <= i < len): cannot overflow. */
static int64_t range_at(Range *r, int64_t i) { return (int64_t)((uint64_t)r->start + (uint64_t)i * (uint64_t)r->step); }

static Value iter_new(VM *vm, int64_t next, int64_t stop, int64_t step) {
    RangeIter *it = gc_alloc_obj(vm, vm->t_range_iter, sizeof(RangeIter));
    it->next = next;
    it->stop = stop;
    it->step = step;
    return OBJ_VAL(it);
}

Value range_reversed(VM *vm, Range *r) {
    if (r->big) return range_big_iter(vm, r, true);
    int64_t n = range_len(r);
    if (n == 0) return iter_new(vm, 0, 0, 1);
    int64_t last = range_at(r, n - 1);
    int64_t stop;
    /* one past the first element, in the reversed direction */
    if (r->step > 0) stop = r->start == INT64_MIN ? INT64_MIN : r->start - 1;
    else stop = r->start == INT64_MAX ? INT64_MAX : r->start + 1;
    int64_t step = r->step == INT64_MIN ? INT64_MAX : -r->step;
    return iter_new(vm, last, stop, step);
}

/* Is x (an int) an element of r? */
static bool contains_int(Range *r, int64_t x) {
    if (r->step > 0) {
        if (x < r->start || x >= r->stop) return false;
        return ((uint64_t)x - (uint64_t)r->start) % (uint64_t)r->step == 0;
    }
    if (x > r->start || x <= r->stop) return false;
    return ((uint64_t)r->start - (uint64_t)x) % ((uint64_t)0 - (uint64_t)r->step) == 0;
}

/* x as an int when it equals one exactly (ints, bools, integral floats). */
static bool exact_int(Value x, int64_t *out) {
    if (IS_INTLIKE(x)) {
        *out = AS_INTLIKE(x);
        return true;
    }
    if (IS_FLOAT(x)) {
        double d = AS_FLOAT(x);
        if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
        *out = (int64_t)d;
        return true;
    }
    return false;
}

/* Position of x in r by == over every element (user objects), or -1. */
static int64_t search(VM *vm, Range *r, Value x, bool count, int64_t *nfound) {
    int64_t n = checked_len(vm, r), found = 0;
    for (int64_t i = 0; i < n; i++) {
        if (vm_equal(vm, INT_VAL(range_at(r, i)), x)) {
            if (!count) return i;
            found++;
        }
    }
    if (nfound) *nfound = found;
    return -1;
}

/* ================================================================= slots */

/* range() with an argument that is not a plain int: a big int or __index__ */
static Value range_new_any(VM *vm, int argc, Value *argv) {
    const char *fmt = "'%s' object cannot be interpreted as an integer";
    Value v[3] = {INT_VAL(0), INT_VAL(0), INT_VAL(1)};
    for (int i = 0; i < argc; i++) {
        Value x = range_int_arg(vm, argv[i], fmt);
        vm_push_root(vm, x);
        v[argc == 1 ? 1 : i] = x;
    }
    vm_pop_roots(vm, argc);
    if (vm_equal(vm, v[2], INT_VAL(0))) vm_raise_kind(vm, ValueError, "range() arg 3 must not be zero");
    return range_make(vm, v[0], v[1], v[2]);
}

static Value range_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    arg_no_kwargs(vm, "range", kwargs);
    ctr_check_args(vm, "range", argc, 1, 3);
    for (int i = 0; i < argc; i++)
        if (!IS_INTLIKE(argv[i])) return range_new_any(vm, argc, argv);
    int64_t start = 0, stop, step = 1;
    if (argc == 1) {
        stop = vm_to_index(vm, argv[0]);
    } else {
        start = vm_to_index(vm, argv[0]);
        stop = vm_to_index(vm, argv[1]);
        if (argc == 3) step = vm_to_index(vm, argv[2]);
    }
    if (step == 0) vm_raise_kind(vm, ValueError, "range() arg 3 must not be zero");
    return range_new(vm, start, stop, step);
}

static Range *as_range(Value v) { return (Range *)AS_OBJ(v); }

/* A range too long for an int64 length goes the big-int way too. */
static bool is_big(Range *r) { return r->big || ulen(r->start, r->stop, r->step) > (uint64_t)INT64_MAX; }

static Value range_repr(VM *vm, Value self) {
    Range *r = as_range(self);
    if (r->big) return range_big_repr(vm, r);
    if (r->step == 1) return STR_VAL(str_printf(vm, "range(%lld, %lld)", (long long)r->start, (long long)r->stop));
    return STR_VAL(str_printf(vm, "range(%lld, %lld, %lld)", (long long)r->start, (long long)r->stop,
                              (long long)r->step));
}

static int64_t range_len_slot(VM *vm, Value self) {
    Range *r = as_range(self);
    if (!r->big) return checked_len(vm, r);
    Value n = range_length(vm, r);
    if (!IS_INT(n)) vm_raise_kind(vm, OverflowError, "Python int too large to convert to C ssize_t");
    return AS_INT(n);
}

static bool range_truthy(VM *vm, Value self) {
    if (as_range(self)->big) return vm_truthy(vm, range_length(vm, as_range(self)));
    return ulen(as_range(self)->start, as_range(self)->stop, as_range(self)->step) > 0;
}

static Value range_getitem(VM *vm, Value self, Value key) {
    Range *r = as_range(self);
    bool slice = IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice;
    if (is_big(r) || (!slice && bigint_is(vm, key)))
        return slice ? range_big_slice(vm, r, (Slice *)AS_OBJ(key)) : range_big_item(vm, r, key);
    int64_t n = checked_len(vm, r);
    if (slice) {
        int64_t start, stop, step, a, b, c;
        Slice *sl = (Slice *)AS_OBJ(key);
        if (!(IS_INTLIKE(sl->start) || IS_NONE(sl->start)) || !(IS_INTLIKE(sl->stop) || IS_NONE(sl->stop)) ||
            !(IS_INTLIKE(sl->step) || IS_NONE(sl->step)))
            return range_big_slice(vm, r, sl);
        slice_indices(vm, sl, n, &start, &stop, &step);
        if (__builtin_mul_overflow(start, r->step, &a) || __builtin_add_overflow(a, r->start, &a) ||
            __builtin_mul_overflow(stop, r->step, &b) || __builtin_add_overflow(b, r->start, &b) ||
            __builtin_mul_overflow(step, r->step, &c))
            return range_big_slice(vm, r, sl); /* bounds past 64 bits */
        return range_new(vm, a, b, c);
    }
    int64_t i;
    if (IS_INTLIKE(key)) i = AS_INTLIKE(key);
    else if (IS_OBJ(key) && (AS_OBJ(key)->type->flags & TYPE_HEAP)) i = vm_to_index(vm, key);
    else vm_raise_kind(vm, TypeError, "range indices must be integers or slices, not %s", vm_type_name(vm, key));
    if (i < 0) i += n;
    if (i < 0 || i >= n) vm_raise_kind(vm, IndexError, "range object index out of range");
    return INT_VAL(range_at(r, i));
}

static bool range_contains(VM *vm, Value self, Value x) {
    int64_t i;
    if (as_range(self)->big || bigint_is(vm, x)) return range_big_contains(vm, as_range(self), x);
    if (exact_int(x, &i)) return contains_int(as_range(self), i);
    if (!IS_OBJ(x) || AS_OBJ(x)->type == vm->t_str) return false; /* NaN, inf, fractions, None, str */
    return search(vm, as_range(self), x, false, NULL) >= 0;
}

static Value range_iter(VM *vm, Value self) {
    Range *r = as_range(self);
    if (r->big) return range_big_iter(vm, r, false);
    return iter_new(vm, r->start, r->stop, r->step);
}

static bool range_iter_next(VM *vm, Value self, Value *out) {
    (void)vm;
    RangeIter *it = (RangeIter *)AS_OBJ(self);
    if (it->step > 0 ? it->next >= it->stop : it->next <= it->stop) return false;
    *out = INT_VAL(it->next);
    if (__builtin_add_overflow(it->next, it->step, &it->next)) it->next = it->stop;
    return true;
}

/* == compares the sequences: same length, and same start (and step when
** longer than one element). */
static Value range_compare(VM *vm, CmpOp op, Value a, Value b) {
    if ((op != CMP_EQ && op != CMP_NE) || !ctr_is(a, vm->t_range) || !ctr_is(b, vm->t_range)) return EMPTY_VAL;
    Range *x = as_range(a), *y = as_range(b);
    if (x->big || y->big) return BOOL_VAL(range_equal(vm, x, y) == (op == CMP_EQ));
    uint64_t n = ulen(x->start, x->stop, x->step);
    bool eq = n == ulen(y->start, y->stop, y->step) &&
              (n == 0 || (x->start == y->start && (n == 1 || x->step == y->step)));
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

/* CPython's range hash: hash((len, start, step)) with None for the parts
** that do not matter. */
static int64_t range_hash(VM *vm, Value self) {
    Range *r = as_range(self);
    if (is_big(r)) return range_big_hash(vm, r);
    int64_t n = range_len(r);
    int64_t h[3];
    h[0] = vm_hash(vm, INT_VAL(n));
    h[1] = n == 0 ? vm_hash(vm, NONE_VAL) : vm_hash(vm, INT_VAL(r->start));
    h[2] = n <= 1 ? vm_hash(vm, NONE_VAL) : vm_hash(vm, INT_VAL(r->step));
    return ctr_tuple_hash(h, 3);
}

static Value range_getattr(VM *vm, Value self, Str *name) {
    Range *r = as_range(self);
    const char *n = name->chars;
    if (r->big) {
        for (int i = 0; i < 3; i++)
            if (strcmp(n, (const char *[]){"start", "stop", "step"}[i]) == 0) return r->big->items[i];
    }
    if (strcmp(n, "start") == 0) return INT_VAL(r->start);
    if (strcmp(n, "stop") == 0) return INT_VAL(r->stop);
    if (strcmp(n, "step") == 0) return INT_VAL(r->step);
    return generic_getattr(vm, self, name);
}

/* ============================================================== methods */

static Value m_index(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "range.index", kwargs);
    arg_count(vm, "range.index", argc - 1, 1, 1);
    Range *r = as_range(argv[0]);
    Value x = argv[1];
    if (is_big(r) || bigint_is(vm, x)) return range_big_index(vm, r, x, false);
    if (IS_INTLIKE(x)) {
        int64_t v = AS_INTLIKE(x);
        if (!contains_int(r, v)) {
            Str *s = vm_repr(vm, x);
            vm_raise_kind(vm, ValueError, "%s is not in range", s->chars);
        }
        if (r->step > 0) return INT_VAL((int64_t)(((uint64_t)v - (uint64_t)r->start) / (uint64_t)r->step));
        return INT_VAL((int64_t)(((uint64_t)r->start - (uint64_t)v) / ((uint64_t)0 - (uint64_t)r->step)));
    }
    int64_t i = search(vm, r, x, false, NULL);
    if (i < 0) vm_raise_kind(vm, ValueError, "sequence.index(x): x not in sequence");
    return INT_VAL(i);
}

static Value m_count(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "range.count", kwargs);
    arg_count(vm, "range.count", argc - 1, 1, 1);
    Range *r = as_range(argv[0]);
    if (is_big(r) || bigint_is(vm, argv[1])) return range_big_index(vm, r, argv[1], true);
    if (IS_INTLIKE(argv[1])) return INT_VAL(contains_int(r, AS_INTLIKE(argv[1])) ? 1 : 0);
    int64_t n = 0;
    search(vm, r, argv[1], true, &n);
    return INT_VAL(n);
}

void range_init(VM *vm) {
    Type *t = vm->t_range;
    t->new_ = range_new_slot;
    t->repr = range_repr;
    t->len = range_len_slot;
    t->truthy = range_truthy;
    t->getitem = range_getitem;
    t->contains = range_contains;
    t->iter = range_iter;
    t->compare = range_compare;
    t->hash = range_hash;
    t->getattr = range_getattr;
    type_add_method(vm, t, "index", m_index);
    type_add_method(vm, t, "count", m_count);
    range_big_init(vm);

    Type *it = vm->t_range_iter;
    it->iter = ctr_iter_self;
    it->next = range_iter_next;
}
