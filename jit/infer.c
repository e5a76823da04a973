/*
** infer.c — type inference for kernels and device functions (Numba's CUDA
** typing rules) over the AST of a Function, specialized on argument types.
**
** A function is walked repeatedly until no variable type (and no return
** type) changes: a variable's type is the unification of every value
** assigned to it, so a loop that widens an int to a float converges in two
** passes. Expressions whose type is not known yet (a variable assigned later
** in a loop, a recursive call whose return type is still open) are "unknown"
** in those passes and skipped; a final strict pass re-types everything with
** the fixed types and turns any remaining unknown into an error. Every
** expression and assignment-target node gets a JInfo on the way.
**
** Device-function calls are specialized on their argument types (cached
** within one jit_infer call). Errors longjmp back to jit_infer, which frees
** everything: all memory of one call lives in one JitArena.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_priv.h"

#define MAX_PASSES 64
#define MAX_SPECS 256
#define MAX_DEPTH 48
#define MAX_TUPLE_DEPTH 8

/* ------------------------------------------------------------------ errors */

/* Writes "kernel 'f' (types): file:line:col: " into buf. */
static void error_prefix(JFunc *f, const AstNode *n, char *buf, size_t size) {
    size_t pos = 0;
    char tn[160];
    const char *fname = "<unknown>";
    if (f->fn && f->fn->proto && f->fn->proto->source && f->fn->proto->source->filename)
        fname = f->fn->proto->source->filename->chars;
    int line = n ? n->line : (f->def ? f->def->line : 0);
    int col = n ? n->col : (f->def ? f->def->col : 0);
    pos += (size_t)snprintf(buf, size, "%s '%s' (", f->is_kernel ? "kernel" : "device function",
                            f->name ? f->name : "?");
    for (int i = 0; i < f->nargs && pos < size; i++)
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%s", i ? ", " : "",
                                jt_name(f->argtypes[i], tn, sizeof tn));
    if (pos < size) snprintf(buf + pos, size - pos, "): %s:%d:%d: ", fname, line, col);
}

/* Records the message and unwinds to jit_infer. */
_Noreturn void inf_fail(Pass *p, const AstNode *n, const char *fmt, ...) {
    Ctx *c = p->c;
    if (c->err && c->errsize) {
        char prefix[1024];
        error_prefix(&p->fx->f, n, prefix, sizeof prefix);
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(c->err, c->errsize, "%s%s", prefix, msg);
    }
    longjmp(c->jb, 1);
}

/* Name of a type in a rotating buffer (several per message). */
const char *inf_tname(Pass *p, const JType *t) {
    char *b = p->c->names[p->c->next_name++ & 3];
    return jt_name(t, b, 160);
}

/* ------------------------------------------------------------------ infos */

JInfo *inf_info(Pass *p, const AstNode *n) {
    JInfo *i = jim_get(p->fx->f.infos, n);
    if (i) return i;
    i = jim_put(p->fx->f.infos, p->c->ja, n);
    if (!i) inf_fail(p, n, "out of memory");
    i->var = -1;
    return i;
}

void *inf_alloc(Pass *p, size_t size) {
    void *m = ja_alloc(p->c->ja, size);
    if (!m) inf_fail(p, NULL, "out of memory");
    return m;
}

/* Records the node's type and returns it. */
const JType *inf_set_type(Pass *p, const AstNode *n, const JType *t) {
    inf_info(p, n)->type = t;
    return t;
}

/* An expression whose type is not known in this pass: fine while iterating,
** an error in the strict pass. */
const JType *inf_unknown(Pass *p, const AstNode *n, const char *what) {
    if (p->strict) inf_fail(p, n, "%s", what);
    inf_info(p, n)->type = NULL;
    return NULL;
}
/* ------------------------------------------------------------- variables */

int inf_find_var(FuncX *fx, const char *name) {
    for (int i = 0; i < fx->f.nvars; i++)
        if (strcmp(fx->f.vars[i].name, name) == 0) return i;
    return -1;
}

