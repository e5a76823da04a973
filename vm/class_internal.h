/*
** class_internal.h — object-model internals shared by ops.c, class.c and
** function.c only (not part of the VM-wide API in vm.h).
**
** User classes ("heap types") get C slots that call their dunder methods.
** A heap type's "ancestor" is the nearest builtin type in its base chain
** (object, or an exception type); its instance layout and its default
** behaviour come from there.
*/
#ifndef GPY_CLASS_INTERNAL_H
#define GPY_CLASS_INTERNAL_H

#include "vm.h"

/* Private Type.flags bits (object.h's TypeFlags use the low bits). */
#define TYPEF_HAS_SUBCLASSES (1u << 8) /* some class names this one as its base */
#define TYPEF_DATADESC (1u << 9)       /* the class chain holds a property or data descriptor */
#define TYPEF_BOXED (1u << 10)         /* a heap subclass of list/int/...: instances are BoxedInstance */
#define TYPEF_SLOTS (1u << 11)         /* __slots__ without __dict__: only the named attributes */
#define TYPEF_METATYPE (1u << 12)      /* a heap subclass of type: its instances are classes */
#define TYPEF_GETATTRIBUTE (1u << 13)  /* the class defines __getattribute__ */

/* Instances of a heap subclass of a builtin type that opted in with
** class_allow_subclass: the instance dict (Instance layout) and the
** builtin value they stand for (a List, an int, a Str ...). */
typedef struct BoxedInstance {
    Obj obj;
    Dict *dict;
    Value value;
} BoxedInstance;

/* Name of a type as a C string (never NULL). */
const char *class_type_name(Type *t);
/* The nearest non-heap type in t's base chain (t itself if builtin). */
Type *class_ancestor(Type *t);
/* Looks name up in the dicts of the heap classes of t's chain only (stops
** at the first builtin type): "does the user class define/override it". */
Value class_heap_lookup(VM *vm, Type *t, Str *name);
/* Calls a class attribute meth, found for self, as a method: functions and
** method natives get self first; staticmethod/classmethod/__get__ handled. */
Value class_call_meth(VM *vm, Value meth, Value self, int argc, const Value *args, Dict *kwargs);
/* Calls callee(first, args...) (first omitted when EMPTY) with the
** arguments copied onto the VM stack, where the GC sees them. */
Value class_call_prepend(VM *vm, Value callee, Value first, int argc, const Value *args, Dict *kwargs);
/* The slot installed on classes defining arithmetic dunders, and its
** explicit form (right: b is the instance, try b.__radd__(a)). */
Value class_heap_binop(VM *vm, BinOp op, Value a, Value b);
Value class_heap_binop_side(VM *vm, BinOp op, Value a, Value b, bool right);
/* getattr slot of classes defining __getattr__, and the variant that turns
** an AttributeError raised by __getattr__ into EMPTY. */
Value class_heap_getattr(VM *vm, Value self, Str *name);
Value class_heap_getattr_opt(VM *vm, Value self, Str *name);
/* An iterator over obj[0], obj[1], ... until IndexError (old protocol). */
Value class_seqiter_new(VM *vm, Value seq);
/* "<__main__.C object at 0x...>" / "<list_iterator object at 0x...>" */
Str *class_default_repr(VM *vm, Value v);
/* "C.f" qualname of a type ("__qualname__" of heap classes) */
Str *class_qualname(VM *vm, Type *t);
/* Module name of a heap class (its "__module__"), or NULL for builtins. */
Str *class_module_name(VM *vm, Type *t);
/* Sets name (Python's name), base and a fresh version on a core type that
** vm.c allocated; creates its dict if missing. */
void class_prepare_core(VM *vm, Type *t, const char *name, Type *base);
/* A fresh, never-zero Type.version value. */
uint32_t class_next_version(VM *vm);
/* Identity hash of an object (pointer based, never -1). */
int64_t class_identity_hash(Value v);
/* Compares a Str with an interned symbol (may be NULL) or a C string. */
bool class_name_is(Str *name, Str *sym, const char *lit);

