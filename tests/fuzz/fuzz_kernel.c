/*
** fuzz_kernel.c — libFuzzer target: the kernel compiler's front end. The
** input is a program; every top-level function in it (after the bytecode
** compiler accepts the program) goes through type inference (jit/infer*.c)
** three times: twice as a kernel, once as a device function, each with its
** own argument types (argument_types). The module body never runs: its functions are bound to a
** namespace that already holds numpy, cuda, numba and math, plus each
** other, which is what kernels read. Seeds: the kernel tests' programs.
**
** GPY_FUZZ_LOWER=1 also compiles each function inference accepted as a
** kernel to PTX (lowering, LLVM's verifier and optimizer, NVPTX code
** generation): deeper, and far slower per input.
*/
#include <stdlib.h>
#include <string.h>

#include "../../jit/jit_loader.h"
#include "cuda_priv.h"
#include "fuzz_vm.h"

#define MAX_FUNCS 16

typedef struct Input {
    const uint8_t *data;
    size_t size;
} Input;

static Dict *base_globals;

/* The namespace of a kernel program whose imports have run. */
static void make_base_globals(VM *vm, void *ud) {
    (void)ud;
    static const char prelude[] = "import numpy as np\nimport numpy\nimport math\nimport numba\n"
                                  "from numba import cuda, float32, float64, int32, int64, uint8\n";
    Module *m = module_new(vm, str_cstr(vm, "__fuzz__"));
    module_exec_source(vm, m, "<fuzz-prelude>", prelude, sizeof prelude - 1);
    base_globals = m->dict;
}

/* Argument types for a function, three ways: a rotation through a fixed
** list started by a hash of its name (renaming a function tries other
** types), every argument a 1-d float32 array (what most kernels take), and
** 1-d float32 arrays alternating with int64 scalars. */
static void argument_types(VM *vm, Str *name, int way, int n, const JType **out) {
    const JType *table[] = {
        jt_array(vm, ND_FLOAT32, 1, 'C'), jt_scalar(vm, JK_INT64),           jt_array(vm, ND_FLOAT64, 2, 'C'),
        jt_scalar(vm, JK_FLOAT64),        jt_array(vm, ND_INT32, 1, 'A'),    jt_scalar(vm, JK_INT32),
        jt_array(vm, ND_FLOAT32, 3, 'F'), jt_scalar(vm, JK_BOOL),            jt_array(vm, ND_UINT8, 2, 'A'),
        jt_scalar(vm, JK_FLOAT32),        jt_array(vm, ND_INT64, 1, 'C'),    jt_scalar(vm, JK_UINT8),
    };
    unsigned h = 0;
    for (int64_t i = 0; i < name->len; i++) h = h * 31 + (unsigned char)name->chars[i];
    const int ntable = (int)(sizeof table / sizeof table[0]);
    for (int i = 0; i < n; i++) {
        if (way == 0) out[i] = table[(h + (unsigned)i * (h % 5 + 1)) % (unsigned)ntable];
        else if (way == 1) out[i] = table[0];
        else out[i] = table[i % 2];
    }
}

static bool is_code(VM *vm, Value v) { return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_code; }

static void infer_input(VM *vm, void *ud) {
    Input *in = ud;
    static int lower = -1;
    if (lower < 0) {
        const char *e = getenv("GPY_FUZZ_LOWER");
        lower = e && *e && strcmp(e, "0") != 0;
    }
    Source *src = source_new(vm, str_cstr(vm, "<fuzz>"), (const char *)in->data, in->size);
    vm_push_root(vm, OBJ_VAL(src));
    Proto *module = vm_compile_source(vm, src, PARSE_FILE);
    vm_push_root(vm, OBJ_VAL(module));
    Dict *globals = dict_copy(vm, base_globals);
    vm_push_root(vm, OBJ_VAL(globals));
    Function *funcs[MAX_FUNCS];
    int nfuncs = 0;
    for (int32_t i = 0; i < module->nconsts && nfuncs < MAX_FUNCS; i++) {
        if (!is_code(vm, module->consts[i])) continue;
        Proto *p = (Proto *)AS_OBJ(module->consts[i]);
        /* closures, generators, lambdas and class bodies are no kernels */
        if (p->nfree > 0 || (p->flags & (PROTO_GENERATOR | PROTO_CLASS | PROTO_LAMBDA | PROTO_MODULE)) || !p->name)
            continue;
        Function *fn = function_new(vm, p, globals);
        dict_set_str(vm, globals, p->name, OBJ_VAL(fn)); /* roots it */
        funcs[nfuncs++] = fn;
    }
    for (int i = 0; i < nfuncs; i++) {
        Function *fn = funcs[i];
        int n = fn->proto->nparams < 64 ? fn->proto->nparams : 64;
        for (int way = 0; way < 3; way++) {
            bool as_kernel = way != 2; /* the third way types it as a device function */
            const JType *tys[64];
            argument_types(vm, fn->name, way, n, tys);
            char err[1024];
            JFunc *f = jit_infer(vm, fn, n, tys, as_kernel, err, sizeof err);
            if (!f) continue;
            char *dump = jf_dump(f);
            free(dump);
            jf_free(f);
            if (as_kernel && lower) {
                JitOptions opts = {0};
                JitKernel *k = compiler_compile_opts(vm, fn, n, tys, JIT_TARGET_PTX, 0, &opts, err, sizeof err);
                if (k) compiler_kernel_free(vm, k);
            }
        }
    }
    vm_pop_roots(vm, 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    VM *vm = fuzz_vm();
    if (!base_globals) {
        if (!fuzz_pcall(vm, make_base_globals, NULL)) abort();
        vm_push_root(vm, OBJ_VAL(base_globals)); /* for the whole run */
    }
    Input in = {data, size};
    fuzz_pcall(vm, infer_input, &in);
    fuzz_collect(vm);
    return 0;
}
