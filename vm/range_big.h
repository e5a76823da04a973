/*
** range_big.h — ranges with bounds past 64 bits (range_big.c), used by
** range.c. A Range with r->big set is one of them.
*/
#ifndef GPY_RANGE_BIG_H
#define GPY_RANGE_BIG_H

#include "vm.h"

/* range(start, stop, step) of int values: int64 fields when all fit */
Value range_make(VM *vm, Value start, Value stop, Value step);
/* an int value from int/bool/__index__; errfmt takes the type name (NULL: a slice index) */
Value range_int_arg(VM *vm, Value v, const char *errfmt);
void range_values(Range *r, Value out[3]);
Value range_length(VM *vm, Range *r); /* an int value, any size */
Value range_big_item(VM *vm, Range *r, Value key);
Value range_big_slice(VM *vm, Range *r, Slice *s);
bool range_big_contains(VM *vm, Range *r, Value x);
Value range_big_index(VM *vm, Range *r, Value x, bool count);
Value range_big_repr(VM *vm, Range *r);
bool range_equal(VM *vm, Range *x, Range *y);
int64_t range_big_hash(VM *vm, Range *r);
Value range_big_iter(VM *vm, Range *r, bool reversed);
void range_big_init(VM *vm);

#endif
