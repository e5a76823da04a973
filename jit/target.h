/*
** target.h — what differs between the GPU (NVPTX) and the CPU device when
** lowering a typed kernel to LLVM IR. Everything else (jit/lower*.c) is shared.
**
** It also holds the lowering context (struct Lower) that lower*.c and the
** two targets pass around; it is private to jit/.
*/
#ifndef GPY_JIT_TARGET_H
#define GPY_JIT_TARGET_H

#include <setjmp.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "jit.h"

typedef struct Lower Lower;

/* The special registers a kernel reads (each an i32). */
typedef enum JSreg {
    SREG_TID, SREG_CTAID, SREG_NTID, SREG_NCTAID, SREG_LANEID
} JSreg;

typedef struct Target {
    JitTarget kind;
    /* Special register `which` for dimension dim (0..2) as an i32. */
    LLVMValueRef (*sreg)(Lower *L, JSreg which, int dim);
    /* cuda.syncthreads(). */
    void (*barrier)(Lower *L);
    /* Address (generic ptr) of a new static shared array of count elements;
    ** count 0 is the dynamic shared memory of the launch (all such arrays
    ** alias it, after the static ones, as in Numba). */
    LLVMValueRef (*shared_array)(Lower *L, LLVMTypeRef elem, int64_t count, size_t itemsize);
    /* the launch's dynamic shared memory bytes (i64): what sizes
    ** cuda.shared.array(0, dtype), as in Numba */
    LLVMValueRef (*dyn_shared_bytes)(Lower *L);
    /* Prefix of external math functions: "" for libm (expf, exp, ...),
    ** "__nv_" for libdevice (__nv_expf, ...). */
    const char *math_prefix;
} Target;

extern const Target jit_target_ptx;
extern const Target jit_target_cpu;

/* One emitted LLVM function for a typed specialization. */
typedef struct LowerFn {
    JFunc *f;
    LLVMValueRef fn;
    bool done;
    size_t local_bytes;       /* its cuda.local.array storage per thread */
} LowerFn;

/* CPU device: the separately compiled kernel of each kernel specialization
** the module launches (jit/jit_launch.c builds it, lower_launch.c reads it). */
typedef struct JitChildMap {
    JFunc **f;
    JitKernel **k;
    int n, cap;
} JitChildMap;

/* ge >= le (strict: ge > le) holds where the lowering is (lower_ranges.c). */
typedef struct LowerFact {
    AstNode *ge, *le;
    bool strict;
} LowerFact;
#define LOWER_MAX_FACTS 32

/* The lowering state of one module. */
struct Lower {
    VM *vm;
    LLVMContextRef C;
    LLVMModuleRef M;
    LLVMBuilderRef B;
    const Target *tg;
    bool fastmath;
    /* cached types */
    LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_f32, t_f64, t_ptr;
    /* the function being lowered */
    JFunc *f;
    LLVMValueRef fn;
    LLVMValueRef ctx;          /* CPU: the KernelCtx* argument; NULL on PTX */
    LLVMValueRef tid[3];       /* CPU: threadIdx x/y/z (i32 arguments after ctx) */
    LLVMValueRef *vars;        /* alloca per JVar */
    LLVMValueRef ret_slot;     /* device functions with a value */
    LLVMBasicBlockRef ret_bb;
    LLVMBasicBlockRef entry_bb;
    LLVMBasicBlockRef brk[64], cont[64];
    int nloops;
    /* every function of the module */
    LowerFn *fns;
    int nfns, capfns;
    /* shared memory (CPU: offsets into ctx->smem) */
    size_t smem_bytes;
    int nshared;
    LLVMValueRef dyn_off;      /* CPU: i64 global holding the dynamic shared offset, or NULL */
    uint8_t *dyn_vars;         /* CPU: per variable of the function, assigned a dynamic shared array */
    /* local arrays: the function being lowered, and (after lower_module) the
    ** most any chain of calls from the root holds per thread, with the
    ** largest array of the module for messages */
    size_t fn_local_bytes;
    size_t local_chain_bytes;
    const AstNode *local_big;
    JFunc *local_big_f;
    size_t local_big_bytes;
    bool needs_libdevice;
    /* JitOptions.narrow_index: extents, sizes and gridDim * blockDim < 2^31 */
    bool narrow;
    /* lower_ranges.c: how the current function assigns its locals */
    JFunc *rng_f;
    struct RangeDef *rng_defs;
    int rng_depth;
    int rng_budget;            /* expressions one lower_range query may still visit */
    LowerFact facts[LOWER_MAX_FACTS]; /* comparisons known to hold here (innermost last) */
    int nfacts;
    /* debug mode (lower_debug.c): bounds checks writing the module's error record */
    bool debug;
    char err_symbol[64];       /* the record global's name (unique per CPU module) */
    LLVMValueRef dbg_err;      /* that global, created on first use */
    JitSite *sites;            /* malloc'd; handed to the JitKernel */
    int nsites, capsites;
    const JitChildMap *children; /* CPU: kernels launched from this module (lower_launch.c) */
    /* CPU: the region plan of a barrier kernel run without fibers
    ** (cpu_regions.h), or NULL */
    struct CpuRegions *regions;
    /* errors */
    char *err;
    size_t errsize;
    jmp_buf fail;
};

