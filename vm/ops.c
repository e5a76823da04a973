/*
** ops.c — the generic operations. Every place in the VM that needs "a + b",
** "a < b", hash(a), repr(a), a.x, a[k] or iter(a) on arbitrary values comes
** here. Numbers take fast paths; everything else dispatches through the C
** slots of the operands' types (object.h), following CPython's protocols:
** reflected operands, NotImplemented (EMPTY_VAL from a slot), identity
** fallback for ==, and CPython 3.11's error messages.
*/
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "bigint.h"
#include "class_internal.h"
#include "cstack.h"
#include "complex_num.h"

/* ------------------------------------------------------------------ types */

Type *vm_typeof(VM *vm, Value v) {
    switch (v.tag) {
    case VAL_OBJ: return AS_OBJ(v)->type;
    case VAL_INT: return vm->t_int;
    case VAL_FLOAT: return vm->t_float;
    case VAL_BOOL: return vm->t_bool;
    default: return vm->t_NoneType;
    }
}

const char *vm_type_name(VM *vm, Value v) {
    return class_type_name(vm_typeof(vm, v));
}

bool type_is_subtype(Type *t, Type *base) {
    if (t && t->mro) {
        for (int64_t i = 0; i < t->mro->len; i++)
            if (AS_OBJ(t->mro->items[i]) == &base->obj) return true;
        return false;
    }
    for (; t; t = t->base)
        if (t == base) return true;
    return false;
}

bool vm_isinstance(VM *vm, Value v, Type *t) {
    if (t == vm->t_object) return true;
    Type *vt = vm_typeof(vm, v);
    if (vt == t) return true;
    if (IS_BOOL(v) && t == vm->t_int) return true; /* bool subclasses int */
    return type_is_subtype(vt, t);
}

/* Enters one level of C recursion (repr, comparison, hash of nested
** containers), raising RecursionError past the recursion limit so that a
** deeply nested structure cannot overflow the C stack. */
static void depth_enter(VM *vm, const char *what) {
    vm_check_c_stack(vm, what);
    int32_t limit = vm->recursion_limit > 0 ? vm->recursion_limit : 1000;
    if (limit > 5000) limit = 5000; /* the C stack does not grow with sys.setrecursionlimit */
    if (++vm->c_depth > limit) {
        vm->c_depth--;
        vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded%s", what);
    }
}

static inline void depth_leave(VM *vm) {
    vm->c_depth--;
}

/* --------------------------------------------------------------- truthiness */

bool vm_truthy(VM *vm, Value v) {
    switch (v.tag) {
    case VAL_BOOL: return v.as.b;
    case VAL_INT: return v.as.i != 0;
    case VAL_FLOAT: return v.as.f != 0.0;
    case VAL_OBJ: break;
    default: return false;
    }
    Obj *o = AS_OBJ(v);
    Type *t = o->type;
    if (t == vm->t_str) return ((Str *)o)->len > 0;
    if (t == vm->t_list) return ((List *)o)->len > 0;
    if (t == vm->t_tuple) return ((Tuple *)o)->len > 0;
    if (t == vm->t_dict) return ((Dict *)o)->count > 0;
    if (t->truthy) return t->truthy(vm, v);
    if (t->len) return t->len(vm, v) != 0;
    return true;
}

/* --------------------------------------------------------- binary operators */

static const char *const binop_sym[BINOP__COUNT] = {
    "+", "-", "*", "@", "/", "//", "%", "**", "<<", ">>", "&", "|", "^",
};

static bool is_sequence(VM *vm, Value v) {
    if (!IS_OBJ(v)) return false;
    Type *t = AS_OBJ(v)->type;
    return t == vm->t_str || t == vm->t_list || t == vm->t_tuple;
}

