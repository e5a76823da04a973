/*
** api_core.c — the embedding API's VM lifetime, running code, errors and
** the slot machinery every other api/ file builds on (see api.h).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "../stdlib/open_libs.h"

/* --------------------------------------------------------------- config */

void gpy_config_init(GpyConfig *config) {
    memset(config, 0, sizeof *config);
    config->device = GPY_DEVICE_AUTO;
}

/* ------------------------------------------------------- slots and roots */

static void api_mark(VM *vm) {
    GpyVM *g = vm->api;
    for (int i = 0; i < g->base + g->count; i++) gc_mark_value(vm, g->values[i]);
    for (GpyHandle *h = g->handles; h; h = h->next) gc_mark_value(vm, h->value);
    gc_mark_value(vm, g->error);
    gc_mark_obj(vm, (Obj *)g->exceptions);
}

/* Makes values[0 .. n) exist; false when memory runs out. */
static bool grow_values(GpyVM *g, int n) {
    if (n <= g->cap) return true;
    int cap = g->cap ? g->cap : 16;
    while (cap < n) cap *= 2;
    Value *v = realloc(g->values, (size_t)cap * sizeof(Value));
    if (!v) return false;
    for (int i = g->cap; i < cap; i++) v[i] = NONE_VAL;
    g->values = v;
    g->cap = cap;
    return true;
}

GpyStatus gpy_ensure_slots(GpyVM *g, int count) {
    if (count < 0) count = 0;
    if (count <= g->count) return GPY_OK;
    if (count > (1 << 24) || !grow_values(g, g->base + count)) return api_record(g, g->vm->memory_error);
    for (int i = g->base + g->count; i < g->base + count; i++) g->values[i] = NONE_VAL;
    g->count = count;
    return GPY_OK;
}

int gpy_slot_count(GpyVM *g) { return g->count; }

_Noreturn void api_bad_slot(VM *vm, int slot) {
    GpyVM *g = vm->api;
    vm_raise_kind(vm, IndexError, "slot %d is out of range (this call has %d slots; see gpy_ensure_slots)", slot,
                  g->count);
}

static void raise_bad_slot(VM *vm, void *ud) { api_bad_slot(vm, *(int *)ud); }

bool api_slot_fail(GpyVM *g, int slot) {
    api_protect(g, raise_bad_slot, &slot);
    return false;
}

void api_open_window(VM *vm, GpyVM *g, int count, ApiWindow *saved) {
    saved->base = g->base;
    saved->count = g->count;
    saved->kwargs_slot = g->kwargs_slot;
    int base = g->base + g->count;
    if (!grow_values(g, base + count)) vm_throw(vm, vm->memory_error);
    for (int i = base; i < base + count; i++) g->values[i] = NONE_VAL;
    g->base = base;
    g->count = count;
    g->kwargs_slot = -1;
}

void api_close_window(GpyVM *g, const ApiWindow *saved) {
    /* drop the closed window's references so they can be collected */
    for (int i = g->base; i < g->base + g->count; i++) g->values[i] = NONE_VAL;
    g->base = saved->base;
    g->count = saved->count;
    g->kwargs_slot = saved->kwargs_slot;
}

/* ---------------------------------------------------------------- errors */

static void clear_strings(GpyVM *g) {
    free(g->error_type);
    free(g->error_message);
    free(g->error_traceback);
    g->error_type = g->error_message = g->error_traceback = NULL;
}

void gpy_clear_error(GpyVM *g) {
    clear_strings(g);
    g->error = NONE_VAL;
}

static bool exc_is(VM *vm, Value exc, ExcKind kind) {
    return IS_OBJ(exc) && type_is_subtype(AS_OBJ(exc)->type, vm->exc[kind]);
}

typedef struct ExitCodeCtx {
    Value exc;
    int code;
} ExitCodeCtx;

/* SystemExit's code as CPython computes the process status: None → 0, an
** int → itself, anything else → 1. */
static void exit_code_of(VM *vm, void *ud) {
    ExitCodeCtx *c = ud;
    ExcObj *e = (ExcObj *)AS_OBJ(c->exc);
    Value code = e->dict ? dict_get_cstr(vm, e->dict, "code") : EMPTY_VAL;
    if (IS_EMPTY(code)) {
        int64_t n = e->args ? e->args->len : 0;
        code = n == 0 ? NONE_VAL : n == 1 ? e->args->items[0] : OBJ_VAL(e->args);
    }
    c->code = IS_NONE(code) ? 0 : IS_INTLIKE(code) ? (int)AS_INTLIKE(code) : 1;
}

