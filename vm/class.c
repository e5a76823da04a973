/*
** class.c — type objects, `object`, user classes, super, and the
** property / staticmethod / classmethod descriptors.
**
** A user class ("heap type") is a Type whose C slots are wrappers that look
** up and call the class's dunder methods (__add__, __eq__, __len__ ...).
** Everything a heap class does not define falls back to its "ancestor",
** the nearest builtin type in its base chain (object or an exception
** type), which also fixes the instance layout: Instance, or ExcObj.
** Inheritance is single: the method resolution order is the base chain.
**
** Inline-cache invalidation: every Type has a version drawn from the VM-wide
** counter vm->type_version_next. Setting or deleting a class attribute
** gives the class a fresh version, and when the class has subclasses
** (TYPEF_HAS_SUBCLASSES), every type below it too (found by walking the
** object list, which only happens when a class that has subclasses is
** modified after creation). So a cache keyed on (Type*, version) stays
** valid exactly as long as nothing along the type's base chain changed.
*/
#include <string.h>

#include "class_internal.h"

/* super(cls, obj) objects (type t_super). */
typedef struct Super {
    Obj obj;
    Type *thisclass;  /* lookup starts after this class */
    Value self;       /* the bound object (an instance, or a class for classmethods) */
    Type *selftype;   /* type(self), or self itself when self is a subclass */
} Super;

/* ============================================================ small helpers */

uint32_t class_next_version(VM *vm) {
    if (++vm->type_version_next == 0) vm->type_version_next = 1;
    return vm->type_version_next;
}

const char *class_type_name(Type *t) {
    if (!t) return "?";
    if (t->name) return t->name->chars;
    return t->cname ? t->cname : "?";
}

Type *class_ancestor(Type *t) {
    while (t && (t->flags & TYPE_HEAP)) t = t->base;
    return t;
}

bool class_name_is(Str *name, Str *sym, const char *lit) {
    if (sym) {
        if (name == sym) return true;
        return name->len == sym->len && memcmp(name->chars, sym->chars, (size_t)name->len) == 0;
    }
    return strcmp(name->chars, lit) == 0;
}

static Str *sym_or(VM *vm, Str *sym, const char *lit) {
    return sym ? sym : str_cstr(vm, lit);
}

static bool is_type(VM *vm, Value v) {
    return IS_OBJ(v) && (AS_OBJ(v)->type == vm->t_type || (AS_OBJ(v)->type->flags & TYPEF_METATYPE));
}

static bool is_notimpl(VM *vm, Value v) {
    return IS_OBJ(v) && vm_is(v, vm->not_implemented);
}

Value class_heap_lookup(VM *vm, Type *t, Str *name) {
    if (t->mro) {
        /* along the MRO, up to the first builtin class (whose C slots
        ** give the behaviour from there on) */
        for (int64_t i = 0; i < t->mro->len; i++) {
            Type *x = (Type *)AS_OBJ(t->mro->items[i]);
            if (!(x->flags & TYPE_HEAP)) break;
            Value v = dict_get_str(vm, x->dict, name);
            if (!IS_EMPTY(v)) return v;
        }
        return EMPTY_VAL;
    }
    for (; t && (t->flags & TYPE_HEAP); t = t->base) {
        Value v = dict_get_str(vm, t->dict, name);
        if (!IS_EMPTY(v)) return v;
    }
    return EMPTY_VAL;
}

static Value heap_lookup_c(VM *vm, Type *t, const char *name) {
    return class_heap_lookup(vm, t, str_cstr(vm, name));
}

/* type_lookup for classes with a stored MRO (multiple inheritance). */
static __attribute__((noinline)) Value mro_lookup(VM *vm, Tuple *mro, Str *name) {
    for (int64_t i = 0; i < mro->len; i++) {
        Type *x = (Type *)AS_OBJ(mro->items[i]);
        if (!x->dict) continue;
        Value v = dict_get_str(vm, x->dict, name);
        if (!IS_EMPTY(v)) return v;
    }
    return EMPTY_VAL;
}

/* type_lookup along a base chain (single inheritance: no stored MRO). */
static __attribute__((noinline)) Value chain_lookup(VM *vm, Type *t, Str *name) {
    for (; t; t = t->base) {
        if (!t->dict) continue;
        Value v = dict_get_str(vm, t->dict, name);
        if (!IS_EMPTY(v)) return v;
    }
    return EMPTY_VAL;
}

Value type_lookup(VM *vm, Type *t, Str *name) {
    return t && t->mro ? mro_lookup(vm, t->mro, name) : chain_lookup(vm, t, name);
}

Str *class_module_name(VM *vm, Type *t) {
    if (!(t->flags & (TYPE_HEAP | TYPE_FOREIGN)) || !t->dict) return NULL;
    Value m = dict_get_str(vm, t->dict, sym_or(vm, vm->sym_module, "__module__"));
    if (!IS_STR(vm, m)) return NULL;
    if (strcmp(AS_STR(m)->chars, "builtins") == 0) return NULL;
    return AS_STR(m);
}

Str *class_qualname(VM *vm, Type *t) {
    if ((t->flags & TYPE_HEAP) && t->dict) {
        Value q = dict_get_str(vm, t->dict, sym_or(vm, vm->sym_qualname, "__qualname__"));
        if (IS_STR(vm, q)) return AS_STR(q);
    }
    return t->name ? t->name : str_cstr(vm, class_type_name(t));
}

Str *class_default_repr(VM *vm, Value v) {
    Type *t = vm_typeof(vm, v);
    Str *mod = class_module_name(vm, t);
    const void *addr = IS_OBJ(v) ? (const void *)AS_OBJ(v) : NULL;
    if (mod) return str_printf(vm, "<%s.%s object at %p>", mod->chars, class_qualname(vm, t)->chars, addr);
    return str_printf(vm, "<%s object at %p>", class_qualname(vm, t)->chars, addr);
}

/* Does self's type give it an instance dict (Instance / ExcObj layout)? */
static Instance *instance_of(Value self, Type *t) {
    if (!IS_OBJ(self) || !(t->flags & (TYPE_HEAP | TYPE_EXCEPTION)) || (t->flags & TYPEF_METATYPE)) return NULL;
    return (Instance *)AS_OBJ(self);
}

/* Calls callee(first, args...) (first omitted when EMPTY). The arguments
** are copied onto the VM stack above the running frame first: args may
** point into the VM stack, and there they stay rooted during the call. */
Value class_call_prepend(VM *vm, Value callee, Value first, int argc, const Value *args, Dict *kwargs) {
    int n = argc + (IS_EMPTY(first) ? 0 : 1);
    Value *s = vm->stack_top;
    if (!s || s + n > vm->stack_end) vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded");
    if (argc > 0) memmove(s + (n - argc), args, (size_t)argc * sizeof(Value));
    if (!IS_EMPTY(first)) s[0] = first;
    vm->stack_top = s + n;
    Value r = vm_call_kw(vm, callee, n, s, kwargs);
    vm->stack_top = s;
    return r;
}

static bool is_method_native(VM *vm, Value v) {
    return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_builtin_function && (AS_OBJ(v)->flags & NATIVE_FLAG_METHOD);
}

/* The __get__ of a user-defined descriptor class, or EMPTY. */
static Value user_descr_get(VM *vm, Value attr) {
    if (!IS_OBJ(attr)) return EMPTY_VAL;
    Type *at = AS_OBJ(attr)->type;
    if (!(at->flags & TYPE_HEAP)) return EMPTY_VAL;
    return heap_lookup_c(vm, at, "__get__");
}

/* Is attr a data descriptor (property, or a class with __set__/__delete__)? */
static bool is_data_descr(VM *vm, Value attr) {
    if (!IS_OBJ(attr)) return false;
    Type *at = AS_OBJ(attr)->type;
    if (at == vm->t_property) return true;
    if (!(at->flags & TYPE_HEAP)) return false;
    return !IS_EMPTY(heap_lookup_c(vm, at, "__set__")) || !IS_EMPTY(heap_lookup_c(vm, at, "__delete__"));
}

Value class_call_meth(VM *vm, Value meth, Value self, int argc, const Value *args, Dict *kwargs) {
    if (IS_OBJ(meth)) {
        Type *mt = AS_OBJ(meth)->type;
        if (mt == vm->t_function || is_method_native(vm, meth))
            return class_call_prepend(vm, meth, self, argc, args, kwargs);
        if (mt == vm->t_staticmethod)
            return class_call_prepend(vm, ((Wrapper *)AS_OBJ(meth))->func, EMPTY_VAL, argc, args, kwargs);
        if (mt == vm->t_classmethod)
            return class_call_prepend(vm, ((Wrapper *)AS_OBJ(meth))->func, OBJ_VAL(vm_typeof(vm, self)), argc, args, kwargs);
        Value get = user_descr_get(vm, meth);
        if (!IS_EMPTY(get)) {
            Value gargs[2] = {self, OBJ_VAL(vm_typeof(vm, self))};
            Value bound = class_call_meth(vm, get, meth, 2, gargs, NULL);
            vm_push_root(vm, bound);
            Value r = class_call_prepend(vm, bound, EMPTY_VAL, argc, args, kwargs);
            vm_pop_roots(vm, 1);
            return r;
        }
    }
    return class_call_prepend(vm, meth, EMPTY_VAL, argc, args, kwargs);
}

/* ========================================================= attribute lookup */

static _Noreturn void property_error(VM *vm, Type *t, Str *name, const char *what) {
    vm_raise_kind(vm, AttributeError, "property '%s' of '%s' object has no %s", name ? name->chars : "?",
                  class_qualname(vm, t)->chars, what);
}

/* Value of a data descriptor attr found on t for instance self. */
static Value data_descr_get(VM *vm, Value attr, Value self, Type *t, Str *name) {
    if (AS_OBJ(attr)->type == vm->t_property) {
        Wrapper *p = (Wrapper *)AS_OBJ(attr);
        if (IS_NONE(p->func) || IS_EMPTY(p->func)) property_error(vm, t, name, "getter");
        return vm_call(vm, p->func, 1, &self);
    }
    Value get = user_descr_get(vm, attr);
    if (IS_EMPTY(get)) return attr;
    Value gargs[2] = {self, OBJ_VAL(t)};
    return class_call_meth(vm, get, attr, 2, gargs, NULL);
}

