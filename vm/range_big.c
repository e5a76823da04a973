/*
** range_big.c — ranges whose start, stop or step do not fit in 64 bits
** (range(2**70)), as CPython builds them.
**
** A Range keeps its three int64 fields for the fast path (FOR_ITER reads
** them); when one bound is a big int, Range.big holds (start, stop, step)
** as int values and the int64 fields describe an empty range, so a reader
** that forgets to check r->big sees nothing rather than wrong numbers.
** Everything here is generic int arithmetic (vm_binop): big ranges are rare
** and each operation is O(1) big-int steps. Iteration goes through
** longrange_iterator (CPython's name), which counts down the length.
*/
#include "range_big.h"

#include <math.h>

#include "bigint.h"
#include "class_internal.h"
#include "container.h"

typedef struct LongRangeIter {
    Obj obj;
    Value next, step, left; /* the next value, the step, how many remain */
} LongRangeIter;

static Value add(VM *vm, Value a, Value b) { return vm_binop(vm, BINOP_ADD, a, b); }
static Value sub(VM *vm, Value a, Value b) { return vm_binop(vm, BINOP_SUB, a, b); }
static Value mul(VM *vm, Value a, Value b) { return vm_binop(vm, BINOP_MUL, a, b); }
static bool lt(VM *vm, Value a, Value b) { return vm_truthy(vm, vm_compare(vm, CMP_LT, a, b)); }
static bool eq(VM *vm, Value a, Value b) { return vm_equal(vm, a, b); }
static int sign(VM *vm, Value v) { return IS_INTLIKE(v) ? (AS_INTLIKE(v) > 0) - (AS_INTLIKE(v) < 0) : bigint_sign(vm, v); }

/* An int value from an int, a bool, an int subclass or __index__. */
Value range_int_arg(VM *vm, Value v, const char *errfmt) {
    if (IS_INTLIKE(v)) return INT_VAL(AS_INTLIKE(v));
    if (bigint_is(vm, v)) return v;
    Type *t = vm_typeof(vm, v);
    if (t->flags & TYPE_HEAP) {
        Value u = class_unbox(vm, v);
        if (IS_INTLIKE(u) || bigint_is(vm, u)) return IS_INTLIKE(u) ? INT_VAL(AS_INTLIKE(u)) : u;
        Value m = class_heap_lookup(vm, t, str_cstr(vm, "__index__"));
        if (!IS_EMPTY(m)) {
            Value r = class_call_meth(vm, m, v, 0, NULL, NULL);
            if (!IS_INTLIKE(r) && !bigint_is(vm, r))
                vm_raise_kind(vm, TypeError, "__index__ returned non-int (type %s)", vm_type_name(vm, r));
            return IS_INTLIKE(r) ? INT_VAL(AS_INTLIKE(r)) : r;
        }
    }
    if (!errfmt) vm_raise_kind(vm, TypeError, "slice indices must be integers or None or have an __index__ method");
    vm_raise_kind(vm, TypeError, errfmt, class_type_name(t));
}

Value range_make(VM *vm, Value start, Value stop, Value step) {
    if (IS_INT(start) && IS_INT(stop) && IS_INT(step))
        return range_new(vm, AS_INT(start), AS_INT(stop), AS_INT(step));
    Value items[3] = {start, stop, step};
    Tuple *t = tuple_from_array(vm, 3, items);
    vm_push_root(vm, OBJ_VAL(t));
    Value r = range_new(vm, 0, 0, 1);
    ((Range *)AS_OBJ(r))->big = t;
    vm_pop_roots(vm, 1);
    return r;
}

void range_values(Range *r, Value out[3]) {
    if (r->big) {
        for (int i = 0; i < 3; i++) out[i] = r->big->items[i];
        return;
    }
    out[0] = INT_VAL(r->start);
    out[1] = INT_VAL(r->stop);
    out[2] = INT_VAL(r->step);
}

Value range_length(VM *vm, Range *r) {
    Value v[3];
    range_values(r, v);
    Value lo = v[0], hi = v[1], step = v[2];
    if (sign(vm, step) < 0) {
        lo = v[1];
        hi = v[0];
        step = vm_unop(vm, UNOP_NEG, step);
    }
    if (!lt(vm, lo, hi)) return INT_VAL(0);
    /* (hi - lo - 1) // step + 1 */
    Value n = sub(vm, sub(vm, hi, lo), INT_VAL(1));
    return add(vm, vm_binop(vm, BINOP_FLOORDIV, n, step), INT_VAL(1));
}

