/*
** jit.h — the typed kernel compiler: the contract between its parts.
**
**   Function + argument types ─infer.c─▶ JFunc (types of every node/variable)
**   JFunc ─lower.c + target_*.c─▶ LLVM IR ─jit.c─▶ PTX text / native code
**
** The front end (types.c, infer.c) knows nothing of LLVM; the back end
** (lower.c, target_ptx.c, target_cpu.c, jit.c) never re-derives a type: it
** reads everything from the JFunc. The cuda module (stdlib/cuda.c) calls
** jit_compile() at a kernel's first launch per argument-type signature and
** keeps the JitKernel it returns in its own cache.
*/
#ifndef GPY_JIT_H
#define GPY_JIT_H

#include <string.h>

#include "ast.h"
#include "vm.h"
#include "../contracts/dtype.h"
#include "../contracts/kernel_abi.h"

/* ------------------------------------------------------------------ types */

/* Scalar kinds share NDType's numbering (JK_FLOAT32 == ND_FLOAT32, ...). */
typedef enum JKind {
    JK_BOOL = ND_BOOL,
    JK_INT8 = ND_INT8, JK_INT16, JK_INT32, JK_INT64,
    JK_UINT8, JK_UINT16, JK_UINT32, JK_UINT64,
    JK_FLOAT16, JK_FLOAT32, JK_FLOAT64,
    JK_COMPLEX64, JK_COMPLEX128, /* {float, float} / {double, double}: real, imaginary */
    JK_VOID = ND__COUNT, /* no value: kernels, device functions without return */
    JK_NONE,             /* the None literal (only as "return None" / "return") */
    JK_ARRAY,            /* dtype, ndim, layout */
    JK_TUPLE,            /* n, elems (homogeneous or not) */
    JK_RANGE,            /* the value of range(...): only iterated by for */
    JK_DTYPE,            /* a dtype used as a value (np.float32, numba.int32): dtype */
    JK_FUNCTION,         /* a device function used as a value: fn */
    JK_MODULE,           /* a module or namespace (math, cuda, cuda.threadIdx): path */
    JK_STRING,           /* a string literal (print, later) */
} JKind;

typedef struct JType {
    JKind kind;
    NDType dtype;             /* JK_ARRAY, JK_DTYPE */
    int32_t ndim;             /* JK_ARRAY */
    char layout;              /* JK_ARRAY: 'C' (C-contiguous), 'F' or 'A' (any strides) */
    int32_t n;                /* JK_TUPLE: number of elements */
    const struct JType **elems; /* JK_TUPLE */
    Function *fn;             /* JK_FUNCTION: the Python function of the device function */
    const char *path;         /* JK_MODULE: normalized dotted path: "math", "cuda", "cuda.threadIdx",
                                 "cuda.shared", "cuda.atomic", "numpy"; JK_TUPLE of a namedtuple:
                                 "Name:field1,field2" (NULL for plain tuples) */
} JType;

/* Types are interned per VM (pointer equality is type equality). Scalars and
** the singleton kinds come from jt_scalar(). */
const JType *jt_scalar(VM *vm, JKind k);
const JType *jt_array(VM *vm, NDType dtype, int ndim, char layout);
const JType *jt_tuple(VM *vm, int n, const JType *const *elems);
const JType *jt_dtype(VM *vm, NDType dtype);
/* A namedtuple's type: a tuple whose path is spec, "Name:field1,field2"
** (jit/typeof_named.c makes it; attribute access reads the fields). */
const JType *jt_named_tuple(VM *vm, int n, const JType *const *elems, const char *spec);
/* The type of namedtuple v (NULL when v is none; a message in err when it
** cannot be passed), and the index of field attr of such a type (-1). */
const JType *jt_of_namedtuple(VM *vm, Value v, char *err, size_t errsize);
int jt_tuple_field(const JType *t, const char *attr);
const JType *jt_function(VM *vm, Function *fn);
const JType *jt_module(VM *vm, const char *path);
/* Numba's spelling: "float32", "int64", "array(float32, 1d, C)",
** "UniTuple(int64 x 2)", "Tuple(int64, float32)". Writes into buf. */
const char *jt_name(const JType *t, char *buf, size_t size);
/* The type of a host value passed as a kernel argument; NULL (and a message
** in err) when it cannot be passed. Python int → int64, float → float64,
** bool → bool, numpy scalars → their dtype, arrays → array(dtype, ndim,
** 'C' when C-contiguous else 'A'), device arrays likewise, tuples of at
** most JIT_MAX_TUPLE_ARG of those (jit/typeof.c; arrays and numpy scalars
** as the host sees them, jit/host.h). */
#define JIT_MAX_TUPLE_ARG 64
const JType *jt_of_value(VM *vm, Value v, char *err, size_t errsize);
/* Parses a Numba signature string "void(float32[:], int64)" (jit/signature.c).
** Returns the number of arguments (types in out, return type in *ret), or
** -1 with a message in err. */
int jit_parse_signature(VM *vm, const char *s, const JType **out, int max, const JType **ret, char *err,
                        size_t errsize);
