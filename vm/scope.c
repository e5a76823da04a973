/*
** scope.c — the scope pass. One walk over the AST records, per scope, which
** names are bound, used, declared global/nonlocal; then an analysis pass
** (CPython 3.11's symtable rules) decides for each name whether it is a
** local register, a cell, a closure slot, a global or a class-namespace
** name, and assigns registers: parameters first, then the other locals.
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "scope.h"
#include "cstack.h"

#define MAX_DEPTH 4000 /* above the parser's MAX_AST_DEPTH: the C stack guard is what stops deeper trees */

typedef struct Walker {
    VM *vm;
    SyntaxErr *err;
    bool failed;
    Scope *cur;
    int depth;
} Walker;

void *comp_xrealloc(VM *vm, void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        vm_raise_kind(vm, MemoryError, "out of memory");
    return q;
}

/* Records the first error only (like CPython, compilation stops there). */
static void set_error(SyntaxErr *err, int line, int col, int end_line, int end_col, const char *fmt,
                      va_list ap)
{
    err->line = line;
    err->col = col;
    err->end_col = (end_line == line && end_col > col) ? end_col : 0;
    err->indentation = false;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void werror(Walker *w, AstNode *at, const char *fmt, ...)
{
    if (w->failed)
        return;
    w->failed = true;
    va_list ap;
    va_start(ap, fmt);
    set_error(w->err, at ? at->line : 1, at ? at->col : 1, at ? at->end_line : 0, at ? at->end_col : 0,
              fmt, ap);
    va_end(ap);
}

/* An error at the global/nonlocal statement that declared sy, underlined
** whole as CPython does. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void werror_at(Walker *w, const Symbol *sy, const char *fmt, ...)
{
    if (w->failed)
        return;
    w->failed = true;
    va_list ap;
    va_start(ap, fmt);
    set_error(w->err, sy->line, sy->col, sy->end_line, sy->end_col, fmt, ap);
    va_end(ap);
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* ---------------------------------------------------------------- symbols */

Symbol *scope_lookup(Scope *s, const char *name)
{
    if (!s->tablecap)
        return NULL;
    uint32_t h = name_hash(name);
    int mask = s->tablecap - 1;
    for (int i = (int)(h & (uint32_t)mask);; i = (i + 1) & mask) {
        int k = s->table[i];
        if (k < 0)
            return NULL;
        if (s->syms[k].hash == h && strcmp(s->syms[k].name, name) == 0)
            return &s->syms[k];
    }
}

static void table_insert(Scope *s, int k)
{
    int mask = s->tablecap - 1;
    int i = (int)(s->syms[k].hash & (uint32_t)mask);
    while (s->table[i] >= 0)
        i = (i + 1) & mask;
    s->table[i] = k;
}

/* Returns the symbol for name, creating it (flags 0) if needed. The pointer
** is valid until the next symbol is added to s. */
static Symbol *sym_get(VM *vm, Scope *s, const char *name)
{
    Symbol *sy = scope_lookup(s, name);
    if (sy)
        return sy;
    if (s->nsyms == s->capsyms) {
        s->capsyms = s->capsyms ? s->capsyms * 2 : 16;
        s->syms = comp_xrealloc(vm, s->syms, (size_t)s->capsyms * sizeof(Symbol));
    }
    if ((s->nsyms + 1) * 2 > s->tablecap) {
        s->tablecap = s->tablecap ? s->tablecap * 2 : 32;
        s->table = comp_xrealloc(vm, s->table, (size_t)s->tablecap * sizeof(int));
        for (int i = 0; i < s->tablecap; i++)
            s->table[i] = -1;
        for (int k = 0; k < s->nsyms; k++)
            table_insert(s, k);
    }
    int k = s->nsyms++;
    sy = &s->syms[k];
    memset(sy, 0, sizeof *sy);
    sy->name = name;
    sy->hash = name_hash(name);
    sy->kind = SYM_GLOBAL;
    sy->free_index = -1;
    table_insert(s, k);
    return sy;
}

/* Adds flags to name in the current scope, with CPython's checks for
** duplicate parameters and comprehension iteration variables. */
static void add_def(Walker *w, Scope *s, const char *name, int flag, AstNode *at)
{
    Symbol *sy = sym_get(w->vm, s, name);
    if ((flag & DEF_PARAM) && (sy->flags & DEF_PARAM)) {
        werror(w, at, "duplicate argument '%s' in function definition", name);
        return;
    }
    int val = sy->flags | flag;
    if (s->comp_iter_target) {
        if (val & (DEF_GLOBAL | DEF_NONLOCAL)) {
            werror(w, at, "comprehension inner loop cannot rebind assignment expression target '%s'",
                   name);
            return;
        }
        val |= DEF_COMP_ITER;
    }
    sy->flags = val;
}

/* ----------------------------------------------------------------- scopes */

static Scope *scope_new(Walker *w, ScopeKind kind, AstNode *node, const char *name)
{
    Scope *s = comp_xrealloc(w->vm, NULL, sizeof(Scope));
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->node = node;
    s->name = name;
    Scope *p = w->cur;
    s->parent = p;
    if (p) {
        if (p->nchildren == p->capchildren) {
            p->capchildren = p->capchildren ? p->capchildren * 2 : 4;
            p->children = comp_xrealloc(w->vm, p->children, (size_t)p->capchildren * sizeof(Scope *));
        }
        p->children[p->nchildren++] = s;
    }
    return s;
}

void scope_free(Scope *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nchildren; i++)
        scope_free(s->children[i]);
    free(s->children);
    free(s->syms);
    free(s->table);
    free(s->varnames);
    free(s->cells);
    free(s->freevars);
    for (int i = 0; i < s->nowned; i++)
        free(s->owned[i]);
    free(s->owned);
    free(s);
}

