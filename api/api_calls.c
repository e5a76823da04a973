/*
** api_calls.c — module globals, imports and calls from C (include/gpy.h,
** "Module globals" and gpy_call/gpy_call_method). Every entry runs under
** api_protect: an exception raised by the callee comes back as a status,
** with its type, message and traceback kept for gpy_error_*.
*/
#include <limits.h>
#include <string.h>

#include "api.h"
#include "call_fast.h"

/* ---------------------------------------------------------------- globals */

typedef struct GlobalCtx {
    const char *module, *name;
    int slot;
} GlobalCtx;

/* The namespace of an existing module: run or imported before. */
static Dict *module_dict(VM *vm, const char *module) {
    Str *name = api_str(vm, module ? module : "__main__", (size_t)-1, "module name");
    Value m = dict_get_str(vm, vm->modules, name);
    if (IS_EMPTY(m)) vm_raise_kind(vm, ModuleNotFoundError, "No module named '%s'", name->chars);
    if (!IS_OBJ(m) || AS_OBJ(m)->type != vm->t_module)
        vm_raise_kind(vm, TypeError, "sys.modules['%s'] is a '%s', not a module", name->chars, vm_type_name(vm, m));
    return ((Module *)AS_OBJ(m))->dict;
}

/* Like a script's global lookup: the module's namespace, then builtins. */
static void get_global_body(VM *vm, void *ud) {
    GlobalCtx *c = ud;
    Dict *d = module_dict(vm, c->module);
    Str *name = api_str(vm, c->name, (size_t)-1, "global name");
    Value v = dict_get_str(vm, d, name);
    if (IS_EMPTY(v)) v = dict_get_str(vm, vm->builtins, name);
    if (IS_EMPTY(v)) vm_raise_kind(vm, NameError, "name '%s' is not defined", name->chars);
    *api_slot(vm->api, c->slot) = v;
}

