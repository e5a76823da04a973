/*
** lower.c — typed AST (JFunc) → LLVM IR: types, conversions, functions and
** the kernel's parameter ABI. Expressions, statements and builtins live in
** lower_expr.c, lower_stmt.c and lower_builtin.c; what differs between the
** GPU and the CPU is behind target.h.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_regions.h"
#include "target.h"
#include "lexer.h" /* ast_visit_children */

/* Formats "kernel 'name' (types): file:line:col: message" into L->err and
** unwinds to lower_module (LLVM objects are owned by the module/context,
** which the caller disposes). */
void lower_fail(Lower *L, const AstNode *n, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char types[512];
    size_t off = 0;
    types[0] = 0;
    const JFunc *f = L->f;
    if (f) {
        for (int i = 0; i < f->nargs && off < sizeof types - 64; i++) {
            char tb[160];
            off += (size_t)snprintf(types + off, sizeof types - off, "%s%s", i ? ", " : "",
                                    jt_name(f->argtypes[i], tb, sizeof tb));
        }
    }
    const char *file = "<unknown>";
    if (f && f->fn && f->fn->proto && f->fn->proto->source && f->fn->proto->source->filename)
        file = f->fn->proto->source->filename->chars;
    if (n)
        snprintf(L->err, L->errsize, "%s '%s' (%s): %s:%d:%d: %s",
                 f && !f->is_kernel ? "device function" : "kernel", f ? f->name : "?", types, file,
                 n->line, n->col, msg);
    else
        snprintf(L->err, L->errsize, "%s '%s' (%s): %s",
                 f && !f->is_kernel ? "device function" : "kernel", f ? f->name : "?", types, msg);
    longjmp(L->fail, 1);
}

JInfo *lower_info(Lower *L, const AstNode *n) {
    JInfo *i = jf_info(L->f, n);
    if (!i || !i->type) lower_fail(L, n, "internal error: no type information for this %s",
                                   ast_kind_name(n->kind));
    return i;
}

/* The LLVM type of a value of type t held in a register. */
LLVMTypeRef lower_type(Lower *L, const JType *t) {
    switch (t->kind) {
    case JK_BOOL: return L->t_i1;
    case JK_INT8: case JK_UINT8: return L->t_i8;
    case JK_INT16: case JK_UINT16: return L->t_i16;
    case JK_INT32: case JK_UINT32: return L->t_i32;
    case JK_INT64: case JK_UINT64: return L->t_i64;
    case JK_FLOAT16: return L->t_f16;
    case JK_FLOAT32: return L->t_f32;
    case JK_FLOAT64: return L->t_f64;
    case JK_COMPLEX64: case JK_COMPLEX128: {
        LLVMTypeRef part = t->kind == JK_COMPLEX64 ? L->t_f32 : L->t_f64, el[2] = {part, part};
        return LLVMStructTypeInContext(L->C, el, 2, 0);
    }
    case JK_ARRAY: {
        LLVMTypeRef dims = LLVMArrayType2(L->t_i64, (uint64_t)t->ndim);
        LLVMTypeRef el[3] = {L->t_ptr, dims, dims};
        return LLVMStructTypeInContext(L->C, el, 3, 0);
    }
    case JK_TUPLE: {
        LLVMTypeRef el[64];
        if (t->n > 64) lower_fail(L, NULL, "tuple of more than 64 elements");
        for (int i = 0; i < t->n; i++) {
            el[i] = lower_type(L, t->elems[i]);
            if (!el[i]) lower_fail(L, NULL, "tuple element of a type without a value");
        }
        return LLVMStructTypeInContext(L->C, el, (unsigned)t->n, 0);
    }
    default:
        return NULL; /* void, None, modules, functions, dtypes, ranges: no value */
    }
}

LLVMTypeRef lower_mem_type(Lower *L, const JType *t) {
    return t->kind == JK_BOOL ? L->t_i8 : lower_type(L, t);
}

