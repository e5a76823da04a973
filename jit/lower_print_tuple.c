/*
** lower_print_tuple.c — print() of tuples in kernels: "(1, (2.500000,
** True))" as Python writes a tuple, its numbers as the kernel print writes
** numbers (%lld / %llu / %f, bools True / False), a one-item tuple with its
** comma. The parentheses and commas are text of the format; each number is
** one 8-byte slot, as lower_print lays them out (lower_builtin.c).
*/
#include <string.h>

#include "target.h"

static void put(Lower *L, const AstNode *at, char *fmt, size_t *fl, size_t cap, const char *s) {
    size_t n = strlen(s);
    if (*fl + n >= cap - 2) lower_fail(L, at, "print() line is too long");
    memcpy(fmt + *fl, s, n);
    *fl += n;
}

static LLVMValueRef text(Lower *L, const char *s) {
    LLVMValueRef init = LLVMConstStringInContext(L->C, s, (unsigned)strlen(s), 0);
    LLVMValueRef g = LLVMAddGlobal(L->M, LLVMTypeOf(init), "__gpy_str");
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    return g;
}

void lower_print_tuple(Lower *L, LLVMValueRef v, const JType *t, char *fmt, size_t *fl, size_t cap,
                       LLVMValueRef *slots, int *ns, int max, const AstNode *at) {
    LLVMBuilderRef B = L->B;
    if (t->kind == JK_TUPLE) {
        put(L, at, fmt, fl, cap, "(");
        for (int k = 0; k < t->n; k++) {
            if (k) put(L, at, fmt, fl, cap, ", ");
            lower_print_tuple(L, LLVMBuildExtractValue(B, v, (unsigned)k, ""), t->elems[k], fmt, fl, cap, slots, ns,
                              max, at);
        }
        put(L, at, fmt, fl, cap, t->n == 1 ? ",)" : ")");
        return;
    }
    if (*ns >= max) lower_fail(L, at, "print() in kernels takes at most %d numbers", max);
    const char *spec;
    if (t->kind == JK_BOOL) {
        v = LLVMBuildPtrToInt(B, LLVMBuildSelect(B, v, text(L, "True"), text(L, "False"), ""), L->t_i64, "");
        spec = "%s";
    } else if (jt_is_float(t)) {
        v = LLVMBuildBitCast(B, lower_convert(L, v, t, jt_scalar(L->vm, JK_FLOAT64), at), L->t_i64, "");
        spec = "%f";
    } else if (t->kind >= JK_INT8 && t->kind <= JK_INT64) {
        v = lower_convert(L, v, t, jt_scalar(L->vm, JK_INT64), at);
        spec = "%lld";
    } else if (jt_is_int(t)) {
        v = lower_convert(L, v, t, jt_scalar(L->vm, JK_UINT64), at);
        spec = "%llu";
    } else {
        char tb[128];
        lower_fail(L, at, "print() in kernels cannot print %s", jt_name(t, tb, sizeof tb));
    }
    put(L, at, fmt, fl, cap, spec);
    slots[(*ns)++] = v;
}
