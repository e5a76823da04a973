/*
** infer_defined.c — Numba's rule for local variables read before they are
** assigned: a read of a local with no assignment earlier in the source is a
** compile-time error ("Variable 'x' is not defined."), even when a loop's
** back edge would reach an assignment further down. Numba checks this while
** translating bytecode, block by block in source order; this walk does the
** same over the AST. A variable assigned on only some paths before a read
** (in one branch of an if) is accepted, as Numba does; the lowering starts
** every local at zero, which is the value Numba gives it on the other paths.
**
** Without this check, such a read compiled to a load of an uninitialized
** slot: LLVM was free to give it the later assignment's value, and a
** shared array used before its cuda.shared.array line had no storage at all.
*/
#include <string.h>

#include "infer_priv.h"
#include "lexer.h" /* ast_visit_children */

typedef struct DefWalk {
    Pass *p;
    bool *assigned; /* per local variable: assigned earlier in source order */
} DefWalk;

static const AstNode *first_assignment(const AstNode *n, const char *name);

/* The first assignment (in source order) of name inside statement list l. */
static const AstNode *first_in_list(const AstList *l, const char *name) {
    for (int i = 0; i < l->len; i++) {
        const AstNode *a = first_assignment(l->items[i], name);
        if (a) return a;
    }
    return NULL;
}

static const AstNode *first_in_target(const AstNode *t, const char *name) {
    if (!t) return NULL;
    if (t->kind == AST_NAME) return strcmp(t->u.name.id, name) == 0 ? t : NULL;
    if (t->kind == AST_TUPLE || t->kind == AST_LIST) return first_in_list(&t->u.seq.elts, name);
    if (t->kind == AST_STARRED) return first_in_target(t->u.starred.value, name);
    return NULL;
}

/* For the message: where name is assigned (the statements prescan reads). */
static const AstNode *first_assignment(const AstNode *s, const char *name) {
    switch (s->kind) {
    case AST_ASSIGN:
        for (int j = 0; j < s->u.assign.targets.len; j++) {
            const AstNode *a = first_in_target(s->u.assign.targets.items[j], name);
            if (a) return a;
        }
        return NULL;
    case AST_AUGASSIGN: return NULL; /* it reads the variable first: never its definition */
    case AST_ANNASSIGN: return s->u.annassign.value ? first_in_target(s->u.annassign.target, name) : NULL;
    case AST_FOR: {
        const AstNode *a = first_in_target(s->u.for_.target, name);
        if (!a) a = first_in_list(&s->u.for_.body, name);
        return a ? a : first_in_list(&s->u.for_.orelse, name);
    }
    case AST_WHILE: {
        const AstNode *a = first_in_list(&s->u.while_.body, name);
        return a ? a : first_in_list(&s->u.while_.orelse, name);
    }
    case AST_IF: {
        const AstNode *a = first_in_list(&s->u.if_.body, name);
        return a ? a : first_in_list(&s->u.if_.orelse, name);
    }
    default: return NULL;
    }
}

static void reads(DefWalk *w, AstNode *e);

static void reads_child(AstNode *child, void *ud) { reads((DefWalk *)ud, child); }

/* Checks every name read by expression e. */
static void reads(DefWalk *w, AstNode *e) {
    if (!e) return;
    if (e->kind == AST_NAME) {
        int v = inf_find_var(w->p->fx, e->u.name.id);
        if (v < 0 || w->assigned[v]) return; /* a global, or assigned before */
        const AstNode *def = first_in_list(&w->p->fx->f.def->u.func.body, e->u.name.id);
        if (def)
            inf_fail(w->p, e, "Variable '%s' is not defined (read before its assignment on line %d)", e->u.name.id,
                     def->line);
        inf_fail(w->p, e, "Variable '%s' is not defined", e->u.name.id);
    }
    /* constructs with their own bindings, which kernels reject anyway */
    if (e->kind == AST_NAMEDEXPR || e->kind == AST_LAMBDA || (e->kind >= AST_LISTCOMP && e->kind <= AST_DICTCOMP))
        return;
    ast_visit_children(e, reads_child, w);
}

/* An assignment target: names become assigned; a subscript's array and
** index are reads. */
static void target(DefWalk *w, AstNode *t) {
    switch (t->kind) {
    case AST_NAME: {
        int v = inf_find_var(w->p->fx, t->u.name.id);
        if (v >= 0) w->assigned[v] = true;
        return;
    }
    case AST_TUPLE:
    case AST_LIST:
        for (int i = 0; i < t->u.seq.elts.len; i++) target(w, t->u.seq.elts.items[i]);
        return;
    case AST_STARRED: target(w, t->u.starred.value); return;
    default: reads(w, t); return;
    }
}

static void block(DefWalk *w, AstList *l);

static void statement(DefWalk *w, AstNode *s) {
    switch (s->kind) {
    case AST_ASSIGN:
        reads(w, s->u.assign.value);
        for (int j = 0; j < s->u.assign.targets.len; j++) target(w, s->u.assign.targets.items[j]);
        return;
    case AST_AUGASSIGN: /* x += v reads x */
        reads(w, s->u.augassign.target);
        reads(w, s->u.augassign.value);
        return;
    case AST_ANNASSIGN:
        if (s->u.annassign.value) {
            reads(w, s->u.annassign.value);
            target(w, s->u.annassign.target);
        }
        return;
    case AST_IF:
        reads(w, s->u.if_.test);
        block(w, &s->u.if_.body);
        block(w, &s->u.if_.orelse);
        return;
    case AST_WHILE:
        reads(w, s->u.while_.test);
        block(w, &s->u.while_.body);
        block(w, &s->u.while_.orelse);
        return;
    case AST_FOR:
        reads(w, s->u.for_.iter);
        target(w, s->u.for_.target);
        block(w, &s->u.for_.body);
        block(w, &s->u.for_.orelse);
        return;
    case AST_EXPR: reads(w, s->u.expr.value); return;
    case AST_RETURN: reads(w, s->u.ret.value); return;
    case AST_ASSERT: reads(w, s->u.assert_.test); return;
    default: return; /* statements kernels reject are reported by the typing pass */
    }
}

static void block(DefWalk *w, AstList *l) {
    for (int i = 0; i < l->len; i++) statement(w, l->items[i]);
}

void inf_check_defined(Pass *p) {
    JFunc *f = &p->fx->f;
    DefWalk w = {p, inf_alloc(p, (size_t)(f->nvars ? f->nvars : 1) * sizeof(bool))};
    for (int i = 0; i < f->nvars; i++) w.assigned[i] = f->vars[i].param_index >= 0;
    block(&w, &f->def->u.func.body);
}
