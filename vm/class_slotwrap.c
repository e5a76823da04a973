/*
** class_slotwrap.c — list.__getitem__, dict.__setitem__, int.__add__ ...:
** the special methods of builtin types, as callables.
**
** Builtin types implement their operators as C slots, not as entries of
** their dict. Python code reaches them by name mostly through super()
** (super().__setitem__(k, v) in a dict subclass) or on the type
** (list.__len__(x)). On the first such lookup of a name that a slot of the
** type implements, a method native that calls the slot is made and stored
** in the type's dict, so later lookups find it like any method.
*/
#include <string.h>

#include "class_internal.h"

typedef enum SlotKind {
    SW_GETITEM, SW_SETITEM, SW_DELITEM, SW_LEN, SW_CONTAINS, SW_ITER, SW_NEXT, SW_REPR, SW_STR, SW_HASH,
    SW_BOOL, SW_CALL, SW_CMP, SW_BINOP, SW_RBINOP, SW_UNOP
} SlotKind;

static const char *const cmp_names[] = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"};
static const char *const unop_names[] = {"__neg__", "__pos__", "__invert__"};

/* Which slot a dunder name stands for (and its operator), or -1. */
static int slot_of(VM *vm, const char *n, int *op) {
    static const struct { const char *name; SlotKind kind; } simple[] = {
        {"__getitem__", SW_GETITEM}, {"__setitem__", SW_SETITEM}, {"__delitem__", SW_DELITEM},
        {"__len__", SW_LEN},         {"__contains__", SW_CONTAINS}, {"__iter__", SW_ITER},
        {"__next__", SW_NEXT},       {"__repr__", SW_REPR},       {"__str__", SW_STR},
        {"__hash__", SW_HASH},       {"__bool__", SW_BOOL},       {"__call__", SW_CALL},
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (strcmp(n, simple[i].name) == 0) return (int)simple[i].kind;
    for (int i = 0; i < 6; i++)
        if (strcmp(n, cmp_names[i]) == 0) return *op = i, SW_CMP;
    for (int i = 0; i < 3; i++)
        if (strcmp(n, unop_names[i]) == 0) return *op = i, SW_UNOP;
    for (int i = 0; i < BINOP__COUNT; i++) {
        if (vm->dunder_binop[i] && strcmp(n, vm->dunder_binop[i]->chars) == 0) return *op = i, SW_BINOP;
        if (vm->dunder_rbinop[i] && strcmp(n, vm->dunder_rbinop[i]->chars) == 0) return *op = i, SW_RBINOP;
    }
    return -1;
}

static bool is_numeric(VM *vm, Type *t) {
    return t == vm->t_int || t == vm->t_float || t == vm->t_bool;
}

/* Does builtin type t implement slot kind? */
static bool has_slot(VM *vm, Type *t, int kind) {
    switch ((SlotKind)kind) {
    case SW_GETITEM: return t->getitem != NULL;
    case SW_SETITEM: case SW_DELITEM: return t->setitem != NULL;
    case SW_LEN: return t->len != NULL;
    case SW_CONTAINS: return t->contains != NULL;
    case SW_ITER: return t->iter != NULL;
    case SW_NEXT: return t->next != NULL;
    case SW_REPR: case SW_STR: case SW_HASH: return true;
    case SW_BOOL: return is_numeric(vm, t); /* containers have no __bool__ (len decides) */
    case SW_CALL: return t->call != NULL;
    case SW_CMP: return t->compare != NULL || is_numeric(vm, t);
    case SW_BINOP: case SW_RBINOP: return t->binop != NULL || is_numeric(vm, t);
    case SW_UNOP: return t->unop != NULL || is_numeric(vm, t);
    }
    return false;
}

static Value notimpl_or(VM *vm, Value r) {
    return IS_EMPTY(r) ? vm->not_implemented : r;
}

static Value slotwrap_call(VM *vm, int argc, Value *argv, Dict *kwargs) {
    NativeFunction *nf = vm_current_native(vm);
    Type *t = (Type *)AS_OBJ(nf->data);
    int op = 0;
    int kind = slot_of(vm, nf->name, &op);
    if (kind != SW_CALL) arg_no_kwargs(vm, nf->name, kwargs);
    Value self = argv[0];
    int want = kind == SW_SETITEM ? 3 : (kind == SW_GETITEM || kind == SW_DELITEM || kind == SW_CONTAINS ||
                                          kind == SW_CMP || kind == SW_BINOP || kind == SW_RBINOP) ? 2 : 1;
    if (kind != SW_CALL && argc != want)
        vm_raise_kind(vm, TypeError, "expected %d argument%s, got %d", want - 1, want == 2 ? "" : "s", argc - 1);
    switch ((SlotKind)kind) {
    case SW_GETITEM: return vm_getitem(vm, self, argv[1]);
    case SW_SETITEM: vm_setitem(vm, self, argv[1], argv[2]); return NONE_VAL;
    case SW_DELITEM: vm_delitem(vm, self, argv[1]); return NONE_VAL;
    case SW_LEN: return INT_VAL(vm_len(vm, self));
    case SW_CONTAINS: return BOOL_VAL(vm_contains(vm, self, argv[1]));
    case SW_ITER: return vm_iter(vm, self);
    case SW_NEXT: {
        Value out;
        if (!vm_next(vm, self, &out)) vm_throw(vm, OBJ_VAL(vm->exc[EXC_StopIteration]));
        return out;
    }
    case SW_REPR: return STR_VAL(vm_repr(vm, self));
    case SW_STR: return STR_VAL(vm_str(vm, self));
    case SW_HASH: return INT_VAL(vm_hash(vm, self));
    case SW_BOOL: return BOOL_VAL(vm_truthy(vm, self));
    case SW_CALL: return class_call_prepend(vm, self, EMPTY_VAL, argc - 1, argv + 1, kwargs);
    case SW_CMP: {
        Value o = class_unbox(vm, argv[1]);
        if (IS_NUMBER(self)) return IS_NUMBER(o) ? vm_compare(vm, (CmpOp)op, self, o) : vm->not_implemented;
        return notimpl_or(vm, t->compare(vm, (CmpOp)op, self, o));
    }
    case SW_BINOP: case SW_RBINOP: {
        Value o = class_unbox(vm, argv[1]);
        Value a = kind == SW_BINOP ? self : o, b = kind == SW_BINOP ? o : self;
        if (IS_NUMBER(a) || IS_NUMBER(b))
            return IS_NUMBER(a) && IS_NUMBER(b) ? vm_binop(vm, (BinOp)op, a, b) : vm->not_implemented;
        return notimpl_or(vm, t->binop(vm, (BinOp)op, a, b));
    }
    case SW_UNOP: return vm_unop(vm, (UnOp)op, self);
    }
    return NONE_VAL;
}

Value class_slot_wrapper(VM *vm, Type *t, Str *name) {
    if ((t->flags & TYPE_HEAP) || !t->dict || name->len < 6 || name->chars[0] != '_' || name->chars[1] != '_')
        return EMPTY_VAL;
    int op = 0;
    int kind = slot_of(vm, name->chars, &op);
    if (kind < 0 || !has_slot(vm, t, kind)) return EMPTY_VAL;
    /* the name's chars live as long as the dict key holding the wrapper */
    Str *key = str_intern(vm, name->chars, (size_t)name->len);
    vm_push_root(vm, STR_VAL(key));
    Value nf = native_new(vm, key->chars, slotwrap_call, OBJ_VAL(t));
    AS_OBJ(nf)->flags |= NATIVE_FLAG_METHOD;
    vm_push_root(vm, nf);
    dict_set_str(vm, t->dict, key, nf);
    t->version = class_next_version(vm);
    vm_pop_roots(vm, 2);
    return nf;
}

/* ------------------------------------------------ numeric conversions */

/* int.__round__, float.__float__ ...: the builtin function of the same
** role (round, float, int, abs) applied to the number itself, so that
** round(x), float(x), int(x) work on instances of int and float subclasses
** (the builtins find these methods on the subclass). */
static Value numconv_call(VM *vm, int argc, Value *argv, Dict *kwargs) {
    NativeFunction *nf = vm_current_native(vm);
    const char *n = nf->name;
    if (strcmp(n, "__index__") == 0) {
        arg_count(vm, n, argc, 1, 1);
        return argv[0];
    }
    char fname[16];
    size_t len = strlen(n);
    if (len < 5 || len - 4 >= sizeof fname) return NONE_VAL;
    memcpy(fname, n + 2, len - 4);
    fname[len - 4] = '\0';
    Value f = vm->builtins ? dict_get_cstr(vm, vm->builtins, fname) : EMPTY_VAL;
    if (IS_EMPTY(f)) vm_raise_kind(vm, NameError, "name '%s' is not defined", fname);
    return class_call_prepend(vm, f, EMPTY_VAL, argc, argv, kwargs);
}

void class_numeric_dunders(VM *vm) {
    static const char *const common[] = {"__int__", "__float__", "__abs__", "__round__"};
    Type *types[] = {vm->t_int, vm->t_float};
    for (int i = 0; i < 2; i++) {
        if (!types[i]) continue;
        for (int j = 0; j < 4; j++)
            if (IS_EMPTY(dict_get_cstr(vm, types[i]->dict, common[j]))) type_add_method(vm, types[i], common[j], numconv_call);
    }
    if (vm->t_int && IS_EMPTY(dict_get_cstr(vm, vm->t_int->dict, "__index__")))
        type_add_method(vm, vm->t_int, "__index__", numconv_call);
}
