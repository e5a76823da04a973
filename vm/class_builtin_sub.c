/*
** class_builtin_sub.c — user classes deriving from builtin types:
** class Stack(list), class Celsius(float), class Point(tuple) ...
**
** The VM's builtin values have fixed layouts (an int is not even an
** object), and C code all over the VM tests for them by exact type. So an
** instance of such a subclass is a BoxedInstance: the Instance layout (its
** __dict__) plus the builtin value it stands for. The class's C slots apply
** the builtin type's behaviour to that value; methods of the builtin type
** receive the value itself as self (class_native_self); methods the class
** overrides are found first on its MRO, as for any class.
**
** A builtin type opts in with class_allow_subclass: it gets the TYPE_BASETYPE
** flag, a __new__ that makes boxed instances (super().__new__(cls, ...)),
** and, for mutable containers, an __init__ that refills the value.
*/
#include <string.h>

#include "class_internal.h"

bool class_is_boxable(VM *vm, Type *anc) {
    return anc && (anc->flags & TYPE_BASETYPE) && !(anc->flags & (TYPE_HEAP | TYPE_EXCEPTION | TYPE_FOREIGN)) &&
           anc != vm->t_object && anc != vm->t_type;
}

Value class_unbox(VM *vm, Value v) {
    (void)vm;
    if (IS_OBJ(v) && (AS_OBJ(v)->type->flags & TYPEF_BOXED)) return ((BoxedInstance *)AS_OBJ(v))->value;
    return v;
}

static Value builtin_m_init(VM *vm, int argc, Value *argv, Dict *kwargs);

Value class_native_self(VM *vm, Value native, Value self) {
    if (!IS_OBJ(self) || !(AS_OBJ(self)->type->flags & TYPEF_BOXED)) return self;
    NativeFunction *nf = (NativeFunction *)AS_OBJ(native);
    if (!IS_OBJ(nf->data) || !class_is_boxable(vm, (Type *)AS_OBJ(nf->data))) return self;
    if (nf->fn == builtin_m_init) return self; /* it replaces the boxed value */
    return ((BoxedInstance *)AS_OBJ(self))->value;
}

Value class_box_new(VM *vm, Type *cls, Value value) {
    vm_push_root(vm, value);
    BoxedInstance *b = gc_alloc_obj(vm, cls, sizeof(BoxedInstance));
    b->dict = NULL;
    b->value = value;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(b);
}

/* Does the builtin type refill its value in __init__ (list, dict, set)? */
static bool init_fills(VM *vm, Type *anc) {
    Value v = dict_get_str(vm, anc->dict, vm->sym_init ? vm->sym_init : str_cstr(vm, "__init__"));
    return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_builtin_function;
}

Value class_boxed_construct(VM *vm, Type *cls, Type *anc, int argc, Value *argv, Dict *kwargs, bool has_init) {
    if (!anc->new_) vm_raise_kind(vm, TypeError, "cannot create '%s' instances", class_type_name(cls));
    Value v;
    if (has_init && init_fills(vm, anc))
        v = anc->new_(vm, anc, 0, NULL, NULL); /* the user's __init__ fills it (super().__init__(...)) */
    else
        v = anc->new_(vm, anc, argc, argv, kwargs);
    return class_box_new(vm, cls, v);
}

/* ------------------------------------------------------------ the slots */

static Type *anc_of(VM *vm, Value self) {
    (void)vm;
    return class_ancestor(AS_OBJ(self)->type);
}

static Type *anc_of(VM *vm, Value self);

static Value box_repr(VM *vm, Value self) {
    Str *r = vm_repr(vm, class_unbox(vm, self));
    /* a bytearray's repr names its class: BA(b'...') */
    if (anc_of(vm, self) == vm->t_bytearray && r->len >= 9)
        r = str_printf(vm, "%s%s", class_type_name(AS_OBJ(self)->type), r->chars + 9);
    return STR_VAL(r);
}

/* str(x): the builtin's own str (str, and any type with a str slot);
** otherwise object.__str__, i.e. repr(x) through the class's __repr__. */
static Value box_str(VM *vm, Value self) {
    Type *anc = anc_of(vm, self);
    if (anc == vm->t_str || anc->str) return STR_VAL(vm_str(vm, class_unbox(vm, self)));
    /* bytes' own str is its repr, whatever __repr__ the class defines */
    if (anc == vm->t_bytes || anc == vm->t_bytearray) return box_repr(vm, self);
    return STR_VAL(vm_repr(vm, self));
}

