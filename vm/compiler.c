/*
** compiler.c — AST to register bytecode (Proto). One FuncState per module,
** def, lambda, class body or comprehension; names are resolved by the scope
** pass (scope.c). Registers: named locals first (parameters in order), then
** temporaries allocated with a stack discipline (freereg).
**
** Errors do not jump: the first one is recorded in *err, compilation goes on
** producing code nobody will run, and comp_module returns NULL.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "bytes.h"
#include "compile_match.h"
#include "cstack.h"
#include "future.h"
#include "opcodes.h"
#include "scope.h"
#include "vm.h"
#include "complex_num.h"
#include "bigint.h"

typedef enum FBlockKind { FB_LOOP, FB_FINALLY, FB_WITH, FB_HANDLER, FB_ASYNC_WITH } FBlockKind;

/* What a break/continue/return must undo on its way out. */
typedef struct FBlock {
    FBlockKind kind;
    int reg;             /* WITH: the exit register; HANDLER: saved handling */
    AstList *finalbody;  /* FINALLY */
    int continue_target; /* LOOP */
    int *breaks;         /* LOOP: jumps to patch to the loop end */
    int nbreaks, capbreaks;
} FBlock;

typedef struct FuncState {
    VM *vm;
    struct FuncState *parent;
    Scope *scope;
    Source *src;
    SyntaxErr *err;
    bool *failed;
    ParseMode mode;
    Str *qualname;

    uint32_t *code;
    int32_t *lines, *cols;
    int ncode, capcode;
    Value *consts;
    int nconsts, capconsts;
    int *const_slots;  /* open-addressing index of the deduplicated constants: const index + 1, 0 = free */
    int nconst_slots;  /* a power of two, kept above twice the constants it holds */
    Handler *handlers;
    int nhandlers, caphandlers;

    int freereg, maxreg;
    int line, col;
    FBlock *fblocks;
    int nfblocks, capfblocks;
    bool *safe;        /* per local register: certainly bound here */
    const char **deleted; /* names deleted somewhere in the function */
    int ndeleted;
    int depth;         /* statement nesting (0 = function body top level) */
} FuncState;

static void compile_stmts(FuncState *fs, AstList *l);
static void expr_to(FuncState *fs, AstNode *e, int target);
static void assign_to(FuncState *fs, AstNode *t, int src);
static void emit_await(FuncState *fs, int src, int target, int ctx);
static bool in_async(FuncState *fs);

/* ------------------------------------------------------------------ errors */

#define STR_(x) #x
#define STR(x) STR_(x)
/* Largest register a local may occupy past the window (a 16-bit Bx field). */
#define MAX_WIDE_REG 0xffff

static void error_at(FuncState *fs, AstNode *at, const char *fmt, const char *arg)
{
    if (*fs->failed)
        return;
    *fs->failed = true;
    fs->err->line = at ? at->line : fs->line;
    fs->err->col = at ? at->col : fs->col;
    /* like CPython, underline the whole offending node when it fits on its line */
    fs->err->end_col = at && at->end_line == at->line && at->end_col > at->col + 1 ? at->end_col : 0;
    fs->err->indentation = false;
    snprintf(fs->err->msg, sizeof fs->err->msg, fmt, arg ? arg : "");
}

/* error_at for a compound statement (async for/with): CPython underlines
** its first line to the end when the statement spans several lines. */
static void error_at_stmt(FuncState *fs, AstNode *s, const char *msg)
{
    error_at(fs, s, "%s", msg);
    if (s->end_line == s->line || !fs->src || !fs->src->text)
        return;
    const char *p = fs->src->text, *end = fs->src->text + fs->src->len;
    for (int line = 1; line < s->line && p < end; p++)
        if (*p == '\n')
            line++;
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r')
        e++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    fs->err->end_col = (int)(e - p) + 1;
}

/* Deep trees recurse in C: when the C stack runs out the compile fails with
** CPython's RecursionError "maximum recursion depth exceeded during compilation". */
static bool out_of_stack(FuncState *fs, AstNode *at)
{
    if (!c_stack_exhausted())
        return false;
    if (!*fs->failed) {
        error_at(fs, at, "maximum recursion depth exceeded during compilation%s", "");
        fs->err->recursion = true;
    }
    return true;
}

/* ------------------------------------------------------------------ emitting */

static int emit(FuncState *fs, uint32_t ins)
{
    if (fs->ncode == fs->capcode) {
        int cap = fs->capcode ? fs->capcode * 2 : 64;
        fs->code = comp_xrealloc(fs->vm, fs->code, (size_t)cap * sizeof(uint32_t));
        fs->lines = comp_xrealloc(fs->vm, fs->lines, (size_t)cap * sizeof(int32_t));
        fs->cols = comp_xrealloc(fs->vm, fs->cols, (size_t)cap * sizeof(int32_t));
        fs->capcode = cap;
    }
    fs->code[fs->ncode] = ins;
    fs->lines[fs->ncode] = fs->line;
    fs->cols[fs->ncode] = fs->col;
    return fs->ncode++;
}

/* Every register number and count must fit its 8-bit field: a value that
** did not would silently name another register, so it fails the compile. */
static bool operand_fits(FuncState *fs, int v)
{
    if (v >= 0 && v <= 0xff)
        return true;
    error_at(fs, NULL, "too many local variables or nested expressions in function (limit %s registers)", STR(MAX_REGS));
    return false;
}

static int emit_abc(FuncState *fs, Opcode op, int a, int b, int c)
{
    if (!operand_fits(fs, a) || !operand_fits(fs, b) || !operand_fits(fs, c))
        a = b = c = 0;
    return emit(fs, MK_ABC(op, a, b, c));
}

static int emit_abx(FuncState *fs, Opcode op, int a, int bx)
{
    if (!operand_fits(fs, a))
        a = 0;
    return emit(fs, MK_ABX(op, a, bx & 0xffff));
}

static int emit_x(FuncState *fs, Opcode op, int a, int b, int c, uint32_t ext)
{
    int pc = emit_abc(fs, op, a, b, c);
    emit(fs, ext);
    return pc;
}

static int here(FuncState *fs) { return fs->ncode; }

/* Emits a forward jump to be patched; returns its pc. */
static int emit_jump(FuncState *fs, Opcode op, int a)
{
    if (op == OP_JMP)
        return emit(fs, MK_SJ(op, 0));
    if (!operand_fits(fs, a))
        a = 0;
    return emit(fs, MK_ASBX(op, a, 0));
}

static void patch_to(FuncState *fs, int pc, int target)
{
    int off = target - (pc + 1);
    uint32_t ins = fs->code[pc];
    Opcode op = INS_OP(ins);
    if (op == OP_JMP) {
        if (off < -(1 << 23) || off >= (1 << 23))
            error_at(fs, NULL, "function too large%s", "");
        fs->code[pc] = MK_SJ(op, off);
    } else {
        if (off < SBX_MIN || off > SBX_MAX)
            error_at(fs, NULL, "function too large (a jump spans more than 32767 instructions)%s", "");
        fs->code[pc] = MK_ASBX(op, INS_A(ins), off);
    }
}

static void patch_here(FuncState *fs, int pc) { patch_to(fs, pc, here(fs)); }

static void emit_jump_back(FuncState *fs, int target)
{
    int pc = emit(fs, MK_SJ(OP_JMP, 0));
    patch_to(fs, pc, target);
}

static int alloc_reg(FuncState *fs)
{
    int r = fs->freereg++;
    if (fs->freereg > MAX_REGS) {
        error_at(fs, NULL, "too many local variables or nested expressions in function (limit %s registers)", STR(MAX_REGS));
        fs->freereg = MAX_REGS;
        r = MAX_REGS - 1;
    }
    if (fs->freereg > fs->maxreg)
        fs->maxreg = fs->freereg;
    return r;
}

static int alloc_regs(FuncState *fs, int n)
{
    int base = fs->freereg;
    for (int i = 0; i < n; i++)
        alloc_reg(fs);
    return n > 0 && base < MAX_REGS ? base : (fs->freereg > 0 ? fs->freereg - 1 : 0);
}

/* ------------------------------------------------------------------ constants */

static bool const_same(VM *vm, Value a, Value b)
{
    if (a.tag != b.tag)
        return false;
    switch (a.tag) {
    case VAL_INT: return a.as.i == b.as.i;
    case VAL_FLOAT: return memcmp(&a.as.f, &b.as.f, sizeof(double)) == 0;
    case VAL_BOOL: return a.as.b == b.as.b;
    case VAL_NONE: return true;
    case VAL_OBJ:
        if (a.as.obj == b.as.obj)
            return true;
        if (a.as.obj->type == vm->t_str && b.as.obj->type == vm->t_str)
            return str_equal((Str *)a.as.obj, (Str *)b.as.obj);
        return false;
    default: return false;
    }
}

static uint64_t const_hash(Value v)
{
    uint64_t h;
    switch (v.tag) {
    case VAL_INT: h = (uint64_t)v.as.i; break;
    case VAL_FLOAT: memcpy(&h, &v.as.f, sizeof h); break;
    case VAL_BOOL: h = v.as.b; break;
    case VAL_OBJ: {
        Str *s = (Str *)AS_OBJ(v);
        h = (uint64_t)str_hash_bytes(s->chars, (size_t)s->len);
        break;
    }
    default: h = 0; break;
    }
    /* the tag keeps 1, 1.0 and True apart; then mix the bits (splitmix64) */
    h ^= (uint64_t)v.tag * 0x9E3779B97F4A7C15u;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9u;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBu;
    return h ^ (h >> 31);
}

/* Slot of v in const_slots: the one holding an equal constant, else the
** free one where it belongs. */
static int const_slot(FuncState *fs, Value v)
{
    int mask = fs->nconst_slots - 1;
    int i = (int)(const_hash(v) & (uint64_t)mask);
    while (fs->const_slots[i] && !const_same(fs->vm, fs->consts[fs->const_slots[i] - 1], v))
        i = (i + 1) & mask;
    return i;
}

/* Index of constant v in the function's table, adding it if new. Numbers,
** None and strs are shared (found through a hash index: a function may
** have tens of thousands); other objects always get their own slot. */
static int add_const(FuncState *fs, Value v)
{
    bool dedupe = !(IS_OBJ(v) && AS_OBJ(v)->type != fs->vm->t_str);
    int slot = -1;
    if (dedupe) {
        if (2 * (fs->nconsts + 1) > fs->nconst_slots) {
            int n = fs->nconst_slots ? fs->nconst_slots * 2 : 64;
            while (2 * (fs->nconsts + 1) > n)
                n *= 2;
            free(fs->const_slots);
            fs->const_slots = comp_xrealloc(fs->vm, NULL, (size_t)n * sizeof(int));
            memset(fs->const_slots, 0, (size_t)n * sizeof(int));
            fs->nconst_slots = n;
            for (int k = 0; k < fs->nconsts; k++) {
                Value c = fs->consts[k];
                if (!(IS_OBJ(c) && AS_OBJ(c)->type != fs->vm->t_str))
                    fs->const_slots[const_slot(fs, c)] = k + 1;
            }
        }
        slot = const_slot(fs, v);
        if (fs->const_slots[slot])
            return fs->const_slots[slot] - 1;
    }
    if (fs->nconsts == fs->capconsts) {
        int cap = fs->capconsts ? fs->capconsts * 2 : 16;
        fs->consts = comp_xrealloc(fs->vm, fs->consts, (size_t)cap * sizeof(Value));
        fs->capconsts = cap;
    }
    fs->consts[fs->nconsts] = v;
    if (slot >= 0)
        fs->const_slots[slot] = fs->nconsts + 1;
    return fs->nconsts++;
}

static int name_const(FuncState *fs, const char *name)
{
    return add_const(fs, OBJ_VAL(str_intern(fs->vm, name, strlen(name))));
}

static void load_const(FuncState *fs, Value v, int target)
{
    if (IS_INT(v) && v.as.i >= SBX_MIN && v.as.i <= SBX_MAX) {
        if (!operand_fits(fs, target))
            target = 0;
        emit(fs, MK_ASBX(OP_LOADI, target, (int)v.as.i));
        return;
    }
    if (IS_NONE(v)) {
        emit_abc(fs, OP_LOADNONE, target, 0, 0);
        return;
    }
    if (IS_BOOL(v)) {
        emit_abc(fs, v.as.b ? OP_LOADTRUE : OP_LOADFALSE, target, 0, 0);
        return;
    }
    int k = add_const(fs, v);
    if (k > 0xffff)
        error_at(fs, NULL, "too many constants in function%s", "");
    emit_abx(fs, OP_LOADK, target, k);
}

/* An int literal too large for int64 becomes a big-int constant. Decimal
** literals past sys.get_int_max_str_digits() are a SyntaxError, as in CPython. */
static void bigint_literal_to(FuncState *fs, AstNode *e, int target)
{
    const char *s = e->u.str.s;
    size_t len = e->u.str.len, ndigits = 0;
    bool decimal = !(len > 1 && s[0] == '0' && strchr("xXoObB", s[1]));
    for (size_t i = 0; i < len; i++)
        ndigits += s[i] != '_';
    int64_t limit = bigint_max_str_digits(fs->vm);
    if (decimal && limit > 0 && ndigits > (size_t)limit) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "Exceeds the limit (%lld digits) for integer string conversion: value has %zu digits; "
                 "use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge "
                 "integer literals to avoid decimal conversion limits.",
                 (long long)limit, ndigits);
        error_at(fs, e, "%s", msg);
        return;
    }
    load_const(fs, int_from_str(fs->vm, s, len, 0), target);
}

