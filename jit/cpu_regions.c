/*
** cpu_regions.c — barrier kernels on the CPU device as loops over threads
** ("loop fission" at the barriers), instead of one fiber per thread.
**
** The rule (checked on the typed AST, conservatively; anything else keeps
** the fiber path):
**   - The kernel's statements that contain a barrier form its skeleton:
**     cuda.syncthreads() itself, and for-range / while / if statements whose
**     head is uniform (the same in every thread of the block) and whose
**     bodies are skeletons again. Everything else in a skeleton statement
**     list is an ordinary statement.
**   - A uniform expression reads only literals, constants, blockIdx,
**     blockDim, gridDim, gridsize, shapes of uniform arrays, shared arrays
**     and uniform variables, through operators and pure builtins. A variable
**     is uniform when every assignment to it is a single-name assignment
**     (=, op=, annotated) or a tuple assignment (h, w = a.shape, all names
**     uniform) of a uniform expression placed directly in a skeleton list,
**     or it is the target of a skeleton for loop (a fixed point:
**     parameters start uniform).
**   - syncthreads_count/_and/_or only as a skeleton statement of its own
**     (`v = cuda.syncthreads_count(pred)` or the bare call): the region
**     before it folds each thread's predicate into one accumulator, and a
**     thread loop of its own gives every thread the result.
**   - No warp collective, print or device function with a barrier; no
**     break/continue leaving a skeleton loop's ordinary statement.
**   - A thread that returns sits out every later region (check_returns),
**     as a returned fiber no longer counts toward a barrier.
**
** Lowering: consecutive ordinary statements form a region, emitted as
** z/y/x loops over the block's threads with threadIdx = the loop indices.
** Skeleton loops and ifs are emitted once per block around their regions
** (their heads evaluated once: uniformity makes thread 0's value
** everybody's). Uniform variables live in one scalar for the block: one
** assigned once is computed just before the thread loop of its region;
** others (loop counters like `s //= 2`) have their assignments executed
** once per block between regions, so no thread sees another's update
** early. A variable assigned once from thread and block indices
** (t = cuda.threadIdx.x, x, y = cuda.grid(2)) is recomputed at the top of
** every later region. Any other variable whose value can flow from one
** region into another (read before written in a region) gets one slot per
** thread in a per-block scratch buffer (gpy_cpu_scratch); so does every
** cuda.local.array. Threads run each region in the order the fiber
** scheduler runs them (x fastest), so a data race inside one region
** resolves as on fibers; a skeleton if/loop head without a barrier before
** it also starts a region, so a race across it can resolve differently
** (its result is undefined in CUDA anyway).
*/
#include <stdlib.h>
#include <string.h>

#include "cpu_regions.h"

/* One assignment to a variable placed directly in a skeleton list. */
typedef struct Site {
    int var;
    AstNode *stmt;
    AstNode *rhs;   /* the assigned expression (NULL for a for target) */
    bool is_for;    /* target of a skeleton for loop */
    bool aug;       /* op= */
    int depth;      /* skeleton loops around it */
    int elem;       /* -1, or which element of the tuple rhs (a, b = expr) */
} Site;

/* How a statement of a skeleton list is emitted. REGION: in a thread loop;
** SA: a uniform variable's only assignment, once per block before the
** thread loop of its region; UNIFORM: a uniform variable's assignment, once
** per block between regions; SYNC: a barrier (nothing to emit); REDUCE:
** syncthreads_count/_and/_or; FOR/WHILE/IF: skeleton control flow. */
typedef enum { ST_REGION, ST_SA, ST_UNIFORM, ST_SYNC, ST_REDUCE, ST_FOR, ST_WHILE, ST_IF } StmtKind;

struct CpuRegions {
    const JFunc *f;
    int nvars;
    uint8_t *uniform;     /* same value in every thread of the block: one scalar */
    uint8_t *hoisted;     /* uniform, its assignments run once per block between regions */
    uint8_t *per_thread;  /* crosses regions: a slot per thread in the scratch */
    uint8_t *remat;       /* a function of the thread index assigned once: recomputed in each region */
    AstNode **remat_rhs;  /* its expression */
    int *remat_elem;      /* -1, or the element of the tuple remat_rhs it unpacks (x, y = cuda.grid(2)) */
    AstNode **remat_stmt; /* the assignment */
    uint8_t *remat_live;  /* lowering: its assignment was emitted (later regions recompute it) */
    uint8_t *other;       /* planning: assigned somewhere other than a skeleton site */
    uint8_t *exposed;     /* planning: read before written in some region */
    Site *sites;
    int nsites, capsites;
    const AstNode **locals; /* cuda.local.array calls */
    size_t *local_bytes;    /* per thread, rounded up to 16 */
    int nlocals, caplocals;
    bool fail;
    /* lowering */
    LLVMValueRef *orig;       /* every variable's own alloca */
    LLVMValueRef *base;       /* per-thread variable: its array in the scratch */
    LLVMValueRef *local_base; /* local array k: its per-thread blocks */
    LLVMValueRef nt[3];       /* blockDim (i32) */
    LLVMValueRef lin;         /* inside a region: the linear thread index (i64) */
    LLVMBasicBlockRef ret_bb; /* the kernel's own return block */
    AstNode **run;            /* the statements of the region being emitted */
    int caprun;
    bool exits;               /* threads may return before the end: per-thread alive flags */
    LLVMValueRef alive;       /* their array (i8 per thread) */
};

/* ------------------------------------------------------------ AST walks */

typedef bool (*NodeFn)(void *cx, AstNode *n); /* false stops the walk */

static bool walk(AstNode *n, NodeFn fn, void *cx);

static bool walk_list(AstList *l, NodeFn fn, void *cx) {
    for (int i = 0; i < l->len; i++)
        if (!walk(l->items[i], fn, cx)) return false;
    return true;
}

/* Pre-order over every node of an expression or statement kernels accept. */
static bool walk(AstNode *n, NodeFn fn, void *cx) {
    if (!n) return true;
    if (!fn(cx, n)) return false;
    switch (n->kind) {
    case AST_BINOP: return walk(n->u.binop.left, fn, cx) && walk(n->u.binop.right, fn, cx);
    case AST_UNARYOP: return walk(n->u.unary.operand, fn, cx);
    case AST_BOOLOP: return walk_list(&n->u.boolop.values, fn, cx);
    case AST_COMPARE: return walk(n->u.compare.left, fn, cx) && walk_list(&n->u.compare.comparators, fn, cx);
    case AST_CALL:
        return walk(n->u.call.func, fn, cx) && walk_list(&n->u.call.args, fn, cx) &&
               walk_list(&n->u.call.keywords, fn, cx);
    case AST_KEYWORD: return walk(n->u.keyword.value, fn, cx);
    case AST_ATTRIBUTE: return walk(n->u.attr.value, fn, cx);
    case AST_SUBSCRIPT: return walk(n->u.subscript.value, fn, cx) && walk(n->u.subscript.index, fn, cx);
    case AST_SLICE:
        return walk(n->u.slice.lower, fn, cx) && walk(n->u.slice.upper, fn, cx) && walk(n->u.slice.step, fn, cx);
    case AST_LIST: case AST_TUPLE: case AST_SET: return walk_list(&n->u.seq.elts, fn, cx);
    case AST_STARRED: return walk(n->u.starred.value, fn, cx);
    case AST_IFEXP:
        return walk(n->u.ifexp.test, fn, cx) && walk(n->u.ifexp.body, fn, cx) && walk(n->u.ifexp.orelse, fn, cx);
    case AST_NAMEDEXPR: return walk(n->u.named.target, fn, cx) && walk(n->u.named.value, fn, cx);
    case AST_EXPR: return walk(n->u.expr.value, fn, cx);
    case AST_ASSIGN: return walk_list(&n->u.assign.targets, fn, cx) && walk(n->u.assign.value, fn, cx);
    case AST_AUGASSIGN: return walk(n->u.augassign.target, fn, cx) && walk(n->u.augassign.value, fn, cx);
    case AST_ANNASSIGN: return walk(n->u.annassign.target, fn, cx) && walk(n->u.annassign.value, fn, cx);
    case AST_IF:
        return walk(n->u.if_.test, fn, cx) && walk_list(&n->u.if_.body, fn, cx) && walk_list(&n->u.if_.orelse, fn, cx);
    case AST_WHILE:
        return walk(n->u.while_.test, fn, cx) && walk_list(&n->u.while_.body, fn, cx) &&
               walk_list(&n->u.while_.orelse, fn, cx);
    case AST_FOR:
        return walk(n->u.for_.target, fn, cx) && walk(n->u.for_.iter, fn, cx) &&
               walk_list(&n->u.for_.body, fn, cx) && walk_list(&n->u.for_.orelse, fn, cx);
    case AST_RETURN: return walk(n->u.ret.value, fn, cx);
    default: return true; /* leaves; asserts are not lowered */
    }
}

