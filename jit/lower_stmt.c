/*
** lower_stmt.c — statements: assignment (with tuple unpacking and array
** stores), augmented assignment, if/while/for-range with else, break,
** continue and return.
*/
#include "target.h"

static void lower_stmt(Lower *L, AstNode *s);

void lower_body(Lower *L, AstList *body) {
    for (int i = 0; i < body->len; i++) {
        lower_open_block(L);
        lower_stmt(L, body->items[i]);
        if (lower_static_exit(L, body->items[i])) break; /* the rest was not typed: it cannot run */
    }
}

/* Stores v (of type vt) into an assignment target. */
static void assign(Lower *L, AstNode *target, LLVMValueRef v, const JType *vt) {
    switch (target->kind) {
    case AST_NAME: {
        JVar *var = jf_var(L->f, target->u.name.id);
        if (!var) lower_fail(L, target, "internal error: no variable '%s'", target->u.name.id);
        LLVMValueRef slot = L->vars[var - L->f->vars];
        if (!slot || !v) return; /* a variable without a value (module, function) */
        LLVMBuildStore(L->B, lower_convert(L, v, vt, var->type, target), slot);
        return;
    }
    case AST_SUBSCRIPT: {
        AstNode *an = target->u.subscript.value;
        const JType *at = lower_info(L, an)->type;
        if (at->kind != JK_ARRAY) {
            char tb[128];
            lower_fail(L, target, "cannot assign to an element of %s", jt_name(at, tb, sizeof tb));
        }
        if (lower_info(L, target)->builtin == JB_ARRAY_SLICE) { /* a[1:5] = x: lower_slice.c */
            lower_slice_store(L, target, v, vt);
            return;
        }
        LLVMValueRef arr = lower_expr(L, an);
        LLVMValueRef addr = lower_elem_addr(L, arr, at, target->u.subscript.index, target);
        LLVMValueRef cv = lower_convert(L, v, vt, jt_scalar(L->vm, (JKind)at->dtype), target);
        lower_store_elem(L, addr, at->dtype, cv);
        return;
    }
    case AST_TUPLE: case AST_LIST: {
        AstList *el = &target->u.seq.elts;
        if (vt->kind != JK_TUPLE || vt->n != el->len) {
            char tb[128];
            lower_fail(L, target, "cannot unpack %s into %d targets", jt_name(vt, tb, sizeof tb), el->len);
        }
        for (int i = 0; i < el->len; i++)
            assign(L, el->items[i], LLVMBuildExtractValue(L->B, v, (unsigned)i, ""), vt->elems[i]);
        return;
    }
    default:
        lower_fail(L, target, "cannot assign to %s in a kernel", ast_kind_name(target->kind));
    }
}

void lower_assign(Lower *L, AstNode *target, LLVMValueRef v, const JType *vt) { assign(L, target, v, vt); }

static void lower_augassign(Lower *L, AstNode *s) {
    JInfo *info = lower_info(L, s);
    AstNode *target = s->u.augassign.target;
    const JType *ot = info->op_type ? info->op_type : info->type;
    if (target->kind == AST_NAME) {
        JVar *var = jf_var(L->f, target->u.name.id);
        if (!var || !L->vars[var - L->f->vars]) lower_fail(L, target, "internal error: no variable '%s'", target->u.name.id);
        LLVMValueRef slot = L->vars[var - L->f->vars];
        LLVMValueRef cur = LLVMBuildLoad2(L->B, lower_type(L, var->type), slot, "");
        LLVMValueRef a = lower_convert(L, cur, var->type, ot, s);
        LLVMValueRef b = lower_expr_as(L, s->u.augassign.value, ot);
        LLVMValueRef r = lower_binop(L, s->u.augassign.op, a, b, ot, s);
        LLVMBuildStore(L->B, lower_convert(L, r, ot, var->type, s), slot);
        return;
    }
    if (target->kind == AST_SUBSCRIPT) {
        AstNode *an = target->u.subscript.value;
        const JType *at = lower_info(L, an)->type;
        if (at->kind != JK_ARRAY) lower_fail(L, target, "augmented assignment to a non-array element");
        LLVMValueRef arr = lower_expr(L, an);
        LLVMValueRef addr = lower_elem_addr(L, arr, at, target->u.subscript.index, target);
        const JType *et = jt_scalar(L->vm, (JKind)at->dtype);
        LLVMValueRef a = lower_convert(L, lower_load_elem(L, addr, at->dtype), et, ot, s);
        LLVMValueRef b = lower_expr_as(L, s->u.augassign.value, ot);
        LLVMValueRef r = lower_binop(L, s->u.augassign.op, a, b, ot, s);
        lower_store_elem(L, addr, at->dtype, lower_convert(L, r, ot, et, s));
        return;
    }
    lower_fail(L, target, "unsupported augmented assignment target");
}

