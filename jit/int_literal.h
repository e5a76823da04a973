/*
** int_literal.h — integer literals wider than int64 in kernels (AST_BIGINT,
** which the parser keeps as source text): Numba types a literal in
** [2**63, 2**64) as uint64 and refuses wider ones. Inline, because both
** inference (libgpy) and lowering (the gpy_jit module) read the value.
*/
#ifndef GPY_JIT_INT_LITERAL_H
#define GPY_JIT_INT_LITERAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../vm/bigint.h"

/* The value of an int literal's text ("0xFFFF_FFFF_FFFF_FFFF",
** "18446744073709551615", 0o and 0b forms); false when it needs more than 64 bits. */
static inline bool jit_int_literal_u64(const char *s, size_t len, uint64_t *out) {
    unsigned base = 10;
    size_t i = 0;
    if (len > 1 && s[0] == '0') {
        char k = s[1];
        base = k == 'x' || k == 'X' ? 16 : k == 'o' || k == 'O' ? 8 : k == 'b' || k == 'B' ? 2 : 10;
        if (base != 10) i = 2;
    }
    uint64_t v = 0;
    bool any = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '_') continue;
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99u;
        if (d >= base) return false;
        if (v > (UINT64_MAX - d) / base) return false; /* needs more than 64 bits */
        v = v * base + d;
        any = true;
    }
    *out = v;
    return any;
}

/* A global holding an int that did not fit in int64 (a BigInt): its value
** when it is in [2**63, 2**64), a uint64 constant in kernels as in Numba.
** (Reads the object's limbs: the gpy_jit module calls no bigint function.) */
static inline bool jit_bigint_u64(VM *vm, Value v, uint64_t *out) {
    if (!bigint_is(vm, v) || ((BigInt *)AS_OBJ(v))->size != 1) return false;
    *out = ((BigInt *)AS_OBJ(v))->limbs[0];
    return true;
}

#endif
