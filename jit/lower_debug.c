/*
** lower_debug.c — debug mode (@cuda.jit(debug=True)): every array index is
** checked against its dimension; a failing thread records the error in the
** module's error record (JitErrRecord, jit.h) and returns, and threads stop
** after device calls once any error is recorded. Identical on both targets:
** the record is a plain global of the module (addrspace(1) in PTX).
*/
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

/* The record global, created zeroed on first use (external, so the
** launcher can find it by name: ORC symbol lookup / cuModuleGetGlobal). */
static LLVMValueRef err_global(Lower *L) {
    if (L->dbg_err) return L->dbg_err;
    LLVMTypeRef ty = LLVMArrayType2(L->t_i64, (sizeof(JitErrRecord) + 7) / 8);
    bool ptx = L->tg->kind == JIT_TARGET_PTX;
    const char *name = L->err_symbol[0] ? L->err_symbol : JIT_DEBUG_ERR_SYMBOL;
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->M, ty, name, ptx ? 1 : 0);
    LLVMSetInitializer(g, LLVMConstNull(ty));
    LLVMSetLinkage(g, LLVMExternalLinkage);
    LLVMSetAlignment(g, 8);
    L->dbg_err = ptx ? LLVMConstAddrSpaceCast(g, L->t_ptr) : g;
    return L->dbg_err;
}

static LLVMValueRef field(Lower *L, size_t offset) {
    LLVMValueRef o = LLVMConstInt(L->t_i64, offset, 0);
    return LLVMBuildGEP2(L->B, L->t_i8, err_global(L), &o, 1, "");
}

static void store_at(Lower *L, size_t offset, LLVMValueRef v) {
    LLVMValueRef s = LLVMBuildStore(L->B, v, field(L, offset));
    LLVMSetAlignment(s, LLVMTypeOf(v) == L->t_i64 ? 8 : 4);
}

/* Copies the source text of node (its first line) into out. */
static void node_text(const Lower *L, const AstNode *node, char *out, size_t size) {
    out[0] = 0;
    const Source *src = L->f->fn && L->f->fn->proto ? L->f->fn->proto->source : NULL;
    if (!src || !src->text || node->line < 1 || node->col < 1) return;
    const char *p = src->text, *end = src->text + src->len;
    for (int line = 1; line < node->line && p < end; p++)
        if (*p == '\n') line++;
    const char *start = p + node->col - 1;
    if (start >= end) return;
    const char *stop = start;
    while (stop < end && *stop != '\n') stop++;
    if (node->end_line == node->line && node->end_col > node->col && start + (node->end_col - node->col) <= stop)
        stop = start + (node->end_col - node->col);
    size_t n = (size_t)(stop - start);
    if (n >= size) n = size - 1;
    memcpy(out, start, n);
    out[n] = 0;
}

/* Adds the site of a checked access; returns its id. */
static int add_site(Lower *L, const AstNode *node) {
    if (L->nsites == L->capsites) {
        int cap = L->capsites ? L->capsites * 2 : 16;
        JitSite *ns = realloc(L->sites, (size_t)cap * sizeof *ns);
        if (!ns) lower_fail(L, node, "out of memory");
        L->sites = ns;
        L->capsites = cap;
    }
    JitSite *s = &L->sites[L->nsites];
    memset(s, 0, sizeof *s);
    const JFunc *f = L->f;
    snprintf(s->func, sizeof s->func, "%s", f->name ? f->name : "?");
    s->in_device = !f->is_kernel;
    const Source *src = f->fn && f->fn->proto ? f->fn->proto->source : NULL;
    /* the file's base name: messages read the same wherever the script lives */
    const char *file = src && src->filename ? src->filename->chars : "<unknown>";
    const char *slash = strrchr(file, '/');
    snprintf(s->file, sizeof s->file, "%s", slash && slash[1] ? slash + 1 : file);
    s->line = node->line;
    const AstNode *arr = NULL;
    if (node->kind == AST_SUBSCRIPT) arr = node->u.subscript.value;
    else if (node->kind == AST_CALL && node->u.call.args.len) arr = node->u.call.args.items[0];
    if (arr && arr->kind == AST_NAME) snprintf(s->array, sizeof s->array, "%s", arr->u.name.id);
    else if (arr) node_text(L, arr, s->array, sizeof s->array);
    node_text(L, node, s->expr, sizeof s->expr);
    return L->nsites++;
}

