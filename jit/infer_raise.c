/*
** infer_raise.c — `raise E` and `raise E("message")` in kernels and device
** functions, E an exception class the function sees as a global or a
** builtin, the message a constant string (Numba's rule: exception
** arguments are compile-time constants). With debug=True the launch raises
** E on the host, its message naming the first thread that raised, as
** Numba does ("tid=[1, 0, 0] ctaid=[0, 0, 0]: message"); otherwise the
** raising thread just returns (jit/lower_raise.c). The raise statement's
** JInfo.constant holds the class.
*/
#include <string.h>

#include "infer_priv.h"

static Value lookup(VM *vm, Dict *d, const char *name) {
    if (!d) return EMPTY_VAL;
    return dict_get_str(vm, d, str_intern(vm, name, strlen(name)));
}

/* The exception class node n names (EMPTY when it names none). */
static Value exception_class(Pass *p, AstNode *n) {
    VM *vm = VMOF(p);
    Value v = EMPTY_VAL;
    if (n->kind == AST_NAME) {
        if (inf_find_var(p->fx, n->u.name.id) >= 0) return EMPTY_VAL;
        v = lookup(vm, p->fx->f.fn->globals, n->u.name.id);
        if (IS_EMPTY(v)) v = lookup(vm, vm->builtins, n->u.name.id);
    } else if (n->kind == AST_ATTRIBUTE && n->u.attr.value->kind == AST_NAME) {
        Value m = lookup(vm, p->fx->f.fn->globals, n->u.attr.value->u.name.id);
        if (IS_OBJ(m) && AS_OBJ(m)->type == vm->t_module) v = lookup(vm, ((Module *)AS_OBJ(m))->dict, n->u.attr.attr);
    }
    if (!IS_OBJ(v) || AS_OBJ(v)->type != vm->t_type || !(((Type *)AS_OBJ(v))->flags & TYPE_EXCEPTION)) return EMPTY_VAL;
    return v;
}

void inf_raise_stmt(Pass *p, AstNode *s) {
    AstNode *e = s->u.raise.exc;
    if (!e) inf_fail(p, s, "a bare raise is not supported in kernels");
    if (s->u.raise.cause) inf_fail(p, s, "raise ... from ... is not supported in kernels");
    AstNode *cls = e->kind == AST_CALL ? e->u.call.func : e;
    Value v = exception_class(p, cls);
    if (IS_EMPTY(v)) inf_fail(p, e, "kernels can only raise exception classes they see as globals");
    if (e->kind == AST_CALL) {
        if (e->u.call.keywords.len || e->u.call.args.len > 1 ||
            (e->u.call.args.len == 1 && e->u.call.args.items[0]->kind != AST_STR))
            inf_fail(p, e, "an exception raised in a kernel takes at most one argument, a constant string");
        if (e->u.call.args.len) inf_set_type(p, e->u.call.args.items[0], S(p, JK_STRING));
    }
    JInfo *i = inf_info(p, s);
    i->constant = v;
    inf_set_type(p, s, S(p, JK_VOID));
}
