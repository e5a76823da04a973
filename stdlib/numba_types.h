/*
** numba_types.h — Numba's type objects (stdlib/numba_types.c) as the rest
** of stdlib/ sees them: as dtypes, as signatures, as module contents.
*/
#ifndef GPY_STDLIB_NUMBA_TYPES_H
#define GPY_STDLIB_NUMBA_TYPES_H

#include "../vm/vm.h"

/* The NDType a scalar type such as numba.float32 stands for as a dtype; -1
** for anything else (none, array types, other values). */
int numba_type_dtype(VM *vm, Value v);
/* One signature: a str, a Signature (void(float32[:])) or a non-empty
** tuple of types (the argument types alone). */
bool numba_is_signature(VM *vm, Value v);
/* The signature text jit/signature.c parses ("void(float32[:, ::1], int32)")
** for a str (itself), a Signature or a tuple of types; NULL for anything else. */
Str *numba_signature_text(VM *vm, Value v);
/* The type object named name ("float32", "none"); the name as a str for
** types without a shared object (arrays). */
Value numba_type_named(VM *vm, const char *name);
/* Puts numba's type names (float32, intp, void, ...) into m; with_classes
** adds Type, Integer, Float, Complex, Boolean, NoneType and Array. */
void numba_types_install(VM *vm, Module *m, bool with_classes);
/* numba.types (also numba.core.types). */
Module *numba_types_module(VM *vm);

#endif