/* Binds a class attribute found for instance self of type t. */
static Value bind_attr(VM *vm, Value attr, Value self, Type *t, Str *name) {
    if (!IS_OBJ(attr)) return attr;
    Type *at = AS_OBJ(attr)->type;
    if (at == vm->t_function) return bound_method_new(vm, self, attr);
    if (at == vm->t_builtin_function) {
        if (!(AS_OBJ(attr)->flags & NATIVE_FLAG_METHOD)) return attr;
        return bound_method_new(vm, class_native_self(vm, attr, self), attr);
    }
    if (at == vm->t_staticmethod) return ((Wrapper *)AS_OBJ(attr))->func;
    if (at == vm->t_classmethod) return bound_method_new(vm, OBJ_VAL(t), ((Wrapper *)AS_OBJ(attr))->func);
    if (at == vm->t_property) return data_descr_get(vm, attr, self, t, name);
    if (at->flags & TYPE_HEAP) {
        Value get = heap_lookup_c(vm, at, "__get__");
        if (!IS_EMPTY(get)) {
            Value gargs[2] = {self, OBJ_VAL(t)};
            return class_call_meth(vm, get, attr, 2, gargs, NULL);
        }
    }
    return attr;
}

/* __class__ and __dict__, which every object has ahead of its class. */
static Value special_instance_attr(VM *vm, Value self, Type *t, Str *name) {
    if (name->len < 7 || name->chars[0] != '_') return EMPTY_VAL;
    if (class_name_is(name, vm->sym_class, "__class__")) return OBJ_VAL(t);
    if (class_name_is(name, vm->sym_dict, "__dict__")) {
        Instance *inst = instance_of(self, t);
        if (!inst || (t->flags & TYPEF_SLOTS)) return EMPTY_VAL;
        if (!inst->dict) inst->dict = dict_new(vm);
        return OBJ_VAL(inst->dict);
    }
    if (class_name_is(name, vm->sym_doc, "__doc__")) return NONE_VAL;
    return EMPTY_VAL;
}

/* A builtin class's operator slot as a method (list.__getitem__), for the
** first builtin class on t's MRO implementing it; EMPTY if none. */
static Value builtin_slot_lookup(VM *vm, Type *t, Str *name) {
    if (name->len < 6 || name->chars[0] != '_' || name->chars[1] != '_') return EMPTY_VAL;
    MroIter it = mro_iter(t);
    for (Type *x; (x = mro_next(&it));) {
        if (x->flags & TYPE_HEAP) continue;
        Value w = class_slot_wrapper(vm, x, name);
        if (!IS_EMPTY(w)) return w;
    }
    return EMPTY_VAL;
}

/* object's attribute protocol: data descriptors on the class, the instance
** dict, then class attributes (functions bound to the instance). When no
** class in the chain holds a data descriptor (TYPEF_DATADESC), the instance
** dict is tried first without a class lookup. */
Value generic_getattr(VM *vm, Value self, Str *name) {
    Type *t = vm_typeof(vm, self);
    Instance *inst = instance_of(self, t);
    Value attr;
    if (inst && !(t->flags & TYPEF_DATADESC)) {
        if (inst->dict) {
            Value v = dict_get_str(vm, inst->dict, name);
            if (!IS_EMPTY(v)) return v;
        }
        attr = type_lookup(vm, t, name);
    } else {
        attr = type_lookup(vm, t, name);
        if (!IS_EMPTY(attr) && is_data_descr(vm, attr)) return data_descr_get(vm, attr, self, t, name);
        if (inst && inst->dict) {
            Value v = dict_get_str(vm, inst->dict, name);
            if (!IS_EMPTY(v)) return v;
        }
    }
    if (!IS_EMPTY(attr)) return bind_attr(vm, attr, self, t, name);
    Value sp = special_instance_attr(vm, self, t, name);
    if (!IS_EMPTY(sp)) return sp;
    attr = builtin_slot_lookup(vm, t, name);
    return IS_EMPTY(attr) ? attr : bind_attr(vm, attr, self, t, name);
}

/* Setting obj.__class__ = C: only between classes of the same layout. */
static void set_class(VM *vm, Value self, Type *t, Value value) {
    if (!is_type(vm, value))
        vm_raise_kind(vm, TypeError, "__class__ must be set to a class, not '%s' object", vm_type_name(vm, value));
    Type *nt = (Type *)AS_OBJ(value);
    if (!(nt->flags & TYPE_HEAP) || !(t->flags & TYPE_HEAP))
        vm_raise_kind(vm, TypeError, "__class__ assignment only supported for mutable types or ModuleType subclasses");
    if (class_ancestor(nt) != class_ancestor(t))
        vm_raise_kind(vm, TypeError, "__class__ assignment: '%s' object layout differs from '%s'", class_type_name(nt),
                      class_type_name(t));
    AS_OBJ(self)->type = nt;
}

void generic_setattr(VM *vm, Value self, Str *name, Value value) {
    Type *t = vm_typeof(vm, self);
    Instance *inst = instance_of(self, t);
    if (!inst || (t->flags & TYPEF_DATADESC)) {
        Value attr = type_lookup(vm, t, name);
        if (IS_OBJ(attr)) {
            Type *at = AS_OBJ(attr)->type;
            if (at == vm->t_property) {
                Wrapper *p = (Wrapper *)AS_OBJ(attr);
                if (IS_EMPTY(value)) {
                    if (IS_NONE(p->fdel) || IS_EMPTY(p->fdel)) property_error(vm, t, name, "deleter");
                    vm_call(vm, p->fdel, 1, &self);
                } else {
                    if (IS_NONE(p->fset) || IS_EMPTY(p->fset)) property_error(vm, t, name, "setter");
                    Value args[2] = {self, value};
                    vm_call(vm, p->fset, 2, args);
                }
                return;
            }
            if (at->flags & TYPE_HEAP) {
                Value m = heap_lookup_c(vm, at, IS_EMPTY(value) ? "__delete__" : "__set__");
                if (!IS_EMPTY(m)) {
                    Value args[2] = {self, value};
                    class_call_meth(vm, m, attr, IS_EMPTY(value) ? 1 : 2, args, NULL);
                    return;
                }
            }
        }
        if (!inst) {
            if (!IS_EMPTY(attr))
                vm_raise_kind(vm, AttributeError, "'%s' object attribute '%s' is read-only", class_type_name(t),
                              name->chars);
            vm_raise_kind(vm, AttributeError, "'%s' object has no attribute '%s'", class_type_name(t), name->chars);
        }
    }
    if (name->len >= 8 && name->chars[0] == '_') {
        if (class_name_is(name, vm->sym_class, "__class__")) {
            if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "can't delete __class__ attribute");
            set_class(vm, self, t, value);
            return;
        }
        if (class_name_is(name, vm->sym_dict, "__dict__")) {
            if (!IS_DICT(vm, value))
                vm_raise_kind(vm, TypeError, "__dict__ must be set to a dictionary, not a '%s'",
                              vm_type_name(vm, value));
            inst->dict = AS_DICT(value);
            return;
        }
    }
    if ((t->flags & TYPEF_SLOTS) && !class_slots_allow(vm, t, name))
        vm_raise_kind(vm, AttributeError, "'%s' object has no attribute '%s'", class_type_name(t), name->chars);
    if (IS_EMPTY(value)) {
        if (!inst->dict || !dict_del(vm, inst->dict, STR_VAL(name))) {
            if ((t->flags & TYPE_HEAP) && class_slots_allow(vm, t, name))
                vm_raise_kind(vm, AttributeError, "%s", name->chars); /* an unset slot */
            vm_raise_kind(vm, AttributeError, "'%s' object has no attribute '%s'", class_type_name(t), name->chars);
        }
        return;
    }
    if (!inst->dict) inst->dict = dict_new(vm);
    dict_set_str(vm, inst->dict, name, value);
}

/* ====================================================== heap-class slots */

static Type *type_of(VM *vm, Value v) {
    return vm_typeof(vm, v);
}

static Value heap_repr(VM *vm, Value self) {
    Type *t = type_of(vm, self);
    Value m = class_heap_lookup(vm, t, sym_or(vm, vm->sym_repr, "__repr__"));
    if (IS_EMPTY(m)) {
        Type *anc = class_ancestor(t);
        if (t->flags & TYPEF_BOXED) return STR_VAL(vm_repr(vm, class_unbox(vm, self)));
        return anc->repr ? anc->repr(vm, self) : STR_VAL(class_default_repr(vm, self));
    }
    Value r = class_call_meth(vm, m, self, 0, NULL, NULL);
    if (!IS_STR(vm, r)) vm_raise_kind(vm, TypeError, "__repr__ returned non-string (type %s)", vm_type_name(vm, r));
    return r;
}

static Value heap_str(VM *vm, Value self) {
    Type *t = type_of(vm, self);
    Value m = class_heap_lookup(vm, t, sym_or(vm, vm->sym_str, "__str__"));
    if (IS_EMPTY(m)) {
        Type *anc = class_ancestor(t);
        if (t->flags & TYPEF_BOXED) return STR_VAL(vm_str(vm, class_unbox(vm, self)));
        return anc->str ? anc->str(vm, self) : STR_VAL(vm_repr(vm, self));
    }
    Value r = class_call_meth(vm, m, self, 0, NULL, NULL);
    if (!IS_STR(vm, r)) vm_raise_kind(vm, TypeError, "__str__ returned non-string (type %s)", vm_type_name(vm, r));
    return r;
}

static int64_t heap_hash(VM *vm, Value self) {
    Type *t = type_of(vm, self);
    Value m = heap_lookup_c(vm, t, "__hash__");
    if (IS_NONE(m)) vm_raise_kind(vm, TypeError, "unhashable type: '%s'", class_type_name(t));
    if (IS_EMPTY(m)) {
        Type *anc = class_ancestor(t);
        if (t->flags & TYPEF_BOXED) return vm_hash(vm, class_unbox(vm, self));
        return anc->hash ? anc->hash(vm, self) : class_identity_hash(self);
    }
    Value r = class_call_meth(vm, m, self, 0, NULL, NULL);
    if (!IS_INTLIKE(r)) vm_raise_kind(vm, TypeError, "__hash__ method should return an integer");
    int64_t h = AS_INTLIKE(r);
    return h == -1 ? -2 : h;
}

