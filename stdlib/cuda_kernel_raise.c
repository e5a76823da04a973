/*
** cuda_kernel_raise.c — after a debug-mode launch, the exception a kernel
** raised with `raise E("message")` (jit/lower_raise.c), raised on the host
** with Numba's message: "tid=[x, y, z] ctaid=[x, y, z]: message".
*/
#include "cuda_priv.h"

void cuda_raise_kernel_exception(VM *vm, const JitKernel *k, const JitErrRecord *rec) {
    if (!k || !rec || !rec->flag || rec->site < 0 || rec->site >= k->ndbg_sites || !k->dbg_sites) return;
    const JitSite *s = &k->dbg_sites[rec->site];
    if (!IS_OBJ(s->exc_class)) return; /* an index out of bounds: the caller's IndexError */
    vm_raise(vm, (Type *)AS_OBJ(s->exc_class), "tid=[%d, %d, %d] ctaid=[%d, %d, %d]%s%s", rec->tid[0], rec->tid[1],
             rec->tid[2], rec->ctaid[0], rec->ctaid[1], rec->ctaid[2], s->exc_msg[0] ? ": " : "", s->exc_msg);
}
