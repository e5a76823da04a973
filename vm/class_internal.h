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

#endif