/* ------------------------------------------------------------------ names */

static Symbol *lookup(FuncState *fs, const char *name) { return scope_lookup(fs->scope, name); }

static SymKind sym_kind(FuncState *fs, Symbol *sy)
{
    if (sy)
        return sy->kind;
    return fs->scope->kind == SCOPE_CLASS ? SYM_NAME : SYM_GLOBAL;
}

static bool is_deleted(FuncState *fs, const char *name)
{
    for (int i = 0; i < fs->ndeleted; i++)
        if (strcmp(fs->deleted[i], name) == 0)
            return true;
    return false;
}

/* Register of a local that may be read directly, emitting CHECK_LOCAL when
** it may be unbound; -1 if the name is not a plain local. */
static int local_reg(FuncState *fs, const char *name)
{
    Symbol *sy = lookup(fs, name);
    if (!sy || sy->kind != SYM_LOCAL)
        return -1;
    int r = sy->index;
    if (!fs->safe[r])
        emit_abc(fs, OP_CHECK_LOCAL, r, 0, 0);
    return r;
}

static void load_name(FuncState *fs, const char *name, int target)
{
    Symbol *sy = lookup(fs, name);
    switch (sym_kind(fs, sy)) {
    case SYM_LOCAL: {
        int r = local_reg(fs, name);
        if (r != target)
            emit_abc(fs, OP_MOVE, target, r, 0);
        break;
    }
    case SYM_WIDE: emit_abx(fs, OP_LOAD_WIDE, target, sy->index + WIDE_SHIFT); break;
    case SYM_CELL: emit_abc(fs, OP_LOAD_DEREF, target, sy->index, 0); break;
    case SYM_FREE: emit_abc(fs, OP_LOAD_FREE, target, sy->index, 0); break;
    case SYM_NAME: emit_x(fs, OP_LOAD_NAME, target, 0, 0, (uint32_t)name_const(fs, name)); break;
    case SYM_GLOBAL: emit_x(fs, OP_LOAD_GLOBAL, target, 0, 0, (uint32_t)name_const(fs, name)); break;
    }
}

static void store_name(FuncState *fs, const char *name, int src)
{
    Symbol *sy = lookup(fs, name);
    switch (sym_kind(fs, sy)) {
    case SYM_LOCAL:
        if (src != sy->index)
            emit_abc(fs, OP_MOVE, sy->index, src, 0);
        if (fs->depth == 0 && !is_deleted(fs, name))
            fs->safe[sy->index] = true;
        break;
    case SYM_WIDE: emit_abx(fs, OP_STORE_WIDE, src, sy->index + WIDE_SHIFT); break;
    case SYM_CELL: emit_abc(fs, OP_STORE_DEREF, sy->index, src, 0); break;
    case SYM_FREE: emit_abc(fs, OP_STORE_FREE, sy->index, src, 0); break;
    case SYM_NAME: emit_x(fs, OP_STORE_NAME, src, 0, 0, (uint32_t)name_const(fs, name)); break;
    case SYM_GLOBAL: emit_x(fs, OP_STORE_GLOBAL, src, 0, 0, (uint32_t)name_const(fs, name)); break;
    }
}

static void delete_name(FuncState *fs, const char *name, AstNode *at)
{
    Symbol *sy = lookup(fs, name);
    switch (sym_kind(fs, sy)) {
    case SYM_LOCAL: emit_abc(fs, OP_DEL_LOCAL, sy->index, 0, 0); break;
    case SYM_WIDE: emit_abx(fs, OP_DEL_WIDE, 0, sy->index + WIDE_SHIFT); break;
    case SYM_CELL: emit_abc(fs, OP_DEL_DEREF, sy->index, 0, 0); break;
    case SYM_FREE: error_at(fs, at, "cannot delete free variable '%s'", name); break;
    case SYM_NAME: emit_x(fs, OP_DEL_NAME, 0, 0, 0, (uint32_t)name_const(fs, name)); break;
    case SYM_GLOBAL: emit_x(fs, OP_DEL_GLOBAL, 0, 0, 0, (uint32_t)name_const(fs, name)); break;
    }
}

/* ------------------------------------------------------------------ expressions */

/* Evaluates e into some register: a local's own register when possible,
** else a new temporary. */
static int expr_reg(FuncState *fs, AstNode *e)
{
    if (e->kind == AST_NAME) {
        Symbol *sy = lookup(fs, e->u.name.id);
        if (sy && sy->kind == SYM_LOCAL) {
            int sl = fs->line, sc = fs->col;
            fs->line = e->line, fs->col = e->col;
            int r = local_reg(fs, e->u.name.id);
            fs->line = sl, fs->col = sc;
            return r;
        }
    }
    int r = alloc_reg(fs);
    expr_to(fs, e, r);
    return r;
}

static bool is_named_local(FuncState *fs, int reg)
{
    return fs->scope->kind != SCOPE_MODULE && fs->scope->kind != SCOPE_CLASS && reg < fs->scope->nlocals &&
           reg < REG_LOCALS;
}

/* Register holding an operator's first operand. It is evaluated straight
** into target when target is a temporary (nothing else can read it before
** the operator writes it), so long chains such as a + b + c + ... or
** - - - x need no register per level. */
static int first_operand_reg(FuncState *fs, AstNode *e, int target)
{
    bool plain_local = e->kind == AST_NAME && sym_kind(fs, lookup(fs, e->u.name.id)) == SYM_LOCAL;
    if (plain_local || is_named_local(fs, target) || target >= fs->freereg)
        return expr_reg(fs, e);
    expr_to(fs, e, target);
    return target;
}

static bool has_starred(AstList *l)
{
    for (int i = 0; i < l->len; i++)
        if (l->items[i]->kind == AST_STARRED)
            return true;
    return false;
}

static void binop_to(FuncState *fs, BinOp op, int target, int b, int c)
{
    switch (op) {
    case BINOP_ADD: emit_abc(fs, OP_ADD, target, b, c); break;
    case BINOP_SUB: emit_abc(fs, OP_SUB, target, b, c); break;
    case BINOP_MUL: emit_abc(fs, OP_MUL, target, b, c); break;
    case BINOP_TRUEDIV: emit_abc(fs, OP_TRUEDIV, target, b, c); break;
    case BINOP_FLOORDIV: emit_abc(fs, OP_FLOORDIV, target, b, c); break;
    case BINOP_MOD: emit_abc(fs, OP_MOD, target, b, c); break;
    default: emit_x(fs, OP_BINOP, target, b, c, (uint32_t)op); break;
    }
}

static Opcode cmp_opcode(CmpOp op)
{
    switch (op) {
    case CMP_EQ: return OP_EQ;
    case CMP_NE: return OP_NE;
    case CMP_LT: return OP_LT;
    case CMP_LE: return OP_LE;
    case CMP_GT: return OP_GT;
    case CMP_GE: return OP_GE;
    case CMP_IS: return OP_IS;
    case CMP_ISNOT: return OP_ISNOT;
    case CMP_IN: return OP_IN;
    default: return OP_NOTIN;
    }
}

/* Builds a list/tuple/set display with starred items or too many items
** for one instruction: start empty, then append/extend item by item. */
static void build_incremental(FuncState *fs, AstList *elts, AstKind kind, int target)
{
    int save = fs->freereg;
    int acc = alloc_reg(fs);
    if (kind == AST_SET)
        emit_abc(fs, OP_BUILD_SET, acc, 0, 0);
    else
        emit_abc(fs, OP_BUILD_LIST, acc, 0, 0);
    for (int i = 0; i < elts->len; i++) {
        AstNode *it = elts->items[i];
        int s2 = fs->freereg;
        if (it->kind == AST_STARRED) {
            int r = expr_reg(fs, it->u.starred.value);
            emit_abc(fs, kind == AST_SET ? OP_SET_UPDATE : OP_LIST_EXTEND, acc, r, 0);
        } else {
            int r = expr_reg(fs, it);
            emit_abc(fs, kind == AST_SET ? OP_SET_ADD : OP_LIST_APPEND, acc, r, 0);
        }
        fs->freereg = s2;
    }
    if (kind == AST_TUPLE)
        emit_abc(fs, OP_LIST_TO_TUPLE, target, acc, 0);
    else if (target != acc)
        emit_abc(fs, OP_MOVE, target, acc, 0);
    fs->freereg = save;
}

static bool is_const_node(AstNode *e)
{
    switch (e->kind) {
    case AST_INT: case AST_FLOAT: case AST_STR: case AST_NONE: case AST_TRUE: case AST_FALSE:
        return true;
    case AST_UNARYOP:
        return e->u.unary.op == UNOP_NEG && (e->u.unary.operand->kind == AST_INT || e->u.unary.operand->kind == AST_FLOAT);
    default:
        return false;
    }
}

static Value const_value(FuncState *fs, AstNode *e)
{
    switch (e->kind) {
    case AST_INT: return INT_VAL(e->u.int_);
    case AST_FLOAT: return FLOAT_VAL(e->u.float_);
    case AST_STR: return OBJ_VAL(str_new(fs->vm, e->u.str.s, e->u.str.len));
    case AST_NONE: return NONE_VAL;
    case AST_TRUE: return BOOL_VAL(true);
    case AST_FALSE: return BOOL_VAL(false);
    case AST_UNARYOP: {
        AstNode *o = e->u.unary.operand;
        if (o->kind == AST_FLOAT)
            return FLOAT_VAL(-o->u.float_);
        if (o->u.int_ == INT64_MIN)
            return vm_unop(fs->vm, UNOP_NEG, INT_VAL(INT64_MIN)); /* -(-2**63) is a big int */
        return INT_VAL(-o->u.int_);
    }
    default: return NONE_VAL;
    }
}

static void display_to(FuncState *fs, AstNode *e, int target)
{
    AstList *elts = &e->u.seq.elts;
    if (e->kind == AST_SET && elts->len > 2 && !has_starred(elts)) {
        bool allconst = true;
        for (int i = 0; i < elts->len; i++)
            if (!is_const_node(elts->items[i]))
                allconst = false;
        if (allconst) {
            /* CPython builds constant sets from a frozenset constant: same order */
            Value *items = comp_xrealloc(fs->vm, NULL, (size_t)elts->len * sizeof(Value));
            for (int i = 0; i < elts->len; i++)
                items[i] = const_value(fs, elts->items[i]);
            Set *fz = set_const_frozen(fs->vm, elts->len, items);
            free(items);
            int save = fs->freereg;
            int r = alloc_reg(fs);
            int k = add_const(fs, OBJ_VAL(fz));
            emit_abx(fs, OP_LOADK, r, k);
            emit_abc(fs, OP_BUILD_SET, target, 0, 0);
            emit_abc(fs, OP_SET_UPDATE, target, r, 0);
            fs->freereg = save;
            return;
        }
    }
    if (has_starred(elts) || elts->len > 32) {
        build_incremental(fs, elts, e->kind, target);
        return;
    }
    int save = fs->freereg;
    int base = alloc_regs(fs, elts->len);
    for (int i = 0; i < elts->len; i++)
        expr_to(fs, elts->items[i], base + i);
    Opcode op = e->kind == AST_LIST ? OP_BUILD_LIST : e->kind == AST_TUPLE ? OP_BUILD_TUPLE : OP_BUILD_SET;
    emit_abc(fs, op, target, base, elts->len);
    fs->freereg = save;
}

static void dict_to(FuncState *fs, AstNode *e, int target)
{
    AstList *keys = &e->u.dict.keys, *vals = &e->u.dict.values;
    bool simple = keys->len <= 16;
    for (int i = 0; i < keys->len; i++)
        if (!keys->items[i])
            simple = false;
    int save = fs->freereg;
    if (simple) {
        int base = alloc_regs(fs, 2 * keys->len);
        for (int i = 0; i < keys->len; i++) {
            expr_to(fs, keys->items[i], base + 2 * i);
            expr_to(fs, vals->items[i], base + 2 * i + 1);
        }
        emit_abc(fs, OP_BUILD_DICT, target, base, keys->len);
        fs->freereg = save;
        return;
    }
    int acc = alloc_reg(fs);
    emit_abc(fs, OP_BUILD_DICT, acc, 0, 0);
    for (int i = 0; i < keys->len; i++) {
        int s2 = fs->freereg;
        if (!keys->items[i]) {
            int r = expr_reg(fs, vals->items[i]);
            emit_abc(fs, OP_DICT_UPDATE, acc, r, 0);
        } else {
            int k = expr_reg(fs, keys->items[i]);
            int v = expr_reg(fs, vals->items[i]);
            emit_abc(fs, OP_DICT_SET, acc, k, v);
        }
        fs->freereg = s2;
    }
    if (acc != target)
        emit_abc(fs, OP_MOVE, target, acc, 0);
    fs->freereg = save;
}

static uint32_t kwnames_const(FuncState *fs, AstList *kws)
{
    Value *names = comp_xrealloc(fs->vm, NULL, (size_t)(kws->len + 1) * sizeof(Value));
    for (int i = 0; i < kws->len; i++)
        names[i] = OBJ_VAL(str_intern(fs->vm, kws->items[i]->u.keyword.name, strlen(kws->items[i]->u.keyword.name)));
    Tuple *t = tuple_from_array(fs->vm, kws->len, names);
    free(names);
    return (uint32_t)add_const(fs, OBJ_VAL(t));
}

