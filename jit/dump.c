/*
** dump.c — jf_dump: a readable listing of a typed function for the cuda
** module's inspect_types(): the signature, every variable with its type,
** then each source line followed by the types of the nodes on it.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit_arena.h"

typedef struct Buf {
    char *data;
    size_t len, cap;
    bool oom;
} Buf;

static void bput(Buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->oom = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void bprintf(Buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void bprintf(Buf *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    bput(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static int by_position(const void *a, const void *b) {
    const AstNode *x = ((const JInfoSlot *)a)->key, *y = ((const JInfoSlot *)b)->key;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    /* outer nodes (ending later) first */
    if (x->end_line != y->end_line) return x->end_line > y->end_line ? -1 : 1;
    if (x->end_col != y->end_col) return x->end_col > y->end_col ? -1 : 1;
    return 0;
}

static const char *const builtin_names[JB__COUNT] = {
    [JB_CONST] = "const", [JB_DEVICE_CALL] = "device call",
    [JB_THREADIDX_X] = "threadIdx.x", [JB_THREADIDX_Y] = "threadIdx.y", [JB_THREADIDX_Z] = "threadIdx.z",
    [JB_BLOCKIDX_X] = "blockIdx.x", [JB_BLOCKIDX_Y] = "blockIdx.y", [JB_BLOCKIDX_Z] = "blockIdx.z",
    [JB_BLOCKDIM_X] = "blockDim.x", [JB_BLOCKDIM_Y] = "blockDim.y", [JB_BLOCKDIM_Z] = "blockDim.z",
    [JB_GRIDDIM_X] = "gridDim.x", [JB_GRIDDIM_Y] = "gridDim.y", [JB_GRIDDIM_Z] = "gridDim.z",
    [JB_LANEID] = "laneid", [JB_WARPSIZE] = "warpsize", [JB_GRID] = "grid", [JB_GRIDSIZE] = "gridsize",
    [JB_SYNCTHREADS] = "syncthreads", [JB_SHARED_ARRAY] = "shared.array", [JB_LOCAL_ARRAY] = "local.array",
    [JB_ATOMIC_ADD] = "atomic.add", [JB_ATOMIC_SUB] = "atomic.sub", [JB_ATOMIC_MAX] = "atomic.max",
    [JB_ATOMIC_MIN] = "atomic.min", [JB_ATOMIC_EXCH] = "atomic.exch", [JB_ATOMIC_CAS] = "atomic.cas",
    [JB_SYNCTHREADS_COUNT] = "syncthreads_count", [JB_SYNCTHREADS_AND] = "syncthreads_and",
    [JB_SYNCTHREADS_OR] = "syncthreads_or", [JB_THREADFENCE] = "threadfence",
    [JB_THREADFENCE_BLOCK] = "threadfence_block", [JB_THREADFENCE_SYSTEM] = "threadfence_system",
    [JB_ATOMIC_AND] = "atomic.and_", [JB_ATOMIC_OR] = "atomic.or_", [JB_ATOMIC_XOR] = "atomic.xor",
    [JB_ATOMIC_INC] = "atomic.inc", [JB_ATOMIC_DEC] = "atomic.dec", [JB_ATOMIC_CAS1] = "atomic.compare_and_swap",
    [JB_SHFL_IDX] = "shfl_sync", [JB_SHFL_UP] = "shfl_up_sync", [JB_SHFL_DOWN] = "shfl_down_sync",
    [JB_SHFL_XOR] = "shfl_xor_sync", [JB_VOTE_ALL] = "all_sync", [JB_VOTE_ANY] = "any_sync",
    [JB_VOTE_EQ] = "eq_sync", [JB_BALLOT] = "ballot_sync", [JB_ACTIVEMASK] = "activemask",
    [JB_SYNCWARP] = "syncwarp", [JB_PRINT] = "print", [JB_CONST_ARRAY] = "const.array_like",
    [JB_LAUNCH] = "launch",
    [JB_RANGE] = "range", [JB_LEN] = "len", [JB_MIN] = "min", [JB_MAX] = "max", [JB_ABS] = "abs",
    [JB_ROUND] = "round", [JB_INT] = "int", [JB_FLOAT] = "float", [JB_BOOL] = "bool", [JB_CAST] = "cast",
    [JB_MATH_SQRT] = "sqrt", [JB_MATH_EXP] = "exp", [JB_MATH_LOG] = "log", [JB_MATH_LOG2] = "log2",
    [JB_MATH_LOG10] = "log10", [JB_MATH_POW] = "pow", [JB_MATH_SIN] = "sin", [JB_MATH_COS] = "cos",
    [JB_MATH_TAN] = "tan", [JB_MATH_ASIN] = "asin", [JB_MATH_ACOS] = "acos", [JB_MATH_ATAN] = "atan",
    [JB_MATH_ATAN2] = "atan2", [JB_MATH_SINH] = "sinh", [JB_MATH_COSH] = "cosh", [JB_MATH_TANH] = "tanh",
    [JB_MATH_FLOOR] = "floor", [JB_MATH_CEIL] = "ceil", [JB_MATH_FABS] = "fabs", [JB_MATH_ERF] = "erf",
    [JB_MATH_ERFC] = "erfc", [JB_MATH_GAMMA] = "gamma", [JB_MATH_LGAMMA] = "lgamma",
    [JB_MATH_ISNAN] = "isnan", [JB_MATH_ISINF] = "isinf", [JB_MATH_ISFINITE] = "isfinite",
    [JB_ARRAY_SHAPE] = "shape", [JB_ARRAY_SIZE] = "size", [JB_ARRAY_NDIM] = "ndim",
};