/* TypeError for an operator no operand supports, with CPython's special
** wording for sequence concatenation and repetition. */
static _Noreturn void binop_error(VM *vm, BinOp op, Value a, Value b, bool inplace) {
    const char *ta = vm_type_name(vm, a), *tb = vm_type_name(vm, b);
    if (op == BINOP_ADD && is_sequence(vm, a))
        vm_raise_kind(vm, TypeError, "can only concatenate %s (not \"%s\") to %s", ta, tb, ta);
    if (op == BINOP_MUL && ((is_sequence(vm, a) && bigint_is(vm, b)) || (is_sequence(vm, b) && bigint_is(vm, a))))
        vm_raise_kind(vm, OverflowError, "cannot fit 'int' into an index-sized integer");
    if (op == BINOP_MUL && is_sequence(vm, a))
        vm_raise_kind(vm, TypeError, "can't multiply sequence by non-int of type '%s'", tb);
    if (op == BINOP_MUL && is_sequence(vm, b))
        vm_raise_kind(vm, TypeError, "can't multiply sequence by non-int of type '%s'", ta);
    if (op == BINOP_POW && !inplace)
        vm_raise_kind(vm, TypeError, "unsupported operand type(s) for ** or pow(): '%s' and '%s'", ta, tb);
    vm_raise_kind(vm, TypeError, "unsupported operand type(s) for %s%s: '%s' and '%s'", binop_sym[op],
                  inplace ? "=" : "", ta, tb);
}

/* a op b through a's type. A number never handles a non-number operand. */
static Value binop_left(VM *vm, Type *ta, BinOp op, Value a, Value b) {
    if (!ta->binop || IS_NUMBER(a)) return EMPTY_VAL;
    if (ta->binop == class_heap_binop) return class_heap_binop_side(vm, op, a, b, false);
    return ta->binop(vm, op, a, b);
}

/* a op b through b's type (the reflected operation, e.g. b.__radd__(a)). */
static Value binop_right(VM *vm, Type *tb, BinOp op, Value a, Value b) {
    if (!tb->binop || IS_NUMBER(b)) return EMPTY_VAL;
    if (tb->binop == class_heap_binop) return class_heap_binop_side(vm, op, a, b, true);
    return tb->binop(vm, op, a, b);
}

/* Does subclass tb override the reflected method it would be tried first
** for? (Python only gives the right operand priority in that case.) */
static bool right_has_priority(VM *vm, Type *ta, Type *tb, BinOp op) {
    if (!tb->binop || !type_is_subtype(tb, ta)) return false;
    if (tb->binop != class_heap_binop) return tb->binop != ta->binop;
    Str *rname = vm->dunder_rbinop[op];
    if (!rname) return false;
    Value rb = class_heap_lookup(vm, tb, rname);
    if (IS_EMPTY(rb)) return false;
    Value ra = class_heap_lookup(vm, ta, rname);
    return !vm_is(ra, rb);
}

/* Python's binary_op1: left slot, then the reflected slot of a different
** right type (first, when it is a subclass overriding the reflection). */
static Value binop_dispatch(VM *vm, BinOp op, Value a, Value b) {
    Type *ta = vm_typeof(vm, a), *tb = vm_typeof(vm, b);
    bool right_done = false;
    Value r;
    if (ta != tb && right_has_priority(vm, ta, tb, op)) {
        r = binop_right(vm, tb, op, a, b);
        if (!IS_EMPTY(r)) return r;
        right_done = true;
    }
    r = binop_left(vm, ta, op, a, b);
    if (!IS_EMPTY(r)) return r;
    if (ta != tb && !right_done) r = binop_right(vm, tb, op, a, b);
    return r;
}

Value vm_binop(VM *vm, BinOp op, Value a, Value b) {
    if (IS_NUMBER(a) && IS_NUMBER(b)) return num_binop(vm, op, a, b);
    if (bigint_is_numeric(vm, a) && bigint_is_numeric(vm, b)) return num_binop(vm, op, a, b);
    Value r = binop_dispatch(vm, op, a, b);
    if (IS_EMPTY(r) && op == BINOP_OR) r = union_or(vm, a, b); /* type.__or__ */
    if (IS_EMPTY(r)) binop_error(vm, op, a, b, false);
    return r;
}

