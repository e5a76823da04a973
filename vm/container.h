/*
** container.h — helpers shared by the container files (list.c, tuple.c,
** dict.c, set.c, range.c, slice.c, number.c, sort.c) only; not part of the
** VM-wide API in vm.h.
*/
#ifndef GPY_CONTAINER_H
#define GPY_CONTAINER_H

#include <string.h>

#include "vm.h"

/* Obj.flags bit of lists, tuples, dicts and sets: "repr of this object is
** in progress", so that a self-referencing container prints [...] / {...}. */
#define OBJ_FLAG_REPR_BUSY 0x80

/* Instance checks that accept builtin subtypes of the same C layout (user
** subclasses are boxed: class_builtin_sub.c). */
static inline bool ctr_is(Value v, Type *t) {
    return IS_OBJ(v) && (AS_OBJ(v)->type == t ||
                         (!(AS_OBJ(v)->type->flags & TYPE_HEAP) && type_is_subtype(AS_OBJ(v)->type, t)));
}
static inline bool ctr_is_anyset(VM *vm, Value v) {
    return ctr_is(v, vm->t_set) || ctr_is(v, vm->t_frozenset);
}

/* Equality as containers use it: identity first (like CPython's
** PyObject_RichCompareBool), then ==. May run user code. */
static inline bool ctr_eq(VM *vm, Value a, Value b) {
    if (IS_OBJ(a) && IS_OBJ(b) && AS_OBJ(a) == AS_OBJ(b)) return true;
    return vm_equal(vm, a, b);
}

/* Equality of a stored hash-table key with a looked-up one when it cannot
** run user code (dict.c, set.c); *decided is false when vm_equal (and
** maybe a user __eq__) is needed. */
static inline bool ctr_quick_equal(VM *vm, Value a, Value b, bool *decided) {
    *decided = true;
    bool ao = a.tag == VAL_OBJ, bo = b.tag == VAL_OBJ;
    if (ao && bo) {
        Obj *x = AS_OBJ(a), *y = AS_OBJ(b);
        if (x == y) return true;
        if (x->type == vm->t_str && y->type == vm->t_str) {
            Str *s = (Str *)x, *t = (Str *)y;
            return s->len == t->len && memcmp(s->chars, t->chars, (size_t)s->len) == 0;
        }
    } else if (ao || bo) {
        /* a str never equals a number or None; other objects may (user __eq__) */
        if ((ao ? AS_OBJ(a) : AS_OBJ(b))->type == vm->t_str) return false;
    } else {
        if (a.tag == VAL_INT && b.tag == VAL_INT) return a.as.i == b.as.i;
        return vm_equal(vm, a, b); /* numbers and None: no user code */
    }
    *decided = false;
    return false;
}

/* Argument-count checks with CPython's Argument Clinic wording:
** "pop expected at most 1 argument, got 2". n excludes self. */
void ctr_check_args(VM *vm, const char *name, int n, int min, int max);

/* Appends repr(v) to sb; ints, floats, bools, None and strs without user code. */
void ctr_repr_value(VM *vm, StrBuf *sb, Value v);
/* True when repr of v can run no user code (numbers, None, str). */
static inline bool ctr_simple(VM *vm, Value v) {
    return !IS_OBJ(v) || AS_OBJ(v)->type == vm->t_str;
}

/* Builds a container's repr through body, with the busy flag set on self
** while it runs (so nested references print "..."). When simple is false
** the body runs protected: an exception clears the flag, frees the buffer
** and propagates. */
typedef void (*CtrReprBody)(VM *vm, Value self, StrBuf *sb);
Value ctr_repr(VM *vm, Value self, CtrReprBody body, bool simple);

/* Raises TypeError "unhashable type: 'list'" (hash slot of mutable types). */
int64_t ctr_unhashable(VM *vm, Value self);

/* CPython's tuple hash (xxHash-based) over n element hashes. */
int64_t ctr_tuple_hash(const int64_t *hashes, int64_t n);

/* Lexicographic rich comparison of two lists (is_list) or two tuples. */
Value ctr_seq_compare(VM *vm, CmpOp op, Value a, Value b, bool is_list);
/* Is v usable as an index / repeat count: int, bool or a class with __index__. */
bool ctr_index_like(VM *vm, Value v);
/* Integer value of a non-slice subscript of a list/tuple, else TypeError
** "<tname> indices must be integers or slices, not str". */
int64_t ctr_index_key(VM *vm, Value key, const char *tname);
/* Iterator slots shared by the builtin iterators. */
Value ctr_iter_self(VM *vm, Value self);
void ctr_seqiter_mark(VM *vm, Obj *o);

/* sets (set.c) used by dict views */
Set *set_from(VM *vm, Type *type, Value iterable);       /* type(iterable) */
Set *set_intersect(VM *vm, Set *so, Value other);         /* so.intersection(other) */
void set_diff_update(VM *vm, Set *so, Value other);       /* so -= other (any iterable) */
void set_symdiff_update(VM *vm, Set *so, Value other);    /* so ^= other (any iterable) */

#endif