static bool is_signed_kind(JKind k) { return k >= JK_INT8 && k <= JK_INT64; }

/* Truthiness of a scalar (Python's bool(x)) as an i1. */
LLVMValueRef lower_truthy(Lower *L, LLVMValueRef v, const JType *t) {
    if (t->kind == JK_BOOL) return v;
    if (jt_is_int(t)) return LLVMBuildICmp(L->B, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    if (jt_is_float(t)) return LLVMBuildFCmp(L->B, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    if (t->kind == JK_TUPLE) return LLVMConstInt(L->t_i1, t->n != 0, 0);
    if (t->kind == JK_NONE) return LLVMConstInt(L->t_i1, 0, 0);
    lower_fail(L, NULL, "no truth value for this type");
}

static int float_bits(JKind k) { return k == JK_FLOAT16 ? 16 : k == JK_FLOAT32 ? 32 : 64; }
static int int_bits(JKind k) {
    switch (k) {
    case JK_BOOL: return 1;
    case JK_INT8: case JK_UINT8: return 8;
    case JK_INT16: case JK_UINT16: return 16;
    case JK_INT32: case JK_UINT32: return 32;
    default: return 64;
    }
}

/* Converts v from type `from` to type `to` with Numba's (C's) semantics. */
LLVMValueRef lower_convert(Lower *L, LLVMValueRef v, const JType *from, const JType *to,
                           const AstNode *at) {
    if (from == to) return v;
    LLVMBuilderRef B = L->B;
    if (jt_is_complex(to)) return lower_complex_convert(L, v, from, to, at);
    if (jt_is_scalar(from) && jt_is_scalar(to)) {
        LLVMTypeRef tt = lower_type(L, to);
        if (to->kind == JK_BOOL) return lower_truthy(L, v, from);
        if (from->kind == JK_BOOL) {
            if (jt_is_float(to)) return LLVMBuildUIToFP(B, v, tt, "");
            return LLVMBuildZExt(B, v, tt, "");
        }
        if (jt_is_int(from) && jt_is_int(to)) {
            int fb = int_bits(from->kind), tb = int_bits(to->kind);
            if (fb == tb) return v;
            if (fb > tb) return LLVMBuildTrunc(B, v, tt, "");
            return is_signed_kind(from->kind) ? LLVMBuildSExt(B, v, tt, "") : LLVMBuildZExt(B, v, tt, "");
        }
        if (jt_is_int(from) && jt_is_float(to))
            return is_signed_kind(from->kind) ? LLVMBuildSIToFP(B, v, tt, "") : LLVMBuildUIToFP(B, v, tt, "");
        if (jt_is_float(from) && jt_is_int(to))
            return is_signed_kind(to->kind) ? LLVMBuildFPToSI(B, v, tt, "") : LLVMBuildFPToUI(B, v, tt, "");
        /* float → float */
        int fb = float_bits(from->kind), tb = float_bits(to->kind);
        if (fb == tb) return v;
        return fb < tb ? LLVMBuildFPExt(B, v, tt, "") : LLVMBuildFPTrunc(B, v, tt, "");
    }
    if (from->kind == JK_TUPLE && to->kind == JK_TUPLE && from->n == to->n) {
        LLVMValueRef out = LLVMGetUndef(lower_type(L, to));
        for (int i = 0; i < to->n; i++) {
            LLVMValueRef e = LLVMBuildExtractValue(B, v, (unsigned)i, "");
            e = lower_convert(L, e, from->elems[i], to->elems[i], at);
            out = LLVMBuildInsertValue(B, out, e, (unsigned)i, "");
        }
        return out;
    }
    if (from->kind == JK_ARRAY && to->kind == JK_ARRAY && from->ndim == to->ndim &&
        from->dtype == to->dtype)
        return v; /* layouts share one representation */
    if (to->kind == JK_VOID || to->kind == JK_NONE) return NULL;
    char a[128], b[128];
    lower_fail(L, at, "cannot convert %s to %s", jt_name(from, a, sizeof a), jt_name(to, b, sizeof b));
}

/* An alloca in the function's entry block (so mem2reg promotes it). */
LLVMValueRef lower_alloca(Lower *L, LLVMTypeRef ty, const char *name) {
    LLVMBuilderRef b = LLVMCreateBuilderInContext(L->C);
    LLVMPositionBuilderAtEnd(b, L->entry_bb);
    LLVMValueRef a = LLVMBuildAlloca(b, ty, name);
    LLVMDisposeBuilder(b);
    return a;
}

/* Calls the overloaded intrinsic `name` (e.g. "llvm.sqrt" with over={float}). */
LLVMValueRef lower_intrinsic(Lower *L, const char *name, LLVMTypeRef *over, int nover,
                             LLVMValueRef *args, int nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) lower_fail(L, NULL, "internal error: unknown intrinsic %s", name);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->M, id, over, (size_t)nover);
    LLVMTypeRef ft = LLVMIntrinsicGetType(L->C, id, over, (size_t)nover);
    return LLVMBuildCall2(L->B, ft, fn, args, (unsigned)nargs, "");
}

