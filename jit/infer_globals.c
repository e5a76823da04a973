/*
** infer_globals.c — a device array (cuda.to_device(...), device_array)
** read by a kernel as a global. Numba freezes host arrays into the code as
** constants (infer_names.c), but references device arrays by address: the
** kernel sees the array's memory, writes included, as it is at each
** launch. Its type is fixed at the first compile, like any global's.
*/
#include "binding.h"
#include "infer_priv.h"

bool inf_device_global(Pass *p, const AstNode *at, Value v, const char *path, Resolved *r) {
    VM *vm = VMOF(p);
    const JitBinding *host = jit_binding(vm);
    uint64_t gpu = 0;
    JitArrayView a;
    if (!host->device_array_address || !host->device_array_address(vm, v, &gpu)) return false;
    if (!host->array_view(vm, v, true, &a)) return false;
    if (a.ndim < 1 || a.ndim > 3)
        inf_fail(p, at, "global device array '%s' must have 1 to 3 dimensions to be used in a kernel", path);
    r->type = jt_array(vm, a.dtype, a.ndim, a.c_contiguous ? 'C' : 'A');
    r->builtin = JB_CONST;
    r->constant = v;
    return true;
}