/* Whether a signature's parameter type s takes an argument of type a. */
bool jit_signature_param_accepts(const JType *s, const JType *a);
static inline bool jt_is_scalar(const JType *t) { return t->kind <= JK_FLOAT64; }
static inline bool jt_is_int(const JType *t) { return t->kind >= JK_INT8 && t->kind <= JK_UINT64; }
static inline bool jt_is_float(const JType *t) { return t->kind >= JK_FLOAT16 && t->kind <= JK_FLOAT64; }
/* complex64/128: not scalars (an LLVM pair, not one register); on the
** kernel ABI a complex is two parameters, its real then imaginary part. */
static inline bool jt_is_complex(const JType *t) { return t->kind == JK_COMPLEX64 || t->kind == JK_COMPLEX128; }
static inline bool nd_is_complex_dtype(NDType dt) { return dt == ND_COMPLEX64 || dt == ND_COMPLEX128; }

/* --------------------------------------------------- what names resolve to
** Every AST_CALL, AST_ATTRIBUTE and AST_NAME node that denotes something
** other than a plain local/argument gets one of these in its JInfo.builtin. */
typedef enum JBuiltin {
    JB_NONE = 0,
    JB_CONST,          /* a global (or module attribute like math.pi) captured at compile
                          time: JInfo.constant holds the value, JInfo.type its type */
    JB_DEVICE_CALL,    /* call of a device function: JInfo.callee */
    /* special registers: AST_ATTRIBUTE nodes (cuda.threadIdx.x), type int32 */
    JB_THREADIDX_X, JB_THREADIDX_Y, JB_THREADIDX_Z,
    JB_BLOCKIDX_X, JB_BLOCKIDX_Y, JB_BLOCKIDX_Z,
    JB_BLOCKDIM_X, JB_BLOCKDIM_Y, JB_BLOCKDIM_Z,
    JB_GRIDDIM_X, JB_GRIDDIM_Y, JB_GRIDDIM_Z,
    JB_LANEID, JB_WARPSIZE,           /* cuda.laneid, cuda.warpsize: int32 */
    /* calls */
    JB_GRID, JB_GRIDSIZE,             /* cuda.grid(n) / gridsize(n): int64, or UniTuple(int64 x n) */
    JB_SYNCTHREADS,                   /* cuda.syncthreads(): void */
    JB_SHARED_ARRAY, JB_LOCAL_ARRAY,  /* cuda.shared.array / cuda.local.array: JInfo.shape, type array(dt, ndim, 'C') */
    JB_ATOMIC_ADD, JB_ATOMIC_SUB, JB_ATOMIC_MAX, JB_ATOMIC_MIN,
    JB_ATOMIC_EXCH, JB_ATOMIC_CAS,    /* cuda.atomic.*(array, index, value[, value]): returns the old value */
    JB_RANGE,                         /* range(...) in a for loop: type JK_RANGE */
    JB_LEN,                           /* len(array) / len(tuple): int64 */
    JB_MIN, JB_MAX, JB_ABS, JB_ROUND, /* builtins on scalars; round(x) → int64, round(x, n) → float */
    JB_INT, JB_FLOAT, JB_BOOL,        /* int(x) → int64, float(x) → float64, bool(x) */
    JB_CAST,                          /* np.float32(x), numba.int32(x) ...: JInfo.type is the target */
    /* math module (and the numpy ufuncs of the same name on scalars); the
       operand type of the call is JInfo.op_type (float32 or float64; ints
       are converted to float64 first, as Numba does) */
    JB_MATH_SQRT, JB_MATH_EXP, JB_MATH_LOG, JB_MATH_LOG2, JB_MATH_LOG10, JB_MATH_POW,
    JB_MATH_SIN, JB_MATH_COS, JB_MATH_TAN, JB_MATH_ASIN, JB_MATH_ACOS, JB_MATH_ATAN,
    JB_MATH_ATAN2, JB_MATH_SINH, JB_MATH_COSH, JB_MATH_TANH, JB_MATH_FLOOR, JB_MATH_CEIL,
    JB_MATH_FABS, JB_MATH_ERF, JB_MATH_ERFC, JB_MATH_GAMMA, JB_MATH_LGAMMA,
    JB_MATH_ISNAN, JB_MATH_ISINF, JB_MATH_ISFINITE, /* → bool */
    /* array attributes: AST_ATTRIBUTE nodes on an array value */
    JB_ARRAY_SHAPE,                   /* UniTuple(int64 x ndim) */
    JB_ARRAY_SIZE, JB_ARRAY_NDIM,     /* int64 */
    /* barriers with results (int32) and memory fences (void) */
    JB_SYNCTHREADS_COUNT, JB_SYNCTHREADS_AND, JB_SYNCTHREADS_OR,
    JB_THREADFENCE, JB_THREADFENCE_BLOCK, JB_THREADFENCE_SYSTEM,
    /* more atomics: (array, index, value) → old; compare_and_swap(array, old, new) acts on array[0] */
    JB_ATOMIC_AND, JB_ATOMIC_OR, JB_ATOMIC_XOR, JB_ATOMIC_INC, JB_ATOMIC_DEC, JB_ATOMIC_CAS1,
    /* warp collectives (mask first); shfl returns the value's type, votes bool, ballot/activemask uint32 */
    JB_SHFL_IDX, JB_SHFL_UP, JB_SHFL_DOWN, JB_SHFL_XOR,
    JB_VOTE_ALL, JB_VOTE_ANY, JB_VOTE_EQ, JB_BALLOT, JB_ACTIVEMASK, JB_SYNCWARP,
    JB_PRINT,                         /* print(scalars and constant strings): void */
    JB_CONST_ARRAY,                   /* cuda.const.array_like(global array): the array, in constant memory */
    JB_LAUNCH,                        /* child[grid, block](args): a kernel launching a kernel (JInfo.callee,
                                         the child's kernel specialization); void. See jit/infer_launch.c */
    JB_NP_DTYPE,                      /* numpy.dtype(np.float32 | 'float32'): the dtype itself (JK_DTYPE),
                                         a compile-time value for dtype= arguments */
    JB_COMPLEX_REAL, JB_COMPLEX_IMAG, /* z.real / z.imag: the part's float type */
    JB_COMPLEX_CONJ,                  /* z.conjugate(): the same complex type */
    JB_COMPLEX,                       /* complex(re[, im]) → complex128 */
    JB_CMATH_EXP, JB_CMATH_LOG, JB_CMATH_SQRT, /* cmath on complex (or real) → complex */
    JB_CMATH_PHASE,                   /* cmath.phase → the part's float type */
    JB_ENUMERATE, JB_ZIP, JB_LITERAL_UNROLL, /* iterables of a for loop (type JK_RANGE; jit/infer_iter.c) */
    JB_ARRAY_SLICE,                   /* AST_SUBSCRIPT with slices: a view (jit/infer_slice.c) */
    JB_ARRAY_RESHAPE,                 /* a.reshape(shape): a C view (jit/infer_array_methods.c) */
    JB_TUPLE_FIELD,                   /* p.x of a namedtuple: item JInfo.shape[0] (jit/typeof_named.c) */
    JB_IS,                            /* AST_COMPARE `a is b` / `a is not b`: JInfo.shape[0] is a JitIs,
                                         shape[1] 1 for `is not` (jit/infer_is.c) */
    /* more warp collectives: match_any_sync(mask, v) → uint32, match_all_sync(mask, v) →
       (uint32, bool); lanemask_lt() → uint32 (jit/lower_warp_match.c) */
    JB_MATCH_ANY, JB_MATCH_ALL, JB_LANEMASK_LT,
    JB_ATOMIC_NANMAX, JB_ATOMIC_NANMIN, /* cuda.atomic.nanmax/nanmin: max/min where NaN is a missing value */
    JB_DIM3, /* cuda.threadIdx (blockIdx, blockDim, gridDim) as a value: a Dim3(x, y, z) of int32; shape[0]: the JSreg */
    JB__COUNT
} JBuiltin;

