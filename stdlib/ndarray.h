/*
** ndarray.h — C API of gpy's numpy-compatible array object (stdlib/numpy.c).
** Arrays are 1-D here (ndim kept for growth); data is owned by the array
** unless base is set (a view keeps its owner alive through base).
*/
#ifndef GPY_NDARRAY_H
#define GPY_NDARRAY_H

#include "vm.h"

typedef enum NDType { ND_BOOL, ND_INT64, ND_FLOAT32, ND_FLOAT64 } NDType;

#define ND_MAXDIM 8
typedef struct NDArray {
    Obj obj;
    NDType dtype;
    int ndim;
    int64_t shape[ND_MAXDIM];
    int64_t strides[ND_MAXDIM]; /* bytes */
    char *data;
    size_t nbytes_owned; /* 0 for views and external memory */
    Value base;          /* owner of data for views; NONE otherwise */
} NDArray;

/* True when v is an ndarray. */
bool ndarray_check(VM *vm, Value v);
/* A new contiguous 1-D array of n zeroed elements. */
NDArray *ndarray_new(VM *vm, NDType dt, int64_t n);
/* Wraps external memory (not copied, not freed); base keeps its owner alive. */
NDArray *ndarray_wrap(VM *vm, NDType dt, void *data, int64_t n, Value base);
size_t ndarray_itemsize(NDType dt);

#endif
