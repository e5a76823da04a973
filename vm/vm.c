/*
** vm.c — creating and destroying a VM, and running programs: a file, a
** string, or one REPL entry, each in module __main__, with uncaught
** exceptions printed as CPython prints them and SystemExit turned into
** an exit status.
*/
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vm.h"
#include "container.h"
#include "complex_num.h"

#define STACK_VALUES ((size_t)1 << 22) /* 64 MiB of address space; pages are touched lazily */
#define MAX_RECURSION_LIMIT 100000     /* the most sys.setrecursionlimit may allow */
#define FRAMES_CAP (MAX_RECURSION_LIMIT + 64)
#define DEFAULT_RECURSION_LIMIT 1000
#define INITIAL_GC_THRESHOLD ((size_t)8 << 20)

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ------------------------------------------------------------- bootstrap */

static void register_builtin_type(VM *vm, Type *t) {
    if (vm->nbuiltin_types == vm->builtin_types_cap) {
        int32_t cap = vm->builtin_types_cap ? vm->builtin_types_cap * 2 : 64;
        vm->builtin_types = gc_realloc(vm, vm->builtin_types, (size_t)vm->builtin_types_cap * sizeof(Type *),
                                       (size_t)cap * sizeof(Type *));
        vm->builtin_types_cap = cap;
    }
    vm->builtin_types[vm->nbuiltin_types++] = t;
}

/* Step 1: the core type objects, raw (no names, no dicts, no slots yet). */
static void make_core_types(VM *vm) {
    static const char *const names[] = {
        "type", "object", "NoneType", "bool", "int", "float", "str", "list", "tuple", "dict", "set",
        "frozenset", "range", "slice", "function", "builtin_function_or_method", "method", "cell", "module",
        "generator", "code", "source", "NotImplementedType", "ellipsis", "property", "staticmethod",
        "classmethod", "super", "range_iterator", "list_iterator", "tuple_iterator",
    };
    Type **fields[] = {
#define TYPE_PTR(n) &vm->t_##n,
        CORE_TYPES(TYPE_PTR)
#undef TYPE_PTR
    };
    _Static_assert(sizeof names / sizeof names[0] == sizeof fields / sizeof fields[0],
                   "CORE_TYPES and the name table disagree");
    size_t n = sizeof names / sizeof names[0];
    for (size_t i = 0; i < n; i++) {
        Type *t = gc_alloc_obj(vm, vm->t_type, sizeof(Type));
        *fields[i] = t;
        if (i == 0) t->obj.type = t; /* type is an instance of itself */
        t->cname = names[i];
    }
    for (size_t i = 0; i < n; i++) {
        Type *t = *fields[i];
        t->base = t == vm->t_object ? NULL : t == vm->t_bool ? vm->t_int : vm->t_object;
        register_builtin_type(vm, t);
    }
    vm->t_object->flags |= TYPE_BASETYPE;
}

static Str *intern(VM *vm, const char *s) { return str_intern(vm, s, strlen(s)); }

/* Step 2: the interned strings every part of the VM uses. */
static void make_strings(VM *vm) {
    vm->empty_str = str_intern(vm, "", 0);
    for (int i = 0; i < 128; i++) {
        char c = (char)i;
        vm->single_chars[i] = str_intern(vm, &c, 1);
    }
    vm->sym_init = intern(vm, "__init__");
    vm->sym_new = intern(vm, "__new__");
    vm->sym_repr = intern(vm, "__repr__");
    vm->sym_str = intern(vm, "__str__");
    vm->sym_call = intern(vm, "__call__");
    vm->sym_name = intern(vm, "__name__");
    vm->sym_class = intern(vm, "__class__");
    vm->sym_dict = intern(vm, "__dict__");
    vm->sym_doc = intern(vm, "__doc__");
    vm->sym_module = intern(vm, "__module__");
    vm->sym_qualname = intern(vm, "__qualname__");
    vm->sym_main = intern(vm, "__main__");
    /* spelled out: snprintf costs more than the interning itself */
#define DUNDERS(x) {"__" x "__", "__r" x "__", "__i" x "__"}
    static const char *const names[BINOP__COUNT][3] = {
        DUNDERS("add"),      DUNDERS("sub"), DUNDERS("mul"), DUNDERS("matmul"), DUNDERS("truediv"),
        DUNDERS("floordiv"), DUNDERS("mod"), DUNDERS("pow"), DUNDERS("lshift"), DUNDERS("rshift"),
        DUNDERS("and"),      DUNDERS("or"),  DUNDERS("xor")};
#undef DUNDERS
    for (int i = 0; i < BINOP__COUNT; i++) {
        vm->dunder_binop[i] = intern(vm, names[i][0]);
        vm->dunder_rbinop[i] = intern(vm, names[i][1]);
        vm->dunder_ibinop[i] = intern(vm, names[i][2]);
    }
}

