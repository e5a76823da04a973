/*
** infer_builtins.h — the names kernels may use from cuda, math, numpy,
** numba and the builtins, as dotted paths ("cuda.threadIdx.x", "math.sqrt",
** "range"), with what each denotes. Private to jit/.
*/
#ifndef GPY_INFER_BUILTINS_H
#define GPY_INFER_BUILTINS_H

#include "jit.h"

typedef enum JitPathKind {
    JP_NAMESPACE, /* a module or namespace: attributes resolve below it */
    JP_SREG,      /* an int32 value read from a special register (cuda.threadIdx.x) */
    JP_CALL,      /* a function: calls get `builtin` */
    JP_CONST,     /* a float constant (math.pi) */
    JP_DTYPE,     /* a scalar type (numpy.float32, numba.int32) */
} JitPathKind;

typedef struct JitPath {
    const char *path;
    JitPathKind kind;
    JBuiltin builtin; /* JP_SREG, JP_CALL */
    int8_t minargs, maxargs; /* JP_CALL: positional argument counts */
    double value;     /* JP_CONST */
    NDType dtype;     /* JP_DTYPE */
} JitPath;

/* The entry for an exact, normalized path; NULL when unknown. */
const JitPath *jit_path_lookup(const char *path);
/* Normalizes a module name or dotted path: "numba.cuda..." → "cuda...";
** writes into buf. */
const char *jit_path_normalize(const char *path, char *buf, size_t size);

#endif