/* Calls the external function `name` (declared on first use). pure marks it
** as reading no memory, so loops can hoist it. */
LLVMValueRef lower_call_named(Lower *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt,
                              LLVMValueRef *args, int nargs, bool pure) {
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, (unsigned)nargs, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->M, name);
    if (!fn) {
        fn = LLVMAddFunction(L->M, name, ft);
        unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->C, nounwind, 0));
        if (pure) {
            unsigned mem = LLVMGetEnumAttributeKindForName("memory", 6);
            LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->C, mem, 0));
            unsigned wr = LLVMGetEnumAttributeKindForName("willreturn", 10);
            LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->C, wr, 0));
        }
    }
    return LLVMBuildCall2(L->B, ft, fn, args, (unsigned)nargs, "");
}

/* ------------------------------------------------------------- the ABI */

void lower_abi_types(Lower *L, const JType *t, LLVMTypeRef *tys, int *n, int max) {
    if (t->kind == JK_ARRAY) {
        if (*n + 1 + 2 * t->ndim > max) lower_fail(L, NULL, "too many kernel parameters");
        tys[(*n)++] = L->t_ptr;
        for (int i = 0; i < 2 * t->ndim; i++) tys[(*n)++] = L->t_i64;
    } else if (t->kind == JK_TUPLE) {
        for (int i = 0; i < t->n; i++) lower_abi_types(L, t->elems[i], tys, n, max);
    } else if (jt_is_complex(t)) {
        if (*n + 2 > max) lower_fail(L, NULL, "too many kernel parameters");
        tys[(*n)++] = t->kind == JK_COMPLEX64 ? L->t_f32 : L->t_f64;
        tys[(*n)++] = t->kind == JK_COMPLEX64 ? L->t_f32 : L->t_f64;
    } else if (t->kind == JK_NONE) {
        /* None: no parameters (infer_is.c) */
    } else if (jt_is_scalar(t)) {
        if (*n + 1 > max) lower_fail(L, NULL, "too many kernel parameters");
        tys[(*n)++] = lower_mem_type(L, t);
    } else {
        char b[128];
        lower_fail(L, NULL, "a kernel cannot take an argument of type %s", jt_name(t, b, sizeof b));
    }
}