Scope *scope_child(Scope *s, AstNode *node)
{
    if (s->child_cursor < s->nchildren && s->children[s->child_cursor]->node == node)
        return s->children[s->child_cursor++];
    for (int i = 0; i < s->nchildren; i++)
        if (s->children[i]->node == node) {
            s->child_cursor = i + 1;
            return s->children[i];
        }
    return NULL;
}

/* ------------------------------------------------------------------- walk */

static void visit_expr(Walker *w, AstNode *e);
static void visit_stmts(Walker *w, AstList *l);

static void visit_exprs(Walker *w, AstList *l)
{
    for (int i = 0; i < l->len; i++)
        visit_expr(w, l->items[i]);
}

/* An assignment / del target: names are bound, the rest is evaluated. */
static void visit_target(Walker *w, AstNode *t)
{
    if (!t || w->failed)
        return;
    switch (t->kind) {
    case AST_NAME:
        add_def(w, w->cur, t->u.name.id, DEF_ASSIGNED, t);
        break;
    case AST_TUPLE:
    case AST_LIST:
        for (int i = 0; i < t->u.seq.elts.len; i++)
            visit_target(w, t->u.seq.elts.items[i]);
        break;
    case AST_STARRED:
        visit_target(w, t->u.starred.value);
        break;
    default:
        visit_expr(w, t); /* attribute / subscript: evaluated; bad targets reported by the compiler */
        break;
    }
}

static void visit_params(Walker *w, Scope *s, AstParams *ps, AstNode *at)
{
    for (int i = 0; i < ps->nparams + ps->nkwonly; i++)
        add_def(w, s, ps->params[i].name, DEF_PARAM | DEF_ASSIGNED, at);
    if (ps->vararg)
        add_def(w, s, ps->vararg->name, DEF_PARAM | DEF_ASSIGNED, at);
    if (ps->kwarg)
        add_def(w, s, ps->kwarg->name, DEF_PARAM | DEF_ASSIGNED, at);
    s->nparams = ps->nparams;
    s->nkwonly = ps->nkwonly;
    s->varargs = ps->vararg != NULL;
    s->varkw = ps->kwarg != NULL;
}

/* Defaults are evaluated in the enclosing scope. */
static void visit_defaults(Walker *w, AstParams *ps)
{
    for (int i = 0; i < ps->nparams + ps->nkwonly; i++)
        if (ps->params[i].default_)
            visit_expr(w, ps->params[i].default_);
}

/* def and lambda: a new function scope with the parameters, then the body. */
static void visit_function(Walker *w, AstNode *f)
{
    visit_defaults(w, &f->u.func.params);
    Scope *s = scope_new(w, SCOPE_FUNCTION, f, f->u.func.name);
    s->coroutine = f->kind == AST_FUNCTIONDEF && f->u.func.is_async;
    Scope *saved = w->cur;
    w->cur = s;
    visit_params(w, s, &f->u.func.params, f);
    visit_stmts(w, &f->u.func.body);
    w->cur = saved;
}