Value vm_inplace(VM *vm, BinOp op, Value a, Value b) {
    Type *ta = vm_typeof(vm, a);
    if (bigint_is_numeric(vm, a) && bigint_is_numeric(vm, b)) {
        /* the number slot returns EMPTY for undefined pairs: report "<<=" */
        Value r = ta->binop(vm, op, a, b);
        if (IS_EMPTY(r)) binop_error(vm, op, a, b, true);
        return r;
    }
    if (ta->inplace) {
        Value r = ta->inplace(vm, op, a, b);
        if (!IS_EMPTY(r)) return r;
    }
    Value r = binop_dispatch(vm, op, a, b);
    if (IS_EMPTY(r)) binop_error(vm, op, a, b, true);
    return r;
}

/* ---------------------------------------------------------- unary operators */

Value vm_unop(VM *vm, UnOp op, Value a) {
    if (op == UNOP_NOT) return BOOL_VAL(!vm_truthy(vm, a));
    if (IS_INTLIKE(a)) {
        int64_t i = AS_INTLIKE(a);
        switch (op) {
        case UNOP_NEG:
            if (i == INT64_MIN) return bigint_unop(vm, op, a);
            return INT_VAL(-i);
        case UNOP_POS: return INT_VAL(i);
        case UNOP_INVERT: return INT_VAL(~i);
        default: break;
        }
    } else if (IS_FLOAT(a)) {
        if (op == UNOP_NEG) return FLOAT_VAL(-AS_FLOAT(a));
        if (op == UNOP_POS) return a;
    } else {
        Type *t = vm_typeof(vm, a); /* a big int too: number.c's slot */
        if (t->unop) {
            Value r = t->unop(vm, op, a);
            if (!IS_EMPTY(r)) return r;
        }
    }
    const char *sym = op == UNOP_NEG ? "-" : op == UNOP_POS ? "+" : "~";
    vm_raise_kind(vm, TypeError, "bad operand type for unary %s: '%s'", sym, vm_type_name(vm, a));
}

/* -------------------------------------------------------------- comparisons */

static const CmpOp cmp_swapped[] = {CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE};
static const char *const cmp_sym[] = {"==", "!=", "<", "<=", ">", ">="};

static bool str_values_equal(Str *x, Str *y) {
    if (x == y) return true;
    if (x->len != y->len || x->hash != y->hash) return false;
    return memcmp(x->chars, y->chars, (size_t)x->len) == 0;
}

/* CPython's do_richcompare: the reflected slot first when the right type
** is a proper subclass, then the left slot, then the reflected one; a
** compare slot is always called with its own instance first. */
static Value rich_compare(VM *vm, CmpOp op, Value a, Value b) {
    Type *ta = vm_typeof(vm, a), *tb = vm_typeof(vm, b);
    bool anum = IS_NUMBER(a), bnum = IS_NUMBER(b);
    bool checked = false;
    Value r = EMPTY_VAL;
    depth_enter(vm, " in comparison");
    if (ta != tb && tb->compare && !bnum && type_is_subtype(tb, ta)) {
        checked = true;
        r = tb->compare(vm, cmp_swapped[op], b, a);
    }
    if (IS_EMPTY(r) && ta->compare && !anum) r = ta->compare(vm, op, a, b);
    if (IS_EMPTY(r) && !checked && tb->compare && !bnum) r = tb->compare(vm, cmp_swapped[op], b, a);
    depth_leave(vm);
    if (!IS_EMPTY(r)) return r;
    if (op == CMP_EQ) return BOOL_VAL(vm_is(a, b));
    if (op == CMP_NE) return BOOL_VAL(!vm_is(a, b));
    vm_raise_kind(vm, TypeError, "'%s' not supported between instances of '%s' and '%s'", cmp_sym[op],
                  vm_type_name(vm, a), vm_type_name(vm, b));
}