/* How `a is b` is decided (JB_IS): at compile time, by ==, or by view identity. */
typedef enum JitIs { IS_FALSE, IS_TRUE, IS_EQUAL, IS_SAME_VIEW } JitIs;

/* cuda.threadIdx / blockIdx / blockDim / gridDim (a JK_MODULE type; as a
** value, JB_DIM3): the JSreg (jit/target.h) it reads, or -1. */
static inline int jit_dim3_sreg(const JType *t) {
    static const char *const names[4] = {"cuda.threadIdx", "cuda.blockIdx", "cuda.blockDim", "cuda.gridDim"};
    if (t->kind != JK_MODULE || !t->path) return -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(t->path, names[k]) == 0) return k; /* SREG_TID, SREG_CTAID, SREG_NTID, SREG_NCTAID */
    return -1;
}

/* What inference knows about one AST node. */
typedef struct JInfo {
    const JType *type;     /* type of the value the expression produces (JK_VOID for
                              statements-like calls); for assignment targets, the
                              variable's (unified) type */
    const JType *op_type;  /* AST_BINOP, AST_AUGASSIGN, AST_UNARYOP: the type the operation is
                              computed in (operands are converted to it first; e.g. int64 / int64
                              → float64, float32 + int64 → float64). AST_CALL of JB_MIN/MAX/ABS and
                              JB_MATH_*: the operand type. AST_SUBSCRIPT: NULL. */
    const JType **cmp_types; /* AST_COMPARE: the type each comparison i (left-or-previous vs
                                comparators[i]) is computed in */
    JBuiltin builtin;
    Value constant;        /* JB_CONST: the value (an int, float or bool) */
    struct JFunc *callee;  /* JB_DEVICE_CALL: the inferred specialization called */
    int64_t shape[3];      /* JB_SHARED_ARRAY / JB_LOCAL_ARRAY: constant shape (ndim in type).
                              AST_SUBSCRIPT of a tuple: shape[1] = 1 when the index is a
                              compile-time constant (literal, -literal or captured global),
                              shape[0] = that index normalized to [0, n) */
    int32_t var;           /* AST_NAME of a local (read or assigned): index into JFunc.vars; else -1 */
} JInfo;

