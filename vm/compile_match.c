/*
** compile_match.c — code generation for match statements (PEP 634, with
** CPython 3.11's compile-time errors).
**
** The subject is evaluated once into a register. Each case tests its
** pattern with ordinary instructions (==, is, GETITEM) and the MATCH_*
** ones (match.c); any failing test jumps to the next case. Captures are
** written to registers reserved for the case and stored to their names
** only once the whole pattern has matched (before the guard runs), so a
** pattern that fails halfway binds nothing, as in CPython.
*/
#include <stdlib.h>
#include <string.h>

#include "compile_match.h"
#include "scope.h"

/* What one case's pattern is being compiled with. */
typedef struct PatCtx {
    FuncState *fs;
    /* every name the pattern captures, with the register reserved for it */
    const char **slot_names;
    int *slot_regs;
    int nslots;
    /* names bound so far by the alternative being compiled (duplicate
    ** checks, and the order the stores are made in) */
    const char **stores;
    int nstores, capstores;
    /* jumps to take when the pattern fails */
    int *fails;
    int nfails, capfails;
    bool allow_irrefutable;
    AstNode *last; /* the pattern compiled last: where CPython reports binding errors */
} PatCtx;

static void compile_pattern(PatCtx *pc, AstNode *p, int subj);

static void *grow(FuncState *fs, void *v, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return v;
    int n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    *cap = n;
    return comp_xrealloc(comp_vm(fs), v, (size_t)n * elem);
}

static bool is_wildcard(AstNode *p)
{
    return p->kind == AST_MATCH_AS && !p->u.pat_as.pattern && !p->u.pat_as.name;
}

/* ------------------------------------------------------------ captures */