static void call_to(FuncState *fs, AstNode *e, int target)
{
    AstNode *fn = e->u.call.func;
    AstList *args = &e->u.call.args, *kws = &e->u.call.keywords;
    bool starry = has_starred(args);
    for (int i = 0; i < kws->len; i++)
        if (!kws->items[i]->u.keyword.name)
            starry = true;
    int save = fs->freereg;
    int base = (target + 1 == fs->freereg && target >= fs->scope->nlocals) ? target : alloc_reg(fs);
    /* past the registers left, arguments go through a tuple and a dict */
    if (starry || args->len + kws->len + 3 > MAX_REGS - fs->freereg) {
        expr_to(fs, fn, base);
        int pos = alloc_reg(fs), kw = alloc_reg(fs);
        emit_abc(fs, OP_BUILD_LIST, pos, 0, 0);
        for (int i = 0; i < args->len; i++) {
            int s2 = fs->freereg;
            AstNode *a = args->items[i];
            if (a->kind == AST_STARRED)
                emit_abc(fs, OP_LIST_EXTEND, pos, expr_reg(fs, a->u.starred.value), 0);
            else
                emit_abc(fs, OP_LIST_APPEND, pos, expr_reg(fs, a), 0);
            fs->freereg = s2;
        }
        emit_abc(fs, OP_LIST_TO_TUPLE, pos, pos, 0);
        if (kws->len) {
            emit_abc(fs, OP_BUILD_DICT, kw, 0, 0);
            for (int i = 0; i < kws->len; i++) {
                int s2 = fs->freereg;
                AstNode *k = kws->items[i];
                int v = expr_reg(fs, k->u.keyword.value);
                if (k->u.keyword.name) {
                    int kr = alloc_reg(fs);
                    load_const(fs, OBJ_VAL(str_intern(fs->vm, k->u.keyword.name, strlen(k->u.keyword.name))), kr);
                    emit_abc(fs, OP_DICT_SET, kw, kr, v);
                } else {
                    emit_abc(fs, OP_DICT_MERGE, kw, v, 0);
                }
                fs->freereg = s2;
            }
        } else {
            emit_abc(fs, OP_LOADNONE, kw, 0, 0);
        }
        fs->line = e->line, fs->col = e->col;
        emit_abc(fs, OP_CALL_EX, base, 0, 0);
    } else {
        bool method = fn->kind == AST_ATTRIBUTE;
        if (method) {
            int obj = expr_reg(fs, fn->u.attr.value);
            alloc_reg(fs); /* base + 1: self */
            fs->line = fn->line, fs->col = fn->col;
            emit_x(fs, OP_LOAD_METHOD, base, obj, 0, (uint32_t)name_const(fs, fn->u.attr.attr));
            fs->freereg = base + 2;
            if (fs->freereg > fs->maxreg)
                fs->maxreg = fs->freereg;
        } else {
            expr_to(fs, fn, base);
        }
        alloc_regs(fs, args->len + kws->len);
        int argbase = base + (method ? 2 : 1);
        for (int i = 0; i < args->len; i++)
            expr_to(fs, args->items[i], argbase + i);
        for (int i = 0; i < kws->len; i++)
            expr_to(fs, kws->items[i]->u.keyword.value, argbase + args->len + i);
        uint32_t ext = kws->len ? kwnames_const(fs, kws) : 0;
        fs->line = e->line, fs->col = e->col;
        emit_x(fs, method ? OP_CALL_METHOD : OP_CALL, base, args->len, kws->len, ext);
    }
    if (base != target)
        emit_abc(fs, OP_MOVE, target, base, 0);
    fs->freereg = save;
}

static Proto *compile_function(FuncState *parent, Scope *scope, AstNode *node, const char *name);

/* MAKE_FUNCTION for a child scope into target. */
static void make_function(FuncState *fs, Scope *child, AstNode *node, const char *name, int target)
{
    Proto *p = compile_function(fs, child, node, name);
    if (!p)
        return;
    int k = add_const(fs, OBJ_VAL(p));
    if (k > 0xffff)
        error_at(fs, node, "too many constants in function%s", "");
    emit_abx(fs, OP_MAKE_FUNCTION, target, k);
}

static void comprehension_to(FuncState *fs, AstNode *e, int target)
{
    Scope *child = scope_child(fs->scope, e);
    if (!child) {
        error_at(fs, e, "internal error: no scope for comprehension%s", "");
        return;
    }
    const char *name = child->name;
    int save = fs->freereg;
    int base = alloc_reg(fs);
    make_function(fs, child, e, name, base);
    int it = alloc_reg(fs);
    bool awaited = child->coroutine && e->kind != AST_GENEXP;
    if (awaited && !in_async(fs))
        error_at(fs, e, "asynchronous comprehension outside of an asynchronous function%s", "");
    expr_to(fs, e->u.comp.generators.items[0]->u.compfor.iter, it);
    emit_abc(fs, e->u.comp.generators.items[0]->u.compfor.is_async ? OP_GET_AITER : OP_GET_ITER, it, it, 0);
    fs->line = e->line, fs->col = e->col;
    emit_x(fs, OP_CALL, base, 1, 0, 0);
    if (awaited)
        emit_await(fs, base, base, 0);
    if (base != target)
        emit_abc(fs, OP_MOVE, target, base, 0);
    fs->freereg = save;
}

/* One f-string part (literal text or formatted value) into register r. */
static void fstring_part_to(FuncState *fs, AstNode *p, int r)
{
    if (p->kind != AST_FORMATTED) {
        expr_to(fs, p, r);
        return;
    }
    expr_to(fs, p->u.formatted.value, r);
    uint32_t ext = (uint8_t)p->u.formatted.conversion;
    int spec = 0;
    if (p->u.formatted.spec) {
        int s2 = fs->freereg;
        spec = alloc_reg(fs);
        expr_to(fs, p->u.formatted.spec, spec);
        ext |= 1u << 8;
        fs->freereg = s2;
    }
    emit_x(fs, OP_FORMAT, r, r, spec, ext);
}

/* Parts are joined FSTRING_CHUNK at a time, the text so far first, so an
** f-string of any length needs a bounded number of registers. */
#define FSTRING_CHUNK 32

static void fstring_to(FuncState *fs, AstNode *e, int target)
{
    AstList *parts = &e->u.fstring.parts;
    if (parts->len == 0) {
        load_const(fs, OBJ_VAL(fs->vm->empty_str), target);
        return;
    }
    int save = fs->freereg;
    if (parts->len == 1 && parts->items[0]->kind == AST_STR) {
        expr_to(fs, parts->items[0], target);
        return;
    }
    if (parts->len <= FSTRING_CHUNK) {
        int base = alloc_regs(fs, parts->len);
        for (int i = 0; i < parts->len; i++)
            fstring_part_to(fs, parts->items[i], base + i);
        emit_abc(fs, OP_BUILD_STRING, target, base, parts->len);
        fs->freereg = save;
        return;
    }
    int acc = alloc_regs(fs, FSTRING_CHUNK + 1);
    for (int i = 0; i < parts->len; i += FSTRING_CHUNK) {
        int n = parts->len - i < FSTRING_CHUNK ? parts->len - i : FSTRING_CHUNK;
        for (int j = 0; j < n; j++)
            fstring_part_to(fs, parts->items[i + j], acc + 1 + j);
        if (i == 0)
            emit_abc(fs, OP_BUILD_STRING, acc, acc + 1, n);
        else
            emit_abc(fs, OP_BUILD_STRING, acc, acc, n + 1);
    }
    if (acc != target)
        emit_abc(fs, OP_MOVE, target, acc, 0);
    fs->freereg = save;
}

static void compare_to(FuncState *fs, AstNode *e, int target)
{
    AstList *cs = &e->u.compare.comparators;
    int save = fs->freereg;
    if (cs->len == 1) {
        int b = expr_reg(fs, e->u.compare.left);
        int c = expr_reg(fs, cs->items[0]);
        fs->line = e->line, fs->col = e->col;
        emit_abc(fs, cmp_opcode(e->u.compare.ops[0]), target, b, c);
        fs->freereg = save;
        return;
    }
    int res = is_named_local(fs, target) ? alloc_reg(fs) : target;
    int l = alloc_reg(fs), r = alloc_reg(fs);
    expr_to(fs, e->u.compare.left, l);
    int *ends = comp_xrealloc(fs->vm, NULL, (size_t)cs->len * sizeof(int));
    int nends = 0;
    for (int i = 0; i < cs->len; i++) {
        expr_to(fs, cs->items[i], r);
        emit_abc(fs, cmp_opcode(e->u.compare.ops[i]), res, l, r);
        if (i + 1 < cs->len) {
            ends[nends++] = emit_jump(fs, OP_JMP_IF_FALSE, res);
            emit_abc(fs, OP_MOVE, l, r, 0);
        }
    }
    for (int i = 0; i < nends; i++)
        patch_here(fs, ends[i]);
    free(ends);
    if (res != target)
        emit_abc(fs, OP_MOVE, target, res, 0);
    fs->freereg = save;
}

static void lambda_to(FuncState *fs, AstNode *e, int target);

/* await R[src] into target: GET_AWAITABLE, then SEND/YIELD until the
** awaited object finishes. Registers s, s+1, s+2 are SEND's (iterator,
** value in/out, exception to throw in); the YIELD with C = 1 marks the
** frame as suspended in an await (gen_resume, coroutine.c). */
static void emit_await(FuncState *fs, int src, int target, int ctx)
{
    int save = fs->freereg;
    int s = alloc_regs(fs, 3);
    emit_abc(fs, OP_GET_AWAITABLE, s, src, ctx);
    emit_abc(fs, OP_LOADNONE, s + 1, 0, 0);
    emit_abc(fs, OP_LOADNONE, s + 2, 0, 0);
    int top = here(fs);
    int done = emit_jump(fs, OP_SEND, s);
    emit_abc(fs, OP_YIELD, s + 1, s + 1, 1);
    emit_jump_back(fs, top);
    patch_here(fs, done);
    emit_abc(fs, OP_MOVE, target, s + 1, 0);
    fs->freereg = save;
}

/* An async function or an async comprehension: where await may appear. */
static bool in_async(FuncState *fs)
{
    return fs->scope->coroutine && fs->scope->kind != SCOPE_MODULE && fs->scope->kind != SCOPE_CLASS;
}

static bool is_async_gen(FuncState *fs)
{
    return fs->scope->coroutine && fs->scope->generator;
}

static void yield_to(FuncState *fs, AstNode *e, int target)
{
    int save = fs->freereg;
    if (e->kind == AST_YIELDFROM && fs->scope->coroutine) {
        error_at(fs, e, "'yield from' inside async function%s", "");
    } else if (e->kind == AST_YIELDFROM) {
        /* delegate as await does (SEND/YIELD C=1), so that send(), throw()
        ** and close() reach the inner iterator and its return value is the
        ** result */
        int it = alloc_regs(fs, 3);
        expr_to(fs, e->u.yield.value, it);
        emit_abc(fs, OP_GET_ITER, it, it, 0);
        emit_abc(fs, OP_LOADNONE, it + 1, 0, 0);
        emit_abc(fs, OP_LOADNONE, it + 2, 0, 0);
        int top = here(fs);
        int exit = emit_jump(fs, OP_SEND, it);
        emit_abc(fs, OP_YIELD, it + 1, it + 1, 1);
        emit_jump_back(fs, top);
        patch_here(fs, exit);
        emit_abc(fs, OP_MOVE, target, it + 1, 0);
    } else {
        int v = alloc_reg(fs);
        if (e->u.yield.value)
            expr_to(fs, e->u.yield.value, v);
        else
            emit_abc(fs, OP_LOADNONE, v, 0, 0);
        if (is_async_gen(fs))
            emit_abc(fs, OP_ASYNC_GEN_WRAP, v, v, 0);
        emit_abc(fs, OP_YIELD, target, v, 0);
    }
    fs->freereg = save;
}

