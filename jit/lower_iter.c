/*
** lower_iter.c — `for` loops over arrays, tuples, enumerate(), zip() and
** literal_unroll() (types from infer_iter.c). Every iterable is evaluated
** once before the loop and becomes a source with a length and an item at
** index i; the loop counts i from 0 to the length (zip: the shortest).
** A tuple at the top of the loop is stored converted to the item type in a
** small local array, so heterogeneous tuples and literal_unroll need no
** copies of the body.
*/
#include "target.h"

#define MAX_SRC 64

typedef struct Src {
    JBuiltin kind;        /* JB_RANGE, JB_ENUMERATE, JB_ZIP, or JB_NONE: an array or tuple value */
    const JType *t;       /* JB_NONE: the array or tuple type */
    const JType *item;    /* the type of each item */
    LLVMValueRef v;       /* array value; tuple: the local array of items */
    LLVMValueRef start, step; /* range; enumerate: start */
    LLVMValueRef len;     /* i64 */
    int kid, nkids;       /* enumerate / zip: their sources in the pool */
} Src;

typedef struct Pool {
    Src s[MAX_SRC];
    int n;
} Pool;

static int new_src(Lower *L, Pool *P, const AstNode *at) {
    if (P->n == MAX_SRC) lower_fail(L, at, "iterable nested too deeply");
    Src *s = &P->s[P->n];
    *s = (Src){0};
    return P->n++;
}

/* len(range(start, stop, step)) as Python counts it (a zero step gives no
** items here, where Python raises ValueError before the loop). */
static LLVMValueRef iter_range_len(Lower *L, LLVMValueRef start, LLVMValueRef stop, LLVMValueRef step) {
    LLVMBuilderRef B = L->B;
    LLVMValueRef one = LLVMConstInt(L->t_i64, 1, 0), zero = LLVMConstInt(L->t_i64, 0, 0);
    LLVMValueRef up = LLVMBuildICmp(B, LLVMIntSGT, step, zero, "");
    LLVMValueRef span = LLVMBuildSelect(B, up, LLVMBuildSub(B, stop, start, ""), LLVMBuildSub(B, start, stop, ""), "");
    LLVMValueRef mag = LLVMBuildSelect(B, up, step, LLVMBuildNeg(B, step, ""), "");
    LLVMValueRef safe = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, step, zero, ""), one, mag, "");
    /* (span - 1) / |step| + 1 items when span > 0: no overflow for any step */
    LLVMValueRef n = LLVMBuildAdd(B, LLVMBuildUDiv(B, LLVMBuildSub(B, span, one, ""), safe, ""), one, "");
    n = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, span, zero, ""), n, zero, "");
    return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, step, zero, ""), zero, n, "");
}

