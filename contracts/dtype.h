/*
** dtype.h — the one table of element types (contracts/: the bottom layer).
**
** Every layer that names an element type — the numpy module, the numba/cuda
** binding, the kernel compiler's signatures and dtype arguments, the embedding
** API's GpyDtype — reads its numbering, sizes and spellings from here, so a
** name means one thing everywhere. This header includes nothing of gpy.
**
** Spellings follow the libraries gpy stands in for, which disagree in places:
**   numpy 2 strings  np.dtype('f4'), np.zeros(3, 'int'), dtype='float'
**   numpy 2 attrs    np.float32, np.intc, np.double (scalar types)
**   numba names      numba.float32, cuda.jit('void(float32[:])'), vectorize
** e.g. 'byte' is int8 to numpy and uint8 to numba; 'float_' (float64 in
** numpy 1, float32 in old numba) is gone from both and gpy refuses it too.
*/
#ifndef GPY_CONTRACTS_DTYPE_H
#define GPY_CONTRACTS_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Element types, in numpy's order of kind (indices into tables). The order
** is also GpyDtype's in include/gpy.h (GPY_FLOAT32 == ND_FLOAT32) and the
** kernel compiler's scalar kinds (JK_FLOAT32 == ND_FLOAT32). */
typedef enum NDType {
    ND_BOOL,
    ND_INT8, ND_INT16, ND_INT32, ND_INT64,
    ND_UINT8, ND_UINT16, ND_UINT32, ND_UINT64,
    ND_FLOAT16, ND_FLOAT32, ND_FLOAT64,
    ND_COMPLEX64, ND_COMPLEX128, /* two float32 / float64: real, imaginary */
    ND__COUNT
} NDType;

/* Most dimensions of an array (numpy's NPY_MAXDIMS; GPY_MAX_DIMS). */
#define ND_MAXDIM 32

/* Bytes per element; 0 for a value that is not a dtype. */
size_t dtype_itemsize(NDType dt);
/* The canonical name, numpy's and numba's alike: "bool", "int8", ...,
** "float64"; "?" for a value that is not a dtype. */
const char *dtype_name(NDType dt);
/* numpy's one-character code (dtype.char): '?', 'b', 'h', 'i', 'l', ... */
char dtype_char(NDType dt);

/* One spelling and what it means in each namespace (-1: not a name there). */
typedef struct DTypeAlias {
    const char *name;
    int8_t numpy;   /* np.dtype(name) */
    int8_t numba;   /* numba.<name>, and the name inside signature strings */
    bool np_attr;   /* numpy has the scalar type as np.<name> */
} DTypeAlias;

/* The whole table (canonical names first, in NDType order); *n gets its length. */
const DTypeAlias *dtype_aliases(size_t *n);
/* np.dtype(s) for a string: canonical names, aliases, one-letter codes and
** an optional byte-order mark ('<f4', '=i8', '|b1'). -1 when numpy refuses s. */
int dtype_from_numpy_str(const char *s);
/* The numba type named by the n bytes at s ("float32", "intc", "byte"),
** or -1. (Signature strings also know "void"/"none": not dtypes.) */
int dtype_from_numba_name(const char *s, size_t n);
/* The scalar type np.<s> names, or -1. */
int dtype_from_numpy_attr(const char *s);

#endif
