/*
** sys.c — the sys module: argv, path, modules, the standard streams,
** exit, the recursion limit, version information and platform facts.
** sys.stdout etc. are looked up by print()/input() at each call, so
** assigning another object with a write() method redirects output.
*/
#include <float.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "stdlib_priv.h"
#include "../vm/bigint.h"

static Value s_exit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "exit", kwargs);
    arg_between(vm, "exit", argc, 0, 1);
    vm_throw(vm, exc_new(vm, vm->exc[EXC_SystemExit], argc, argv));
}

static Value s_getrecursionlimit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "getrecursionlimit", kwargs);
    if (argc) vm_raise_kind(vm, TypeError, "sys.getrecursionlimit() takes no arguments (%d given)", argc);
    return INT_VAL(vm->recursion_limit);
}

/* The limit cannot go beyond the VM's fixed frame stack: larger requests
** are clamped to it (scripts commonly ask for huge limits "just in case"). */
static Value s_setrecursionlimit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "setrecursionlimit", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "sys.setrecursionlimit() takes exactly one argument (%d given)", argc);
    if (IS_FLOAT(argv[0])) vm_raise_kind(vm, TypeError, "'float' object cannot be interpreted as an integer");
    int64_t n = vm_to_index(vm, argv[0]);
    if (n < 1) vm_raise_kind(vm, ValueError, "recursion limit must be greater or equal than 1");
    if (n <= vm->nframes)
        vm_raise_kind(vm, RecursionError,
                      "cannot set the recursion limit to %lld at the recursion depth %d: the limit is too low",
                      (long long)n, vm->nframes);
    if (vm->frames_cap > 0 && n > vm->frames_cap) n = vm->frames_cap;
    vm->recursion_limit = (int32_t)n;
    return NONE_VAL;
}

static Value s_get_int_max_str_digits(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "get_int_max_str_digits", kwargs);
    if (argc) vm_raise_kind(vm, TypeError, "sys.get_int_max_str_digits() takes no arguments (%d given)", argc);
    return INT_VAL(bigint_max_str_digits(vm));
}

/* The limit on decimal int<->str conversions (CPython 3.11's defence
** against quadratic-time conversions; GMP's are not, but programs expect
** the same errors). 0 means no limit. */
static Value s_set_int_max_str_digits(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value n = kw_take(vm, kwargs, "maxdigits");
    kw_done(vm, "set_int_max_str_digits", kwargs);
    if (argc > 1 || (argc == 1 && !IS_EMPTY(n)))
        vm_raise_kind(vm, TypeError, "set_int_max_str_digits() takes at most 1 argument (%d given)", argc);
    if (argc == 1) n = argv[0];
    if (IS_EMPTY(n)) vm_raise_kind(vm, TypeError, "set_int_max_str_digits() missing required argument 'maxdigits' (pos 1)");
    if (IS_FLOAT(n)) vm_raise_kind(vm, TypeError, "'float' object cannot be interpreted as an integer");
    int64_t d = vm_to_index(vm, n);
    if (d != 0 && d < 640) vm_raise_kind(vm, ValueError, "maxdigits must be 0 or larger than 640");
    bigint_set_max_str_digits(vm, d);
    return NONE_VAL;
}

static Value s_intern(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "intern", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "intern() takes exactly one argument (%d given)", argc);
    if (!IS_STR(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "intern() argument must be str, not %s", vm_type_name(vm, argv[0]));
    Str *s = AS_STR(argv[0]);
    return STR_VAL(str_intern(vm, s->chars, (size_t)s->len));
}

static Value s_getsizeof(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    arg_between(vm, "getsizeof", argc, 1, 2);
    Value v = argv[0];
    if (!IS_OBJ(v)) return INT_VAL(IS_FLOAT(v) ? 24 : 28);
    int64_t size = AS_OBJ(v)->gc_size;
    if (IS_LIST(vm, v)) size += AS_LIST(v)->cap * (int64_t)sizeof(Value);
    else if (IS_DICT(vm, v))
        size += AS_DICT(v)->entries_cap * (int64_t)sizeof(DictEntry) + AS_DICT(v)->index_cap * 8;
    return INT_VAL(size);
}

/* The exception being handled by the innermost except block, or None. */
static Value handled_exception(VM *vm) {
    for (int32_t i = vm->nframes - 1; i >= 0; i--) {
        Value h = vm->frames[i].handling;
        if (!IS_NONE(h) && !IS_EMPTY(h)) return h;
    }
    return NONE_VAL;
}

static Value s_exc_info(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "exc_info", kwargs);
    if (argc) vm_raise_kind(vm, TypeError, "sys.exc_info() takes no arguments (%d given)", argc);
    Value e = handled_exception(vm);
    Tuple *t = tuple_new(vm, 3);
    if (!IS_NONE(e)) {
        t->items[0] = OBJ_VAL(vm_typeof(vm, e));
        t->items[1] = e;
    }
    return OBJ_VAL(t);
}

static Value s_exception(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "exception", kwargs);
    if (argc) vm_raise_kind(vm, TypeError, "sys.exception() takes no arguments (%d given)", argc);
    return handled_exception(vm);
}

static Value s_getdefaultencoding(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)argv;
    (void)kwargs;
    return STR_VAL(str_cstr(vm, "utf-8"));
}

static Value s_getrefcount(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)vm;
    (void)argc;
    (void)argv;
    (void)kwargs;
    return INT_VAL(2);
}

static void set(VM *vm, Module *m, const char *name, Value v) { dict_set_cstr(vm, m->dict, name, v); }

static Value str_v(VM *vm, const char *s) { return STR_VAL(str_cstr(vm, s)); }