static const char *const cmp_dunder[] = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"};

/* Rich comparison of a (an instance of this class) with b. __ne__ falls
** back to the inverse of __eq__, as object.__ne__ does. */
static Value heap_compare(VM *vm, CmpOp op, Value a, Value b) {
    Type *t = type_of(vm, a);
    if (op > CMP_GE) return EMPTY_VAL;
    Value m = heap_lookup_c(vm, t, cmp_dunder[op]);
    if (!IS_EMPTY(m) && !IS_NONE(m)) {
        Value r = class_call_meth(vm, m, a, 1, &b, NULL);
        return is_notimpl(vm, r) ? EMPTY_VAL : r;
    }
    if (op == CMP_NE && IS_EMPTY(m)) {
        Value eq = heap_lookup_c(vm, t, "__eq__");
        if (!IS_EMPTY(eq) && !IS_NONE(eq)) {
            Value r = class_call_meth(vm, eq, a, 1, &b, NULL);
            if (is_notimpl(vm, r)) return EMPTY_VAL;
            return BOOL_VAL(!vm_truthy(vm, r));
        }
    }
    Type *anc = class_ancestor(t);
    if (t->flags & TYPEF_BOXED) return class_boxed_compare(vm, op, a, b);
    return anc->compare ? anc->compare(vm, op, a, b) : EMPTY_VAL;
}

Value class_heap_binop_side(VM *vm, BinOp op, Value a, Value b, bool right) {
    Value self = right ? b : a, other = right ? a : b;
    Type *t = type_of(vm, self);
    Str *name = right ? vm->dunder_rbinop[op] : vm->dunder_binop[op];
    Value m = name ? class_heap_lookup(vm, t, name) : EMPTY_VAL;
    if (IS_EMPTY(m) || IS_NONE(m)) {
        Type *anc = class_ancestor(t);
        if (t->flags & TYPEF_BOXED) return class_boxed_binop(vm, op, a, b);
        return anc->binop ? anc->binop(vm, op, a, b) : EMPTY_VAL;
    }
    Value r = class_call_meth(vm, m, self, 1, &other, NULL);
    return is_notimpl(vm, r) ? EMPTY_VAL : r;
}

/* The slot form: the operand whose type carries this slot is "self";
** vm_binop calls class_heap_binop_side directly and never needs this guess. */
Value class_heap_binop(VM *vm, BinOp op, Value a, Value b) {
    bool left = type_of(vm, a)->binop == class_heap_binop;
    return class_heap_binop_side(vm, op, a, b, !left);
}

static Value heap_inplace(VM *vm, BinOp op, Value a, Value b) {
    Str *name = vm->dunder_ibinop[op];
    Value m = name ? class_heap_lookup(vm, type_of(vm, a), name) : EMPTY_VAL;
    if (IS_EMPTY(m) || IS_NONE(m)) return EMPTY_VAL;
    Value r = class_call_meth(vm, m, a, 1, &b, NULL);
    return is_notimpl(vm, r) ? EMPTY_VAL : r;
}

static Value heap_unop(VM *vm, UnOp op, Value a) {
    const char *n = op == UNOP_NEG ? "__neg__" : op == UNOP_POS ? "__pos__" : op == UNOP_INVERT ? "__invert__" : NULL;
    if (!n) return EMPTY_VAL;
    Value m = heap_lookup_c(vm, type_of(vm, a), n);
    if (IS_EMPTY(m) || IS_NONE(m)) return EMPTY_VAL;
    Value r = class_call_meth(vm, m, a, 0, NULL, NULL);
    return is_notimpl(vm, r) ? EMPTY_VAL : r;
}

static int64_t heap_len(VM *vm, Value self) {
    Type *t = type_of(vm, self);
    Value m = heap_lookup_c(vm, t, "__len__");
    if (IS_EMPTY(m) || IS_NONE(m))
        vm_raise_kind(vm, TypeError, "object of type '%s' has no len()", class_type_name(t));
    Value r = class_call_meth(vm, m, self, 0, NULL, NULL);
    int64_t n = vm_to_index(vm, r);
    if (n < 0) vm_raise_kind(vm, ValueError, "__len__() should return >= 0");
    return n;
}

static bool heap_truthy(VM *vm, Value self) {
    Type *t = type_of(vm, self);
    Value m = heap_lookup_c(vm, t, "__bool__");
    if (IS_EMPTY(m)) {
        if (t->len) return t->len(vm, self) != 0;
        return true;
    }
    Value r = class_call_meth(vm, m, self, 0, NULL, NULL);
    if (!IS_BOOL(r)) vm_raise_kind(vm, TypeError, "__bool__ should return bool, returned %s", vm_type_name(vm, r));
    return AS_BOOL(r);
}

static Value heap_getitem(VM *vm, Value self, Value key) {
    Type *t = type_of(vm, self);
    Value m = heap_lookup_c(vm, t, "__getitem__");
    if (IS_EMPTY(m) || IS_NONE(m))
        vm_raise_kind(vm, TypeError, "'%s' object is not subscriptable", class_type_name(t));
    return class_call_meth(vm, m, self, 1, &key, NULL);
}

static void heap_setitem(VM *vm, Value self, Value key, Value value) {
    Type *t = type_of(vm, self);
    /* a dict/list subclass that defines only one of __setitem__/__delitem__:
    ** the other is the builtin's slot, applied to the boxed value */
    if ((t->flags & TYPEF_BOXED) &&
        IS_EMPTY(heap_lookup_c(vm, t, IS_EMPTY(value) ? "__delitem__" : "__setitem__"))) {
        Type *anc = class_ancestor(t);
        if (anc && anc->setitem) {
            anc->setitem(vm, class_unbox(vm, self), key, value);
            return;
        }
    }
    if (IS_EMPTY(value)) {
        Value m = heap_lookup_c(vm, t, "__delitem__");
        if (IS_EMPTY(m) || IS_NONE(m))
            vm_raise_kind(vm, TypeError, "'%s' object doesn't support item deletion", class_type_name(t));
        class_call_meth(vm, m, self, 1, &key, NULL);
        return;
    }
    Value m = heap_lookup_c(vm, t, "__setitem__");
    if (IS_EMPTY(m) || IS_NONE(m))
        vm_raise_kind(vm, TypeError, "'%s' object does not support item assignment", class_type_name(t));
    Value args[2] = {key, value};
    class_call_meth(vm, m, self, 2, args, NULL);
}

static bool heap_contains(VM *vm, Value self, Value item) {
    Type *t = type_of(vm, self);
    Value m = heap_lookup_c(vm, t, "__contains__");
    if (IS_EMPTY(m) || IS_NONE(m))
        vm_raise_kind(vm, TypeError, "argument of type '%s' is not iterable", class_type_name(t));
    return vm_truthy(vm, class_call_meth(vm, m, self, 1, &item, NULL));
}

static Value heap_iter(VM *vm, Value self) {
    Type *t = type_of(vm, self);
    Value m = heap_lookup_c(vm, t, "__iter__");
    if (IS_EMPTY(m) || IS_NONE(m)) {
        if (t->getitem) return class_seqiter_new(vm, self);
        vm_raise_kind(vm, TypeError, "'%s' object is not iterable", class_type_name(t));
    }
    Value r = class_call_meth(vm, m, self, 0, NULL, NULL);
    if (!vm_typeof(vm, r)->next)
        vm_raise_kind(vm, TypeError, "iter() returned non-iterator of type '%s'", vm_type_name(vm, r));
    return r;
}

typedef struct NextCall {
    Value meth, self, result;
} NextCall;

static void run_next(VM *vm, void *ud) {
    NextCall *c = ud;
    c->result = class_call_meth(vm, c->meth, c->self, 0, NULL, NULL);
}

/* __next__: a StopIteration raised by the user method ends the iteration. */
static bool heap_next(VM *vm, Value self, Value *out) {
    Type *t = type_of(vm, self);
    Value m = heap_lookup_c(vm, t, "__next__");
    if (IS_EMPTY(m) || IS_NONE(m))
        vm_raise_kind(vm, TypeError, "'%s' object is not an iterator", class_type_name(t));
    NextCall c = {m, self, EMPTY_VAL};
    if (vm_pcall(vm, run_next, &c)) {
        *out = c.result;
        return true;
    }
    Value exc = vm->exc_value;
    if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_StopIteration]))) {
        vm->exc_value = NONE_VAL;
        return false;
    }
    vm_throw(vm, exc);
}

static Value heap_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    Type *t = type_of(vm, self);
    Value m = class_heap_lookup(vm, t, sym_or(vm, vm->sym_call, "__call__"));
    if (IS_EMPTY(m) || IS_NONE(m)) vm_raise_kind(vm, TypeError, "'%s' object is not callable", class_type_name(t));
    return class_call_meth(vm, m, self, argc, argv, kwargs);
}

/* Normal lookup first; __getattr__ only when it finds nothing. */
Value class_heap_getattr(VM *vm, Value self, Str *name) {
    Type *t = type_of(vm, self);
    Type *anc = class_ancestor(t);
    Value v;
    if (t->flags & TYPEF_GETATTRIBUTE)
        v = class_getattribute_opt(vm, self, name);
    else if (t->flags & TYPEF_BOXED)
        v = class_boxed_getattr(vm, self, name);
    else
        v = anc->getattr ? anc->getattr(vm, self, name) : generic_getattr(vm, self, name);
    if (!IS_EMPTY(v)) return v;
    Value m = heap_lookup_c(vm, t, "__getattr__");
    if (IS_EMPTY(m) || IS_NONE(m)) return EMPTY_VAL;
    Value arg = STR_VAL(name);
    return class_call_meth(vm, m, self, 1, &arg, NULL);
}

typedef struct GetattrCall {
    Value self, result;
    Str *name;
} GetattrCall;