static JBuiltin builtin_of(const CpuRegions *P, const AstNode *n) {
    JInfo *i = jf_info(P->f, n);
    return i ? i->builtin : JB_NONE;
}

/* The variable index of a name node, or -1 (constants, modules). */
static int var_of(const CpuRegions *P, const AstNode *n) {
    if (n->kind != AST_NAME || builtin_of(P, n) == JB_CONST) return -1;
    JVar *v = jf_var(P->f, n->u.name.id);
    return v ? (int)(v - P->f->vars) : -1;
}

/* Calls that need threads to run in lockstep or to meet: fibers only. */
static bool needs_fibers(void *cx, AstNode *n) {
    CpuRegions *P = cx;
    if (n->kind != AST_CALL) return true;
    JInfo *i = jf_info(P->f, n);
    if (!i) return true;
    JBuiltin b = i->builtin;
    if (b == JB_PRINT || (b >= JB_SHFL_IDX && b <= JB_SYNCWARP) || b == JB_MATCH_ANY || b == JB_MATCH_ALL ||
        (b == JB_DEVICE_CALL && i->callee && i->callee->uses_barrier)) {
        P->fail = true;
        return false;
    }
    return true;
}

static bool is_reduce(JBuiltin b) {
    return b == JB_SYNCTHREADS_COUNT || b == JB_SYNCTHREADS_AND || b == JB_SYNCTHREADS_OR;
}

static bool find_sync(void *cx, AstNode *n) {
    if (n->kind != AST_CALL) return true;
    JBuiltin b = builtin_of(cx, n);
    return !(b == JB_SYNCTHREADS || is_reduce(b));
}

static bool has_barrier(CpuRegions *P, AstNode *s) { return !walk(s, find_sync, P); }

static bool find_return(void *cx, AstNode *n) {
    (void)cx;
    return n->kind != AST_RETURN;
}

static bool has_return(AstNode *s) { return !walk(s, find_return, NULL); }

/* A break/continue of s that is not inside a loop of s. */
static bool loose_jump(AstNode *s) {
    switch (s->kind) {
    case AST_BREAK: case AST_CONTINUE: return true;
    case AST_IF:
        for (int i = 0; i < s->u.if_.body.len; i++)
            if (loose_jump(s->u.if_.body.items[i])) return true;
        for (int i = 0; i < s->u.if_.orelse.len; i++)
            if (loose_jump(s->u.if_.orelse.items[i])) return true;
        return false;
    case AST_WHILE: case AST_FOR: { /* their else clause runs outside their loop */
        AstList *e = s->kind == AST_WHILE ? &s->u.while_.orelse : &s->u.for_.orelse;
        for (int i = 0; i < e->len; i++)
            if (loose_jump(e->items[i])) return true;
        return false;
    }
    default: return false;
    }
}

/* The target variable of a single-name assignment statement, else -1. */
static int simple_target(const CpuRegions *P, AstNode *s, AstNode **rhs, bool *aug) {
    AstNode *t = NULL, *v = NULL;
    *aug = false;
    if (s->kind == AST_ASSIGN && s->u.assign.targets.len == 1) {
        t = s->u.assign.targets.items[0];
        v = s->u.assign.value;
    } else if (s->kind == AST_AUGASSIGN) {
        t = s->u.augassign.target;
        v = s->u.augassign.value;
        *aug = true;
    } else if (s->kind == AST_ANNASSIGN && s->u.annassign.value) {
        t = s->u.annassign.target;
        v = s->u.annassign.value;
    }
    if (!t || t->kind != AST_NAME) return -1;
    *rhs = v;
    return var_of(P, t);
}

/* The names of `a, b, ... = expr` (all plain local names), else NULL. */
static AstList *tuple_targets(const CpuRegions *P, AstNode *s) {
    if (s->kind != AST_ASSIGN || s->u.assign.targets.len != 1 || s->u.assign.targets.items[0]->kind != AST_TUPLE)
        return NULL;
    AstList *el = &s->u.assign.targets.items[0]->u.seq.elts;
    for (int e = 0; e < el->len; e++)
        if (el->items[e]->kind != AST_NAME || var_of(P, el->items[e]) < 0) return NULL;
    return el;
}

/* Whether every name a tuple assignment s writes is uniform; *hoist when one is hoisted. */
static bool tuple_uniform(const CpuRegions *P, AstList *el, bool *hoist) {
    *hoist = false;
    for (int e = 0; e < el->len; e++) {
        int v = var_of(P, el->items[e]);
        if (!P->uniform[v]) return false;
        *hoist |= P->hoisted[v];
    }
    return true;
}

/* Marks every variable s assigns (in any way) as assigned outside a skeleton site. */
static void mark_target(CpuRegions *P, AstNode *t) {
    if (!t) return;
    if (t->kind == AST_NAME) {
        int v = var_of(P, t);
        if (v >= 0) P->other[v] = 1;
    } else if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
        for (int i = 0; i < t->u.seq.elts.len; i++) mark_target(P, t->u.seq.elts.items[i]);
    } else if (t->kind == AST_STARRED) {
        mark_target(P, t->u.starred.value);
    }
}

static bool mark_assigned(void *cx, AstNode *n) {
    CpuRegions *P = cx;
    switch (n->kind) {
    case AST_ASSIGN:
        for (int i = 0; i < n->u.assign.targets.len; i++) mark_target(P, n->u.assign.targets.items[i]);
        break;
    case AST_AUGASSIGN: mark_target(P, n->u.augassign.target); break;
    case AST_ANNASSIGN: mark_target(P, n->u.annassign.target); break;
    case AST_FOR: mark_target(P, n->u.for_.target); break;
    case AST_NAMEDEXPR: mark_target(P, n->u.named.target); break;
    default: break;
    }
    return true;
}

/* --------------------------------------------------------- uniformity */

static bool uniform_expr(const CpuRegions *P, AstNode *n);

static bool uniform_list(const CpuRegions *P, AstList *l) {
    for (int i = 0; i < l->len; i++)
        if (!uniform_expr(P, l->items[i])) return false;
    return true;
}