/* Comprehension: the first iterable belongs to the enclosing scope, the rest
** to a function scope whose only parameter is the iterator ".0". */
static void visit_comprehension(Walker *w, AstNode *e)
{
    AstList *gens = &e->u.comp.generators;
    if (gens->len == 0)
        return;
    AstNode *first = gens->items[0];
    w->cur->comp_iter_expr++;
    visit_expr(w, first->u.compfor.iter);
    w->cur->comp_iter_expr--;
    const char *name = e->kind == AST_LISTCOMP  ? "<listcomp>"
                       : e->kind == AST_SETCOMP ? "<setcomp>"
                       : e->kind == AST_DICTCOMP ? "<dictcomp>"
                                                : "<genexpr>";
    Scope *s = scope_new(w, SCOPE_COMPREHENSION, e, name);
    Scope *saved = w->cur;
    w->cur = s;
    add_def(w, s, ".0", DEF_PARAM | DEF_ASSIGNED, e);
    s->nparams = 1;
    if (e->kind == AST_GENEXP)
        s->generator = true;
    for (int i = 0; i < gens->len && !w->failed; i++) {
        AstNode *g = gens->items[i];
        if (g->u.compfor.is_async)
            s->coroutine = true;
        s->comp_iter_target++;
        visit_target(w, g->u.compfor.target);
        s->comp_iter_target--;
        if (i > 0) {
            s->comp_iter_expr++;
            visit_expr(w, g->u.compfor.iter);
            s->comp_iter_expr--;
        }
        visit_exprs(w, &g->u.compfor.ifs);
    }
    if (e->kind == AST_DICTCOMP)
        visit_expr(w, e->u.comp.value);
    visit_expr(w, e->u.comp.elt);
    w->cur = saved;
    /* the enclosing comprehension awaits this one */
    if (s->coroutine && e->kind != AST_GENEXP && saved->kind == SCOPE_COMPREHENSION)
        saved->coroutine = true;
}

/* x := v inside a comprehension binds x in the nearest enclosing function
** (as a free variable of the comprehension) or module. */
static void extend_namedexpr_scope(Walker *w, AstNode *e, const char *name)
{
    Scope *cur = w->cur;
    for (Scope *s = cur; s; s = s->parent) {
        if (s->kind == SCOPE_COMPREHENSION) {
            Symbol *sy = scope_lookup(s, name);
            if (sy && (sy->flags & DEF_COMP_ITER)) {
                werror(w, e, "assignment expression cannot rebind comprehension iteration variable '%s'",
                       name);
                return;
            }
            continue;
        }
        if (s->kind == SCOPE_FUNCTION) {
            Symbol *sy = scope_lookup(s, name);
            int flag = (sy && (sy->flags & DEF_GLOBAL)) ? DEF_GLOBAL : DEF_NONLOCAL;
            add_def(w, cur, name, flag, e);
            sy = scope_lookup(cur, name);
            if (sy) {
                sy->line = e->line;
                sy->col = e->col;
                sy->end_line = e->end_line;
                sy->end_col = e->end_col;
            }
            add_def(w, s, name, DEF_ASSIGNED, e);
            return;
        }
        if (s->kind == SCOPE_MODULE) {
            add_def(w, cur, name, DEF_GLOBAL, e);
            add_def(w, s, name, DEF_ASSIGNED, e);
            return;
        }
        werror(w, e, "assignment expression within a comprehension cannot be used in a class body");
        return;
    }
}

static const char *comp_kind_name(AstKind k)
{
    switch (k) {
    case AST_LISTCOMP: return "list comprehension";
    case AST_SETCOMP: return "set comprehension";
    case AST_DICTCOMP: return "dict comprehension";
    default: return "generator expression";
    }
}

