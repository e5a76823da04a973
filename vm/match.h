/*
** match.h — the run-time half of match statements (match.c): the tests
** behind the MATCH_* instructions that the interpreter cannot do with
** ordinary operations (is this a sequence / mapping, fetch these keys,
** match this class).
*/
#ifndef GPY_MATCH_H
#define GPY_MATCH_H

#include "vm.h"

/* MATCH_SEQ: subject is a sequence of the length EXT asks for. */
bool match_sequence(VM *vm, Value subject, uint32_t ext);
/* MATCH_STAR: list(subject[before : len - after]). */
Value match_star(VM *vm, Value subject, int64_t before, int64_t after);
/* MATCH_MAP: subject is a mapping of at least minlen items. */
bool match_mapping(VM *vm, Value subject, int64_t minlen);
/* MATCH_KEYS: every key of keys is in subject; their values go to *values
** (a register: rooted), which must not be read when it returns false. */
bool match_keys(VM *vm, Value subject, Value keys, Value *values);
/* MATCH_REST: dict(subject) without keys. */
Value match_rest(VM *vm, Value subject, Value keys);
/* MATCH_CLASS: subject is an instance of cls with the attributes asked
** for; they go to *attrs (a register) in pattern order. */
bool match_class(VM *vm, Value subject, Value cls, Value kwnames, int npos, Value *attrs);

#endif