static LLVMValueRef cond_of(Lower *L, AstNode *test) {
    LLVMValueRef v = lower_expr(L, test);
    return lower_truthy(L, v, lower_info(L, test)->type);
}

static void lower_if(Lower *L, AstNode *s) {
    int known = lower_static_condition(L, s->u.if_.test); /* `x is None`: only the live branch was typed */
    if (known >= 0) {
        lower_body(L, known ? &s->u.if_.body : &s->u.if_.orelse);
        return;
    }
    LLVMValueRef c = cond_of(L, s->u.if_.test);
    LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(L->C, L->fn, "then");
    LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(L->C, L->fn, "else");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "endif");
    LLVMBuildCondBr(L->B, c, bt, bf);
    LLVMPositionBuilderAtEnd(L->B, bt);
    int mark = lower_facts_push(L, s->u.if_.test, true, &s->u.if_.body);
    lower_body(L, &s->u.if_.body);
    lower_facts_pop(L, mark);
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->B))) LLVMBuildBr(L->B, end);
    LLVMPositionBuilderAtEnd(L->B, bf);
    mark = lower_facts_push(L, s->u.if_.test, false, &s->u.if_.orelse);
    lower_body(L, &s->u.if_.orelse);
    lower_facts_pop(L, mark);
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->B))) LLVMBuildBr(L->B, end);
    LLVMPositionBuilderAtEnd(L->B, end);
}

static void push_loop(Lower *L, LLVMBasicBlockRef brk, LLVMBasicBlockRef cont, const AstNode *at) {
    if (L->nloops == 64) lower_fail(L, at, "loops nested too deeply");
    L->brk[L->nloops] = brk;
    L->cont[L->nloops] = cont;
    L->nloops++;
}

static void close_to(Lower *L, LLVMBasicBlockRef bb) {
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->B))) LLVMBuildBr(L->B, bb);
}

static void lower_while(Lower *L, AstNode *s) {
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->C, L->fn, "while.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, L->fn, "while.body");
    LLVMBasicBlockRef els = LLVMAppendBasicBlockInContext(L->C, L->fn, "while.else");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "while.end");
    LLVMBuildBr(L->B, head);
    LLVMPositionBuilderAtEnd(L->B, head);
    LLVMBuildCondBr(L->B, cond_of(L, s->u.while_.test), body, els);
    LLVMPositionBuilderAtEnd(L->B, body);
    push_loop(L, end, head, s);
    int mark = lower_facts_push(L, s->u.while_.test, true, &s->u.while_.body);
    lower_body(L, &s->u.while_.body);
    lower_facts_pop(L, mark);
    L->nloops--;
    close_to(L, head);
    LLVMPositionBuilderAtEnd(L->B, els);
    lower_body(L, &s->u.while_.orelse);
    close_to(L, end);
    LLVMPositionBuilderAtEnd(L->B, end);
}