/* Unifies t into variable v (errors name the variable). */
static const JType *assign_var(Pass *p, const AstNode *at, int v, const JType *t) {
    JVar *var = &p->fx->f.vars[v];
    if (!t) return var->type;
    if (!inf_is_value_type(t)) inf_fail(p, at, "cannot assign a value of type %s to '%s'", tname(t), var->name);
    if (!var->type) {
        var->type = t;
        p->changed = true;
        return t;
    }
    const JType *u = inf_unify(p, var->type, t);
    if (!u) inf_fail(p, at, "cannot unify %s and %s for '%s'", tname(var->type), tname(t), var->name);
    if (u != var->type) {
        if (var->param_index >= 0 && p->fx->f.is_kernel && var->type->kind == JK_ARRAY)
            inf_fail(p, at, "cannot assign %s to argument '%s' of type %s", tname(t), var->name, tname(var->type));
        var->type = u;
        p->changed = true;
    }
    return u;
}

/* Collects the names a statement list binds (Python's rule: any name
** assigned in a function is local to it). */
static void prescan(Pass *p, AstList *body);

/* Adds a local variable (no-op when it exists); vars grow by doubling. */
static void add_local(Pass *p, const char *name) {
    FuncX *fx = p->fx;
    if (inf_find_var(fx, name) >= 0) return;
    if (fx->f.nvars == fx->memo_cap) { /* memo_cap doubles as vars capacity during prescan */
        int cap = fx->memo_cap ? fx->memo_cap * 2 : 16;
        JVar *nv = inf_alloc(p, (size_t)cap * sizeof *nv);
        if (fx->f.nvars) memcpy(nv, fx->f.vars, (size_t)fx->f.nvars * sizeof *nv);
        fx->f.vars = nv;
        fx->memo_cap = cap;
    }
    JVar *v = &fx->f.vars[fx->f.nvars++];
    v->name = name;
    v->type = NULL;
    v->param_index = -1;
}

static void prescan_target(Pass *p, AstNode *t) {
    if (!t) return;
    switch (t->kind) {
    case AST_NAME: add_local(p, t->u.name.id); break;
    case AST_TUPLE:
    case AST_LIST:
        for (int i = 0; i < t->u.seq.elts.len; i++) prescan_target(p, t->u.seq.elts.items[i]);
        break;
    case AST_STARRED: prescan_target(p, t->u.starred.value); break;
    default: break;
    }
}

static void prescan(Pass *p, AstList *body) {
    for (int i = 0; i < body->len; i++) {
        AstNode *s = body->items[i];
        switch (s->kind) {
        case AST_ASSIGN:
            for (int j = 0; j < s->u.assign.targets.len; j++) prescan_target(p, s->u.assign.targets.items[j]);
            break;
        case AST_AUGASSIGN: prescan_target(p, s->u.augassign.target); break;
        case AST_ANNASSIGN:
            if (s->u.annassign.value) prescan_target(p, s->u.annassign.target);
            break;
        case AST_FOR:
            prescan_target(p, s->u.for_.target);
            prescan(p, &s->u.for_.body);
            prescan(p, &s->u.for_.orelse);
            break;
        case AST_WHILE:
            prescan(p, &s->u.while_.body);
            prescan(p, &s->u.while_.orelse);
            break;
        case AST_IF:
            prescan(p, &s->u.if_.body);
            prescan(p, &s->u.if_.orelse);
            break;
        case AST_RETURN:
            if (s->u.ret.value && s->u.ret.value->kind != AST_NONE) p->fx->has_value_return = true;
            break;
        default: break;
        }
    }
}
/* ------------------------------------------------------------- statements */

static void stmts(Pass *p, AstList *l);

