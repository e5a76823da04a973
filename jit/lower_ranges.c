/*
** lower_ranges.c — integer value ranges for the 32-bit index variant
** (L->narrow, JitOptions.narrow_index).
**
** lower_range() bounds the value of an integer expression from what the
** launch guarantees (extents, sizes and gridDim * blockDim below 2^31),
** the hardware limits of the special registers, literals and captured
** constants, and interval arithmetic over +, -, *, //, %, &, >>, min, max.
** A local variable is followed to its definition when it is assigned
** exactly once in the function (an assignment, a tuple unpacking of a
** tuple literal or cuda.grid(n), or a for loop over range()); anything
** else falls back to the bounds of its type. The lowering uses the
** ranges to compare in 32 bits, to divide without Python's sign fix-up
** and to skip the negative-index wrap, so each use must only ever ask
** whether every possible value lies in an interval: a wrong "unknown" only
** costs code size, a wrong bound would change results.
*/
#include <stdlib.h>
#include <string.h>

#include "target.h"

/* How the function assigns one local. */
typedef struct RangeDef {
    int count;       /* assignments seen (2 means "more than one") */
    AstNode *value;  /* the assigned expression (the iterable for a for loop) */
    int elem;        /* >= 0: element elem of a tuple-valued value */
    bool for_range;  /* the target of `for v in range(...)` */
} RangeDef;

#define R_I32_MIN ((int64_t)INT32_MIN)
#define R_I32_MAX ((int64_t)INT32_MAX)
#define R_EXTENT_MAX (((int64_t)1 << 31) - 1) /* an extent or size under L->narrow */

typedef struct Rng {
    int64_t lo, hi;
} Rng;

static void def_target(Lower *L, AstNode *t, AstNode *value, int elem) {
    if (t->kind == AST_NAME) {
        JVar *v = jf_var(L->f, t->u.name.id);
        if (!v) return;
        RangeDef *d = &L->rng_defs[v - L->f->vars];
        d->count = d->count ? 2 : 1;
        d->value = value;
        d->elem = elem;
        d->for_range = false;
        return;
    }
    if (t->kind == AST_TUPLE || t->kind == AST_LIST)
        for (int i = 0; i < t->u.seq.elts.len; i++)
            def_target(L, t->u.seq.elts.items[i], elem < 0 ? value : NULL, elem < 0 ? i : -1);
}

static void scan_body(Lower *L, AstList *body);

static void scan_stmt(Lower *L, AstNode *s) {
    switch (s->kind) {
    case AST_ASSIGN:
        for (int i = 0; i < s->u.assign.targets.len; i++) def_target(L, s->u.assign.targets.items[i], s->u.assign.value, -1);
        break;
    case AST_ANNASSIGN:
        if (s->u.annassign.value) def_target(L, s->u.annassign.target, s->u.annassign.value, -1);
        break;
    case AST_AUGASSIGN:
        def_target(L, s->u.augassign.target, NULL, -1);
        def_target(L, s->u.augassign.target, NULL, -1);
        break;
    case AST_FOR: {
        AstNode *t = s->u.for_.target;
        def_target(L, t, s->u.for_.iter, -1);
        if (t->kind == AST_NAME) {
            JVar *v = jf_var(L->f, t->u.name.id);
            if (v) L->rng_defs[v - L->f->vars].for_range = true;
        }
        scan_body(L, &s->u.for_.body);
        scan_body(L, &s->u.for_.orelse);
        break;
    }
    case AST_IF:
        scan_body(L, &s->u.if_.body);
        scan_body(L, &s->u.if_.orelse);
        break;
    case AST_WHILE:
        scan_body(L, &s->u.while_.body);
        scan_body(L, &s->u.while_.orelse);
        break;
    default:
        break;
    }
}

static void scan_body(Lower *L, AstList *body) {
    for (int i = 0; i < body->len; i++) scan_stmt(L, body->items[i]);
}

void lower_ranges_free(Lower *L) {
    free(L->rng_defs);
    L->rng_defs = NULL;
    L->rng_f = NULL;
}