LLVMValueRef lower_from_abi(Lower *L, const JType *t, LLVMValueRef *params, int *i) {
    LLVMBuilderRef B = L->B;
    if (t->kind == JK_ARRAY) {
        LLVMValueRef v = LLVMGetUndef(lower_type(L, t));
        v = LLVMBuildInsertValue(B, v, params[(*i)++], 0, "");
        LLVMTypeRef dims = LLVMArrayType2(L->t_i64, (uint64_t)t->ndim);
        for (int part = 1; part <= 2; part++) {
            LLVMValueRef d = LLVMGetUndef(dims);
            for (int k = 0; k < t->ndim; k++) {
                LLVMValueRef p = params[(*i)++];
                if (part == 1 && L->narrow) p = lower_narrow_extent(L, p); /* tells LLVM 0 <= extent < 2^31 */
                d = LLVMBuildInsertValue(B, d, p, (unsigned)k, "");
            }
            v = LLVMBuildInsertValue(B, v, d, (unsigned)part, "");
        }
        return v;
    }
    if (t->kind == JK_TUPLE) {
        LLVMValueRef v = LLVMGetUndef(lower_type(L, t));
        for (int k = 0; k < t->n; k++)
            v = LLVMBuildInsertValue(B, v, lower_from_abi(L, t->elems[k], params, i), (unsigned)k, "");
        return v;
    }
    if (jt_is_complex(t)) {
        LLVMValueRef v = LLVMGetUndef(lower_type(L, t));
        v = LLVMBuildInsertValue(B, v, params[(*i)++], 0, "");
        return LLVMBuildInsertValue(B, v, params[(*i)++], 1, "");
    }
    if (t->kind == JK_NONE) return NULL; /* None has no parameters */
    LLVMValueRef p = params[(*i)++];
    if (t->kind == JK_BOOL) return LLVMBuildICmp(B, LLVMIntNE, p, LLVMConstInt(L->t_i8, 0, 0), "");
    return p;
}

/* --------------------------------------------------------- functions */

/* A symbol name PTX and ELF accept: [A-Za-z0-9_$]. */
static void symbol_name(const char *in, const char *suffix, char *out, size_t size) {
    size_t j = 0;
    for (const char *p = in; *p && j + 1 < size; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[j++] = ok ? c : '_';
    }
    for (const char *p = suffix; *p && j + 1 < size; p++) out[j++] = *p;
    out[j] = 0;
}

static int count_arrays(const JType *t) {
    if (t->kind == JK_ARRAY) return 1;
    int n = 0;
    if (t->kind == JK_TUPLE)
        for (int i = 0; i < t->n; i++) n += count_arrays(t->elems[i]);
    return n;
}

/* noalias is only certain when one array comes in: two array arguments may
** be views of the same memory. */
static bool single_array_param(const JFunc *f) {
    int n = 0;
    for (int i = 0; i < f->nargs; i++) n += count_arrays(f->argtypes[i]);
    return n <= 1;
}