static int64_t box_hash(VM *vm, Value self) {
    return vm_hash(vm, class_unbox(vm, self));
}

/* The builtin type that handles an operation on a (maybe boxed) value. */
static Type *handler(VM *vm, Value v) {
    return vm_typeof(vm, class_unbox(vm, v));
}

Value class_boxed_compare(VM *vm, CmpOp op, Value a, Value b) {
    Value ua = class_unbox(vm, a), ub = class_unbox(vm, b);
    if (IS_NUMBER(ua)) return IS_NUMBER(ub) ? vm_compare(vm, op, ua, ub) : EMPTY_VAL;
    Type *t = handler(vm, a);
    if ((op == CMP_EQ || op == CMP_NE) && IS_OBJ(ua) && IS_OBJ(ub) && AS_OBJ(ua) == AS_OBJ(ub))
        return BOOL_VAL(op == CMP_EQ);
    return t->compare ? t->compare(vm, op, ua, ub) : EMPTY_VAL;
}

Value class_boxed_binop(VM *vm, BinOp op, Value a, Value b) {
    Value ua = class_unbox(vm, a), ub = class_unbox(vm, b);
    if (IS_NUMBER(ua) && IS_NUMBER(ub)) return vm_binop(vm, op, ua, ub);
    /* the slot of whichever operand is the boxed one */
    bool left = IS_OBJ(a) && (AS_OBJ(a)->type->flags & TYPEF_BOXED);
    if (IS_NUMBER(left ? ua : ub)) return EMPTY_VAL; /* an int/float subclass against a non-number */
    Type *t = left ? handler(vm, a) : handler(vm, b);
    return t->binop ? t->binop(vm, op, ua, ub) : EMPTY_VAL;
}

static Value box_inplace(VM *vm, BinOp op, Value a, Value b) {
    Value ua = class_unbox(vm, a);
    Type *t = handler(vm, a);
    if (!t->inplace || IS_NUMBER(ua)) return EMPTY_VAL;
    Value r = t->inplace(vm, op, ua, class_unbox(vm, b));
    /* x += y on a list subclass stays the same (boxed) object */
    return vm_is(r, ua) ? a : r;
}

static Value box_unop(VM *vm, UnOp op, Value a) {
    return vm_unop(vm, op, class_unbox(vm, a));
}

static bool box_truthy(VM *vm, Value self) {
    return vm_truthy(vm, class_unbox(vm, self));
}

Value class_boxed_getattr(VM *vm, Value self, Str *name) {
    Value v = generic_getattr(vm, self, name);
    if (!IS_EMPTY(v)) return v;
    Type *anc = anc_of(vm, self);
    return anc->getattr ? anc->getattr(vm, class_unbox(vm, self), name) : EMPTY_VAL;
}

static Value box_iter(VM *vm, Value self) {
    return vm_iter(vm, class_unbox(vm, self));
}

/* dict subclasses: d[k] of a missing key calls type(d).__missing__(d, k). */
static Value box_getitem(VM *vm, Value self, Value key) {
    Value v = class_unbox(vm, self);
    if (IS_DICT(vm, v)) {
        Value r;
        if (dict_get(vm, AS_DICT(v), key, &r)) return r;
        Value m = class_heap_lookup(vm, AS_OBJ(self)->type, str_cstr(vm, "__missing__"));
        if (!IS_EMPTY(m)) return class_call_meth(vm, m, self, 1, &key, NULL);
    }
    return vm_getitem(vm, v, key);
}

static void box_setitem(VM *vm, Value self, Value key, Value value) {
    if (IS_EMPTY(value))
        vm_delitem(vm, class_unbox(vm, self), key);
    else
        vm_setitem(vm, class_unbox(vm, self), key, value);
}

static int64_t box_len(VM *vm, Value self) {
    return vm_len(vm, class_unbox(vm, self));
}

static bool box_contains(VM *vm, Value self, Value item) {
    return vm_contains(vm, class_unbox(vm, self), item);
}

/* memoryview(b), bytes(b), b"".join(...) of a bytes/bytearray subclass:
** the buffer of the value inside */
static void box_getbuffer(VM *vm, Value self, BufferView *view) {
    Value v = class_unbox(vm, self);
    vm_typeof(vm, v)->getbuffer(vm, v, view);
}