static bool is_value_free(const JInfo *i) {
    JKind k = i && i->type ? i->type->kind : JK_VOID;
    return k == JK_MODULE || k == JK_FUNCTION || k == JK_DTYPE;
}

static bool uniform_expr(const CpuRegions *P, AstNode *n) {
    if (!n) return true;
    JInfo *i = jf_info(P->f, n);
    switch (n->kind) {
    case AST_INT: case AST_FLOAT: case AST_TRUE: case AST_FALSE: case AST_NONE: case AST_STR: case AST_BIGINT: return true;
    case AST_NAME: {
        if (i && i->builtin == JB_CONST) return true;
        int v = var_of(P, n);
        if (v >= 0) return P->uniform[v];
        return is_value_free(i);
    }
    case AST_ATTRIBUTE:
        if (!i) return false;
        switch (i->builtin) {
        case JB_CONST: case JB_BLOCKIDX_X: case JB_BLOCKIDX_Y: case JB_BLOCKIDX_Z: case JB_BLOCKDIM_X:
        case JB_BLOCKDIM_Y: case JB_BLOCKDIM_Z: case JB_GRIDDIM_X: case JB_GRIDDIM_Y: case JB_GRIDDIM_Z:
        case JB_WARPSIZE:
            return true;
        case JB_ARRAY_SHAPE: case JB_ARRAY_SIZE: case JB_ARRAY_NDIM: return uniform_expr(P, n->u.attr.value);
        case JB_NONE: return is_value_free(i);
        default: return false;
        }
    case AST_BINOP: return uniform_expr(P, n->u.binop.left) && uniform_expr(P, n->u.binop.right);
    case AST_UNARYOP: return uniform_expr(P, n->u.unary.operand);
    case AST_BOOLOP: return uniform_list(P, &n->u.boolop.values);
    case AST_COMPARE: return uniform_expr(P, n->u.compare.left) && uniform_list(P, &n->u.compare.comparators);
    case AST_IFEXP:
        return uniform_expr(P, n->u.ifexp.test) && uniform_expr(P, n->u.ifexp.body) &&
               uniform_expr(P, n->u.ifexp.orelse);
    case AST_TUPLE: return uniform_list(P, &n->u.seq.elts);
    case AST_SUBSCRIPT: {
        JInfo *vi = jf_info(P->f, n->u.subscript.value);
        if (!vi || !vi->type || vi->type->kind != JK_TUPLE) return false; /* array elements: memory */
        return uniform_expr(P, n->u.subscript.value) && uniform_expr(P, n->u.subscript.index);
    }
    case AST_CALL: {
        if (!i) return false;
        JBuiltin b = i->builtin;
        if (b == JB_SHARED_ARRAY || b == JB_CONST_ARRAY) return true; /* one address per block */
        bool pure = b == JB_GRIDSIZE || b == JB_MIN || b == JB_MAX || b == JB_ABS || b == JB_ROUND ||
                    b == JB_INT || b == JB_FLOAT || b == JB_BOOL || b == JB_CAST || b == JB_LEN ||
                    (b >= JB_MATH_SQRT && b <= JB_MATH_ISFINITE);
        return pure && n->u.call.keywords.len == 0 && uniform_list(P, &n->u.call.args);
    }
    default: return false;
    }
}

/* Whether expression e reads variable v. */
typedef struct Mention {
    const CpuRegions *P;
    int var;
} Mention;

static bool find_var(void *cx, AstNode *n) {
    Mention *m = cx;
    return !(n->kind == AST_NAME && var_of(m->P, n) == m->var);
}

static bool reads_var(const CpuRegions *P, AstNode *e, int v) {
    Mention m = {P, v};
    return !walk(e, find_var, &m);
}

/* ------------------------------------------------------------ planning */

static void add_site(CpuRegions *P, Site s) {
    if (P->nsites == P->capsites) {
        int cap = P->capsites ? 2 * P->capsites : 16;
        Site *ns = realloc(P->sites, (size_t)cap * sizeof *ns);
        if (!ns) {
            P->fail = true;
            return;
        }
        P->sites = ns;
        P->capsites = cap;
    }
    P->sites[P->nsites++] = s;
}

static bool is_sync_stmt(CpuRegions *P, AstNode *s) {
    return s->kind == AST_EXPR && s->u.expr.value->kind == AST_CALL &&
           builtin_of(P, s->u.expr.value) == JB_SYNCTHREADS;
}

/* `v = cuda.syncthreads_count(pred)` (or _and, _or; or the call alone):
** the call, and *var the target (-1 for none). */
static AstNode *reduce_stmt(CpuRegions *P, AstNode *s, int *var) {
    AstNode *call = NULL;
    *var = -1;
    if (s->kind == AST_EXPR) {
        call = s->u.expr.value;
    } else if (s->kind == AST_ASSIGN && s->u.assign.targets.len == 1 &&
               s->u.assign.targets.items[0]->kind == AST_NAME) {
        call = s->u.assign.value;
        *var = var_of(P, s->u.assign.targets.items[0]);
        if (*var < 0) return NULL;
    }
    if (!call || call->kind != AST_CALL || !is_reduce(builtin_of(P, call)) || call->u.call.args.len != 1 ||
        has_barrier(P, call->u.call.args.items[0]))
        return NULL;
    return call;
}

static bool is_range_for(CpuRegions *P, AstNode *s) {
    AstNode *it = s->u.for_.iter;
    return it->kind == AST_CALL && builtin_of(P, it) == JB_RANGE && s->u.for_.target->kind == AST_NAME &&
           var_of(P, s->u.for_.target) >= 0 && s->u.for_.orelse.len == 0;
}

/* Collects the skeleton's assignment sites; fails on barriers it cannot place. */
static void scan_skeleton(CpuRegions *P, AstList *body, int depth) {
    for (int k = 0; k < body->len && !P->fail; k++) {
        AstNode *s = body->items[k];
        if (has_barrier(P, s)) {
            if (is_sync_stmt(P, s)) continue;
            int rv;
            if (reduce_stmt(P, s, &rv)) {
                walk(s, mark_assigned, P); /* the target: stored by a thread loop of its own */
                continue;
            }
            if (s->kind == AST_FOR && is_range_for(P, s)) {
                add_site(P, (Site){var_of(P, s->u.for_.target), s, NULL, true, false, depth, -1});
                scan_skeleton(P, &s->u.for_.body, depth + 1);
            } else if (s->kind == AST_WHILE && s->u.while_.orelse.len == 0) {
                scan_skeleton(P, &s->u.while_.body, depth + 1);
            } else if (s->kind == AST_IF) {
                scan_skeleton(P, &s->u.if_.body, depth);
                scan_skeleton(P, &s->u.if_.orelse, depth);
            } else {
                P->fail = true; /* a barrier under thread-dependent control flow, or in an expression */
            }
            continue;
        }
        if (depth > 0 && loose_jump(s)) P->fail = true; /* would leave the thread loop */
        AstNode *rhs;
        bool aug;
        int v = simple_target(P, s, &rhs, &aug);
        AstList *el = tuple_targets(P, s);
        if (v >= 0) {
            add_site(P, (Site){v, s, rhs, false, aug, depth, -1});
            walk(rhs, mark_assigned, P); /* (walrus inside the value) */
        } else if (el) { /* a, b = expr: a site per name */
            for (int e = 0; e < el->len; e++)
                add_site(P, (Site){var_of(P, el->items[e]), s, s->u.assign.value, false, false, depth, e});
            walk(s->u.assign.value, mark_assigned, P);
        } else {
            walk(s, mark_assigned, P);
        }
    }
}