/* The source text of line `line` (1-based), or NULL. */
static const char *line_start(const char *text, int line, size_t *len) {
    const char *s = text;
    for (int l = 1; l < line && s; l++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    if (!s || !*s) return NULL;
    const char *e = strchr(s, '\n');
    *len = e ? (size_t)(e - s) : strlen(s);
    return s;
}

char *jf_dump(const JFunc *f) {
    if (!f) return NULL;
    Buf b = {0};
    char tn[200], tn2[200];
    bprintf(&b, "%s %s (", f->is_kernel ? "kernel" : "device function", f->name);
    for (int i = 0; i < f->nargs; i++) bprintf(&b, "%s%s", i ? ", " : "", jt_name(f->argtypes[i], tn, sizeof tn));
    bprintf(&b, ") -> %s  [%s]%s\n", jt_name(f->ret, tn, sizeof tn), f->mangled,
            f->uses_barrier ? " uses barrier" : "");
    bprintf(&b, "variables:\n");
    for (int i = 0; i < f->nvars; i++) {
        bprintf(&b, "    %s: %s", f->vars[i].name, jt_name(f->vars[i].type, tn, sizeof tn));
        if (f->vars[i].param_index >= 0) bprintf(&b, "  (argument %d)", f->vars[i].param_index);
        bput(&b, "\n", 1);
    }
    for (int i = 0; i < f->ncallees; i++) bprintf(&b, "calls %s\n", f->callees[i]->mangled);
    for (int i = 0; i < f->nlaunches; i++) bprintf(&b, "launches %s\n", f->launches[i]->mangled);
    /* collect the infos, ordered by position */
    const struct JInfoMap *m = f->infos;
    uint32_t n = 0;
    JInfoSlot *slots = m && m->count ? malloc(m->count * sizeof *slots) : NULL;
    if (slots) {
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->slots[i].key) slots[n++] = m->slots[i];
        qsort(slots, n, sizeof *slots, by_position);
    }
    const char *text = f->fn && f->fn->proto && f->fn->proto->source ? f->fn->proto->source->text : NULL;
    int first = f->def ? f->def->line : 0, last = f->def ? f->def->end_line : 0;
    uint32_t k = 0;
    for (int line = first; text && line <= last; line++) {
        size_t len = 0;
        const char *s = line_start(text, line, &len);
        if (!s) break;
        bprintf(&b, "%5d | ", line);
        bput(&b, s, len);
        bput(&b, "\n", 1);
        while (k < n && slots[k].key->line < line) k++;
        for (; k < n && slots[k].key->line == line; k++) {
            const AstNode *nd = slots[k].key;
            const JInfo *in = slots[k].info;
            bprintf(&b, "      |   col %d %s: %s", nd->col, ast_kind_name(nd->kind), jt_name(in->type, tn, sizeof tn));
            if (in->op_type) bprintf(&b, " (computed in %s)", jt_name(in->op_type, tn2, sizeof tn2));
            if (in->builtin > JB_NONE && in->builtin < JB__COUNT && builtin_names[in->builtin])
                bprintf(&b, " [%s]", builtin_names[in->builtin]);
            if (in->var >= 0 && in->var < f->nvars) bprintf(&b, " var %s", f->vars[in->var].name);
            if (in->callee) bprintf(&b, " -> %s", in->callee->mangled);
            bput(&b, "\n", 1);
        }
    }
    free(slots);
    if (b.oom) {
        free(b.data);
        return NULL;
    }
    if (!b.data) bput(&b, "", 0);
    return b.data;
}
