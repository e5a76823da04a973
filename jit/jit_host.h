/*
** jit_host.h — routes the kernel compiler's calls into libgpy through the
** host's table (JitHost, jit_module.h).
**
** CMakeLists.txt force-includes this header (-include) into every compiler
** source (GPY_COMPILER_SOURCES) and into no other file. It first includes
** the headers that declare these functions, then turns each call
** `jt_scalar(vm, k)` into `jit_host->jt_scalar(vm, k)`: the compiler's code
** keeps the names every other jit/ file uses, and the module holds no
** reference to a libgpy symbol (it is linked with -z defs, which catches a
** new call not listed here). To call something new in libgpy from the
** compiler: add it to JitHost, to stdlib/cuda_jit_host.c, and here.
*/
#ifndef GPY_JIT_HOST_H
#define GPY_JIT_HOST_H

#include "jit_module.h"

/* The host's table, set by gpy_jit_entry (jit_module.c). */
extern const JitHost *jit_host;

#define ast_kind_name(...) (jit_host->ast_kind_name(__VA_ARGS__))
#define ast_visit_children(...) (jit_host->ast_visit_children(__VA_ARGS__))
#define vm_on_free(...) (jit_host->vm_on_free(__VA_ARGS__))
#define jit_infer(...) (jit_host->jit_infer(__VA_ARGS__))
#define jf_info(...) (jit_host->jf_info(__VA_ARGS__))
#define jf_var(...) (jit_host->jf_var(__VA_ARGS__))
#define jf_free(...) (jit_host->jf_free(__VA_ARGS__))
#define jt_scalar(...) (jit_host->jt_scalar(__VA_ARGS__))
#define jt_name(...) (jit_host->jt_name(__VA_ARGS__))
#define jit_cache_stats(...) (jit_host->jit_cache_stats(__VA_ARGS__))
#define dtype_itemsize(...) (jit_host->dtype_itemsize(__VA_ARGS__))
#define jit_binding(...) (jit_host->jit_binding(__VA_ARGS__))

#endif