/* sys.path: the script's directory ('' until a file runs), then the
** configured module path. */
static void make_sys_path(VM *vm) {
    vm->sys_path = list_new(vm, 4);
    list_append(vm, vm->sys_path, STR_VAL(vm->empty_str));
    const char *gp = vm->config.module_path;
    while (gp && *gp) {
        const char *colon = strchr(gp, ':');
        size_t n = colon ? (size_t)(colon - gp) : strlen(gp);
        if (n > 0) list_append(vm, vm->sys_path, STR_VAL(str_new(vm, gp, n)));
        gp = colon ? colon + 1 : NULL;
    }
}

/* Steps 3 and 4: names and dicts of the core types, every per-type init,
** the module system, then the libraries (config.open_libs: vm/ does not
** know stdlib/) with sys among them. */
static void init_all(VM *vm, void *ud) {
    void (*open_libs)(VM *) = (void (*)(VM *))ud;
    for (int32_t i = 0; i < vm->nbuiltin_types; i++) {
        Type *t = vm->builtin_types[i];
        t->name = intern(vm, t->cname);
        t->dict = dict_new(vm);
    }
    vm->builtins = dict_new(vm);
    vm->modules = dict_new(vm);
    vm->native_modules = dict_new(vm);

    function_init(vm);
    class_init(vm);
    number_init(vm);
    complex_init(vm);
    str_init(vm);
    list_init(vm);
    tuple_init(vm);
    dict_init(vm);
    set_init(vm);
    range_init(vm);
    slice_init(vm);
    generator_init(vm);
    coroutine_init(vm);
    error_init(vm);
    module_init(vm);
    bytes_init(vm);
    /* list.__hash__ is None, as in Python: what the unhashable builtins show */
    for (int32_t i = 0; i < vm->nbuiltin_types; i++)
        if (vm->builtin_types[i]->hash == ctr_unhashable) dict_set_str(vm, vm->builtin_types[i]->dict, intern(vm, "__hash__"), NONE_VAL);

    int argc = vm->config.argc;
    vm->sys_argv = list_new(vm, argc > 0 ? argc : 1);
    for (int i = 0; i < argc; i++) list_append(vm, vm->sys_argv, STR_VAL(str_cstr(vm, vm->config.argv[i])));
    if (argc == 0) list_append(vm, vm->sys_argv, STR_VAL(vm->empty_str));
    make_sys_path(vm);

    if (open_libs) open_libs(vm);

    Module *bm = module_new(vm, intern(vm, "builtins"));
    bm->dict = vm->builtins;
    dict_set_str(vm, vm->builtins, vm->sym_name, STR_VAL(bm->name));
    dict_set_cstr(vm, vm->modules, "builtins", OBJ_VAL(bm));

    Module *mm = module_new(vm, vm->sym_main);
    dict_set_str(vm, vm->modules, vm->sym_main, OBJ_VAL(mm));
}

static char *dup_or_null(const char *s, bool *ok) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *ok = false;
    return d;
}

/* The owned copy of config in vm->config (strings and argv duplicated). */
static bool copy_config(VM *vm, const VMConfig *config) {
    bool ok = true;
    vm->config = *config;
    VMConfig *c = &vm->config;
    c->module_path = dup_or_null(config->module_path, &ok);
    c->cache_dir = dup_or_null(config->cache_dir, &ok);
    c->jit_module = dup_or_null(config->jit_module, &ok);
    c->cuda_home = dup_or_null(config->cuda_home, &ok);
    c->cuda_arch = dup_or_null(config->cuda_arch, &ok);
    c->libcuda = dup_or_null(config->libcuda, &ok);
    c->dump_ptx = dup_or_null(config->dump_ptx, &ok);
    c->argv = NULL;
    if (config->argc > 0) {
        c->argv = calloc((size_t)config->argc, sizeof(char *));
        if (!c->argv) return false;
        for (int i = 0; i < config->argc; i++) c->argv[i] = dup_or_null(config->argv[i], &ok);
    }
    return ok;
}