static void fix_uniform(CpuRegions *P) {
    const JFunc *f = P->f;
    for (int v = 0; v < f->nvars; v++) P->uniform[v] = !P->other[v];
    bool changed = true;
    while (changed) {
        changed = false;
        for (int k = 0; k < P->nsites; k++) {
            Site *s = &P->sites[k];
            if (!P->uniform[s->var]) continue;
            bool ok = s->is_for ? uniform_list(P, &s->stmt->u.for_.iter->u.call.args) : uniform_expr(P, s->rhs);
            if (ok && s->elem >= 0) { /* all names of one tuple statement, or none */
                bool hoist;
                ok = tuple_uniform(P, tuple_targets(P, s->stmt), &hoist);
            }
            if (!ok) {
                P->uniform[s->var] = 0;
                changed = true;
            }
        }
    }
    /* A uniform variable assigned once, by a plain `=` outside skeleton loops
    ** and not from itself, is computed just before the thread loop of its
    ** region (SA): no read can come before its assignment. Others are
    ** hoisted: their assignments run where they stand, between regions. */
    for (int v = 0; v < f->nvars; v++) {
        if (!P->uniform[v]) continue;
        int n = 0;
        const Site *one = NULL;
        for (int k = 0; k < P->nsites; k++)
            if (P->sites[k].var == v) {
                n++;
                one = &P->sites[k];
            }
        bool stays = n == 1 && !one->is_for && !one->aug && one->depth == 0 && f->vars[v].param_index < 0 &&
                     !reads_var(P, one->rhs, v);
        P->hoisted[v] = n > 0 && !stays;
    }
}

static StmtKind classify(CpuRegions *P, AstNode *s) {
    if (has_barrier(P, s)) {
        if (s->kind == AST_FOR) return ST_FOR;
        if (s->kind == AST_WHILE) return ST_WHILE;
        if (s->kind == AST_IF) return ST_IF;
        int rv;
        return reduce_stmt(P, s, &rv) ? ST_REDUCE : ST_SYNC;
    }
    AstNode *rhs;
    bool aug;
    int v = simple_target(P, s, &rhs, &aug);
    if (v >= 0 && P->uniform[v]) return P->hoisted[v] ? ST_UNIFORM : ST_SA;
    AstList *el = v < 0 ? tuple_targets(P, s) : NULL;
    bool hoist;
    if (el && tuple_uniform(P, el, &hoist)) return hoist ? ST_UNIFORM : ST_SA;
    return ST_REGION;
}

static bool in_run(StmtKind k) { return k == ST_REGION || k == ST_SA || k == ST_UNIFORM; }

/* The end of the run of REGION, SA and UNIFORM statements starting at k. */
static int run_end(CpuRegions *P, AstList *body, int k) {
    while (k < body->len && in_run(classify(P, body->items[k]))) k++;
    return k;
}

/* Whether the run body[k..e) can be one region with its UNIFORM statements
** executed before the thread loop: no REGION statement of the run reads
** their variable before them. Otherwise each UNIFORM statement ends a
** region (still right for race-free kernels, but a racy one could see
** other threads' writes earlier than on fibers). */
static bool run_merges(CpuRegions *P, AstList *body, int k, int e) {
    for (int i = k; i < e; i++) {
        if (classify(P, body->items[i]) != ST_UNIFORM) continue;
        AstNode *rhs, *s = body->items[i];
        bool aug;
        int v = simple_target(P, s, &rhs, &aug);
        AstList *el = v < 0 ? tuple_targets(P, s) : NULL;
        for (int e = 0; e < (el ? el->len : 1); e++) {
            int w = el ? var_of(P, el->items[e]) : v;
            for (int j = k; j < i; j++)
                if (classify(P, body->items[j]) == ST_REGION && reads_var(P, body->items[j], w)) return false;
        }
    }
    return true;
}

/* Skeleton heads must be uniform now that the uniform variables are known. */
static void check_heads(CpuRegions *P, AstList *body) {
    for (int k = 0; k < body->len && !P->fail; k++) {
        AstNode *s = body->items[k];
        switch (classify(P, s)) {
        case ST_FOR:
            if (!P->uniform[var_of(P, s->u.for_.target)] || !uniform_list(P, &s->u.for_.iter->u.call.args))
                P->fail = true;
            check_heads(P, &s->u.for_.body);
            break;
        case ST_WHILE:
            if (!uniform_expr(P, s->u.while_.test)) P->fail = true;
            check_heads(P, &s->u.while_.body);
            break;
        case ST_IF:
            if (!uniform_expr(P, s->u.if_.test)) P->fail = true;
            check_heads(P, &s->u.if_.body);
            check_heads(P, &s->u.if_.orelse);
            break;
        default: break;
        }
    }
}

/* Returns: a thread that returns skips the rest of its region. When that
** is all it must skip (the return is after the last top-level barrier and
** that tail is one region) nothing more is needed; otherwise the kernel
** keeps an `alive` flag per thread, and every later thread loop skips the
** threads that returned — as fibers do, where a returned thread no longer
** counts toward a barrier. */
static void check_returns(CpuRegions *P, AstList *body) {
    int last = -1;
    for (int k = 0; k < body->len; k++)
        if (has_barrier(P, body->items[k])) last = k;
    bool ret = false, uniform = false;
    for (int k = 0; k < body->len; k++) {
        AstNode *s = body->items[k];
        bool r = has_return(s);
        if (k <= last && r) P->exits = true;
        if (k > last) {
            ret |= r;
            uniform |= classify(P, s) == ST_UNIFORM;
        }
    }
    if (ret && uniform) P->exits = true;
}

/* ---- which variables cross regions: read before written in a region */

static void read_expr(CpuRegions *P, AstNode *e, const uint8_t *def);

typedef struct ReadCx {
    CpuRegions *P;
    const uint8_t *def;
} ReadCx;

static bool note_read(void *cx, AstNode *n) {
    ReadCx *r = cx;
    int v = var_of(r->P, n);
    if (v >= 0 && !r->def[v]) r->P->exposed[v] = 1;
    return true;
}

static void read_expr(CpuRegions *P, AstNode *e, const uint8_t *def) {
    ReadCx r = {P, def};
    walk(e, note_read, &r);
}

static void write_target(CpuRegions *P, AstNode *t, uint8_t *def) {
    if (!t) return;
    if (t->kind == AST_NAME) {
        int v = var_of(P, t);
        if (v >= 0) def[v] = 1;
    } else if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
        for (int i = 0; i < t->u.seq.elts.len; i++) write_target(P, t->u.seq.elts.items[i], def);
    } else {
        read_expr(P, t, def); /* a[i] = ...: reads a and i */
    }
}

static void flow_list(CpuRegions *P, AstList *l, uint8_t *def);

static uint8_t *copy_set(CpuRegions *P, const uint8_t *def) {
    uint8_t *c = malloc((size_t)P->nvars + 1);
    if (!c) {
        P->fail = true;
        return NULL;
    }
    memcpy(c, def, (size_t)P->nvars + 1);
    return c;
}

