/*
** str_private.h — shared between str.c and format.c only.
*/
#ifndef GPY_STR_PRIVATE_H
#define GPY_STR_PRIVATE_H

#include "vm.h"

/* str methods implemented in format.c, registered by str_init. */
Value str_m_format(VM *vm, int argc, Value *argv, Dict *kwargs);
Value str_m_format_map(VM *vm, int argc, Value *argv, Dict *kwargs);
Value str_m_dunder_format(VM *vm, int argc, Value *argv, Dict *kwargs);

#endif
