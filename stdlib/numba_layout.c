/*
** numba_layout.c — the submodules of Numba's classic layout (numba.types,
** numba.core.types/config/errors, numba.extending) and of numba-cuda's
** (numba.cuda.types, numba.cuda.config, numba.cuda.core.config/errors,
** numba.cuda.np.numpy_support, numba.cuda.extending, numba.cuda.typing,
** numba.cuda.utils.PYVERSION, numba.cuda.HAS_NUMBA,
** numba.cuda.vectorize/guvectorize), so that code written for either
** imports unchanged.
**
** All of them are built at once when the `numba` module is (a handful of
** modules and classes) and hang off it as attributes; the native module
** registered for each dotted name just walks those attributes, so
** `import numba.cuda.types` and `numba.cuda.types` are the same object.
*/
#include <string.h>

#include "cuda_priv.h"
#include "numba_types.h"
#include "ndarray.h"

/* ------------------------------------------------------------- helpers */

/* A new module named full, bound as parent.leaf (reachable before it is filled). */
static Module *submodule(VM *vm, Module *parent, const char *leaf, const char *full) {
    Module *m = module_new(vm, str_cstr(vm, full));
    vm_push_root(vm, OBJ_VAL(m));
    dict_set_cstr(vm, parent->dict, leaf, OBJ_VAL(m));
    vm_pop_roots(vm, 1);
    return m;
}

static void bind(VM *vm, Module *m, const char *name, Value v) { dict_set_cstr(vm, m->dict, name, v); }

/* ------------------------------------------------------------- config */

/* numba-cuda's configuration values a program reads or overrides, with
** their defaults there. gpy reads none of them: they are plain values a
** program may set (tests save and restore them); ENABLE_CUDASIM is 0
** because gpy is not Numba's simulator. */
typedef struct ConfigInt {
    const char *name;
    int value;
} ConfigInt;

static const ConfigInt config_ints[] = {
    {"ENABLE_CUDASIM", 0},
    {"CUDA_LOW_OCCUPANCY_WARNINGS", 1},
    {"CUDA_WARN_ON_IMPLICIT_COPY", 1},
    {"DISABLE_PERFORMANCE_WARNINGS", 0},
    {"OPT", 3},
    {"DEBUG", 0},
    {"DEBUGINFO_DEFAULT", 0},
    {"CUDA_DEBUGINFO_DEFAULT", 0},
    {"DUMP_ASSEMBLY", 0},
    {"DUMP_BYTECODE", 0},
    {"DUMP_CFG", 0},
    {"DUMP_IR", 0},
    {"DUMP_LLVM", 0},
    {"CUDA_ARRAY_INTERFACE_SYNC", 1},
    {"ALWAYS_WARN_UNINIT_VAR", 0},
    {"CUDA_PER_THREAD_DEFAULT_STREAM", 0},
    {"CUDA_VERBOSE_JIT_LOG", 1},
    {"DISABLE_JIT", 0},
    {"DISABLE_CUDA", 0},
    {"FULL_TRACEBACKS", 0},
    {"DEVELOPER_MODE", 0},
    {"MACHINE_BITS", 64},
};

static const char *const config_false[] = {"CUDA_ENABLE_NRT", "CUDA_NRT_STATS", "CUDA_DEBUG_POLY",
                                           "CUDA_DEBUG_POLY_USE_TYPED_CONST", "IS_32BITS", "IS_WIN32", "IS_OSX"};
static const char *const config_none[] = {"BOUNDSCHECK", "HTML", "FORCE_CUDA_CC"};

