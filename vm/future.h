/*
** future.h — `from __future__ import ...` (future.c): which features a
** module turns on, with CPython 3.11's compile-time checks.
*/
#ifndef GPY_FUTURE_H
#define GPY_FUTURE_H

#include "ast.h"
#include "vm.h"

/* The CO_FUTURE_* bits of CPython (compile() flags use the same values). */
#define FUTURE_DIVISION 0x20000
#define FUTURE_ABSOLUTE_IMPORT 0x40000
#define FUTURE_WITH_STATEMENT 0x80000
#define FUTURE_PRINT_FUNCTION 0x100000
#define FUTURE_UNICODE_LITERALS 0x200000
#define FUTURE_BARRY_AS_BDFL 0x400000
#define FUTURE_GENERATOR_STOP 0x800000
#define FUTURE_ANNOTATIONS 0x1000000 /* PEP 563: annotations are never evaluated */

/* Checks every __future__ import of module (the features exist; they come
** first in the file, after a docstring) and returns the features turned
** on, or -1 with *err filled. */
int future_features(AstNode *module, SyntaxErr *err);

#endif