static void expr_to(FuncState *fs, AstNode *e, int target)
{
    if (out_of_stack(fs, e))
        return;
    int sl = fs->line, sc = fs->col;
    fs->line = e->line, fs->col = e->col;
    int save = fs->freereg;
    switch (e->kind) {
    case AST_NAME: load_name(fs, e->u.name.id, target); break;
    case AST_INT: case AST_FLOAT: case AST_STR: case AST_NONE: case AST_TRUE: case AST_FALSE:
        load_const(fs, const_value(fs, e), target);
        break;
    case AST_ELLIPSIS: load_const(fs, fs->vm->ellipsis, target); break;
    case AST_BIGINT: bigint_literal_to(fs, e, target); break;
    case AST_IMAG: load_const(fs, complex_value(fs->vm, 0.0, e->u.float_), target); break;
    case AST_BYTES: load_const(fs, OBJ_VAL(bytes_new(fs->vm, e->u.str.s, (int64_t)e->u.str.len)), target); break;
    case AST_AWAIT:
        if (!in_async(fs)) {
            error_at(fs, e, fs->scope->kind == SCOPE_FUNCTION ? "'await' outside async function%s" : "'await' outside function%s", "");
            break;
        }
    {
        int v = alloc_reg(fs);
        expr_to(fs, e->u.yield.value, v);
        fs->line = e->line, fs->col = e->col;
        emit_await(fs, v, target, 0);
        break;
    }
    case AST_FSTRING: fstring_to(fs, e, target); break;
    case AST_FORMATTED: { /* only inside an f-string */
        expr_to(fs, e->u.formatted.value, target);
        emit_x(fs, OP_FORMAT, target, target, 0, (uint8_t)e->u.formatted.conversion);
        break;
    }
    case AST_BINOP: {
        int b = first_operand_reg(fs, e->u.binop.left, target);
        int c = expr_reg(fs, e->u.binop.right);
        fs->line = e->line, fs->col = e->col;
        binop_to(fs, e->u.binop.op, target, b, c);
        break;
    }
    case AST_UNARYOP: {
        if (is_const_node(e)) {
            load_const(fs, const_value(fs, e), target);
            break;
        }
        int b = first_operand_reg(fs, e->u.unary.operand, target);
        fs->line = e->line, fs->col = e->col;
        Opcode op = e->u.unary.op == UNOP_NEG ? OP_NEG : e->u.unary.op == UNOP_POS ? OP_POS
                    : e->u.unary.op == UNOP_INVERT ? OP_INVERT : OP_NOT;
        emit_abc(fs, op, target, b, 0);
        break;
    }
    case AST_BOOLOP: {
        int res = is_named_local(fs, target) ? alloc_reg(fs) : target;
        AstList *vs = &e->u.boolop.values;
        int *ends = comp_xrealloc(fs->vm, NULL, (size_t)vs->len * sizeof(int));
        for (int i = 0; i < vs->len; i++) {
            expr_to(fs, vs->items[i], res);
            if (i + 1 < vs->len)
                ends[i] = emit_jump(fs, e->u.boolop.is_and ? OP_JMP_IF_FALSE : OP_JMP_IF_TRUE, res);
        }
        for (int i = 0; i + 1 < vs->len; i++)
            patch_here(fs, ends[i]);
        free(ends);
        if (res != target)
            emit_abc(fs, OP_MOVE, target, res, 0);
        break;
    }
    case AST_COMPARE: compare_to(fs, e, target); break;
    case AST_CALL: call_to(fs, e, target); break;
    case AST_ATTRIBUTE: {
        int obj = expr_reg(fs, e->u.attr.value);
        fs->line = e->line, fs->col = e->col;
        emit_x(fs, OP_GET_ATTR, target, obj, 0, (uint32_t)name_const(fs, e->u.attr.attr));
        break;
    }
    case AST_SUBSCRIPT: {
        int obj = expr_reg(fs, e->u.subscript.value);
        int idx = expr_reg(fs, e->u.subscript.index);
        fs->line = e->line, fs->col = e->col;
        emit_abc(fs, OP_GETITEM, target, obj, idx);
        break;
    }
    case AST_SLICE: {
        int base = alloc_regs(fs, 3);
        AstNode *parts[3] = {e->u.slice.lower, e->u.slice.upper, e->u.slice.step};
        for (int i = 0; i < 3; i++) {
            if (parts[i])
                expr_to(fs, parts[i], base + i);
            else
                emit_abc(fs, OP_LOADNONE, base + i, 0, 0);
        }
        emit_abc(fs, OP_BUILD_SLICE, target, base, 3);
        break;
    }
    case AST_LIST: case AST_TUPLE: case AST_SET: display_to(fs, e, target); break;
    case AST_DICT: dict_to(fs, e, target); break;
    case AST_STARRED: error_at(fs, e, "can't use starred expression here%s", ""); break;
    case AST_LISTCOMP: case AST_SETCOMP: case AST_GENEXP: case AST_DICTCOMP: comprehension_to(fs, e, target); break;
    case AST_LAMBDA: lambda_to(fs, e, target); break;
    case AST_IFEXP: {
        int res = is_named_local(fs, target) ? alloc_reg(fs) : target;
        int t = expr_reg(fs, e->u.ifexp.test);
        int jf = emit_jump(fs, OP_JMP_IF_FALSE, t);
        expr_to(fs, e->u.ifexp.body, res);
        int je = emit_jump(fs, OP_JMP, 0);
        patch_here(fs, jf);
        expr_to(fs, e->u.ifexp.orelse, res);
        patch_here(fs, je);
        if (res != target)
            emit_abc(fs, OP_MOVE, target, res, 0);
        break;
    }
    case AST_YIELD: case AST_YIELDFROM: yield_to(fs, e, target); break;
    case AST_NAMEDEXPR: {
        expr_to(fs, e->u.named.value, target);
        assign_to(fs, e->u.named.target, target);
        break;
    }
    default: error_at(fs, e, "unsupported expression (%s)", ast_kind_name(e->kind)); break;
    }
    fs->freereg = save;
    fs->line = sl, fs->col = sc;
}

/* ------------------------------------------------------------------ assignment */

static void assign_to(FuncState *fs, AstNode *t, int src)
{
    int save = fs->freereg;
    int sl = fs->line, sc = fs->col;
    fs->line = t->line, fs->col = t->col;
    switch (t->kind) {
    case AST_NAME: store_name(fs, t->u.name.id, src); break;
    case AST_ATTRIBUTE: {
        int obj = expr_reg(fs, t->u.attr.value);
        fs->line = t->line, fs->col = t->col;
        emit_x(fs, OP_SET_ATTR, obj, src, 0, (uint32_t)name_const(fs, t->u.attr.attr));
        break;
    }
    case AST_SUBSCRIPT: {
        int obj = expr_reg(fs, t->u.subscript.value);
        int idx = expr_reg(fs, t->u.subscript.index);
        fs->line = t->line, fs->col = t->col;
        emit_abc(fs, OP_SETITEM, obj, idx, src);
        break;
    }
    case AST_TUPLE: case AST_LIST: {
        AstList *elts = &t->u.seq.elts;
        int star = -1;
        for (int i = 0; i < elts->len; i++)
            if (elts->items[i]->kind == AST_STARRED) {
                if (star >= 0)
                    error_at(fs, elts->items[i], "multiple starred expressions in assignment%s", "");
                star = i;
            }
        if (elts->len > 200) {
            error_at(fs, t, "too many targets in unpacking assignment%s", "");
            break;
        }
        int base = alloc_regs(fs, elts->len);
        if (star < 0) {
            emit_abc(fs, OP_UNPACK, base, src, elts->len);
        } else {
            uint32_t ext = (uint32_t)star | ((uint32_t)(elts->len - star - 1) << 16);
            emit_x(fs, OP_UNPACK_EX, base, src, elts->len, ext);
        }
        for (int i = 0; i < elts->len; i++) {
            AstNode *el = elts->items[i];
            assign_to(fs, el->kind == AST_STARRED ? el->u.starred.value : el, base + i);
        }
        break;
    }
    case AST_STARRED: error_at(fs, t, "starred assignment target must be in a list or tuple%s", ""); break;
    default: error_at(fs, t, "cannot assign to %s", ast_kind_name(t->kind)); break;
    }
    fs->freereg = save;
    fs->line = sl, fs->col = sc;
}

static void delete_target(FuncState *fs, AstNode *t)
{
    int save = fs->freereg;
    fs->line = t->line, fs->col = t->col;
    switch (t->kind) {
    case AST_NAME: delete_name(fs, t->u.name.id, t); break;
    case AST_ATTRIBUTE: {
        int obj = expr_reg(fs, t->u.attr.value);
        emit_x(fs, OP_DEL_ATTR, obj, 0, 0, (uint32_t)name_const(fs, t->u.attr.attr));
        break;
    }
    case AST_SUBSCRIPT: {
        int obj = expr_reg(fs, t->u.subscript.value);
        int idx = expr_reg(fs, t->u.subscript.index);
        emit_abc(fs, OP_DELITEM, obj, idx, 0);
        break;
    }
    case AST_TUPLE: case AST_LIST:
        for (int i = 0; i < t->u.seq.elts.len; i++)
            delete_target(fs, t->u.seq.elts.items[i]);
        break;
    default: error_at(fs, t, "cannot delete %s", ast_kind_name(t->kind)); break;
    }
    fs->freereg = save;
}

/* ------------------------------------------------------------------ blocks */

