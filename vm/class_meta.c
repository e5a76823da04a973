/*
** class_meta.c — metaclasses and the rest of the class protocol that
** customises attribute access: type's own methods (__new__, __init__,
** __call__, __prepare__, __instancecheck__, __subclasscheck__), the class
** statement's metaclass choice, __slots__ and __getattribute__.
**
** A metaclass is a heap class deriving from type: its instances are Type
** objects whose header names it (obj.type == M), with TYPEF_METATYPE on M.
** Calling M(name, bases, ns) runs M.__new__/__init__ like any class; the
** allocation at the bottom is type.__new__, which is class_new_meta.
*/
#include <string.h>

#include "class_internal.h"

static bool is_class(VM *vm, Value v) {
    return IS_OBJ(v) && (AS_OBJ(v)->type == vm->t_type || (AS_OBJ(v)->type->flags & TYPEF_METATYPE));
}

void class_type_mark(VM *vm, Obj *o) {
    Type *t = (Type *)o;
    gc_mark_obj(vm, (Obj *)t->name);
    gc_mark_obj(vm, (Obj *)t->base);
    gc_mark_obj(vm, (Obj *)t->dict);
    gc_mark_obj(vm, (Obj *)t->mro);
    gc_mark_obj(vm, (Obj *)t->bases);
}

/* The most derived of meta and the metaclasses of the bases. */
Type *class_calc_meta(VM *vm, Type *meta, Tuple *bases) {
    Type *winner = meta;
    for (int64_t i = 0; bases && i < bases->len; i++) {
        Type *bt = vm_typeof(vm, bases->items[i]);
        if (type_is_subtype(winner, bt)) continue;
        if (type_is_subtype(bt, winner)) {
            winner = bt;
            continue;
        }
        vm_raise_kind(vm, TypeError,
                      "metaclass conflict: the metaclass of a derived class must be a (non-strict) subclass of the "
                      "metaclasses of all its bases");
    }
    return winner;
}

Dict *class_prepare(VM *vm, Value *meta, Str *name, Tuple *bases, Dict *kwargs) {
    Value m = kwargs ? kwarg_take(vm, kwargs, "metaclass") : EMPTY_VAL;
    if (IS_EMPTY(m))
        m = OBJ_VAL(bases->len > 0 ? vm_typeof(vm, bases->items[0]) : vm->t_type);
    if (is_class(vm, m)) m = OBJ_VAL(class_calc_meta(vm, (Type *)AS_OBJ(m), bases));
    *meta = m;
    if (AS_OBJ(m) == &vm->t_type->obj) return dict_new(vm);
    Value prep = vm_getattr_opt(vm, m, str_cstr(vm, "__prepare__"));
    if (IS_EMPTY(prep)) return dict_new(vm);
    vm_push_root(vm, prep);
    Value args[2] = {STR_VAL(name), OBJ_VAL(bases)};
    Value ns = class_call_prepend(vm, prep, EMPTY_VAL, 2, args, kwargs && kwargs->count > 0 ? kwargs : NULL);
    vm_pop_roots(vm, 1);
    if (!IS_DICT(vm, ns)) {
        const char *mn = is_class(vm, m) ? class_type_name((Type *)AS_OBJ(m)) : "<metaclass>";
        vm_raise_kind(vm, TypeError, "%s.__prepare__() must return a mapping, not %s", mn, vm_type_name(vm, ns));
    }
    return AS_DICT(ns);
}

Value class_build(VM *vm, Value meta, Str *name, Tuple *bases, Dict *ns, Dict *kwargs) {
    if (kwargs && kwargs->count == 0) kwargs = NULL;
    if (IS_OBJ(meta) && AS_OBJ(meta) == &vm->t_type->obj) return class_new_meta(vm, vm->t_type, name, bases, ns, kwargs);
    Value args[3] = {STR_VAL(name), OBJ_VAL(bases), OBJ_VAL(ns)};
    return class_call_prepend(vm, meta, EMPTY_VAL, 3, args, kwargs);
}

/* ------------------------------------------------------- type's methods */

static Type *type_arg(VM *vm, const char *fname, Value v) {
    if (!is_class(vm, v))
        vm_raise_kind(vm, TypeError, "%s(X): X is not a type object (%s)", fname, vm_type_name(vm, v));
    return (Type *)AS_OBJ(v);
}

