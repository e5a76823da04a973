/*
** infer_builtins.c — the table of dotted names inference understands.
** Immutable; looked up by exact string (a hash index is not worth it: a
** kernel resolves a handful of attribute chains).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "infer_builtins.h"

#define NS(p) {p, JP_NAMESPACE, JB_NONE, 0, 0, 0, 0}
#define SREG(p, b) {p, JP_SREG, b, 0, 0, 0, 0}
#define CALL(p, b, lo, hi) {p, JP_CALL, b, lo, hi, 0, 0}
#define CONST(p, v) {p, JP_CONST, JB_CONST, 0, 0, v, 0}
#define DT(p, d) {p, JP_DTYPE, JB_NONE, 0, 0, 0, d}

static const JitPath paths[] = {
    NS("cuda"), NS("cuda.threadIdx"), NS("cuda.blockIdx"), NS("cuda.blockDim"), NS("cuda.gridDim"),
    NS("cuda.shared"), NS("cuda.local"), NS("cuda.atomic"), NS("cuda.const"), NS("math"), NS("numpy"), NS("numba"),
    NS("cmath"), CALL("cmath.exp", JB_CMATH_EXP, 1, 1), CALL("cmath.log", JB_CMATH_LOG, 1, 1),
    CALL("cmath.sqrt", JB_CMATH_SQRT, 1, 1), CALL("cmath.phase", JB_CMATH_PHASE, 1, 1),
    SREG("cuda.threadIdx.x", JB_THREADIDX_X), SREG("cuda.threadIdx.y", JB_THREADIDX_Y),
    SREG("cuda.threadIdx.z", JB_THREADIDX_Z), SREG("cuda.blockIdx.x", JB_BLOCKIDX_X),
    SREG("cuda.blockIdx.y", JB_BLOCKIDX_Y), SREG("cuda.blockIdx.z", JB_BLOCKIDX_Z),
    SREG("cuda.blockDim.x", JB_BLOCKDIM_X), SREG("cuda.blockDim.y", JB_BLOCKDIM_Y),
    SREG("cuda.blockDim.z", JB_BLOCKDIM_Z), SREG("cuda.gridDim.x", JB_GRIDDIM_X),
    SREG("cuda.gridDim.y", JB_GRIDDIM_Y), SREG("cuda.gridDim.z", JB_GRIDDIM_Z),
    SREG("cuda.laneid", JB_LANEID), SREG("cuda.warpsize", JB_WARPSIZE),
    CALL("cuda.grid", JB_GRID, 1, 1), CALL("cuda.gridsize", JB_GRIDSIZE, 1, 1),
    CALL("cuda.syncthreads", JB_SYNCTHREADS, 0, 0),
    CALL("cuda.shared.array", JB_SHARED_ARRAY, 0, 2), CALL("cuda.local.array", JB_LOCAL_ARRAY, 0, 2),
    CALL("cuda.atomic.add", JB_ATOMIC_ADD, 3, 3), CALL("cuda.atomic.sub", JB_ATOMIC_SUB, 3, 3),
    CALL("cuda.atomic.max", JB_ATOMIC_MAX, 3, 3), CALL("cuda.atomic.min", JB_ATOMIC_MIN, 3, 3),
    CALL("cuda.atomic.exch", JB_ATOMIC_EXCH, 3, 3), CALL("cuda.atomic.cas", JB_ATOMIC_CAS, 4, 4),
    CALL("cuda.syncthreads_count", JB_SYNCTHREADS_COUNT, 1, 1),
    CALL("cuda.syncthreads_and", JB_SYNCTHREADS_AND, 1, 1), CALL("cuda.syncthreads_or", JB_SYNCTHREADS_OR, 1, 1),
    CALL("cuda.threadfence", JB_THREADFENCE, 0, 0), CALL("cuda.threadfence_block", JB_THREADFENCE_BLOCK, 0, 0),
    CALL("cuda.threadfence_system", JB_THREADFENCE_SYSTEM, 0, 0),
    CALL("cuda.atomic.and_", JB_ATOMIC_AND, 3, 3), CALL("cuda.atomic.or_", JB_ATOMIC_OR, 3, 3),
    CALL("cuda.atomic.xor", JB_ATOMIC_XOR, 3, 3), CALL("cuda.atomic.inc", JB_ATOMIC_INC, 3, 3),
    CALL("cuda.atomic.dec", JB_ATOMIC_DEC, 3, 3), CALL("cuda.atomic.compare_and_swap", JB_ATOMIC_CAS1, 3, 3),
    CALL("cuda.shfl_sync", JB_SHFL_IDX, 3, 3), CALL("cuda.shfl_up_sync", JB_SHFL_UP, 3, 3),
    CALL("cuda.shfl_down_sync", JB_SHFL_DOWN, 3, 3), CALL("cuda.shfl_xor_sync", JB_SHFL_XOR, 3, 3),
    CALL("cuda.all_sync", JB_VOTE_ALL, 2, 2), CALL("cuda.any_sync", JB_VOTE_ANY, 2, 2),
    CALL("cuda.eq_sync", JB_VOTE_EQ, 2, 2), CALL("cuda.ballot_sync", JB_BALLOT, 2, 2),
    CALL("cuda.activemask", JB_ACTIVEMASK, 0, 0), CALL("cuda.syncwarp", JB_SYNCWARP, 0, 1),
    CALL("cuda.const.array_like", JB_CONST_ARRAY, 1, 1),
    CALL("cuda.match_any_sync", JB_MATCH_ANY, 2, 2), CALL("cuda.match_all_sync", JB_MATCH_ALL, 2, 2),
    CALL("cuda.lanemask_lt", JB_LANEMASK_LT, 0, 0),
    CALL("cuda.atomic.nanmax", JB_ATOMIC_NANMAX, 3, 3), CALL("cuda.atomic.nanmin", JB_ATOMIC_NANMIN, 3, 3),
    CALL("range", JB_RANGE, 1, 3), CALL("len", JB_LEN, 1, 1), CALL("min", JB_MIN, 1, 64),
    CALL("max", JB_MAX, 1, 64), CALL("abs", JB_ABS, 1, 1), CALL("round", JB_ROUND, 1, 2),
    CALL("int", JB_INT, 1, 1), CALL("float", JB_FLOAT, 1, 1), CALL("bool", JB_BOOL, 1, 1),
    CALL("complex", JB_COMPLEX, 0, 2),
    CALL("math.sqrt", JB_MATH_SQRT, 1, 1), CALL("math.exp", JB_MATH_EXP, 1, 1),
    CALL("math.log", JB_MATH_LOG, 1, 1), CALL("math.log2", JB_MATH_LOG2, 1, 1),
    CALL("math.log10", JB_MATH_LOG10, 1, 1), CALL("math.pow", JB_MATH_POW, 2, 2),
    CALL("math.sin", JB_MATH_SIN, 1, 1), CALL("math.cos", JB_MATH_COS, 1, 1),
    CALL("math.tan", JB_MATH_TAN, 1, 1), CALL("math.asin", JB_MATH_ASIN, 1, 1),
    CALL("math.acos", JB_MATH_ACOS, 1, 1), CALL("math.atan", JB_MATH_ATAN, 1, 1),
    CALL("math.atan2", JB_MATH_ATAN2, 2, 2), CALL("math.sinh", JB_MATH_SINH, 1, 1),
    CALL("math.cosh", JB_MATH_COSH, 1, 1), CALL("math.tanh", JB_MATH_TANH, 1, 1),
    CALL("math.floor", JB_MATH_FLOOR, 1, 1), CALL("math.ceil", JB_MATH_CEIL, 1, 1),
    CALL("math.fabs", JB_MATH_FABS, 1, 1), CALL("math.erf", JB_MATH_ERF, 1, 1),
    CALL("math.erfc", JB_MATH_ERFC, 1, 1), CALL("math.gamma", JB_MATH_GAMMA, 1, 1),
    CALL("math.lgamma", JB_MATH_LGAMMA, 1, 1), CALL("math.isnan", JB_MATH_ISNAN, 1, 1),
    CALL("math.isinf", JB_MATH_ISINF, 1, 1), CALL("math.isfinite", JB_MATH_ISFINITE, 1, 1),
    CALL("numpy.sqrt", JB_MATH_SQRT, 1, 1), CALL("numpy.exp", JB_MATH_EXP, 1, 1),
    CALL("numpy.log", JB_MATH_LOG, 1, 1), CALL("numpy.log2", JB_MATH_LOG2, 1, 1),
    CALL("numpy.log10", JB_MATH_LOG10, 1, 1), CALL("numpy.power", JB_MATH_POW, 2, 2),
    CALL("numpy.sin", JB_MATH_SIN, 1, 1), CALL("numpy.cos", JB_MATH_COS, 1, 1),
    CALL("numpy.tan", JB_MATH_TAN, 1, 1), CALL("numpy.arcsin", JB_MATH_ASIN, 1, 1),
    CALL("numpy.arccos", JB_MATH_ACOS, 1, 1), CALL("numpy.arctan", JB_MATH_ATAN, 1, 1),
    CALL("numpy.arctan2", JB_MATH_ATAN2, 2, 2), CALL("numpy.sinh", JB_MATH_SINH, 1, 1),
    CALL("numpy.cosh", JB_MATH_COSH, 1, 1), CALL("numpy.tanh", JB_MATH_TANH, 1, 1),
    CALL("numpy.floor", JB_MATH_FLOOR, 1, 1), CALL("numpy.ceil", JB_MATH_CEIL, 1, 1),
    CALL("numpy.fabs", JB_MATH_FABS, 1, 1), CALL("numpy.abs", JB_ABS, 1, 1),
    CALL("numpy.absolute", JB_ABS, 1, 1), CALL("numpy.isnan", JB_MATH_ISNAN, 1, 1),
    CALL("numpy.isinf", JB_MATH_ISINF, 1, 1), CALL("numpy.isfinite", JB_MATH_ISFINITE, 1, 1),
    CALL("numpy.minimum", JB_MIN, 2, 2), CALL("numpy.maximum", JB_MAX, 2, 2),
    CONST("math.pi", 3.141592653589793), CONST("math.e", 2.718281828459045),
    CONST("math.tau", 6.283185307179586), CONST("math.inf", INFINITY), CONST("math.nan", NAN),
    CONST("numpy.pi", 3.141592653589793), CONST("numpy.e", 2.718281828459045),
    CONST("numpy.inf", INFINITY), CONST("numpy.nan", NAN),
    CALL("numpy.dtype", JB_NP_DTYPE, 1, 1),
};

/* numpy.<attr> and numba.<name> scalar types: one entry per dtype, the
** spellings come from the dtype table (contracts/dtype.h). */
static const JitPath dtype_paths[ND__COUNT] = {
    DT("dtype.bool", ND_BOOL),       DT("dtype.int8", ND_INT8),       DT("dtype.int16", ND_INT16),
    DT("dtype.int32", ND_INT32),     DT("dtype.int64", ND_INT64),     DT("dtype.uint8", ND_UINT8),
    DT("dtype.uint16", ND_UINT16),   DT("dtype.uint32", ND_UINT32),   DT("dtype.uint64", ND_UINT64),
    DT("dtype.float16", ND_FLOAT16), DT("dtype.float32", ND_FLOAT32), DT("dtype.float64", ND_FLOAT64),
};

const JitPath *jit_path_lookup(const char *path) {
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (strcmp(paths[i].path, path) == 0) return &paths[i];
    int dt = -1;
    if (strncmp(path, "numpy.", 6) == 0) dt = dtype_from_numpy_attr(path + 6);
    else if (strncmp(path, "numba.", 6) == 0) dt = dtype_from_numba_name(path + 6, strlen(path + 6));
    else if (strncmp(path, "cuda.", 5) == 0) dt = dtype_from_numba_name(path + 5, strlen(path + 5)); /* numba.cuda.float32 */
    return dt >= 0 ? &dtype_paths[dt] : NULL;
}

const char *jit_path_normalize(const char *path, char *buf, size_t size) {
    if (strncmp(path, "numba.cuda", 10) == 0 && (path[10] == 0 || path[10] == '.'))
        snprintf(buf, size, "cuda%s", path + 10);
    else
        snprintf(buf, size, "%s", path);
    return buf;
}

