/*
** open_libs.c — the standard library's entry point for a new VM (the role
** of Lua's linit.c): file objects, builtins and every standard module,
** registered so that vm/ never names stdlib/. vm_new calls it through
** VMConfig.open_libs.
*/
#include "open_libs.h"
#include "stdlib_priv.h"

void stdlib_open_libs(VM *vm) {
    file_init(vm);
    builtins_init(vm);
    module_register_native(vm, "math", stdlib_math);
    module_register_native(vm, "numpy", stdlib_numpy);
    module_register_native(vm, "time", stdlib_time);
    module_register_native(vm, "sys", stdlib_sys);
    module_register_native(vm, "os", stdlib_os);
    module_register_native(vm, "random", stdlib_random);
    module_register_native(vm, "asyncio", stdlib_asyncio);
    module_register_native(vm, "__future__", stdlib_future);
    cuda_register_modules(vm);
    module_register_native(vm, "cmath", stdlib_cmath);
    json_register(vm);
    warnings_register(vm);
    gc_module_register(vm);
    unicodedata_register(vm);
    collections_deque_register(vm);
    gpy_modules_register(vm);
    re_engine_register(vm);
    itertools_register(vm);
    heapq_register(vm);
    bisect_register(vm);
    image_register(vm);
    zlib_register(vm);
    vm->sys_module = stdlib_sys(vm);
    dict_set_cstr(vm, vm->modules, "sys", OBJ_VAL(vm->sys_module));
}
