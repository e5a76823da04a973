/*
** bigint.h — Python ints that do not fit in int64. Small ints stay unboxed
** in Value (VAL_INT); an operation whose result does not fit promotes to a
** BigInt object, whose type is int itself, and every result that fits again
** demotes to VAL_INT. So a BigInt never holds a value that fits in int64.
** The limbs live inside the GC object (counted by gpy's allocator); GMP's
** mpz/mpn functions do the arithmetic on read-only views of them.
*/
#ifndef GPY_BIGINT_H
#define GPY_BIGINT_H

#include "vm.h"

typedef struct BigInt {
    Obj obj;
    int64_t size;       /* number of limbs, negative for a negative value */
    uint64_t limbs[];   /* magnitude, least significant limb first */
} BigInt;

/* Is v a boxed (big) int? Its type is int, like the unboxed ones. */
static inline bool bigint_is(VM *vm, Value v) { return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_int; }
/* An int of either kind, or a bool. */
static inline bool bigint_is_anyint(VM *vm, Value v) { return IS_INTLIKE(v) || bigint_is(vm, v); }
/* A number of any kind: int (small or big), bool or float. */
static inline bool bigint_is_numeric(VM *vm, Value v) { return IS_NUMBER(v) || bigint_is(vm, v); }

/* Binary operator on two numbers where the int64 path cannot answer (an
** operand is big, or the int64 result overflowed). EMPTY for undefined pairs. */
Value bigint_binop(VM *vm, BinOp op, Value a, Value b);
/* a ** b (b >= 0 int, or the float cases) and pow(a, b, m). */
Value bigint_pow(VM *vm, Value a, Value b);
Value bigint_powmod(VM *vm, Value a, Value b, Value m);
/* Three-way comparison of numbers, at least one of them big; 2 = unordered (NaN). */
int bigint_cmp(VM *vm, Value a, Value b);
Value bigint_unop(VM *vm, UnOp op, Value a);
int64_t bigint_hash(VM *vm, Value v);
int bigint_sign(VM *vm, Value v);

/* Conversions. bigint_to_double raises OverflowError "int too large to
** convert to float"; int_from_double accepts any finite double. */
double bigint_to_double(VM *vm, Value v);
Value bigint_from_double(VM *vm, double d);
Value bigint_from_u64(VM *vm, uint64_t u, bool neg);
/* v as int64 (small or big int); false when it does not fit. */
bool bigint_to_int64(VM *vm, Value v, int64_t *out);

/* Digits of |v| in base 2..36 (lower case unless upper), malloc'd, NUL-
** terminated, length in *len; base 10 honours sys.set_int_max_str_digits. */
char *bigint_digits(VM *vm, Value v, int base, bool upper, size_t *len);
Str *bigint_to_str(VM *vm, Value v);
/* format(v, spec) of a big int (vm/format.c). */
Str *format_bigint_spec(VM *vm, Value v, Str *spec);
/* digits: valid digits of base and single '_' (already checked), no sign;
** raises CPython's ValueError past sys.get_int_max_str_digits(). */
Value bigint_from_digits(VM *vm, const char *digits, size_t n, int base, bool neg);

int64_t bigint_bit_length(VM *vm, Value v);
int64_t bigint_bit_count(VM *vm, Value v);

/* Exact integer functions for the math module (any ints). */
Value bigint_gcd(VM *vm, Value a, Value b);
Value bigint_isqrt(VM *vm, Value n);          /* n >= 0 */
Value bigint_factorial(VM *vm, uint64_t n);
Value bigint_comb(VM *vm, Value n, Value k);  /* n, k >= 0 */
Value bigint_perm(VM *vm, Value n, Value k);  /* n, k >= 0 */
/* v = x * 2**e with 0.5 <= |x| < 1, x correctly rounded (like frexp). */
double bigint_frexp(VM *vm, Value v, int64_t *e);

/* For int.from_bytes / int.to_bytes: two's complement when is_signed.
** bigint_to_bytes returns false when v does not fit in n bytes. */
Value bigint_from_bytes(VM *vm, const uint8_t *buf, size_t n, bool little_endian, bool is_signed);
bool bigint_to_bytes(VM *vm, Value v, uint8_t *out, size_t n, bool little_endian, bool is_signed);

/* sys.get_int_max_str_digits / set: 0 = no limit; default 4300. */
#define BIGINT_DEFAULT_MAX_STR_DIGITS 4300
int64_t bigint_max_str_digits(VM *vm);
void bigint_set_max_str_digits(VM *vm, int64_t n);

#endif