static void fill_config(VM *vm, Module *m) {
    for (size_t i = 0; i < sizeof config_ints / sizeof config_ints[0]; i++)
        bind(vm, m, config_ints[i].name, INT_VAL(config_ints[i].value));
    for (size_t i = 0; i < sizeof config_false / sizeof config_false[0]; i++) bind(vm, m, config_false[i], BOOL_VAL(false));
    for (size_t i = 0; i < sizeof config_none / sizeof config_none[0]; i++) bind(vm, m, config_none[i], NONE_VAL);
    bind(vm, m, "CUDA_MEMORY_MANAGER", STR_VAL(str_cstr(vm, "default")));
    bind(vm, m, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", STR_VAL(vm->empty_str));
    bind(vm, m, "CUDA_LOG_LEVEL", STR_VAL(vm->empty_str));
    bind(vm, m, "CACHE_DIR", STR_VAL(vm->empty_str));
    Tuple *cc = tuple_new(vm, 2);
    cc->items[0] = INT_VAL(7);
    cc->items[1] = INT_VAL(5);
    bind(vm, m, "CUDA_DEFAULT_PTX_CC", OBJ_VAL(cc));
}

/* ------------------------------------------------------------- errors */

/* Numba's exception and warning classes, each after its base (Numba's
** hierarchy with one base per class). TypingError is the class kernels
** raise (a TypeError subclass in gpy); "" bases are the builtins below. */
typedef struct ErrorClass {
    const char *name;
    const char *base; /* a class above in this table, or "Exception" / "Warning" */
} ErrorClass;

static const ErrorClass error_classes[] = {
    {"NumbaError", "Exception"},
    {"NumbaTypeError", "TypingError"},
    {"NumbaValueError", "TypingError"},
    {"NumbaAttributeError", "TypingError"},
    {"NumbaIndexError", "TypingError"},
    {"NumbaKeyError", "TypingError"},
    {"NumbaNotImplementedError", "TypingError"},
    {"NumbaAssertionError", "TypingError"},
    {"RequireLiteralValue", "TypingError"},
    {"UntypedAttributeError", "TypingError"},
    {"LiteralTypingError", "TypingError"},
    {"NumbaRuntimeError", "NumbaError"},
    {"UnsupportedError", "NumbaError"},
    {"LoweringError", "NumbaError"},
    {"ForbiddenConstruct", "LoweringError"},
    {"CompilerError", "NumbaError"},
    {"InternalError", "NumbaError"},
    {"ConstantInferenceError", "NumbaError"},
    {"ByteCodeSupportError", "NumbaError"},
    {"DeprecationError", "NumbaError"},
    {"IRError", "NumbaError"},
    {"VerificationError", "IRError"},
    {"NotDefinedError", "IRError"},
    {"RedefinedError", "IRError"},
    {"UnsupportedBytecodeError", "Exception"},
    {"NumbaWarning", "Warning"},
    {"NumbaPerformanceWarning", "NumbaWarning"},
    {"NumbaDeprecationWarning", "NumbaWarning"},
    {"NumbaPendingDeprecationWarning", "NumbaWarning"},
    {"NumbaDebugInfoWarning", "NumbaWarning"},
    {"NumbaInvalidConfigWarning", "NumbaWarning"},
    {"NumbaExperimentalFeatureWarning", "NumbaWarning"},
    {"NumbaTypeSafetyWarning", "NumbaWarning"},
    {"NumbaPedanticWarning", "NumbaWarning"},
    {"NumbaIRAssumptionWarning", "NumbaPedanticWarning"},
    {"NumbaSystemWarning", "NumbaWarning"},
    {"NumbaParallelSafetyWarning", "NumbaWarning"},
};

static void fill_errors(VM *vm, CudaState *st, Module *m) {
    bind(vm, m, "TypingError", OBJ_VAL(st->t_typing_error));
    Value modname = STR_VAL(str_cstr(vm, "numba.core.errors"));
    vm_push_root(vm, modname);
    for (size_t i = 0; i < sizeof error_classes / sizeof error_classes[0]; i++) {
        const char *b = error_classes[i].base;
        Type *base = NULL;
        if (strcmp(b, "Exception") == 0) base = vm->exc[EXC_Exception];
        else if (strcmp(b, "Warning") == 0) base = vm->exc[EXC_Warning];
        else base = (Type *)AS_OBJ(dict_get_cstr(vm, m->dict, b)); /* listed above: always present */
        Type *t = type_new_builtin(vm, error_classes[i].name, base, TYPE_EXCEPTION | TYPE_BASETYPE);
        bind(vm, m, error_classes[i].name, OBJ_VAL(t));
        dict_set_cstr(vm, t->dict, "__module__", modname);
    }
    vm_pop_roots(vm, 1);
}

/* ------------------------------------------------------------- types */

/* numba.types / numba.core.types / numba.cuda.types hold the type objects
** the numba module itself exposes (numba.float32, ...): every attribute of
** numba that is neither a module, a function nor a dunder. Copied once the
** numba module is complete, so whatever type objects it has are the ones
** seen through every spelling. */
static bool is_type_entry(VM *vm, Value key, Value v) {
    if (!IS_STR(vm, key) || strncmp(AS_STR(key)->chars, "__", 2) == 0) return false;
    if (!IS_OBJ(v)) return false;
    Type *t = AS_OBJ(v)->type;
    return t != vm->t_module && t != vm->t_builtin_function && t != vm->t_function;
}

static void copy_types(VM *vm, Module *numba, Module *to, bool keep_existing) {
    int64_t pos = 0;
    Value k, v;
    while (dict_next(numba->dict, &pos, &k, &v))
        if (is_type_entry(vm, k, v) && !(keep_existing && !IS_EMPTY(dict_get_str(vm, to->dict, AS_STR(k)))))
            dict_set_str(vm, to->dict, AS_STR(k), v);
}

/* ------------------------------------------------------- numpy_support */

static Module *numba_of(VM *vm) { return cuda_numba_module(vm); }

/* numpy_support.from_dtype(dtype): the Numba type of a numpy dtype. */
static Value f_from_dtype(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc != 1 || (kwargs && kwargs->count))
        vm_raise_kind(vm, TypeError, "from_dtype() takes exactly one argument (%d given)", argc);
    int dt = nd_dtype_try(vm, argv[0]);
    if (dt < 0) vm_raise_kind(vm, NotImplementedError, "from_dtype: %s is not a supported dtype", vm_type_name(vm, argv[0]));
    const char *name = dtype_name((NDType)dt);
    if (strcmp(name, "bool") == 0) name = "boolean"; /* numba.boolean: numba has no `bool` */
    Value t = dict_get_cstr(vm, numba_of(vm)->dict, name);
    if (IS_EMPTY(t)) vm_raise_kind(vm, NotImplementedError, "from_dtype: dtype %s has no Numba type", name);
    return t;
}

