/*
** lower_raise.c — `raise E("message")` (infer_raise.c). In debug mode the
** first raising thread records the statement's site and its threadIdx and
** blockIdx in the kernel's error record, as a failed bounds check does,
** and the launch raises E on the host (stdlib/cuda_kernel_raise.c). Without
** debug the raising thread returns, and nothing is reported (Numba's
** behaviour: exceptions are only checked with debug=True).
*/
#include <stdio.h>

#include "target.h"

void lower_raise(Lower *L, AstNode *s) {
    JInfo *i = lower_info(L, s);
    if (L->debug) {
        int site = lower_debug_site(L, s);
        JitSite *js = &L->sites[site];
        js->exc_class = i->constant;
        AstNode *e = s->u.raise.exc;
        if (e->kind == AST_CALL && e->u.call.args.len == 1 && e->u.call.args.items[0]->kind == AST_STR) {
            AstNode *m = e->u.call.args.items[0];
            snprintf(js->exc_msg, sizeof js->exc_msg, "%.*s", (int)(m->u.str.len < 255 ? m->u.str.len : 255),
                     m->u.str.s);
        }
        lower_debug_record_here(L, site);
        return;
    }
    if (L->ret_slot) LLVMBuildStore(L->B, LLVMConstNull(LLVMGetAllocatedType(L->ret_slot)), L->ret_slot);
    LLVMBuildBr(L->B, L->ret_bb);
}