/* Declares the LLVM function of f once. Kernels take the expanded ABI
** parameters; device functions their values as native LLVM types. On the
** CPU every function takes the KernelCtx* first. */
LLVMValueRef lower_fn_for(Lower *L, JFunc *f) {
    for (int i = 0; i < L->nfns; i++)
        if (L->fns[i].f == f) return L->fns[i].fn;
    LLVMTypeRef pt[512];
    int n = 0;
    bool cpu = L->tg->kind == JIT_TARGET_CPU;
    if (cpu) { /* ctx, threadIdx.x/y/z */
        pt[n++] = L->t_ptr;
        for (int d = 0; d < 3; d++) pt[n++] = L->t_i32;
    }
    if (f->is_kernel) {
        for (int i = 0; i < f->nargs; i++) lower_abi_types(L, f->argtypes[i], pt, &n, 512);
    } else {
        for (int i = 0; i < f->nargs; i++) {
            if (n >= 512) lower_fail(L, f->def, "too many parameters");
            LLVMTypeRef t = lower_type(L, f->argtypes[i]);
            pt[n++] = t ? t : L->t_i8; /* modules/functions passed as values: dummy */
        }
    }
    LLVMTypeRef rt = f->is_kernel ? L->t_void : lower_type(L, f->ret);
    if (!rt) rt = L->t_void;
    char name[200];
    symbol_name(f->mangled[0] ? f->mangled : f->name, cpu && f->is_kernel ? "_body" : "", name, sizeof name);
    LLVMValueRef fn = LLVMAddFunction(L->M, name, LLVMFunctionType(rt, pt, (unsigned)n, 0));
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->C, nounwind, 0));
    if (f->is_kernel && !cpu) {
        LLVMSetFunctionCallConv(fn, LLVMPTXKernelCallConv);
        if (single_array_param(f)) {
            unsigned na = LLVMGetEnumAttributeKindForName("noalias", 7);
            for (int i = 0; i < n; i++)
                if (pt[i] == L->t_ptr)
                    LLVMAddAttributeAtIndex(fn, (unsigned)i + 1, LLVMCreateEnumAttribute(L->C, na, 0));
        }
    } else {
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        if (f->is_kernel) {
            unsigned ai = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
            LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->C, ai, 0));
        }
    }
    if (L->fastmath && !cpu) {
        /* Numba's fastmath on the GPU: flush float32 denormals, approximate math */
        static const char *const kv[][2] = {{"denormal-fp-math-f32", "preserve-sign,preserve-sign"},
                                            {"unsafe-fp-math", "true"}};
        for (int i = 0; i < 2; i++)
            LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                    LLVMCreateStringAttribute(L->C, kv[i][0], (unsigned)strlen(kv[i][0]), kv[i][1],
                                                              (unsigned)strlen(kv[i][1])));
    }
    if (cpu) {
        unsigned na = LLVMGetEnumAttributeKindForName("noalias", 7);
        LLVMAddAttributeAtIndex(fn, 1, LLVMCreateEnumAttribute(L->C, na, 0));
    }
    if (L->nfns == L->capfns) {
        int cap = L->capfns ? L->capfns * 2 : 8;
        LowerFn *nf = realloc(L->fns, (size_t)cap * sizeof *nf);
        if (!nf) lower_fail(L, NULL, "out of memory");
        L->fns = nf;
        L->capfns = cap;
    }
    L->fns[L->nfns++] = (LowerFn){f, fn, false, 0};
    return fn;
}

static bool is_dynamic_shared(Lower *L, const AstNode *e) {
    const JInfo *i = e && e->kind == AST_CALL ? jf_info(L->f, e) : NULL;
    return i && i->builtin == JB_SHARED_ARRAY && i->type && i->type->kind == JK_ARRAY && i->type->ndim == 1 &&
           i->shape[0] == 0;
}

static void mark_dyn_vars(Lower *L, AstList *body);

static void mark_dyn_stmt(AstNode *s, void *ud) {
    Lower *L = ud;
    if (s->kind == AST_ASSIGN && is_dynamic_shared(L, s->u.assign.value))
        for (int k = 0; k < s->u.assign.targets.len; k++) {
            const AstNode *t = s->u.assign.targets.items[k];
            const JInfo *i = t->kind == AST_NAME ? jf_info(L->f, t) : NULL;
            if (i && i->var >= 0 && i->var < L->f->nvars) L->dyn_vars[i->var] = 1;
        }
    if (s->kind == AST_IF || s->kind == AST_WHILE || s->kind == AST_FOR) ast_visit_children(s, mark_dyn_stmt, L);
}

/* CPU: the variables holding a dynamic shared array (cuda.shared.array(0,
** dtype)). Their accesses are bounds-checked: the array is as long as the
** launch's dynamic shared memory, which a launch may leave at 0 bytes, and
** past it lies the worker's heap (a GPU faults instead). */
static void mark_dyn_vars(Lower *L, AstList *body) {
    free(L->dyn_vars);
    L->dyn_vars = NULL;
    if (L->tg->kind != JIT_TARGET_CPU) return;
    L->dyn_vars = calloc((size_t)L->f->nvars + 1, 1);
    if (!L->dyn_vars) lower_fail(L, NULL, "out of memory");
    for (int k = 0; k < body->len; k++) mark_dyn_stmt(body->items[k], L);
}