/* ---- class_mro.c: multiple inheritance ---- */
/* Length of t's MRO, its i-th class (NULL past the end). */
int64_t class_mro_len(Type *t);
Type *class_mro_at(Type *t, int64_t i);
/* Walks an MRO in O(1) per step: for (MroIter it = mro_iter(t); (x = mro_next(&it));) */
typedef struct MroIter {
    Type *t;
    Tuple *mro;
    int64_t i;
} MroIter;
static inline MroIter mro_iter(Type *t) {
    MroIter it = {t, t->mro, 0};
    return it;
}
static inline Type *mro_next(MroIter *it) {
    if (it->mro) return it->i < it->mro->len ? (Type *)AS_OBJ(it->mro->items[it->i++]) : NULL;
    Type *r = it->t;
    if (r) it->t = r->base;
    return r;
}
/* __mro__ and __bases__ as tuples (fresh ones for chain-only classes). */
Tuple *class_mro_tuple(VM *vm, Type *t);
Tuple *class_bases_tuple(VM *vm, Type *t);
/* Does t name base among its direct bases? */
bool class_has_base(Type *t, Type *base);
/* Sets T->base (the layout base), T->bases and T->mro from bases (C3);
** raises the CPython TypeErrors (duplicate base, lay-out conflict, no
** consistent MRO). Returns T->base. */
Type *class_setup_bases(VM *vm, Type *T, Tuple *bases);

/* ---- class_builtin_sub.c: subclasses of builtin types ---- */
/* The builtin value inside v when v is a BoxedInstance, else v. */
Value class_unbox(VM *vm, Value v);
/* Slots of a boxed class T: the ancestor's behaviour on the unboxed value. */
void class_boxed_slots(VM *vm, Type *T, Type *anc);
/* Allocates the instance of boxed class cls around value. */
Value class_box_new(VM *vm, Type *cls, Value value);
/* Fallback slots of a boxed class (its ancestor's, on unboxed values). */
Value class_boxed_compare(VM *vm, CmpOp op, Value a, Value b);
Value class_boxed_binop(VM *vm, BinOp op, Value a, Value b);
Value class_boxed_getattr(VM *vm, Value self, Str *name);
/* Creates an instance of boxed class cls (no user __new__); has_init: a
** user __init__ will run after (mutable builtins then start empty). */
Value class_boxed_construct(VM *vm, Type *cls, Type *anc, int argc, Value *argv, Dict *kwargs, bool has_init);
/* The self a builtin method native gets: the builtin value inside a boxed
** instance when the native belongs to a builtin type, else self. */
Value class_native_self(VM *vm, Value native, Value self);
/* Is anc a builtin type that heap classes may subclass with the boxed layout? */
bool class_is_boxable(VM *vm, Type *anc);

/* ---- class_slotwrap.c ---- */
/* The method form of a builtin type's operator slot (dict.__setitem__),
** made on first use and kept in t's dict; EMPTY when t has no such slot. */
Value class_slot_wrapper(VM *vm, Type *t, Str *name);
/* int/float get __int__, __float__, __abs__, __round__ (and int __index__). */
void class_numeric_dunders(VM *vm);

/* ---- class_meta.c: metaclasses ---- */
/* type.__new__(meta, name, bases, ns, **kw): the class object. */
Value class_new_meta(VM *vm, Type *meta, Str *name, Tuple *bases, Dict *ns, Dict *kwargs);
/* The most derived of meta and the bases' metaclasses (TypeError "metaclass conflict"). */
Type *class_calc_meta(VM *vm, Type *meta, Tuple *bases);
/* Installs type.__new__/__init__/__call__/__prepare__ and friends. */
void class_meta_init(VM *vm);
/* Marks a type object's fields (the mark slot of type and metaclasses). */
void class_type_mark(VM *vm, Obj *o);
/* __slots__ handling for class_new. */
void class_setup_slots(VM *vm, Type *T, Dict *d);
/* Attribute lookup through a class's __getattribute__; EMPTY when it raised
** AttributeError (so that __getattr__ may run). */
Value class_getattribute_opt(VM *vm, Value self, Str *name);
/* setattr slot of __slots__ classes (disables the interpreter's dict caches). */
void class_slots_setattr(VM *vm, Value self, Str *name, Value value);
/* Does generic_setattr allow name on an instance of slots class t? */
bool class_slots_allow(VM *vm, Type *t, Str *name);

#endif