static void visit_expr(Walker *w, AstNode *e)
{
    if (!e || w->failed)
        return;
    if (c_stack_exhausted()) {
        werror(w, e, "maximum recursion depth exceeded during compilation");
        w->err->recursion = true;
        return;
    }
    if (++w->depth > MAX_DEPTH) {
        werror(w, e, "too many nested expressions");
        w->depth--;
        return;
    }
    switch (e->kind) {
    case AST_NAME:
        add_def(w, w->cur, e->u.name.id, DEF_USED, e);
        /* zero-argument super() needs the __class__ cell */
        if ((w->cur->kind == SCOPE_FUNCTION || w->cur->kind == SCOPE_COMPREHENSION) &&
            strcmp(e->u.name.id, "super") == 0)
            add_def(w, w->cur, "__class__", DEF_USED, e);
        break;
    case AST_INT: case AST_FLOAT: case AST_IMAG: case AST_STR: case AST_BYTES: case AST_BIGINT:
    case AST_NONE: case AST_TRUE: case AST_FALSE: case AST_ELLIPSIS:
        break;
    case AST_FSTRING:
        visit_exprs(w, &e->u.fstring.parts);
        break;
    case AST_FORMATTED:
        visit_expr(w, e->u.formatted.value);
        visit_expr(w, e->u.formatted.spec);
        break;
    case AST_BINOP:
        visit_expr(w, e->u.binop.left);
        visit_expr(w, e->u.binop.right);
        break;
    case AST_UNARYOP:
        visit_expr(w, e->u.unary.operand);
        break;
    case AST_BOOLOP:
        visit_exprs(w, &e->u.boolop.values);
        break;
    case AST_COMPARE:
        visit_expr(w, e->u.compare.left);
        visit_exprs(w, &e->u.compare.comparators);
        break;
    case AST_CALL:
        visit_expr(w, e->u.call.func);
        visit_exprs(w, &e->u.call.args);
        for (int i = 0; i < e->u.call.keywords.len; i++)
            visit_expr(w, e->u.call.keywords.items[i]->u.keyword.value);
        break;
    case AST_ATTRIBUTE:
        visit_expr(w, e->u.attr.value);
        break;
    case AST_SUBSCRIPT:
        visit_expr(w, e->u.subscript.value);
        visit_expr(w, e->u.subscript.index);
        break;
    case AST_SLICE:
        visit_expr(w, e->u.slice.lower);
        visit_expr(w, e->u.slice.upper);
        visit_expr(w, e->u.slice.step);
        break;
    case AST_LIST: case AST_TUPLE: case AST_SET:
        visit_exprs(w, &e->u.seq.elts);
        break;
    case AST_DICT:
        for (int i = 0; i < e->u.dict.values.len; i++) {
            visit_expr(w, e->u.dict.keys.items[i]);
            visit_expr(w, e->u.dict.values.items[i]);
        }
        break;
    case AST_STARRED:
        visit_expr(w, e->u.starred.value);
        break;
    case AST_LISTCOMP: case AST_SETCOMP: case AST_GENEXP: case AST_DICTCOMP:
        visit_comprehension(w, e);
        break;
    case AST_LAMBDA:
        visit_function(w, e);
        break;
    case AST_IFEXP:
        visit_expr(w, e->u.ifexp.test);
        visit_expr(w, e->u.ifexp.body);
        visit_expr(w, e->u.ifexp.orelse);
        break;
    case AST_YIELD:
    case AST_YIELDFROM:
        visit_expr(w, e->u.yield.value);
        if (w->cur->kind == SCOPE_COMPREHENSION) {
            werror(w, e, "'yield' inside %s", comp_kind_name(w->cur->node->kind));
            break;
        }
        if (w->cur->kind == SCOPE_FUNCTION) {
            w->cur->generator = true;
            break;
        }
        /* module or class body: a compile-time error, before anything runs */
        werror(w, e, "'yield' outside function");
        break;
    case AST_AWAIT:
        visit_expr(w, e->u.yield.value);
        if (w->cur->kind == SCOPE_COMPREHENSION)
            w->cur->coroutine = true;
        break;
    case AST_NAMEDEXPR: {
        AstNode *t = e->u.named.target;
        if (w->cur->comp_iter_expr > 0) {
            werror(w, e, "assignment expression cannot be used in a comprehension iterable expression");
            break;
        }
        if (t->kind == AST_NAME && w->cur->kind == SCOPE_COMPREHENSION)
            extend_namedexpr_scope(w, e, t->u.name.id);
        else
            w->cur->has_walrus = true;
        visit_expr(w, e->u.named.value);
        visit_target(w, t);
        break;
    }
    default:
        break;
    }
    w->depth--;
}