bool lower_is_dyn_shared(Lower *L, const AstNode *arr) {
    if (!L->dyn_vars || !arr || arr->kind != AST_NAME) return false;
    const JInfo *i = jf_info(L->f, arr);
    return i && i->var >= 0 && i->var < L->f->nvars && L->dyn_vars[i->var];
}

/* Emits the body of one function. */
static void emit_function(Lower *L, int index) {
    LowerFn lfv = L->fns[index]; /* L->fns may move while callees are declared */
    LowerFn *lf = &lfv;
    JFunc *f = lf->f;
    L->f = f;
    L->fn = lf->fn;
    L->nloops = 0;
    L->fn_local_bytes = 0;
    L->entry_bb = LLVMAppendBasicBlockInContext(L->C, lf->fn, "entry");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, lf->fn, "body");
    L->ret_bb = LLVMAppendBasicBlockInContext(L->C, lf->fn, "ret");
    LLVMPositionBuilderAtEnd(L->B, body);
    bool cpu = L->tg->kind == JIT_TARGET_CPU;
    L->ctx = cpu ? LLVMGetParam(lf->fn, 0) : NULL;
    for (int d = 0; d < 3; d++) L->tid[d] = cpu ? LLVMGetParam(lf->fn, (unsigned)d + 1) : NULL;
    mark_dyn_vars(L, &f->def->u.func.body);
    free(L->vars);
    L->vars = calloc((size_t)(f->nvars ? f->nvars : 1), sizeof *L->vars);
    if (!L->vars) lower_fail(L, NULL, "out of memory");
    for (int i = 0; i < f->nvars; i++) {
        LLVMTypeRef t = f->vars[i].type ? lower_type(L, f->vars[i].type) : NULL;
        if (t) L->vars[i] = lower_alloca(L, t, f->vars[i].name);
        /* Numba's value for a variable read on a path that skipped its
           assignment (an if without else): zero, never an undefined load */
        if (t && f->vars[i].param_index < 0) LLVMBuildStore(L->B, LLVMConstNull(t), L->vars[i]);
    }
    L->ret_slot = NULL;
    LLVMTypeRef rt = f->is_kernel ? NULL : lower_type(L, f->ret);
    if (rt) L->ret_slot = lower_alloca(L, rt, "retval");
    /* parameters into their variables */
    unsigned np = LLVMCountParams(lf->fn);
    LLVMValueRef params[520];
    if (np > 520) lower_fail(L, f->def, "too many parameters");
    LLVMGetParams(lf->fn, params);
    int pi = cpu ? 4 : 0;
    for (int a = 0; a < f->nargs; a++) {
        LLVMValueRef v;
        if (f->is_kernel) v = lower_from_abi(L, f->argtypes[a], params, &pi);
        else v = params[pi++];
        for (int k = 0; k < f->nvars; k++) {
            if (f->vars[k].param_index != a || !L->vars[k]) continue;
            LLVMValueRef cv = lower_convert(L, v, f->argtypes[a], f->vars[k].type, f->def);
            LLVMBuildStore(L->B, cv, L->vars[k]);
        }
    }
    if (f->is_kernel && L->regions) cpu_regions_lower_body(L); /* barrier kernel as thread loops */
    else lower_body(L, &f->def->u.func.body);
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->B))) LLVMBuildBr(L->B, L->ret_bb);
    LLVMPositionBuilderAtEnd(L->B, L->ret_bb);
    if (L->ret_slot) LLVMBuildRet(L->B, LLVMBuildLoad2(L->B, rt, L->ret_slot, ""));
    else LLVMBuildRetVoid(L->B);
    LLVMPositionBuilderAtEnd(L->B, L->entry_bb);
    LLVMBuildBr(L->B, body);
    L->fns[index].done = true;
    L->fns[index].local_bytes = L->fn_local_bytes;
}