static void run_getattr(VM *vm, void *ud) {
    GetattrCall *c = ud;
    c->result = class_heap_getattr(vm, c->self, c->name);
}

Value class_heap_getattr_opt(VM *vm, Value self, Str *name) {
    GetattrCall c = {self, EMPTY_VAL, name};
    if (vm_pcall(vm, run_getattr, &c)) return c.result;
    Value exc = vm->exc_value;
    if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_AttributeError]))) {
        vm->exc_value = NONE_VAL;
        return EMPTY_VAL;
    }
    vm_throw(vm, exc);
}

static void heap_setattr(VM *vm, Value self, Str *name, Value value) {
    Type *t = type_of(vm, self);
    bool del = IS_EMPTY(value);
    Value m = heap_lookup_c(vm, t, del ? "__delattr__" : "__setattr__");
    if (IS_EMPTY(m) || IS_NONE(m)) {
        Type *anc = class_ancestor(t);
        if (anc->setattr && !(t->flags & TYPEF_BOXED))
            anc->setattr(vm, self, name, value);
        else
            generic_setattr(vm, self, name, value);
        return;
    }
    Value args[2] = {STR_VAL(name), value};
    class_call_meth(vm, m, self, del ? 1 : 2, args, NULL);
}

static void instance_mark(VM *vm, Obj *o) {
    gc_mark_obj(vm, (Obj *)((Instance *)o)->dict);
}

/* Creating an instance: __new__ (a static method taking the class) or the
** ancestor's allocation, then __init__ when the result is an instance. */
static Value heap_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    Value newm = class_heap_lookup(vm, cls, sym_or(vm, vm->sym_new, "__new__"));
    Value initm = class_heap_lookup(vm, cls, sym_or(vm, vm->sym_init, "__init__"));
    Type *anc = class_ancestor(cls);
    bool has_kw = kwargs && kwargs->count > 0;
    int nroots = 0;
    Value obj;
    if (kwargs) {
        vm_push_root(vm, OBJ_VAL(kwargs));
        nroots++;
    }
    if (!IS_EMPTY(newm)) {
        if (!IS_EMPTY(initm) && argc > 0) {
            /* __new__ runs gpy code: keep our own copy of the arguments */
            Tuple *saved = tuple_from_array(vm, argc, argv);
            vm_push_root(vm, OBJ_VAL(saved));
            nroots++;
            argv = saved->items;
        }
        Value f = newm;
        if (IS_OBJ(f) && (AS_OBJ(f)->type == vm->t_staticmethod || AS_OBJ(f)->type == vm->t_classmethod))
            f = ((Wrapper *)AS_OBJ(f))->func;
        obj = class_call_prepend(vm, f, OBJ_VAL(cls), argc, argv, kwargs);
    } else if (anc == vm->t_object) {
        if ((argc > 0 || has_kw) && IS_EMPTY(initm))
            vm_raise_kind(vm, TypeError, "%s() takes no arguments", class_type_name(cls));
        obj = OBJ_VAL(gc_alloc_obj(vm, cls, sizeof(Instance)));
    } else if (cls->flags & TYPEF_BOXED) {
        obj = class_boxed_construct(vm, cls, anc, argc, argv, kwargs, !IS_EMPTY(initm));
    } else if (cls->flags & TYPEF_METATYPE) {
        obj = anc->new_(vm, cls, argc, argv, kwargs);
    } else {
        if (!anc->new_) vm_raise_kind(vm, TypeError, "cannot create '%s' instances", class_type_name(cls));
        obj = anc->new_(vm, cls, argc, argv, IS_EMPTY(initm) ? kwargs : NULL);
    }
    if (!IS_EMPTY(initm) && vm_isinstance(vm, obj, cls)) {
        vm_push_root(vm, obj);
        nroots++;
        Value r = class_call_meth(vm, initm, obj, argc, argv, kwargs);
        if (!IS_NONE(r))
            vm_raise_kind(vm, TypeError, "__init__() should return None, not '%s'", vm_type_name(vm, r));
    }
    vm_pop_roots(vm, nroots);
    return obj;
}

/* Fills a heap class's slots: the ancestor's, then a wrapper for every
** special method the class (or a heap base) defines. */
static void install_slots(VM *vm, Type *T) {
    Type *anc = class_ancestor(T);
    T->new_ = heap_new;
    T->repr = anc->repr;
    T->str = anc->str;
    T->hash = anc->hash;
    T->compare = anc->compare;
    T->binop = anc->binop;
    T->inplace = anc->inplace;
    T->unop = anc->unop;
    T->truthy = anc->truthy;
    T->getattr = anc->getattr;
    T->setattr = anc->setattr;
    T->call = anc->call;
    T->iter = anc->iter;
    T->next = anc->next;
    T->getitem = anc->getitem;
    T->setitem = anc->setitem;
    T->len = anc->len;
    T->contains = anc->contains;
    if (anc == vm->t_object) {
        T->mark = instance_mark;
        T->finalize = NULL;
    } else {
        T->mark = anc->mark;
        T->finalize = anc->finalize;
    }
    if (T->flags & TYPEF_BOXED) class_boxed_slots(vm, T, anc);
    if (T->flags & TYPEF_SLOTS) T->setattr = class_slots_setattr;
#define HAS(n) (!IS_EMPTY(heap_lookup_c(vm, T, n)))
    if (HAS("__repr__")) T->repr = heap_repr;
    if (HAS("__str__")) T->str = heap_str;
    if (HAS("__hash__")) T->hash = heap_hash;
    for (int op = 0; op <= CMP_GE; op++)
        if (HAS(cmp_dunder[op])) T->compare = heap_compare;
    for (int op = 0; op < BINOP__COUNT; op++) {
        if ((vm->dunder_binop[op] && !IS_EMPTY(class_heap_lookup(vm, T, vm->dunder_binop[op]))) ||
            (vm->dunder_rbinop[op] && !IS_EMPTY(class_heap_lookup(vm, T, vm->dunder_rbinop[op]))))
            T->binop = class_heap_binop;
        if (vm->dunder_ibinop[op] && !IS_EMPTY(class_heap_lookup(vm, T, vm->dunder_ibinop[op])))
            T->inplace = heap_inplace;
    }
    if (HAS("__neg__") || HAS("__pos__") || HAS("__invert__")) T->unop = heap_unop;
    if (HAS("__bool__")) T->truthy = heap_truthy;
    if (HAS("__len__")) T->len = heap_len;
    if (HAS("__getattribute__")) {
        T->flags |= TYPEF_GETATTRIBUTE;
        T->getattr = class_heap_getattr;
    }
    if (HAS("__getattr__")) T->getattr = class_heap_getattr;
    if (HAS("__setattr__") || HAS("__delattr__")) T->setattr = heap_setattr;
    if (HAS("__call__")) T->call = heap_call;
    if (HAS("__iter__")) T->iter = heap_iter;
    if (HAS("__next__")) T->next = heap_next;
    if (HAS("__getitem__")) T->getitem = heap_getitem;
    if (HAS("__setitem__") || HAS("__delitem__")) T->setitem = heap_setitem;
    if (HAS("__contains__")) T->contains = heap_contains;
#undef HAS
}

/* Does the class dict of T hold a data descriptor? */
static bool dict_has_data_descr(VM *vm, Dict *d) {
    int64_t pos = 0;
    Value k, v;
    while (dict_next(d, &pos, &k, &v))
        if (is_data_descr(vm, v)) return true;
    return false;
}

/* After a change to T's dict: fresh versions for T and every subclass;
** slots recomputed when a dunder changed. */
static void type_changed(VM *vm, Type *T, bool dunder, bool datadesc) {
    T->version = class_next_version(vm);
    if (datadesc) T->flags |= TYPEF_DATADESC;
    if (dunder) install_slots(vm, T);
    if (!(T->flags & TYPEF_HAS_SUBCLASSES)) return;
    for (Obj *o = vm->objects; o; o = o->gc_next) {
        if (!is_type(vm, OBJ_VAL(o)) || o == &T->obj) continue;
        Type *S = (Type *)o;
        if (!type_is_subtype(S, T)) continue;
        S->version = class_next_version(vm);
        if (datadesc) S->flags |= TYPEF_DATADESC;
        if (dunder && (S->flags & TYPE_HEAP)) install_slots(vm, S);
    }
}

/* Module name for a class created where no __module__ was given: the
** __name__ of the running gpy function's globals. */
static Value current_module_name(VM *vm) {
    if (vm->nframes > 0) {
        Frame *f = &vm->frames[vm->nframes - 1];
        if (f->globals) {
            Value n = dict_get_str(vm, f->globals, sym_or(vm, vm->sym_name, "__name__"));
            if (!IS_EMPTY(n)) return n;
        }
    }
    return STR_VAL(str_cstr(vm, "__main__"));
}

Value class_new(VM *vm, Str *name, Tuple *bases, Dict *ns) {
    return class_new_meta(vm, vm->t_type, name, bases, ns, NULL);
}

/* Can a heap class of layout ancestor anc exist? Instance layouts (object,
** exceptions, foreign classes), boxed builtins, and type (metaclasses). */
static bool acceptable_ancestor(VM *vm, Type *anc) {
    return anc && (anc == vm->t_object || anc == vm->t_type || (anc->flags & (TYPE_EXCEPTION | TYPE_FOREIGN)) ||
                   class_is_boxable(vm, anc));
}

/* The flags a class inherits from every class on its MRO. */
static uint32_t inherited_flags(Type *T) {
    uint32_t f = 0;
    MroIter it = mro_iter(T);
    mro_next(&it);
    for (Type *x; (x = mro_next(&it));) {
        f |= x->flags & (TYPE_EXCEPTION | TYPEF_DATADESC | TYPEF_METATYPE | TYPEF_GETATTRIBUTE);
    }
    return f;
}