/* Per-VM back-end state (vm->jit), created on the first compile. */
typedef struct JitDiag {
    bool error;
    char msg[512];
} JitDiag;

struct JitState {
    LLVMTargetMachineRef ptx_tm[8];
    int ptx_cc[8];
    int nptx;
    LLVMTargetMachineRef host_tm;   /* O3 for CPU modules */
    struct LLVMOrcOpaqueLLJIT *jit; /* one ORC LLJIT for the VM's CPU kernels */
    char *libdevice;                /* the bytes of libdevice.10.bc, read once */
    size_t libdevice_len;
    unsigned serial;                /* makes every CPU entry symbol unique */
    JitDiag diag;                   /* the LLVM diagnostic handler writes here */
    const struct JitCompileChain *compiling; /* kernels launching kernels: compiles in progress (jit_launch.c) */
};

/* ---- lower.c ---- */
/* Builds the whole module for kernel f (the kernel and every device
** function it calls). Returns the kernel's LLVM function (PTX: the entry
** with the expanded parameters; CPU: the body taking ctx first), or NULL
** with L->err set. */
LLVMValueRef lower_module(Lower *L, JFunc *f);
/* Compiles a device function alone (compile_ptx device=True). */
LLVMValueRef lower_device_module(Lower *L, JFunc *f);
_Noreturn void lower_fail(Lower *L, const AstNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
LLVMTypeRef lower_type(Lower *L, const JType *t);     /* register type */
LLVMTypeRef lower_mem_type(Lower *L, const JType *t); /* array element type (bool as i8) */
LLVMValueRef lower_convert(Lower *L, LLVMValueRef v, const JType *from, const JType *to,
                           const AstNode *at);
LLVMValueRef lower_truthy(Lower *L, LLVMValueRef v, const JType *t);
LLVMValueRef lower_alloca(Lower *L, LLVMTypeRef ty, const char *name);
LLVMValueRef lower_intrinsic(Lower *L, const char *name, LLVMTypeRef *over, int nover,
                             LLVMValueRef *args, int nargs);
LLVMValueRef lower_call_named(Lower *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt,
                              LLVMValueRef *args, int nargs, bool pure);
JInfo *lower_info(Lower *L, const AstNode *n);
LLVMValueRef lower_fn_for(Lower *L, JFunc *f); /* declares (once) the function of f */
/* Appends the expanded (ABI) parameter types of t to tys (n grows). */
void lower_abi_types(Lower *L, const JType *t, LLVMTypeRef *tys, int *n, int max);
/* Rebuilds a value of type t from expanded parameters starting at *i. */
LLVMValueRef lower_from_abi(Lower *L, const JType *t, LLVMValueRef *params, int *i);

/* ---- lower_expr.c ---- */
LLVMValueRef lower_expr(Lower *L, AstNode *n);
LLVMValueRef lower_expr_as(Lower *L, AstNode *n, const JType *to);
/* CPU: whether the array expression arr is a variable holding a dynamic
** shared array (its accesses are bounds-checked, lower.c). */
bool lower_is_dyn_shared(Lower *L, const AstNode *arr);
LLVMValueRef lower_elem_addr(Lower *L, LLVMValueRef arr, const JType *at, AstNode *index,
                             const AstNode *at_node);
LLVMValueRef lower_load_elem(Lower *L, LLVMValueRef addr, NDType dt);
void lower_store_elem(Lower *L, LLVMValueRef addr, NDType dt, LLVMValueRef v);
LLVMValueRef lower_binop(Lower *L, BinOp op, LLVMValueRef a, LLVMValueRef b, const JType *t,
                         const AstNode *at);
LLVMValueRef lower_sreg64(Lower *L, JSreg which, int dim);
/* An i64 extent known to be in [0, 2^31) (L->narrow): zext nneg of its trunc. */
LLVMValueRef lower_narrow_extent(Lower *L, LLVMValueRef v64);
/* Applies the fast-math flags to v when the kernel asked for them. */
LLVMValueRef lower_fm(Lower *L, LLVMValueRef v);
/* Opens a fresh block when the current one is terminated (dead code). */
void lower_open_block(Lower *L);

/* ---- lower_complex.c: complex64/complex128 values ({re, im} pairs) ---- */
const JType *lower_complex_part_type(Lower *L, const JType *t);
LLVMValueRef lower_complex_convert(Lower *L, LLVMValueRef v, const JType *from, const JType *to, const AstNode *at);
LLVMValueRef lower_complex_binop(Lower *L, BinOp op, LLVMValueRef a, LLVMValueRef b, const JType *t,
                                 const AstNode *at);
LLVMValueRef lower_complex_neg(Lower *L, LLVMValueRef z, const JType *t);
LLVMValueRef lower_complex_conj(Lower *L, LLVMValueRef z, const JType *t);
LLVMValueRef lower_complex_part(Lower *L, LLVMValueRef z, bool imag);
LLVMValueRef lower_complex_abs(Lower *L, LLVMValueRef z, const JType *t);
LLVMValueRef lower_complex_eq(Lower *L, LLVMValueRef a, LLVMValueRef b, bool ne);
/* cmath.exp / log / sqrt (complex results) and phase (a float) of z of type t. */
LLVMValueRef lower_complex_cmath(Lower *L, JBuiltin b, LLVMValueRef z, const JType *t);
LLVMValueRef lower_complex_make(Lower *L, const JType *t, LLVMValueRef re, const JType *rt, LLVMValueRef im,
                                const JType *it, const AstNode *at);

/* ---- lower_ranges.c ---- */
/* Under L->narrow: [*lo, *hi] bounds every value the integer expression n
** can take (false: not narrow, or not an integer). */
bool lower_range(Lower *L, AstNode *n, int64_t *lo, int64_t *hi);
/* lower_range within [INT32_MIN, INT32_MAX]. */
bool lower_fits_i32(Lower *L, AstNode *n);
void lower_ranges_free(Lower *L);
/* Whether subscript index e is >= 0 whenever the access is in bounds
** (so the negative-index wrap can be skipped): lower_range, or a - b under
** a fact a >= b. */
bool lower_index_nonneg(Lower *L, AstNode *e);
/* Pushes the facts that hold in body when test is true (holds) or false;
** returns the mark to pop back to after the body. */
int lower_facts_push(Lower *L, AstNode *test, bool holds, AstList *body);
void lower_facts_pop(Lower *L, int mark);

/* ---- lower_debug.c ---- */
/* Debug mode: branches to the error path unless 0 <= idx[k] < dims[k] for
** every k (idx already wrapped; raw as written, for the message). node is
** the subscript (or atomic call) being lowered. */
void lower_debug_bounds(Lower *L, LLVMValueRef *idx, LLVMValueRef *raw, LLVMValueRef *dims, int n,
                        const AstNode *node);
/* Debug mode: after a device call, returns when an error was recorded. */
void lower_debug_after_call(Lower *L);
/* A new site for node (its id), and: record site and the thread (first
** writer wins), then leave the function (lower_raise.c). */
int lower_debug_site(Lower *L, const AstNode *node);
void lower_debug_record_here(Lower *L, int site);

/* ---- lower_raise.c: raise E(...) (infer_raise.c) ---- */
void lower_raise(Lower *L, AstNode *s);

/* ---- lower_launch.c ---- */
/* child[grid, block](args) (JB_LAUNCH): PTX calls the CUDA device runtime;
** the CPU queues the child grid with gpy_cpu_launch_child. */
LLVMValueRef lower_launch(Lower *L, AstNode *call, JInfo *info);

/* ---- lower_stmt.c ---- */
void lower_body(Lower *L, AstList *body);
/* Stores v (of type vt) into an assignment target (a name, element or tuple). */
void lower_assign(Lower *L, AstNode *target, LLVMValueRef v, const JType *vt);

/* ---- lower_iter.c: for loops over arrays, tuples, enumerate, zip,
** literal_unroll; false for range(...) (lower_stmt.c's loop) ---- */
bool lower_for_iter(Lower *L, AstNode *s);

/* ---- lower_is.c: `a is b` (JB_IS); a test decided at compile time: 1 / 0, else -1 ---- */
LLVMValueRef lower_is(Lower *L, AstNode *n, JInfo *info);
int lower_static_condition(Lower *L, AstNode *test);
bool lower_static_exit(Lower *L, AstNode *s); /* an if decided at compile time whose live branch exits */

/* ---- lower_print_tuple.c: appends tuple t's text to print()'s format and
** its numbers to the slots ---- */
void lower_print_tuple(Lower *L, LLVMValueRef v, const JType *t, char *fmt, size_t *fl, size_t cap,
                       LLVMValueRef *slots, int *ns, int max, const AstNode *at);

/* ---- lower_globals.c: a device array global, referenced by its address ---- */
bool lower_is_device_global(Lower *L, Value v);
LLVMValueRef lower_device_global(Lower *L, Value v, const JType *t, const AstNode *at);

/* ---- lower_reshape.c: a.reshape(shape) (JB_ARRAY_RESHAPE) ---- */
LLVMValueRef lower_reshape(Lower *L, AstNode *n, JInfo *info);

/* ---- lower_slice.c: the view a[1:5, i, ::2] (n) of array value arr of type at ---- */
LLVMValueRef lower_slice(Lower *L, AstNode *n, LLVMValueRef arr, const JType *at, const JType *rt);
/* target[slices] = v (a number, or an array of the view's extents) */
void lower_slice_store(Lower *L, AstNode *target, LLVMValueRef v, const JType *vt);

/* ---- lower_builtin.c ---- */
LLVMValueRef lower_builtin_call(Lower *L, AstNode *call, JInfo *info);
LLVMValueRef lower_builtin_attr(Lower *L, AstNode *attr, JInfo *info);
LLVMValueRef lower_const(Lower *L, Value v, const JType *t, const AstNode *at);
/* math function b on args already converted to the float type t. */
LLVMValueRef lower_math(Lower *L, JBuiltin b, LLVMValueRef *args, int nargs, const JType *t);

/* ---- lower_warp_match.c: match_any_sync, match_all_sync, lanemask_lt ---- */
LLVMValueRef lower_warp_match(Lower *L, AstNode *call, JInfo *info);

/* ---- target_cpu.c ---- */
/* Adds the CPU device's entry points around the kernel body function
** (block_name NULL for barrier kernels run as fibers; thread_name NULL for
** barrier kernels run as regions, whose body loops over the threads). */
void jit_cpu_entries(Lower *L, LLVMValueRef body, const char *block_name, const char *thread_name);
/* Loop hints for a loop over the block's threads in dimension dim (0 = x),
** given the branch at its latch (target_cpu.c). */
void jit_cpu_thread_loop_hints(Lower *L, LLVMValueRef latch_br, int dim);

/* ---- jit_launch.c: kernels launching kernels on the CPU device ---- */
/* The kernel compiles in progress, innermost first (JitState.compiling): a
** kernel that launches itself, or one up the chain, uses the JitKernel
** being built. */
typedef struct JitCompileChain {
    JitKernel *k;
    const struct JitCompileChain *up;
} JitCompileChain;
/* Compiles (for the CPU) every kernel that k->func, or a device function it
** calls, launches, into map (owned ones also into k->children). */
/* Whether root, or a function it calls, launches a kernel. Such kernels
** take the general (int64) index variant: the grids they launch are never
** checked against 2^31 threads the way the host's launches are. */
bool jit_launches_kernels(JFunc *root);
/* range(...) of a for loop (lower_stmt.c): start, stop and step as i64;
** returns the step's sign when it is a literal (1 without a step), else 0. */
int lower_range_args(Lower *L, AstNode *iter, LLVMValueRef *start, LLVMValueRef *stop, LLVMValueRef *step);
/* Whether counter c is still inside range(start, stop, step) for that sign
** (0: decided at run time, any step sign). */
LLVMValueRef lower_range_cond(Lower *L, LLVMValueRef c, LLVMValueRef stop, LLVMValueRef step, int sign);
bool jit_compile_children(VM *vm, JitKernel *k, const JitOptions *opts, JitChildMap *map, char *err,
                          size_t errsize);

/* ---- libdevice.c ---- */
/* Links the needed libdevice functions into M (lazily parsed) and
** internalizes them. Returns false with err set. */
bool jit_link_libdevice(VM *vm, LLVMModuleRef M, char *err, size_t errsize);

#endif
