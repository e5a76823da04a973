/*
** infer_expr.c — typing of expressions: Numba's numeric promotion and
** unification rules (checked against numba.njit 0.68), names, operators,
** comparisons, subscripts, attributes, tuples. Calls are in infer_call.c.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_priv.h"
#include "int_literal.h"

/* The operator as written, for messages. */
static const char *binop_symbol(BinOp op) {
    static const char *const s[] = {"+", "-", "*", "@", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"};
    return (unsigned)op < sizeof s / sizeof s[0] ? s[op] : "?";
}

/* ------------------------------------------------------- numeric typing */

/* Integer arithmetic (Numba): at least 64 bits, signed when either operand
** is signed (bools count as signed): int64 op uint64 → int64, unsigned op
** unsigned → uint64. */
static JKind promote_int(JKind a, JKind b) {
    return is_signed_k(a) || is_signed_k(b) ? JK_INT64 : JK_UINT64;
}

/* The float type that holds float kind f combined with integer kind i
** (numpy's promotion: float32 with ints of up to 16 bits stays float32). */
JKind inf_float_with_int(JKind f, JKind i) {
    int bits = int_bits(i);
    if (f == JK_FLOAT64) return JK_FLOAT64;
    if (f == JK_FLOAT32) return bits <= 16 ? JK_FLOAT32 : JK_FLOAT64;
    return bits <= 8 ? JK_FLOAT16 : bits <= 16 ? JK_FLOAT32 : JK_FLOAT64;
}

/* The type a binary arithmetic operation on two scalars is computed in
** (Numba 0.68, checked against numba.njit typing). */
static JKind promote(JKind a, JKind b) {
    bool fa = is_float_k(a), fb = is_float_k(b);
    if (fa && fb) return a > b ? a : b;
    if (fa) return inf_float_with_int(a, b);
    if (fb) return inf_float_with_int(b, a);
    return promote_int(a, b);
}

/* The complex kind of an operation between kinds a and b, one complex:
** complex64 only when the other fits it (float32, small ints), as Numba. */
JKind inf_complex_kind(JKind a, JKind b) {
    JKind o = a == JK_COMPLEX64 || a == JK_COMPLEX128 ? b : a;
    if (a == JK_COMPLEX128 || b == JK_COMPLEX128 || o == JK_FLOAT64) return JK_COMPLEX128;
    if (o == JK_COMPLEX64 || o == JK_FLOAT32 || o == JK_FLOAT16 || o == JK_BOOL || int_bits(o) <= 16) return JK_COMPLEX64;
    return JK_COMPLEX128;
}

/* Unification of two scalar kinds for a variable, a return type, min/max,
** and/or, conditional expressions: numpy's promote_types. */
JKind inf_unify_scalar(JKind a, JKind b) {
    if (a == b) return a;
    if (a == JK_BOOL) return b;
    if (b == JK_BOOL) return a;
    bool fa = is_float_k(a), fb = is_float_k(b);
    if (fa && fb) return a > b ? a : b;
    if (fa) return inf_float_with_int(a, b);
    if (fb) return inf_float_with_int(b, a);
    bool sa = is_signed_k(a), sb = is_signed_k(b);
    if (sa == sb) return int_bits(a) >= int_bits(b) ? a : b; /* same signedness: the wider */
    JKind s = sa ? a : b, u = sa ? b : a;
    if (int_bits(s) > int_bits(u)) return s;
    if (u == JK_UINT64) return JK_FLOAT64;
    return int_bits(u) >= 32 ? JK_INT64 : int_bits(u) == 16 ? JK_INT32 : JK_INT16;
}

/* Unification of any two types; NULL when impossible. */
const JType *inf_unify(Pass *p, const JType *a, const JType *b) {
    if (a == b) return a;
    if (!a || !b) return NULL;
    if (jt_is_scalar(a) && jt_is_scalar(b)) return S(p, inf_unify_scalar(a->kind, b->kind));
    if ((jt_is_complex(a) || jt_is_scalar(a)) && (jt_is_complex(b) || jt_is_scalar(b)))
        return S(p, inf_complex_kind(a->kind, b->kind));
    if (a->kind == JK_ARRAY && b->kind == JK_ARRAY && a->dtype == b->dtype && a->ndim == b->ndim)
        return jt_array(VMOF(p), a->dtype, a->ndim, 'A');
    if (a->kind == JK_TUPLE && b->kind == JK_TUPLE && a->n == b->n) {
        const JType **e = inf_alloc(p, (size_t)(a->n ? a->n : 1) * sizeof *e);
        for (int i = 0; i < a->n; i++) {
            e[i] = inf_unify(p, a->elems[i], b->elems[i]);
            if (!e[i]) return NULL;
        }
        return jt_tuple(VMOF(p), a->n, e);
    }
    return NULL;
}

/* True for types a variable can hold. */
bool inf_is_value_type(const JType *t) {
    if (jt_is_scalar(t) || jt_is_complex(t) || t->kind == JK_ARRAY) return true;
    if (t->kind != JK_TUPLE) return false;
    for (int i = 0; i < t->n; i++)
        if (!inf_is_value_type(t->elems[i])) return false;
    return true;
}

/* cuda.threadIdx (blockIdx, blockDim, gridDim) used as a value, as in
** `tid = cuda.threadIdx`: Numba's Dim3, here a namedtuple Dim3(x, y, z) of
** int32 (the type of cuda.threadIdx.x) that lower_expr reads from the
** special registers. */
static const JType *dim3_value(Pass *p, AstNode *n, const JType *t) {
    const JType *e[3] = {S(p, JK_INT32), S(p, JK_INT32), S(p, JK_INT32)};
    JInfo *i = inf_info(p, n);
    i->builtin = JB_DIM3;
    i->shape[0] = jit_dim3_sreg(t);
    return inf_set_type(p, n, jt_named_tuple(VMOF(p), 3, e, "Dim3:x,y,z"));
}

/* An expression that must produce a value (scalar, array, tuple). */
const JType *inf_value(Pass *p, AstNode *n) {
    const JType *t = inf_expr(p, n);
    if (!t) return NULL;
    if (jit_dim3_sreg(t) >= 0) return dim3_value(p, n, t);
    if (!inf_is_value_type(t)) {
        if (t->kind == JK_VOID) inf_fail(p, n, "this call does not return a value");
        if (t->kind == JK_NONE) inf_fail(p, n, "None cannot be used as a value in kernels");
        inf_fail(p, n, "%s cannot be used as a value", tname(t));
    }
    return t;
}

/* An expression used as a condition (if, while, and/or operands). */
void inf_condition(Pass *p, AstNode *n) {
    const JType *t = inf_value(p, n);
    if (t && !jt_is_scalar(t)) inf_fail(p, n, "%s cannot be used as a condition", tname(t));
}

/* A compile-time integer (a literal, -literal, or a captured global). */
bool inf_const_int(Pass *p, AstNode *n, int64_t *out) {
    if (n->kind == AST_INT) {
        *out = n->u.int_;
        return true;
    }
    if (n->kind == AST_UNARYOP && (n->u.unary.op == UNOP_NEG || n->u.unary.op == UNOP_POS)) {
        int64_t v;
        if (!inf_const_int(p, n->u.unary.operand, &v)) return false;
        *out = n->u.unary.op == UNOP_NEG ? -v : v;
        return true;
    }
    if (n->kind == AST_NAME) {
        JInfo *i = jim_get(p->fx->f.infos, n);
        if (i && i->builtin == JB_CONST && IS_INT(i->constant)) {
            *out = AS_INT(i->constant);
            return true;
        }
    }
    return false;
}

/* A local variable, else what the global/builtin denotes. */
static const JType *name_expr(Pass *p, AstNode *n) {
    int v = inf_find_var(p->fx, n->u.name.id);
    if (v >= 0) {
        JInfo *i = inf_info(p, n);
        i->var = v;
        i->type = p->fx->f.vars[v].type;
        if (!i->type) {
            char msg[200];
            snprintf(msg, sizeof msg, "cannot determine the type of '%s' (is it used before it is assigned?)",
                     n->u.name.id);
            return inf_unknown(p, n, msg);
        }
        return i->type;
    }
    return inf_apply(p, n, inf_resolve_global(p, n, n->u.name.id));
}

/* Result type of a op b (and in *op_type the type it is computed in). */
const JType *inf_binop_type(Pass *p, const AstNode *at, BinOp op, const JType *a, const JType *b,
                               const JType **op_type) {
    if ((jt_is_complex(a) && (jt_is_scalar(b) || jt_is_complex(b))) || (jt_is_complex(b) && jt_is_scalar(a))) {
        if (op != BINOP_ADD && op != BINOP_SUB && op != BINOP_MUL && op != BINOP_TRUEDIV)
            inf_fail(p, at, "unsupported operand type(s) for %s: '%s' and '%s'", binop_symbol(op), tname(a), tname(b));
        *op_type = S(p, inf_complex_kind(a->kind, b->kind));
        return *op_type;
    }
    if (!jt_is_scalar(a) || !jt_is_scalar(b))
        inf_fail(p, at, "unsupported operand type(s) for %s: '%s' and '%s'", binop_symbol(op), tname(a), tname(b));
    JKind ka = a->kind, kb = b->kind, r;
    switch (op) {
    case BINOP_MATMUL:
        inf_fail(p, at, "unsupported operand type(s) for @: '%s' and '%s'", tname(a), tname(b));
    case BINOP_TRUEDIV:
        if (is_intlike(a) && is_intlike(b)) r = JK_FLOAT64;
        else r = promote(ka, kb);
        break;
    case BINOP_LSHIFT:
    case BINOP_RSHIFT:
        if (!is_intlike(a) || !is_intlike(b))
            inf_fail(p, at, "unsupported operand type(s) for %s: '%s' and '%s'", binop_symbol(op), tname(a),
                     tname(b));
        r = is_signed_k(ka) ? JK_INT64 : JK_UINT64; /* follows the shifted operand */
        break;
    case BINOP_AND:
    case BINOP_OR:
    case BINOP_XOR:
        if (!is_intlike(a) || !is_intlike(b))
            inf_fail(p, at, "unsupported operand type(s) for %s: '%s' and '%s'", binop_symbol(op), tname(a),
                     tname(b));
        r = ka == JK_BOOL && kb == JK_BOOL ? JK_BOOL : promote_int(ka, kb);
        break;
    case BINOP_POW:
        /* Numba: float32 ** int stays float32 (no double-precision detour) */
        if (is_float_k(ka) && is_intlike(b)) r = ka;
        else r = promote(ka, kb);
        break;
    default:
        r = promote(ka, kb);
        break;
    }
    *op_type = S(p, r);
    return *op_type;
}

/* -x, +x, ~x (ints widen to 64 bits, as in Numba), not x → bool. */
static const JType *unary_expr(Pass *p, AstNode *n) {
    const JType *t = inf_value(p, n->u.unary.operand);
    if (!t) return inf_unknown(p, n, "unknown operand");
    JInfo *i = inf_info(p, n);
    if (jt_is_complex(t) && n->u.unary.op != UNOP_INVERT) {
        i->op_type = t;
        i->type = n->u.unary.op == UNOP_NOT ? S(p, JK_BOOL) : t;
        return i->type;
    }
    if (!jt_is_scalar(t)) {
        static const char *const sym[] = {"-", "+", "~", "not"};
        inf_fail(p, n, "bad operand type for unary %s: '%s'", sym[n->u.unary.op], tname(t));
    }
    JKind r;
    switch (n->u.unary.op) {
    case UNOP_NOT:
        i->op_type = t;
        i->type = S(p, JK_BOOL);
        return i->type;
    case UNOP_INVERT:
        if (jt_is_float(t)) inf_fail(p, n, "bad operand type for unary ~: '%s'", tname(t));
        r = t->kind == JK_BOOL ? JK_BOOL : is_signed_k(t->kind) ? JK_INT64 : JK_UINT64;
        break;
    default:
        r = jt_is_float(t) ? t->kind : is_signed_k(t->kind) ? JK_INT64 : JK_UINT64;
        break;
    }
    i->op_type = S(p, r);
    i->type = i->op_type;
    return i->type;
}

/* a < b < c: bool, each comparison computed in the unified operand type. */
static const JType *compare_expr(Pass *p, AstNode *n) {
    if (inf_is_compare(n)) return inf_is_expr(p, n); /* infer_is.c */
    int nc = n->u.compare.comparators.len;
    JInfo *i = inf_info(p, n);
    if (!i->cmp_types) i->cmp_types = inf_alloc(p, (size_t)(nc ? nc : 1) * sizeof *i->cmp_types);
    const JType *left = inf_value(p, n->u.compare.left);
    bool unk = !left;
    for (int k = 0; k < nc; k++) {
        AstNode *rn = n->u.compare.comparators.items[k];
        CmpOp op = n->u.compare.ops[k];
        if (op == CMP_IS || op == CMP_ISNOT || op == CMP_IN || op == CMP_NOTIN)
            inf_fail(p, rn, "'%s' comparisons are not supported in kernels",
                     op == CMP_IS ? "is" : op == CMP_ISNOT ? "is not" : op == CMP_IN ? "in" : "not in");
        const JType *right = inf_value(p, rn);
        i = inf_info(p, n);
        if (!right) unk = true;
        if (left && right && (jt_is_complex(left) || jt_is_complex(right)) && (op == CMP_EQ || op == CMP_NE) &&
            (jt_is_scalar(left) || jt_is_complex(left)) && (jt_is_scalar(right) || jt_is_complex(right))) {
            i->cmp_types[k] = S(p, inf_complex_kind(left->kind, right->kind));
        } else if (left && right) {
            if (!jt_is_scalar(left) || !jt_is_scalar(right))
                inf_fail(p, rn, "cannot compare %s and %s", tname(left), tname(right));
            i->cmp_types[k] = S(p, inf_unify_scalar(left->kind, right->kind));
        } else {
            i->cmp_types[k] = NULL;
        }
        left = right;
    }
    if (unk) return inf_unknown(p, n, "unknown comparison operand");
    return inf_set_type(p, n, S(p, JK_BOOL));
}

/* a and b / a or b: the unification of the operand types (Numba). */
static const JType *boolop_expr(Pass *p, AstNode *n) {
    const JType *r = NULL;
    bool unk = false;
    for (int k = 0; k < n->u.boolop.values.len; k++) {
        AstNode *v = n->u.boolop.values.items[k];
        const JType *t = inf_value(p, v);
        if (!t) {
            unk = true;
            continue;
        }
        if (!jt_is_scalar(t)) inf_fail(p, v, "%s cannot be used as a condition", tname(t));
        if (!r) r = t;
        else {
            const JType *u = inf_unify(p, r, t);
            if (!u)
                inf_fail(p, v, "cannot unify %s and %s in '%s'", tname(r), tname(t),
                         n->u.boolop.is_and ? "and" : "or");
            r = u;
        }
    }
    if (unk) return inf_unknown(p, n, "unknown operand");
    inf_info(p, n)->op_type = r;
    return inf_set_type(p, n, r);
}

/* a if c else b: the unification of both branches. */
static const JType *ifexp_expr(Pass *p, AstNode *n) {
    int known = inf_static_condition(p, n->u.ifexp.test); /* `x is None`: one branch (infer_is.c) */
    if (known >= 0) return inf_set_type(p, n, inf_value(p, known ? n->u.ifexp.body : n->u.ifexp.orelse));
    inf_condition(p, n->u.ifexp.test);
    const JType *a = inf_value(p, n->u.ifexp.body);
    const JType *b = inf_value(p, n->u.ifexp.orelse);
    if (!a != !b && !p->strict) /* provisional (a recursive call's branch): re-checked next pass */
        return inf_set_type(p, n, a ? a : b);
    if (!a || !b) return inf_unknown(p, n, "unknown branch of a conditional expression");
    const JType *u = inf_unify(p, a, b);
    if (!u) inf_fail(p, n, "cannot unify %s and %s in a conditional expression", tname(a), tname(b));
    return inf_set_type(p, n, u);
}

/* (a, b, ...): a tuple of the element types. */
static const JType *tuple_expr(Pass *p, AstNode *n) {
    int len = n->u.seq.elts.len;
    const JType **e = inf_alloc(p, (size_t)(len ? len : 1) * sizeof *e);
    bool unk = false;
    for (int k = 0; k < len; k++) {
        AstNode *x = n->u.seq.elts.items[k];
        if (x->kind == AST_STARRED) inf_fail(p, x, "starred expressions are not supported in kernels");
        e[k] = inf_value(p, x);
        if (!e[k]) unk = true;
    }
    if (unk) return inf_unknown(p, n, "unknown tuple element");
    return inf_set_type(p, n, jt_tuple(VMOF(p), len, e));
}

/* An array index must be an integer (bools and floats are errors, as in Numba). */
static void check_index(Pass *p, const AstNode *at, const JType *arr, const JType *t) {
    if (!jt_is_int(t)) inf_fail(p, at, "cannot index %s with %s", tname(arr), tname(t));
}

/* Checks that the number of indices fits the array: all of its dimensions,
** or (partial) fewer when the caller reads a sub-array view. */
static void check_count(Pass *p, const AstNode *at, const JType *arr, int got, bool partial) {
    if (got > arr->ndim) inf_fail(p, at, "too many indices for %s: got %d", tname(arr), got);
    if (got < arr->ndim && !partial)
        inf_fail(p, at, "%s needs %d indices here, got %d", tname(arr), (int)arr->ndim, got);
}

/* The indices of array type arr given by node idx: checks count and kinds.
** Returns the number of indices, 0 when unknown in this pass. */
int inf_array_index(Pass *p, const AstNode *at, const JType *arr, AstNode *idx, bool partial) {
    if (idx->kind == AST_SLICE) inf_fail(p, idx, "slicing arrays is not supported in kernels yet");
    if (idx->kind == AST_TUPLE) {
        int len = idx->u.seq.elts.len;
        const JType **e = inf_alloc(p, (size_t)(len ? len : 1) * sizeof *e);
        bool unk = false;
        for (int k = 0; k < len; k++) {
            AstNode *x = idx->u.seq.elts.items[k];
            if (x->kind == AST_SLICE) inf_fail(p, x, "slicing arrays is not supported in kernels yet");
            e[k] = inf_value(p, x);
            if (!e[k]) unk = true;
            else check_index(p, at, arr, e[k]);
        }
        if (unk) {
            inf_unknown(p, idx, "unknown index");
            return 0;
        }
        inf_set_type(p, idx, jt_tuple(VMOF(p), len, e));
        if (len == 0) inf_fail(p, idx, "an empty index is not supported in kernels");
        check_count(p, at, arr, len, partial);
        return len;
    }
    const JType *t = inf_value(p, idx);
    if (!t) return 0;
    if (t->kind == JK_TUPLE) {
        for (int k = 0; k < t->n; k++) check_index(p, at, arr, t->elems[k]);
        if (t->n == 0) inf_fail(p, idx, "an empty index is not supported in kernels");
        check_count(p, at, arr, t->n, partial);
        return t->n;
    }
    check_index(p, at, arr, t);
    check_count(p, at, arr, 1, partial);
    return 1;
}

/* a[i, j] (an element, or a view when fewer indices than dimensions) and
** t[k] on tuples (constant k, or any int on homogeneous tuples). */
static const JType *subscript_expr(Pass *p, AstNode *n) {
    const JType *base = inf_value(p, n->u.subscript.value);
    AstNode *idx = n->u.subscript.index;
    if (!base) {
        if (idx->kind != AST_SLICE) inf_expr(p, idx);
        return inf_unknown(p, n, "unknown subscripted value");
    }
    if (base->kind == JK_ARRAY) {
        if (inf_has_slice(idx)) return inf_slice_expr(p, n, base); /* a view: infer_slice.c */
        int ni = inf_array_index(p, n, base, idx, true);
        if (!ni) return inf_unknown(p, n, "unknown index");
        inf_info(p, n)->op_type = NULL;
        if (ni < base->ndim) /* a view of the remaining dimensions */
            return inf_set_type(p, n, jt_array(VMOF(p), base->dtype, base->ndim - ni, base->layout == 'C' ? 'C' : 'A'));
        return inf_set_type(p, n, S(p, (JKind)base->dtype));
    }
    if (base->kind == JK_TUPLE) {
        if (idx->kind == AST_SLICE) return inf_tuple_slice(p, n, base); /* constant bounds: infer_slice.c */
        const JType *t = inf_value(p, idx);
        if (!t) return inf_unknown(p, n, "unknown index");
        if (!is_intlike(t) || t->kind == JK_BOOL) inf_fail(p, idx, "cannot index %s with %s", tname(base), tname(t));
        JInfo *i = inf_info(p, n);
        int64_t k;
        if (inf_const_int(p, idx, &k)) {
            if (k < 0) k += base->n;
            if (k < 0 || k >= base->n) inf_fail(p, idx, "tuple index out of range");
            i->shape[0] = k;
            i->shape[1] = 1;
            return inf_set_type(p, n, base->elems[k]);
        }
        for (int e = 1; e < base->n; e++)
            if (base->elems[e] != base->elems[0])
                inf_fail(p, idx, "%s can only be indexed with a constant", tname(base));
        if (base->n == 0) inf_fail(p, idx, "tuple index out of range");
        i->shape[0] = 0;
        i->shape[1] = 0;
        return inf_set_type(p, n, base->elems[0]);
    }
    inf_fail(p, n, "'%s' object is not subscriptable", tname(base));
}

/* Module attributes (cuda.threadIdx.x, math.pi) and array attributes. */
static const JType *attribute_expr(Pass *p, AstNode *n) {
    AstNode *bn = n->u.attr.value;
    const JType *bt = inf_expr(p, bn);
    const char *attr = n->u.attr.attr;
    if (!bt) return inf_unknown(p, n, "unknown value");
    if (bt->kind == JK_MODULE) return inf_apply(p, n, inf_module_attr(p, n, bt, jim_get(p->fx->f.infos, bn), attr));
    JInfo *i = inf_info(p, n);
    if (bt->kind == JK_ARRAY) {
        if (strcmp(attr, "shape") == 0) {
            const JType *e[ND_MAXDIM];
            for (int k = 0; k < bt->ndim; k++) e[k] = S(p, JK_INT64);
            i->builtin = JB_ARRAY_SHAPE;
            return inf_set_type(p, n, jt_tuple(VMOF(p), bt->ndim, e));
        }
        if (strcmp(attr, "size") == 0 || strcmp(attr, "ndim") == 0) {
            i->builtin = attr[0] == 's' ? JB_ARRAY_SIZE : JB_ARRAY_NDIM;
            return inf_set_type(p, n, S(p, JK_INT64));
        }
        inf_fail(p, n, "array attribute '%s' is not supported in kernels", attr);
    }
    if (bt->kind == JK_TUPLE && jt_tuple_field(bt, attr) >= 0) { /* a namedtuple's field: lower_expr reads the item */
        i->builtin = JB_TUPLE_FIELD;
        i->shape[0] = jt_tuple_field(bt, attr);
        return inf_set_type(p, n, bt->elems[i->shape[0]]);
    }
    if (jt_is_complex(bt) && (strcmp(attr, "real") == 0 || strcmp(attr, "imag") == 0)) {
        i->builtin = attr[0] == 'r' ? JB_COMPLEX_REAL : JB_COMPLEX_IMAG;
        return inf_set_type(p, n, S(p, bt->kind == JK_COMPLEX64 ? JK_FLOAT32 : JK_FLOAT64));
    }
    inf_fail(p, n, "%s has no attribute '%s' usable in kernels", tname(bt), attr);
}

/* Types expression n and records its JInfo; NULL when not known yet. */
const JType *inf_expr(Pass *p, AstNode *n) {
    switch (n->kind) {
    case AST_INT: return inf_set_type(p, n, S(p, JK_INT64));
    case AST_BIGINT: { /* wider than int64: uint64 as in Numba, when it fits */
        uint64_t u;
        if (!jit_int_literal_u64(n->u.str.s, n->u.str.len, &u))
            inf_fail(p, n, "Int value is too large: %.*s (kernels have no integer type wider than 64 bits)",
                     (int)n->u.str.len, n->u.str.s);
        return inf_set_type(p, n, S(p, JK_UINT64));
    }
    case AST_FLOAT: return inf_set_type(p, n, S(p, JK_FLOAT64));
    case AST_TRUE:
    case AST_FALSE: return inf_set_type(p, n, S(p, JK_BOOL));
    case AST_NONE: return inf_set_type(p, n, S(p, JK_NONE));
    case AST_NAME: return name_expr(p, n);
    case AST_BINOP: {
        const JType *a = inf_value(p, n->u.binop.left);
        const JType *b = inf_value(p, n->u.binop.right);
        if (!a || !b) return inf_unknown(p, n, "unknown operand");
        const JType *op;
        const JType *r = inf_binop_type(p, n, n->u.binop.op, a, b, &op);
        inf_info(p, n)->op_type = op;
        return inf_set_type(p, n, r);
    }
    case AST_UNARYOP: return unary_expr(p, n);
    case AST_COMPARE: return compare_expr(p, n);
    case AST_BOOLOP: return boolop_expr(p, n);
    case AST_IFEXP: return ifexp_expr(p, n);
    case AST_CALL: return inf_call_expr(p, n);
    case AST_ATTRIBUTE: return attribute_expr(p, n);
    case AST_SUBSCRIPT: return subscript_expr(p, n);
    case AST_TUPLE: return tuple_expr(p, n);
    case AST_STR:
    case AST_FSTRING: inf_fail(p, n, "strings are not supported in kernels");
    case AST_IMAG: inf_fail(p, n, "complex numbers are not supported in kernels");
    case AST_BYTES: inf_fail(p, n, "bytes are not supported in kernels");
    case AST_LIST: inf_fail(p, n, "lists are not supported in kernels (use a tuple or cuda.local.array)");
    case AST_SET: inf_fail(p, n, "sets are not supported in kernels");
    case AST_DICT: inf_fail(p, n, "dicts are not supported in kernels");
    case AST_LISTCOMP:
    case AST_SETCOMP:
    case AST_DICTCOMP:
    case AST_GENEXP: inf_fail(p, n, "comprehensions are not supported in kernels");
    case AST_LAMBDA: inf_fail(p, n, "lambda is not supported in kernels");
    case AST_YIELD:
    case AST_YIELDFROM: inf_fail(p, n, "yield is not supported in kernels");
    case AST_AWAIT: inf_fail(p, n, "await is not supported in kernels");
    case AST_NAMEDEXPR: inf_fail(p, n, "assignment expressions (:=) are not supported in kernels");
    case AST_SLICE: inf_fail(p, n, "slices are not supported in kernels yet");
    case AST_STARRED: inf_fail(p, n, "starred expressions are not supported in kernels");
    case AST_ELLIPSIS: inf_fail(p, n, "'...' is not supported in kernels");
    default: inf_fail(p, n, "%s is not supported in kernels", ast_kind_name(n->kind));
    }
}