Value vm_compare(VM *vm, CmpOp op, Value a, Value b) {
    switch (op) {
    case CMP_IS: return BOOL_VAL(vm_is(a, b));
    case CMP_ISNOT: return BOOL_VAL(!vm_is(a, b));
    case CMP_IN: return BOOL_VAL(vm_contains(vm, b, a));
    case CMP_NOTIN: return BOOL_VAL(!vm_contains(vm, b, a));
    default: break;
    }
    if (bigint_is_numeric(vm, a) && bigint_is_numeric(vm, b)) return num_compare(vm, op, a, b);
    if ((op == CMP_EQ || op == CMP_NE) && IS_STR(vm, a) && IS_STR(vm, b)) {
        bool eq = str_values_equal(AS_STR(a), AS_STR(b));
        return BOOL_VAL(op == CMP_EQ ? eq : !eq);
    }
    if (a.tag != VAL_OBJ && b.tag != VAL_OBJ) {
        /* None, EMPTY or a number against None: only ==/!= make sense */
        if (op == CMP_EQ) return BOOL_VAL(vm_is(a, b));
        if (op == CMP_NE) return BOOL_VAL(!vm_is(a, b));
    }
    return rich_compare(vm, op, a, b);
}

/* Equality as containers use it: identity implies equality. */
bool vm_equal(VM *vm, Value a, Value b) {
    if (a.tag == VAL_OBJ && b.tag == VAL_OBJ) {
        Obj *x = AS_OBJ(a), *y = AS_OBJ(b);
        if (x == y) return true;
        if (x->type == vm->t_int && y->type == vm->t_int) return bigint_cmp(vm, a, b) == 0;
        if (x->type == vm->t_str && y->type == vm->t_str) return str_values_equal((Str *)x, (Str *)y);
        return vm_truthy(vm, rich_compare(vm, CMP_EQ, a, b));
    }
    if (IS_NUMBER(a) && IS_NUMBER(b)) {
        if (IS_INTLIKE(a) && IS_INTLIKE(b)) return AS_INTLIKE(a) == AS_INTLIKE(b);
        if (IS_FLOAT(a) && IS_FLOAT(b)) return AS_FLOAT(a) == AS_FLOAT(b);
        return vm_truthy(vm, num_compare(vm, CMP_EQ, a, b));
    }
    if (a.tag == VAL_OBJ || b.tag == VAL_OBJ) return vm_truthy(vm, rich_compare(vm, CMP_EQ, a, b));
    return a.tag == b.tag; /* None == None */
}

bool vm_is(Value a, Value b) {
    if (a.tag != b.tag) return false;
    switch (a.tag) {
    case VAL_BOOL: return a.as.b == b.as.b;
    case VAL_INT: return a.as.i == b.as.i;
    case VAL_FLOAT: return memcmp(&a.as.f, &b.as.f, sizeof(double)) == 0;
    case VAL_OBJ: return a.as.obj == b.as.obj;
    default: return true; /* None, EMPTY */
    }
}

/* ------------------------------------------------------------------ hashing */

#define HASH_BITS 61
#define HASH_MODULUS (((uint64_t)1 << HASH_BITS) - 1)
#define HASH_INF 314159
#define HASH_NONE ((int64_t)0xFCA86420) /* CPython 3.12's constant hash(None) */

/* CPython's int hash: |v| mod 2**61-1 with v's sign; -1 is reserved. */
static int64_t hash_int(int64_t v) {
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    m %= HASH_MODULUS;
    int64_t h = v < 0 ? -(int64_t)m : (int64_t)m;
    return h == -1 ? -2 : h;
}