static Value item_at(VM *vm, Range *r, Value i) {
    Value v[3];
    range_values(r, v);
    return add(vm, v[0], mul(vm, i, v[2]));
}

Value range_big_item(VM *vm, Range *r, Value key) {
    Value i = range_int_arg(vm, key, "range indices must be integers or slices, not %s");
    Value n = range_length(vm, r);
    if (sign(vm, i) < 0) i = add(vm, i, n);
    if (sign(vm, i) < 0 || !lt(vm, i, n)) vm_raise_kind(vm, IndexError, "range object index out of range");
    return item_at(vm, r, i);
}

/* A slice's parts as int values (EMPTY for None), converted before any
** big-int temporaries exist: __index__ may run user code (a safepoint). */
static Value slice_part(VM *vm, Value b) {
    if (IS_NONE(b) || IS_EMPTY(b)) return EMPTY_VAL;
    return range_int_arg(vm, b, NULL);
}

/* One slice bound clamped to [lower, upper] after adding len to a negative one. */
static Value clamp_bound(VM *vm, Value b, Value dflt, Value len, Value lower, Value upper) {
    if (IS_EMPTY(b)) return dflt;
    if (sign(vm, b) < 0) {
        b = add(vm, b, len);
        return lt(vm, b, lower) ? lower : b;
    }
    return lt(vm, upper, b) ? upper : b;
}

Value range_big_slice(VM *vm, Range *r, Slice *s) {
    Value parts[3];
    parts[2] = slice_part(vm, s->step);
    vm_push_root(vm, parts[2]);
    parts[0] = slice_part(vm, s->start);
    vm_push_root(vm, parts[0]);
    parts[1] = slice_part(vm, s->stop);
    vm_pop_roots(vm, 2);
    Value step = IS_EMPTY(parts[2]) ? INT_VAL(1) : parts[2];
    if (sign(vm, step) == 0) vm_raise_kind(vm, ValueError, "slice step cannot be zero");
    Value len = range_length(vm, r);
    bool back = sign(vm, step) < 0;
    Value lower = back ? INT_VAL(-1) : INT_VAL(0);
    Value upper = back ? sub(vm, len, INT_VAL(1)) : len;
    Value a = clamp_bound(vm, parts[0], back ? upper : lower, len, lower, upper);
    Value b = clamp_bound(vm, parts[1], back ? lower : upper, len, lower, upper);
    Value v[3];
    range_values(r, v);
    return range_make(vm, item_at(vm, r, a), item_at(vm, r, b), mul(vm, v[2], step));
}

/* Position of the int x in r, or -1 (as a Value: None) when absent. */
static Value position(VM *vm, Range *r, Value x) {
    Value v[3];
    range_values(r, v);
    bool up = sign(vm, v[2]) > 0;
    if (up ? (lt(vm, x, v[0]) || !lt(vm, x, v[1])) : (lt(vm, v[0], x) || !lt(vm, v[1], x))) return NONE_VAL;
    Value off = sub(vm, x, v[0]);
    if (sign(vm, vm_binop(vm, BINOP_MOD, off, v[2])) != 0) return NONE_VAL;
    return vm_binop(vm, BINOP_FLOORDIV, off, v[2]);
}

/* x as an int value when it is one exactly (int, bool, integral float). */
static bool int_like(VM *vm, Value x, Value *out) {
    if (IS_INTLIKE(x)) *out = INT_VAL(AS_INTLIKE(x));
    else if (bigint_is(vm, x)) *out = x;
    else if (IS_FLOAT(x) && isfinite(AS_FLOAT(x)) && AS_FLOAT(x) == floor(AS_FLOAT(x))) *out = bigint_from_double(vm, AS_FLOAT(x));
    else return false;
    return true;
}

bool range_big_contains(VM *vm, Range *r, Value x) {
    Value i;
    if (!int_like(vm, x, &i)) return false;
    return !IS_NONE(position(vm, r, i));
}

Value range_big_index(VM *vm, Range *r, Value x, bool count) {
    Value i;
    Value p = int_like(vm, x, &i) ? position(vm, r, i) : NONE_VAL;
    if (count) return INT_VAL(IS_NONE(p) ? 0 : 1);
    if (IS_NONE(p)) {
        if (!IS_INTLIKE(x) && !bigint_is(vm, x)) vm_raise_kind(vm, ValueError, "sequence.index(x): x not in sequence");
        vm_raise_kind(vm, ValueError, "%s is not in range", vm_repr(vm, x)->chars);
    }
    return p;
}