static void flow_stmt(CpuRegions *P, AstNode *s, uint8_t *def) {
    switch (s->kind) {
    case AST_EXPR: read_expr(P, s->u.expr.value, def); return;
    case AST_ASSIGN:
        read_expr(P, s->u.assign.value, def);
        for (int i = 0; i < s->u.assign.targets.len; i++) write_target(P, s->u.assign.targets.items[i], def);
        return;
    case AST_AUGASSIGN:
        read_expr(P, s->u.augassign.value, def);
        read_expr(P, s->u.augassign.target, def);
        write_target(P, s->u.augassign.target, def);
        return;
    case AST_ANNASSIGN:
        if (s->u.annassign.value) {
            read_expr(P, s->u.annassign.value, def);
            write_target(P, s->u.annassign.target, def);
        }
        return;
    case AST_IF: {
        read_expr(P, s->u.if_.test, def);
        uint8_t *a = copy_set(P, def), *b = copy_set(P, def);
        if (a && b) {
            flow_list(P, &s->u.if_.body, a);
            flow_list(P, &s->u.if_.orelse, b);
            for (int v = 0; v < P->nvars; v++) def[v] = a[v] && b[v];
        }
        free(a);
        free(b);
        return;
    }
    case AST_WHILE: case AST_FOR: {
        bool w = s->kind == AST_WHILE;
        read_expr(P, w ? s->u.while_.test : s->u.for_.iter, def);
        uint8_t *a = copy_set(P, def), *b = copy_set(P, def);
        if (a && b) {
            if (!w) write_target(P, s->u.for_.target, a);
            flow_list(P, w ? &s->u.while_.body : &s->u.for_.body, a);
            flow_list(P, w ? &s->u.while_.orelse : &s->u.for_.orelse, b);
        }
        free(a);
        free(b);
        return;
    }
    case AST_RETURN: read_expr(P, s->u.ret.value, def); return;
    default: return;
    }
}

static void flow_list(CpuRegions *P, AstList *l, uint8_t *def) {
    for (int i = 0; i < l->len; i++) flow_stmt(P, l->items[i], def);
}

/* Runs the read-before-write analysis over every region of a skeleton list. */
static void flow_skeleton(CpuRegions *P, AstList *body) {
    uint8_t *def = calloc((size_t)P->nvars + 1, 1);
    if (!def) {
        P->fail = true;
        return;
    }
    for (int k = 0; k < body->len; k++) {
        AstNode *s = body->items[k];
        StmtKind sk = classify(P, s);
        if (in_run(sk)) { /* the regions exactly as lower_skeleton forms them */
            int e = run_end(P, body, k);
            bool merge = run_merges(P, body, k, e);
            for (int i = k; i < e; i++) {
                if (!merge && classify(P, body->items[i]) == ST_UNIFORM) memset(def, 0, (size_t)P->nvars + 1);
                else flow_stmt(P, body->items[i], def); /* def carries on inside one region */
            }
            k = e - 1;
            if (e < body->len && classify(P, body->items[e]) == ST_REDUCE) s = body->items[++k];
            else s = NULL;
        }
        switch (s ? classify(P, s) : ST_SYNC) {
        case ST_REDUCE: { /* the predicate ends the region before */
            int rv;
            read_expr(P, reduce_stmt(P, s, &rv)->u.call.args.items[0], def);
            break;
        }
        case ST_FOR: flow_skeleton(P, &s->u.for_.body); break;
        case ST_WHILE: flow_skeleton(P, &s->u.while_.body); break;
        case ST_IF:
            flow_skeleton(P, &s->u.if_.body);
            flow_skeleton(P, &s->u.if_.orelse);
            break;
        default: break;
        }
        memset(def, 0, (size_t)P->nvars + 1); /* a region ends here */
    }
    free(def);
}

/* An expression of the thread and block indices, constants and uniform
** variables that never change (parameters, SA variables): the same in every
** region for a given thread. */
static bool index_expr(const CpuRegions *P, AstNode *n) {
    if (!n) return true;
    JInfo *i = jf_info(P->f, n);
    switch (n->kind) {
    case AST_INT: case AST_FLOAT: case AST_TRUE: case AST_FALSE: case AST_BIGINT: return true;
    case AST_NAME: {
        if (i && i->builtin == JB_CONST) return true;
        int v = var_of(P, n);
        return v >= 0 ? P->uniform[v] && !P->hoisted[v] : is_value_free(i);
    }
    case AST_ATTRIBUTE:
        if (!i) return false;
        switch (i->builtin) {
        case JB_CONST: case JB_THREADIDX_X: case JB_THREADIDX_Y: case JB_THREADIDX_Z: case JB_BLOCKIDX_X:
        case JB_BLOCKIDX_Y: case JB_BLOCKIDX_Z: case JB_BLOCKDIM_X: case JB_BLOCKDIM_Y: case JB_BLOCKDIM_Z:
        case JB_GRIDDIM_X: case JB_GRIDDIM_Y: case JB_GRIDDIM_Z: case JB_WARPSIZE: case JB_LANEID:
            return true;
        case JB_ARRAY_SHAPE: case JB_ARRAY_SIZE: case JB_ARRAY_NDIM: return index_expr(P, n->u.attr.value);
        case JB_NONE: return is_value_free(i);
        default: return false;
        }
    case AST_BINOP: return index_expr(P, n->u.binop.left) && index_expr(P, n->u.binop.right);
    case AST_UNARYOP: return index_expr(P, n->u.unary.operand);
    case AST_TUPLE:
        for (int k = 0; k < n->u.seq.elts.len; k++)
            if (!index_expr(P, n->u.seq.elts.items[k])) return false;
        return true;
    case AST_CALL: {
        if (!i) return false;
        JBuiltin b = i->builtin;
        bool ok = b == JB_GRID || b == JB_GRIDSIZE || b == JB_MIN || b == JB_MAX || b == JB_INT || b == JB_CAST;
        if (!ok || n->u.call.keywords.len) return false;
        for (int k = 0; k < n->u.call.args.len; k++)
            if (!index_expr(P, n->u.call.args.items[k])) return false;
        return true;
    }
    default: return false;
    }
}

/* Non-uniform variables assigned exactly once, at the top of the skeleton,
** from an index expression (t = cuda.threadIdx.x, i = cuda.grid(1)): each
** region recomputes them instead of keeping a slot per thread, which keeps
** their value ranges visible to LLVM (affine accesses vectorize). */
static void find_remat(CpuRegions *P) {
    for (int v = 0; v < P->nvars; v++) {
        if (P->uniform[v] || P->other[v] || P->f->vars[v].param_index >= 0) continue;
        int n = 0;
        const Site *one = NULL;
        for (int k = 0; k < P->nsites; k++)
            if (P->sites[k].var == v) {
                n++;
                one = &P->sites[k];
            }
        if (n == 1 && !one->is_for && !one->aug && one->depth == 0 && !reads_var(P, one->rhs, v) &&
            index_expr(P, one->rhs)) {
            P->remat[v] = 1;
            P->remat_rhs[v] = one->rhs;
            P->remat_stmt[v] = one->stmt;
            P->remat_elem[v] = one->elem;
        }
    }
}

static bool note_local(void *cx, AstNode *n) {
    CpuRegions *P = cx;
    if (n->kind != AST_CALL || builtin_of(P, n) != JB_LOCAL_ARRAY) return true;
    JInfo *i = jf_info(P->f, n);
    const JType *t = i->type;
    size_t bytes = dtype_itemsize(t->dtype);
    for (int k = 0; k < t->ndim; k++) bytes *= (size_t)(i->shape[k] > 0 ? i->shape[k] : 1);
    if (P->nlocals == P->caplocals) {
        int cap = P->caplocals ? 2 * P->caplocals : 4;
        const AstNode **nl = realloc(P->locals, (size_t)cap * sizeof *nl);
        size_t *nb = nl ? realloc(P->local_bytes, (size_t)cap * sizeof *nb) : NULL;
        if (nl) P->locals = nl;
        if (!nl || !nb) {
            P->fail = true;
            return false;
        }
        P->local_bytes = nb;
        P->caplocals = cap;
    }
    P->locals[P->nlocals] = n;
    P->local_bytes[P->nlocals++] = (bytes + 15) & ~(size_t)15;
    return true;
}