/* CPython's _Py_HashDouble: the float's exact rational value reduced mod
** 2**61-1, so that hash(2.0) == hash(2) and hash(0.5) matches CPython. */
static int64_t hash_double(double v) {
    if (isinf(v)) return v > 0 ? HASH_INF : -HASH_INF;
    if (isnan(v)) return 0;
    int e;
    double m = frexp(v, &e);
    int64_t sign = 1;
    if (m < 0) {
        sign = -1;
        m = -m;
    }
    uint64_t x = 0;
    while (m != 0.0) {
        x = ((x << 28) & HASH_MODULUS) | x >> (HASH_BITS - 28);
        m *= 268435456.0; /* 2**28 */
        e -= 28;
        uint64_t y = (uint64_t)m;
        m -= (double)y;
        x += y;
        if (x >= HASH_MODULUS) x -= HASH_MODULUS;
    }
    e = e >= 0 ? e % HASH_BITS : HASH_BITS - 1 - ((-1 - e) % HASH_BITS);
    x = ((x << e) & HASH_MODULUS) | x >> (HASH_BITS - e);
    int64_t h = (int64_t)x * sign;
    return h == -1 ? -2 : h;
}

int64_t class_identity_hash(Value v) {
    int64_t h = (int64_t)((uintptr_t)AS_OBJ(v) >> 4);
    return h == -1 ? -2 : h;
}

int64_t vm_hash(VM *vm, Value v) {
    switch (v.tag) {
    case VAL_INT: return hash_int(v.as.i);
    case VAL_BOOL: return v.as.b ? 1 : 0;
    case VAL_FLOAT: return hash_double(v.as.f);
    case VAL_OBJ: break;
    default: return HASH_NONE;
    }
    Obj *o = AS_OBJ(v);
    if (o->type == vm->t_str) return ((Str *)o)->hash;
    if (!o->type->hash) return class_identity_hash(v);
    depth_enter(vm, " while hashing");
    int64_t h = o->type->hash(vm, v);
    depth_leave(vm);
    return h;
}

/* ------------------------------------------------------------ repr and str */

static Str *checked_str_result(VM *vm, Value r, const char *what) {
    if (!IS_STR(vm, r))
        vm_raise_kind(vm, TypeError, "%s returned non-string (type %s)", what, vm_type_name(vm, r));
    return AS_STR(r);
}

Str *vm_repr(VM *vm, Value v) {
    char buf[64];
    switch (v.tag) {
    case VAL_INT:
        snprintf(buf, sizeof buf, "%" PRId64, v.as.i);
        return str_cstr(vm, buf);
    case VAL_BOOL: return str_cstr(vm, v.as.b ? "True" : "False");
    case VAL_FLOAT: {
        int n = float_repr(v.as.f, buf, sizeof buf);
        return str_new(vm, buf, n > 0 ? (size_t)n : strlen(buf));
    }
    case VAL_OBJ: break;
    default: return str_cstr(vm, "None");
    }
    Type *t = AS_OBJ(v)->type;
    if (!t->repr) return class_default_repr(vm, v);
    depth_enter(vm, " while getting the repr of an object");
    Value r = t->repr(vm, v);
    depth_leave(vm);
    return checked_str_result(vm, r, "__repr__");
}

Str *vm_str(VM *vm, Value v) {
    if (!IS_OBJ(v)) return vm_repr(vm, v);
    Type *t = AS_OBJ(v)->type;
    if (t == vm->t_str) return AS_STR(v);
    if (!t->str) return vm_repr(vm, v);
    depth_enter(vm, " while getting the str of an object");
    Value r = t->str(vm, v);
    depth_leave(vm);
    return checked_str_result(vm, r, "__str__");
}