/* Calls the __init_subclass__ found after T on its MRO, as a classmethod of T. */
static void call_init_subclass(VM *vm, Type *T, Dict *kwargs) {
    Str *s = str_cstr(vm, "__init_subclass__");
    MroIter it = mro_iter(T);
    mro_next(&it);
    for (Type *x; (x = mro_next(&it));) {
        Value f = x->dict ? dict_get_str(vm, x->dict, s) : EMPTY_VAL;
        if (IS_EMPTY(f)) continue;
        if (IS_OBJ(f) && AS_OBJ(f)->type == vm->t_classmethod) f = ((Wrapper *)AS_OBJ(f))->func;
        if (IS_OBJ(f) && AS_OBJ(f)->type == vm->t_builtin_function && x == vm->t_object) {
            if (kwargs && kwargs->count > 0)
                vm_raise_kind(vm, TypeError, "%s.__init_subclass__() takes no keyword arguments", class_type_name(T));
            return;
        }
        Value cls = OBJ_VAL(T);
        class_call_prepend(vm, f, cls, 0, NULL, kwargs && kwargs->count > 0 ? kwargs : NULL);
        return;
    }
}

Value class_new_meta(VM *vm, Type *meta, Str *name, Tuple *bases, Dict *ns, Dict *kwargs) {
    int64_t nb = bases ? bases->len : 0;
    for (int64_t i = 0; i < nb; i++) {
        Value b = bases->items[i];
        if (!is_type(vm, b))
            vm_raise_kind(vm, TypeError, "bases must be types, not '%s'", vm_type_name(vm, b));
        Type *bt = (Type *)AS_OBJ(b);
        if (!(bt->flags & (TYPE_HEAP | TYPE_BASETYPE)) || !acceptable_ancestor(vm, class_ancestor(bt)))
            vm_raise_kind(vm, TypeError, "type '%s' is not an acceptable base type", class_type_name(bt));
    }
    meta = class_calc_meta(vm, meta ? meta : vm->t_type, bases);
    Type *T = gc_alloc_obj(vm, meta, sizeof(Type));
    T->name = name;
    T->cname = NULL;
    T->base = vm->t_object;
    T->dict = ns ? dict_copy(vm, ns) : dict_new(vm);
    T->flags = TYPE_HEAP | TYPE_BASETYPE;
    T->version = class_next_version(vm);
    T->mark = instance_mark;
    vm_push_root(vm, OBJ_VAL(T));
    Type *base = class_setup_bases(vm, T, nb > 0 ? bases : NULL);
    Type *anc = class_ancestor(base);
    T->flags |= inherited_flags(T);
    if (class_is_boxable(vm, anc)) T->flags |= TYPEF_BOXED;
    if (anc == vm->t_type) T->flags |= TYPEF_METATYPE;

    Dict *d = T->dict;
    Str *s_qual = sym_or(vm, vm->sym_qualname, "__qualname__");
    Value q = dict_get_str(vm, d, s_qual);
    if (IS_EMPTY(q))
        dict_set_str(vm, d, s_qual, STR_VAL(name));
    else if (!IS_STR(vm, q))
        vm_raise_kind(vm, TypeError, "type __qualname__ must be a str, not %s", vm_type_name(vm, q));
    Str *s_mod = sym_or(vm, vm->sym_module, "__module__");
    if (IS_EMPTY(dict_get_str(vm, d, s_mod))) dict_set_str(vm, d, s_mod, current_module_name(vm));
    Str *s_doc = sym_or(vm, vm->sym_doc, "__doc__");
    if (IS_EMPTY(dict_get_str(vm, d, s_doc))) dict_set_str(vm, d, s_doc, NONE_VAL);

    /* __new__ is implicitly a static method; __init_subclass__ and
    ** __class_getitem__ implicitly class methods (as in Python). */
    Str *s_new = sym_or(vm, vm->sym_new, "__new__");
    Value nv = dict_get_str(vm, d, s_new);
    if (IS_OBJ(nv) && AS_OBJ(nv)->type == vm->t_function) {
        Wrapper *w = gc_alloc_obj(vm, vm->t_staticmethod, sizeof(Wrapper));
        w->func = nv;
        w->fset = w->fdel = NONE_VAL;
        dict_set_str(vm, d, s_new, OBJ_VAL(w));
    }
    const char *implicit_cm[] = {"__init_subclass__", "__class_getitem__"};
    for (int i = 0; i < 2; i++) {
        Str *s = str_cstr(vm, implicit_cm[i]);
        Value v = dict_get_str(vm, d, s);
        if (IS_OBJ(v) && AS_OBJ(v)->type == vm->t_function) {
            Wrapper *w = gc_alloc_obj(vm, vm->t_classmethod, sizeof(Wrapper));
            w->func = v;
            w->fset = w->fdel = NONE_VAL;
            dict_set_str(vm, d, s, OBJ_VAL(w));
        }
    }
    /* defining __eq__ without __hash__ makes instances unhashable */
    Str *s_hash = str_cstr(vm, "__hash__");
    if (!IS_EMPTY(dict_get_str(vm, d, str_cstr(vm, "__eq__"))) && IS_EMPTY(dict_get_str(vm, d, s_hash)))
        dict_set_str(vm, d, s_hash, NONE_VAL);
    if (dict_has_data_descr(vm, d)) T->flags |= TYPEF_DATADESC;
    class_setup_slots(vm, T, d);

    if (T->bases)
        for (int64_t i = 0; i < T->bases->len; i++) ((Type *)AS_OBJ(T->bases->items[i]))->flags |= TYPEF_HAS_SUBCLASSES;
    else
        base->flags |= TYPEF_HAS_SUBCLASSES;
    install_slots(vm, T);

    /* __set_name__ of descriptors defined in the body */
    Str *s_setname = str_cstr(vm, "__set_name__");
    int64_t pos = 0;
    Value k, v;
    while (dict_next(d, &pos, &k, &v)) {
        if (!IS_OBJ(v) || !(AS_OBJ(v)->type->flags & TYPE_HEAP)) continue;
        Value m = class_heap_lookup(vm, AS_OBJ(v)->type, s_setname);
        if (IS_EMPTY(m)) continue;
        Value args[2] = {OBJ_VAL(T), k};
        class_call_meth(vm, m, v, 2, args, NULL);
    }
    /* the next __init_subclass__ on the MRO (object's does nothing) */
    call_init_subclass(vm, T, kwargs);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(T);
}

/* ============================================================ type objects */

static Value type_repr(VM *vm, Value self) {
    Type *t = (Type *)AS_OBJ(self);
    Str *mod = class_module_name(vm, t);
    if (mod) return STR_VAL(str_printf(vm, "<class '%s.%s'>", mod->chars, class_qualname(vm, t)->chars));
    return STR_VAL(str_printf(vm, "<class '%s'>", class_qualname(vm, t)->chars));
}

/* Binds a class attribute looked up on the class itself (C.attr). */
static Value type_bind(VM *vm, Value attr, Type *T) {
    if (!IS_OBJ(attr)) return attr;
    Type *at = AS_OBJ(attr)->type;
    if (at == vm->t_staticmethod) return ((Wrapper *)AS_OBJ(attr))->func;
    if (at == vm->t_classmethod) return bound_method_new(vm, OBJ_VAL(T), ((Wrapper *)AS_OBJ(attr))->func);
    if (at->flags & TYPE_HEAP) {
        Value get = heap_lookup_c(vm, at, "__get__");
        if (!IS_EMPTY(get)) {
            Value gargs[2] = {NONE_VAL, OBJ_VAL(T)};
            return class_call_meth(vm, get, attr, 2, gargs, NULL);
        }
    }
    return attr;
}

/* The attributes every class has by virtue of being a type. */
static Value type_special_attr(VM *vm, Type *T, Str *name) {
    const char *n = name->chars;
    if (name->len < 7 || n[0] != '_' || n[1] != '_') return EMPTY_VAL;
    if (class_name_is(name, vm->sym_name, "__name__"))
        return T->name ? STR_VAL(T->name) : STR_VAL(str_cstr(vm, class_type_name(T)));
    if (class_name_is(name, vm->sym_qualname, "__qualname__")) return STR_VAL(class_qualname(vm, T));
    if (class_name_is(name, vm->sym_module, "__module__")) {
        if (T->dict) { /* classes, and built-in types of modules that name theirs (zlib.error) */
            Value m = dict_get_str(vm, T->dict, name);
            if (!IS_EMPTY(m)) return m;
        }
        return STR_VAL(str_cstr(vm, "builtins"));
    }
    if (class_name_is(name, vm->sym_doc, "__doc__")) {
        Value d = T->dict ? dict_get_str(vm, T->dict, name) : EMPTY_VAL;
        return IS_EMPTY(d) ? NONE_VAL : d;
    }
    if (class_name_is(name, vm->sym_dict, "__dict__")) return OBJ_VAL(T->dict ? dict_copy(vm, T->dict) : dict_new(vm));
    if (strcmp(n, "__bases__") == 0) return OBJ_VAL(class_bases_tuple(vm, T));
    if (strcmp(n, "__base__") == 0) return T->base ? OBJ_VAL(T->base) : NONE_VAL;
    if (strcmp(n, "__mro__") == 0) return OBJ_VAL(class_mro_tuple(vm, T));
    if (class_name_is(name, vm->sym_class, "__class__")) return OBJ_VAL(T->obj.type);
    return EMPTY_VAL;
}

static Value type_getattr(VM *vm, Value self, Str *name) {
    Type *T = (Type *)AS_OBJ(self);
    Value v = type_special_attr(vm, T, name);
    if (!IS_EMPTY(v)) return v;
    v = type_lookup(vm, T, name);
    if (IS_EMPTY(v)) v = builtin_slot_lookup(vm, T, name);
    if (!IS_EMPTY(v)) return type_bind(vm, v, T);
    /* attributes of the metaclass (type's mro, __subclasses__, a
    ** metaclass's methods), bound to the class */
    Type *meta = T->obj.type;
    v = type_lookup(vm, meta, name);
    if (!IS_EMPTY(v)) return bind_attr(vm, v, self, meta, name);
    return EMPTY_VAL;
}

static bool is_dunder(Str *name) {
    return name->len > 4 && name->chars[0] == '_' && name->chars[1] == '_' && name->chars[name->len - 1] == '_' &&
           name->chars[name->len - 2] == '_';
}