/* A literal step: its sign (1 / -1), or 0 when it is not a literal. */
static int literal_sign(AstNode *n) {
    if (n->kind == AST_INT) return n->u.int_ > 0 ? 1 : n->u.int_ < 0 ? -1 : 0;
    if (n->kind == AST_UNARYOP && n->u.unary.op == UNOP_NEG && n->u.unary.operand->kind == AST_INT)
        return n->u.unary.operand->u.int_ > 0 ? -1 : 0;
    return 0;
}

int lower_range_args(Lower *L, AstNode *iter, LLVMValueRef *start, LLVMValueRef *stop, LLVMValueRef *step) {
    JInfo *ii = lower_info(L, iter);
    if (iter->kind != AST_CALL || ii->builtin != JB_RANGE)
        lower_fail(L, iter, "kernels can only loop over range(...)");
    AstList *args = &iter->u.call.args;
    if (args->len < 1 || args->len > 3) lower_fail(L, iter, "range expects 1 to 3 arguments");
    const JType *i64 = jt_scalar(L->vm, JK_INT64);
    if (args->len == 1) {
        *start = LLVMConstInt(L->t_i64, 0, 0);
        *stop = lower_expr_as(L, args->items[0], i64);
    } else {
        *start = lower_expr_as(L, args->items[0], i64);
        *stop = lower_expr_as(L, args->items[1], i64);
    }
    if (args->len < 3) {
        *step = LLVMConstInt(L->t_i64, 1, 0);
        return 1;
    }
    *step = lower_expr_as(L, args->items[2], i64);
    return literal_sign(args->items[2]);
}

LLVMValueRef lower_range_cond(Lower *L, LLVMValueRef c, LLVMValueRef stop, LLVMValueRef step, int sign) {
    LLVMBuilderRef B = L->B;
    if (sign > 0) return LLVMBuildICmp(B, LLVMIntSLT, c, stop, "");
    if (sign < 0) return LLVMBuildICmp(B, LLVMIntSGT, c, stop, "");
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(step));
    LLVMValueRef up = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGT, step, zero, ""),
                                   LLVMBuildICmp(B, LLVMIntSLT, c, stop, ""), "");
    LLVMValueRef down = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSLT, step, zero, ""),
                                     LLVMBuildICmp(B, LLVMIntSGT, c, stop, ""), "");
    return LLVMBuildOr(B, up, down, "");
}

/* for target in range(...): Python's semantics (any step sign; zero
** iterations leave the target unchanged; it keeps its last value). */
static void lower_for(Lower *L, AstNode *s) {
    if (lower_for_iter(L, s)) return; /* arrays, tuples, enumerate, zip: lower_iter.c */
    AstNode *iter = s->u.for_.iter;
    AstList *args = &iter->u.call.args;
    const JType *i64 = jt_scalar(L->vm, JK_INT64);
    LLVMBuilderRef B = L->B;
    LLVMValueRef start, stop, step;
    int sign = lower_range_args(L, iter, &start, &stop, &step);
    /* 32-bit index variant: a 32-bit counter when start and stop fit and
    ** the step is positive and small enough that i + step cannot wrap */
    int64_t lo0 = 0, hi0 = 0, lo1, hi1, lo2 = 1, hi2 = 1;
    bool c32 = sign > 0 && lower_range(L, args->items[args->len == 1 ? 0 : 1], &lo1, &hi1) &&
               (args->len == 1 || lower_range(L, args->items[0], &lo0, &hi0)) &&
               (args->len < 3 || lower_range(L, args->items[2], &lo2, &hi2)) && lo2 >= 1 &&
               lo0 >= INT32_MIN && hi0 <= INT32_MAX && lo1 >= INT32_MIN && hi1 + hi2 <= INT32_MAX;
    LLVMTypeRef ct = c32 ? L->t_i32 : L->t_i64;
    if (c32) {
        start = LLVMBuildTrunc(B, start, ct, "");
        stop = LLVMBuildTrunc(B, stop, ct, "");
        step = LLVMBuildTrunc(B, step, ct, "");
    }
    LLVMValueRef cur = lower_alloca(L, ct, "range.i");
    LLVMBuildStore(B, start, cur);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->C, L->fn, "for.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, L->fn, "for.body");
    LLVMBasicBlockRef latch = LLVMAppendBasicBlockInContext(L->C, L->fn, "for.latch");
    LLVMBasicBlockRef els = LLVMAppendBasicBlockInContext(L->C, L->fn, "for.else");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "for.end");
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, head);
    LLVMValueRef c = LLVMBuildLoad2(B, ct, cur, "");
    LLVMBuildCondBr(B, lower_range_cond(L, c, stop, step, sign), body, els);
    LLVMPositionBuilderAtEnd(B, body);
    assign(L, s->u.for_.target, c32 ? LLVMBuildSExt(B, c, L->t_i64, "") : c, i64);
    push_loop(L, end, latch, s);
    lower_body(L, &s->u.for_.body);
    L->nloops--;
    close_to(L, latch);
    LLVMPositionBuilderAtEnd(B, latch);
    LLVMValueRef c2 = LLVMBuildLoad2(B, ct, cur, "");
    LLVMBuildStore(B, c32 ? LLVMBuildNSWAdd(B, c2, step, "") : LLVMBuildAdd(B, c2, step, ""), cur);
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, els);
    lower_body(L, &s->u.for_.orelse);
    close_to(L, end);
    LLVMPositionBuilderAtEnd(B, end);
}