/* Evaluates iterable n (items of type item) into a new source. */
static int prepare(Lower *L, Pool *P, AstNode *n, const JType *item) {
    JInfo *info = lower_info(L, n);
    if (n->kind == AST_CALL && info->builtin == JB_LITERAL_UNROLL)
        return prepare(L, P, n->u.call.args.items[0], item);
    int id = new_src(L, P, n);
    P->s[id].item = item;
    LLVMBuilderRef B = L->B;
    const JType *i64 = jt_scalar(L->vm, JK_INT64);
    if (n->kind == AST_CALL && info->builtin == JB_RANGE) {
        LLVMValueRef stop;
        lower_range_args(L, n, &P->s[id].start, &stop, &P->s[id].step);
        P->s[id].kind = JB_RANGE;
        P->s[id].len = iter_range_len(L, P->s[id].start, stop, P->s[id].step);
        return id;
    }
    if (n->kind == AST_CALL && info->builtin == JB_ENUMERATE) {
        AstList *a = &n->u.call.args;
        AstNode *start = a->len == 2 ? a->items[1]
                         : n->u.call.keywords.len ? n->u.call.keywords.items[0]->u.keyword.value : NULL;
        LLVMValueRef st = start ? lower_expr_as(L, start, i64) : LLVMConstInt(L->t_i64, 0, 0);
        int kid = prepare(L, P, a->items[0], item->elems[1]);
        Src *s = &P->s[id];
        s->kind = JB_ENUMERATE;
        s->start = st;
        s->kid = kid;
        s->nkids = 1;
        s->len = P->s[kid].len;
        return id;
    }
    if (n->kind == AST_CALL && info->builtin == JB_ZIP) {
        AstList *a = &n->u.call.args;
        int first = -1;
        LLVMValueRef len = NULL;
        int kids[16];
        for (int k = 0; k < a->len && k < 16; k++) kids[k] = prepare(L, P, a->items[k], item->elems[k]);
        /* the kids must be contiguous in the pool for item_at: copy them after */
        for (int k = 0; k < a->len && k < 16; k++) {
            int c = new_src(L, P, n);
            P->s[c] = P->s[kids[k]];
            if (first < 0) first = c;
            LLVMValueRef l = P->s[c].len;
            len = len ? LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, l, len, ""), l, len, "") : l;
        }
        Src *s = &P->s[id];
        s->kind = JB_ZIP;
        s->kid = first;
        s->nkids = a->len;
        s->len = len;
        return id;
    }
    const JType *t = info->type;
    LLVMValueRef v = lower_expr(L, n);
    Src *s = &P->s[id];
    s->t = t;
    if (t->kind == JK_ARRAY) {
        s->v = v;
        s->len = LLVMBuildExtractValue(B, LLVMBuildExtractValue(B, v, 1, ""), 0, "");
        return id;
    }
    if (t->kind == JK_TUPLE) {
        LLVMTypeRef it = lower_type(L, item);
        LLVMTypeRef at = LLVMArrayType2(it, (uint64_t)t->n);
        LLVMValueRef slot = lower_alloca(L, at, "iter.tuple");
        for (int k = 0; k < t->n; k++) {
            LLVMValueRef e = lower_convert(L, LLVMBuildExtractValue(B, v, (unsigned)k, ""), t->elems[k], item, n);
            LLVMValueRef gi[2] = {LLVMConstInt(L->t_i32, 0, 0), LLVMConstInt(L->t_i32, (unsigned)k, 0)};
            LLVMBuildStore(B, e, LLVMBuildGEP2(B, at, slot, gi, 2, ""));
        }
        s->v = slot;
        s->len = LLVMConstInt(L->t_i64, (unsigned long long)t->n, 0);
        return id;
    }
    lower_fail(L, n, "internal error: cannot iterate over this value");
}