/* Assigns a value of type t (NULL: unknown) to target node tg. */
static void assign_target(Pass *p, AstNode *tg, const JType *t) {
    switch (tg->kind) {
    case AST_NAME: {
        int v = inf_find_var(p->fx, tg->u.name.id);
        if (v < 0) inf_fail(p, tg, "cannot assign to '%s'", tg->u.name.id); /* cannot happen: prescan */
        const JType *vt = assign_var(p, tg, v, t);
        JInfo *i = inf_info(p, tg);
        i->var = v;
        i->type = vt;
        if (!vt) inf_unknown(p, tg, "unknown type of the assigned value");
        return;
    }
    case AST_TUPLE:
    case AST_LIST: {
        int len = tg->u.seq.elts.len;
        if (t && (t->kind != JK_TUPLE || t->n != len)) {
            if (t->kind == JK_TUPLE)
                inf_fail(p, tg, "cannot unpack %s into %d variable%s", tname(t), len, len == 1 ? "" : "s");
            inf_fail(p, tg, "cannot unpack %s", tname(t));
        }
        for (int k = 0; k < len; k++) {
            AstNode *e = tg->u.seq.elts.items[k];
            if (e->kind == AST_STARRED) inf_fail(p, e, "starred assignment is not supported in kernels");
            assign_target(p, e, t ? t->elems[k] : NULL);
        }
        inf_set_type(p, tg, t);
        if (!t) inf_unknown(p, tg, "unknown type of the assigned value");
        return;
    }
    case AST_SUBSCRIPT: {
        const JType *base = inf_value(p, tg->u.subscript.value);
        if (!base) {
            if (tg->u.subscript.index->kind != AST_SLICE) inf_expr(p, tg->u.subscript.index);
            inf_unknown(p, tg, "unknown array");
            return;
        }
        if (base->kind == JK_TUPLE) inf_fail(p, tg, "tuples are immutable: cannot assign to an element");
        if (base->kind != JK_ARRAY) inf_fail(p, tg, "'%s' does not support item assignment", tname(base));
        if (inf_has_slice(tg->u.subscript.index)) { /* a[1:5] = x: infer_slice.c */
            inf_slice_store(p, tg, base, t);
            return;
        }
        if (!inf_array_index(p, tg, base, tg->u.subscript.index, false)) {
            inf_unknown(p, tg, "unknown index");
            return;
        }
        if (t && !jt_is_scalar(t) && !(jt_is_complex(t) && nd_is_complex_dtype(base->dtype)))
            inf_fail(p, tg, "cannot store %s into %s", tname(t), tname(base));
        inf_set_type(p, tg, S(p, (JKind)base->dtype));
        return;
    }
    case AST_ATTRIBUTE: inf_fail(p, tg, "cannot assign to an attribute in kernels");
    case AST_STARRED: inf_fail(p, tg, "starred assignment is not supported in kernels");
    default: inf_fail(p, tg, "cannot assign to %s", ast_kind_name(tg->kind));
    }
}

/* x op= v: computed in the binop type, stored converted to the target's
** type (a variable widens by unification; an array element keeps its dtype). */
static void augassign_stmt(Pass *p, AstNode *s) {
    AstNode *tg = s->u.augassign.target;
    const JType *vt = inf_value(p, s->u.augassign.value);
    const JType *cur;
    if (tg->kind == AST_NAME) {
        int v = inf_find_var(p->fx, tg->u.name.id);
        if (v < 0) inf_fail(p, tg, "cannot assign to '%s'", tg->u.name.id);
        cur = p->fx->f.vars[v].type;
        JInfo *i = inf_info(p, tg);
        i->var = v;
        i->type = cur;
        if (!cur) {
            inf_unknown(p, tg, "cannot determine the type of the augmented variable (is it assigned before?)");
            return;
        }
    } else if (tg->kind == AST_SUBSCRIPT) {
        cur = inf_expr(p, tg); /* element read: type-checks the base and index */
        if (!cur) return;
    } else {
        inf_fail(p, tg, "cannot use augmented assignment on %s in kernels", ast_kind_name(tg->kind));
    }
    if (!vt) {
        inf_unknown(p, s, "unknown operand");
        return;
    }
    const JType *op;
    const JType *r = inf_binop_type(p, s, s->u.augassign.op, cur, vt, &op);
    JInfo *i = inf_info(p, s);
    i->op_type = op;
    if (tg->kind == AST_NAME) {
        int v = inf_find_var(p->fx, tg->u.name.id);
        const JType *u = assign_var(p, tg, v, r);
        inf_info(p, tg)->type = u;
        inf_set_type(p, s, u);
    } else {
        inf_set_type(p, s, cur); /* stored back converted to the element type */
    }
}