/* A local variable (parameters first, in order). Its type is the unification
** of every value assigned to it; variables are never re-typed mid-function. */
typedef struct JVar {
    const char *name;   /* in the function's Source arena; the parser does not intern
                           identifiers, so compare with strcmp (jf_var does) or use
                           JInfo.var of the AST_NAME node */
    const JType *type;
    int param_index;    /* -1 for non-parameters */
} JVar;

/* One specialization of a function on argument types, fully typed. */
typedef struct JFunc {
    Function *fn;            /* fn->proto->ast is the AST_FUNCTIONDEF; fn->globals resolves names */
    AstNode *def;
    const char *name;        /* fn's name */
    int nargs;
    const JType **argtypes;
    const JType *ret;        /* JK_VOID for kernels and functions without a value return */
    JVar *vars;
    int nvars;
    bool is_kernel;
    bool uses_barrier;       /* calls syncthreads, itself or through any callee */
    struct JFunc **callees;  /* distinct device-function specializations called */
    int ncallees;
    struct JFunc **launches; /* distinct kernel specializations launched (child[grid, block](...)) */
    int nlaunches;
    char mangled[128];       /* unique symbol name: kernel/device name + a hash of the types */
    struct JInfoMap *infos;  /* AstNode* → JInfo (use jf_info) */
    struct JitArena *arena;  /* everything above is allocated here; freed by jf_free */
} JFunc;