/* numpy_support.as_dtype(nbtype): the numpy dtype of a Numba scalar type. */
static Value f_as_dtype(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc != 1 || (kwargs && kwargs->count))
        vm_raise_kind(vm, TypeError, "as_dtype() takes exactly one argument (%d given)", argc);
    int dt = nd_dtype_try(vm, argv[0]);
    if (dt < 0) vm_raise_kind(vm, NotImplementedError, "%s cannot be represented as a NumPy dtype", vm_type_name(vm, argv[0]));
    return nd_dtype_object(vm, (NDType)dt);
}

/* --------------------------------------------------------- extending */

/* Numba's typing/lowering extension API needs Numba's compiler; gpy's kernel
** compiler is its own, so each entry point says so when called. */
#define EXTENDING_STUB(fname)                                                                                  \
    static Value f_ext_##fname(VM *vm, int argc, Value *argv, Dict *kwargs) {                                  \
        (void)argc, (void)argv, (void)kwargs;                                                                  \
        vm_raise_kind(vm, NotImplementedError,                                                                 \
                      "numba.extending." #fname " is not supported by gpy (it extends Numba's own compiler)"); \
    }
EXTENDING_STUB(overload)
EXTENDING_STUB(overload_method)
EXTENDING_STUB(overload_attribute)
EXTENDING_STUB(overload_classmethod)
EXTENDING_STUB(intrinsic)
EXTENDING_STUB(make_attribute_wrapper)
EXTENDING_STUB(type_callable)
EXTENDING_STUB(typeof_impl)
EXTENDING_STUB(register_model)
EXTENDING_STUB(lower_builtin)
EXTENDING_STUB(lower_cast)
EXTENDING_STUB(lower_getattr)
EXTENDING_STUB(lower_setattr)
EXTENDING_STUB(box)
EXTENDING_STUB(unbox)

static Value f_ext_register_jitable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc, (void)argv, (void)kwargs;
    vm_raise_kind(vm, NotImplementedError,
                  "numba.extending.register_jitable is not supported by gpy: decorate the function with "
                  "@cuda.jit(device=True) to call it from kernels");
}