/* Kernels return nothing; a device function's return type is the
** unification of all its returned values. */
static void return_stmt(Pass *p, AstNode *s) {
    FuncX *fx = p->fx;
    AstNode *v = s->u.ret.value;
    if (!v || v->kind == AST_NONE) {
        if (v) inf_set_type(p, v, S(p, JK_NONE));
        if (!fx->f.is_kernel) fx->ret_none = true;
        inf_set_type(p, s, S(p, JK_VOID));
        return;
    }
    if (fx->f.is_kernel) inf_fail(p, s, "kernels cannot return a value");
    const JType *t = inf_value(p, v);
    if (!t) {
        inf_unknown(p, s, "unknown return value");
        return;
    }
    if (!fx->f.ret) {
        fx->f.ret = t;
        p->changed = true;
    } else {
        const JType *u = inf_unify(p, fx->f.ret, t);
        if (!u) inf_fail(p, s, "cannot unify return types %s and %s", tname(fx->f.ret), tname(t));
        if (u != fx->f.ret) {
            fx->f.ret = u;
            p->changed = true;
        }
    }
    inf_set_type(p, s, fx->f.ret);
}

/* One statement; constructs kernels cannot have are errors naming them. */
static void stmt(Pass *p, AstNode *s) {
    switch (s->kind) {
    case AST_EXPR: {
        AstNode *v = s->u.expr.value;
        if (v->kind == AST_STR) inf_set_type(p, v, S(p, JK_STRING)); /* docstring / string statement: no code */
        else inf_expr(p, v);
        return;
    }
    case AST_ASSIGN: {
        const JType *t = inf_value(p, s->u.assign.value);
        for (int k = 0; k < s->u.assign.targets.len; k++) assign_target(p, s->u.assign.targets.items[k], t);
        return;
    }
    case AST_ANNASSIGN:
        if (s->u.annassign.value) assign_target(p, s->u.annassign.target, inf_value(p, s->u.annassign.value));
        return;
    case AST_AUGASSIGN: augassign_stmt(p, s); return;
    case AST_IF: {
        int known = inf_static_condition(p, s->u.if_.test); /* `x is None`: one branch (infer_is.c) */
        if (known >= 0) {
            stmts(p, known ? &s->u.if_.body : &s->u.if_.orelse);
            return;
        }
        inf_condition(p, s->u.if_.test);
        stmts(p, &s->u.if_.body);
        stmts(p, &s->u.if_.orelse);
        return;
    }
    case AST_WHILE:
        if (s->u.while_.orelse.len) inf_fail(p, s, "while ... else is not supported in kernels");
        inf_condition(p, s->u.while_.test);
        stmts(p, &s->u.while_.body);
        return;
    case AST_FOR: {
        AstNode *it = s->u.for_.iter;
        const JType *item = NULL;
        if (inf_for_iter(p, s, &item)) { /* arrays, tuples, enumerate, zip (infer_iter.c) */
            assign_target(p, s->u.for_.target, item);
            stmts(p, &s->u.for_.body);
            stmts(p, &s->u.for_.orelse);
            return;
        }
        if (s->u.for_.orelse.len) inf_fail(p, s, "for ... else is not supported in kernels");
        const JType *t = inf_expr(p, it);
        if (t && t->kind != JK_RANGE)
            inf_fail(p, it, "for loops in kernels can only iterate over range(...), not %s", tname(t));
        AstNode *tg = s->u.for_.target;
        if (tg->kind != AST_NAME) inf_fail(p, tg, "the target of a for loop over range must be a name");
        assign_target(p, tg, t ? S(p, JK_INT64) : NULL);
        stmts(p, &s->u.for_.body);
        return;
    }
    case AST_BREAK:
    case AST_CONTINUE:
    case AST_PASS: return;
    case AST_RETURN: return_stmt(p, s); return;
    case AST_ASSERT: inf_condition(p, s->u.assert_.test); return; /* checked for types only; not executed */
    case AST_FUNCTIONDEF: inf_fail(p, s, "nested function definitions are not supported in kernels");
    case AST_CLASSDEF: inf_fail(p, s, "class definitions are not supported in kernels");
    case AST_TRY: inf_fail(p, s, "try statements are not supported in kernels");
    case AST_WITH: inf_fail(p, s, "with statements are not supported in kernels");
    case AST_RAISE: inf_raise_stmt(p, s); return; /* infer_raise.c */
    case AST_DELETE: inf_fail(p, s, "del is not supported in kernels");
    case AST_GLOBAL: inf_fail(p, s, "global declarations are not supported in kernels");
    case AST_NONLOCAL: inf_fail(p, s, "nonlocal declarations are not supported in kernels");
    case AST_IMPORT:
    case AST_IMPORTFROM: inf_fail(p, s, "import is not supported inside kernels (import at module level)");
    default: inf_fail(p, s, "%s statements are not supported in kernels", ast_kind_name(s->kind));
    }
}