static void visit_decl(Walker *w, AstNode *s, bool nonlocal)
{
    const char *what = nonlocal ? "nonlocal" : "global";
    for (int i = 0; i < s->u.names.len && !w->failed; i++) {
        const char *name = s->u.names.names[i];
        Symbol *sy = scope_lookup(w->cur, name);
        int cur = sy ? sy->flags : 0;
        if (cur & (DEF_PARAM | DEF_ASSIGNED | DEF_USED | DEF_ANNOT)) {
            if (cur & DEF_PARAM)
                werror(w, s, "name '%s' is parameter and %s", name, what);
            else if (cur & DEF_USED)
                werror(w, s, "name '%s' is used prior to %s declaration", name, what);
            else if (cur & DEF_ANNOT)
                werror(w, s, "annotated name '%s' can't be %s", name, what);
            else
                werror(w, s, "name '%s' is assigned to before %s declaration", name, what);
            return;
        }
        add_def(w, w->cur, name, nonlocal ? DEF_NONLOCAL : DEF_GLOBAL, s);
        sy = scope_lookup(w->cur, name);
        if (sy && !sy->line) {
            sy->line = s->line;
            sy->col = s->col;
            sy->end_line = s->end_line;
            sy->end_col = s->end_col;
        }
    }
}

/* A match pattern: captures bind names, values and classes are evaluated. */
static void visit_pattern(Walker *w, AstNode *p)
{
    if (!p || w->failed)
        return;
    if (c_stack_exhausted()) {
        werror(w, p, "maximum recursion depth exceeded during compilation");
        w->err->recursion = true;
        return;
    }
    switch (p->kind) {
    case AST_MATCH_VALUE: case AST_MATCH_SINGLETON: visit_expr(w, p->u.pat_value.value); break;
    case AST_MATCH_SEQUENCE: case AST_MATCH_OR:
        for (int i = 0; i < p->u.pat_seq.patterns.len; i++)
            visit_pattern(w, p->u.pat_seq.patterns.items[i]);
        break;
    case AST_MATCH_MAPPING:
        for (int i = 0; i < p->u.pat_map.keys.len; i++) {
            visit_expr(w, p->u.pat_map.keys.items[i]);
            visit_pattern(w, p->u.pat_map.patterns.items[i]);
        }
        if (p->u.pat_map.rest)
            add_def(w, w->cur, p->u.pat_map.rest, DEF_ASSIGNED, p);
        break;
    case AST_MATCH_CLASS:
        visit_expr(w, p->u.pat_class.cls);
        for (int i = 0; i < p->u.pat_class.patterns.len; i++)
            visit_pattern(w, p->u.pat_class.patterns.items[i]);
        for (int i = 0; i < p->u.pat_class.kwd_patterns.len; i++)
            visit_pattern(w, p->u.pat_class.kwd_patterns.items[i]);
        break;
    case AST_MATCH_STAR: case AST_MATCH_AS:
        visit_pattern(w, p->u.pat_as.pattern);
        if (p->u.pat_as.name)
            add_def(w, w->cur, p->u.pat_as.name, DEF_ASSIGNED, p);
        break;
    default: break;
    }
}

/* The name an import binds: "a.b.c" binds "a" unless renamed. */
static const char *import_binding(Walker *w, AstNode *alias, bool from)
{
    if (alias->u.alias.asname)
        return alias->u.alias.asname;
    const char *n = alias->u.alias.name;
    const char *dot = strchr(n, '.');
    if (from || !dot)
        return n;
    size_t len = (size_t)(dot - n);
    Scope *root = w->cur;
    while (root->parent)
        root = root->parent;
    root->owned = comp_xrealloc(w->vm, root->owned, (size_t)(root->nowned + 1) * sizeof(char *));
    char *buf = comp_xrealloc(w->vm, NULL, len + 1);
    memcpy(buf, n, len);
    buf[len] = 0;
    root->owned[root->nowned++] = buf;
    return buf;
}

