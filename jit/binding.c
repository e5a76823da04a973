/*
** host.c — the compiler's host (host.h): set per VM by the layer above;
** until then a host that knows no arrays, dtypes or device functions.
*/
#include "binding.h"

static bool no_array(VM *vm, Value v, bool device, JitArrayView *out) {
    (void)vm, (void)v, (void)device, (void)out;
    return false;
}
static int no_dtype(VM *vm, Value v) {
    (void)vm, (void)v;
    return -1;
}
static Function *no_function(VM *vm, Value v, bool *is_device) {
    (void)vm, (void)v, (void)is_device;
    return NULL;
}
static bool any_signature(VM *vm, Value v, int nargs, const JType *const *argtypes, char *err, size_t errsize) {
    (void)vm, (void)v, (void)nargs, (void)argtypes, (void)err, (void)errsize;
    return true;
}

static bool no_device_array(VM *vm, Value v, uint64_t *gpu_addr) {
    (void)vm, (void)v, (void)gpu_addr;
    return false;
}

static const JitBinding no_host = {no_array, no_dtype, no_dtype, no_function, any_signature, no_device_array};

void jit_set_binding(VM *vm, const JitBinding *host) {
    const JitBinding **slot = jit_binding_slot(vm);
    if (!slot) vm_throw(vm, vm->memory_error);
    *slot = host;
}

const JitBinding *jit_binding(VM *vm) {
    const JitBinding **slot = jit_binding_slot(vm);
    return slot && *slot ? *slot : &no_host;
}