static void fill_extending(VM *vm, Module *m) {
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"overload", f_ext_overload},
        {"overload_method", f_ext_overload_method},
        {"overload_attribute", f_ext_overload_attribute},
        {"overload_classmethod", f_ext_overload_classmethod},
        {"intrinsic", f_ext_intrinsic},
        {"register_jitable", f_ext_register_jitable},
        {"make_attribute_wrapper", f_ext_make_attribute_wrapper},
        {"type_callable", f_ext_type_callable},
        {"typeof_impl", f_ext_typeof_impl},
        {"register_model", f_ext_register_model},
        {"lower_builtin", f_ext_lower_builtin},
        {"lower_cast", f_ext_lower_cast},
        {"lower_getattr", f_ext_lower_getattr},
        {"lower_setattr", f_ext_lower_setattr},
        {"box", f_ext_box},
        {"unbox", f_ext_unbox},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
}

/* ------------------------------------------- numba.cuda.(gu)vectorize */

/* numba.cuda.vectorize is numba.vectorize with target='cuda' by default. */
static Value cuda_target(VM *vm, Value (*fn)(VM *, int, Value *, Dict *), int argc, Value *argv, Dict *kwargs) {
    Dict *kw = kwargs ? dict_copy(vm, kwargs) : dict_new(vm);
    vm_push_root(vm, OBJ_VAL(kw));
    if (IS_EMPTY(dict_get_cstr(vm, kw, "target"))) dict_set_cstr(vm, kw, "target", STR_VAL(str_cstr(vm, "cuda")));
    Value r = fn(vm, argc, argv, kw);
    vm_pop_roots(vm, 1);
    return r;
}

static Value f_cuda_vectorize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return cuda_target(vm, cuda_f_vectorize, argc, argv, kwargs);
}

static Value f_cuda_guvectorize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return cuda_target(vm, cuda_f_guvectorize, argc, argv, kwargs);
}

/* ------------------------------------------------------------- build */

void numba_layout_build(VM *vm, CudaState *st, Module *numba) {
    Module *cuda = st->cuda;
    /* the type names first, while numba holds only its own entries */
    Module *types = numba_types_module(vm); /* stdlib/numba_types.c: the type objects and their classes */
    vm_push_root(vm, OBJ_VAL(types));
    copy_types(vm, numba, types, true);
    Module *cuda_types = types; /* numba.cuda.types: the same objects */
    vm_push_root(vm, OBJ_VAL(cuda_types));
    copy_types(vm, numba, cuda, true); /* from numba.cuda import float32, void ... */
    bind(vm, numba, "types", OBJ_VAL(types));
    bind(vm, cuda, "types", OBJ_VAL(cuda_types));
    vm_pop_roots(vm, 2);

    Module *core = submodule(vm, numba, "core", "numba.core");
    bind(vm, core, "types", OBJ_VAL(types));
    Module *config = submodule(vm, core, "config", "numba.core.config");
    fill_config(vm, config);
    bind(vm, numba, "config", OBJ_VAL(config));
    Module *errors = submodule(vm, core, "errors", "numba.core.errors");
    fill_errors(vm, st, errors);
    bind(vm, numba, "errors", OBJ_VAL(errors));
    Module *ext = submodule(vm, numba, "extending", "numba.extending");
    fill_extending(vm, ext);
    bind(vm, core, "extending", OBJ_VAL(ext));

    /* numba-cuda's layout: the same config and error classes */
    Module *cuda_core = submodule(vm, cuda, "core", "numba.cuda.core");
    bind(vm, cuda_core, "config", OBJ_VAL(config));
    bind(vm, cuda_core, "errors", OBJ_VAL(errors));
    bind(vm, cuda, "config", OBJ_VAL(config));
    bind(vm, cuda, "errors", OBJ_VAL(errors));
    bind(vm, cuda, "extending", OBJ_VAL(ext));
    Module *np = submodule(vm, cuda, "np", "numba.cuda.np");
    Module *nps = submodule(vm, np, "numpy_support", "numba.cuda.np.numpy_support");
    module_add_function(vm, nps, "from_dtype", f_from_dtype);
    module_add_function(vm, nps, "as_dtype", f_as_dtype);
    /* numba.cuda.typing.signature / typeof: whatever numba has under those names */
    Module *typing = submodule(vm, cuda, "typing", "numba.cuda.typing");
    Module *typing_typeof = submodule(vm, typing, "typeof", "numba.cuda.typing.typeof");
    static const char *const typing_names[] = {"signature", "typeof"};
    for (size_t i = 0; i < 2; i++) {
        Value v = dict_get_cstr(vm, numba->dict, typing_names[i]);
        if (!IS_EMPTY(v)) bind(vm, typing, typing_names[i], v);
    }
    Value tf = dict_get_cstr(vm, numba->dict, "typeof");
    if (!IS_EMPTY(tf)) bind(vm, typing_typeof, "typeof", tf);
    Module *utils = submodule(vm, cuda, "utils", "numba.cuda.utils");
    Tuple *pyver = tuple_new(vm, 2); /* the CPython version gpy follows */
    pyver->items[0] = INT_VAL(3);
    pyver->items[1] = INT_VAL(11);
    bind(vm, utils, "PYVERSION", OBJ_VAL(pyver));
    /* numba-cuda without the separate numba package: gpy has no CPU @jit */
    bind(vm, cuda, "HAS_NUMBA", BOOL_VAL(false));
    module_add_function(vm, cuda, "vectorize", f_cuda_vectorize);
    module_add_function(vm, cuda, "guvectorize", f_cuda_guvectorize);
}