/* The JInfo of node n (NULL if inference never saw it: a bug). */
JInfo *jf_info(const JFunc *f, const AstNode *n);
/* The variable named name (NULL if none). */
JVar *jf_var(const JFunc *f, const char *name);

/* Inference result: either a JFunc or an error message. Errors read:
**   "kernel 'add' (array(float32, 1d, C), float64): file.gpy:12:9: cannot index
**    array(float32, 1d, C) with float64"
** Nothing in infer raises a gpy exception or touches the GC except to read
** constants (so it can run with anything on the stack). */
JFunc *jit_infer(VM *vm, Function *fn, int nargs, const JType *const *argtypes, bool is_kernel,
                 char *err, size_t errsize);
void jf_free(JFunc *f); /* frees f and every callee specialization it owns */
/* A listing for inspect_types: each variable with its type, then each source
** line of the function with the types of the expressions on it (malloc'd). */
char *jf_dump(const JFunc *f);

/* The kernel parameter ABI, KernelCtx, the CPU entry points and the debug
** error record are the contract with the devices: contracts/kernel_abi.h. */
typedef KernelParam JParam;

/* CUDA's limits on a kernel's arrays (the same on every GPU Numba targets):
** shared memory per block without opt-in (ptxas refuses more static shared
** memory: "uses too much shared data (..., 0xc000 max)"; a CPU-device
** launch checks static + dynamic), and local memory per thread (CUDA's
** technical specifications; checked when compiling for either target). */
#define JIT_MAX_STATIC_SHARED (48 * 1024)
#define JIT_MAX_LOCAL_PER_THREAD (512 * 1024)

typedef enum JitTarget { JIT_TARGET_CPU = 1, JIT_TARGET_PTX = 2 } JitTarget;

/* A compiled kernel specialization. */
typedef struct JitKernel {
    JFunc *func;            /* typed source (kept for inspect_types) */
    int nparams;
    JParam *params;         /* the expanded parameter list (ABI above) */
    size_t shared_bytes;    /* static shared memory per block */
    bool uses_barrier;
    /* JIT_TARGET_CPU */
    CpuBlockFn cpu_block;   /* NULL when uses_barrier, unless the barriers allow regions */
    CpuThreadFn cpu_thread; /* fibers: only a barrier kernel that cpu_block cannot run has one */
    /* JIT_TARGET_PTX */
    char *ptx;              /* NUL-terminated PTX text */
    char entry[160];        /* the .entry name in the PTX */
    char *llvm_ir;          /* textual IR after optimization (inspect_llvm), or NULL */
    struct JitModule *module; /* back-end resources (ORC tracker) freed by jit_kernel_free */
    /* debug mode (@cuda.jit(debug=True)): bounds-checked indexing */
    bool debug;
    bool narrow_index;      /* compiled under JitOptions.narrow_index */
    struct JitSite *dbg_sites;      /* site id → where (malloc'd), ndbg_sites entries */
    int ndbg_sites;
    struct JitErrRecord *dbg_err;   /* CPU: the record inside the kernel's native code */
    /* kernels this one launches (CPU device: compiled separately, see
    ** jit/jit_launch.c); a kernel that launches itself is not listed */
    struct JitKernel **children;
    int nchildren;
    /* JIT_TARGET_CPU: the device's view of this kernel, filled once it is
    ** compiled; a launch from another kernel passes its address */
    CpuKernel cpu;
} JitKernel;