static void type_setattr(VM *vm, Value self, Str *name, Value value) {
    Type *T = (Type *)AS_OBJ(self);
    if (!(T->flags & TYPE_HEAP))
        vm_raise_kind(vm, TypeError, "cannot set '%s' attribute of immutable type '%s'", name->chars,
                      class_type_name(T));
    if (class_name_is(name, vm->sym_name, "__name__")) {
        if (!IS_STR(vm, value))
            vm_raise_kind(vm, TypeError, "can only assign string to %s.__name__, not '%s'", class_type_name(T),
                          IS_EMPTY(value) ? "NoneType" : vm_type_name(vm, value));
        T->name = AS_STR(value);
        T->version = class_next_version(vm);
        return;
    }
    if (IS_EMPTY(value)) {
        if (!dict_del(vm, T->dict, STR_VAL(name)))
            vm_raise_kind(vm, AttributeError, "type object '%s' has no attribute '%s'", class_type_name(T),
                          name->chars);
    } else {
        if (class_name_is(name, vm->sym_new, "__new__") && IS_OBJ(value) && AS_OBJ(value)->type == vm->t_function) {
            Wrapper *w = gc_alloc_obj(vm, vm->t_staticmethod, sizeof(Wrapper));
            w->func = value;
            w->fset = w->fdel = NONE_VAL;
            value = OBJ_VAL(w);
        }
        dict_set_str(vm, T->dict, name, value);
    }
    type_changed(vm, T, is_dunder(name), !IS_EMPTY(value) && is_data_descr(vm, value));
}

/* type(x) -> its type; type(name, bases, dict) -> a new class. */
static Value type_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    bool has_kw = kwargs && kwargs->count > 0;
    if (argc == 1 && !has_kw && cls == vm->t_type) return OBJ_VAL(vm_typeof(vm, argv[0]));
    if (argc == 3) {
        if (!IS_STR(vm, argv[0]))
            vm_raise_kind(vm, TypeError, "type.__new__() argument 1 must be str, not %s", vm_type_name(vm, argv[0]));
        if (!IS_TUPLE(vm, argv[1]))
            vm_raise_kind(vm, TypeError, "type.__new__() argument 2 must be tuple, not %s",
                          vm_type_name(vm, argv[1]));
        if (!IS_DICT(vm, argv[2]))
            vm_raise_kind(vm, TypeError, "type.__new__() argument 3 must be dict, not %s", vm_type_name(vm, argv[2]));
        return class_new_meta(vm, cls, AS_STR(argv[0]), AS_TUPLE(argv[1]), AS_DICT(argv[2]), kwargs);
    }
    if (cls != vm->t_type) vm_raise_kind(vm, TypeError, "type.__new__() takes exactly 3 arguments (%d given)", argc);
    vm_raise_kind(vm, TypeError, "type() takes 1 or 3 arguments");
}

/* Calling a type object: C(...) */
static Value type_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    Type *T = (Type *)AS_OBJ(self);
    if (!T->new_) vm_raise_kind(vm, TypeError, "cannot create '%s' instances", class_type_name(T));
    return T->new_(vm, T, argc, argv, kwargs);
}

static Value type_m_mro(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "mro", kwargs);
    arg_count(vm, "mro", argc, 1, 1);
    Tuple *t = class_mro_tuple(vm, (Type *)AS_OBJ(argv[0]));
    List *l = list_new(vm, t->len);
    for (int64_t i = 0; i < t->len; i++) list_append(vm, l, t->items[i]);
    return OBJ_VAL(l);
}

static Value type_m_subclasses(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__subclasses__", kwargs);
    arg_count(vm, "__subclasses__", argc, 1, 1);
    Type *T = (Type *)AS_OBJ(argv[0]);
    List *l = list_new(vm, 0);
    if (!(T->flags & TYPEF_HAS_SUBCLASSES)) return OBJ_VAL(l);
    /* the object list is newest first; Python lists subclasses oldest first */
    for (Obj *o = vm->objects; o; o = o->gc_next)
        if (is_type(vm, OBJ_VAL(o)) && (((Type *)o)->flags & TYPE_HEAP) && class_has_base((Type *)o, T))
            list_append(vm, l, OBJ_VAL(o));
    for (int64_t i = 0, j = l->len - 1; i < j; i++, j--) {
        Value tmp = l->items[i];
        l->items[i] = l->items[j];
        l->items[j] = tmp;
    }
    return OBJ_VAL(l);
}

Type *type_new_builtin(VM *vm, const char *name, Type *base, uint32_t flags) {
    return type_new_builtin_sized(vm, name, base, flags, sizeof(Type));
}

Type *type_new_builtin_sized(VM *vm, const char *name, Type *base, uint32_t flags, size_t size) {
    if (!base) base = vm->t_object;
    Type *t = gc_alloc_obj(vm, vm->t_type, size);
    /* registered first, so it stays alive while its name and dict are made */
    if (vm->nbuiltin_types == vm->builtin_types_cap) {
        int32_t cap = vm->builtin_types_cap ? vm->builtin_types_cap * 2 : 64;
        vm->builtin_types = gc_realloc(vm, vm->builtin_types, (size_t)vm->builtin_types_cap * sizeof(Type *),
                                       (size_t)cap * sizeof(Type *));
        vm->builtin_types_cap = cap;
    }
    vm->builtin_types[vm->nbuiltin_types++] = t;
    t->cname = name;
    t->name = str_cstr(vm, name);
    t->dict = dict_new(vm);
    t->base = base;
    t->flags = flags;
    t->version = class_next_version(vm);
    if (base) {
        /* inherit behaviour; object's allocation and marking are for the
        ** Instance layout, which a new builtin type does not share */
        bool from_object = base == vm->t_object;
        t->new_ = from_object ? NULL : base->new_;
        t->repr = base->repr;
        t->str = base->str;
        t->hash = base->hash;
        t->compare = base->compare;
        t->binop = base->binop;
        t->inplace = base->inplace;
        t->unop = base->unop;
        t->truthy = base->truthy;
        t->getattr = base->getattr;
        t->setattr = base->setattr;
        t->call = base->call;
        t->iter = base->iter;
        t->next = base->next;
        t->getitem = base->getitem;
        t->setitem = base->setitem;
        t->len = base->len;
        t->contains = base->contains;
        t->mark = from_object ? NULL : base->mark;
        t->finalize = from_object ? NULL : base->finalize;
        t->flags |= base->flags & TYPE_EXCEPTION;
    }
    return t;
}

void class_prepare_core(VM *vm, Type *t, const char *name, Type *base) {
    if (!t) return;
    t->name = str_cstr(vm, name);
    if (!t->cname) t->cname = name;
    if (!t->dict) t->dict = dict_new(vm);
    t->base = base;
    t->version = class_next_version(vm);
}

/* ================================================================== object */

static Value object_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    if (argc > 0 || (kwargs && kwargs->count > 0))
        vm_raise_kind(vm, TypeError, "%s() takes no arguments", class_type_name(cls));
    return OBJ_VAL(gc_alloc_obj(vm, cls, sizeof(Instance)));
}

static Value object_repr(VM *vm, Value self) {
    return STR_VAL(class_default_repr(vm, self));
}

/* object.__new__(cls, ...): a bare instance of cls. */
static Value object_m_new(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc < 1) vm_raise_kind(vm, TypeError, "object.__new__(): not enough arguments");
    if (!is_type(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "object.__new__(X): X is not a type object (%s)", vm_type_name(vm, argv[0]));
    Type *cls = (Type *)AS_OBJ(argv[0]);
    bool excess = argc > 1 || (kwargs && kwargs->count > 0);
    if (excess) {
        if (!IS_EMPTY(class_heap_lookup(vm, cls, sym_or(vm, vm->sym_new, "__new__"))))
            vm_raise_kind(vm, TypeError, "object.__new__() takes exactly one argument (the type to instantiate)");
        if (IS_EMPTY(class_heap_lookup(vm, cls, sym_or(vm, vm->sym_init, "__init__"))))
            vm_raise_kind(vm, TypeError, "%s() takes no arguments", class_type_name(cls));
    }
    Type *anc = class_ancestor(cls);
    if (anc == vm->t_object) return OBJ_VAL(gc_alloc_obj(vm, cls, sizeof(Instance)));
    if (!(cls->flags & TYPE_HEAP) || !anc->new_ || (cls->flags & (TYPEF_BOXED | TYPEF_METATYPE)))
        vm_raise_kind(vm, TypeError, "object.__new__(%s) is not safe, use %s.__new__()", class_type_name(cls),
                      class_type_name(anc));
    return anc->new_(vm, cls, argc - 1, argv + 1, NULL);
}

static Value object_m_init(VM *vm, int argc, Value *argv, Dict *kwargs) {
    bool excess = argc > 1 || (kwargs && kwargs->count > 0);
    if (excess) {
        Type *t = vm_typeof(vm, argv[0]);
        if (!IS_EMPTY(class_heap_lookup(vm, t, sym_or(vm, vm->sym_init, "__init__"))))
            vm_raise_kind(vm, TypeError, "object.__init__() takes exactly one argument (the instance to initialize)");
        if (IS_EMPTY(class_heap_lookup(vm, t, sym_or(vm, vm->sym_new, "__new__"))))
            vm_raise_kind(vm, TypeError, "%s() takes no arguments", class_type_name(t));
    }
    return NONE_VAL;
}

static Value object_m_repr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__repr__", kwargs);
    arg_count(vm, "__repr__", argc, 1, 1);
    return STR_VAL(class_default_repr(vm, argv[0]));
}

static Value object_m_str(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__str__", kwargs);
    arg_count(vm, "__str__", argc, 1, 1);
    return STR_VAL(vm_repr(vm, argv[0]));
}

static Value object_m_hash(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__hash__", kwargs);
    arg_count(vm, "__hash__", argc, 1, 1);
    return INT_VAL(IS_OBJ(argv[0]) ? class_identity_hash(argv[0]) : vm_hash(vm, argv[0]));
}

static Value object_m_eq(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__eq__", kwargs);
    arg_count(vm, "__eq__", argc, 2, 2);
    return vm_is(argv[0], argv[1]) ? BOOL_VAL(true) : vm->not_implemented;
}