/* type.__new__(mcs, name, bases, ns, **kw) */
static Value type_m_new(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc < 1) vm_raise_kind(vm, TypeError, "type.__new__(): not enough arguments");
    Type *mcs = type_arg(vm, "type.__new__", argv[0]);
    if (!type_is_subtype(mcs, vm->t_type))
        vm_raise_kind(vm, TypeError, "type.__new__(%s): %s is not a subtype of type", class_type_name(mcs),
                      class_type_name(mcs));
    if (argc == 2 && mcs == vm->t_type && !(kwargs && kwargs->count)) return OBJ_VAL(vm_typeof(vm, argv[1]));
    if (argc != 4) vm_raise_kind(vm, TypeError, "type.__new__() takes exactly 3 arguments (%d given)", argc - 1);
    if (!IS_STR(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "type.__new__() argument 1 must be str, not %s", vm_type_name(vm, argv[1]));
    if (!IS_TUPLE(vm, argv[2]))
        vm_raise_kind(vm, TypeError, "type.__new__() argument 2 must be tuple, not %s", vm_type_name(vm, argv[2]));
    if (!IS_DICT(vm, argv[3]))
        vm_raise_kind(vm, TypeError, "type.__new__() argument 3 must be dict, not %s", vm_type_name(vm, argv[3]));
    return class_new_meta(vm, mcs, AS_STR(argv[1]), AS_TUPLE(argv[2]), AS_DICT(argv[3]), kwargs);
}

static Value type_m_init(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    (void)kwargs;
    if (argc != 2 && argc != 4) vm_raise_kind(vm, TypeError, "type.__init__() takes 1 or 3 arguments");
    return NONE_VAL;
}

/* type.__call__(cls, *args, **kw): what calling a class does by default. */
static Value type_m_call(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Type *T = type_arg(vm, "type.__call__", argv[0]);
    if (!T->new_) vm_raise_kind(vm, TypeError, "cannot create '%s' instances", class_type_name(T));
    return T->new_(vm, T, argc - 1, argv + 1, kwargs);
}

static Value type_m_prepare(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)argv;
    (void)kwargs;
    return OBJ_VAL(dict_new(vm));
}

static Value type_m_instancecheck(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__instancecheck__", kwargs);
    arg_count(vm, "__instancecheck__", argc, 2, 2);
    return BOOL_VAL(vm_isinstance(vm, argv[1], type_arg(vm, "__instancecheck__", argv[0])));
}

static Value type_m_subclasscheck(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__subclasscheck__", kwargs);
    arg_count(vm, "__subclasscheck__", argc, 2, 2);
    Type *c = type_arg(vm, "__subclasscheck__", argv[0]);
    if (!is_class(vm, argv[1])) vm_raise_kind(vm, TypeError, "issubclass() arg 1 must be a class");
    return BOOL_VAL(type_is_subtype((Type *)AS_OBJ(argv[1]), c));
}

static void add_wrapped(VM *vm, Type *t, Type *kind, const char *name, NativeFn fn) {
    Value nf = native_new(vm, name, fn, EMPTY_VAL);
    vm_push_root(vm, nf);
    Wrapper *w = gc_alloc_obj(vm, kind, sizeof(Wrapper));
    w->func = nf;
    w->fset = w->fdel = NONE_VAL;
    dict_set_cstr(vm, t->dict, name, OBJ_VAL(w));
    vm_pop_roots(vm, 1);
}

void class_meta_init(VM *vm) {
    Type *t = vm->t_type;
    add_wrapped(vm, t, vm->t_staticmethod, "__new__", type_m_new);
    add_wrapped(vm, t, vm->t_classmethod, "__prepare__", type_m_prepare);
    type_add_method(vm, t, "__init__", type_m_init);
    type_add_method(vm, t, "__call__", type_m_call);
    type_add_method(vm, t, "__instancecheck__", type_m_instancecheck);
    type_add_method(vm, t, "__subclasscheck__", type_m_subclasscheck);
}

/* ------------------------------------------ isinstance / issubclass hooks */

/* A metaclass's own (user-defined) check method, or EMPTY. */
static Value meta_hook(VM *vm, Type *cls, const char *name) {
    Type *meta = cls->obj.type;
    if (meta == vm->t_type || !(meta->flags & TYPE_HEAP)) return EMPTY_VAL;
    return class_heap_lookup(vm, meta, str_cstr(vm, name));
}

bool class_isinstance(VM *vm, Value obj, Type *cls) {
    if (vm_typeof(vm, obj) == cls) return true;
    Value m = meta_hook(vm, cls, "__instancecheck__");
    if (IS_EMPTY(m)) return vm_isinstance(vm, obj, cls);
    return vm_truthy(vm, class_call_meth(vm, m, OBJ_VAL(cls), 1, &obj, NULL));
}

bool class_issubclass(VM *vm, Type *c, Type *cls) {
    Value m = meta_hook(vm, cls, "__subclasscheck__");
    if (IS_EMPTY(m)) return type_is_subtype(c, cls);
    Value arg = OBJ_VAL(c);
    return vm_truthy(vm, class_call_meth(vm, m, OBJ_VAL(cls), 1, &arg, NULL));
}