static void visit_stmt(Walker *w, AstNode *s)
{
    if (!s || w->failed)
        return;
    if (c_stack_exhausted()) {
        werror(w, s, "maximum recursion depth exceeded during compilation");
        w->err->recursion = true;
        return;
    }
    if (++w->depth > MAX_DEPTH) {
        werror(w, s, "too many statically nested blocks");
        w->depth--;
        return;
    }
    switch (s->kind) {
    case AST_EXPR:
        visit_expr(w, s->u.expr.value);
        break;
    case AST_ASSIGN:
        for (int i = 0; i < s->u.assign.targets.len; i++)
            visit_target(w, s->u.assign.targets.items[i]);
        visit_expr(w, s->u.assign.value);
        break;
    case AST_AUGASSIGN:
        visit_target(w, s->u.augassign.target); /* x += 1 binds x (CPython records no use) */
        visit_expr(w, s->u.augassign.value);
        break;
    case AST_ANNASSIGN:
        if (s->u.annassign.target->kind == AST_NAME) {
            AstNode *t = s->u.annassign.target;
            Symbol *sy = scope_lookup(w->cur, t->u.name.id);
            if (sy && (sy->flags & (DEF_GLOBAL | DEF_NONLOCAL)) && w->cur->kind != SCOPE_MODULE &&
                s->u.annassign.simple) {
                werror(w, s, "annotated name '%s' can't be %s", t->u.name.id,
                       (sy->flags & DEF_GLOBAL) ? "global" : "nonlocal");
                break;
            }
            if (s->u.annassign.simple)
                add_def(w, w->cur, t->u.name.id, DEF_ANNOT | DEF_ASSIGNED, t);
            else if (s->u.annassign.value)
                visit_target(w, t);
        } else
            visit_expr(w, s->u.annassign.target);
        visit_expr(w, s->u.annassign.value);
        break;
    case AST_IF:
        visit_expr(w, s->u.if_.test);
        visit_stmts(w, &s->u.if_.body);
        visit_stmts(w, &s->u.if_.orelse);
        break;
    case AST_WHILE:
        visit_expr(w, s->u.while_.test);
        visit_stmts(w, &s->u.while_.body);
        visit_stmts(w, &s->u.while_.orelse);
        break;
    case AST_FOR:
        visit_target(w, s->u.for_.target);
        visit_expr(w, s->u.for_.iter);
        visit_stmts(w, &s->u.for_.body);
        visit_stmts(w, &s->u.for_.orelse);
        break;
    case AST_RETURN:
        visit_expr(w, s->u.ret.value);
        break;
    case AST_FUNCTIONDEF:
        add_def(w, w->cur, s->u.func.name, DEF_ASSIGNED, s);
        visit_exprs(w, &s->u.func.decorators);
        visit_function(w, s);
        break;
    case AST_CLASSDEF: {
        add_def(w, w->cur, s->u.cls.name, DEF_ASSIGNED, s);
        visit_exprs(w, &s->u.cls.decorators);
        visit_exprs(w, &s->u.cls.bases);
        for (int i = 0; i < s->u.cls.keywords.len; i++)
            visit_expr(w, s->u.cls.keywords.items[i]->u.keyword.value);
        Scope *c = scope_new(w, SCOPE_CLASS, s, s->u.cls.name);
        Scope *saved = w->cur;
        w->cur = c;
        visit_stmts(w, &s->u.cls.body);
        w->cur = saved;
        break;
    }
    case AST_TRY:
        visit_stmts(w, &s->u.try_.body);
        for (int i = 0; i < s->u.try_.handlers.len; i++) {
            AstNode *h = s->u.try_.handlers.items[i];
            visit_expr(w, h->u.handler.type);
            if (h->u.handler.name)
                add_def(w, w->cur, h->u.handler.name, DEF_ASSIGNED, h);
            visit_stmts(w, &h->u.handler.body);
        }
        visit_stmts(w, &s->u.try_.orelse);
        visit_stmts(w, &s->u.try_.finalbody);
        break;
    case AST_RAISE:
        visit_expr(w, s->u.raise.exc);
        visit_expr(w, s->u.raise.cause);
        break;
    case AST_WITH:
        for (int i = 0; i < s->u.with.items.len; i++) {
            AstNode *it = s->u.with.items.items[i];
            visit_expr(w, it->u.withitem.context);
            visit_target(w, it->u.withitem.vars);
        }
        visit_stmts(w, &s->u.with.body);
        break;
    case AST_ASSERT:
        visit_expr(w, s->u.assert_.test);
        visit_expr(w, s->u.assert_.msg);
        break;
    case AST_DELETE:
        for (int i = 0; i < s->u.del.targets.len; i++)
            visit_target(w, s->u.del.targets.items[i]);
        break;
    case AST_GLOBAL:
        visit_decl(w, s, false);
        break;
    case AST_NONLOCAL:
        visit_decl(w, s, true);
        break;
    case AST_MATCH:
        visit_expr(w, s->u.match.subject);
        for (int i = 0; i < s->u.match.cases.len; i++) {
            AstNode *c = s->u.match.cases.items[i];
            visit_pattern(w, c->u.match_case.pattern);
            visit_expr(w, c->u.match_case.guard);
            visit_stmts(w, &c->u.match_case.body);
        }
        break;
    case AST_IMPORT:
        for (int i = 0; i < s->u.import.names.len; i++) {
            AstNode *a = s->u.import.names.items[i];
            add_def(w, w->cur, import_binding(w, a, false), DEF_IMPORT, s);
        }
        break;
    case AST_IMPORTFROM:
        for (int i = 0; i < s->u.import.names.len; i++) {
            AstNode *a = s->u.import.names.items[i];
            if (strcmp(a->u.alias.name, "*") == 0) {
                if (w->cur->kind != SCOPE_MODULE)
                    werror(w, s, "import * only allowed at module level");
                continue;
            }
            add_def(w, w->cur, import_binding(w, a, true), DEF_IMPORT, s);
        }
        break;
    default:
        break;
    }
    w->depth--;
}