static bool has_name(const char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

static void add_slot(PatCtx *pc, const char *name, int *cap)
{
    if (!name || has_name(pc->slot_names, pc->nslots, name))
        return;
    if (pc->nslots == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        pc->slot_names = comp_xrealloc(comp_vm(pc->fs), pc->slot_names, (size_t)*cap * sizeof(char *));
    }
    pc->slot_names[pc->nslots++] = name;
}

/* Collects the names a pattern can capture (iteratively deep: patterns
** nest only as far as brackets do, which the tokenizer bounds). */
static void collect_slots(PatCtx *pc, AstNode *p, int *cap)
{
    switch (p->kind) {
    case AST_MATCH_SEQUENCE:
        for (int i = 0; i < p->u.pat_seq.patterns.len; i++)
            collect_slots(pc, p->u.pat_seq.patterns.items[i], cap);
        break;
    case AST_MATCH_OR: /* every alternative must bind the first one's names (else a compile error) */
        collect_slots(pc, p->u.pat_seq.patterns.items[0], cap);
        break;
    case AST_MATCH_MAPPING:
        for (int i = 0; i < p->u.pat_map.patterns.len; i++)
            collect_slots(pc, p->u.pat_map.patterns.items[i], cap);
        add_slot(pc, p->u.pat_map.rest, cap);
        break;
    case AST_MATCH_CLASS:
        for (int i = 0; i < p->u.pat_class.patterns.len; i++)
            collect_slots(pc, p->u.pat_class.patterns.items[i], cap);
        for (int i = 0; i < p->u.pat_class.kwd_patterns.len; i++)
            collect_slots(pc, p->u.pat_class.kwd_patterns.items[i], cap);
        break;
    case AST_MATCH_AS: case AST_MATCH_STAR:
        if (p->u.pat_as.pattern)
            collect_slots(pc, p->u.pat_as.pattern, cap);
        add_slot(pc, p->u.pat_as.name, cap);
        break;
    default: break;
    }
}

static int slot_reg(PatCtx *pc, const char *name)
{
    for (int i = 0; i < pc->nslots; i++)
        if (strcmp(pc->slot_names[i], name) == 0)
            return pc->slot_regs[i];
    return -1; /* bound by a later OR alternative only: an error is reported */
}

/* Records the binding of name (CPython's duplicate check) and copies the
** value to its register. */
static void capture(PatCtx *pc, AstNode *at, const char *name, int src)
{
    if (has_name(pc->stores, pc->nstores, name)) {
        comp_error(pc->fs, pc->last ? pc->last : at, "multiple assignments to name '%s' in pattern", name);
        return;
    }
    pc->stores = grow(pc->fs, pc->stores, &pc->capstores, pc->nstores + 1, sizeof(char *));
    pc->stores[pc->nstores++] = name;
    int r = slot_reg(pc, name);
    if (r >= 0 && r != src)
        comp_emit_abc(pc->fs, OP_MOVE, r, src, 0);
}

/* --------------------------------------------------------------- tests */

/* Jumps to the failure target when register r holds a false value. */
static void fail_unless(PatCtx *pc, int r)
{
    int j = comp_emit_jump(pc->fs, OP_JMP_IF_FALSE, r);
    pc->fails = grow(pc->fs, pc->fails, &pc->capfails, pc->nfails + 1, sizeof(int));
    pc->fails[pc->nfails++] = j;
}

/* A sub-pattern may be irrefutable whatever its context. */
static void compile_subpattern(PatCtx *pc, AstNode *p, int subj)
{
    bool allow = pc->allow_irrefutable;
    pc->allow_irrefutable = true;
    compile_pattern(pc, p, subj);
    pc->allow_irrefutable = allow;
}

/* Matches item i of the tuple or sequence in register from against p,
** fetching it into register item (a free temporary: nested patterns then
** cost one register per level). */
static void match_item(PatCtx *pc, AstNode *p, int from, int64_t i, int item)
{
    if (is_wildcard(p))
        return;
    FuncState *fs = pc->fs;
    comp_load_const(fs, INT_VAL(i), item);
    comp_emit_abc(fs, OP_GETITEM, item, from, item);
    compile_subpattern(pc, p, item);
}

static void compile_value(PatCtx *pc, AstNode *p, int subj)
{
    FuncState *fs = pc->fs;
    AstNode *v = p->u.pat_value.value;
    if (v->kind == AST_FSTRING) {
        comp_error(fs, v, "patterns may only match literals and attribute lookups%s", "");
        return;
    }
    int r = comp_alloc_regs(fs, 1);
    comp_expr_to(fs, v, r);
    comp_set_pos(fs, p);
    comp_emit_abc(fs, p->kind == AST_MATCH_SINGLETON ? OP_IS : OP_EQ, r, subj, r);
    fail_unless(pc, r);
}

static void compile_sequence(PatCtx *pc, AstNode *p, int subj)
{
    FuncState *fs = pc->fs;
    AstList *ps = &p->u.pat_seq.patterns;
    int star = -1;
    for (int i = 0; i < ps->len; i++)
        if (ps->items[i]->kind == AST_MATCH_STAR) {
            if (star >= 0) {
                comp_error(fs, p, "multiple starred names in sequence pattern%s", "");
                return;
            }
            star = i;
        }
    int n = ps->len - (star >= 0 ? 1 : 0);
    if (star >= 0 && (star > 0xffff || ps->len - 1 - star > 0xffff)) {
        comp_error(fs, p, "too many sub-patterns in sequence pattern%s", "");
        return;
    }
    int r = comp_alloc_regs(fs, 1);
    comp_emit_x(fs, OP_MATCH_SEQ, r, subj, 0, (uint32_t)n | (star >= 0 ? 0x80000000u : 0));
    fail_unless(pc, r);
    for (int i = 0; i < ps->len; i++) {
        AstNode *sp = ps->items[i];
        if (i == star) {
            pc->last = sp;
            if (sp->u.pat_as.name) {
                uint32_t after = (uint32_t)(ps->len - 1 - star);
                comp_emit_x(fs, OP_MATCH_STAR, r, subj, 0, (uint32_t)star | after << 16);
                capture(pc, sp, sp->u.pat_as.name, r);
            }
            continue;
        }
        /* items after a star are counted from the end */
        match_item(pc, sp, subj, star >= 0 && i > star ? (int64_t)(i - ps->len) : i, r);
    }
}

/* The value of a literal key, for the duplicate check; EMPTY if the key is
** not a plain constant (attributes, complex numbers). */
static Value key_constant(AstNode *k)
{
    bool neg = k->kind == AST_UNARYOP && k->u.unary.op == UNOP_NEG;
    AstNode *v = neg ? k->u.unary.operand : k;
    switch (v->kind) {
    case AST_INT: return neg ? (v->u.int_ == INT64_MIN ? EMPTY_VAL : INT_VAL(-v->u.int_)) : INT_VAL(v->u.int_);
    case AST_FLOAT: return FLOAT_VAL(neg ? -v->u.float_ : v->u.float_);
    case AST_NONE: return NONE_VAL;
    case AST_TRUE: return BOOL_VAL(true);
    case AST_FALSE: return BOOL_VAL(false);
    default: return EMPTY_VAL;
    }
}

static bool same_key(VM *vm, AstNode *a, AstNode *b)
{
    if (a->kind == AST_STR && b->kind == AST_STR)
        return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    Value x = key_constant(a), y = key_constant(b);
    return !IS_EMPTY(x) && !IS_EMPTY(y) && vm_equal(vm, x, y);
}

static void compile_mapping(PatCtx *pc, AstNode *p, int subj)
{
    FuncState *fs = pc->fs;
    VM *vm = comp_vm(fs);
    AstList *keys = &p->u.pat_map.keys;
    int n = keys->len;
    for (int i = 0; i < n; i++) {
        AstNode *k = keys->items[i];
        if (k->kind == AST_FSTRING) {
            comp_error(fs, p, "mapping pattern keys may only match literals and attribute lookups%s", "");
            return;
        }
        for (int j = 0; j < i; j++)
            if (same_key(vm, keys->items[j], k)) {
                Str *r = k->kind == AST_STR ? str_repr(vm, str_new(vm, k->u.str.s, k->u.str.len))
                                            : vm_repr(vm, key_constant(k));
                comp_error(fs, p, "mapping pattern checks duplicate key (%s)", r->chars);
                return;
            }
    }
    int r = comp_alloc_regs(fs, 3); /* r: test and items, r+1: values, r+2: keys */
    comp_emit_x(fs, OP_MATCH_MAP, r, subj, 0, (uint32_t)n);
    fail_unless(pc, r);
    if (n == 0 && !p->u.pat_map.rest)
        return;
    /* the keys as a tuple, built by appending: there may be any number */
    comp_emit_abc(fs, OP_BUILD_LIST, r + 2, 0, 0);
    for (int i = 0; i < n; i++) {
        comp_expr_to(fs, keys->items[i], r);
        comp_emit_abc(fs, OP_LIST_APPEND, r + 2, r, 0);
    }
    comp_emit_abc(fs, OP_LIST_TO_TUPLE, r + 2, r + 2, 0);
    comp_set_pos(fs, p);
    if (n > 0) {
        comp_emit_abc(fs, OP_MATCH_KEYS, r, subj, r + 2);
        fail_unless(pc, r);
    }
    /* **rest goes straight to its capture register (bound later, with the
    ** others), so the keys need no register while sub-patterns nest */
    int rest = p->u.pat_map.rest ? slot_reg(pc, p->u.pat_map.rest) : -1;
    if (rest >= 0)
        comp_emit_abc(fs, OP_MATCH_REST, rest, subj, r + 2);
    comp_set_freereg(fs, r + 2);
    for (int i = 0; i < n; i++)
        match_item(pc, p->u.pat_map.patterns.items[i], r + 1, i, r);
    if (p->u.pat_map.rest)
        capture(pc, p, p->u.pat_map.rest, rest >= 0 ? rest : r);
}

static void compile_class(PatCtx *pc, AstNode *p, int subj)
{
    FuncState *fs = pc->fs;
    VM *vm = comp_vm(fs);
    int npos = p->u.pat_class.patterns.len, nkw = p->u.pat_class.kwd_patterns.len;
    for (int i = 0; i < nkw; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(p->u.pat_class.kwd_attrs[i], p->u.pat_class.kwd_attrs[j]) == 0) {
                comp_error(fs, p->u.pat_class.kwd_patterns.items[i], "attribute name repeated in class pattern: %s",
                           p->u.pat_class.kwd_attrs[i]);
                return;
            }
    if (npos > 0xff) {
        comp_error(fs, p, "too many positional sub-patterns in class pattern%s", "");
        return;
    }
    int r = comp_alloc_regs(fs, 2);
    comp_expr_to(fs, p->u.pat_class.cls, r);
    if (nkw > 0) {
        Tuple *names = tuple_new(vm, nkw);
        vm_push_root(vm, OBJ_VAL(names));
        for (int i = 0; i < nkw; i++)
            names->items[i] = OBJ_VAL(str_intern(vm, p->u.pat_class.kwd_attrs[i], strlen(p->u.pat_class.kwd_attrs[i])));
        comp_load_const(fs, OBJ_VAL(names), r + 1);
        vm_pop_roots(vm, 1);
    } else {
        comp_emit_abc(fs, OP_LOADNONE, r + 1, 0, 0);
    }
    comp_set_pos(fs, p);
    comp_emit_abc(fs, OP_MATCH_CLASS, r, subj, npos);
    fail_unless(pc, r);
    for (int i = 0; i < npos + nkw; i++) {
        AstNode *sp = i < npos ? p->u.pat_class.patterns.items[i] : p->u.pat_class.kwd_patterns.items[i - npos];
        match_item(pc, sp, r + 1, i, r);
    }
}

static void compile_or(PatCtx *pc, AstNode *p, int subj)
{
    FuncState *fs = pc->fs;
    AstList *alts = &p->u.pat_seq.patterns;
    bool allow = pc->allow_irrefutable;
    /* the names bound before the alternatives, and those the first binds */
    int outer = pc->nstores;
    const char **outer_names = comp_xrealloc(comp_vm(fs), NULL, (size_t)(outer + 1) * sizeof(char *));
    if (outer > 0)
        memcpy(outer_names, pc->stores, (size_t)outer * sizeof(char *));
    const char **control = NULL;
    int ncontrol = 0;
    int *outer_fails = pc->fails;
    int nouter_fails = pc->nfails, capouter_fails = pc->capfails;
    int *ends = NULL, nends = 0, capends = 0;
    for (int i = 0; i < alts->len && !comp_failed(fs); i++) {
        AstNode *alt = alts->items[i];
        bool last = i == alts->len - 1;
        pc->allow_irrefutable = last && allow;
        pc->nstores = 0;
        pc->fails = NULL;
        pc->nfails = pc->capfails = 0;
        compile_pattern(pc, alt, subj);
        if (i == 0) {
            ncontrol = pc->nstores;
            control = comp_xrealloc(comp_vm(fs), NULL, (size_t)(ncontrol + 1) * sizeof(char *));
            if (ncontrol > 0)
                memcpy(control, pc->stores, (size_t)ncontrol * sizeof(char *));
        } else {
            bool same = pc->nstores == ncontrol;
            for (int j = 0; j < pc->nstores && same; j++)
                same = has_name(control, ncontrol, pc->stores[j]);
            if (!same)
                comp_error(fs, pc->last, "alternative patterns bind different names%s", "");
        }
        if (!last) {
            ends = grow(fs, ends, &capends, nends + 1, sizeof(int));
            ends[nends++] = comp_emit_jump(fs, OP_JMP, 0);
            for (int j = 0; j < pc->nfails; j++)
                comp_patch_here(fs, pc->fails[j]);
            free(pc->fails);
        } else {
            /* the last alternative's failures are the whole pattern's */
            for (int j = 0; j < pc->nfails; j++) {
                outer_fails = grow(fs, outer_fails, &capouter_fails, nouter_fails + 1, sizeof(int));
                outer_fails[nouter_fails++] = pc->fails[j];
            }
            free(pc->fails);
        }
    }
    for (int j = 0; j < nends; j++)
        comp_patch_here(fs, ends[j]);
    free(ends);
    pc->fails = outer_fails;
    pc->nfails = nouter_fails;
    pc->capfails = capouter_fails;
    pc->allow_irrefutable = allow;
    /* back to the names bound before, then the alternatives' (checked against them) */
    pc->nstores = 0;
    for (int i = 0; i < outer; i++) {
        pc->stores = grow(fs, pc->stores, &pc->capstores, pc->nstores + 1, sizeof(char *));
        pc->stores[pc->nstores++] = outer_names[i];
    }
    for (int i = 0; i < ncontrol && !comp_failed(fs); i++) {
        if (has_name(pc->stores, pc->nstores, control[i])) {
            comp_error(fs, pc->last, "multiple assignments to name '%s' in pattern", control[i]);
            break;
        }
        pc->stores = grow(fs, pc->stores, &pc->capstores, pc->nstores + 1, sizeof(char *));
        pc->stores[pc->nstores++] = control[i];
    }
    free(outer_names);
    free(control);
}

static void compile_pattern(PatCtx *pc, AstNode *p, int subj)
{
    FuncState *fs = pc->fs;
    if (comp_failed(fs))
        return;
    comp_set_pos(fs, p);
    pc->last = p;
    int save = comp_freereg(fs);
    switch (p->kind) {
    case AST_MATCH_VALUE: case AST_MATCH_SINGLETON: compile_value(pc, p, subj); break;
    case AST_MATCH_SEQUENCE: compile_sequence(pc, p, subj); break;
    case AST_MATCH_MAPPING: compile_mapping(pc, p, subj); break;
    case AST_MATCH_CLASS: compile_class(pc, p, subj); break;
    case AST_MATCH_OR: compile_or(pc, p, subj); break;
    case AST_MATCH_AS:
        if (!p->u.pat_as.pattern) {
            if (!pc->allow_irrefutable) {
                if (p->u.pat_as.name)
                    comp_error(fs, p, "name capture '%s' makes remaining patterns unreachable", p->u.pat_as.name);
                else
                    comp_error(fs, p, "wildcard makes remaining patterns unreachable%s", "");
                return;
            }
        } else {
            compile_pattern(pc, p->u.pat_as.pattern, subj);
        }
        if (p->u.pat_as.name)
            capture(pc, p, p->u.pat_as.name, subj);
        break;
    default: /* a star outside a sequence cannot be parsed */
        comp_error(fs, p, "invalid pattern%s", "");
        break;
    }
    comp_set_freereg(fs, save);
}

/* -------------------------------------------------------------- statement */

void comp_match(FuncState *fs, AstNode *s)
{
    AstList *cases = &s->u.match.cases;
    int subj = comp_alloc_regs(fs, 1);
    comp_expr_to(fs, s->u.match.subject, subj);
    int base = comp_freereg(fs);
    int *ends = NULL, nends = 0, capends = 0;
    /* a last "case _:" is the default: its body runs with no test */
    AstNode *lastc = cases->items[cases->len - 1];
    bool has_default = cases->len > 1 && is_wildcard(lastc->u.match_case.pattern) && !lastc->u.match_case.guard;
    comp_nest(fs, 1);
    for (int i = 0; i < cases->len && !comp_failed(fs); i++) {
        AstNode *c = cases->items[i];
        comp_set_freereg(fs, base);
        if (has_default && i == cases->len - 1) {
            comp_nested_stmts(fs, &c->u.match_case.body);
            break;
        }
        PatCtx pc = {.fs = fs};
        int capslots = 0;
        collect_slots(&pc, c->u.match_case.pattern, &capslots);
        pc.slot_regs = comp_xrealloc(comp_vm(fs), NULL, (size_t)(pc.nslots + 1) * sizeof(int));
        for (int j = 0; j < pc.nslots; j++)
            pc.slot_regs[j] = comp_alloc_regs(fs, 1);
        pc.allow_irrefutable = c->u.match_case.guard || i == cases->len - 1;
        compile_pattern(&pc, c->u.match_case.pattern, subj);
        /* matched: bind the captures, in the order the pattern names them */
        for (int j = 0; j < pc.nstores; j++)
            comp_store_name(fs, pc.stores[j], slot_reg(&pc, pc.stores[j]));
        if (c->u.match_case.guard) {
            int g = comp_alloc_regs(fs, 1);
            comp_set_pos(fs, c->u.match_case.guard);
            comp_expr_to(fs, c->u.match_case.guard, g);
            fail_unless(&pc, g);
        }
        comp_set_freereg(fs, base);
        comp_nested_stmts(fs, &c->u.match_case.body);
        if (i < cases->len - 1) {
            ends = grow(fs, ends, &capends, nends + 1, sizeof(int));
            ends[nends++] = comp_emit_jump(fs, OP_JMP, 0);
        }
        for (int j = 0; j < pc.nfails; j++)
            comp_patch_here(fs, pc.fails[j]);
        free(pc.fails);
        free(pc.stores);
        free(pc.slot_names);
        free(pc.slot_regs);
    }
    for (int j = 0; j < nends; j++)
        comp_patch_here(fs, ends[j]);
    free(ends);
    comp_nest(fs, -1);
}