static void stmts(Pass *p, AstList *l) {
    for (int k = 0; k < l->len; k++) {
        stmt(p, l->items[k]);
        if (inf_static_exit(p, l->items[k])) break; /* `if x is None: return`: the rest cannot run */
    }
}
/* ----------------------------------------------------- specializations */

static uint64_t fnv(uint64_t h, const char *s) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A unique, valid C/PTX identifier: name + kind + hash of the types. */
static void make_mangled(JFunc *f) {
    uint64_t h = 1469598103934665603ull;
    char tn[160];
    Proto *pr = f->fn->proto;
    h = fnv(h, pr->qualname ? pr->qualname->chars : f->name);
    if (pr->source && pr->source->filename) h = fnv(h, pr->source->filename->chars);
    snprintf(tn, sizeof tn, ":%d:%d:%d", f->def ? f->def->line : 0, f->def ? f->def->col : 0, f->is_kernel);
    h = fnv(h, tn);
    for (int i = 0; i < f->nargs; i++) {
        h = fnv(h, jt_name(f->argtypes[i], tn, sizeof tn));
        h = fnv(h, ";");
    }
    char nm[80];
    size_t k = 0;
    for (const char *s = f->name; *s && k < sizeof nm - 1; s++) {
        char ch = *s;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (ch >= '0' && ch <= '9');
        nm[k++] = ok ? ch : '_';
    }
    nm[k] = 0;
    if (!k || (nm[0] >= '0' && nm[0] <= '9')) {
        memmove(nm + 1, nm, k + 1 < sizeof nm - 1 ? k + 1 : sizeof nm - 2);
        nm[0] = '_';
        nm[sizeof nm - 1] = 0;
    }
    snprintf(f->mangled, sizeof f->mangled, "%s_%s_%016llx", nm, f->is_kernel ? "kernel" : "device",
             (unsigned long long)h);
}