/* format(v, spec): builtin formatting for numbers and strings, a class's
** __format__, else object.__format__ (only the empty spec). */
Str *vm_format(VM *vm, Value v, Str *spec) {
    bool empty = !spec || spec->len == 0;
    switch (v.tag) {
    case VAL_INT: return empty ? vm_str(vm, v) : format_int_spec(vm, v.as.i, spec);
    case VAL_BOOL: return empty ? vm_str(vm, v) : format_int_spec(vm, v.as.b ? 1 : 0, spec);
    case VAL_FLOAT: return empty ? vm_str(vm, v) : format_float_spec(vm, v.as.f, spec);
    default: break;
    }
    if (bigint_is(vm, v)) return empty ? vm_str(vm, v) : format_bigint_spec(vm, v, spec);
    if (IS_STR(vm, v)) return empty ? AS_STR(v) : format_str_spec(vm, AS_STR(v), spec);
    if (IS_COMPLEX(vm, v)) return format_complex_spec(vm, AS_COMPLEX(v)->real, AS_COMPLEX(v)->imag, spec);
    Type *t = vm_typeof(vm, v);
    if (t->flags & TYPE_HEAP) {
        Value m = class_heap_lookup(vm, t, str_cstr(vm, "__format__"));
        if (!IS_EMPTY(m)) {
            Value arg = STR_VAL(spec ? spec : vm->empty_str);
            Value r = class_call_meth(vm, m, v, 1, &arg, NULL);
            if (!IS_STR(vm, r))
                vm_raise_kind(vm, TypeError, "__format__ must return a str, not %s", vm_type_name(vm, r));
            return AS_STR(r);
        }
        /* an empty spec is str(self), which may be the class's own __str__/__repr__ */
        if (t->flags & TYPEF_BOXED) return empty ? vm_str(vm, v) : vm_format(vm, class_unbox(vm, v), spec);
    }
    if (empty) return vm_str(vm, v);
    vm_raise_kind(vm, TypeError, "unsupported format string passed to %s.__format__", class_type_name(t));
}

/* --------------------------------------------------------------- attributes */

static _Noreturn void attr_error(VM *vm, Value obj, Str *name) {
    Type *t = vm_typeof(vm, obj);
    if (t == vm->t_module) {
        Module *m = (Module *)AS_OBJ(obj);
        vm_raise_kind(vm, AttributeError, "module '%s' has no attribute '%s'", m->name ? m->name->chars : "?",
                      name->chars);
    }
    if (t == vm->t_type)
        vm_raise_kind(vm, AttributeError, "type object '%s' has no attribute '%s'",
                      class_type_name((Type *)AS_OBJ(obj)), name->chars);
    vm_raise_kind(vm, AttributeError, "'%s' object has no attribute '%s'", class_type_name(t), name->chars);
}

Value vm_getattr(VM *vm, Value obj, Str *name) {
    Type *t = vm_typeof(vm, obj);
    Value v = t->getattr ? t->getattr(vm, obj, name) : generic_getattr(vm, obj, name);
    if (IS_EMPTY(v)) attr_error(vm, obj, name);
    return v;
}

Value vm_getattr_opt(VM *vm, Value obj, Str *name) {
    Type *t = vm_typeof(vm, obj);
    if (!t->getattr) return generic_getattr(vm, obj, name);
    if (t->getattr == class_heap_getattr) return class_heap_getattr_opt(vm, obj, name);
    return t->getattr(vm, obj, name);
}

void vm_setattr(VM *vm, Value obj, Str *name, Value v) {
    Type *t = vm_typeof(vm, obj);
    if (t->setattr)
        t->setattr(vm, obj, name, v);
    else
        generic_setattr(vm, obj, name, v);
}

void vm_delattr(VM *vm, Value obj, Str *name) {
    vm_setattr(vm, obj, name, EMPTY_VAL);
}

/* --------------------------------------------------------------- subscripts */