int lower_debug_site(Lower *L, const AstNode *node) { return add_site(L, node); }

/* Stores zero in the return slot and leaves the function. */
static void leave(Lower *L) {
    if (L->ret_slot)
        LLVMBuildStore(L->B, LLVMConstNull(LLVMGetAllocatedType(L->ret_slot)), L->ret_slot);
    LLVMBuildBr(L->B, L->ret_bb);
}

void lower_debug_bounds(Lower *L, LLVMValueRef *idx, LLVMValueRef *raw, LLVMValueRef *dims, int n,
                        const AstNode *node) {
    if (!L->debug || n <= 0) return;
    LLVMBuilderRef B = L->B;
    LLVMValueRef in[32];
    LLVMValueRef ok = NULL;
    if (n > 32) n = 32;
    for (int k = 0; k < n; k++) { /* unsigned: a still-negative wrapped index fails too */
        in[k] = LLVMBuildICmp(B, LLVMIntULT, idx[k], dims[k], "");
        ok = ok ? LLVMBuildAnd(B, ok, in[k], "") : in[k];
    }
    int site = add_site(L, node);
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(L->C, L->fn, "oob");
    LLVMBasicBlockRef rec = LLVMAppendBasicBlockInContext(L->C, L->fn, "oob.record");
    LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(L->C, L->fn, "oob.leave");
    LLVMBasicBlockRef good = LLVMAppendBasicBlockInContext(L->C, L->fn, "inbounds");
    LLVMBuildCondBr(B, ok, good, bad);
    /* first writer wins */
    LLVMPositionBuilderAtEnd(B, bad);
    LLVMValueRef prev = LLVMBuildAtomicCmpXchg(B, field(L, offsetof(JitErrRecord, flag)),
                                               LLVMConstInt(L->t_i32, 0, 0), LLVMConstInt(L->t_i32, 1, 0),
                                               LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(B, LLVMBuildExtractValue(B, prev, 1, ""), rec, out);
    LLVMPositionBuilderAtEnd(B, rec);
    LLVMValueRef axis = LLVMConstInt(L->t_i32, 0, 0);
    for (int k = n - 1; k >= 0; k--)
        axis = LLVMBuildSelect(B, in[k], axis, LLVMConstInt(L->t_i32, (unsigned)k, 0), "");
    int nrec = n < JIT_DEBUG_MAXDIM ? n : JIT_DEBUG_MAXDIM;
    store_at(L, offsetof(JitErrRecord, site), LLVMConstInt(L->t_i32, (unsigned)site, 0));
    store_at(L, offsetof(JitErrRecord, axis), axis);
    store_at(L, offsetof(JitErrRecord, ndim), LLVMConstInt(L->t_i32, (unsigned)nrec, 0));
    for (int k = 0; k < nrec; k++) {
        store_at(L, offsetof(JitErrRecord, idx) + 8 * (size_t)k, raw[k]);
        store_at(L, offsetof(JitErrRecord, shape) + 8 * (size_t)k, dims[k]);
    }
    for (int d = 0; d < 3; d++) {
        store_at(L, offsetof(JitErrRecord, tid) + 4 * (size_t)d, L->tg->sreg(L, SREG_TID, d));
        store_at(L, offsetof(JitErrRecord, ctaid) + 4 * (size_t)d, L->tg->sreg(L, SREG_CTAID, d));
    }
    LLVMBuildBr(B, out);
    LLVMPositionBuilderAtEnd(B, out);
    leave(L);
    LLVMPositionBuilderAtEnd(B, good);
}

void lower_debug_record_here(Lower *L, int site) {
    LLVMBuilderRef B = L->B;
    LLVMBasicBlockRef rec = LLVMAppendBasicBlockInContext(L->C, L->fn, "raise.record");
    LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(L->C, L->fn, "raise.leave");
    LLVMValueRef prev = LLVMBuildAtomicCmpXchg(B, field(L, offsetof(JitErrRecord, flag)),
                                               LLVMConstInt(L->t_i32, 0, 0), LLVMConstInt(L->t_i32, 1, 0),
                                               LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(B, LLVMBuildExtractValue(B, prev, 1, ""), rec, out);
    LLVMPositionBuilderAtEnd(B, rec);
    store_at(L, offsetof(JitErrRecord, site), LLVMConstInt(L->t_i32, (unsigned)site, 0));
    store_at(L, offsetof(JitErrRecord, ndim), LLVMConstInt(L->t_i32, 0, 0));
    for (int d = 0; d < 3; d++) {
        store_at(L, offsetof(JitErrRecord, tid) + 4 * (size_t)d, L->tg->sreg(L, SREG_TID, d));
        store_at(L, offsetof(JitErrRecord, ctaid) + 4 * (size_t)d, L->tg->sreg(L, SREG_CTAID, d));
    }
    LLVMBuildBr(B, out);
    LLVMPositionBuilderAtEnd(B, out);
    leave(L);
}

void lower_debug_after_call(Lower *L) {
    if (!L->debug) return;
    LLVMBuilderRef B = L->B;
    LLVMValueRef v = LLVMBuildLoad2(B, L->t_i32, field(L, offsetof(JitErrRecord, flag)), "");
    LLVMSetOrdering(v, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(v, 4);
    LLVMBasicBlockRef stop = LLVMAppendBasicBlockInContext(L->C, L->fn, "dbg.stop");
    LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(L->C, L->fn, "dbg.go");
    LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntNE, v, LLVMConstInt(L->t_i32, 0, 0), ""), stop, go);
    LLVMPositionBuilderAtEnd(B, stop);
    leave(L);
    LLVMPositionBuilderAtEnd(B, go);
}

/* ------------------------------------------------------ host side */

void jit_debug_reset(JitKernel *k) {
    if (k && k->dbg_err) memset(k->dbg_err, 0, sizeof *k->dbg_err);
}

static size_t tuple_text(char *out, size_t size, const int64_t *v, int n) {
    size_t off = 0;
    off += (size_t)snprintf(out + off, size - off, "(");
    for (int k = 0; k < n && off < size; k++)
        off += (size_t)snprintf(out + off, size - off, "%s%lld", k ? ", " : "", (long long)v[k]);
    if (off < size) off += (size_t)snprintf(out + off, size - off, n == 1 ? ",)" : ")");
    return off;
}

bool jit_debug_message(const JitKernel *k, const JitErrRecord *r, char *msg, size_t size) {
    if (!r || !r->flag) return false;
    const JitSite *s = k && r->site >= 0 && r->site < k->ndbg_sites ? &k->dbg_sites[r->site] : NULL;
    /* on the GPU a kernel launched from this one shares its module and its
       record: a site in a kernel names that kernel */
    const char *kname = s && !s->in_device && s->func[0] ? s->func
                        : k && k->func && k->func->name ? k->func->name : "?";
    int ax = r->axis >= 0 && r->axis < r->ndim && r->axis < JIT_DEBUG_MAXDIM ? r->axis : 0;
    int nd = r->ndim < 0 ? 0 : r->ndim > JIT_DEBUG_MAXDIM ? JIT_DEBUG_MAXDIM : r->ndim;
    char where[256], detail[320] = "";
    if (s && s->in_device)
        snprintf(where, sizeof where, "%s:%d, in device function '%s'", s->file, s->line, s->func);
    else if (s)
        snprintf(where, sizeof where, "%s:%d", s->file, s->line);
    else
        snprintf(where, sizeof where, "unknown site %d", r->site);
    if (nd > 1) {
        char it[96], st[96];
        tuple_text(it, sizeof it, r->idx, nd);
        tuple_text(st, sizeof st, r->shape, nd);
        snprintf(detail, sizeof detail, " (array '%s' of shape %s, index %s)", s ? s->array : "?", st, it);
    }
    snprintf(msg, size,
             "kernel '%s' (%s): index %lld is out of bounds for axis %d with size %lld in '%s'%s at threadIdx "
             "(%d, %d, %d), blockIdx (%d, %d, %d)",
             kname, where, nd ? (long long)r->idx[ax] : 0LL, ax, nd ? (long long)r->shape[ax] : 0LL,
             s ? (s->expr[0] ? s->expr : s->array) : "?", detail, r->tid[0], r->tid[1], r->tid[2], r->ctaid[0],
             r->ctaid[1], r->ctaid[2]);
    return true;
}