static bool defs_ready(Lower *L) {
    if (L->rng_f == L->f && L->rng_defs) return true;
    lower_ranges_free(L);
    L->rng_defs = calloc((size_t)(L->f->nvars ? L->f->nvars : 1), sizeof *L->rng_defs);
    if (!L->rng_defs) return false;
    L->rng_f = L->f;
    for (int i = 0; i < L->f->nvars; i++)
        if (L->f->vars[i].param_index >= 0) L->rng_defs[i].count = 2; /* a value from outside */
    scan_body(L, &L->f->def->u.func.body);
    return true;
}

/* The values of an integer (or bool) type; false for uint64 (not an int64 interval). */
static bool type_range(const JType *t, Rng *r) {
    switch (t->kind) {
    case JK_BOOL: *r = (Rng){0, 1}; return true;
    case JK_INT8: *r = (Rng){INT8_MIN, INT8_MAX}; return true;
    case JK_INT16: *r = (Rng){INT16_MIN, INT16_MAX}; return true;
    case JK_INT32: *r = (Rng){INT32_MIN, INT32_MAX}; return true;
    case JK_INT64: *r = (Rng){INT64_MIN, INT64_MAX}; return true;
    case JK_UINT8: *r = (Rng){0, UINT8_MAX}; return true;
    case JK_UINT16: *r = (Rng){0, UINT16_MAX}; return true;
    case JK_UINT32: *r = (Rng){0, UINT32_MAX}; return true;
    default: return false;
    }
}

static bool within(Rng in, Rng out) { return in.lo >= out.lo && in.hi <= out.hi; }

/* [lo, hi] from 128-bit bounds; false when they leave the type t (the
** operation would wrap). */
static bool make(__int128 lo, __int128 hi, const JType *t, Rng *r) {
    Rng tr;
    if (!type_range(t, &tr) || lo < tr.lo || hi > tr.hi) return false;
    *r = (Rng){(int64_t)lo, (int64_t)hi};
    return true;
}

static bool expr_range(Lower *L, AstNode *n, Rng *r);

/* Range of n converted to type t (false when the conversion could change a value). */
static bool range_as(Lower *L, AstNode *n, const JType *t, Rng *r) {
    Rng tr;
    return expr_range(L, n, r) && type_range(t, &tr) && within(*r, tr);
}