static void visit_stmts(Walker *w, AstList *l)
{
    for (int i = 0; i < l->len && !w->failed; i++)
        visit_stmt(w, l->items[i]);
}

/* --------------------------------------------------------------- analysis */

typedef struct NameSet {
    const char **v;
    int n, cap;
} NameSet;

static bool ns_has(const NameSet *s, const char *name)
{
    if (!s)
        return false;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return true;
    return false;
}

static void ns_add(VM *vm, NameSet *s, const char *name)
{
    if (ns_has(s, name))
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = comp_xrealloc(vm, s->v, (size_t)s->cap * sizeof(char *));
    }
    s->v[s->n++] = name;
}

static void ns_remove(NameSet *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0) {
            s->v[i] = s->v[--s->n];
            return;
        }
}

static void ns_union(VM *vm, NameSet *dst, const NameSet *src)
{
    if (src)
        for (int i = 0; i < src->n; i++)
            ns_add(vm, dst, src->v[i]);
}

static bool function_like(Scope *s)
{
    return s->kind == SCOPE_FUNCTION || s->kind == SCOPE_COMPREHENSION;
}

/* Resolves one name (CPython's analyze_name). */
static void analyze_name(Walker *w, Scope *s, Symbol *sy, NameSet *bound, NameSet *global, NameSet *local,
                         NameSet *free)
{
    const char *name = sy->name;
    int flags = sy->flags;
    if (flags & DEF_GLOBAL) {
        if (flags & DEF_NONLOCAL) {
            werror_at(w, sy, "name '%s' is nonlocal and global", name);
            return;
        }
        sy->kind = SYM_GLOBAL;
        ns_add(w->vm, global, name);
        if (bound)
            ns_remove(bound, name);
        return;
    }
    if (flags & DEF_NONLOCAL) {
        if (!bound) {
            werror_at(w, sy, "nonlocal declaration not allowed at module level");
            return;
        }
        if (!ns_has(bound, name)) {
            werror_at(w, sy, "no binding for nonlocal '%s' found", name);
            return;
        }
        sy->kind = SYM_FREE;
        ns_add(w->vm, free, name);
        return;
    }
    if (flags & (DEF_ASSIGNED | DEF_PARAM | DEF_IMPORT)) {
        sy->kind = s->kind == SCOPE_MODULE ? SYM_GLOBAL : s->kind == SCOPE_CLASS ? SYM_NAME : SYM_LOCAL;
        ns_add(w->vm, local, name);
        ns_remove(global, name);
        return;
    }
    if (bound && ns_has(bound, name)) {
        sy->kind = SYM_FREE;
        ns_add(w->vm, free, name);
        return;
    }
    /* implicit global; a class body looks in its namespace first */
    sy->kind = s->kind == SCOPE_CLASS ? SYM_NAME : SYM_GLOBAL;
}