/* Runs passes over fx until its types are fixed, then the strict pass. */
static void infer_function(Ctx *c, FuncX *fx) {
    Pass pass = {c, fx, false, false}, *p = &pass;
    fx->state = FS_ITER;
    for (int round = 0;; round++) {
        if (round >= MAX_PASSES) inf_fail(p, fx->f.def, "type inference did not converge");
        p->strict = false;
        p->changed = false;
        fx->blocked = false;
        fx->f.ncallees = 0;
        fx->f.nlaunches = 0;
        stmts(p, &fx->f.def->u.func.body);
        if (p->changed) continue;
        if (fx->blocked) {
            /* mutual recursion: a function we call is still iterating and its
               return type is unknown; it re-infers us once it knows more */
            fx->state = FS_TAINTED;
            return;
        }
        fx->state = FS_STRICT;
        fx->tainted = false;
        p->strict = true;
        fx->f.ncallees = 0;
        fx->f.nlaunches = 0;
        stmts(p, &fx->f.def->u.func.body);
        if (!p->changed) break;
        fx->state = FS_ITER;
    }
    if (fx->ret_none && fx->f.ret && fx->f.ret->kind != JK_VOID)
        inf_fail(p, fx->f.def, "function returns both None and a value of type %s (optional values are not supported)",
                 tname(fx->f.ret));
    if (!fx->f.ret) fx->f.ret = jt_scalar(c->vm, JK_VOID);
    fx->state = fx->tainted ? FS_TAINTED : FS_DONE;
}

static bool same_types(const JFunc *f, int n, const JType *const *t) {
    if (f->nargs != n) return false;
    for (int i = 0; i < n; i++)
        if (f->argtypes[i] != t[i]) return false;
    return true;
}

/* How deeply tuples nest in t (0 for scalars and arrays). */
static int type_depth(const JType *t) {
    int d = 0;
    for (int i = 0; t->kind == JK_TUPLE && i < t->n; i++) {
        if (i > 0 && t->elems[i] == t->elems[i - 1]) continue; /* interned: same subtree */
        int e = type_depth(t->elems[i]);
        if (e > d) d = e;
        if (d > MAX_TUPLE_DEPTH) break;
    }
    return t->kind == JK_TUPLE ? d + 1 : 0;
}

/* A new FuncX for fn on argument types (params bound, locals collected). */
static FuncX *new_func(Ctx *c, Pass *caller, AstNode *at, Function *fn, int nargs, const JType *const *argtypes,
                       bool is_kernel) {
    JitArena *ja = c->ja;
    FuncX *fx = ja_alloc(ja, sizeof *fx);
    struct JInfoMap *m = ja_alloc(ja, sizeof *m);
    const JType **ats = ja_alloc(ja, (size_t)(nargs ? nargs : 1) * sizeof *ats);
    if (!fx || !m || !ats || !ja_add_func(ja, &fx->f)) {
        if (caller) inf_fail(caller, at, "out of memory");
        snprintf(c->err, c->errsize, "out of memory");
        longjmp(c->jb, 1);
    }
    for (int i = 0; i < nargs; i++) ats[i] = argtypes[i];
    JFunc *f = &fx->f;
    f->fn = fn;
    f->def = fn->proto ? fn->proto->ast : NULL;
    f->name = ja_strdup(ja, fn->name ? fn->name->chars : "<kernel>");
    if (!f->name) f->name = "<kernel>";
    f->nargs = nargs;
    f->argtypes = ats;
    f->is_kernel = is_kernel;
    f->infos = m;
    f->arena = ja;
    Pass pass = {c, fx, true, false}, *p = &pass;
    if (!f->def || (f->def->kind != AST_FUNCTIONDEF && f->def->kind != AST_LAMBDA))
        inf_fail(p, NULL, "the function has no syntax tree to compile");
    if (fn->proto->flags & PROTO_GENERATOR) inf_fail(p, f->def, "generators cannot be compiled for the GPU");
    AstParams *ps = &f->def->u.func.params;
    if (ps->vararg || ps->kwarg || ps->nkwonly)
        inf_fail(p, f->def, "*args, **kwargs and keyword-only parameters are not supported in kernels");
    if (ps->nparams != nargs)
        inf_fail(caller ? caller : p, caller ? at : f->def, "'%s' takes %d argument%s, got %d%s", f->name,
                 ps->nparams, ps->nparams == 1 ? "" : "s", nargs,
                 nargs < ps->nparams && fn->defaults ? " (default argument values are not supported in kernels yet)"
                                                     : "");
    for (int i = 0; i < nargs; i++) {
        if (argtypes[i] && type_depth(argtypes[i]) > MAX_TUPLE_DEPTH)
            inf_fail(caller ? caller : p, caller ? at : f->def, "argument %d of '%s' nests tuples too deeply", i + 1,
                     f->name);
        if (!argtypes[i] || (!inf_is_value_type(argtypes[i]) && !inf_is_static_arg(argtypes[i], is_kernel)))
            inf_fail(p, f->def, "argument %d has type %s, which kernels cannot take", i + 1,
                     argtypes[i] ? tname(argtypes[i]) : "?");
        add_local(p, ps->params[i].name);
        if (f->vars[i].param_index >= 0 || inf_find_var(fx, ps->params[i].name) != i)
            inf_fail(p, f->def, "duplicate parameter '%s'", ps->params[i].name);
        f->vars[i].param_index = i;
        f->vars[i].type = argtypes[i];
    }
    fx->nparams = nargs;
    prescan(p, &f->def->u.func.body);
    inf_check_defined(p);
    fx->memo_cap = 0; /* it served as the vars capacity; the memo starts empty */
    if (is_kernel || !fx->has_value_return) f->ret = jt_scalar(c->vm, JK_VOID);
    make_mangled(f);
    return fx;
}

