/*
** infer_is.c — `a is b` / `a is not b` in kernels, with Numba's rules:
** None is only None (a None-typed value: a None argument, the literal), so
** `x is None` is decided at compile time from x's type; values of two
** different types are never identical; two arrays are identical when they
** are the same view (data, shape and strides); other values of one
** immutable type compare with ==.
**
** `if x is None:` with a compile-time answer compiles only the branch that
** runs, as Numba prunes it, so the other branch may use x as what it is
** not (an array where None was passed). The comparison node records its
** answer: JInfo.builtin JB_IS and JInfo.shape[0] one of IS_* below.
*/
#include "infer_priv.h"

static bool is_op(CmpOp op) { return op == CMP_IS || op == CMP_ISNOT; }

bool inf_is_compare(const AstNode *n) {
    return n->kind == AST_COMPARE && n->u.compare.comparators.len == 1 && is_op(n->u.compare.ops[0]);
}

/* An operand: any value, or None. */
static const JType *operand(Pass *p, AstNode *x) {
    const JType *t = inf_expr(p, x);
    if (t && t->kind != JK_NONE && !inf_is_value_type(t)) inf_fail(p, x, "%s cannot be used with 'is'", tname(t));
    return t;
}

const JType *inf_is_expr(Pass *p, AstNode *n) {
    if (!inf_is_compare(n)) inf_fail(p, n, "chained 'is' comparisons are not supported in kernels");
    const JType *a = operand(p, n->u.compare.left), *b = operand(p, n->u.compare.comparators.items[0]);
    if (!a || !b) return inf_unknown(p, n, "unknown operand of 'is'");
    JInfo *i = inf_info(p, n);
    if (!i->cmp_types) i->cmp_types = inf_alloc(p, sizeof *i->cmp_types);
    i->builtin = JB_IS;
    i->cmp_types[0] = NULL;
    bool negate = n->u.compare.ops[0] == CMP_ISNOT;
    int how;
    if (a->kind == JK_NONE || b->kind == JK_NONE) how = a == b ? IS_TRUE : IS_FALSE;
    else if (a != b) how = IS_FALSE;
    else if (a->kind == JK_ARRAY) how = IS_SAME_VIEW;
    else if (jt_is_scalar(a) || jt_is_complex(a)) {
        how = IS_EQUAL;
        i->cmp_types[0] = a;
    } else {
        inf_fail(p, n, "'is' between two values of type %s is not supported in kernels", tname(a));
    }
    if (negate && how == IS_TRUE) how = IS_FALSE;
    else if (negate && how == IS_FALSE) how = IS_TRUE;
    i->shape[0] = how;
    i->shape[1] = negate;
    return inf_set_type(p, n, S(p, JK_BOOL));
}

int inf_static_condition(Pass *p, AstNode *test) {
    if (!inf_is_compare(test)) return -1;
    if (!inf_is_expr(p, test)) return -1;
    int64_t how = inf_info(p, test)->shape[0];
    return how == IS_TRUE ? 1 : how == IS_FALSE ? 0 : -1;
}

/* Whether a block ends in return / break / continue (lower_is.c has its twin). */
static bool branch_exits(const AstList *body) {
    if (!body->len) return false;
    AstKind k = body->items[body->len - 1]->kind;
    return k == AST_RETURN || k == AST_BREAK || k == AST_CONTINUE;
}

bool inf_static_exit(Pass *p, AstNode *s) {
    if (s->kind != AST_IF || !inf_is_compare(s->u.if_.test)) return false;
    JInfo *i = inf_info(p, s->u.if_.test);
    if (i->builtin != JB_IS || (i->shape[0] != IS_TRUE && i->shape[0] != IS_FALSE)) return false;
    return branch_exits(i->shape[0] == IS_TRUE ? &s->u.if_.body : &s->u.if_.orelse);
}
