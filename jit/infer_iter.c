/*
** infer_iter.c — the types of `for` loops over anything but a plain
** range(...): arrays (`for x in a`; a 2-D array yields its rows as views,
** as in Numba), tuples (`for x in (1, 2.5)` and numba.literal_unroll(t)),
** enumerate(it[, start]) and zip(it, ...) of those and of range(...).
**
** The for statement's JInfo.type holds the item type (what the target is
** assigned each iteration); lower_iter.c reads it. enumerate / zip /
** literal_unroll calls get JB_ENUMERATE / JB_ZIP / JB_LITERAL_UNROLL and the
** range type (a value only a for loop iterates).
**
** A tuple iterated at the top of a loop may mix types: its items are
** unified (int64 and float64 give float64) where Numba would compile the
** body once per item type (literal_unroll); a tuple inside enumerate/zip
** must be homogeneous.
*/
#include <string.h>

#include "infer_priv.h"

static Type *type_of(Value v) { return IS_OBJ(v) ? AS_OBJ(v)->type : NULL; }

/* d[name] without running user code (EMPTY when absent). */
static Value dict_lookup(VM *vm, Dict *d, const char *name) {
    if (!d) return EMPTY_VAL;
    return dict_get_str(vm, d, str_intern(vm, name, strlen(name)));
}

/* Which of enumerate / zip / literal_unroll the callee of call c is (JB_NONE: none). */
static JBuiltin iter_builtin(Pass *p, AstNode *c) {
    if (c->kind != AST_CALL) return JB_NONE;
    AstNode *f = c->u.call.func;
    const char *name;
    if (f->kind == AST_NAME) {
        name = f->u.name.id;
        if (inf_find_var(p->fx, name) >= 0) return JB_NONE;
    } else if (f->kind == AST_ATTRIBUTE && f->u.attr.value->kind == AST_NAME) {
        name = f->u.attr.attr;
        if (strcmp(name, "literal_unroll") != 0) return JB_NONE;
        Value m = dict_lookup(VMOF(p), p->fx->f.fn->globals, f->u.attr.value->u.name.id);
        if (!IS_OBJ(m) || type_of(m) != VMOF(p)->t_module) return JB_NONE;
        Value v = dict_lookup(VMOF(p), ((Module *)AS_OBJ(m))->dict, name);
        return IS_OBJ(v) && type_of(v) == VMOF(p)->t_builtin_function ? JB_LITERAL_UNROLL : JB_NONE;
    } else {
        return JB_NONE;
    }
    VM *vm = VMOF(p);
    Value v = dict_lookup(vm, p->fx->f.fn->globals, name);
    if (strcmp(name, "enumerate") == 0 || strcmp(name, "zip") == 0) {
        Value b = dict_lookup(vm, vm->builtins, name);
        if (!IS_EMPTY(v) && !(IS_OBJ(v) && IS_OBJ(b) && AS_OBJ(v) == AS_OBJ(b))) return JB_NONE; /* shadowed */
        return name[0] == 'e' ? JB_ENUMERATE : JB_ZIP;
    }
    /* `from numba import literal_unroll` (any name bound to it) */
    if (IS_OBJ(v) && type_of(v) == vm->t_builtin_function && strcmp(((NativeFunction *)AS_OBJ(v))->name, "literal_unroll") == 0)
        return JB_LITERAL_UNROLL;
    return JB_NONE;
}

/* The type of each item of a 1+-D array: its dtype, or a view of one less dimension. */
static const JType *array_item(Pass *p, const JType *t) {
    if (t->ndim == 1) return S(p, (JKind)t->dtype);
    return jt_array(VMOF(p), t->dtype, t->ndim - 1, t->layout == 'C' ? 'C' : 'A');
}