GpyStatus gpy_get_global(GpyVM *g, const char *module, const char *name, int dst) {
    if (!api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    GlobalCtx c = {.module = module, .name = name, .slot = dst};
    return api_protect(g, get_global_body, &c);
}

static void set_global_body(VM *vm, void *ud) {
    GlobalCtx *c = ud;
    Dict *d = module_dict(vm, c->module);
    Str *name = api_str(vm, c->name, (size_t)-1, "global name");
    vm_push_root(vm, STR_VAL(name));
    dict_set_str(vm, d, name, *api_slot(vm->api, c->slot));
    vm_pop_roots(vm, 1);
}

GpyStatus gpy_set_global(GpyVM *g, const char *module, const char *name, int value) {
    if (!api_slot_ok(g, value)) return GPY_RUNTIME_ERROR;
    GlobalCtx c = {.module = module, .name = name, .slot = value};
    return api_protect(g, set_global_body, &c);
}

/* `import a.b` binds a; the embedder wants a.b itself. */
static void import_body(VM *vm, void *ud) {
    GlobalCtx *c = ud;
    Str *name = api_str(vm, c->module, (size_t)-1, "module name");
    vm_push_root(vm, STR_VAL(name));
    Value m = vm_import(vm, name, false);
    vm_pop_roots(vm, 1);
    *api_slot(vm->api, c->slot) = m;
}

GpyStatus gpy_import(GpyVM *g, const char *module, int dst) {
    if (!api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    GlobalCtx c = {.module = module, .slot = dst};
    return api_protect(g, import_body, &c);
}

/* ------------------------------------------------------------------ calls */

typedef struct CallCtx {
    int fn, nargs, kwargs, dst;
    const char *method; /* gpy_call_method: the name; NULL for gpy_call */
} CallCtx;

/* Copies the arguments in slots first .. first+n-1 to the top of the VM
** stack, which the collector marks and which a protected call resets when
** it unwinds: the slot array itself may move while the callee runs. */
static Value *push_args(VM *vm, int first, int n) {
    Value *s = vm->stack_top;
    if (n > vm->stack_end - s) vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded");
    if (n > 0) memcpy(s, api_slot(vm->api, first), (size_t)n * sizeof(Value));
    vm->stack_top = s + n;
    return s;
}

/* Validates the argument slots (IndexError for the first bad one). */
static void check_args(VM *vm, const CallCtx *c) {
    GpyVM *g = vm->api;
    if (c->nargs < 0) vm_raise_kind(vm, ValueError, "nargs is %d, not a count", c->nargs);
    int64_t last = (int64_t)c->fn + c->nargs; /* 64-bit: no overflow for any nargs */
    if (c->nargs > 0 && last >= g->count) api_bad_slot(vm, last > INT_MAX ? INT_MAX : (int)last);
}

static void call_body(VM *vm, void *ud) {
    CallCtx *c = ud;
    GpyVM *g = vm->api;
    api_safepoint(vm);
    check_args(vm, c);
    Dict *kw = NULL;
    if (c->kwargs >= 0) {
        api_check_slot(vm, g, c->kwargs);
        Value d = *api_slot(g, c->kwargs);
        if (!IS_DICT(vm, d)) api_wrong_type(vm, c->kwargs, "a dict of keyword arguments");
        /* callees consume the keywords they bind (kwarg_take): give them a
        ** copy, as f(**d) leaves d alone */
        int64_t pos = 0;
        Value k;
        while (dict_next(AS_DICT(d), &pos, &k, NULL))
            if (!IS_STR(vm, k)) vm_raise_kind(vm, TypeError, "keywords must be strings");
        kw = dict_copy(vm, AS_DICT(d));
        vm_push_root(vm, OBJ_VAL(kw));
    }
    Value *args = push_args(vm, c->fn + 1, c->nargs);
    Value r = vm_call_kw(vm, *api_slot(g, c->fn), c->nargs, args, kw);
    vm->stack_top = args;
    if (kw) vm_pop_roots(vm, 1);
    *api_slot(g, c->dst) = r;
}

static __attribute__((noinline)) GpyStatus call_general(GpyVM *g, int fn, int nargs, int kwargs, int dst) {
    if (!api_slot_ok(g, fn) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    CallCtx c = {.fn = fn, .nargs = nargs, .kwargs = kwargs, .dst = dst};
    return api_protect(g, call_body, &c);
}

GpyStatus gpy_call(GpyVM *g, int fn, int nargs, int kwargs, int dst) {
    if (kwargs < 0 && nargs >= 0 && (unsigned)dst < (unsigned)g->count && fn >= 0 && (int64_t)fn + nargs < g->count) {
        /* a script function with plain positional arguments: no vm_pcall */
        VM *vm = g->vm;
        gc_safepoint(vm);
        Value r, *callee = api_slot(g, fn);
        int done = vm_call_protected_fast(vm, *callee, nargs, callee + 1, &r);
        if (done == 1) {
            *api_slot(g, dst) = r; /* the call may have moved g->values */
            if (!IS_NONE(g->error)) gpy_clear_error(g);
            return GPY_OK;
        }
        if (done == 0) return api_record(g, vm->exc_value);
    }
    return call_general(g, fn, nargs, kwargs, dst);
}

static void call_method_body(VM *vm, void *ud) {
    CallCtx *c = ud;
    GpyVM *g = vm->api;
    api_safepoint(vm);
    check_args(vm, c);
    Str *name = api_str(vm, c->method, (size_t)-1, "method name");
    vm_push_root(vm, STR_VAL(name));
    Value *args = push_args(vm, c->fn + 1, c->nargs);
    Value r = vm_call_method(vm, *api_slot(g, c->fn), name, c->nargs, args);
    vm->stack_top = args;
    vm_pop_roots(vm, 1);
    *api_slot(g, c->dst) = r;
}

GpyStatus gpy_call_method(GpyVM *g, int obj, const char *name, int nargs, int dst) {
    if (!api_slot_ok(g, obj) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    CallCtx c = {.fn = obj, .nargs = nargs, .kwargs = -1, .dst = dst, .method = name};
    return api_protect(g, call_method_body, &c);
}