/* Item i (an i64 in [0, len)) of source id. */
static LLVMValueRef item_at(Lower *L, Pool *P, int id, LLVMValueRef i) {
    Src *s = &P->s[id];
    LLVMBuilderRef B = L->B;
    switch (s->kind) {
    case JB_RANGE: return LLVMBuildAdd(B, s->start, LLVMBuildMul(B, i, s->step, ""), "");
    case JB_ENUMERATE: {
        LLVMValueRef t = LLVMGetUndef(lower_type(L, s->item));
        t = LLVMBuildInsertValue(B, t, LLVMBuildAdd(B, s->start, i, ""), 0, "");
        return LLVMBuildInsertValue(B, t, item_at(L, P, s->kid, i), 1, "");
    }
    case JB_ZIP: {
        LLVMValueRef t = LLVMGetUndef(lower_type(L, s->item));
        for (int k = 0; k < s->nkids; k++) t = LLVMBuildInsertValue(B, t, item_at(L, P, s->kid + k, i), (unsigned)k, "");
        return t;
    }
    default: break;
    }
    if (s->t->kind == JK_TUPLE) {
        LLVMTypeRef it = lower_type(L, s->item);
        LLVMValueRef gi[2] = {LLVMConstInt(L->t_i32, 0, 0), i};
        return LLVMBuildLoad2(B, it, LLVMBuildGEP2(B, LLVMArrayType2(it, (uint64_t)s->t->n), s->v, gi, 2, ""), "");
    }
    /* an array: element i along the first axis */
    const JType *at = s->t;
    LLVMValueRef data = LLVMBuildExtractValue(B, s->v, 0, "");
    LLVMValueRef strides = LLVMBuildExtractValue(B, s->v, 2, "");
    LLVMValueRef addr;
    if (at->layout == 'C' && at->ndim == 1) {
        addr = LLVMBuildGEP2(B, lower_mem_type(L, jt_scalar(L->vm, (JKind)at->dtype)), data, &i, 1, "");
    } else {
        LLVMValueRef off = LLVMBuildMul(B, i, LLVMBuildExtractValue(B, strides, 0, ""), "");
        addr = LLVMBuildGEP2(B, L->t_i8, data, &off, 1, "");
    }
    if (at->ndim == 1) return lower_load_elem(L, addr, at->dtype);
    /* a view of the remaining dimensions */
    LLVMValueRef shape = LLVMBuildExtractValue(B, s->v, 1, "");
    LLVMTypeRef dims = LLVMArrayType2(L->t_i64, (uint64_t)(at->ndim - 1));
    LLVMValueRef ns = LLVMGetUndef(dims), nt = LLVMGetUndef(dims);
    for (int k = 1; k < at->ndim; k++) {
        ns = LLVMBuildInsertValue(B, ns, LLVMBuildExtractValue(B, shape, (unsigned)k, ""), (unsigned)(k - 1), "");
        nt = LLVMBuildInsertValue(B, nt, LLVMBuildExtractValue(B, strides, (unsigned)k, ""), (unsigned)(k - 1), "");
    }
    LLVMValueRef r = LLVMGetUndef(lower_type(L, s->item));
    r = LLVMBuildInsertValue(B, r, addr, 0, "");
    r = LLVMBuildInsertValue(B, r, ns, 1, "");
    return LLVMBuildInsertValue(B, r, nt, 2, "");
}

bool lower_for_iter(Lower *L, AstNode *s) {
    AstNode *iter = s->u.for_.iter;
    JInfo *ii = lower_info(L, iter);
    if (iter->kind == AST_CALL && ii->builtin == JB_RANGE) return false;
    const JType *item = lower_info(L, s)->type;
    if (!item) lower_fail(L, s, "internal error: for loop without an item type");
    Pool pool;
    pool.n = 0;
    int root = prepare(L, &pool, iter, item);
    LLVMBuilderRef B = L->B;
    LLVMValueRef len = pool.s[root].len;
    LLVMValueRef cur = lower_alloca(L, L->t_i64, "iter.i");
    LLVMBuildStore(B, LLVMConstInt(L->t_i64, 0, 0), cur);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->C, L->fn, "iter.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, L->fn, "iter.body");
    LLVMBasicBlockRef latch = LLVMAppendBasicBlockInContext(L->C, L->fn, "iter.latch");
    LLVMBasicBlockRef els = LLVMAppendBasicBlockInContext(L->C, L->fn, "iter.else");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "iter.end");
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, head);
    LLVMValueRef c = LLVMBuildLoad2(B, L->t_i64, cur, "");
    LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, c, len, ""), body, els);
    LLVMPositionBuilderAtEnd(B, body);
    lower_assign(L, s->u.for_.target, item_at(L, &pool, root, c), item);
    if (L->nloops == 64) lower_fail(L, s, "loops nested too deeply");
    L->brk[L->nloops] = end;
    L->cont[L->nloops] = latch;
    L->nloops++;
    lower_body(L, &s->u.for_.body);
    L->nloops--;
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(B))) LLVMBuildBr(B, latch);
    LLVMPositionBuilderAtEnd(B, latch);
    LLVMValueRef c2 = LLVMBuildLoad2(B, L->t_i64, cur, "");
    LLVMBuildStore(B, LLVMBuildNSWAdd(B, c2, LLVMConstInt(L->t_i64, 1, 0), ""), cur);
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, els); /* for ... else: runs unless the loop was left by break */
    lower_body(L, &s->u.for_.orelse);
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(B))) LLVMBuildBr(B, end);
    LLVMPositionBuilderAtEnd(B, end);
    return true;
}