static void lower_return(Lower *L, AstNode *s) {
    AstNode *vn = s->u.ret.value;
    if (vn) {
        LLVMValueRef v = lower_expr(L, vn);
        if (L->ret_slot && v)
            LLVMBuildStore(L->B, lower_convert(L, v, lower_info(L, vn)->type, L->f->ret, vn), L->ret_slot);
    }
    LLVMBuildBr(L->B, L->ret_bb);
}

static void lower_stmt(Lower *L, AstNode *s) {
    switch (s->kind) {
    case AST_EXPR:
        if (s->u.expr.value->kind == AST_STR) return; /* docstring */
        lower_expr(L, s->u.expr.value);
        return;
    case AST_PASS: case AST_GLOBAL: case AST_NONLOCAL: case AST_ASSERT:
        return; /* asserts are off in kernels, as in Numba without debug */
    case AST_ASSIGN: {
        AstNode *vn = s->u.assign.value;
        LLVMValueRef v = lower_expr(L, vn);
        const JType *vt = lower_info(L, vn)->type;
        for (int i = 0; i < s->u.assign.targets.len; i++) assign(L, s->u.assign.targets.items[i], v, vt);
        return;
    }
    case AST_ANNASSIGN:
        if (s->u.annassign.value) {
            AstNode *vn = s->u.annassign.value;
            assign(L, s->u.annassign.target, lower_expr(L, vn), lower_info(L, vn)->type);
        }
        return;
    case AST_AUGASSIGN: lower_augassign(L, s); return;
    case AST_IF: lower_if(L, s); return;
    case AST_WHILE: lower_while(L, s); return;
    case AST_FOR: lower_for(L, s); return;
    case AST_BREAK:
        if (!L->nloops) lower_fail(L, s, "'break' outside loop");
        LLVMBuildBr(L->B, L->brk[L->nloops - 1]);
        return;
    case AST_CONTINUE:
        if (!L->nloops) lower_fail(L, s, "'continue' outside loop");
        LLVMBuildBr(L->B, L->cont[L->nloops - 1]);
        return;
    case AST_RETURN: lower_return(L, s); return;
    case AST_RAISE: lower_raise(L, s); return; /* lower_raise.c */
    default:
        lower_fail(L, s, "unsupported statement (%s) in a kernel", ast_kind_name(s->kind));
    }
}