/* Analyses s given the names bound in enclosing function scopes (NULL at
** module level) and the names declared global there; adds to free_out the
** names s needs from its enclosing scopes. */
static void analyze(Walker *w, Scope *s, const NameSet *bound_in, const NameSet *global_in, NameSet *free_out)
{
    VM *vm = w->vm;
    NameSet bound = {0}, global = {0}, local = {0}, ownfree = {0};
    NameSet newbound = {0}, newglobal = {0}, newfree = {0};
    ns_union(vm, &global, global_in);
    if (bound_in)
        ns_union(vm, &bound, bound_in);
    NameSet *boundp = bound_in ? &bound : NULL;

    if (s->kind == SCOPE_CLASS) {
        ns_union(vm, &newglobal, &global);
        if (boundp)
            ns_union(vm, &newbound, boundp);
    }
    for (int i = 0; i < s->nsyms && !w->failed; i++)
        analyze_name(w, s, &s->syms[i], boundp, &global, &local, &ownfree);
    if (s->kind != SCOPE_CLASS) {
        if (function_like(s))
            ns_union(vm, &newbound, &local);
        if (boundp)
            ns_union(vm, &newbound, boundp);
        ns_union(vm, &newglobal, &global);
    } else {
        ns_add(vm, &newbound, "__class__");
    }

    for (int i = 0; i < s->nchildren && !w->failed; i++)
        analyze(w, s->children[i], &newbound, &newglobal, &newfree);

    /* names the children need: our locals become cells; the class provides __class__ */
    for (int i = 0; i < newfree.n;) {
        const char *name = newfree.v[i];
        Symbol *sy = scope_lookup(s, name);
        if (function_like(s) && sy && sy->kind == SYM_LOCAL) {
            sy->kind = SYM_CELL;
            ns_remove(&newfree, name);
            continue;
        }
        if (s->kind == SCOPE_CLASS && strcmp(name, "__class__") == 0) {
            s->class_cell = true;
            ns_remove(&newfree, name);
            continue;
        }
        i++;
    }
    /* pass the rest through: they become free here too */
    for (int i = 0; i < newfree.n; i++) {
        const char *name = newfree.v[i];
        Symbol *sy = scope_lookup(s, name);
        if (sy) {
            if (s->kind == SCOPE_CLASS && (sy->flags & (DEF_ASSIGNED | DEF_PARAM | DEF_IMPORT | DEF_GLOBAL)) &&
                sy->kind != SYM_FREE)
                sy->free_index = -2; /* class name that children also need from outside */
            continue;
        }
        if (boundp && !ns_has(boundp, name))
            continue; /* a global */
        sy = sym_get(vm, s, name);
        sy->kind = SYM_FREE;
    }

    /* closure slots, in symbol order */
    for (int i = 0; i < s->nsyms; i++) {
        Symbol *sy = &s->syms[i];
        if (sy->kind == SYM_FREE || sy->free_index == -2) {
            s->freevars = comp_xrealloc(vm, s->freevars, (size_t)(s->nfree + 1) * sizeof(char *));
            sy->free_index = s->nfree;
            if (sy->kind == SYM_FREE)
                sy->index = s->nfree;
            s->freevars[s->nfree++] = sy->name;
            ns_add(vm, free_out, sy->name);
        }
    }

    /* registers: parameters (first in symbol order), then cells, then other
    ** locals -- cells must get registers below REG_LOCALS, which a function
    ** with very many locals may not have left for the last ones */
    if (function_like(s)) {
        s->varnames = comp_xrealloc(vm, NULL, (size_t)(s->nsyms + 1) * sizeof(char *));
        s->cells = comp_xrealloc(vm, NULL, (size_t)(s->nsyms + 1) * sizeof(int));
        for (int pass = 0; pass < 3; pass++) {
            for (int i = 0; i < s->nsyms; i++) {
                Symbol *sy = &s->syms[i];
                if (sy->kind != SYM_LOCAL && sy->kind != SYM_CELL)
                    continue;
                bool param = (sy->flags & DEF_PARAM) != 0;
                if (pass == 0 ? !param : pass == 1 ? param || sy->kind != SYM_CELL : param || sy->kind == SYM_CELL)
                    continue;
                sy->index = s->nlocals;
                s->varnames[s->nlocals++] = sy->name;
                if (sy->kind == SYM_CELL)
                    s->cells[s->ncells++] = sy->index;
            }
        }
    } else if (s->kind == SCOPE_CLASS && s->class_cell) {
        s->varnames = comp_xrealloc(vm, NULL, sizeof(char *));
        s->cells = comp_xrealloc(vm, NULL, sizeof(int));
        s->varnames[0] = "__class__";
        s->cells[0] = 0;
        s->nlocals = 1;
        s->ncells = 1;
    }

    free(bound.v);
    free(global.v);
    free(local.v);
    free(ownfree.v);
    free(newbound.v);
    free(newglobal.v);
    free(newfree.v);
}

Scope *scope_build(VM *vm, AstNode *module, SyntaxErr *err)
{
    Walker w = {.vm = vm, .err = err};
    Scope *root = scope_new(&w, SCOPE_MODULE, module, "<module>");
    w.cur = root;
    if (module->kind == AST_MODULE)
        visit_stmts(&w, &module->u.module.body);
    if (!w.failed) {
        NameSet rootfree = {0};
        analyze(&w, root, NULL, NULL, &rootfree);
        free(rootfree.v);
    }
    if (w.failed) {
        scope_free(root);
        return NULL;
    }
    return root;
}