Value vm_getitem(VM *vm, Value obj, Value key) {
    if (!IS_OBJ(obj)) vm_raise_kind(vm, TypeError, "'%s' object is not subscriptable", vm_type_name(vm, obj));
    Obj *o = AS_OBJ(obj);
    Type *t = o->type;
    if (IS_INT(key)) {
        if (t == vm->t_list) {
            List *l = (List *)o;
            int64_t i = AS_INT(key);
            if (i < 0) i += l->len;
            if (i < 0 || i >= l->len) vm_raise_kind(vm, IndexError, "list index out of range");
            return l->items[i];
        }
        if (t == vm->t_tuple) {
            Tuple *tu = (Tuple *)o;
            int64_t i = AS_INT(key);
            if (i < 0) i += tu->len;
            if (i < 0 || i >= tu->len) vm_raise_kind(vm, IndexError, "tuple index out of range");
            return tu->items[i];
        }
    }
    if (t->getitem) return t->getitem(vm, obj, key);
    if (t == vm->t_type) {
        /* list[int] and friends in annotations: a heap class may define
        ** __class_getitem__; builtin containers subscript to themselves
        ** (gpy has no typing.GenericAlias). */
        Type *cls = (Type *)o;
        if (cls->flags & TYPE_HEAP) {
            /* an implicit classmethod: bound to the class subscripted */
            Value m = vm_getattr_opt(vm, obj, str_cstr(vm, "__class_getitem__"));
            if (!IS_EMPTY(m)) return vm_call(vm, m, 1, &key);
        } else if (cls == vm->t_list || cls == vm->t_dict || cls == vm->t_tuple || cls == vm->t_set ||
                   cls == vm->t_frozenset || cls == vm->t_type) {
            return obj;
        }
    }
    vm_raise_kind(vm, TypeError, "'%s' object is not subscriptable", class_type_name(t));
}

void vm_setitem(VM *vm, Value obj, Value key, Value v) {
    Type *t = vm_typeof(vm, obj);
    if (!t->setitem)
        vm_raise_kind(vm, TypeError, "'%s' object does not support item assignment", class_type_name(t));
    t->setitem(vm, obj, key, v);
}

void vm_delitem(VM *vm, Value obj, Value key) {
    Type *t = vm_typeof(vm, obj);
    if (!t->setitem)
        vm_raise_kind(vm, TypeError, "'%s' object doesn't support item deletion", class_type_name(t));
    t->setitem(vm, obj, key, EMPTY_VAL);
}

/* ---------------------------------------------------------------- iteration */

Value vm_iter(VM *vm, Value v) {
    Type *t = vm_typeof(vm, v);
    if (t->iter) return t->iter(vm, v);
    if (t->getitem && IS_OBJ(v)) return class_seqiter_new(vm, v);
    vm_raise_kind(vm, TypeError, "'%s' object is not iterable", class_type_name(t));
}

bool vm_next(VM *vm, Value iter, Value *out) {
    Type *t = vm_typeof(vm, iter);
    if (!t->next) vm_raise_kind(vm, TypeError, "'%s' object is not an iterator", class_type_name(t));
    /* chains of C iterators (map(map(...)), zip(zip(...))) recurse here
    ** without entering the interpreter: bound them by C stack use */
    vm_check_c_stack(vm, "");
    return t->next(vm, iter, out);
}

int64_t vm_len(VM *vm, Value v) {
    if (IS_OBJ(v)) {
        Obj *o = AS_OBJ(v);
        Type *t = o->type;
        if (t == vm->t_str) return ((Str *)o)->nchars;
        if (t == vm->t_list) return ((List *)o)->len;
        if (t == vm->t_tuple) return ((Tuple *)o)->len;
        if (t == vm->t_dict) return ((Dict *)o)->count;
        if (t->len) return t->len(vm, v);
    }
    vm_raise_kind(vm, TypeError, "object of type '%s' has no len()", vm_type_name(vm, v));
}

/* item in container: the contains slot, else a scan with ==. */
bool vm_contains(VM *vm, Value container, Value item) {
    Type *t = vm_typeof(vm, container);
    if (t->contains) return t->contains(vm, container, item);
    if (!t->iter && !(t->getitem && IS_OBJ(container)))
        vm_raise_kind(vm, TypeError, "argument of type '%s' is not iterable", class_type_name(t));
    Value it = vm_iter(vm, container);
    vm_push_root(vm, it);
    vm_push_root(vm, NONE_VAL); /* keeps the current element alive while == runs user code */
    int32_t slot = vm->nroots - 1;
    bool found = false;
    Value x;
    while (vm_next(vm, it, &x)) {
        vm->roots[slot] = x;
        if (vm_equal(vm, x, item)) {
            found = true;
            break;
        }
    }
    vm_pop_roots(vm, 2);
    return found;
}