void cpu_regions_free(CpuRegions *P) {
    if (!P) return;
    free(P->uniform);
    free(P->hoisted);
    free(P->per_thread);
    free(P->remat);
    free(P->remat_rhs);
    free(P->remat_live);
    free(P->remat_elem);
    free(P->remat_stmt);
    free(P->other);
    free(P->exposed);
    free(P->sites);
    free(P->locals);
    free(P->local_bytes);
    free(P->orig);
    free(P->base);
    free(P->local_base);
    free(P->run);
    free(P);
}

CpuRegions *cpu_regions_plan(const JFunc *f) {
    if (!f->is_kernel || !f->uses_barrier) return NULL;
    CpuRegions *P = calloc(1, sizeof *P);
    if (!P) return NULL;
    P->f = f;
    P->nvars = f->nvars;
    size_t n = (size_t)f->nvars + 1;
    P->uniform = calloc(n, 1);
    P->hoisted = calloc(n, 1);
    P->per_thread = calloc(n, 1);
    P->other = calloc(n, 1);
    P->exposed = calloc(n, 1);
    P->remat = calloc(n, 1);
    P->remat_rhs = calloc(n, sizeof *P->remat_rhs);
    P->remat_live = calloc(n, 1);
    P->remat_elem = calloc(n, sizeof *P->remat_elem);
    P->remat_stmt = calloc(n, sizeof *P->remat_stmt);
    if (!P->uniform || !P->hoisted || !P->per_thread || !P->other || !P->exposed || !P->remat || !P->remat_rhs ||
        !P->remat_live || !P->remat_elem || !P->remat_stmt)
        goto fail;
    AstList *body = &f->def->u.func.body;
    walk_list(body, needs_fibers, P);
    if (P->fail) goto fail;
    scan_skeleton(P, body, 0);
    if (P->fail) goto fail;
    fix_uniform(P);
    check_heads(P, body);
    check_returns(P, body);
    if (P->fail) goto fail;
    flow_skeleton(P, body);
    walk_list(body, note_local, P);
    if (P->fail) goto fail;
    find_remat(P);
    for (int v = 0; v < f->nvars; v++) P->per_thread[v] = P->exposed[v] && !P->uniform[v] && !P->remat[v];
    return P;
fail:
    cpu_regions_free(P);
    return NULL;
}

/* ------------------------------------------------------------ lowering */

static void lower_skeleton(Lower *L, AstList *body);

/* Outside the thread loops: threadIdx 0, per-thread variables at slot 0. */
static void uniform_context(Lower *L) {
    CpuRegions *P = L->regions;
    for (int d = 0; d < 3; d++) L->tid[d] = LLVMConstInt(L->t_i32, 0, 0);
    for (int v = 0; v < P->nvars; v++)
        if (P->per_thread[v]) L->vars[v] = P->base[v];
    P->lin = NULL;
}

typedef void (*RegionBody)(Lower *L, void *cx);

/* Emits for z, y, x over blockDim { body } with threadIdx = (x, y, z) and
** each per-thread variable bound to its slot. A return in the body ends
** the thread (goes to the next one). */
static void thread_loop(Lower *L, RegionBody body, void *cx) {
    CpuRegions *P = L->regions;
    LLVMBuilderRef B = L->B;
    LLVMBasicBlockRef loop[3], latch[3];
    LLVMValueRef iv[3];
    LLVMBasicBlockRef exitb = LLVMAppendBasicBlockInContext(L->C, L->fn, "region.end");
    LLVMValueRef zero = LLVMConstInt(L->t_i32, 0, 0);
    LLVMValueRef row = LLVMConstInt(L->t_i64, 0, 0);
    /* bottom-tested loops: the runtime guarantees blockDim >= 1 in each
    ** dimension, and without zero-trip guards O3 has less to unswitch */
    for (int d = 2; d >= 0; d--) {
        loop[d] = LLVMAppendBasicBlockInContext(L->C, L->fn, "region.body");
        latch[d] = LLVMAppendBasicBlockInContext(L->C, L->fn, "region.latch");
        LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
        LLVMBuildBr(B, loop[d]);
        LLVMPositionBuilderAtEnd(B, loop[d]);
        iv[d] = LLVMBuildPhi(B, L->t_i32, "tid");
        LLVMAddIncoming(iv[d], &zero, &from, 1);
        /* linear index: ((z * ny) + y) * nx + x */
        LLVMValueRef ext = LLVMBuildZExt(B, iv[d], L->t_i64, "");
        if (d < 2) row = LLVMBuildMul(B, row, LLVMBuildZExt(B, P->nt[d], L->t_i64, ""), "");
        row = LLVMBuildAdd(B, row, ext, "");
    }
    for (int d = 0; d < 3; d++) L->tid[d] = iv[d];
    P->lin = row;
    for (int v = 0; v < P->nvars; v++)
        if (P->per_thread[v]) {
            LLVMTypeRef ty = lower_type(L, P->f->vars[v].type);
            L->vars[v] = LLVMBuildInBoundsGEP2(B, ty, P->base[v], &row, 1, "");
        }
    LLVMBasicBlockRef exit_thread = latch[0];
    if (P->alive) { /* threads that returned sit out the rest of the kernel */
        LLVMValueRef flag = LLVMBuildInBoundsGEP2(B, L->t_i8, P->alive, &row, 1, "");
        LLVMBasicBlockRef live = LLVMAppendBasicBlockInContext(L->C, L->fn, "region.live");
        exit_thread = LLVMAppendBasicBlockInContext(L->C, L->fn, "region.return");
        LLVMValueRef on = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildLoad2(B, L->t_i8, flag, ""),
                                        LLVMConstInt(L->t_i8, 0, 0), "");
        LLVMBuildCondBr(B, on, live, latch[0]);
        LLVMPositionBuilderAtEnd(B, exit_thread);
        LLVMBuildStore(B, LLVMConstInt(L->t_i8, 0, 0), flag);
        LLVMBuildBr(B, latch[0]);
        LLVMPositionBuilderAtEnd(B, live);
    }
    for (int v = 0; v < P->nvars; v++)
        if (P->remat_live[v] && L->vars[v]) {
            AstNode *rhs = P->remat_rhs[v];
            const JType *t = lower_info(L, rhs)->type;
            LLVMValueRef x = lower_expr(L, rhs);
            if (P->remat_elem[v] >= 0) {
                x = LLVMBuildExtractValue(B, x, (unsigned)P->remat_elem[v], "");
                t = t->elems[P->remat_elem[v]];
            }
            LLVMBuildStore(B, lower_convert(L, x, t, P->f->vars[v].type, rhs), L->vars[v]);
        }
    LLVMBasicBlockRef saved_ret = L->ret_bb;
    int saved_loops = L->nloops;
    L->ret_bb = exit_thread;
    L->nloops = 0;
    body(L, cx);
    L->ret_bb = saved_ret;
    L->nloops = saved_loops;
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(B))) LLVMBuildBr(B, latch[0]);
    for (int d = 0; d < 3; d++) {
        LLVMPositionBuilderAtEnd(B, latch[d]);
        LLVMValueRef next = LLVMBuildNSWAdd(B, iv[d], LLVMConstInt(L->t_i32, 1, 0), "");
        LLVMBasicBlockRef lb = latch[d];
        LLVMAddIncoming(iv[d], &next, &lb, 1);
        LLVMValueRef br = LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, next, P->nt[d], ""), loop[d],
                                          d == 2 ? exitb : latch[d + 1]);
        jit_cpu_thread_loop_hints(L, br, d);
    }
    LLVMPositionBuilderAtEnd(B, exitb);
    uniform_context(L);
}

