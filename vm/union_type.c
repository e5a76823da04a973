/*
** union_type.c — `X | Y` of types (PEP 604): types.UnionType, what
** `def f(x: int | None)` evaluates its annotation to, and what
** isinstance/issubclass accept in place of a tuple. The type is made on the
** first union a program writes, so a VM that never writes one never pays
** for it.
*/
#include <string.h>

#include "vm.h"

typedef struct Union {
    Obj obj;
    Tuple *args; /* flattened, without duplicates; NoneType for None */
} Union;

bool union_is(VM *vm, Value v) { return vm->t_union && IS_OBJ(v) && AS_OBJ(v)->type == vm->t_union; }

Tuple *union_args(Value v) { return ((Union *)AS_OBJ(v))->args; }

static bool is_type_value(VM *vm, Value v) {
    return IS_OBJ(v) && (AS_OBJ(v)->type == vm->t_type || type_is_subtype(AS_OBJ(v)->type, vm->t_type));
}

/* How an argument reads in the union's repr: builtin types by name, other
** classes as module.qualname, None as None (CPython's typing repr). */
static void arg_repr(VM *vm, StrBuf *sb, Value a) {
    if (IS_OBJ(a) && AS_OBJ(a) == &vm_typeof(vm, NONE_VAL)->obj) {
        sb_appends(sb, "None");
        return;
    }
    if (is_type_value(vm, a)) {
        Value mod = vm_getattr_opt(vm, a, str_cstr(vm, "__module__"));
        Value qual = vm_getattr_opt(vm, a, str_cstr(vm, "__qualname__"));
        if (IS_STR(vm, qual)) {
            if (IS_STR(vm, mod) && strcmp(AS_STR(mod)->chars, "builtins") != 0) {
                sb_append_str(sb, AS_STR(mod));
                sb_putc(sb, '.');
            }
            sb_append_str(sb, AS_STR(qual));
            return;
        }
    }
    sb_append_str(sb, vm_repr(vm, a));
}

static Value union_repr(VM *vm, Value self) {
    Tuple *args = union_args(self);
    StrBuf sb;
    sb_init(&sb);
    for (int64_t i = 0; i < args->len; i++) {
        if (i) sb_appends(&sb, " | ");
        arg_repr(vm, &sb, args->items[i]);
    }
    return STR_VAL(sb_finish(vm, &sb));
}

static bool has_arg(Tuple *args, int64_t n, Value a) {
    for (int64_t i = 0; i < n; i++)
        if (vm_is(args->items[i], a)) return true;
    return false;
}

/* Same arguments, in any order. */
static Value union_compare(VM *vm, CmpOp op, Value a, Value b) {
    if ((op != CMP_EQ && op != CMP_NE) || !union_is(vm, b)) return EMPTY_VAL;
    Tuple *x = union_args(a), *y = union_args(b);
    bool eq = x->len == y->len;
    for (int64_t i = 0; eq && i < x->len; i++) eq = has_arg(y, y->len, x->items[i]);
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

/* Order-independent, as the equality is. */
static int64_t union_hash(VM *vm, Value self) {
    Tuple *args = union_args(self);
    uint64_t h = 0x2545F4914F6CDD1Du;
    for (int64_t i = 0; i < args->len; i++) h ^= (uint64_t)vm_hash(vm, args->items[i]) * 0x9E3779B97F4A7C15u;
    return (int64_t)(h >> 1);
}

static Value union_getattr(VM *vm, Value self, Str *name) {
    (void)vm;
    if (strcmp(name->chars, "__args__") == 0) return OBJ_VAL(union_args(self));
    return EMPTY_VAL;
}

static void union_mark(VM *vm, Obj *o) { gc_mark_obj(vm, (Obj *)((Union *)o)->args); }

static Type *union_type(VM *vm) {
    if (vm->t_union) return vm->t_union;
    Type *t = type_new_builtin(vm, "UnionType", vm->t_object, 0);
    t->repr = union_repr;
    t->compare = union_compare;
    t->hash = union_hash;
    t->getattr = union_getattr;
    t->mark = union_mark;
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "types")));
    vm->t_union = t;
    return t;
}

/* May v stand in a union? A class, None, or a union. */
static bool unionable(VM *vm, Value v) { return IS_NONE(v) || is_type_value(vm, v) || union_is(vm, v); }

static void add_arg(VM *vm, List *l, Value v) {
    if (union_is(vm, v)) {
        Tuple *args = union_args(v);
        for (int64_t i = 0; i < args->len; i++) add_arg(vm, l, args->items[i]);
        return;
    }
    if (IS_NONE(v)) v = OBJ_VAL(vm_typeof(vm, NONE_VAL));
    for (int64_t i = 0; i < l->len; i++)
        if (vm_is(l->items[i], v)) return;
    list_append(vm, l, v);
}

Value union_or(VM *vm, Value a, Value b) {
    if (!unionable(vm, a) || !unionable(vm, b)) return EMPTY_VAL;
    List *l = list_new(vm, 4);
    vm_push_root(vm, OBJ_VAL(l));
    add_arg(vm, l, a);
    add_arg(vm, l, b);
    Value r;
    if (l->len == 1) {
        r = l->items[0]; /* int | int is int */
    } else {
        Type *t = union_type(vm);
        Tuple *args = tuple_from_array(vm, l->len, l->items);
        vm_push_root(vm, OBJ_VAL(args));
        Union *u = gc_alloc_obj(vm, t, sizeof(Union));
        u->args = args;
        r = OBJ_VAL(u);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return r;
}