static void free_config(VMConfig *c) {
    free(c->module_path);
    free(c->cache_dir);
    free(c->jit_module);
    free(c->cuda_home);
    free(c->cuda_arch);
    free(c->libcuda);
    free(c->dump_ptx);
    if (c->argv)
        for (int i = 0; i < c->argc; i++) free(c->argv[i]);
    free(c->argv);
    memset(c, 0, sizeof *c);
}

void vm_config_defaults(VMConfig *config) {
    memset(config, 0, sizeof *config);
    config->cpu_regions = -1;
}

/* The value stack and the frame array are large (72 MiB of address space)
** and mostly never touched: mapped directly, their pages are zeroed by the
** kernel on first touch. calloc would do the same only while glibc keeps
** such sizes in mmap; after a few frees its mmap threshold rises and calloc
** memsets the whole block, which made creating a VM cost ~0.5 ms. */
static void *zeroed_map(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* One mapping holds both: the frame array, then the value stack. */
#define STACKS_BYTES (FRAMES_CAP * sizeof(Frame) + STACK_VALUES * sizeof(Value))
_Static_assert(FRAMES_CAP * sizeof(Frame) % _Alignof(Value) == 0, "the value stack follows the frames aligned");

static void unmap_stacks(VM *vm) {
    if (vm->frames) munmap(vm->frames, STACKS_BYTES);
}

VM *vm_new(const VMConfig *config) {
    VM *vm = calloc(1, sizeof(VM));
    if (!vm) return NULL;
    vm->frames = zeroed_map(STACKS_BYTES);
    if (vm->frames) vm->stack = (Value *)(vm->frames + FRAMES_CAP);
    if (!vm->frames || !copy_config(vm, config)) {
        free_config(&vm->config);
        unmap_stacks(vm);
        free(vm);
        return NULL;
    }
    vm->stack_top = vm->stack;
    vm->stack_end = vm->stack + STACK_VALUES;
    vm->frames_cap = FRAMES_CAP;
    vm->recursion_limit = DEFAULT_RECURSION_LIMIT;
    vm->next_gc = INITIAL_GC_THRESHOLD;
    vm->gc_stress = config->gc_stress;
    vm->budget_plain = !config->hook && !(config->time_budget > 0) && !config->gc_stress;
    vm->exc_value = NONE_VAL;
    vm->gc_running = true; /* no collection until the bootstrap is complete */

    /* Before error_init, any raise is a fatal bootstrap bug (vm_raise aborts). */
    make_core_types(vm);
    make_strings(vm);
    if (!vm_pcall(vm, init_all, (void *)config->open_libs)) {
        fprintf(stderr, "gpy: fatal error: VM initialization failed\n");
        if (!IS_EMPTY(vm->exc_value) && vm->exc[EXC_BaseException]) exc_print(vm, vm->exc_value, stderr);
        vm->gc_running = false;
        vm_free(vm);
        return NULL;
    }
    vm->gc_running = false;
    vm->exc_value = NONE_VAL;
    if (vm->config.memory_limit && vm->bytes_allocated > vm->config.memory_limit) {
        vm_free(vm); /* a limit too small for the VM itself (gc.c checks it only from here on) */
        return NULL;
    }
    return vm;
}

void vm_stream_write(VM *vm, Value stream, Str *s) {
    if (IS_NONE(stream)) return;
    if (IS_EMPTY(stream)) {
        fwrite(s->chars, 1, (size_t)s->len, stdout);
        return;
    }
    Value a = STR_VAL(s);
    vm_call_method(vm, stream, str_intern(vm, "write", 5), 1, &a);
}

void vm_stream_flush(VM *vm, Value stream) {
    if (IS_NONE(stream)) return;
    if (IS_EMPTY(stream)) {
        fflush(stdout);
        return;
    }
    /* a closed stream is skipped, as CPython's flush of the standard streams does */
    Value closed = vm_getattr_opt(vm, stream, str_intern(vm, "closed", 6));
    if (!IS_EMPTY(closed) && vm_truthy(vm, closed)) return;
    Value flush = vm_getattr_opt(vm, stream, str_intern(vm, "flush", 5));
    if (!IS_EMPTY(flush)) vm_call(vm, flush, 0, NULL);
}

static void flush_std(VM *vm, void *ud) {
    (void)ud;
    if (!IS_EMPTY(vm->sys_stdout)) vm_stream_flush(vm, vm->sys_stdout);
    if (!IS_EMPTY(vm->sys_stderr)) vm_stream_flush(vm, vm->sys_stderr);
}

/* Flushes sys.stdout and sys.stderr, ignoring errors (e.g. a closed pipe). */
static void flush_streams(VM *vm) {
    Value saved = vm->exc_value;
    vm_pcall(vm, flush_std, NULL);
    vm->exc_value = saved;
    fflush(stdout);
}

void vm_on_free(VM *vm, void (*hook)(VM *vm)) {
    for (int32_t i = 0; i < vm->nfree_hooks; i++)
        if (vm->free_hooks[i] == hook) return;
    if (vm->nfree_hooks >= (int32_t)(sizeof vm->free_hooks / sizeof vm->free_hooks[0])) abort();
    vm->free_hooks[vm->nfree_hooks++] = hook;
}

void vm_free(VM *vm) {
    if (!vm) return;
    vm->nframes = 0;
    vm->stack_top = vm->stack;
    vm->nroots = 0;
    /* generators left suspended in a try block run their finally (gen_finalize.c) */
    if (vm->memory_error.tag == VAL_OBJ) gen_close_all(vm);
    if (vm->memory_error.tag == VAL_OBJ) flush_streams(vm);
    while (vm->nfree_hooks > 0) vm->free_hooks[--vm->nfree_hooks](vm);
    gc_free_all(vm);
    free(vm->strings.slots);
    unmap_stacks(vm);
    free(vm->roots);
    gc_free(vm, vm->builtin_types, (size_t)vm->builtin_types_cap * sizeof(Type *));
    free_config(&vm->config);
    fflush(stdout);
    fflush(stderr);
    free(vm);
}

/* ------------------------------------------------------------- running */

static Module *main_module(VM *vm) {
    Value m = dict_get_str(vm, vm->modules, vm->sym_main);
    if (IS_OBJ(m) && AS_OBJ(m)->type == vm->t_module) return (Module *)AS_OBJ(m);
    Module *mm = module_new(vm, vm->sym_main);
    dict_set_str(vm, vm->modules, vm->sym_main, OBJ_VAL(mm));
    return mm;
}

typedef struct StrCall {
    Value v;
    Str *s;
} StrCall;

static void str_of(VM *vm, void *ud) {
    StrCall *c = ud;
    c->s = vm_str(vm, c->v);
}

/* SystemExit's status: None -> 0, an int -> itself, anything else is
** printed to stderr and gives 1 (CPython's handle_system_exit). */
static int system_exit_code(VM *vm, Value exc) {
    ExcObj *e = (ExcObj *)AS_OBJ(exc);
    Value code = e->dict ? dict_get_cstr(vm, e->dict, "code") : EMPTY_VAL;
    if (IS_EMPTY(code)) {
        int64_t n = e->args ? e->args->len : 0;
        code = n == 0 ? NONE_VAL : n == 1 ? e->args->items[0] : OBJ_VAL(e->args);
    }
    if (IS_NONE(code)) return 0;
    if (IS_INTLIKE(code)) return (int)AS_INTLIKE(code);
    StrCall c = {.v = code, .s = NULL};
    if (vm_pcall(vm, str_of, &c) && c.s) {
        fwrite(c.s->chars, 1, (size_t)c.s->len, stderr);
        fputc('\n', stderr);
    }
    return 1;
}

/* Reports an exception that reached the top: SystemExit gives its code,
** KeyboardInterrupt 128 + SIGINT (the caller ends the process by SIGINT,
** as CPython does), anything else prints its traceback and gives 1.
** Like CPython, stdout is flushed later, at exit, where a failure
** changes the exit status (repl/main.c). */
static int handle_uncaught(VM *vm, Value exc) {
    vm_push_root(vm, exc);
    int rc;
    if (IS_OBJ(exc) && type_is_subtype(AS_OBJ(exc)->type, vm->exc[EXC_SystemExit])) {
        rc = system_exit_code(vm, exc);
        vm->exit_requested = true;
        vm->exit_code = rc;
    } else {
        exc_print(vm, exc, stderr);
        bool interrupt = IS_OBJ(exc) && type_is_subtype(AS_OBJ(exc)->type, vm->exc[EXC_KeyboardInterrupt]);
        rc = interrupt ? 128 + SIGINT : 1;
    }
    fflush(stderr);
    vm_pop_roots(vm, 1);
    vm->exc_value = NONE_VAL;
    return rc;
}

typedef struct RunCtx {
    const char *filename; /* for source text given as a string */
    const char *text;
    size_t len;
    const char *path; /* for vm_run_file */
    int open_errno;
    ParseMode mode;
} RunCtx;

/* sys.path[0] = the absolute directory of the script. */
static void set_script_dir(VM *vm, const char *path) {
    char resolved[PATH_MAX];
    Str *dir;
    if (realpath(path, resolved)) {
        char *slash = strrchr(resolved, '/');
        dir = slash == resolved ? str_cstr(vm, "/") : str_new(vm, resolved, slash ? (size_t)(slash - resolved) : 0);
    } else {
        const char *slash = strrchr(path, '/');
        dir = slash ? str_new(vm, path, slash == path ? 1 : (size_t)(slash - path)) : vm->empty_str;
    }
    if (vm->sys_path && vm->sys_path->len > 0) vm->sys_path->items[0] = STR_VAL(dir);
    else if (vm->sys_path) list_append(vm, vm->sys_path, STR_VAL(dir));
}

static void run_body(VM *vm, void *ud) {
    RunCtx *c = ud;
    Module *mm = main_module(vm);
    Source *src;
    if (c->path) {
        /* like CPython, tracebacks and __file__ name the script by its absolute path */
        char abspath[4096];
        const char *shown = c->path;
        if (c->path[0] != '/' && realpath(c->path, abspath)) shown = abspath;
        Str *fname = str_cstr(vm, shown);
        vm_push_root(vm, STR_VAL(fname));
        src = source_from_file(vm, fname, c->path, &c->open_errno);
        vm_pop_roots(vm, 1);
        if (!src) return;
        vm->main_file = fname;
        dict_set_cstr(vm, mm->dict, "__file__", STR_VAL(fname));
        set_script_dir(vm, c->path);
    } else {
        Str *fname = str_cstr(vm, c->filename);
        vm_push_root(vm, STR_VAL(fname));
        src = source_new(vm, fname, c->text, c->len);
        if (c->mode == PARSE_INTERACTIVE && (vm->prompt_tracebacks & VM_TB_ENTRY_LINES))
            src->obj.flags |= SOURCE_PROMPT_ENTRY;
        vm_pop_roots(vm, 1);
    }
    vm_push_root(vm, OBJ_VAL(src));
    Proto *p = vm_compile_source(vm, src, c->mode);
    vm_push_root(vm, OBJ_VAL(p));
    vm_exec_proto(vm, p, mm->dict);
    vm_pop_roots(vm, 2);
}

static int run(VM *vm, RunCtx *c) {
    vm->exit_requested = false;
    int rc = vm_pcall(vm, run_body, c) ? 0 : handle_uncaught(vm, vm->exc_value);
    return rc;
}

int vm_run_source(VM *vm, const char *filename, const char *text, size_t len) {
    RunCtx c = {.filename = filename ? filename : "<string>", .text = text, .len = len, .mode = PARSE_FILE};
    return run(vm, &c);
}

int vm_run_file(VM *vm, const char *path) {
    RunCtx c = {.path = path, .mode = PARSE_FILE};
    int rc = run(vm, &c);
    if (c.open_errno) {
        fprintf(stderr, "gpy: can't open file '%s': [Errno %d] %s\n", path, c.open_errno, strerror(c.open_errno));
        return 2;
    }
    return rc;
}

int vm_run_interactive(VM *vm, const char *text, size_t len) {
    vm->interactive = true;
    RunCtx c = {.filename = "<stdin>", .text = text, .len = len, .mode = PARSE_INTERACTIVE};
    return run(vm, &c);
}