typedef struct Stmts {
    AstNode **items;
    int n;
} Stmts;

static void region_stmts(Lower *L, void *cx) {
    Stmts *s = cx;
    AstList l = {s->items, s->n};
    lower_body(L, &l);
}

/* A region ending in syncthreads_count/_and/_or: the statements, then each
** thread folds its predicate into acc (the order of the fiber path). */
typedef struct Reduce {
    Stmts st;
    AstNode *call;
    LLVMValueRef acc; /* i32 */
} Reduce;

static void region_reduce(Lower *L, void *cx) {
    Reduce *r = cx;
    region_stmts(L, &r->st);
    lower_open_block(L);
    AstNode *pred = r->call->u.call.args.items[0];
    JInfo *ci = lower_info(L, r->call);
    LLVMValueRef p = LLVMBuildZExt(L->B, lower_truthy(L, lower_expr(L, pred), ci->op_type), L->t_i32, "");
    LLVMValueRef a = LLVMBuildLoad2(L->B, L->t_i32, r->acc, "");
    if (ci->builtin == JB_SYNCTHREADS_COUNT) a = LLVMBuildAdd(L->B, a, p, "");
    else if (ci->builtin == JB_SYNCTHREADS_AND) a = LLVMBuildAnd(L->B, a, p, "");
    else a = LLVMBuildOr(L->B, a, p, "");
    LLVMBuildStore(L->B, a, r->acc);
}

/* Every thread's copy of the target gets the block's result. */
typedef struct Broadcast {
    int var;
    LLVMValueRef acc;
    AstNode *call;
} Broadcast;

static void region_broadcast(Lower *L, void *cx) {
    Broadcast *b = cx;
    CpuRegions *P = L->regions;
    if (!L->vars[b->var]) return;
    LLVMValueRef a = LLVMBuildLoad2(L->B, L->t_i32, b->acc, "");
    const JType *rt = lower_info(L, b->call)->type;
    a = lower_convert(L, a, jt_scalar(L->vm, JK_INT32), rt, b->call);
    LLVMBuildStore(L->B, lower_convert(L, a, rt, P->f->vars[b->var].type, b->call), L->vars[b->var]);
}

/* Copies the parameters that threads reassign into their per-thread slots. */
static void region_params(Lower *L, void *cx) {
    (void)cx;
    CpuRegions *P = L->regions;
    for (int v = 0; v < P->nvars; v++)
        if (P->per_thread[v] && P->f->vars[v].param_index >= 0) {
            LLVMTypeRef ty = lower_type(L, P->f->vars[v].type);
            LLVMBuildStore(L->B, LLVMBuildLoad2(L->B, ty, P->orig[v], ""), L->vars[v]);
        }
}

static void lower_uniform_stmt(Lower *L, AstNode *s) {
    uniform_context(L);
    AstList l = {&s, 1};
    lower_body(L, &l);
}

static LLVMValueRef uniform_cond(Lower *L, AstNode *test) {
    uniform_context(L);
    LLVMValueRef v = lower_expr(L, test);
    return lower_truthy(L, v, lower_info(L, test)->type);
}

/* for v in range(...) around regions: the bounds once per block, v a uniform
** scalar (Python's semantics, as lower_stmt.c's loop). */
static void skeleton_for(Lower *L, AstNode *s) {
    CpuRegions *P = L->regions;
    LLVMBuilderRef B = L->B;
    uniform_context(L);
    const JType *i64 = jt_scalar(L->vm, JK_INT64);
    LLVMValueRef start, stop, step;
    int sign = lower_range_args(L, s->u.for_.iter, &start, &stop, &step);
    LLVMValueRef cur = lower_alloca(L, L->t_i64, "skel.i");
    LLVMBuildStore(B, start, cur);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.for.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.for.body");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.for.end");
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, head);
    LLVMValueRef c = LLVMBuildLoad2(B, L->t_i64, cur, "");
    LLVMBuildCondBr(B, lower_range_cond(L, c, stop, step, sign), body, end);
    LLVMPositionBuilderAtEnd(B, body);
    int v = var_of(P, s->u.for_.target);
    if (L->vars[v])
        LLVMBuildStore(B, lower_convert(L, c, i64, P->f->vars[v].type, s->u.for_.target), L->vars[v]);
    lower_skeleton(L, &s->u.for_.body);
    uniform_context(L);
    LLVMValueRef c2 = LLVMBuildLoad2(B, L->t_i64, cur, "");
    LLVMBuildStore(B, LLVMBuildAdd(B, c2, step, ""), cur);
    LLVMBuildBr(B, head);
    LLVMPositionBuilderAtEnd(B, end);
}

static void skeleton_while(Lower *L, AstNode *s) {
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.while.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.while.body");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.while.end");
    LLVMBuildBr(L->B, head);
    LLVMPositionBuilderAtEnd(L->B, head);
    LLVMBuildCondBr(L->B, uniform_cond(L, s->u.while_.test), body, end);
    LLVMPositionBuilderAtEnd(L->B, body);
    lower_skeleton(L, &s->u.while_.body);
    LLVMBuildBr(L->B, head);
    LLVMPositionBuilderAtEnd(L->B, end);
}

static void skeleton_if(Lower *L, AstNode *s) {
    LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.then");
    LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.else");
    LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(L->C, L->fn, "skel.endif");
    LLVMBuildCondBr(L->B, uniform_cond(L, s->u.if_.test), bt, bf);
    LLVMPositionBuilderAtEnd(L->B, bt);
    lower_skeleton(L, &s->u.if_.body);
    LLVMBuildBr(L->B, end);
    LLVMPositionBuilderAtEnd(L->B, bf);
    lower_skeleton(L, &s->u.if_.orelse);
    LLVMBuildBr(L->B, end);
    LLVMPositionBuilderAtEnd(L->B, end);
}

/* One region: body[a..b) (REGION statements in a thread loop, SA and
** UNIFORM ones once before it), ending in the reduction red if not NULL. */
static void emit_run(Lower *L, AstList *body, int a, int b, AstNode *red) {
    CpuRegions *P = L->regions;
    if (P->caprun < body->len) { /* (kept in P: freed even if lowering fails) */
        AstNode **nr = realloc(P->run, (size_t)body->len * sizeof *nr);
        if (!nr) lower_fail(L, body->items[a < body->len ? a : 0], "out of memory");
        P->run = nr;
        P->caprun = body->len;
    }
    AstNode **run = P->run; /* regions hold no skeleton: no recursion while in use */
    int n = 0;
    for (int i = a; i < b; i++) {
        if (classify(P, body->items[i]) == ST_REGION) run[n++] = body->items[i];
        else lower_uniform_stmt(L, body->items[i]); /* before the loop: see fix_uniform, run_merges */
    }
    Stmts st = {run, n};
    if (red) {
        int rv;
        Reduce r = {st, reduce_stmt(P, red, &rv), lower_alloca(L, L->t_i32, "barrier.red")};
        bool is_and = lower_info(L, r.call)->builtin == JB_SYNCTHREADS_AND;
        LLVMBuildStore(L->B, LLVMConstInt(L->t_i32, is_and, 0), r.acc);
        thread_loop(L, region_reduce, &r);
        if (rv >= 0) {
            Broadcast bc = {rv, r.acc, r.call};
            thread_loop(L, region_broadcast, &bc);
        }
    } else if (n) {
        thread_loop(L, region_stmts, &st);
    }
    for (int r = 0; r < n; r++) /* from now on, regions recompute these */
        for (int v = 0; v < P->nvars; v++)
            if (P->remat[v] && P->remat_stmt[v] == run[r]) P->remat_live[v] = 1;
}