/* Debug mode (bounds checks): the error record's layout is in
** contracts/kernel_abi.h (JitErrRecord); its site indexes dbg_sites.
** One checked indexing expression. */
typedef struct JitSite {
    char func[64];    /* the kernel or device function holding it */
    bool in_device;   /* func is a device function */
    char file[160];
    int line;
    char array[64];   /* the array's name in the source ("a", or the expression) */
    char expr[128];   /* the source text of the access ("a[i, j]") */
    Value exc_class;  /* a `raise` statement (jit/lower_raise.c): the exception class; else EMPTY */
    char exc_msg[256]; /* its constant message ("" when none) */
} JitSite;

typedef struct JitOptions {
    bool fastmath;
    bool debug;       /* bounds checks (see above) */
    /* The launch guarantees that every array argument's extents, size and
    ** byte offsets of in-bounds elements are below 2^31, and that
    ** gridDim * blockDim is below 2^31 in each dimension. Index arithmetic
    ** is then done in 32 bits (jit/lower_expr.c, jit/lower_ranges.c); results are
    ** exactly those of the int64 code for every launch meeting the
    ** guarantee. Ignored in debug mode. The dispatcher keys its caches on it. */
    bool narrow_index;
    bool no_ptx_ir;   /* keep no IR text of the PTX compile (PTX only: cuda.compile_ptx) */
} JitOptions;

/* jit_compile with options (jit_compile is this with {fastmath, no_ptx_ir}). */
JitKernel *jit_compile_opts(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets,
                            int cc, const JitOptions *opts, char *err, size_t errsize);
/* Fills k->cpu from k's CPU entry points (once they exist). */
void jit_cpu_describe(JitKernel *k);
/* Clears the CPU error record of a debug kernel before a launch (no-op otherwise). */
void jit_debug_reset(JitKernel *k);
/* When rec->flag is set, writes the IndexError message for it into msg
** ("kernel 'k' (file.gpy:7): index 10 is out of bounds for axis 0 with size
** 10 in 'a[i]' at threadIdx (2, 0, 0), blockIdx (1, 0, 0)") and returns true. */
bool jit_debug_message(const JitKernel *k, const JitErrRecord *rec, char *msg, size_t size);

/* Compiles fn for argument types on the given targets (a bitmask of
** JitTarget). PTX is for compute capability cc (e.g. 80; 0 = from
** GPY_CUDA_ARCH, else 80). Returns NULL with a message in err on failure
** (type errors, unsupported syntax, LLVM errors); never exits or aborts. */
JitKernel *jit_compile(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int targets,
                       int cc, bool fastmath, char *err, size_t errsize);
void jit_kernel_free(VM *vm, JitKernel *k);

/* LLVM's targets, once per process before any other use of LLVM
** (gpy_jit_entry calls it when the loader loads the compiler). */
void jit_llvm_init(void);
/* Ahead of a VM's first compile, on the loader's thread
** (jit/jit_loader.c): jit_warm_up makes, for the targets given (the host's
** first when JIT_TARGET_CPU is among them), the host's target machine and the
** LLJIT, and the NVPTX target machine for the default compute capability,
** runs a tiny kernel through each (so the first real compile finds libLLVM's
** code paged in and its lazy tables built), and publishes each in p. Once
** *stop (the VM compiles, or is being freed) it only makes and publishes
** what is left of the current target. jit_adopt gives the VM whatever p
** holds by then (on the VM's thread, before a compile); jit_prepared_free
** drops what was not taken. */
typedef struct JitPrepared JitPrepared;
JitPrepared *jit_prepared_new(void);
void jit_warm_up(JitPrepared *p, int targets, _Atomic bool *stop);
void jit_adopt(VM *vm, JitPrepared *p);
void jit_prepared_free(JitPrepared *p);

/* Compiles a device function alone to PTX (cuda.compile_ptx(fn, sig, device=True)). */
/* Returns malloc'd PTX text (free()), the function as a visible .func of its
** mangled name; *ret receives the return type. NULL with err on failure. */
char *jit_compile_ptx_device(VM *vm, Function *fn, int nargs, const JType *const *argtypes, int cc,
                             bool fastmath, const JType **ret, char *err, size_t errsize);

#endif