static void box_mark(VM *vm, Obj *o) {
    BoxedInstance *b = (BoxedInstance *)o;
    gc_mark_obj(vm, (Obj *)b->dict);
    gc_mark_value(vm, b->value);
}

void class_boxed_slots(VM *vm, Type *T, Type *anc) {
    (void)vm;
    T->repr = box_repr;
    T->str = box_str;
    T->hash = anc->hash || anc == vm->t_int || anc == vm->t_float ? box_hash : NULL;
    T->compare = class_boxed_compare;
    T->binop = class_boxed_binop;
    T->inplace = box_inplace;
    T->unop = box_unop;
    T->truthy = box_truthy;
    T->getattr = class_boxed_getattr;
    T->setattr = NULL;
    T->call = NULL;
    T->iter = anc->iter ? box_iter : NULL;
    T->next = NULL;
    T->getitem = anc->getitem ? box_getitem : NULL;
    T->setitem = anc->setitem ? box_setitem : NULL;
    T->len = anc->len ? box_len : NULL;
    T->contains = anc->contains || anc->iter ? box_contains : NULL;
    T->mark = box_mark;
    T->finalize = NULL;
    T->getbuffer = anc->getbuffer ? box_getbuffer : NULL;
}

/* ----------------------------------------------- __new__ and __init__ */

/* list.__new__(cls, ...) / int.__new__(cls, ...): a value of the builtin
** type (nf->data), boxed when cls is a subclass. */
static Value builtin_m_new(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Type *anc = (Type *)AS_OBJ(vm_current_native(vm)->data);
    const char *an = class_type_name(anc);
    if (argc < 1) vm_raise_kind(vm, TypeError, "%s.__new__(): not enough arguments", an);
    Value c = argv[0];
    if (!IS_OBJ(c) || !type_is_subtype(AS_OBJ(c)->type, vm->t_type))
        vm_raise_kind(vm, TypeError, "%s.__new__(X): X is not a type object (%s)", an, vm_type_name(vm, c));
    Type *cls = (Type *)AS_OBJ(c);
    if (!type_is_subtype(cls, anc))
        vm_raise_kind(vm, TypeError, "%s.__new__(%s): %s is not a subtype of %s", an, class_type_name(cls),
                      class_type_name(cls), an);
    if (cls == anc) return anc->new_(vm, anc, argc - 1, argv + 1, kwargs);
    if (!(cls->flags & TYPEF_BOXED) || class_ancestor(cls) != anc)
        vm_raise_kind(vm, TypeError, "%s.__new__(%s) is not safe, use %s.__new__()", an, class_type_name(cls),
                      class_type_name(class_ancestor(cls)));
    bool fills = init_fills(vm, anc);
    Value v = anc->new_(vm, anc, fills ? 0 : argc - 1, argv + 1, fills ? NULL : kwargs);
    return class_box_new(vm, cls, v);
}

/* list.__init__(self, ...): self's value made afresh from the arguments. */
static Value builtin_m_init(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Type *anc = (Type *)AS_OBJ(vm_current_native(vm)->data);
    Value self = argc > 0 ? argv[0] : NONE_VAL;
    Value v = anc->new_(vm, anc, argc - 1, argv + 1, kwargs);
    if (IS_OBJ(self) && (AS_OBJ(self)->type->flags & TYPEF_BOXED)) {
        ((BoxedInstance *)AS_OBJ(self))->value = v;
    } else if (IS_LIST(vm, self) && IS_LIST(vm, v)) {
        /* a plain list re-initialised in place */
        List *l = AS_LIST(self), *n = AS_LIST(v);
        l->len = 0;
        for (int64_t i = 0; i < n->len; i++) list_append(vm, l, n->items[i]);
    }
    return NONE_VAL;
}

void class_allow_subclass(VM *vm, Type *t, bool fills) {
    if (!t) return;
    t->flags |= TYPE_BASETYPE;
    Value data = OBJ_VAL(t);
    Value nf = native_new(vm, "__new__", builtin_m_new, data);
    vm_push_root(vm, nf);
    Wrapper *w = gc_alloc_obj(vm, vm->t_staticmethod, sizeof(Wrapper));
    w->func = nf;
    w->fset = w->fdel = NONE_VAL;
    dict_set_cstr(vm, t->dict, "__new__", OBJ_VAL(w));
    vm_pop_roots(vm, 1);
    if (fills) type_add_method(vm, t, "__init__", builtin_m_init);
}