/* object.__ne__: the inverse of type(self).__eq__ unless NotImplemented. */
static Value object_m_ne(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__ne__", kwargs);
    arg_count(vm, "__ne__", argc, 2, 2);
    Value self = argv[0], other = argv[1];
    Type *t = vm_typeof(vm, self);
    Value r;
    if (t->compare && !IS_NUMBER(self)) {
        r = t->compare(vm, CMP_EQ, self, other);
        if (IS_EMPTY(r)) return vm->not_implemented;
    } else {
        if (!vm_is(self, other)) return vm->not_implemented;
        r = BOOL_VAL(true);
    }
    return BOOL_VAL(!vm_truthy(vm, r));
}

static Value object_m_notimpl(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    arg_no_kwargs(vm, "comparison", kwargs);
    arg_count(vm, "comparison", argc, 2, 2);
    return vm->not_implemented;
}

static Str *name_arg(VM *vm, Value v) {
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "attribute name must be string, not '%s'", vm_type_name(vm, v));
    return AS_STR(v);
}

static Value object_m_setattr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__setattr__", kwargs);
    arg_count(vm, "__setattr__", argc, 3, 3);
    generic_setattr(vm, argv[0], name_arg(vm, argv[1]), argv[2]);
    return NONE_VAL;
}

static Value object_m_delattr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__delattr__", kwargs);
    arg_count(vm, "__delattr__", argc, 2, 2);
    generic_setattr(vm, argv[0], name_arg(vm, argv[1]), EMPTY_VAL);
    return NONE_VAL;
}

static Value object_m_getattribute(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__getattribute__", kwargs);
    arg_count(vm, "__getattribute__", argc, 2, 2);
    Str *name = name_arg(vm, argv[1]);
    Value v = generic_getattr(vm, argv[0], name);
    if (IS_EMPTY(v))
        vm_raise_kind(vm, AttributeError, "'%s' object has no attribute '%s'", vm_type_name(vm, argv[0]),
                      name->chars);
    return v;
}

static Value object_m_format(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "__format__", kwargs);
    arg_count(vm, "__format__", argc, 2, 2);
    if (!IS_STR(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "__format__() argument must be str, not %s", vm_type_name(vm, argv[1]));
    if (AS_STR(argv[1])->len > 0)
        vm_raise_kind(vm, TypeError, "unsupported format string passed to %s.__format__",
                      vm_type_name(vm, argv[0]));
    return STR_VAL(vm_str(vm, argv[0]));
}

static Value object_m_init_subclass(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)argv;
    if (kwargs && kwargs->count > 0)
        vm_raise_kind(vm, TypeError, "__init_subclass__() takes no keyword arguments");
    return NONE_VAL;
}

/* A staticmethod/classmethod wrapper around a plain native, stored in t. */
static void add_wrapped_native(VM *vm, Type *t, Type *kind, const char *name, NativeFn fn) {
    Value nf = native_new(vm, name, fn, EMPTY_VAL);
    Wrapper *w = gc_alloc_obj(vm, kind, sizeof(Wrapper));
    w->func = nf;
    w->fset = w->fdel = NONE_VAL;
    dict_set_cstr(vm, t->dict, name, OBJ_VAL(w));
}

/* ============================================ iterator over __getitem__ */

static bool seqiter_next(VM *vm, Value self, Value *out);

/* The type is made in class_init and found again through its next slot
** (newest registrations first), which avoids a VM field for it. */
static Type *seqiter_type(VM *vm) {
    for (int32_t i = vm->nbuiltin_types - 1; i >= 0; i--) {
        Type *t = vm->builtin_types[i];
        if (t->next == seqiter_next) return t;
    }
    vm_raise_kind(vm, SystemError, "iterator type missing (class_init not run)");
}

Value class_seqiter_new(VM *vm, Value seq) {
    SeqIter *it = gc_alloc_obj(vm, seqiter_type(vm), sizeof(SeqIter));
    it->seq = seq;
    it->index = 0;
    return OBJ_VAL(it);
}

typedef struct ItemCall {
    Value seq, result;
    int64_t index;
} ItemCall;

static void run_getitem(VM *vm, void *ud) {
    ItemCall *c = ud;
    c->result = vm_getitem(vm, c->seq, INT_VAL(c->index));
}

static bool seqiter_next(VM *vm, Value self, Value *out) {
    SeqIter *it = (SeqIter *)AS_OBJ(self);
    if (IS_NONE(it->seq)) return false;
    ItemCall c = {it->seq, EMPTY_VAL, it->index};
    if (vm_pcall(vm, run_getitem, &c)) {
        it->index++;
        *out = c.result;
        return true;
    }
    Value exc = vm->exc_value;
    if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_IndexError])) ||
        vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_StopIteration]))) {
        vm->exc_value = NONE_VAL;
        it->seq = NONE_VAL;
        return false;
    }
    vm_throw(vm, exc);
}

static Value seqiter_iter(VM *vm, Value self) {
    (void)vm;
    return self;
}

static void seqiter_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((SeqIter *)o)->seq);
}

/* =================================================================== super */

/* Zero-argument super(): the calling function's __class__ cell and first
** argument (the compiler must give methods using super a free variable
** named __class__). */
static void super_from_frame(VM *vm, Value *tv, Value *obj) {
    if (vm->nframes <= 0) vm_raise_kind(vm, RuntimeError, "super(): no arguments");
    Frame *f = &vm->frames[vm->nframes - 1];
    Proto *p = f->fn ? f->fn->proto : NULL;
    if (!p || (p->nparams == 0 && !(p->flags & PROTO_VARARGS)) || !f->base)
        vm_raise_kind(vm, RuntimeError, "super(): no arguments");
    Value first = f->base[0];
    for (int32_t i = 0; i < p->ncells; i++) {
        if (p->cell_regs && p->cell_regs[i] == 0 && IS_OBJ(first) && AS_OBJ(first)->type == vm->t_cell) {
            first = ((Cell *)AS_OBJ(first))->value;
            break;
        }
    }
    if (IS_EMPTY(first)) vm_raise_kind(vm, RuntimeError, "super(): arg[0] deleted");
    for (int32_t i = 0; i < p->nfree && i < f->fn->nfree; i++) {
        if (p->freenames && p->freenames[i] && strcmp(p->freenames[i]->chars, "__class__") == 0) {
            Cell *c = f->fn->free[i];
            if (!c || IS_EMPTY(c->value)) vm_raise_kind(vm, RuntimeError, "super(): empty __class__ cell");
            if (!is_type(vm, c->value))
                vm_raise_kind(vm, RuntimeError, "super(): __class__ is not a type (%s)", vm_type_name(vm, c->value));
            *tv = c->value;
            *obj = first;
            return;
        }
    }
    vm_raise_kind(vm, RuntimeError, "super(): __class__ cell not found");
}

static Value super_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    arg_no_kwargs(vm, "super", kwargs);
    Value tv, obj;
    if (argc == 0) {
        super_from_frame(vm, &tv, &obj);
    } else if (argc == 2) {
        tv = argv[0];
        obj = argv[1];
    } else {
        vm_raise_kind(vm, TypeError, "super() takes 0 or 2 arguments in gpy (%d given)", argc);
    }
    if (!is_type(vm, tv))
        vm_raise_kind(vm, TypeError, "super() argument 1 must be a type, not %s", vm_type_name(vm, tv));
    Type *T = (Type *)AS_OBJ(tv);
    Type *selftype;
    if (is_type(vm, obj) && type_is_subtype((Type *)AS_OBJ(obj), T))
        selftype = (Type *)AS_OBJ(obj);
    else if (vm_isinstance(vm, obj, T))
        selftype = vm_typeof(vm, obj);
    else
        vm_raise_kind(vm, TypeError, "super(type, obj): obj must be an instance or subtype of type");
    Super *s = gc_alloc_obj(vm, vm->t_super, sizeof(Super));
    s->thisclass = T;
    s->self = obj;
    s->selftype = selftype;
    return OBJ_VAL(s);
}

static Value super_getattr(VM *vm, Value self, Str *name) {
    Super *s = (Super *)AS_OBJ(self);
    bool class_level = is_type(vm, s->self) && (Type *)AS_OBJ(s->self) == s->selftype;
    if (!class_name_is(name, vm->sym_class, "__class__")) {
        /* the classes after thisclass on the MRO of type(self) */
        MroIter it = mro_iter(s->selftype);
        for (Type *t; (t = mro_next(&it)) && t != s->thisclass;) {
        }
        for (Type *t; (t = mro_next(&it));) {
            if (!t->dict) continue;
            Value v = dict_get_str(vm, t->dict, name);
            if (IS_EMPTY(v) && !(t->flags & TYPE_HEAP)) v = class_slot_wrapper(vm, t, name);
            if (IS_EMPTY(v)) continue;
            if (!IS_OBJ(v)) return v;
            Type *at = AS_OBJ(v)->type;
            if (at == vm->t_function) return class_level ? v : bound_method_new(vm, s->self, v);
            if (is_method_native(vm, v)) return class_level ? v : bound_method_new(vm, class_native_self(vm, v, s->self), v);
            if (at == vm->t_staticmethod) return ((Wrapper *)AS_OBJ(v))->func;
            if (at == vm->t_classmethod) return bound_method_new(vm, OBJ_VAL(s->selftype), ((Wrapper *)AS_OBJ(v))->func);
            if (at == vm->t_property) return class_level ? v : data_descr_get(vm, v, s->self, s->selftype, name);
            Value get = user_descr_get(vm, v);
            if (!IS_EMPTY(get)) {
                Value gargs[2] = {class_level ? NONE_VAL : s->self, OBJ_VAL(s->selftype)};
                return class_call_meth(vm, get, v, 2, gargs, NULL);
            }
            return v;
        }
    }
    if (strcmp(name->chars, "__thisclass__") == 0) return OBJ_VAL(s->thisclass);
    if (strcmp(name->chars, "__self__") == 0) return s->self;
    if (strcmp(name->chars, "__self_class__") == 0) return OBJ_VAL(s->selftype);
    return generic_getattr(vm, self, name);
}

static Value super_repr(VM *vm, Value self) {
    Super *s = (Super *)AS_OBJ(self);
    return STR_VAL(str_printf(vm, "<super: <class '%s'>, <%s object>>", class_type_name(s->thisclass),
                              class_type_name(s->selftype)));
}