GpyStatus api_record(GpyVM *g, Value exc) {
    VM *vm = g->vm;
    clear_strings(g);
    g->error = exc;
    vm->exc_value = NONE_VAL;
    if (exc_is(vm, exc, EXC_SyntaxError)) return GPY_SYNTAX_ERROR;
    if (exc_is(vm, exc, EXC_MemoryError)) return GPY_OUT_OF_MEMORY;
    if (exc_is(vm, exc, EXC_KeyboardInterrupt)) return GPY_INTERRUPTED;
    if (exc_is(vm, exc, EXC_SystemExit)) {
        ExitCodeCtx c = {.exc = exc, .code = 1};
        vm_pcall(vm, exit_code_of, &c);
        vm->exc_value = NONE_VAL;
        g->exit_code = c.code;
        return GPY_EXIT;
    }
    return GPY_RUNTIME_ERROR;
}

GpyStatus api_protect(GpyVM *g, void (*fn)(VM *vm, void *ud), void *ud) {
    VM *vm = g->vm;
    if (vm_pcall(vm, fn, ud)) {
        if (!IS_NONE(g->error)) gpy_clear_error(g);
        return GPY_OK;
    }
    return api_record(g, vm->exc_value);
}

const char *gpy_error_type(GpyVM *g) {
    if (IS_NONE(g->error)) return NULL;
    if (!g->error_type) {
        Type *t = IS_OBJ(g->error) ? AS_OBJ(g->error)->type : NULL;
        if (t == g->vm->t_type) t = (Type *)AS_OBJ(g->error); /* an exception class raised as is */
        g->error_type = strdup(t && t->name ? t->name->chars : "Exception");
    }
    return g->error_type;
}

typedef struct MessageCtx {
    Value exc;
    Str *s;
} MessageCtx;

static void message_of(VM *vm, void *ud) {
    MessageCtx *c = ud;
    c->s = exc_message(vm, c->exc);
}

const char *gpy_error_message(GpyVM *g) {
    if (IS_NONE(g->error)) return NULL;
    if (!g->error_message) {
        MessageCtx c = {.exc = g->error, .s = NULL};
        bool ok = vm_pcall(g->vm, message_of, &c);
        g->vm->exc_value = NONE_VAL;
        g->error_message = strdup(ok && c.s ? c.s->chars : "<exception str() failed>");
    }
    return g->error_message;
}

const char *gpy_error_traceback(GpyVM *g) {
    if (IS_NONE(g->error)) return NULL;
    if (!g->error_traceback) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) return NULL;
        exc_print(g->vm, g->error, f);
        fclose(f);
        g->error_traceback = buf;
    }
    return g->error_traceback;
}

GpyStatus gpy_error_value(GpyVM *g, int slot) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    *api_slot(g, slot) = g->error;
    return GPY_OK;
}

int gpy_exit_code(GpyVM *g) { return g->exit_code; }

/* ------------------------------------------------------------- lifetime */

GpyVM *gpy_new(const GpyConfig *config) {
    GpyConfig defaults;
    if (!config) {
        gpy_config_init(&defaults);
        config = &defaults;
    }
    GpyVM *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->error = NONE_VAL;
    g->kwargs_slot = -1;
    VMConfig c;
    vm_config_defaults(&c);
    char empty[] = "";
    char *no_args[] = {empty}; /* sys.argv == [''] (vm_new copies it) */
    c.argc = config->argc > 0 ? config->argc : 1;
    c.argv = config->argc > 0 ? config->argv : no_args;
    c.module_path = (char *)config->module_path;
    c.device = config->device;
    c.cpu_threads = config->cpu_threads;
    c.cache_dir = (char *)config->cache_dir;
    c.jit_module = (char *)config->jit_module;
    c.cuda_home = (char *)config->cuda_home;
    c.libcuda = (char *)config->libcuda;
    c.alloc = config->alloc;
    c.memory_limit = config->memory_limit;
    c.write = config->write;
    c.error = config->error;
    c.load_module = config->load_module;
    c.hook = config->hook;
    c.hook_every = config->hook_every;
    c.time_budget = config->time_budget;
    c.user_data = config->user_data;
    c.open_libs = stdlib_open_libs;
    g->vm = vm_new(&c);
    if (!g->vm) {
        free(g);
        return NULL;
    }
    g->vm->api = g;
    g->vm->api_mark = api_mark;
    return g;
}