static int64_t floordiv64(int64_t a, int64_t b) { /* b > 0 */
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static bool binop_range(Lower *L, BinOp op, AstNode *ln, AstNode *rn, const JType *ot, Rng *r) {
    Rng a, b;
    if (!jt_is_int(ot) || !range_as(L, ln, ot, &a) || !range_as(L, rn, ot, &b)) return false;
    switch (op) {
    case BINOP_ADD: return make((__int128)a.lo + b.lo, (__int128)a.hi + b.hi, ot, r);
    case BINOP_SUB: return make((__int128)a.lo - b.hi, (__int128)a.hi - b.lo, ot, r);
    case BINOP_MUL: {
        __int128 c[4] = {(__int128)a.lo * b.lo, (__int128)a.lo * b.hi, (__int128)a.hi * b.lo, (__int128)a.hi * b.hi};
        __int128 lo = c[0], hi = c[0];
        for (int i = 1; i < 4; i++) {
            if (c[i] < lo) lo = c[i];
            if (c[i] > hi) hi = c[i];
        }
        return make(lo, hi, ot, r);
    }
    case BINOP_FLOORDIV: { /* divisor >= 0 only; x // 0 is 0 (jit semantics) */
        if (b.lo < 0) return false;
        if (b.hi == 0) return make(0, 0, ot, r);
        int64_t bl = b.lo > 0 ? b.lo : 1;
        int64_t q[4] = {floordiv64(a.lo, bl), floordiv64(a.lo, b.hi), floordiv64(a.hi, bl), floordiv64(a.hi, b.hi)};
        int64_t lo = q[0], hi = q[0];
        for (int i = 1; i < 4; i++) {
            if (q[i] < lo) lo = q[i];
            if (q[i] > hi) hi = q[i];
        }
        if (b.lo == 0) { /* the zero divisor's 0 */
            if (lo > 0) lo = 0;
            if (hi < 0) hi = 0;
        }
        return make(lo, hi, ot, r);
    }
    case BINOP_MOD: /* divisor >= 0: the result is in [0, divisor); x % 0 is 0 */
        if (b.lo < 0) return false;
        if (b.hi == 0) return make(0, 0, ot, r);
        return make(0, a.lo >= 0 && a.hi < b.hi - 1 ? a.hi : b.hi - 1, ot, r);
    case BINOP_AND:
        if (a.lo >= 0 && b.lo >= 0) return make(0, a.hi < b.hi ? a.hi : b.hi, ot, r);
        if (a.lo >= 0) return make(0, a.hi, ot, r);
        if (b.lo >= 0) return make(0, b.hi, ot, r);
        return false;
    case BINOP_RSHIFT:
        if (a.lo >= 0 && b.lo >= 0) return make(0, a.hi, ot, r);
        return false;
    default:
        return false;
    }
}

/* The range of a range() loop target: [start, stop - 1] for a positive
** literal step (or none), [stop + 1, start] for a negative one. */
static bool for_range(Lower *L, AstNode *iter, const JType *vt, Rng *r) {
    JInfo *ii = jf_info(L->f, iter);
    if (iter->kind != AST_CALL || !ii || ii->builtin != JB_RANGE) return false;
    AstList *args = &iter->u.call.args;
    const JType *i64 = jt_scalar(L->vm, JK_INT64);
    Rng start = {0, 0}, stop, step = {1, 1};
    if (args->len < 1 || args->len > 3) return false;
    if (args->len >= 2 && !range_as(L, args->items[0], i64, &start)) return false;
    if (!range_as(L, args->items[args->len == 1 ? 0 : 1], i64, &stop)) return false;
    if (args->len == 3 && !range_as(L, args->items[2], i64, &step)) return false;
    if (step.lo > 0) return make(start.lo, (__int128)stop.hi - 1 > start.hi ? (__int128)stop.hi - 1 : start.hi, vt, r);
    if (step.hi < 0) return make((__int128)stop.lo + 1 < start.lo ? (__int128)stop.lo + 1 : start.lo, start.hi, vt, r);
    return false;
}

static bool var_range(Lower *L, JVar *v, Rng *r) {
    if (!defs_ready(L)) return false;
    RangeDef *d = &L->rng_defs[v - L->f->vars];
    Rng tr;
    if (!type_range(v->type, &tr)) return false;
    *r = tr;
    if (d->count != 1 || !d->value) return true;
    Rng vr;
    bool ok;
    if (d->for_range) {
        ok = for_range(L, d->value, v->type, &vr);
    } else if (d->elem < 0) {
        ok = expr_range(L, d->value, &vr);
    } else if (d->value->kind == AST_TUPLE && d->elem < d->value->u.seq.elts.len) {
        ok = expr_range(L, d->value->u.seq.elts.items[d->elem], &vr);
    } else {
        JInfo *vi = jf_info(L->f, d->value);
        ok = vi && d->value->kind == AST_CALL && (vi->builtin == JB_GRID || vi->builtin == JB_GRIDSIZE);
        if (ok) vr = vi->builtin == JB_GRID ? (Rng){0, R_EXTENT_MAX - 1} : (Rng){1, R_EXTENT_MAX};
    }
    if (ok && within(vr, tr)) *r = vr;
    return true;
}

static bool attr_range(Lower *L, AstNode *n, JInfo *info, Rng *r) {
    switch (info->builtin) {
    case JB_THREADIDX_X: case JB_THREADIDX_Y: *r = (Rng){0, 1023}; return true;
    case JB_THREADIDX_Z: *r = (Rng){0, 63}; return true;
    case JB_BLOCKDIM_X: case JB_BLOCKDIM_Y: *r = (Rng){1, 1024}; return true;
    case JB_BLOCKDIM_Z: *r = (Rng){1, 64}; return true;
    case JB_BLOCKIDX_X: case JB_BLOCKIDX_Y: case JB_BLOCKIDX_Z: *r = (Rng){0, R_I32_MAX - 1}; return true;
    case JB_GRIDDIM_X: case JB_GRIDDIM_Y: case JB_GRIDDIM_Z: *r = (Rng){1, R_I32_MAX}; return true;
    case JB_LANEID: *r = (Rng){0, 31}; return true;
    case JB_WARPSIZE: *r = (Rng){32, 32}; return true;
    case JB_ARRAY_SIZE: *r = (Rng){0, R_EXTENT_MAX}; return true;
    case JB_ARRAY_NDIM: {
        JInfo *ai = jf_info(L->f, n->u.attr.value);
        if (!ai || !ai->type || ai->type->kind != JK_ARRAY) return false;
        *r = (Rng){ai->type->ndim, ai->type->ndim};
        return true;
    }
    default: return false;
    }
}

static bool call_range(Lower *L, AstNode *n, JInfo *info, Rng *r) {
    AstList *args = &n->u.call.args;
    switch (info->builtin) {
    case JB_GRID: *r = (Rng){0, R_EXTENT_MAX - 1}; return info->type->kind != JK_TUPLE;
    case JB_GRIDSIZE: *r = (Rng){1, R_EXTENT_MAX}; return info->type->kind != JK_TUPLE;
    case JB_LEN: {
        JInfo *ai = args->len == 1 ? jf_info(L->f, args->items[0]) : NULL;
        if (!ai || !ai->type) return false;
        if (ai->type->kind == JK_TUPLE) *r = (Rng){ai->type->n, ai->type->n};
        else *r = (Rng){0, R_EXTENT_MAX};
        return true;
    }
    case JB_MIN: case JB_MAX: {
        const JType *ot = info->op_type ? info->op_type : info->type;
        if (args->len < 2 || !jt_is_int(ot)) return false;
        for (int i = 0; i < args->len; i++) {
            Rng a;
            if (!range_as(L, args->items[i], ot, &a)) return false;
            if (i == 0) *r = a;
            else if (info->builtin == JB_MIN) *r = (Rng){a.lo < r->lo ? a.lo : r->lo, a.hi < r->hi ? a.hi : r->hi};
            else *r = (Rng){a.lo > r->lo ? a.lo : r->lo, a.hi > r->hi ? a.hi : r->hi};
        }
        return true;
    }
    case JB_INT: case JB_CAST:
        return args->len == 1 && range_as(L, args->items[0], info->type, r);
    default:
        return false;
    }
}

static bool expr_range(Lower *L, AstNode *n, Rng *r) {
    JInfo *info = jf_info(L->f, n);
    if (!info || !info->type || !(jt_is_int(info->type) || info->type->kind == JK_BOOL)) return false;
    Rng tr;
    if (!type_range(info->type, &tr)) return false;
    /* a definition that refers back to itself, or a query grown too large
    ** (definitions that reuse each other twice double at each step) */
    if (L->rng_depth > 24 || L->rng_budget <= 0) {
        *r = tr;
        return true;
    }
    L->rng_budget--;
    L->rng_depth++;
    Rng v;
    bool ok = false;
    switch (n->kind) {
    case AST_INT: v = (Rng){n->u.int_, n->u.int_}; ok = true; break;
    case AST_TRUE: v = (Rng){1, 1}; ok = true; break;
    case AST_FALSE: v = (Rng){0, 0}; ok = true; break;
    case AST_NAME:
        if (info->builtin == JB_CONST) {
            if (IS_INT(info->constant)) {
                int64_t c = AS_INTLIKE(info->constant);
                v = (Rng){c, c};
                ok = true;
            }
        } else {
            JVar *var = jf_var(L->f, n->u.name.id);
            ok = var && var->type == info->type && var_range(L, var, &v);
        }
        break;
    case AST_ATTRIBUTE: ok = attr_range(L, n, info, &v); break;
    case AST_CALL: ok = call_range(L, n, info, &v); break;
    case AST_SUBSCRIPT: { /* a.shape[k] */
        JInfo *vi = jf_info(L->f, n->u.subscript.value);
        if (vi && vi->builtin == JB_ARRAY_SHAPE) {
            v = (Rng){0, R_EXTENT_MAX};
            ok = true;
        }
        break;
    }
    case AST_BINOP: {
        const JType *ot = info->op_type ? info->op_type : info->type;
        ok = binop_range(L, n->u.binop.op, n->u.binop.left, n->u.binop.right, ot, &v);
        break;
    }
    case AST_UNARYOP:
        if (n->u.unary.op == UNOP_NEG && expr_range(L, n->u.unary.operand, &v)) {
            const JType *ot = info->op_type ? info->op_type : info->type;
            ok = make(-(__int128)v.hi, -(__int128)v.lo, ot, &v);
        } else if (n->u.unary.op == UNOP_POS) {
            ok = expr_range(L, n->u.unary.operand, &v);
        }
        break;
    case AST_IFEXP: {
        Rng a, b;
        ok = expr_range(L, n->u.ifexp.body, &a) && expr_range(L, n->u.ifexp.orelse, &b);
        if (ok) v = (Rng){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
        break;
    }
    default: break;
    }
    L->rng_depth--;
    *r = ok && within(v, tr) ? v : tr;
    return true;
}

bool lower_range(Lower *L, AstNode *n, int64_t *lo, int64_t *hi) {
    if (!L->narrow || L->debug) return false;
    L->rng_budget = 2000;
    Rng r;
    if (!expr_range(L, n, &r)) return false;
    *lo = r.lo;
    *hi = r.hi;
    return true;
}

bool lower_fits_i32(Lower *L, AstNode *n) {
    int64_t lo, hi;
    return lower_range(L, n, &lo, &hi) && lo >= R_I32_MIN && hi <= R_I32_MAX;
}

/* ------------------------------------------------ facts from conditions
** Inside `if a >= b:` (and the other orderings, each conjunct of an `and`,
** the else branch of a single comparison, and the body of `while a >= b:`)
** a >= b holds as long as neither side can change: each side is a literal,
** a captured constant, a special register or a local the body never
** assigns. lower_index_nonneg uses the facts for `a - b` subscripts. */

/* A side whose value the body cannot change. */
static bool stable_side(Lower *L, AstNode *e, AstList *body) {
    JInfo *i = jf_info(L->f, e);
    if (!i || !i->type || !(jt_is_int(i->type) || i->type->kind == JK_BOOL) || i->type->kind == JK_UINT64) return false;
    if (e->kind == AST_INT) return true;
    if (e->kind == AST_NAME && i->builtin == JB_CONST) return IS_INT(i->constant);
    if (e->kind == AST_ATTRIBUTE) return i->builtin >= JB_THREADIDX_X && i->builtin <= JB_WARPSIZE;
    if (e->kind != AST_NAME) return false;
    JVar *v = jf_var(L->f, e->u.name.id);
    if (!v || !defs_ready(L)) return false;
    /* assigned in the body: the definitions scan of the body alone */
    RangeDef *saved = L->rng_defs;
    RangeDef *tmp = calloc((size_t)(L->f->nvars ? L->f->nvars : 1), sizeof *tmp);
    if (!tmp) return false;
    L->rng_defs = tmp;
    scan_body(L, body);
    bool assigned = tmp[v - L->f->vars].count != 0;
    L->rng_defs = saved;
    free(tmp);
    return !assigned;
}

static void push_fact(Lower *L, AstNode *ge, AstNode *le, bool strict, AstList *body) {
    if (L->nfacts >= LOWER_MAX_FACTS || !stable_side(L, ge, body) || !stable_side(L, le, body)) return;
    L->facts[L->nfacts++] = (LowerFact){ge, le, strict};
}

/* The facts of comparison c (when it holds, or when it fails). */
static void facts_of_compare(Lower *L, AstNode *c, bool holds, AstList *body) {
    JInfo *i = jf_info(L->f, c);
    if (c->u.compare.comparators.len != 1 || !i) return;
    const JType *ct = i->cmp_types && i->cmp_types[0] ? i->cmp_types[0] : i->op_type;
    if (!ct || (ct->kind != JK_INT32 && ct->kind != JK_INT64)) return;
    AstNode *a = c->u.compare.left, *b = c->u.compare.comparators.items[0];
    CmpOp op = c->u.compare.ops[0];
    if (!holds) { /* not (a < b) is a >= b ... */
        switch (op) {
        case CMP_LT: op = CMP_GE; break;
        case CMP_LE: op = CMP_GT; break;
        case CMP_GT: op = CMP_LE; break;
        case CMP_GE: op = CMP_LT; break;
        default: return;
        }
    }
    switch (op) {
    case CMP_GE: push_fact(L, a, b, false, body); break;
    case CMP_GT: push_fact(L, a, b, true, body); break;
    case CMP_LE: push_fact(L, b, a, false, body); break;
    case CMP_LT: push_fact(L, b, a, true, body); break;
    default: break;
    }
}

int lower_facts_push(Lower *L, AstNode *test, bool holds, AstList *body) {
    int mark = L->nfacts;
    if (!L->narrow || L->debug) return mark;
    if (test->kind == AST_COMPARE) facts_of_compare(L, test, holds, body);
    else if (test->kind == AST_BOOLOP && test->u.boolop.is_and && holds)
        for (int k = 0; k < test->u.boolop.values.len; k++) {
            AstNode *v = test->u.boolop.values.items[k];
            if (v->kind == AST_COMPARE) facts_of_compare(L, v, true, body);
        }
    return mark;
}

void lower_facts_pop(Lower *L, int mark) { L->nfacts = mark; }

/* Whether two stable sides denote the same value. */
static bool same_side(Lower *L, AstNode *x, AstNode *y) {
    if (x->kind != y->kind) return false;
    JInfo *xi = jf_info(L->f, x), *yi = jf_info(L->f, y);
    if (!xi || !yi) return false;
    switch (x->kind) {
    case AST_INT: return x->u.int_ == y->u.int_;
    case AST_NAME:
        if (xi->builtin == JB_CONST || yi->builtin == JB_CONST)
            return xi->builtin == yi->builtin && IS_INT(xi->constant) && IS_INT(yi->constant) &&
                   AS_INTLIKE(xi->constant) == AS_INTLIKE(yi->constant);
        return strcmp(x->u.name.id, y->u.name.id) == 0;
    case AST_ATTRIBUTE: return xi->builtin == yi->builtin && xi->builtin != JB_NONE;
    default: return false;
    }
}

/* The integer value of a literal or captured constant. */
static bool literal_of(Lower *L, AstNode *e, int64_t *v) {
    if (e->kind == AST_INT) {
        *v = e->u.int_;
        return true;
    }
    JInfo *i = jf_info(L->f, e);
    if (e->kind == AST_NAME && i && i->builtin == JB_CONST && IS_INT(i->constant)) {
        *v = AS_INTLIKE(i->constant);
        return true;
    }
    return false;
}

/* A fact ge >= le (or >) in scope that gives a >= b. */
static bool fact_ge(Lower *L, AstNode *a, AstNode *b) {
    for (int k = 0; k < L->nfacts; k++) {
        LowerFact *f = &L->facts[k];
        if (!same_side(L, f->ge, a)) continue;
        if (same_side(L, f->le, b)) return true;
        int64_t fl, bl;
        if (literal_of(L, f->le, &fl) && literal_of(L, b, &bl) && (f->strict ? fl >= bl - 1 : fl >= bl)) return true;
    }
    return false;
}

bool lower_index_nonneg(Lower *L, AstNode *e) {
    int64_t lo, hi;
    if (!lower_range(L, e, &lo, &hi)) return false;
    if (lo >= 0) return true;
    /* a - b under a >= b: the difference is >= 0 unless it wraps around
    ** int64, and then it is below -2^62 (one side is within +-2^62), an
    ** out-of-bounds index with or without the wrap */
    if (e->kind != AST_BINOP || e->u.binop.op != BINOP_SUB) return false;
    JInfo *i = jf_info(L->f, e);
    const JType *ot = i && i->op_type ? i->op_type : i ? i->type : NULL;
    if (!ot || (ot->kind != JK_INT32 && ot->kind != JK_INT64)) return false;
    AstNode *a = e->u.binop.left, *b = e->u.binop.right;
    int64_t alo, ahi, blo, bhi;
    const int64_t lim = (int64_t)1 << 62;
    if (!lower_range(L, a, &alo, &ahi) || !lower_range(L, b, &blo, &bhi)) return false;
    if (ot->kind == JK_INT32 ? !(alo >= INT32_MIN && ahi <= INT32_MAX && blo >= INT32_MIN && bhi <= INT32_MAX &&
                                 (ahi - blo <= INT32_MAX))
                             : !(ahi <= lim && alo >= -lim) && !(bhi <= lim && blo >= -lim))
        return false;
    return fact_ge(L, a, b);
}