static void super_mark(VM *vm, Obj *o) {
    Super *s = (Super *)o;
    gc_mark_obj(vm, (Obj *)s->thisclass);
    gc_mark_value(vm, s->self);
    gc_mark_obj(vm, (Obj *)s->selftype);
}

/* ======================================= property, staticmethod, classmethod */

static void wrapper_mark(VM *vm, Obj *o) {
    Wrapper *w = (Wrapper *)o;
    gc_mark_value(vm, w->func);
    gc_mark_value(vm, w->fset);
    gc_mark_value(vm, w->fdel);
}

static Value property_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"fget", "fset", "fdel", "doc"};
    Value f[4] = {NONE_VAL, NONE_VAL, NONE_VAL, NONE_VAL};
    if (argc > 4) vm_raise_kind(vm, TypeError, "property() takes at most 4 arguments (%d given)", argc);
    for (int i = 0; i < argc; i++) f[i] = argv[i];
    if (kwargs && kwargs->count > 0) {
        for (int i = 0; i < 4; i++) {
            Value v = kwarg_take(vm, kwargs, names[i]);
            if (IS_EMPTY(v)) continue;
            if (i < argc)
                vm_raise_kind(vm, TypeError, "argument for property() given by name ('%s') and position (%d)",
                              names[i], i + 1);
            f[i] = v;
        }
        kwargs_check_empty(vm, "property", kwargs);
    }
    Wrapper *w = gc_alloc_obj(vm, cls ? cls : vm->t_property, sizeof(Wrapper));
    w->func = f[0];
    w->fset = f[1];
    w->fdel = f[2];
    return OBJ_VAL(w);
}

static Value property_copy(VM *vm, Value self, int which, Value fn) {
    Wrapper *p = (Wrapper *)AS_OBJ(self);
    Wrapper *w = gc_alloc_obj(vm, vm->t_property, sizeof(Wrapper));
    w->func = which == 0 ? fn : p->func;
    w->fset = which == 1 ? fn : p->fset;
    w->fdel = which == 2 ? fn : p->fdel;
    return OBJ_VAL(w);
}

static Value property_m_getter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "getter", kwargs);
    arg_count(vm, "getter", argc, 2, 2);
    return property_copy(vm, argv[0], 0, argv[1]);
}

static Value property_m_setter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "setter", kwargs);
    arg_count(vm, "setter", argc, 2, 2);
    return property_copy(vm, argv[0], 1, argv[1]);
}

static Value property_m_deleter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "deleter", kwargs);
    arg_count(vm, "deleter", argc, 2, 2);
    return property_copy(vm, argv[0], 2, argv[1]);
}

static Value property_getattr(VM *vm, Value self, Str *name) {
    Wrapper *p = (Wrapper *)AS_OBJ(self);
    if (strcmp(name->chars, "fget") == 0) return p->func;
    if (strcmp(name->chars, "fset") == 0) return p->fset;
    if (strcmp(name->chars, "fdel") == 0) return p->fdel;
    if (class_name_is(name, vm->sym_doc, "__doc__")) {
        if (IS_OBJ(p->func)) {
            Value d = vm_getattr_opt(vm, p->func, name);
            if (!IS_EMPTY(d)) return d;
        }
        return NONE_VAL;
    }
    return generic_getattr(vm, self, name);
}

static Value funcwrap_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    const char *n = class_type_name(cls);
    arg_no_kwargs(vm, n, kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "%s expected 1 argument, got %d", n, argc);
    Wrapper *w = gc_alloc_obj(vm, cls, sizeof(Wrapper));
    w->func = argv[0];
    w->fset = w->fdel = NONE_VAL;
    return OBJ_VAL(w);
}

static Value funcwrap_getattr(VM *vm, Value self, Str *name) {
    Wrapper *w = (Wrapper *)AS_OBJ(self);
    if (strcmp(name->chars, "__func__") == 0 || strcmp(name->chars, "__wrapped__") == 0) return w->func;
    if (class_name_is(name, vm->sym_name, "__name__") || class_name_is(name, vm->sym_qualname, "__qualname__") ||
        class_name_is(name, vm->sym_doc, "__doc__")) {
        Value v = vm_getattr_opt(vm, w->func, name);
        if (!IS_EMPTY(v)) return v;
    }
    return generic_getattr(vm, self, name);
}

static Value funcwrap_repr(VM *vm, Value self) {
    Wrapper *w = (Wrapper *)AS_OBJ(self);
    Str *inner = vm_repr(vm, w->func);
    return STR_VAL(str_printf(vm, "<%s(%s)>", vm_type_name(vm, self), inner->chars));
}

/* staticmethod objects are callable (Python 3.10+). */
static Value staticmethod_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    return class_call_prepend(vm, ((Wrapper *)AS_OBJ(self))->func, EMPTY_VAL, argc, argv, kwargs);
}

/* ==================================================================== init */

void class_init(VM *vm) {
    class_prepare_core(vm, vm->t_object, "object", NULL);
    class_prepare_core(vm, vm->t_type, "type", vm->t_object);
    class_prepare_core(vm, vm->t_super, "super", vm->t_object);
    class_prepare_core(vm, vm->t_property, "property", vm->t_object);
    class_prepare_core(vm, vm->t_staticmethod, "staticmethod", vm->t_object);
    class_prepare_core(vm, vm->t_classmethod, "classmethod", vm->t_object);
    /* every other core type gets a fresh nonzero version too */
#define CORE_VERSION(n)                                                                     \
    if (vm->t_##n && vm->t_##n->version == 0) vm->t_##n->version = class_next_version(vm);
    CORE_TYPES(CORE_VERSION)
#undef CORE_VERSION

    /* the arithmetic dunder names, if vm.c did not intern them already */
    static const char *const bn[BINOP__COUNT] = {"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod",
                                                 "pow", "lshift", "rshift", "and", "or", "xor"};
    char buf[32];
    for (int i = 0; i < BINOP__COUNT; i++) {
        if (!vm->dunder_binop[i]) {
            snprintf(buf, sizeof buf, "__%s__", bn[i]);
            vm->dunder_binop[i] = str_intern(vm, buf, strlen(buf));
        }
        if (!vm->dunder_rbinop[i]) {
            snprintf(buf, sizeof buf, "__r%s__", bn[i]);
            vm->dunder_rbinop[i] = str_intern(vm, buf, strlen(buf));
        }
        if (!vm->dunder_ibinop[i]) {
            snprintf(buf, sizeof buf, "__i%s__", bn[i]);
            vm->dunder_ibinop[i] = str_intern(vm, buf, strlen(buf));
        }
    }

    Type *o = vm->t_object;
    o->flags |= TYPE_BASETYPE;
    o->new_ = object_new_slot;
    o->repr = object_repr;
    o->str = NULL; /* str() falls back to repr, so a class defining only __repr__ prints with it */
    o->mark = instance_mark;
    type_add_method(vm, o, "__init__", object_m_init);
    type_add_method(vm, o, "__repr__", object_m_repr);
    type_add_method(vm, o, "__str__", object_m_str);
    type_add_method(vm, o, "__hash__", object_m_hash);
    type_add_method(vm, o, "__eq__", object_m_eq);
    type_add_method(vm, o, "__ne__", object_m_ne);
    type_add_method(vm, o, "__lt__", object_m_notimpl);
    type_add_method(vm, o, "__le__", object_m_notimpl);
    type_add_method(vm, o, "__gt__", object_m_notimpl);
    type_add_method(vm, o, "__ge__", object_m_notimpl);
    type_add_method(vm, o, "__setattr__", object_m_setattr);
    type_add_method(vm, o, "__delattr__", object_m_delattr);
    type_add_method(vm, o, "__getattribute__", object_m_getattribute);
    type_add_method(vm, o, "__format__", object_m_format);
    add_wrapped_native(vm, o, vm->t_staticmethod, "__new__", object_m_new);
    add_wrapped_native(vm, o, vm->t_classmethod, "__init_subclass__", object_m_init_subclass);

    Type *t = vm->t_type;
    t->flags |= TYPE_BASETYPE;
    t->new_ = type_new;
    t->call = type_call;
    t->repr = type_repr;
    t->getattr = type_getattr;
    t->setattr = type_setattr;
    t->mark = class_type_mark; /* gc.c traces name, base and dict of exact types; this all of a type's fields */
    type_add_method(vm, t, "mro", type_m_mro);
    type_add_method(vm, t, "__subclasses__", type_m_subclasses);

    Type *s = vm->t_super;
    s->new_ = super_new;
    s->getattr = super_getattr;
    s->repr = super_repr;
    s->mark = super_mark;

    Type *p = vm->t_property;
    p->new_ = property_new;
    p->getattr = property_getattr;
    p->mark = wrapper_mark;
    type_add_method(vm, p, "getter", property_m_getter);
    type_add_method(vm, p, "setter", property_m_setter);
    type_add_method(vm, p, "deleter", property_m_deleter);

    Type *sm = vm->t_staticmethod;
    sm->new_ = funcwrap_new;
    sm->getattr = funcwrap_getattr;
    sm->repr = funcwrap_repr;
    sm->call = staticmethod_call;
    sm->mark = wrapper_mark;

    Type *cm = vm->t_classmethod;
    cm->new_ = funcwrap_new;
    cm->getattr = funcwrap_getattr;
    cm->repr = funcwrap_repr;
    cm->mark = wrapper_mark;

    class_meta_init(vm);
    Type *mutables[] = {vm->t_list, vm->t_dict, vm->t_set};
    Type *immutables[] = {vm->t_str, vm->t_int, vm->t_float, vm->t_tuple, vm->t_frozenset};
    for (size_t i = 0; i < 3; i++) class_allow_subclass(vm, mutables[i], true);
    for (size_t i = 0; i < 5; i++) class_allow_subclass(vm, immutables[i], false);
    class_numeric_dunders(vm);

    Type *it = type_new_builtin(vm, "iterator", vm->t_object, 0);
    it->iter = seqiter_iter;
    it->next = seqiter_next;
    it->mark = seqiter_mark;
}