Value range_big_repr(VM *vm, Range *r) {
    Value v[3];
    range_values(r, v);
    Str *a = vm_repr(vm, v[0]);
    vm_push_root(vm, STR_VAL(a));
    Str *b = vm_repr(vm, v[1]);
    vm_push_root(vm, STR_VAL(b));
    Str *s = NULL;
    if (!eq(vm, v[2], INT_VAL(1))) s = vm_repr(vm, v[2]);
    Str *out = s ? str_printf(vm, "range(%s, %s, %s)", a->chars, b->chars, s->chars)
                 : str_printf(vm, "range(%s, %s)", a->chars, b->chars);
    vm_pop_roots(vm, 2);
    return STR_VAL(out);
}

bool range_equal(VM *vm, Range *x, Range *y) {
    Value n = range_length(vm, x);
    vm_push_root(vm, n);
    bool same = eq(vm, n, range_length(vm, y));
    vm_pop_roots(vm, 1);
    if (!same || sign(vm, n) == 0) return same;
    Value a[3], b[3];
    range_values(x, a);
    range_values(y, b);
    return eq(vm, a[0], b[0]) && (eq(vm, n, INT_VAL(1)) || eq(vm, a[2], b[2]));
}

int64_t range_big_hash(VM *vm, Range *r) {
    Value v[3];
    range_values(r, v);
    Value n = range_length(vm, r);
    int64_t h[3];
    h[0] = vm_hash(vm, n);
    h[1] = sign(vm, n) == 0 ? vm_hash(vm, NONE_VAL) : vm_hash(vm, v[0]);
    h[2] = sign(vm, n) == 0 || eq(vm, n, INT_VAL(1)) ? vm_hash(vm, NONE_VAL) : vm_hash(vm, v[2]);
    return ctr_tuple_hash(h, 3);
}

/* ------------------------------------------------------ longrange_iterator */

Value range_big_iter(VM *vm, Range *r, bool reversed) {
    Value n = range_length(vm, r);
    vm_push_root(vm, n);
    Value v[3];
    range_values(r, v);
    Value first = v[0], step = v[2];
    if (reversed) {
        first = sign(vm, n) == 0 ? v[0] : item_at(vm, r, sub(vm, n, INT_VAL(1)));
        vm_push_root(vm, first);
        step = vm_unop(vm, UNOP_NEG, step);
        vm_pop_roots(vm, 1);
    }
    vm_push_root(vm, first);
    vm_push_root(vm, step);
    LongRangeIter *it = gc_alloc_obj(vm, vm->t_longrange_iter, sizeof(LongRangeIter));
    it->next = first;
    it->step = step;
    it->left = n;
    vm_pop_roots(vm, 3);
    return OBJ_VAL(it);
}

static bool longiter_next(VM *vm, Value self, Value *out) {
    LongRangeIter *it = (LongRangeIter *)AS_OBJ(self);
    if (sign(vm, it->left) <= 0) return false;
    *out = it->next;
    vm_push_root(vm, *out);
    it->left = sub(vm, it->left, INT_VAL(1));
    it->next = add(vm, it->next, it->step);
    vm_pop_roots(vm, 1);
    return true;
}

static Value longiter_len_hint(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)vm;
    (void)argc;
    (void)kwargs;
    return ((LongRangeIter *)AS_OBJ(argv[0]))->left;
}

static void longiter_mark(VM *vm, Obj *o) {
    LongRangeIter *it = (LongRangeIter *)o;
    gc_mark_value(vm, it->next);
    gc_mark_value(vm, it->step);
    gc_mark_value(vm, it->left);
}

static void range_mark(VM *vm, Obj *o) {
    gc_mark_obj(vm, (Obj *)((Range *)o)->big);
}

void range_big_init(VM *vm) {
    vm->t_range->mark = range_mark;
    Type *t = vm->t_longrange_iter = type_new_builtin(vm, "longrange_iterator", vm->t_object, 0);
    t->iter = ctr_iter_self;
    t->next = longiter_next;
    t->mark = longiter_mark;
    type_add_method(vm, t, "__length_hint__", longiter_len_hint);
}