/* The cached specialization (re-inferred when it depended on a function that
** was still iterating), or a new one inferred now. */
FuncX *inf_specialize(Pass *caller, AstNode *at, Function *fn, int nargs, const JType *const *argtypes,
                         bool is_kernel) {
    Ctx *c = caller->c;
    JitArena *ja = c->ja;
    for (int i = 0; i < ja->nfuncs; i++) {
        JFunc *f = ja->funcs[i];
        if (f->fn != fn || f->is_kernel != is_kernel || !same_types(f, nargs, argtypes)) continue;
        FuncX *fx = (FuncX *)f;
        if (fx->state == FS_TAINTED) {
            c->depth++;
            infer_function(c, fx);
            c->depth--;
        }
        return fx;
    }
    if (ja->nfuncs >= MAX_SPECS) inf_fail(caller, at, "too many device-function specializations");
    if (c->depth >= MAX_DEPTH) inf_fail(caller, at, "device-function calls nest too deeply");
    FuncX *fx = new_func(c, caller, at, fn, nargs, argtypes, is_kernel);
    c->depth++;
    infer_function(c, fx);
    c->depth--;
    return fx;
}
/* ------------------------------------------------------------- public API */

JFunc *jit_infer(VM *vm, Function *fn, int nargs, const JType *const *argtypes, bool is_kernel, char *err,
                 size_t errsize) {
    char dummy[8];
    if (!err || !errsize) {
        err = dummy;
        errsize = sizeof dummy;
    }
    err[0] = 0;
    if (!vm || !fn || nargs < 0 || (nargs && !argtypes)) {
        snprintf(err, errsize, "jit_infer: bad arguments");
        return NULL;
    }
    Ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    c->vm = vm;
    c->err = err;
    c->errsize = errsize;
    c->ja = ja_new();
    if (!c->ja) {
        free(c);
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    if (setjmp(c->jb)) {
        ja_free(c->ja);
        free(c);
        return NULL;
    }
    FuncX *fx = new_func(c, NULL, NULL, fn, nargs, argtypes, is_kernel);
    c->ja->root = &fx->f;
    infer_function(c, fx);
    /* specializations left tainted (mutual recursion) were re-typed with final
       return types by the strict pass of the root */
    JFunc *root = &fx->f;
    free(c);
    return root;
}

void jf_free(JFunc *f) {
    if (!f || !f->arena || f->arena->root != f) return;
    ja_free(f->arena);
}

JInfo *jf_info(const JFunc *f, const AstNode *n) {
    return f ? jim_get(f->infos, n) : NULL;
}

JVar *jf_var(const JFunc *f, const char *name) {
    if (!f || !name) return NULL;
    for (int i = 0; i < f->nvars; i++)
        if (f->vars[i].name == name || strcmp(f->vars[i].name, name) == 0) return &f->vars[i];
    return NULL;
}
