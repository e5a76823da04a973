/*
** dtype.c — the element-type table: sizes, names and every spelling numpy 2
** and numba accept, with what each means to each (checked against numpy 2.4
** and numba 0.68 by tests/cli/dtype_aliases.sh).
*/
#include <string.h>

#include "dtype.h"

static const uint8_t itemsizes[ND__COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};
static const char chars[ND__COUNT] = {'?', 'b', 'h', 'i', 'l', 'B', 'H', 'I', 'L', 'e', 'f', 'd', 'F', 'D'};

#define B ND_BOOL
#define I8 ND_INT8
#define I16 ND_INT16
#define I32 ND_INT32
#define I64 ND_INT64
#define U8 ND_UINT8
#define U16 ND_UINT16
#define U32 ND_UINT32
#define U64 ND_UINT64
#define F16 ND_FLOAT16
#define F32 ND_FLOAT32
#define F64 ND_FLOAT64
#define C64 ND_COMPLEX64
#define C128 ND_COMPLEX128
#define NO (-1)

/* name, np.dtype(name), numba's name, np.<name> exists */
static const DTypeAlias aliases[] = {
    /* canonical names first, in NDType order (dtype_name reads them) */
    {"bool", B, B, true},          {"int8", I8, I8, true},         {"int16", I16, I16, true},
    {"int32", I32, I32, true},     {"int64", I64, I64, true},      {"uint8", U8, U8, true},
    {"uint16", U16, U16, true},    {"uint32", U32, U32, true},     {"uint64", U64, U64, true},
    {"float16", F16, F16, true},   {"float32", F32, F32, true},    {"float64", F64, F64, true},
    {"complex64", C64, C64, true}, {"complex128", C128, C128, true},
    /* bool */
    {"bool_", B, B, true},         {"b1", B, B, false},            {"?", B, NO, false},
    {"boolean", NO, B, false},
    /* signed */
    {"i1", I8, I8, false},         {"b", I8, NO, false},           {"char", NO, I8, false},
    {"byte", I8, U8, true}, /* numba's byte is unsigned */
    {"i2", I16, I16, false},       {"h", I16, NO, false},          {"short", I16, I16, true},
    {"i4", I32, I32, false},       {"i", I32, NO, false},          {"intc", I32, I32, true},
    {"i8", I64, I64, false},       {"l", I64, NO, false},          {"q", I64, NO, false},
    {"p", I64, NO, false},         {"int", I64, NO, false},        {"intp", I64, I64, true},
    {"int_", I64, I64, true},      {"long", I64, NO, true},        {"long_", NO, I64, false},
    {"longlong", I64, I64, true},
    /* unsigned */
    {"u1", U8, U8, false},         {"B", U8, NO, false},           {"ubyte", U8, NO, true},
    {"uchar", NO, U8, false},
    {"u2", U16, U16, false},       {"H", U16, NO, false},          {"ushort", U16, U16, true},
    {"u4", U32, U32, false},       {"I", U32, NO, false},          {"uintc", U32, U32, true},
    {"u8", U64, U64, false},       {"L", U64, NO, false},          {"Q", U64, NO, false},
    {"P", U64, NO, false},         {"uint", U64, U64, true},       {"uintp", U64, U64, true},
    {"ulong", U64, U64, true},     {"ulonglong", U64, U64, true},
    /* float */
    {"f2", F16, F16, false},       {"e", F16, NO, false},          {"half", F16, NO, true},
    {"f4", F32, F32, false},       {"f", F32, NO, false},          {"single", F32, NO, true},
    {"f8", F64, F64, false},       {"d", F64, NO, false},          {"float", F64, NO, false},
    {"double", F64, F64, true},
    /* complex */
    {"c8", C64, C64, false},       {"F", C64, NO, false},          {"csingle", C64, NO, true},
    {"c16", C128, C128, false},    {"D", C128, NO, false},         {"complex", C128, NO, false},
    {"cdouble", C128, NO, true},
};
#define NALIASES (sizeof aliases / sizeof aliases[0])

size_t dtype_itemsize(NDType dt) { return (unsigned)dt < ND__COUNT ? itemsizes[dt] : 0; }
const char *dtype_name(NDType dt) { return (unsigned)dt < ND__COUNT ? aliases[dt].name : "?"; }
char dtype_char(NDType dt) { return (unsigned)dt < ND__COUNT ? chars[dt] : '?'; }

const DTypeAlias *dtype_aliases(size_t *n) {
    *n = NALIASES;
    return aliases;
}

int dtype_from_numpy_str(const char *s) {
    if (*s == '<' || *s == '=' || *s == '|') s++;
    for (size_t i = 0; i < NALIASES; i++)
        if (aliases[i].numpy >= 0 && strcmp(aliases[i].name, s) == 0) return aliases[i].numpy;
    return -1;
}

int dtype_from_numba_name(const char *s, size_t n) {
    for (size_t i = 0; i < NALIASES; i++)
        if (aliases[i].numba >= 0 && strlen(aliases[i].name) == n && memcmp(aliases[i].name, s, n) == 0)
            return aliases[i].numba;
    return -1;
}

int dtype_from_numpy_attr(const char *s) {
    for (size_t i = 0; i < NALIASES; i++)
        if (aliases[i].np_attr && strcmp(aliases[i].name, s) == 0) return aliases[i].numpy;
    return -1;
}
