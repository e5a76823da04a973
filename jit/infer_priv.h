/*
** infer_priv.h — what the files of type inference share (private to jit/):
** the state of one jit_infer call (Ctx), of one specialization (FuncX) and
** of one pass over it (Pass), and the helpers each file provides.
**   infer.c        passes, statements, variables, specializations, the API
**   infer_expr.c   Numba's numeric rules and every expression but calls
**   infer_call.c   calls: device functions, builtins, math, cuda.*
**   infer_names.c  globals, closure variables, builtins and module attributes
*/
#ifndef GPY_INFER_PRIV_H
#define GPY_INFER_PRIV_H

#include <setjmp.h>

#include "infer_builtins.h"
#include "jit_arena.h"

/* Where a specialization's inference stands. ITER: passes running, its
** return type may still widen; STRICT: types fixed, final pass running;
** DONE: finished; TAINTED: finished but it used the return type of a
** function still in ITER (mutual recursion), so it is re-inferred when
** called again. */
enum { FS_NEW, FS_ITER, FS_STRICT, FS_DONE, FS_TAINTED };

/* A resolved global or module attribute (memoized per function). */
typedef struct Resolved {
    const JType *type;
    JBuiltin builtin;
    Value constant; /* JB_CONST value, or the Module / dispatcher value */
} Resolved;

typedef struct GlobalMemo {
    const char *name;
    Resolved r;
} GlobalMemo;

/* A JFunc plus the private state of its inference. */
typedef struct FuncX {
    JFunc f; /* first: a JFunc* of ours is a FuncX* */
    int state;
    bool tainted;          /* used the return type of another function still iterating */
    bool has_value_return; /* some `return expr` with expr not None */
    bool ret_none;         /* some bare `return` / `return None` */
    bool blocked;          /* this pass needed the still-unknown return type of a function in FS_ITER */
    int nparams;
    GlobalMemo *memo;
    int nmemo, memo_cap;
    int callees_cap;
} FuncX;

/* One jit_infer call: errors longjmp to jb; every allocation is in ja. */
typedef struct Ctx {
    VM *vm;
    JitArena *ja;
    jmp_buf jb;
    char *err;
    size_t errsize;
    int depth;
    bool builtins_loaded;
    Value bi[9]; /* range len min max abs round int float bool, from vm->builtins */
    char names[4][160]; /* rotating buffers for type names in messages */
    int next_name;
} Ctx;

/* One walk over a function body; strict: unknown types are errors. */
typedef struct Pass {
    Ctx *c;
    FuncX *fx;
    bool strict;
    bool changed;
} Pass;

