/*
** gpy_modules.c — the library modules written entirely in gpy (stdlib/
** NAME.gpy, embedded at build time as NAME_source): each is run as a
** module of that name the first time it is imported.
*/
#include "stdlib_priv.h"

#include "copy_gpy.h"
#include "dataclasses_gpy.h"
#include "typing_gpy.h"

static Module *gpy_module(VM *vm, const char *name, const char *source, size_t len) {
    Module *m = module_new(vm, str_cstr(vm, name));
    vm_push_root(vm, OBJ_VAL(m));
    char filename[64];
    snprintf(filename, sizeof filename, "<%s>", name);
    module_exec_source(vm, m, filename, source, len);
    vm_pop_roots(vm, 1);
    return m;
}

#define GPY_MODULE(name) \
    static Module *open_##name(VM *vm) { return gpy_module(vm, #name, name##_source, sizeof name##_source - 1); }

GPY_MODULE(copy)
GPY_MODULE(dataclasses)
GPY_MODULE(typing)

void gpy_modules_register(VM *vm) {
    module_register_native(vm, "copy", open_copy);
    module_register_native(vm, "dataclasses", open_dataclasses);
    module_register_native(vm, "typing", open_typing);
}