static void lower_skeleton(Lower *L, AstList *body) {
    CpuRegions *P = L->regions;
    int k = 0;
    while (k < body->len) {
        AstNode *s = body->items[k];
        switch (classify(P, s)) {
        case ST_REGION: case ST_SA: case ST_UNIFORM: case ST_REDUCE: {
            int e = run_end(P, body, k);
            bool merge = run_merges(P, body, k, e);
            AstNode *red = e < body->len && classify(P, body->items[e]) == ST_REDUCE ? body->items[e] : NULL;
            for (int a = k;;) {
                int b = a;
                while (b < e && (merge || classify(P, body->items[b]) != ST_UNIFORM)) b++;
                emit_run(L, body, a, b, b == e ? red : NULL);
                if (b == e) break;
                lower_uniform_stmt(L, body->items[b]); /* ends a region: see run_merges */
                a = b + 1;
            }
            k = e + (red ? 1 : 0);
            continue;
        }
        case ST_SYNC: break; /* the region boundary is the barrier */
        case ST_FOR: skeleton_for(L, s); break;
        case ST_WHILE: skeleton_while(L, s); break;
        case ST_IF: skeleton_if(L, s); break;
        }
        k++;
    }
}

/* The per-block scratch: the per-thread variables' and local arrays'
** slots, nthreads of each, each array 16-byte aligned. */
static void layout_scratch(Lower *L) {
    CpuRegions *P = L->regions;
    LLVMBuilderRef B = L->B;
    LLVMTargetDataRef dl = LLVMGetModuleDataLayout(L->M);
    LLVMValueRef nthreads = LLVMConstInt(L->t_i64, 1, 0);
    for (int d = 0; d < 3; d++) nthreads = LLVMBuildMul(B, nthreads, LLVMBuildZExt(B, P->nt[d], L->t_i64, ""), "");
    size_t per = 0;
    size_t *off = calloc((size_t)P->nvars + (size_t)P->nlocals + 1, sizeof *off);
    if (!off) lower_fail(L, NULL, "out of memory");
    for (int v = 0; v < P->nvars; v++) {
        if (!P->per_thread[v]) continue;
        off[v] = per;
        per += ((size_t)LLVMABISizeOfType(dl, lower_type(L, P->f->vars[v].type)) + 15) & ~(size_t)15;
    }
    size_t vars_bytes = per;
    for (int k = 0; k < P->nlocals; k++) {
        off[P->nvars + k] = per;
        per += P->local_bytes[k];
    }
    size_t alive_off = per;
    if (P->exits) per += 16;
    if (per == 0) {
        free(off);
        return;
    }
    LLVMTypeRef pt[2] = {L->t_ptr, L->t_i64};
    LLVMValueRef a[2] = {L->ctx, LLVMBuildMul(B, nthreads, LLVMConstInt(L->t_i64, per, 0), "")};
    LLVMValueRef scratch = lower_call_named(L, "gpy_cpu_scratch", L->t_ptr, pt, a, 2, false);
    /* the worker's own buffer: aliases nothing the kernel sees (like malloc) */
    unsigned na = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(LLVMGetNamedFunction(L->M, "gpy_cpu_scratch"), LLVMAttributeReturnIndex,
                            LLVMCreateEnumAttribute(L->C, na, 0));
    /* no memory for it: the runtime reports the error after the block */
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(L->C, L->fn, "scratch.ok");
    LLVMBuildCondBr(B, LLVMBuildIsNull(B, scratch, ""), P->ret_bb, ok);
    LLVMPositionBuilderAtEnd(B, ok);
    for (int v = 0; v < P->nvars + P->nlocals; v++) {
        if (v < P->nvars && !P->per_thread[v]) continue;
        LLVMValueRef o = LLVMBuildMul(B, nthreads, LLVMConstInt(L->t_i64, off[v], 0), "");
        LLVMValueRef p = LLVMBuildInBoundsGEP2(B, L->t_i8, scratch, &o, 1, "");
        if (v < P->nvars) P->base[v] = p;
        else P->local_base[v - P->nvars] = p;
    }
    free(off);
    /* per-thread variables start at zero, as the allocas do (lower.c) */
    if (vars_bytes)
        LLVMBuildMemSet(B, scratch, LLVMConstInt(L->t_i8, 0, 0),
                        LLVMBuildMul(B, nthreads, LLVMConstInt(L->t_i64, vars_bytes, 0), ""), 16);
    if (P->exits) { /* every thread starts alive */
        LLVMValueRef o = LLVMBuildMul(B, nthreads, LLVMConstInt(L->t_i64, alive_off, 0), "");
        P->alive = LLVMBuildInBoundsGEP2(B, L->t_i8, scratch, &o, 1, "");
        LLVMBuildMemSet(B, P->alive, LLVMConstInt(L->t_i8, 1, 0), nthreads, 1);
    }
}

void cpu_regions_lower_body(Lower *L) {
    CpuRegions *P = L->regions;
    size_t nv = (size_t)P->nvars + 1;
    free(P->orig);
    free(P->base);
    free(P->local_base);
    P->orig = calloc(nv, sizeof *P->orig);
    P->base = calloc(nv, sizeof *P->base);
    P->local_base = calloc((size_t)P->nlocals + 1, sizeof *P->local_base);
    if (!P->orig || !P->base || !P->local_base) lower_fail(L, NULL, "out of memory");
    for (int v = 0; v < P->nvars; v++) {
        P->orig[v] = L->vars[v];
        if (!L->vars[v]) P->per_thread[v] = 0; /* no value (modules, functions) */
    }
    P->ret_bb = L->ret_bb;
    P->alive = NULL;
    for (int d = 0; d < 3; d++) P->nt[d] = L->tg->sreg(L, SREG_NTID, d);
    layout_scratch(L);
    uniform_context(L);
    bool params = false;
    for (int v = 0; v < P->nvars; v++) params |= P->per_thread[v] && P->f->vars[v].param_index >= 0;
    if (params) thread_loop(L, region_params, NULL);
    lower_skeleton(L, &P->f->def->u.func.body);
    for (int v = 0; v < P->nvars; v++) L->vars[v] = P->orig[v];
    L->ret_bb = P->ret_bb;
}

LLVMValueRef cpu_regions_local_array(Lower *L, const AstNode *n) {
    CpuRegions *P = L->regions;
    for (int k = 0; k < P->nlocals; k++)
        if (P->locals[k] == n) {
            if (!P->lin || !P->local_base[k]) break;
            LLVMValueRef o = LLVMBuildMul(L->B, P->lin, LLVMConstInt(L->t_i64, P->local_bytes[k], 0), "");
            return LLVMBuildInBoundsGEP2(L->B, L->t_i8, P->local_base[k], &o, 1, "");
        }
    lower_fail(L, n, "internal error: local array outside a region");
}
