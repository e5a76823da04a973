/*
** value.h — the 16-byte tagged value every register, constant and
** container slot holds. Ints, floats, bools and None never allocate.
*/
#ifndef GPY_VALUE_H
#define GPY_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Obj Obj;

typedef enum ValueTag {
    VAL_EMPTY = 0, /* no value: an unbound local, an unused dict slot, "missing" */
    VAL_NONE,
    VAL_BOOL,
    VAL_INT,
    VAL_FLOAT,
    VAL_OBJ
} ValueTag;

typedef struct Value {
    uint32_t tag;
    uint32_t aux; /* free for users of a Value (e.g. cache hints); 0 by default */
    union {
        bool b;
        int64_t i;
        double f;
        Obj *obj;
    } as;
} Value;

#define EMPTY_VAL ((Value){.tag = VAL_EMPTY, .aux = 0, .as = {.i = 0}})
#define NONE_VAL ((Value){.tag = VAL_NONE, .aux = 0, .as = {.i = 0}})
#define BOOL_VAL(x) ((Value){.tag = VAL_BOOL, .aux = 0, .as = {.b = (x) ? true : false}})
#define INT_VAL(x) ((Value){.tag = VAL_INT, .aux = 0, .as = {.i = (int64_t)(x)}})
#define FLOAT_VAL(x) ((Value){.tag = VAL_FLOAT, .aux = 0, .as = {.f = (double)(x)}})
#define OBJ_VAL(p) ((Value){.tag = VAL_OBJ, .aux = 0, .as = {.obj = (Obj *)(p)}})

#define IS_EMPTY(v) ((v).tag == VAL_EMPTY)
#define IS_NONE(v) ((v).tag == VAL_NONE)
#define IS_BOOL(v) ((v).tag == VAL_BOOL)
#define IS_INT(v) ((v).tag == VAL_INT)
#define IS_FLOAT(v) ((v).tag == VAL_FLOAT)
#define IS_OBJ(v) ((v).tag == VAL_OBJ)
/* bool is a subclass of int in Python: arithmetic treats True as 1 */
#define IS_INTLIKE(v) ((v).tag == VAL_INT || (v).tag == VAL_BOOL)
#define IS_NUMBER(v) ((v).tag == VAL_INT || (v).tag == VAL_FLOAT || (v).tag == VAL_BOOL)

#define AS_BOOL(v) ((v).as.b)
#define AS_INT(v) ((v).as.i)
#define AS_FLOAT(v) ((v).as.f)
#define AS_OBJ(v) ((v).as.obj)
/* int value of an int or a bool */
#define AS_INTLIKE(v) ((v).tag == VAL_INT ? (v).as.i : (int64_t)(v).as.b)
/* numeric value of an int, bool or float as a double */
#define AS_NUMBER(v) ((v).tag == VAL_FLOAT ? (v).as.f : (double)AS_INTLIKE(v))

#endif