/* ---- infer.c */
/* Records the message (prefixed with the function, its types and n's
** position) and unwinds to jit_infer. */
_Noreturn void inf_fail(Pass *p, const AstNode *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Name of a type, in one of a few rotating buffers of the Ctx. */
const char *inf_tname(Pass *p, const JType *t);
#define tname(t) inf_tname(p, (t))
JInfo *inf_info(Pass *p, const AstNode *n);      /* n's info, created on first use */
void *inf_alloc(Pass *p, size_t size);          /* zeroed arena memory (fails on OOM) */
const JType *inf_set_type(Pass *p, const AstNode *n, const JType *t);
/* Not known in this pass: NULL while iterating, an error in the strict pass. */
const JType *inf_unknown(Pass *p, const AstNode *n, const char *what);
int inf_find_var(FuncX *fx, const char *name);  /* -1 when not a local */
/* The specialization of fn on argtypes (inferred now unless cached). */
FuncX *inf_specialize(Pass *caller, AstNode *at, Function *fn, int nargs, const JType *const *argtypes,
                      bool is_kernel);

/* ---- infer_defined.c: a read of a local before any assignment to it in
** the source is an error naming the variable (Numba's NotDefinedError) */
void inf_check_defined(Pass *p);

/* ---- infer_expr.c */
const JType *inf_expr(Pass *p, AstNode *n);     /* any expression; NULL = unknown */
const JType *inf_value(Pass *p, AstNode *n);    /* an expression that must be a value */
void inf_condition(Pass *p, AstNode *n);
bool inf_const_int(Pass *p, AstNode *n, int64_t *out);
const JType *inf_binop_type(Pass *p, const AstNode *at, BinOp op, const JType *a, const JType *b,
                            const JType **op_type);
/* Checks the indices idx of array type arr; returns their count (0: unknown). */
int inf_array_index(Pass *p, const AstNode *at, const JType *arr, AstNode *idx, bool partial);
const JType *inf_unify(Pass *p, const JType *a, const JType *b); /* NULL when impossible */
JKind inf_unify_scalar(JKind a, JKind b);
JKind inf_float_with_int(JKind f, JKind i);
bool inf_is_value_type(const JType *t);

/* ---- infer_call.c */
const JType *inf_call_expr(Pass *p, AstNode *n);

/* ---- infer_warp_match.c: match_any_sync, match_all_sync, lanemask_lt */
const JType *inf_warp_match_call(Pass *p, AstNode *n, const JitPath *jp);

/* ---- infer_launch.c: child[grid, block](args), a kernel launching a kernel */
bool inf_is_launch(const AstNode *n);
const JType *inf_launch_expr(Pass *p, AstNode *n);

/* ---- infer_names.c */
Resolved inf_resolve_global(Pass *p, const AstNode *at, const char *name);
Resolved inf_module_attr(Pass *p, const AstNode *at, const JType *bt, const JInfo *bi, const char *attr);
const JType *inf_apply(Pass *p, const AstNode *n, Resolved r);

/* ---- infer_iter.c: for loops over arrays, tuples, enumerate(), zip(),
** literal_unroll(); false for a plain range(...) (the caller's path). Sets
** *item to the target's type (NULL: unknown in this pass). */
bool inf_for_iter(Pass *p, AstNode *s, const JType **item);

/* ---- infer_slice.c: a[1:5], a[i, ::2] ... (views) */
bool inf_has_slice(const AstNode *idx);
const JType *inf_slice_expr(Pass *p, AstNode *n, const JType *base);
void inf_slice_store(Pass *p, AstNode *tg, const JType *base, const JType *t);
const JType *inf_tuple_slice(Pass *p, AstNode *n, const JType *base);

/* ---- infer_is.c: `a is b`; an if whose test is decided at compile time */
bool inf_is_compare(const AstNode *n);
const JType *inf_is_expr(Pass *p, AstNode *n);
int inf_static_condition(Pass *p, AstNode *test); /* 1 / 0; -1: decided at run time */
/* Whether statement s is an if decided at compile time whose live branch
** ends in return / break / continue (so the statements after it never run). */
bool inf_static_exit(Pass *p, AstNode *s);
/* A device function's argument: a value, None, a device function or a
** dtype (compile-time values: each specializes the callee). */
const JType *inf_device_arg(Pass *p, AstNode *a);
/* Whether a parameter may have type t though it is no value: None (kernels
** too), functions and dtypes (device functions). */
bool inf_is_static_arg(const JType *t, bool is_kernel);
bool inf_is_builtin_fn(const JType *t); /* a builtin function passed as a value */
/* A tuple print() can write: numbers and tuples of them (infer_device_args.c). */
bool inf_printable_tuple(const JType *t);

/* ---- infer_globals.c: a device array captured as a global (by address, as
** Numba does; host arrays are frozen as constants instead) */
bool inf_device_global(Pass *p, const AstNode *at, Value v, const char *path, Resolved *r);

/* ---- infer_raise.c: raise E / raise E("constant message") */
void inf_raise_stmt(Pass *p, AstNode *s);

/* ---- infer_array_methods.c: a.reshape(...) / a.copy(); false when n is no array method call */
bool inf_array_method(Pass *p, AstNode *n, const JType **out);

/* ---- small helpers: the scalar type of kind k, kind predicates */
static inline VM *VMOF(Pass *p) { return p->c->vm; }
static inline const JType *S(Pass *p, JKind k) { return jt_scalar(VMOF(p), k); }
static inline bool is_intlike(const JType *t) { return t->kind == JK_BOOL || jt_is_int(t); }
static inline bool is_signed_k(JKind k) { return k == JK_BOOL || (k >= JK_INT8 && k <= JK_INT64); }
static inline bool is_float_k(JKind k) { return k >= JK_FLOAT16 && k <= JK_FLOAT64; }
JKind inf_complex_kind(JKind a, JKind b); /* infer_expr.c */
static inline int int_bits(JKind k) {
    switch (k) {
    case JK_BOOL: return 1;
    case JK_INT8: case JK_UINT8: return 8;
    case JK_INT16: case JK_UINT16: return 16;
    case JK_INT32: case JK_UINT32: return 32;
    default: return 64;
    }
}

#endif