Module *stdlib_sys(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "sys"));
    vm_push_root(vm, OBJ_VAL(m));
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"exit", s_exit},
        {"getrecursionlimit", s_getrecursionlimit},
        {"setrecursionlimit", s_setrecursionlimit},
        {"get_int_max_str_digits", s_get_int_max_str_digits},
        {"set_int_max_str_digits", s_set_int_max_str_digits},
        {"intern", s_intern},
        {"getsizeof", s_getsizeof},
        {"exc_info", s_exc_info},
        {"exception", s_exception},
        {"getdefaultencoding", s_getdefaultencoding},
        {"getfilesystemencoding", s_getdefaultencoding},
        {"getrefcount", s_getrefcount},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);

    if (!vm->sys_argv) vm->sys_argv = list_new(vm, 0);
    if (!vm->sys_path) vm->sys_path = list_new(vm, 0);
    if (!vm->modules) vm->modules = dict_new(vm);
    set(vm, m, "argv", OBJ_VAL(vm->sys_argv));
    set(vm, m, "orig_argv", OBJ_VAL(vm->sys_argv));
    set(vm, m, "path", OBJ_VAL(vm->sys_path));
    set(vm, m, "modules", OBJ_VAL(vm->modules));
    set(vm, m, "warnoptions", OBJ_VAL(list_new(vm, 0)));

    /* standard streams (created by file_init / on first use) */
    Value out = file_sys_stream(vm, "stdout");
    Value err = file_sys_stream(vm, "stderr");
    Value in = file_sys_stream(vm, "stdin");
    set(vm, m, "stdout", out);
    set(vm, m, "stderr", err);
    set(vm, m, "stdin", in);
    set(vm, m, "__stdout__", out);
    set(vm, m, "__stderr__", err);
    set(vm, m, "__stdin__", in);

    /* gpy implements Python 3.11: version checks of scripts take the 3.11 path */
    set(vm, m, "version", str_v(vm, "3.11.0 (gpy " GPY_VERSION ")"));
    set(vm, m, "gpy_version", str_v(vm, GPY_VERSION));
    static const char *const vi_fields[] = {"major", "minor", "micro", "releaselevel", "serial"};
    Value vi[5] = {INT_VAL(3), INT_VAL(11), INT_VAL(0), str_v(vm, "final"), INT_VAL(0)};
    vm_push_root(vm, vi[3]);
    Value version_info = structseq_new(vm, "sys.version_info", vi_fields, 5, 5, vi);
    vm_pop_roots(vm, 1);
    set(vm, m, "version_info", version_info);
    set(vm, m, "hexversion", INT_VAL(0x030B00F0));
    set(vm, m, "api_version", INT_VAL(1013));

    static const char *const impl_fields[] = {"name", "cache_tag", "version", "hexversion"};
    Value impl[4] = {str_v(vm, "gpy"), NONE_VAL, version_info, INT_VAL(0x030B00F0)};
    vm_push_root(vm, impl[0]);
    set(vm, m, "implementation", structseq_new(vm, "sys.implementation", impl_fields, 4, 4, impl));
    vm_pop_roots(vm, 1);

    set(vm, m, "platform", str_v(vm, "linux"));
    set(vm, m, "byteorder", str_v(vm, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "little" : "big"));
    set(vm, m, "maxsize", INT_VAL(INT64_MAX));
    set(vm, m, "maxunicode", INT_VAL(0x10FFFF));
    set(vm, m, "copyright", str_v(vm, "gpy: a Python-like language for GPU programming."));
    set(vm, m, "dont_write_bytecode", BOOL_VAL(true));
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    set(vm, m, "executable", str_v(vm, exe));
    set(vm, m, "prefix", str_v(vm, "/usr/local"));
    set(vm, m, "exec_prefix", str_v(vm, "/usr/local"));

    static const char *const fi_fields[] = {"max",      "max_exp", "max_10_exp", "min",   "min_exp", "min_10_exp",
                                            "dig",      "mant_dig", "epsilon",   "radix", "rounds"};
    Value fi[11] = {FLOAT_VAL(DBL_MAX), INT_VAL(DBL_MAX_EXP), INT_VAL(DBL_MAX_10_EXP), FLOAT_VAL(DBL_MIN),
                    INT_VAL(DBL_MIN_EXP), INT_VAL(DBL_MIN_10_EXP), INT_VAL(DBL_DIG), INT_VAL(DBL_MANT_DIG),
                    FLOAT_VAL(DBL_EPSILON), INT_VAL(FLT_RADIX), INT_VAL(1)};
    set(vm, m, "float_info", structseq_new(vm, "sys.float_info", fi_fields, 11, 11, fi));
    static const char *const ii_fields[] = {"bits_per_digit", "sizeof_digit", "default_max_str_digits",
                                            "str_digits_check_threshold"};
    Value ii[4] = {INT_VAL(64), INT_VAL(8), INT_VAL(4300), INT_VAL(640)};
    set(vm, m, "int_info", structseq_new(vm, "sys.int_info", ii_fields, 4, 4, ii));

    /* names of the builtin (C) modules */
    int64_t count = vm->native_modules ? vm->native_modules->count : 0;
    Tuple *names = tuple_new(vm, count);
    set(vm, m, "builtin_module_names", OBJ_VAL(names));
    if (vm->native_modules) {
        int64_t pos = 0, i = 0;
        Value k, v;
        while (dict_next(vm->native_modules, &pos, &k, &v) && i < count) names->items[i++] = k;
    }
    if (!vm->sys_module) vm->sys_module = m;
    vm_pop_roots(vm, 1);
    return m;
}