/* The most local-array bytes per thread any chain of calls starting at
** function i holds at once (a recursive call adds nothing more: its depth
** is unknown, as ptxas assumes too). state: 0 new, 1 on the path, 2 done. */
static size_t local_chain(Lower *L, int i, uint8_t *state, size_t *memo) {
    if (state[i] == 2) return memo[i];
    if (state[i] == 1) return 0;
    state[i] = 1;
    size_t deepest = 0;
    JFunc *f = L->fns[i].f;
    for (int c = 0; c < f->ncallees; c++)
        for (int j = 0; j < L->nfns; j++)
            if (L->fns[j].f == f->callees[c]) {
                size_t b = local_chain(L, j, state, memo);
                if (b > deepest) deepest = b;
            }
    state[i] = 2;
    memo[i] = L->fns[i].local_bytes + deepest;
    return memo[i];
}

static void init_types(Lower *L) {
    L->t_void = LLVMVoidTypeInContext(L->C);
    L->t_i1 = LLVMInt1TypeInContext(L->C);
    L->t_i8 = LLVMInt8TypeInContext(L->C);
    L->t_i16 = LLVMInt16TypeInContext(L->C);
    L->t_i32 = LLVMInt32TypeInContext(L->C);
    L->t_i64 = LLVMInt64TypeInContext(L->C);
    L->t_f16 = LLVMHalfTypeInContext(L->C);
    L->t_f32 = LLVMFloatTypeInContext(L->C);
    L->t_f64 = LLVMDoubleTypeInContext(L->C);
    L->t_ptr = LLVMPointerTypeInContext(L->C, 0);
}

static LLVMValueRef lower_all(Lower *L, JFunc *f) {
    init_types(L);
    L->B = LLVMCreateBuilderInContext(L->C);
    LLVMValueRef root = NULL;
    if (setjmp(L->fail)) {
        LLVMDisposeBuilder(L->B);
        L->B = NULL;
        lower_ranges_free(L);
        return NULL;
    }
    L->f = f;
    root = lower_fn_for(L, f);
    for (int i = 0; i < L->nfns; i++)
        if (!L->fns[i].done) emit_function(L, i); /* may append callees */
    uint8_t *state = calloc((size_t)L->nfns + 1, 1);
    size_t *memo = calloc((size_t)L->nfns + 1, sizeof *memo);
    if (!state || !memo) {
        free(state);
        free(memo);
        lower_fail(L, NULL, "out of memory");
    }
    L->local_chain_bytes = local_chain(L, 0, state, memo);
    free(state);
    free(memo);
    if (L->local_chain_bytes > JIT_MAX_LOCAL_PER_THREAD) { /* each function fits, a chain of calls does not */
        L->f = L->local_big_f;
        lower_fail(L, L->local_big,
                   "local arrays of %zu bytes per thread along a chain of device-function calls: more than the %d "
                   "bytes (512 KiB) of local memory a CUDA thread may use",
                   L->local_chain_bytes, JIT_MAX_LOCAL_PER_THREAD);
    }
    if (L->tg->kind == JIT_TARGET_CPU) {
        /* static shared memory rounded up; dynamic shared memory starts there */
        L->smem_bytes = (L->smem_bytes + 15) & ~(size_t)15;
        if (L->dyn_off) LLVMSetInitializer(L->dyn_off, LLVMConstInt(L->t_i64, L->smem_bytes, 0));
    }
    LLVMDisposeBuilder(L->B);
    L->B = NULL;
    lower_ranges_free(L);
    return root;
}

LLVMValueRef lower_module(Lower *L, JFunc *f) { return lower_all(L, f); }

LLVMValueRef lower_device_module(Lower *L, JFunc *f) {
    LLVMValueRef fn = lower_all(L, f);
    if (fn) LLVMSetLinkage(fn, LLVMExternalLinkage);
    return fn;
}