/* ------------------------------------------------------------------ indices */

int64_t vm_to_index(VM *vm, Value v) {
    if (IS_INTLIKE(v)) return AS_INTLIKE(v);
    if (bigint_is(vm, v)) vm_raise_kind(vm, OverflowError, "Python int too large to convert to C ssize_t");
    Type *t = vm_typeof(vm, v);
    if (t->flags & TYPE_HEAP) {
        if ((t->flags & TYPEF_BOXED) && IS_INTLIKE(class_unbox(vm, v))) return AS_INTLIKE(class_unbox(vm, v));
        Value m = class_heap_lookup(vm, t, str_cstr(vm, "__index__"));
        if (!IS_EMPTY(m)) {
            Value r = class_call_meth(vm, m, v, 0, NULL, NULL);
            if (bigint_is(vm, r)) vm_raise_kind(vm, OverflowError, "Python int too large to convert to C ssize_t");
            if (!IS_INTLIKE(r))
                vm_raise_kind(vm, TypeError, "__index__ returned non-int (type %s)", vm_type_name(vm, r));
            return AS_INTLIKE(r);
        }
    }
    vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", class_type_name(t));
}

int64_t vm_index_check(VM *vm, int64_t idx, int64_t len, const char *what) {
    if (idx < 0) idx += len;
    if (idx < 0 || idx >= len) vm_raise_kind(vm, IndexError, "%s index out of range", what);
    return idx;
}

/* One bound of a slice: None (EMPTY too) means "use the default". */
static bool slice_bound(VM *vm, Value v, int64_t *out) {
    if (IS_NONE(v) || IS_EMPTY(v)) return false;
    if (IS_INTLIKE(v)) {
        *out = AS_INTLIKE(v);
        return true;
    }
    if (bigint_is(vm, v)) { /* clamps like CPython's _PyEval_SliceIndex */
        *out = bigint_sign(vm, v) < 0 ? INT64_MIN : INT64_MAX;
        return true;
    }
    if (IS_OBJ(v) && (AS_OBJ(v)->type->flags & TYPE_HEAP)) {
        *out = vm_to_index(vm, v);
        return true;
    }
    vm_raise_kind(vm, TypeError, "slice indices must be integers or None or have an __index__ method");
}

/* Clamps one bound against len (PySlice_AdjustIndices). */
static int64_t adjust_bound(int64_t x, int64_t len, int64_t step) {
    if (x < 0) {
        x += len;
        if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= len) {
        x = step < 0 ? len - 1 : len;
    }
    return x;
}

/* CPython's PySlice_GetIndicesEx: resolves s against a sequence of length
** len and returns the number of selected items. */
int64_t slice_indices(VM *vm, Slice *s, int64_t len, int64_t *start, int64_t *stop, int64_t *step) {
    int64_t st = 1, a, b;
    if (slice_bound(vm, s->step, &st)) {
        if (st == 0) vm_raise_kind(vm, ValueError, "slice step cannot be zero");
        if (st < -INT64_MAX) st = -INT64_MAX; /* so that -step cannot overflow */
    }
    if (!slice_bound(vm, s->start, &a)) a = st < 0 ? INT64_MAX : 0;
    if (!slice_bound(vm, s->stop, &b)) b = st < 0 ? INT64_MIN : INT64_MAX;
    if (len < 0) len = 0;
    a = adjust_bound(a, len, st);
    b = adjust_bound(b, len, st);
    *start = a;
    *stop = b;
    *step = st;
    if (st < 0) return b < a ? (a - b - 1) / (-st) + 1 : 0;
    return a < b ? (b - a - 1) / st + 1 : 0;
}