static FBlock *push_fblock(FuncState *fs, FBlockKind kind, int reg)
{
    if (fs->nfblocks == fs->capfblocks) {
        int cap = fs->capfblocks ? fs->capfblocks * 2 : 8;
        fs->fblocks = comp_xrealloc(fs->vm, fs->fblocks, (size_t)cap * sizeof(FBlock));
        fs->capfblocks = cap;
    }
    FBlock *b = &fs->fblocks[fs->nfblocks++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->reg = reg;
    return b;
}

static void pop_fblock(FuncState *fs)
{
    FBlock *b = &fs->fblocks[--fs->nfblocks];
    free(b->breaks);
}

static void add_handler(FuncState *fs, int start, int end, int target, int reg)
{
    if (start >= end)
        return;
    if (fs->nhandlers == fs->caphandlers) {
        int cap = fs->caphandlers ? fs->caphandlers * 2 : 4;
        fs->handlers = comp_xrealloc(fs->vm, fs->handlers, (size_t)cap * sizeof(Handler));
        fs->caphandlers = cap;
    }
    fs->handlers[fs->nhandlers++] = (Handler){(uint32_t)start, (uint32_t)end, (uint32_t)target, (uint32_t)reg};
}

/* Runs the cleanup of fblocks above index `down_to` (exclusive), innermost
** first: finally bodies inline, with-exits, except-handler restores. */
static void unwind_fblocks(FuncState *fs, int down_to)
{
    for (int i = fs->nfblocks - 1; i > down_to; i--) {
        FBlock b = fs->fblocks[i];
        switch (b.kind) {
        case FB_FINALLY: {
            /* compile the finally body with the blocks inside it hidden */
            int saved_n = fs->nfblocks;
            fs->nfblocks = i;
            compile_stmts(fs, b.finalbody);
            fs->nfblocks = saved_n;
            break;
        }
        case FB_WITH: emit_abc(fs, OP_WITH_EXIT, b.reg, 0, 0); break;
        case FB_ASYNC_WITH: {
            int r = alloc_reg(fs);
            emit_abc(fs, OP_ASYNC_WITH_EXIT, r, b.reg, b.reg);
            emit_await(fs, r, r, 2);
            fs->freereg--;
            break;
        }
        case FB_HANDLER: emit_abc(fs, OP_LEAVE_EXCEPT, b.reg, 0, 0); break;
        case FB_LOOP: break;
        }
    }
}

static int innermost_loop(FuncState *fs)
{
    for (int i = fs->nfblocks - 1; i >= 0; i--)
        if (fs->fblocks[i].kind == FB_LOOP)
            return i;
    return -1;
}

/* ------------------------------------------------------------------ statements */

static void compile_if(FuncState *fs, AstNode *s)
{
    int save = fs->freereg;
    int t = expr_reg(fs, s->u.if_.test);
    int jf = emit_jump(fs, OP_JMP_IF_FALSE, t);
    fs->freereg = save;
    fs->depth++;
    compile_stmts(fs, &s->u.if_.body);
    if (s->u.if_.orelse.len) {
        int je = emit_jump(fs, OP_JMP, 0);
        patch_here(fs, jf);
        compile_stmts(fs, &s->u.if_.orelse);
        patch_here(fs, je);
    } else {
        patch_here(fs, jf);
    }
    fs->depth--;
}

static void compile_while(FuncState *fs, AstNode *s)
{
    fs->depth++;
    int top = here(fs);
    int jf = -1;
    AstNode *test = s->u.while_.test;
    bool always = test->kind == AST_TRUE || (test->kind == AST_INT && test->u.int_ != 0);
    if (!always) {
        int save = fs->freereg;
        int t = expr_reg(fs, test);
        jf = emit_jump(fs, OP_JMP_IF_FALSE, t);
        fs->freereg = save;
    }
    push_fblock(fs, FB_LOOP, 0)->continue_target = top;
    int li = fs->nfblocks - 1;
    compile_stmts(fs, &s->u.while_.body);
    emit_jump_back(fs, top);
    if (jf >= 0)
        patch_here(fs, jf);
    int nb = fs->fblocks[li].nbreaks;
    int *breaks = fs->fblocks[li].breaks;
    fs->fblocks[li].breaks = NULL;
    pop_fblock(fs);
    compile_stmts(fs, &s->u.while_.orelse);
    for (int i = 0; i < nb; i++)
        patch_here(fs, breaks[i]);
    free(breaks);
    fs->depth--;
}

/* async for's step: R[it+1] = await anext(R[it]); StopAsyncIteration
** ends the loop (the returned jump, to patch at the loop's exit). */
static int async_for_next(FuncState *fs, int it)
{
    int e = alloc_reg(fs);
    int start = here(fs);
    emit_abc(fs, OP_GET_ANEXT, it + 1, it, 0);
    emit_await(fs, it + 1, it + 1, 3);
    int end = here(fs);
    int jb = emit_jump(fs, OP_JMP, 0);
    add_handler(fs, start, end, here(fs), e);
    emit_abc(fs, OP_END_ASYNC_FOR, e, 0, 0);
    int exit = emit_jump(fs, OP_JMP, 0);
    patch_here(fs, jb);
    fs->freereg = e;
    return exit;
}

static void compile_for(FuncState *fs, AstNode *s)
{
    int save = fs->freereg;
    int it = alloc_reg(fs);
    alloc_reg(fs);
    bool is_async = s->u.for_.is_async;
    expr_to(fs, s->u.for_.iter, it);
    emit_abc(fs, is_async ? OP_GET_AITER : OP_GET_ITER, it, it, 0);
    fs->depth++;
    int top = here(fs);
    int exit = is_async ? async_for_next(fs, it) : emit_jump(fs, OP_FOR_ITER, it);
    /* the target is bound inside the body */
    Symbol *sy = s->u.for_.target->kind == AST_NAME ? lookup(fs, s->u.for_.target->u.name.id) : NULL;
    bool was_safe = false;
    fs->depth--;
    assign_to(fs, s->u.for_.target, it + 1);
    fs->depth++;
    if (sy && sy->kind == SYM_LOCAL && !is_deleted(fs, sy->name)) {
        was_safe = fs->safe[sy->index];
        fs->safe[sy->index] = true;
    }
    push_fblock(fs, FB_LOOP, 0)->continue_target = top;
    int li = fs->nfblocks - 1;
    compile_stmts(fs, &s->u.for_.body);
    emit_jump_back(fs, top);
    patch_here(fs, exit);
    if (sy && sy->kind == SYM_LOCAL)
        fs->safe[sy->index] = was_safe;
    int nb = fs->fblocks[li].nbreaks;
    int *breaks = fs->fblocks[li].breaks;
    fs->fblocks[li].breaks = NULL;
    pop_fblock(fs);
    fs->freereg = save;
    compile_stmts(fs, &s->u.for_.orelse);
    for (int i = 0; i < nb; i++)
        patch_here(fs, breaks[i]);
    free(breaks);
    fs->depth--;
}

static void compile_try_except(FuncState *fs, AstNode *s)
{
    int save = fs->freereg;
    int e = alloc_reg(fs), saved = alloc_reg(fs), e2 = alloc_reg(fs), m = alloc_reg(fs);
    fs->depth++;
    int body_start = here(fs);
    compile_stmts(fs, &s->u.try_.body);
    int body_end = here(fs);
    int to_else = emit_jump(fs, OP_JMP, 0);
    int handler = here(fs);
    add_handler(fs, body_start, body_end, handler, e);
    emit_abc(fs, OP_ENTER_EXCEPT, e, saved, 0);
    int cleanup_start = here(fs);
    int *ends = comp_xrealloc(fs->vm, NULL, (size_t)(s->u.try_.handlers.len + 1) * sizeof(int));
    int nends = 0;
    push_fblock(fs, FB_HANDLER, saved);
    for (int i = 0; i < s->u.try_.handlers.len; i++) {
        AstNode *h = s->u.try_.handlers.items[i];
        fs->line = h->line, fs->col = h->col;
        int next = -1;
        if (h->u.handler.type) {
            int s2 = fs->freereg;
            int t = expr_reg(fs, h->u.handler.type);
            emit_abc(fs, OP_EXC_MATCH, m, e, t);
            next = emit_jump(fs, OP_JMP_IF_FALSE, m);
            fs->freereg = s2;
        }
        if (h->u.handler.name)
            store_name(fs, h->u.handler.name, e);
        compile_stmts(fs, &h->u.handler.body);
        if (h->u.handler.name) {
            emit_abc(fs, OP_LOADNONE, m, 0, 0);
            store_name(fs, h->u.handler.name, m);
            delete_name(fs, h->u.handler.name, h);
        }
        emit_abc(fs, OP_LEAVE_EXCEPT, saved, 0, 0);
        ends[nends++] = emit_jump(fs, OP_JMP, 0);
        if (next >= 0)
            patch_here(fs, next);
    }
    pop_fblock(fs);
    emit_abc(fs, OP_LEAVE_EXCEPT, saved, 0, 0);
    emit_abc(fs, OP_RERAISE, e, 0, 0);
    int cleanup_end = here(fs);
    int cleanup = here(fs);
    add_handler(fs, cleanup_start, cleanup_end, cleanup, e2);
    emit_abc(fs, OP_LEAVE_EXCEPT, saved, 0, 0);
    emit_abc(fs, OP_RERAISE, e2, 0, 0);
    patch_here(fs, to_else);
    fs->freereg = save;
    compile_stmts(fs, &s->u.try_.orelse);
    for (int i = 0; i < nends; i++)
        patch_here(fs, ends[i]);
    free(ends);
    fs->depth--;
}

static void compile_try(FuncState *fs, AstNode *s)
{
    if (s->u.try_.finalbody.len == 0) {
        compile_try_except(fs, s);
        return;
    }
    int save = fs->freereg;
    int f = alloc_reg(fs);
    fs->depth++;
    FBlock *b = push_fblock(fs, FB_FINALLY, 0);
    b->finalbody = &s->u.try_.finalbody;
    int start = here(fs);
    if (s->u.try_.handlers.len)
        compile_try_except(fs, s);
    else
        compile_stmts(fs, &s->u.try_.body);
    int end = here(fs);
    pop_fblock(fs);
    compile_stmts(fs, &s->u.try_.finalbody);
    int je = emit_jump(fs, OP_JMP, 0);
    add_handler(fs, start, end, here(fs), f);
    /* on the exception path the pending exception is "being handled" while
    ** the finally body runs, so one raised there gets it as __context__;
    ** a cleanup handler restores the outer handling state if it raises */
    int saved = alloc_reg(fs), e2 = alloc_reg(fs);
    emit_abc(fs, OP_ENTER_EXCEPT, f, saved, 0);
    int cleanup_start = here(fs);
    push_fblock(fs, FB_HANDLER, saved);
    compile_stmts(fs, &s->u.try_.finalbody);
    pop_fblock(fs);
    emit_abc(fs, OP_LEAVE_EXCEPT, saved, 0, 0);
    emit_abc(fs, OP_RERAISE, f, 0, 0);
    int cleanup_end = here(fs);
    add_handler(fs, cleanup_start, cleanup_end, here(fs), e2);
    emit_abc(fs, OP_LEAVE_EXCEPT, saved, 0, 0);
    emit_abc(fs, OP_RERAISE, e2, 0, 0);
    patch_here(fs, je);
    fs->depth--;
    fs->freereg = save;
}

static void compile_with_items(FuncState *fs, AstNode *s, int i)
{
    if (i == s->u.with.items.len) {
        compile_stmts(fs, &s->u.with.body);
        return;
    }
    AstNode *item = s->u.with.items.items[i];
    int save = fs->freereg;
    int a = alloc_reg(fs);
    alloc_reg(fs);
    int e = alloc_reg(fs);
    int ctx = expr_reg(fs, item->u.withitem.context);
    fs->line = item->line, fs->col = item->col;
    bool is_async = s->u.with.is_async;
    emit_abc(fs, is_async ? OP_ASYNC_WITH_ENTER : OP_WITH_ENTER, a, ctx, 0);
    if (is_async)
        emit_await(fs, a + 1, a + 1, 1);
    fs->freereg = e + 1;
    if (item->u.withitem.vars)
        assign_to(fs, item->u.withitem.vars, a + 1);
    push_fblock(fs, is_async ? FB_ASYNC_WITH : FB_WITH, a);
    int start = here(fs);
    compile_with_items(fs, s, i + 1);
    int end = here(fs);
    pop_fblock(fs);
    fs->line = item->line, fs->col = item->col;
    if (is_async) {
        emit_abc(fs, OP_ASYNC_WITH_EXIT, e, a, a);
        emit_await(fs, e, e, 2);
    } else {
        emit_abc(fs, OP_WITH_EXIT, a, 0, 0);
    }
    int je = emit_jump(fs, OP_JMP, 0);
    add_handler(fs, start, end, here(fs), e);
    /* __exit__ runs with the exception "being handled" (so one it raises
    ** gets it as __context__); a cleanup handler restores the state */
    fs->freereg = e + 1;
    int saved = alloc_reg(fs), e2 = alloc_reg(fs);
    emit_abc(fs, OP_ENTER_EXCEPT, e, saved, 0);
    int cleanup_start = here(fs);
    if (is_async) {
        emit_abc(fs, OP_ASYNC_WITH_EXIT, a, a, e);
        emit_await(fs, a, a, 2);
    } else {
        emit_abc(fs, OP_WITH_EXIT_EXC, a, e, 0);
    }
    emit_abc(fs, OP_LEAVE_EXCEPT, saved, 0, 0);
    int cleanup_end = here(fs);
    int js = emit_jump(fs, OP_JMP_IF_TRUE, a);
    emit_abc(fs, OP_RERAISE, e, 0, 0);
    add_handler(fs, cleanup_start, cleanup_end, here(fs), e2);
    emit_abc(fs, OP_LEAVE_EXCEPT, saved, 0, 0);
    emit_abc(fs, OP_RERAISE, e2, 0, 0);
    patch_here(fs, je);
    patch_here(fs, js);
    fs->freereg = save;
}

static void compile_decorated_store(FuncState *fs, AstList *decos, int decobase, int fn, const char *name)
{
    for (int i = decos->len - 1; i >= 0; i--) {
        int s2 = fs->freereg;
        int base = alloc_regs(fs, 2);
        emit_abc(fs, OP_MOVE, base, decobase + i, 0);
        emit_abc(fs, OP_MOVE, base + 1, fn, 0);
        emit_x(fs, OP_CALL, base, 1, 0, 0);
        emit_abc(fs, OP_MOVE, fn, base, 0);
        fs->freereg = s2;
    }
    store_name(fs, name, fn);
}

/* Defaults and kw-defaults of a def/lambda, set on the function in fn. */
static void set_defaults(FuncState *fs, AstParams *ps, int *dreg, int *kreg)
{
    int nd = 0, nk = 0;
    for (int i = 0; i < ps->nparams; i++)
        if (ps->params[i].default_)
            nd++;
    for (int i = ps->nparams; i < ps->nparams + ps->nkwonly; i++)
        if (ps->params[i].default_)
            nk++;
    *dreg = *kreg = -1;
    if (nd) {
        int base = alloc_regs(fs, nd);
        int j = 0;
        for (int i = 0; i < ps->nparams; i++)
            if (ps->params[i].default_)
                expr_to(fs, ps->params[i].default_, base + j++);
        *dreg = alloc_reg(fs);
        emit_abc(fs, OP_BUILD_TUPLE, *dreg, base, nd);
    }
    if (nk) {
        *kreg = alloc_reg(fs);
        emit_abc(fs, OP_BUILD_DICT, *kreg, 0, 0);
        for (int i = ps->nparams; i < ps->nparams + ps->nkwonly; i++)
            if (ps->params[i].default_) {
                int s2 = fs->freereg;
                int k = alloc_reg(fs);
                load_const(fs, OBJ_VAL(str_intern(fs->vm, ps->params[i].name, strlen(ps->params[i].name))), k);
                int v = expr_reg(fs, ps->params[i].default_);
                emit_abc(fs, OP_DICT_SET, *kreg, k, v);
                fs->freereg = s2;
            }
    }
}

static void lambda_to(FuncState *fs, AstNode *e, int target)
{
    int save = fs->freereg;
    int dreg, kreg;
    set_defaults(fs, &e->u.func.params, &dreg, &kreg);
    Scope *child = scope_child(fs->scope, e);
    if (!child) {
        error_at(fs, e, "internal error: no scope for lambda%s", "");
        return;
    }
    make_function(fs, child, e, "<lambda>", target);
    if (dreg >= 0)
        emit_abc(fs, OP_SET_DEFAULTS, target, dreg, 0);
    if (kreg >= 0)
        emit_abc(fs, OP_SET_KWDEFAULTS, target, kreg, 0);
    fs->freereg = save;
}

/* ---- annotations: a class or module body with `name: T` statements gets
** an __annotations__ dict first; each simple annotation is stored in it in
** order. A def's annotations become its __annotations__. */

static bool has_annotations(AstList *l)
{
    for (int i = 0; i < l->len; i++) {
        AstNode *s = l->items[i];
        switch (s->kind) {
        case AST_ANNASSIGN: if (s->u.annassign.simple) return true; break;
        case AST_IF: if (has_annotations(&s->u.if_.body) || has_annotations(&s->u.if_.orelse)) return true; break;
        case AST_WHILE: if (has_annotations(&s->u.while_.body) || has_annotations(&s->u.while_.orelse)) return true; break;
        case AST_FOR: if (has_annotations(&s->u.for_.body) || has_annotations(&s->u.for_.orelse)) return true; break;
        case AST_WITH: if (has_annotations(&s->u.with.body)) return true; break;
        case AST_TRY:
            if (has_annotations(&s->u.try_.body) || has_annotations(&s->u.try_.orelse) ||
                has_annotations(&s->u.try_.finalbody))
                return true;
            for (int h = 0; h < s->u.try_.handlers.len; h++)
                if (has_annotations(&s->u.try_.handlers.items[h]->u.handler.body)) return true;
            break;
        default: break;
        }
    }
    return false;
}

/* A class body starting with a string literal: that is its __doc__. */
static void set_class_doc(FuncState *fs, AstList *body)
{
    AstNode *s = body->len ? body->items[0] : NULL;
    if (!s || s->kind != AST_EXPR || !s->u.expr.value || s->u.expr.value->kind != AST_STR)
        return;
    int save = fs->freereg;
    int r = alloc_reg(fs);
    load_const(fs, OBJ_VAL(str_new(fs->vm, s->u.expr.value->u.str.s, s->u.expr.value->u.str.len)), r);
    store_name(fs, "__doc__", r);
    fs->freereg = save;
}

static void setup_annotations(FuncState *fs, AstList *body)
{
    if (!has_annotations(body))
        return;
    int save = fs->freereg;
    int r = alloc_reg(fs);
    emit_abc(fs, OP_BUILD_DICT, r, r, 0);
    store_name(fs, "__annotations__", r);
    fs->freereg = save;
}

/* An annotation's value: evaluated, or under `from __future__ import
** annotations` its source text (PEP 563), as CPython keeps it. */
static void annotation_to(FuncState *fs, AstNode *a, int r)
{
    if (!(fs->src->obj.flags & SOURCE_FUTURE_ANNOTATIONS)) {
        expr_to(fs, a, r);
        return;
    }
    const char *p = fs->src->text, *end = p + fs->src->len;
    for (int line = 1; line < a->line && p < end; p++) /* the start of the first line */
        if (*p == '\n') line++;
    const char *q = p; /* the start of the last line: end_col counts from there */
    for (int line = a->line; line < a->end_line && q < end; q++)
        if (*q == '\n') line++;
    const char *from = p + a->col - 1, *to = q + a->end_col - 1; /* columns count from 1 */
    if (from > end) from = end;
    if (to > end || to < from) to = from;
    load_const(fs, OBJ_VAL(str_new(fs->vm, from, (size_t)(to - from))), r);
}

/* `target: annotation` in a class or module body (functions skip it). */
static void compile_annotation(FuncState *fs, AstNode *s)
{
    if (fs->scope->kind != SCOPE_CLASS && fs->scope->kind != SCOPE_MODULE)
        return;
    int save = fs->freereg;
    int r = alloc_reg(fs);
    annotation_to(fs, s->u.annassign.annotation, r);
    AstNode *t = s->u.annassign.target;
    if (s->u.annassign.simple && t->kind == AST_NAME) {
        int d = alloc_reg(fs), k = alloc_reg(fs);
        load_name(fs, "__annotations__", d);
        load_const(fs, OBJ_VAL(str_intern(fs->vm, t->u.name.id, strlen(t->u.name.id))), k);
        emit_abc(fs, OP_SETITEM, d, k, r);
    }
    fs->freereg = save;
}

static int add_param_annotation(FuncState *fs, AstParam *p, int base, int n)
{
    if (!p || !p->annotation || n >= 255)
        return n;
    load_const(fs, OBJ_VAL(str_intern(fs->vm, p->name, strlen(p->name))), base + 2 * n);
    annotation_to(fs, p->annotation, base + 2 * n + 1);
    return n + 1;
}

/* fn.__annotations__ = {param: annotation, ..., 'return': annotation} */
static void set_function_annotations(FuncState *fs, AstNode *s, int fn)
{
    AstParams *ps = &s->u.func.params;
    int total = (s->u.func.returns != NULL) + (ps->vararg && ps->vararg->annotation) +
                (ps->kwarg && ps->kwarg->annotation);
    for (int i = 0; i < ps->nparams + ps->nkwonly; i++)
        total += ps->params[i].annotation != NULL;
    if (total == 0)
        return;
    if (total > 255)
        total = 255;
    int save = fs->freereg;
    int base = alloc_regs(fs, 2 * total);
    int n = 0;
    for (int i = 0; i < ps->nparams; i++)
        n = add_param_annotation(fs, &ps->params[i], base, n);
    n = add_param_annotation(fs, ps->vararg, base, n);
    for (int i = ps->nparams; i < ps->nparams + ps->nkwonly; i++)
        n = add_param_annotation(fs, &ps->params[i], base, n);
    n = add_param_annotation(fs, ps->kwarg, base, n);
    if (s->u.func.returns && n < 255) {
        load_const(fs, OBJ_VAL(str_intern(fs->vm, "return", 6)), base + 2 * n);
        annotation_to(fs, s->u.func.returns, base + 2 * n + 1);
        n++;
    }
    int d = alloc_reg(fs);
    emit_abc(fs, OP_BUILD_DICT, d, base, n);
    emit_x(fs, OP_SET_ATTR, fn, d, 0, (uint32_t)name_const(fs, "__annotations__"));
    fs->freereg = save;
}

static void compile_def(FuncState *fs, AstNode *s)
{
    int save = fs->freereg;
    AstList *decos = &s->u.func.decorators;
    int decobase = alloc_regs(fs, decos->len);
    for (int i = 0; i < decos->len; i++)
        expr_to(fs, decos->items[i], decobase + i);
    fs->line = s->line, fs->col = s->col;
    int fn = alloc_reg(fs);
    int dreg, kreg;
    set_defaults(fs, &s->u.func.params, &dreg, &kreg);
    Scope *child = scope_child(fs->scope, s);
    if (!child) {
        error_at(fs, s, "internal error: no scope for def%s", "");
        return;
    }
    fs->line = s->line, fs->col = s->col;
    make_function(fs, child, s, s->u.func.name, fn);
    if (dreg >= 0)
        emit_abc(fs, OP_SET_DEFAULTS, fn, dreg, 0);
    if (kreg >= 0)
        emit_abc(fs, OP_SET_KWDEFAULTS, fn, kreg, 0);
    set_function_annotations(fs, s, fn);
    compile_decorated_store(fs, decos, decobase, fn, s->u.func.name);
    fs->freereg = save;
}

/* class C(*bases, **kw): the bases go as one tuple, the keywords as one dict */
static bool class_is_starry(AstNode *s)
{
    AstList *kws = &s->u.cls.keywords;
    for (int i = 0; i < kws->len; i++)
        if (!kws->items[i]->u.keyword.name)
            return true;
    return has_starred(&s->u.cls.bases) || s->u.cls.bases.len >= BUILD_CLASS_EX;
}

static void compile_class_starry(FuncState *fs, AstNode *s)
{
    int save = fs->freereg;
    AstList *decos = &s->u.cls.decorators;
    AstList *kws = &s->u.cls.keywords, *bases = &s->u.cls.bases;
    int decobase = alloc_regs(fs, decos->len);
    for (int i = 0; i < decos->len; i++)
        expr_to(fs, decos->items[i], decobase + i);
    fs->line = s->line, fs->col = s->col;
    /* fn, name, the bases tuple, the keywords dict */
    int base = alloc_regs(fs, 4);
    Scope *child = scope_child(fs->scope, s);
    if (!child) {
        error_at(fs, s, "internal error: no scope for class%s", "");
        return;
    }
    make_function(fs, child, s, s->u.cls.name, base);
    load_const(fs, OBJ_VAL(str_intern(fs->vm, s->u.cls.name, strlen(s->u.cls.name))), base + 1);
    emit_abc(fs, OP_BUILD_LIST, base + 2, 0, 0);
    for (int i = 0; i < bases->len; i++) {
        int s2 = fs->freereg;
        AstNode *a = bases->items[i];
        if (a->kind == AST_STARRED)
            emit_abc(fs, OP_LIST_EXTEND, base + 2, expr_reg(fs, a->u.starred.value), 0);
        else
            emit_abc(fs, OP_LIST_APPEND, base + 2, expr_reg(fs, a), 0);
        fs->freereg = s2;
    }
    emit_abc(fs, OP_LIST_TO_TUPLE, base + 2, base + 2, 0);
    emit_abc(fs, OP_BUILD_DICT, base + 3, 0, 0);
    for (int i = 0; i < kws->len; i++) {
        int s2 = fs->freereg;
        AstNode *k = kws->items[i];
        int v = expr_reg(fs, k->u.keyword.value);
        if (k->u.keyword.name) {
            /* merged as a one-item dict: a repeated name is a TypeError */
            int kr = alloc_reg(fs), one = alloc_reg(fs);
            load_const(fs, OBJ_VAL(str_intern(fs->vm, k->u.keyword.name, strlen(k->u.keyword.name))), kr);
            emit_abc(fs, OP_BUILD_DICT, one, 0, 0);
            emit_abc(fs, OP_DICT_SET, one, kr, v);
            v = one;
        }
        emit_abc(fs, OP_DICT_MERGE, base + 3, v, 0);
        fs->freereg = s2;
    }
    fs->line = s->line, fs->col = s->col;
    emit_abc(fs, OP_BUILD_CLASS, base, 0, BUILD_CLASS_EX);
    compile_decorated_store(fs, decos, decobase, base, s->u.cls.name);
    fs->freereg = save;
}

static void compile_class(FuncState *fs, AstNode *s)
{
    int save = fs->freereg;
    AstList *decos = &s->u.cls.decorators;
    AstList *kws = &s->u.cls.keywords;
    if (class_is_starry(s)) {
        compile_class_starry(fs, s);
        return;
    }
    int decobase = alloc_regs(fs, decos->len);
    for (int i = 0; i < decos->len; i++)
        expr_to(fs, decos->items[i], decobase + i);
    fs->line = s->line, fs->col = s->col;
    AstList *bases = &s->u.cls.bases;
    /* fn, name, bases..., then (when keywords) their names tuple and values */
    int base = alloc_regs(fs, 2 + bases->len + (kws->len ? 1 + kws->len : 0));
    Scope *child = scope_child(fs->scope, s);
    if (!child) {
        error_at(fs, s, "internal error: no scope for class%s", "");
        return;
    }
    make_function(fs, child, s, s->u.cls.name, base);
    load_const(fs, OBJ_VAL(str_intern(fs->vm, s->u.cls.name, strlen(s->u.cls.name))), base + 1);
    for (int i = 0; i < bases->len; i++) {
        if (bases->items[i]->kind == AST_STARRED)
            error_at(fs, bases->items[i], "starred base classes are not supported%s", "");
        expr_to(fs, bases->items[i], base + 2 + i);
    }
    if (kws->len) {
        Value *names = comp_xrealloc(fs->vm, NULL, (size_t)kws->len * sizeof(Value));
        for (int i = 0; i < kws->len; i++) {
            const char *kn = kws->items[i]->u.keyword.name ? kws->items[i]->u.keyword.name : "";
            names[i] = OBJ_VAL(str_intern(fs->vm, kn, strlen(kn)));
        }
        load_const(fs, OBJ_VAL(tuple_from_array(fs->vm, kws->len, names)), base + 2 + bases->len);
        free(names);
        for (int i = 0; i < kws->len; i++)
            expr_to(fs, kws->items[i]->u.keyword.value, base + 3 + bases->len + i);
    }
    fs->line = s->line, fs->col = s->col;
    emit_abc(fs, OP_BUILD_CLASS, base, kws->len, bases->len);
    compile_decorated_store(fs, decos, decobase, base, s->u.cls.name);
    fs->freereg = save;
}

static void compile_import(FuncState *fs, AstNode *s)
{
    int save = fs->freereg;
    if (s->kind == AST_IMPORT) {
        for (int i = 0; i < s->u.import.names.len; i++) {
            AstNode *al = s->u.import.names.items[i];
            const char *name = al->u.alias.name;
            int r = alloc_reg(fs);
            bool dotted = strchr(name, '.') != NULL;
            emit_x(fs, OP_IMPORT, r, al->u.alias.asname ? 0 : 1, 0, (uint32_t)name_const(fs, name));
            if (al->u.alias.asname) {
                store_name(fs, al->u.alias.asname, r);
            } else if (dotted) {
                size_t n = (size_t)(strchr(name, '.') - name);
                char buf[256];
                if (n >= sizeof buf)
                    n = sizeof buf - 1;
                memcpy(buf, name, n);
                buf[n] = 0;
                store_name(fs, buf, r);
            } else {
                store_name(fs, name, r);
            }
            fs->freereg = save;
        }
        return;
    }
    /* C: the relative import's level (from .. import x: 2); a level past
    ** 255 is beyond any package anyway */
    int level = s->u.import.level > 255 ? 255 : s->u.import.level;
    int m = alloc_reg(fs);
    emit_x(fs, OP_IMPORT, m, 0, level, (uint32_t)name_const(fs, s->u.import.module ? s->u.import.module : ""));
    for (int i = 0; i < s->u.import.names.len; i++) {
        AstNode *al = s->u.import.names.items[i];
        if (strcmp(al->u.alias.name, "*") == 0) {
            if (fs->scope->kind != SCOPE_MODULE)
                error_at(fs, s, "import * only allowed at module level%s", "");
            emit_abc(fs, OP_IMPORT_STAR, m, 0, 0);
            continue;
        }
        int r = alloc_reg(fs);
        emit_x(fs, OP_IMPORT_FROM, r, m, 0, (uint32_t)name_const(fs, al->u.alias.name));
        store_name(fs, al->u.alias.asname ? al->u.alias.asname : al->u.alias.name, r);
        fs->freereg = m + 1;
    }
    fs->freereg = save;
}

static bool in_function(FuncState *fs)
{
    return fs->scope->kind == SCOPE_FUNCTION || fs->scope->kind == SCOPE_COMPREHENSION;
}

static void compile_stmt(FuncState *fs, AstNode *s)
{
    if (out_of_stack(fs, s))
        return;
    fs->line = s->line, fs->col = s->col;
    int save = fs->freereg;
    switch (s->kind) {
    case AST_EXPR: {
        AstNode *v = s->u.expr.value;
        if (fs->mode == PARSE_INTERACTIVE && fs->scope->kind == SCOPE_MODULE) {
            int r = expr_reg(fs, v);
            fs->line = s->line, fs->col = s->col;
            emit_abc(fs, OP_PRINT_EXPR, r, 0, 0);
        } else if (!is_const_node(v)) {
            int r = alloc_reg(fs);
            expr_to(fs, v, r);
        }
        break;
    }
    case AST_ASSIGN: {
        AstList *ts = &s->u.assign.targets;
        AstNode *t0 = ts->items[0];
        if (ts->len == 1 && t0->kind == AST_NAME) {
            Symbol *sy = lookup(fs, t0->u.name.id);
            AstKind vk = s->u.assign.value->kind;
            bool direct = sy && sy->kind == SYM_LOCAL &&
                          (vk == AST_BINOP || vk == AST_CALL || vk == AST_ATTRIBUTE || vk == AST_SUBSCRIPT ||
                           vk == AST_INT || vk == AST_FLOAT || vk == AST_STR || vk == AST_LIST || vk == AST_DICT ||
                           vk == AST_NONE || vk == AST_TRUE || vk == AST_FALSE || vk == AST_COMPARE ||
                           vk == AST_UNARYOP || vk == AST_FSTRING);
            if (direct && vk == AST_COMPARE && s->u.assign.value->u.compare.comparators.len > 1)
                direct = false;
            if (direct) {
                expr_to(fs, s->u.assign.value, sy->index);
                store_name(fs, t0->u.name.id, sy->index);
                break;
            }
        }
        if (ts->len == 1 && (t0->kind == AST_TUPLE || t0->kind == AST_LIST) &&
            (s->u.assign.value->kind == AST_TUPLE || s->u.assign.value->kind == AST_LIST) &&
            !has_starred(&t0->u.seq.elts) && !has_starred(&s->u.assign.value->u.seq.elts) &&
            t0->u.seq.elts.len == s->u.assign.value->u.seq.elts.len && t0->u.seq.elts.len <= 16) {
            /* a, b = b, a: evaluate all, then assign, without a tuple */
            int n = t0->u.seq.elts.len;
            int base = alloc_regs(fs, n);
            for (int i = 0; i < n; i++)
                expr_to(fs, s->u.assign.value->u.seq.elts.items[i], base + i);
            for (int i = 0; i < n; i++)
                assign_to(fs, t0->u.seq.elts.items[i], base + i);
            break;
        }
        int r = alloc_reg(fs);
        expr_to(fs, s->u.assign.value, r);
        for (int i = 0; i < ts->len; i++)
            assign_to(fs, ts->items[i], r);
        break;
    }
    case AST_AUGASSIGN: {
        AstNode *t = s->u.augassign.target;
        BinOp op = s->u.augassign.op;
        if (t->kind == AST_NAME) {
            Symbol *sy = lookup(fs, t->u.name.id);
            int r;
            if (sy && sy->kind == SYM_LOCAL) {
                r = local_reg(fs, t->u.name.id);
            } else {
                r = alloc_reg(fs);
                load_name(fs, t->u.name.id, r);
            }
            int v = expr_reg(fs, s->u.augassign.value);
            fs->line = s->line, fs->col = s->col;
            emit_x(fs, OP_INPLACE, r, r, v, (uint32_t)op);
            store_name(fs, t->u.name.id, r);
        } else if (t->kind == AST_ATTRIBUTE) {
            int obj = expr_reg(fs, t->u.attr.value);
            int cur = alloc_reg(fs);
            uint32_t k = (uint32_t)name_const(fs, t->u.attr.attr);
            emit_x(fs, OP_GET_ATTR, cur, obj, 0, k);
            int v = expr_reg(fs, s->u.augassign.value);
            fs->line = s->line, fs->col = s->col;
            emit_x(fs, OP_INPLACE, cur, cur, v, (uint32_t)op);
            emit_x(fs, OP_SET_ATTR, obj, cur, 0, k);
        } else if (t->kind == AST_SUBSCRIPT) {
            int obj = expr_reg(fs, t->u.subscript.value);
            int idx = expr_reg(fs, t->u.subscript.index);
            int cur = alloc_reg(fs);
            emit_abc(fs, OP_GETITEM, cur, obj, idx);
            int v = expr_reg(fs, s->u.augassign.value);
            fs->line = s->line, fs->col = s->col;
            emit_x(fs, OP_INPLACE, cur, cur, v, (uint32_t)op);
            emit_abc(fs, OP_SETITEM, obj, idx, cur);
        } else {
            error_at(fs, t, "'%s' is an illegal expression for augmented assignment", ast_kind_name(t->kind));
        }
        break;
    }
    case AST_ANNASSIGN:
        if (s->u.annassign.value) {
            int r = alloc_reg(fs);
            expr_to(fs, s->u.annassign.value, r);
            assign_to(fs, s->u.annassign.target, r);
        }
        compile_annotation(fs, s);
        break;
    case AST_IF: compile_if(fs, s); break;
    case AST_WHILE: compile_while(fs, s); break;
    case AST_FOR:
        if (s->u.for_.is_async && !in_async(fs))
            error_at_stmt(fs, s, "'async for' outside async function");
        else
            compile_for(fs, s);
        break;
    case AST_BREAK: case AST_CONTINUE: {
        int li = innermost_loop(fs);
        if (li < 0) {
            error_at(fs, s, s->kind == AST_BREAK ? "'break' outside loop%s" : "'continue' not properly in loop%s", "");
            break;
        }
        unwind_fblocks(fs, li);
        FBlock *b = &fs->fblocks[li];
        if (s->kind == AST_CONTINUE) {
            emit_jump_back(fs, b->continue_target);
        } else {
            if (b->nbreaks == b->capbreaks) {
                b->capbreaks = b->capbreaks ? b->capbreaks * 2 : 4;
                b->breaks = comp_xrealloc(fs->vm, b->breaks, (size_t)b->capbreaks * sizeof(int));
            }
            b->breaks[b->nbreaks++] = emit_jump(fs, OP_JMP, 0);
        }
        break;
    }
    case AST_PASS: break;
    case AST_RETURN: {
        if (!in_function(fs)) {
            error_at(fs, s, "'return' outside function%s", "");
            break;
        }
        if (s->u.ret.value && is_async_gen(fs)) {
            error_at(fs, s, "'return' with value in async generator%s", "");
            break;
        }
        if (!s->u.ret.value && fs->nfblocks == 0) {
            emit_abc(fs, OP_RETURN_NONE, 0, 0, 0);
            break;
        }
        int r;
        if (s->u.ret.value) {
            r = fs->nfblocks ? alloc_reg(fs) : expr_reg(fs, s->u.ret.value);
            if (fs->nfblocks)
                expr_to(fs, s->u.ret.value, r);
        } else {
            r = alloc_reg(fs);
            emit_abc(fs, OP_LOADNONE, r, 0, 0);
        }
        unwind_fblocks(fs, -1);
        fs->line = s->line, fs->col = s->col;
        emit_abc(fs, OP_RETURN, r, 0, 0);
        break;
    }
    case AST_FUNCTIONDEF: compile_def(fs, s); break;
    case AST_CLASSDEF: compile_class(fs, s); break;
    case AST_TRY: compile_try(fs, s); break;
    case AST_RAISE: {
        if (!s->u.raise.exc) {
            emit_abc(fs, OP_RAISE_CURRENT, 0, 0, 0);
            break;
        }
        int r = expr_reg(fs, s->u.raise.exc);
        int c = s->u.raise.cause ? expr_reg(fs, s->u.raise.cause) : 0;
        fs->line = s->line, fs->col = s->col;
        emit_abc(fs, OP_RAISE, r, s->u.raise.cause ? 1 : 0, c);
        break;
    }
    case AST_WITH:
        if (s->u.with.is_async && !in_async(fs)) {
            error_at_stmt(fs, s, "'async with' outside async function");
            break;
        }
        fs->depth++;
        compile_with_items(fs, s, 0);
        fs->depth--;
        break;
    case AST_ASSERT: {
        int t = expr_reg(fs, s->u.assert_.test);
        int jt = emit_jump(fs, OP_JMP_IF_TRUE, t);
        if (s->u.assert_.msg) {
            int m = expr_reg(fs, s->u.assert_.msg);
            fs->line = s->line, fs->col = s->col;
            emit_abc(fs, OP_ASSERT_FAIL, m, 1, 0);
        } else {
            emit_abc(fs, OP_ASSERT_FAIL, 0, 0, 0);
        }
        patch_here(fs, jt);
        break;
    }
    case AST_DELETE:
        for (int i = 0; i < s->u.del.targets.len; i++)
            delete_target(fs, s->u.del.targets.items[i]);
        break;
    case AST_GLOBAL: case AST_NONLOCAL: break;
    case AST_IMPORT: case AST_IMPORTFROM: compile_import(fs, s); break;
    case AST_MATCH: comp_match(fs, s); break;
    default: error_at(fs, s, "unsupported statement (%s)", ast_kind_name(s->kind)); break;
    }
    fs->freereg = save;
}

static void compile_stmts(FuncState *fs, AstList *l)
{
    for (int i = 0; i < l->len && !*fs->failed; i++)
        compile_stmt(fs, l->items[i]);
}

/* ------------------------------------------------------------------ functions */

/* Collects names deleted in a function body (not in nested scopes), so
** reads of them always check for unbound. */
static void scan_deletes(FuncState *fs, AstNode *n);

static void scan_list(FuncState *fs, AstList *l)
{
    for (int i = 0; i < l->len; i++)
        scan_deletes(fs, l->items[i]);
}

static void add_deleted(FuncState *fs, const char *name)
{
    fs->deleted = comp_xrealloc(fs->vm, fs->deleted, (size_t)(fs->ndeleted + 1) * sizeof(char *));
    fs->deleted[fs->ndeleted++] = name;
}

static void scan_del_target(FuncState *fs, AstNode *t)
{
    if (t->kind == AST_NAME)
        add_deleted(fs, t->u.name.id);
    else if (t->kind == AST_TUPLE || t->kind == AST_LIST)
        for (int i = 0; i < t->u.seq.elts.len; i++)
            scan_del_target(fs, t->u.seq.elts.items[i]);
}

static void scan_deletes(FuncState *fs, AstNode *n)
{
    if (!n)
        return;
    switch (n->kind) {
    case AST_DELETE:
        for (int i = 0; i < n->u.del.targets.len; i++)
            scan_del_target(fs, n->u.del.targets.items[i]);
        break;
    case AST_IF: scan_list(fs, &n->u.if_.body); scan_list(fs, &n->u.if_.orelse); break;
    case AST_WHILE: scan_list(fs, &n->u.while_.body); scan_list(fs, &n->u.while_.orelse); break;
    case AST_FOR: scan_list(fs, &n->u.for_.body); scan_list(fs, &n->u.for_.orelse); break;
    case AST_WITH: scan_list(fs, &n->u.with.body); break;
    case AST_MATCH:
        for (int i = 0; i < n->u.match.cases.len; i++)
            scan_list(fs, &n->u.match.cases.items[i]->u.match_case.body);
        break;
    case AST_TRY:
        scan_list(fs, &n->u.try_.body);
        scan_list(fs, &n->u.try_.orelse);
        scan_list(fs, &n->u.try_.finalbody);
        for (int i = 0; i < n->u.try_.handlers.len; i++) {
            AstNode *h = n->u.try_.handlers.items[i];
            if (h->u.handler.name)
                add_deleted(fs, h->u.handler.name);
            scan_list(fs, &h->u.handler.body);
        }
        break;
    default: break;
    }
}

static Str *make_qualname(FuncState *parent, const char *name)
{
    VM *vm = parent->vm; /* callers always pass the enclosing FuncState */
    if (parent->scope->kind == SCOPE_MODULE)
        return str_cstr(vm, name);
    if (parent->scope->kind == SCOPE_CLASS)
        return str_printf(vm, "%s.%s", parent->qualname->chars, name);
    return str_printf(vm, "%s.<locals>.%s", parent->qualname->chars, name);
}

static void *copy_out(FuncState *fs, const void *src, size_t n, size_t elem)
{
    if (n == 0)
        return NULL;
    void *p = gc_malloc(fs->vm, n * elem);
    memcpy(p, src, n * elem);
    return p;
}

/* Fills a Proto from a finished FuncState. */
static Proto *finish_proto(FuncState *fs, Scope *scope, AstNode *node, Str *name, int flags, FuncState *parent)
{
    VM *vm = fs->vm;
    Proto *p = proto_new(vm);
    p->name = name;
    p->qualname = fs->qualname;
    p->source = fs->src;
    p->ast = node;
    p->ncode = fs->ncode;
    p->code = copy_out(fs, fs->code, (size_t)fs->ncode, sizeof(uint32_t));
    p->lines = copy_out(fs, fs->lines, (size_t)fs->ncode, sizeof(int32_t));
    p->cols = copy_out(fs, fs->cols, (size_t)fs->ncode, sizeof(int32_t));
    p->nconsts = fs->nconsts;
    p->consts = copy_out(fs, fs->consts, (size_t)fs->nconsts, sizeof(Value));
    p->nregs = fs->maxreg > 0 ? fs->maxreg : 1;
    if (scope->nlocals > REG_LOCALS && p->nregs < scope->nlocals + WIDE_SHIFT)
        p->nregs = scope->nlocals + WIDE_SHIFT;
    p->nparams = scope->kind == SCOPE_FUNCTION || scope->kind == SCOPE_COMPREHENSION ? scope->nparams : 0;
    p->nkwonly = scope->kind == SCOPE_FUNCTION ? scope->nkwonly : 0;
    p->flags = flags;
    p->nlocals = scope->nlocals;
    if (scope->nlocals) {
        p->varnames = gc_malloc(vm, (size_t)scope->nlocals * sizeof(Str *));
        for (int i = 0; i < scope->nlocals; i++)
            p->varnames[i] = str_intern(vm, scope->varnames[i], strlen(scope->varnames[i]));
    }
    p->ncells = scope->ncells;
    p->cell_regs = copy_out(fs, scope->cells, (size_t)scope->ncells, sizeof(int32_t));
    p->nfree = scope->nfree;
    if (scope->nfree) {
        p->freevars = gc_malloc(vm, (size_t)scope->nfree * sizeof(FreeVarDesc));
        p->freenames = gc_malloc(vm, (size_t)scope->nfree * sizeof(Str *));
        for (int i = 0; i < scope->nfree; i++) {
            const char *nm = scope->freevars[i];
            p->freenames[i] = str_intern(vm, nm, strlen(nm));
            FreeVarDesc d = {0, 0};
            Scope *ps = parent ? parent->scope : NULL;
            Symbol *sy = ps ? scope_lookup(ps, nm) : NULL;
            if (ps && ps->kind == SCOPE_CLASS && strcmp(nm, "__class__") == 0 && ps->class_cell) {
                d.from_parent_free = 0;
                d.index = 0;
            } else if (sy && sy->kind == SYM_CELL) {
                d.from_parent_free = 0;
                d.index = (uint16_t)sy->index;
            } else if (sy && sy->free_index >= 0) {
                d.from_parent_free = 1;
                d.index = (uint16_t)sy->free_index;
            } else if (sy && sy->kind == SYM_FREE) {
                d.from_parent_free = 1;
                d.index = (uint16_t)sy->index;
            } else {
                error_at(fs, node, "internal error: cannot resolve free variable '%s'", nm);
            }
            p->freevars[i] = d;
        }
    }
    p->nhandlers = fs->nhandlers;
    p->handlers = copy_out(fs, fs->handlers, (size_t)fs->nhandlers, sizeof(Handler));
    p->firstline = node ? node->line : 1;
    return p;
}

static void fs_release(FuncState *fs)
{
    free(fs->code);
    free(fs->lines);
    free(fs->cols);
    free(fs->consts);
    free(fs->const_slots);
    free(fs->handlers);
    for (int i = 0; i < fs->nfblocks; i++)
        free(fs->fblocks[i].breaks);
    free(fs->fblocks);
    free(fs->safe);
    free(fs->deleted);
}

static void fs_init(FuncState *fs, FuncState *parent, VM *vm, Scope *scope, Source *src, SyntaxErr *err,
                    bool *failed, ParseMode mode)
{
    memset(fs, 0, sizeof *fs);
    fs->vm = vm;
    fs->parent = parent;
    fs->scope = scope;
    fs->src = src;
    fs->err = err;
    fs->failed = failed;
    fs->mode = mode;
    fs->freereg = fs->maxreg = scope->nlocals < REG_LOCALS ? scope->nlocals : REG_LOCALS;
    fs->safe = comp_xrealloc(vm, NULL, (size_t)(scope->nlocals + 1) * sizeof(bool));
    memset(fs->safe, 0, (size_t)(scope->nlocals + 1));
}

static void emit_cells(FuncState *fs)
{
    for (int i = 0; i < fs->scope->ncells; i++)
        emit_abc(fs, OP_MAKE_CELL, fs->scope->cells[i], 0, 0);
}

/* Locals past the register window become SYM_WIDE; parameters among them
** arrive in registers (call.c binds argument i to register i) and are moved
** to their wide registers first thing. */
static void widen_locals(FuncState *fs, AstNode *node)
{
    Scope *scope = fs->scope;
    if (scope->nfree > 0xff) /* LOAD_FREE/STORE_FREE name them in 8 bits */
        error_at(fs, node, "too many free variables in function (limit %s)", "255");
    if (scope->nlocals <= REG_LOCALS)
        return;
    int nparams = 0;
    if (scope->kind == SCOPE_FUNCTION) {
        AstParams *ps = &node->u.func.params;
        nparams = ps->nparams + ps->nkwonly + (ps->vararg ? 1 : 0) + (ps->kwarg ? 1 : 0);
    } else if (scope->kind == SCOPE_COMPREHENSION) {
        nparams = 1;
    }
    /* a parameter's incoming register must fit the A field of its STORE_WIDE */
    if (nparams > 256) {
        error_at(fs, node, "too many parameters in function (limit %s)", "256");
        return;
    }
    if (scope->nlocals + WIDE_SHIFT > MAX_WIDE_REG) {
        error_at(fs, node, "too many local variables in function (limit %s)", STR(MAX_WIDE_REG - WIDE_SHIFT));
        return;
    }
    for (int i = 0; i < scope->nsyms; i++) {
        Symbol *sy = &scope->syms[i];
        if ((sy->kind != SYM_LOCAL && sy->kind != SYM_CELL) || sy->index < REG_LOCALS)
            continue;
        if (sy->kind == SYM_CELL) {
            error_at(fs, node, "too many parameters and variables used by inner functions (limit " STR(REG_LOCALS) "): '%s'", sy->name);
            return;
        }
        sy->kind = SYM_WIDE;
        if (sy->index < nparams)
            emit_abx(fs, OP_STORE_WIDE, sy->index, sy->index + WIDE_SHIFT);
    }
}

static Proto *compile_function(FuncState *parent, Scope *scope, AstNode *node, const char *name)
{
    FuncState fs;
    fs_init(&fs, parent, parent->vm, scope, parent->src, parent->err, parent->failed, parent->mode);
    fs.line = node->line, fs.col = node->col;
    widen_locals(&fs, node);
    int flags = 0;
    Str *nm;
    if (scope->kind == SCOPE_CLASS) {
        fs.qualname = make_qualname(parent, name);
        nm = str_cstr(fs.vm, name);
        flags = PROTO_CLASS;
        emit_cells(&fs);
        set_class_doc(&fs, &node->u.cls.body);
        setup_annotations(&fs, &node->u.cls.body);
        compile_stmts(&fs, &node->u.cls.body);
        if (scope->class_cell)
            emit_abc(&fs, OP_RETURN, 0, 0, 0);
        else
            emit_abc(&fs, OP_RETURN_NONE, 0, 0, 0);
    } else if (scope->kind == SCOPE_COMPREHENSION) {
        fs.qualname = make_qualname(parent, name);
        nm = str_cstr(fs.vm, name);
        fs.safe[0] = true;
        if (scope->generator)
            flags |= PROTO_GENERATOR;
        if (scope->coroutine)
            flags |= PROTO_GENERATOR | (scope->generator ? PROTO_ASYNC_GEN : PROTO_COROUTINE);
        emit_cells(&fs);
        AstList *gens = &node->u.comp.generators;
        int res = -1;
        if (node->kind != AST_GENEXP) {
            res = alloc_reg(&fs);
            Opcode op = node->kind == AST_LISTCOMP ? OP_BUILD_LIST : node->kind == AST_SETCOMP ? OP_BUILD_SET : OP_BUILD_DICT;
            emit_abc(&fs, op, res, 0, 0);
        }
        int *tops = comp_xrealloc(fs.vm, NULL, (size_t)gens->len * sizeof(int));
        int *exits = comp_xrealloc(fs.vm, NULL, (size_t)gens->len * sizeof(int));
        fs.depth = 1;
        for (int i = 0; i < gens->len; i++) {
            AstNode *g = gens->items[i];
            int it = alloc_reg(&fs);
            alloc_reg(&fs);
            fs.line = g->line, fs.col = g->col;
            if (i == 0) {
                emit_abc(&fs, OP_MOVE, it, 0, 0);
            } else {
                expr_to(&fs, g->u.compfor.iter, it);
                emit_abc(&fs, g->u.compfor.is_async ? OP_GET_AITER : OP_GET_ITER, it, it, 0);
            }
            tops[i] = here(&fs);
            exits[i] = g->u.compfor.is_async ? async_for_next(&fs, it) : emit_jump(&fs, OP_FOR_ITER, it);
            assign_to(&fs, g->u.compfor.target, it + 1);
            for (int j = 0; j < g->u.compfor.ifs.len; j++) {
                int s2 = fs.freereg;
                int t = expr_reg(&fs, g->u.compfor.ifs.items[j]);
                int jf = emit_jump(&fs, OP_JMP_IF_FALSE, t);
                patch_to(&fs, jf, tops[i]);
                fs.freereg = s2;
            }
        }
        int s2 = fs.freereg;
        fs.line = node->line, fs.col = node->col;
        if (node->kind == AST_GENEXP) {
            int v = expr_reg(&fs, node->u.comp.elt);
            int d = alloc_reg(&fs);
            if (scope->coroutine) {
                emit_abc(&fs, OP_ASYNC_GEN_WRAP, d, v, 0);
                v = d;
            }
            emit_abc(&fs, OP_YIELD, d, v, 0);
        } else if (node->kind == AST_DICTCOMP) {
            int k = expr_reg(&fs, node->u.comp.elt);
            int v = expr_reg(&fs, node->u.comp.value);
            emit_abc(&fs, OP_DICT_SET, res, k, v);
        } else {
            int v = expr_reg(&fs, node->u.comp.elt);
            emit_abc(&fs, node->kind == AST_LISTCOMP ? OP_LIST_APPEND : OP_SET_ADD, res, v, 0);
        }
        fs.freereg = s2;
        for (int i = gens->len - 1; i >= 0; i--) {
            emit_jump_back(&fs, tops[i]);
            patch_here(&fs, exits[i]);
        }
        free(tops);
        free(exits);
        if (res >= 0)
            emit_abc(&fs, OP_RETURN, res, 0, 0);
        else
            emit_abc(&fs, OP_RETURN_NONE, 0, 0, 0);
    } else {
        fs.qualname = make_qualname(parent, name);
        nm = str_cstr(fs.vm, name);
        AstParams *ps = &node->u.func.params;
        int np = ps->nparams + ps->nkwonly + (ps->vararg ? 1 : 0) + (ps->kwarg ? 1 : 0);
        for (int i = 0; i < np && i < scope->nlocals; i++)
            fs.safe[i] = true;
        if (scope->varargs)
            flags |= PROTO_VARARGS;
        if (scope->varkw)
            flags |= PROTO_VARKW;
        if (scope->generator)
            flags |= PROTO_GENERATOR;
        if (scope->coroutine)
            flags |= PROTO_GENERATOR | (scope->generator ? PROTO_ASYNC_GEN : PROTO_COROUTINE);
        if (node->kind == AST_LAMBDA || node->u.func.is_lambda)
            flags |= PROTO_LAMBDA;
        scan_list(&fs, &node->u.func.body);
        for (int i = 0; i < fs.ndeleted; i++) {
            Symbol *sy = lookup(&fs, fs.deleted[i]);
            if (sy && sy->kind == SYM_LOCAL)
                fs.safe[sy->index] = false;
        }
        emit_cells(&fs);
        compile_stmts(&fs, &node->u.func.body);
        emit_abc(&fs, OP_RETURN_NONE, 0, 0, 0);
    }
    Proto *p = *fs.failed ? NULL : finish_proto(&fs, scope, node, nm, flags, parent);
    fs_release(&fs);
    return p;
}

/* ------------------------------------------------------------------ services for compile_match.c */

VM *comp_vm(FuncState *fs) { return fs->vm; }
bool comp_failed(FuncState *fs) { return *fs->failed; }
void comp_error(FuncState *fs, AstNode *at, const char *fmt, const char *arg) { error_at(fs, at, fmt, arg); }
void comp_set_pos(FuncState *fs, AstNode *at) { fs->line = at->line, fs->col = at->col; }
int comp_emit_abc(FuncState *fs, Opcode op, int a, int b, int c) { return emit_abc(fs, op, a, b, c); }
int comp_emit_x(FuncState *fs, Opcode op, int a, int b, int c, uint32_t ext) { return emit_x(fs, op, a, b, c, ext); }
int comp_emit_jump(FuncState *fs, Opcode op, int a) { return emit_jump(fs, op, a); }
void comp_patch_here(FuncState *fs, int pc) { patch_here(fs, pc); }
int comp_alloc_regs(FuncState *fs, int n) { return alloc_regs(fs, n); }
int comp_freereg(FuncState *fs) { return fs->freereg; }
void comp_set_freereg(FuncState *fs, int r) { fs->freereg = r; }
void comp_load_const(FuncState *fs, Value v, int target) { load_const(fs, v, target); }
void comp_expr_to(FuncState *fs, AstNode *e, int target) { expr_to(fs, e, target); }
void comp_store_name(FuncState *fs, const char *name, int src) { store_name(fs, name, src); }
void comp_nest(FuncState *fs, int delta) { fs->depth += delta; }

void comp_nested_stmts(FuncState *fs, AstList *body)
{
    fs->depth++;
    compile_stmts(fs, body);
    fs->depth--;
}

Proto *comp_module(VM *vm, Source *src, AstNode *module, ParseMode mode, SyntaxErr *err)
{
    memset(err, 0, sizeof *err);
    int future = future_features(module, err);
    if (future < 0)
        return NULL;
    if (module->kind == AST_MODULE)
        module->u.module.future_flags = future;
    if (future & FUTURE_ANNOTATIONS)
        src->obj.flags |= SOURCE_FUTURE_ANNOTATIONS;
    Scope *root = scope_build(vm, module, err);
    if (!root)
        return NULL;
    bool failed = false;
    FuncState fs;
    fs_init(&fs, NULL, vm, root, src, err, &failed, mode);
    fs.qualname = str_cstr(vm, "<module>");
    fs.line = 1;
    AstList *body = &module->u.module.body;
    if (mode == PARSE_EVAL && body->len == 1 && body->items[0]->kind == AST_EXPR) {
        /* eval(): the module body returns the expression's value */
        int r = alloc_reg(&fs);
        expr_to(&fs, body->items[0]->u.expr.value, r);
        emit_abc(&fs, OP_RETURN, r, 0, 0);
    } else {
        setup_annotations(&fs, body);
        compile_stmts(&fs, body);
    }
    emit_abc(&fs, OP_RETURN_NONE, 0, 0, 0);
    Proto *p = failed ? NULL : finish_proto(&fs, root, module, str_cstr(vm, "<module>"), PROTO_MODULE, NULL);
    fs_release(&fs);
    scope_free(root);
    return p;
}
