/*
** gpy_modules.c — registers the standard modules written in gpy (their
** sources are embedded at build time, see CMakeLists.txt): each is compiled
** and run the first time a program imports it, like a .py file of CPython's
** Lib/. Modules that need C speed import their hot parts from a C module
** (_collections, _functools ...).
*/
#include "stdlib_priv.h"

#include "abc_gpy.h"
#include "collections_abc_gpy.h"
#include "collections_gpy.h"
#include "operator_gpy.h"
#include "heapq_gpy.h"
#include "functools_gpy.h"
#include "copy_gpy.h"
#include "dataclasses_gpy.h"
#include "typing_gpy.h"
#include "textwrap_gpy.h"
#include "re_gpy.h"

static Module *run_gpy_module(VM *vm, const char *name, const char *source, size_t len) {
    Module *m = module_new(vm, str_cstr(vm, name));
    vm_push_root(vm, OBJ_VAL(m));
    char filename[64];
    snprintf(filename, sizeof filename, "<%s>", name);
    module_exec_source(vm, m, filename, source, len);
    vm_pop_roots(vm, 1);
    return m;
}

#define GPY_MODULE(cname, pyname)                                                                    \
    static Module *build_##cname(VM *vm) {                                                           \
        return run_gpy_module(vm, pyname, cname##_source, sizeof cname##_source - 1);                \
    }

GPY_MODULE(abc, "abc")
GPY_MODULE(collections_abc, "_collections_abc")

/* collections.abc re-exports _collections_abc (which collections itself
** imports: importing collections.abc first imports its parent). */
static const char collections_abc_alias_source[] =
    "from _collections_abc import *\nfrom _collections_abc import __all__, _check_methods\n";
GPY_MODULE(collections_abc_alias, "collections.abc")
GPY_MODULE(collections, "collections")
GPY_MODULE(operator, "operator")
GPY_MODULE(heapq, "heapq")
GPY_MODULE(functools, "functools")
GPY_MODULE(copy, "copy")
GPY_MODULE(dataclasses, "dataclasses")
GPY_MODULE(typing, "typing")
GPY_MODULE(textwrap, "textwrap")
GPY_MODULE(re, "re")

void gpy_modules_register(VM *vm) {
    module_register_native(vm, "abc", build_abc);
    module_register_native(vm, "_collections_abc", build_collections_abc);
    module_register_native(vm, "collections.abc", build_collections_abc_alias);
    module_register_native(vm, "collections", build_collections);
    module_register_native(vm, "operator", build_operator);
    module_register_native(vm, "heapq", build_heapq);
    module_register_native(vm, "functools", build_functools);
    module_register_native(vm, "copy", build_copy);
    module_register_native(vm, "dataclasses", build_dataclasses);
    module_register_native(vm, "typing", build_typing);
    module_register_native(vm, "textwrap", build_textwrap);
    module_register_native(vm, "re", build_re);
}