/* -------------------------------------------------------------- __slots__ */

/* The names in a __slots__ value (a str or an iterable of strs), as a tuple. */
static Tuple *slot_names(VM *vm, Value v) {
    if (IS_STR(vm, v)) return tuple_from_array(vm, 1, &v);
    List *l = list_new(vm, 4);
    vm_push_root(vm, OBJ_VAL(l));
    Value it = vm_iter(vm, v);
    vm_push_root(vm, it);
    Value x;
    while (vm_next(vm, it, &x)) {
        if (!IS_STR(vm, x))
            vm_raise_kind(vm, TypeError, "__slots__ items must be strings, not '%s'", vm_type_name(vm, x));
        list_append(vm, l, x);
    }
    Tuple *t = tuple_from_array(vm, l->len, l->items);
    vm_pop_roots(vm, 2);
    return t;
}

static bool tuple_has_name(Tuple *t, Str *name) {
    for (int64_t i = 0; i < t->len; i++) {
        Str *s = (Str *)AS_OBJ(t->items[i]);
        if (s == name || (s->len == name->len && memcmp(s->chars, name->chars, (size_t)s->len) == 0)) return true;
    }
    return false;
}

/* __slots__ in a class body: the names are checked and kept (as a tuple)
** in __slots__; the class loses its instances' __dict__ when every heap
** class on its MRO has __slots__ without "__dict__". Slot values live in
** the hidden instance dict, which keeps the attribute fast paths simple. */
void class_setup_slots(VM *vm, Type *T, Dict *d) {
    Str *key = str_cstr(vm, "__slots__");
    Value v = dict_get_str(vm, d, key);
    if (IS_EMPTY(v)) return;
    Tuple *names = slot_names(vm, v);
    dict_set_str(vm, d, key, OBJ_VAL(names));
    bool has_dict = false;
    for (int64_t i = 0; i < names->len; i++) {
        Str *n = (Str *)AS_OBJ(names->items[i]);
        if (strcmp(n->chars, "__dict__") == 0) {
            has_dict = true;
            continue;
        }
        if (!IS_EMPTY(dict_get_str(vm, d, n)))
            vm_raise_kind(vm, ValueError, "'%s' in __slots__ conflicts with class variable", n->chars);
    }
    if (has_dict) return;
    MroIter it = mro_iter(T);
    mro_next(&it);
    for (Type *x; (x = mro_next(&it));) {
        if ((x->flags & TYPE_HEAP) && !(x->flags & TYPEF_SLOTS)) return;
        if (!(x->flags & TYPE_HEAP) && x != vm->t_object) return;
    }
    T->flags |= TYPEF_SLOTS;
}

bool class_slots_allow(VM *vm, Type *t, Str *name) {
    Str *key = str_cstr(vm, "__slots__");
    MroIter it = mro_iter(t);
    for (Type *x; (x = mro_next(&it));) {
        if (!(x->flags & TYPE_HEAP)) continue;
        Value s = dict_get_str(vm, x->dict, key);
        if (IS_TUPLE(vm, s) && tuple_has_name(AS_TUPLE(s), name)) return true;
    }
    return false;
}

void class_slots_setattr(VM *vm, Value self, Str *name, Value value) {
    generic_setattr(vm, self, name, value);
}

/* ------------------------------------------------------- __getattribute__ */

typedef struct GetattributeCall {
    Value meth, self, result;
    Str *name;
} GetattributeCall;

static void run_getattribute(VM *vm, void *ud) {
    GetattributeCall *c = ud;
    Value arg = STR_VAL(c->name);
    c->result = class_call_meth(vm, c->meth, c->self, 1, &arg, NULL);
}

Value class_getattribute_opt(VM *vm, Value self, Str *name) {
    Type *t = vm_typeof(vm, self);
    Value m = class_heap_lookup(vm, t, str_cstr(vm, "__getattribute__"));
    if (IS_EMPTY(m)) return generic_getattr(vm, self, name);
    Value ga = class_heap_lookup(vm, t, str_cstr(vm, "__getattr__"));
    if (IS_EMPTY(ga) || IS_NONE(ga)) {
        /* no __getattr__ to fall back on: its AttributeError propagates */
        Value arg = STR_VAL(name);
        return class_call_meth(vm, m, self, 1, &arg, NULL);
    }
    GetattributeCall c = {m, self, EMPTY_VAL, name};
    if (vm_pcall(vm, run_getattribute, &c)) return c.result;
    Value exc = vm->exc_value;
    if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_AttributeError]))) {
        vm->exc_value = NONE_VAL;
        return EMPTY_VAL;
    }
    vm_throw(vm, exc);
}