/* The item type of iterable n (NULL: unknown in this pass); top: the
** loop's own iterable, where a tuple may be heterogeneous. */
static const JType *item_of(Pass *p, AstNode *n, bool top) {
    JBuiltin b = iter_builtin(p, n);
    if (b != JB_NONE) {
        AstList *args = &n->u.call.args;
        JInfo *ci = inf_info(p, n);
        ci->builtin = b;
        ci->type = S(p, JK_RANGE);
        for (int k = 0; k < n->u.call.keywords.len; k++) {
            AstNode *kw = n->u.call.keywords.items[k];
            if (b != JB_ENUMERATE || !kw->u.keyword.name || strcmp(kw->u.keyword.name, "start") != 0 || args->len != 1)
                inf_fail(p, n, "unsupported keyword arguments in this call in a kernel");
        }
        if (b == JB_LITERAL_UNROLL) {
            if (args->len != 1) inf_fail(p, n, "literal_unroll() takes exactly one argument");
            const JType *t = inf_expr(p, args->items[0]);
            if (t && t->kind != JK_TUPLE && t->kind != JK_ARRAY)
                inf_fail(p, n, "literal_unroll() takes a tuple or an array in kernels, not %s", tname(t));
            return top ? item_of(p, args->items[0], true) : (inf_fail(p, n, "literal_unroll() must be the loop's iterable"), NULL);
        }
        if (b == JB_ENUMERATE) {
            int nk = n->u.call.keywords.len;
            if (args->len + nk < 1 || args->len + nk > 2 || args->len < 1)
                inf_fail(p, n, "enumerate() takes an iterable and an optional start");
            AstNode *start = args->len == 2 ? args->items[1] : nk ? n->u.call.keywords.items[0]->u.keyword.value : NULL;
            if (start) {
                const JType *st = inf_value(p, start);
                if (st && !is_intlike(st)) inf_fail(p, start, "enumerate() start must be an integer, not %s", tname(st));
            }
            const JType *e = item_of(p, args->items[0], false);
            if (!e) return NULL;
            const JType *el[2] = {S(p, JK_INT64), e};
            return jt_tuple(VMOF(p), 2, el);
        }
        /* zip */
        if (args->len < 1 || args->len > 16) inf_fail(p, n, "zip() in kernels takes 1 to 16 iterables");
        const JType *el[16];
        bool known = true;
        for (int k = 0; k < args->len; k++) {
            el[k] = item_of(p, args->items[k], false);
            if (!el[k]) known = false;
        }
        return known ? jt_tuple(VMOF(p), args->len, el) : NULL;
    }
    const JType *t = inf_expr(p, n);
    if (!t) return inf_unknown(p, n, "unknown iterable");
    if (t->kind == JK_RANGE) {
        JInfo *ii = inf_info(p, n);
        if (n->kind != AST_CALL || ii->builtin != JB_RANGE) inf_fail(p, n, "cannot iterate over this value in a kernel");
        return S(p, JK_INT64);
    }
    if (t->kind == JK_ARRAY) {
        if (t->ndim < 1) inf_fail(p, n, "cannot iterate over a 0-d array");
        return array_item(p, t);
    }
    if (t->kind == JK_TUPLE) {
        if (t->n == 0) inf_fail(p, n, "cannot iterate over an empty tuple in a kernel");
        const JType *u = t->elems[0];
        for (int k = 1; k < t->n; k++) {
            const JType *w = top ? inf_unify(p, u, t->elems[k]) : (u == t->elems[k] ? u : NULL);
            if (!w)
                inf_fail(p, n, top ? "cannot iterate over %s in a kernel: its items %s and %s have no common type"
                                   : "cannot iterate over %s inside enumerate() or zip() in a kernel: its items "
                                     "%s and %s differ",
                         tname(t), tname(u), tname(t->elems[k]));
            u = w;
        }
        return u;
    }
    inf_fail(p, n, "for loops in kernels can iterate over range(...), arrays, tuples, enumerate() and zip(), not %s",
             tname(t));
}

bool inf_for_iter(Pass *p, AstNode *s, const JType **item) {
    AstNode *it = s->u.for_.iter;
    if (it->kind == AST_CALL && iter_builtin(p, it) == JB_NONE) {
        /* a plain range(...) stays on the caller's path */
        const JType *t = inf_expr(p, it);
        if (!t || (t->kind == JK_RANGE && inf_info(p, it)->builtin == JB_RANGE)) return false;
    }
    *item = item_of(p, it, true);
    if (*item) inf_set_type(p, s, *item);
    return true;
}
