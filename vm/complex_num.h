/*
** complex_num.h — Python's complex number: a boxed pair of doubles (ints and
** floats stay unboxed in the Value; complex numbers are rare enough on the
** host that one small allocation each costs nothing that matters).
** The arithmetic follows CPython's (promotion of int/float to complex,
** its division and power algorithms), so results agree bit for bit.
*/
#ifndef GPY_COMPLEX_NUM_H
#define GPY_COMPLEX_NUM_H

#include "vm.h"

typedef struct Complex {
    Obj obj;
    double real, imag;
} Complex;

#define IS_COMPLEX(vm, v) (IS_OBJ(v) && AS_OBJ(v)->type == (vm)->t_complex)
#define AS_COMPLEX(v) ((Complex *)AS_OBJ(v))

/* A new complex object re + im*j. */
Value complex_value(VM *vm, double re, double im);
/* The value of an int, bool, float or complex as a complex pair; false for
** anything else (no conversion protocol is tried). */
bool complex_parts(VM *vm, Value v, double *re, double *im);
/* (ar + ai j) ** (br + bi j) with CPython's algorithm and errors. */
Value complex_pow(VM *vm, double ar, double ai, double br, double bi);
/* complex(x) for one argument: numbers, complex, __complex__, __float__,
** __index__ (TypeError otherwise); used by cmath and numpy. */
void complex_coerce(VM *vm, Value x, double *re, double *im, const char *what);
/* Parses the text complex('1+2j') accepts; false when malformed. */
bool complex_parse(const char *s, size_t len, double *re, double *im);
/* repr(complex) text into buf (at least 80 bytes); returns its length. */
int complex_repr_text(double re, double im, char *buf, size_t size);
/* format(complex, spec) (vm/format.c: it shares the float spec machinery). */
Str *format_complex_spec(VM *vm, double re, double im, Str *spec);
/* Fills the complex type's slots and methods (vm_new calls it). */
void complex_init(VM *vm);

#endif