void gpy_free(GpyVM *g) {
    if (!g) return;
    /* handles die with the VM: the application must not use them again */
    for (GpyHandle *h = g->handles, *next; h; h = next) {
        next = h->next;
        free(h);
    }
    g->handles = NULL;
    g->base = g->count = 0;
    g->error = NONE_VAL;
    vm_free(g->vm);
    clear_strings(g);
    free(g->values);
    free(g);
}

void *gpy_user_data(GpyVM *g) { return g->vm->config.user_data; }

/* --------------------------------------------------------------- running */

typedef struct RunCtx {
    const char *module;   /* NULL: __main__ */
    const char *filename; /* shown in tracebacks */
    const char *text;
    size_t len;
    const char *path; /* gpy_run_file */
    ParseMode mode;
    int dst;      /* gpy_eval: the slot for the value */
} RunCtx;

/* The module named name (created and registered in sys.modules if new). */
static Module *named_module(VM *vm, const char *name) {
    Str *s = str_cstr(vm, name ? name : "__main__");
    Value m = dict_get_str(vm, vm->modules, s);
    if (IS_OBJ(m) && AS_OBJ(m)->type == vm->t_module) return (Module *)AS_OBJ(m);
    vm_push_root(vm, STR_VAL(s));
    Module *mod = module_new(vm, s);
    dict_set_str(vm, vm->modules, s, OBJ_VAL(mod));
    vm_pop_roots(vm, 1);
    return mod;
}

static void run_body(VM *vm, void *ud) {
    RunCtx *c = ud;
    Module *m = named_module(vm, c->module);
    vm_push_root(vm, OBJ_VAL(m));
    Source *src;
    if (c->path) {
        Str *fname = str_cstr(vm, c->path);
        vm_push_root(vm, STR_VAL(fname));
        int err = 0;
        src = source_from_file(vm, fname, c->path, &err);
        if (!src) {
            ExcKind kind = err == ENOENT ? EXC_FileNotFoundError : err == EACCES ? EXC_PermissionError
                         : err == EISDIR ? EXC_IsADirectoryError : EXC_OSError;
            vm_raise(vm, vm->exc[kind], "[Errno %d] %s: '%s'", err, strerror(err), c->path);
        }
        dict_set_cstr(vm, m->dict, "__file__", STR_VAL(fname));
        vm_pop_roots(vm, 1);
    } else {
        Str *fname = str_cstr(vm, c->filename ? c->filename : "<string>");
        vm_push_root(vm, STR_VAL(fname));
        src = source_new(vm, fname, c->text, c->len);
        vm_pop_roots(vm, 1);
    }
    vm_push_root(vm, OBJ_VAL(src));
    Proto *p = vm_compile_source(vm, src, c->mode);
    vm_push_root(vm, OBJ_VAL(p));
    Value v = vm_exec_proto(vm, p, m->dict);
    if (c->mode == PARSE_EVAL) *api_slot(vm->api, c->dst) = v;
    vm_pop_roots(vm, 3);
}

static GpyStatus run(GpyVM *g, RunCtx *c) {
    g->exit_code = 0;
    g->vm->exit_requested = false;
    return api_protect(g, run_body, c);
}

GpyStatus gpy_run_string(GpyVM *g, const char *module, const char *source, size_t len, const char *filename) {
    if (!source) source = "";
    if (len == (size_t)-1) len = strlen(source);
    RunCtx c = {.module = module, .filename = filename, .text = source, .len = len, .mode = PARSE_FILE};
    return run(g, &c);
}

GpyStatus gpy_run_file(GpyVM *g, const char *module, const char *path) {
    RunCtx c = {.module = module, .path = path ? path : "", .mode = PARSE_FILE};
    return run(g, &c);
}

GpyStatus gpy_eval(GpyVM *g, const char *module, const char *expression, int slot) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    if (!expression) expression = "";
    RunCtx c = {.module = module, .filename = "<string>", .text = expression, .len = strlen(expression),
                .mode = PARSE_EVAL, .dst = slot};
    return run(g, &c);
}