/* The module at a dotted path below numba (built with numba). */
static Module *walk(VM *vm, const char *path) {
    Module *m = numba_of(vm);
    const char *p = path + strlen("numba");
    while (*p == '.') {
        p++;
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char leaf[64];
        if (n >= sizeof leaf) return NULL;
        memcpy(leaf, p, n);
        leaf[n] = '\0';
        Value v = dict_get_cstr(vm, m->dict, leaf);
        if (!IS_OBJ(v) || AS_OBJ(v)->type != vm->t_module) return NULL;
        m = (Module *)AS_OBJ(v);
        p += n;
    }
    return m;
}

#define LAYOUT_MODULE(fname, path) \
    static Module *build_##fname(VM *vm) { return walk(vm, path); }
LAYOUT_MODULE(types, "numba.types")
LAYOUT_MODULE(core, "numba.core")
LAYOUT_MODULE(core_types, "numba.core.types")
LAYOUT_MODULE(core_config, "numba.core.config")
LAYOUT_MODULE(core_errors, "numba.core.errors")
LAYOUT_MODULE(extending, "numba.extending")
LAYOUT_MODULE(core_extending, "numba.core.extending")
LAYOUT_MODULE(cuda_typing, "numba.cuda.typing")
LAYOUT_MODULE(cuda_typing_typeof, "numba.cuda.typing.typeof")
LAYOUT_MODULE(cuda_utils, "numba.cuda.utils")
LAYOUT_MODULE(cuda_types, "numba.cuda.types")
LAYOUT_MODULE(cuda_config, "numba.cuda.config")
LAYOUT_MODULE(cuda_core, "numba.cuda.core")
LAYOUT_MODULE(cuda_core_config, "numba.cuda.core.config")
LAYOUT_MODULE(cuda_core_errors, "numba.cuda.core.errors")
LAYOUT_MODULE(cuda_np, "numba.cuda.np")
LAYOUT_MODULE(cuda_np_support, "numba.cuda.np.numpy_support")
LAYOUT_MODULE(cuda_extending, "numba.cuda.extending")

void numba_layout_register(VM *vm) {
    static const struct {
        const char *name;
        Module *(*build)(VM *);
    } mods[] = {
        {"numba.types", build_types},
        {"numba.core", build_core},
        {"numba.core.types", build_core_types},
        {"numba.core.config", build_core_config},
        {"numba.core.errors", build_core_errors},
        {"numba.extending", build_extending},
        {"numba.core.extending", build_core_extending},
        {"numba.cuda.typing", build_cuda_typing},
        {"numba.cuda.typing.typeof", build_cuda_typing_typeof},
        {"numba.cuda.utils", build_cuda_utils},
        {"numba.cuda.types", build_cuda_types},
        {"numba.cuda.config", build_cuda_config},
        {"numba.cuda.core", build_cuda_core},
        {"numba.cuda.core.config", build_cuda_core_config},
        {"numba.cuda.core.errors", build_cuda_core_errors},
        {"numba.cuda.np", build_cuda_np},
        {"numba.cuda.np.numpy_support", build_cuda_np_support},
        {"numba.cuda.extending", build_cuda_extending},
    };
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) module_register_native(vm, mods[i].name, mods[i].build);
}
