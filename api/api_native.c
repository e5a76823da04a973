/*
** api_native.c — what an application defines in C for its scripts (gpy.h
** "C functions, modules, classes"): C functions, native modules, exception
** classes, and foreign classes whose instances carry the application's data.
**
** A C function is a builtin_function object (a NativeFunction followed by
** the GpyCFunction, its user pointer and its name, in one allocation) whose
** NativeFn is one trampoline, cfunc_call. The trampoline gives the C
** function a fresh window of slots, and when it returns a failure status
** re-raises the exception the C function left pending (GpyVM.error) from
** inside the VM: the longjmp starts in the trampoline after the C function
** has returned, so it never crosses the application's frames.
**
** A foreign class is a builtin-style type (flag TYPE_FOREIGN) allocated as a
** ForeignType, which keeps the application's GpyClassDef and user pointer
** after the Type. Its instances are ForeignObj: the Instance layout (so
** scripts can subclass it) followed by def->size zeroed bytes.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "class_internal.h"

/* ---------------------------------------------------------- C functions */

typedef struct CFunc {
    NativeFunction nf; /* nf.fn is cfunc_call; nf.name points at name */
    GpyCFunction fn;
    void *user;
    char name[];
} CFunc;

/* Re-raises, inside the VM, the exception a C function left pending when it
** returned a failure status. gpy_raise raised it already (vm_throw set its
** __context__ then), so it goes on as is. */
static _Noreturn void raise_pending(VM *vm, GpyVM *g, const char *fname) {
    Value exc = g->error;
    if (IS_NONE(exc))
        vm_raise_kind(vm, SystemError, "%s() returned an error status without setting an exception", fname);
    gpy_clear_error(g);
    vm_rethrow(vm, exc);
}

/* The NativeFn of every C function: slot 0 None (the result), slots
** 1..argc the arguments, then the keyword dict when the caller passed any.
** This is the path of every call of a C function from a script, so the
** window is opened inline when the slot array has room (api_open_window
** otherwise) and closed without clearing: slots above the open window are
** neither marked nor readable, and the next window overwrites them. */
static Value cfunc_call(VM *vm, int argc, Value *argv, Dict *kwargs) {
    CFunc *cf = (CFunc *)vm_current_native(vm);
    GpyVM *g = vm->api;
    int nkw = kwargs && kwargs->count > 0 ? 1 : 0;
    int count = argc + 1 + nkw;
    ApiWindow saved = {g->base, g->count, g->kwargs_slot};
    int base = g->base + g->count;
    if (base + count <= g->cap) {
        g->base = base;
        g->count = count;
        g->kwargs_slot = -1;
    } else {
        /* a caller (gpy_call) may pass arguments that live in the slot
        ** array, which growing it moves */
        ptrdiff_t in_slots = -1;
        if (g->values && argv >= g->values && argv < g->values + g->cap) in_slots = argv - g->values;
        api_open_window(vm, g, count, &saved);
        if (in_slots >= 0) argv = g->values + in_slots;
    }
    Value *w = g->values + base;
    w[0] = NONE_VAL;
    for (int i = 0; i < argc; i++) w[1 + i] = argv[i];
    if (nkw) {
        w[argc + 1] = OBJ_VAL(kwargs);
        g->kwargs_slot = argc + 1;
    }
    /* a failure status refers to an exception raised during this call only */
    if (!IS_NONE(g->error)) gpy_clear_error(g);
    GpyStatus status = cf->fn(g, argc, cf->user);
    Value result = g->values[base]; /* the C function may have grown (moved) its slots */
    g->base = saved.base;
    g->count = saved.count;
    g->kwargs_slot = saved.kwargs_slot;
    if (status != GPY_OK) raise_pending(vm, g, cf->name);
    return result;
}

/* A C function as a builtin_function; a method (method true) of the type
** in data has its self checked by the call path (NATIVE_FLAG_METHOD). */
static Value cfunc_new(VM *vm, const char *name, GpyCFunction fn, void *user, Value data, bool method) {
    size_t n = strlen(name);
    if (n > (1u << 20)) vm_raise_kind(vm, ValueError, "function name too long");
    CFunc *cf = gc_alloc_obj(vm, vm->t_builtin_function, sizeof(CFunc) + n + 1);
    memcpy(cf->name, name, n + 1);
    cf->nf.name = cf->name;
    cf->nf.fn = cfunc_call;
    cf->nf.data = data;
    cf->fn = fn;
    cf->user = user;
    if (method) cf->nf.obj.flags |= NATIVE_FLAG_METHOD;
    return OBJ_VAL(cf);
}

int gpy_kwargs_slot(GpyVM *g) { return g->kwargs_slot; }

/* ----------------------------------------------------------- exceptions */

/* The exception class named name: a builtin ("ValueError") or one made by
** gpy_new_exception ("module.Name"). */
static Type *exception_type(VM *vm, const char *name) {
    GpyVM *g = vm->api;
    if (!name) name = "Exception";
    Value v = EMPTY_VAL;
    if (strchr(name, '.')) {
        if (g->exceptions) v = dict_get_cstr(vm, g->exceptions, name);
    } else {
        v = dict_get_cstr(vm, vm->builtins, name);
    }
    if (IS_OBJ(v) && AS_OBJ(v)->type == vm->t_type && (((Type *)AS_OBJ(v))->flags & TYPE_EXCEPTION))
        return (Type *)AS_OBJ(v);
    vm_raise_kind(vm, SystemError,
                  "unknown exception type '%s' (expected a builtin exception name such as 'ValueError', or "
                  "'module.Name' of a class made by gpy_new_exception)",
                  name);
}

typedef struct RaiseCtx {
    const char *type;
    const char *msg; /* NULL: no arguments */
    size_t len;
    Value value; /* gpy_raise_slot */
} RaiseCtx;

/* Raised here so that vm_throw instantiates and checks the value and sets
** __context__ as a raise statement would; api_protect records it. */
static void raise_new(VM *vm, void *ud) {
    RaiseCtx *c = ud;
    Type *t = exception_type(vm, c->type);
    Value exc;
    if (c->msg) {
        Value m = STR_VAL(str_new(vm, c->msg, c->len));
        vm_push_root(vm, m);
        exc = vm_call(vm, OBJ_VAL(t), 1, &m);
        vm_pop_roots(vm, 1);
    } else {
        exc = vm_call(vm, OBJ_VAL(t), 0, NULL);
    }
    vm_throw(vm, exc);
}

GpyStatus gpy_raise(GpyVM *g, const char *type, const char *fmt, ...) {
    char buf[256];
    char *msg = NULL;
    int n = 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        if (n < 0) n = 0;
        msg = buf;
        if ((size_t)n >= sizeof buf) {
            msg = malloc((size_t)n + 1);
            if (!msg) return api_record(g, g->vm->memory_error);
            va_start(ap, fmt);
            vsnprintf(msg, (size_t)n + 1, fmt, ap);
            va_end(ap);
        }
    }
    RaiseCtx c = {.type = type, .msg = msg, .len = (size_t)n};
    GpyStatus status = api_protect(g, raise_new, &c);
    if (msg && msg != buf) free(msg);
    return status;
}

static void raise_value(VM *vm, void *ud) { vm_throw(vm, ((RaiseCtx *)ud)->value); }

GpyStatus gpy_raise_slot(GpyVM *g, int slot) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    RaiseCtx c = {.value = *api_slot(g, slot)};
    return api_protect(g, raise_value, &c);
}

/* -------------------------------------------------------------- modules */

/* The module in slot, or a TypeError naming what is there instead. */
static Module *module_in_slot(VM *vm, int slot, const char *fname) {
    Value v = *api_slot(vm->api, slot);
    if (!IS_OBJ(v) || AS_OBJ(v)->type != vm->t_module)
        vm_raise_kind(vm, TypeError, "%s: slot %d holds a '%s' object, not a module", fname, slot,
                      vm_type_name(vm, v));
    return (Module *)AS_OBJ(v);
}

typedef struct NativeCtx {
    const char *name;
    int slot, dst;
    GpyCFunction fn;
    void *user;
    const char *base;
    const GpyClassDef *def;
    void **data;
} NativeCtx;

static void new_module(VM *vm, void *ud) {
    NativeCtx *c = ud;
    if (!c->name || !c->name[0]) vm_raise_kind(vm, ValueError, "Empty module name");
    Str *name = str_cstr(vm, c->name);
    vm_push_root(vm, STR_VAL(name));
    Module *m = module_new(vm, name);
    dict_set_str(vm, vm->modules, name, OBJ_VAL(m)); /* `import name` finds it there */
    vm_pop_roots(vm, 1);
    *api_slot(vm->api, c->dst) = OBJ_VAL(m);
}

GpyStatus gpy_new_module(GpyVM *g, const char *name, int slot) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    NativeCtx c = {.name = name, .dst = slot};
    return api_protect(g, new_module, &c);
}

static void install_special(VM *vm, Type *t); /* foreign classes, below */

static void add_function(VM *vm, void *ud) {
    NativeCtx *c = ud;
    if (!c->name || !c->fn) vm_raise_kind(vm, ValueError, "gpy_add_function: name and fn must not be NULL");
    Value target = *api_slot(vm->api, c->slot);
    Str *name = str_cstr(vm, c->name);
    vm_push_root(vm, STR_VAL(name));
    if (IS_OBJ(target) && AS_OBJ(target)->type == vm->t_module) {
        Module *m = (Module *)AS_OBJ(target);
        dict_set_str(vm, m->dict, name, cfunc_new(vm, c->name, c->fn, c->user, target, false));
    } else if (IS_OBJ(target) && AS_OBJ(target)->type == vm->t_type) {
        Type *t = (Type *)AS_OBJ(target);
        Value f = cfunc_new(vm, c->name, c->fn, c->user, target, true);
        if (t->flags & TYPE_FOREIGN) {
            /* scripts cannot change a foreign class's dict; C code may */
            dict_set_str(vm, t->dict, name, f);
            install_special(vm, t);
            t->version = class_next_version(vm);
        } else {
            vm_push_root(vm, f);
            vm_setattr(vm, target, name, f); /* a script's class; a builtin type refuses */
            vm_pop_roots(vm, 1);
        }
    } else {
        vm_raise_kind(vm, TypeError, "gpy_add_function: slot %d holds a '%s' object, not a module or class", c->slot,
                      vm_type_name(vm, target));
    }
    vm_pop_roots(vm, 1);
}

GpyStatus gpy_add_function(GpyVM *g, int module, const char *name, GpyCFunction fn, void *user) {
    if (!api_slot_ok(g, module)) return GPY_RUNTIME_ERROR;
    NativeCtx c = {.name = name, .slot = module, .fn = fn, .user = user};
    return api_protect(g, add_function, &c);
}

static void new_exception(VM *vm, void *ud) {
    NativeCtx *c = ud;
    GpyVM *g = vm->api;
    Module *m = module_in_slot(vm, c->slot, "gpy_new_exception");
    if (!c->name || !c->name[0] || strchr(c->name, '.'))
        vm_raise_kind(vm, ValueError, "gpy_new_exception: '%s' is not a valid class name", c->name ? c->name : "");
    Value base = OBJ_VAL(exception_type(vm, c->base));
    int roots = vm->nroots;
    Tuple *bases = tuple_from_array(vm, 1, &base);
    vm_push_root(vm, OBJ_VAL(bases));
    Dict *ns = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(ns));
    dict_set_str(vm, ns, vm->sym_module, STR_VAL(m->name)); /* tracebacks print module.Name */
    Str *name = str_cstr(vm, c->name);
    vm_push_root(vm, STR_VAL(name));
    Value cls = class_new(vm, name, bases, ns);
    vm_push_root(vm, cls);
    dict_set_str(vm, m->dict, name, cls);
    if (!g->exceptions) g->exceptions = dict_new(vm);
    dict_set_str(vm, g->exceptions, str_printf(vm, "%s.%s", m->name->chars, c->name), cls);
    *api_slot(g, c->dst) = cls;
    vm_pop_roots(vm, vm->nroots - roots);
}

GpyStatus gpy_new_exception(GpyVM *g, int module, const char *name, const char *base, int dst) {
    if (!api_slot_ok(g, module) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    NativeCtx c = {.name = name, .slot = module, .base = base, .dst = dst};
    return api_protect(g, new_exception, &c);
}

/* ------------------------------------------------------- foreign classes */

typedef struct ForeignType {
    Type type; /* flags has TYPE_FOREIGN */
    const GpyClassDef *def;
    void *user;
} ForeignType;

typedef struct ForeignObj {
    Obj obj;
    Dict *dict;             /* Instance layout: the dict of scripts' subclasses */
    const GpyClassDef *def; /* NULL once finalized */
    void *user;
    max_align_t data[];     /* def->size bytes, zeroed */
} ForeignObj;

/* The foreign class t is or derives from (scripts may subclass one), or NULL. */
static ForeignType *foreign_of(Type *t) {
    for (; t; t = t->base)
        if (t->flags & TYPE_FOREIGN) return (ForeignType *)t;
    return NULL;
}

bool api_is_foreign(VM *vm, Value v) {
    (void)vm;
    return IS_OBJ(v) && foreign_of(AS_OBJ(v)->type) != NULL;
}

static ForeignObj *foreign_alloc(VM *vm, Type *cls, ForeignType *ft) {
    ForeignObj *o = gc_alloc_obj(vm, cls, sizeof(ForeignObj) + ft->def->size);
    o->def = ft->def;
    o->user = ft->user;
    return o;
}

/* Name(args): a zeroed instance, then init with the arguments, unless a
** script's subclass defines __init__ (heap_new calls that one, which may
** call the class's own through super().__init__). */
static Value foreign_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    ForeignType *ft = foreign_of(cls);
    Value obj = OBJ_VAL(foreign_alloc(vm, cls, ft));
    if ((cls->flags & TYPE_HEAP) && !IS_EMPTY(class_heap_lookup(vm, cls, vm->sym_init))) return obj;
    Value init = dict_get_str(vm, ft->type.dict, vm->sym_init);
    if (!IS_EMPTY(init)) {
        vm_push_root(vm, obj);
        class_call_prepend(vm, init, obj, argc, argv, kwargs);
        vm_pop_roots(vm, 1);
    } else if (argc > 0 || (kwargs && kwargs->count > 0)) {
        vm_raise_kind(vm, TypeError, "%s() takes no arguments", class_type_name(cls));
    }
    return obj;
}

static void foreign_mark(VM *vm, Obj *o) { gc_mark_obj(vm, (Obj *)((ForeignObj *)o)->dict); }

/* Runs when the instance is collected or the VM freed: once. */
static void foreign_finalize(VM *vm, Obj *o) {
    (void)vm;
    ForeignObj *f = (ForeignObj *)o;
    const GpyClassDef *def = f->def;
    f->def = NULL;
    if (def && def->finalize) def->finalize(f->data, f->user);
}

/* Special methods. A foreign class's methods named like Python's special
** methods back the operations on its instances, as a script class's do:
** repr(v) calls __repr__, len(v) __len__, v[k] __getitem__, v(...)
** __call__, v == w __eq__, -v __neg__, v + w __add__ or w.__radd__(v), ...
** install_special points the type's slots at the functions below, which
** look the method up on the instance's class (a script's subclass may
** override it). */
static const char *const cmp_names[] = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"};
static const char *const unop_names[] = {"__neg__", "__pos__", "__invert__"};

/* self.name(args) when self's class has name (EMPTY when it has not). */
static Value call_special(VM *vm, Value self, const char *name, int argc, const Value *args, Dict *kwargs) {
    Value m = type_lookup(vm, vm_typeof(vm, self), str_cstr(vm, name));
    if (IS_EMPTY(m) || IS_NONE(m)) return EMPTY_VAL;
    return class_call_meth(vm, m, self, argc, args, kwargs);
}

/* EMPTY for a missing method or NotImplemented: the operation goes on elsewhere. */
static Value implemented(VM *vm, Value r) { return vm_is(r, vm->not_implemented) ? EMPTY_VAL : r; }

static Value special_repr(VM *vm, Value self) { return call_special(vm, self, "__repr__", 0, NULL, NULL); }
static Value special_str(VM *vm, Value self) { return call_special(vm, self, "__str__", 0, NULL, NULL); }

static int64_t special_len(VM *vm, Value self) {
    Value r = call_special(vm, self, "__len__", 0, NULL, NULL);
    if (!IS_INTLIKE(r))
        vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, r));
    if (AS_INTLIKE(r) < 0) vm_raise_kind(vm, ValueError, "__len__() should return >= 0");
    return AS_INTLIKE(r);
}

static bool special_truthy(VM *vm, Value self) {
    Value r = call_special(vm, self, "__bool__", 0, NULL, NULL);
    if (!IS_BOOL(r)) vm_raise_kind(vm, TypeError, "__bool__ should return bool, returned %s", vm_type_name(vm, r));
    return AS_BOOL(r);
}

static int64_t special_hash(VM *vm, Value self) {
    Value r = call_special(vm, self, "__hash__", 0, NULL, NULL);
    if (!IS_INTLIKE(r)) vm_raise_kind(vm, TypeError, "__hash__ method should return an integer");
    return AS_INTLIKE(r) == -1 ? -2 : AS_INTLIKE(r);
}

/* __eq__ without __hash__: unhashable, as in Python */
static int64_t unhashable(VM *vm, Value self) {
    vm_raise_kind(vm, TypeError, "unhashable type: '%s'", vm_type_name(vm, self));
}

static Value special_getitem(VM *vm, Value self, Value key) {
    Value r = call_special(vm, self, "__getitem__", 1, &key, NULL);
    if (IS_EMPTY(r)) vm_raise_kind(vm, TypeError, "'%s' object is not subscriptable", vm_type_name(vm, self));
    return r;
}

static void special_setitem(VM *vm, Value self, Value key, Value value) {
    Value args[2] = {key, value};
    bool del = IS_EMPTY(value);
    if (IS_EMPTY(call_special(vm, self, del ? "__delitem__" : "__setitem__", del ? 1 : 2, args, NULL)))
        vm_raise_kind(vm, TypeError, del ? "'%s' object doesn't support item deletion"
                                         : "'%s' object does not support item assignment",
                      vm_type_name(vm, self));
}

static Value special_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    return call_special(vm, self, "__call__", argc, argv, kwargs);
}

/* Called with its own instance first (vm_compare's rule). */
static Value special_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (op > CMP_GE) return EMPTY_VAL;
    Value r = implemented(vm, call_special(vm, a, cmp_names[op], 1, &b, NULL));
    if (IS_EMPTY(r) && op == CMP_NE) { /* != defaults to the negation of == */
        r = implemented(vm, call_special(vm, a, "__eq__", 1, &b, NULL));
        if (!IS_EMPTY(r)) r = BOOL_VAL(!vm_truthy(vm, r));
    }
    return r;
}

static Value special_unop(VM *vm, UnOp op, Value a) {
    if (op > UNOP_INVERT) return EMPTY_VAL;
    return call_special(vm, a, unop_names[op], 0, NULL, NULL);
}

/* a op b: a.__op__(b) when a is a foreign instance, then b.__rop__(a) when b
** is one of another class. The slot cannot tell whether vm_binop calls it as
** a's or as b's, so with two different foreign classes a failing pair is
** tried twice before the TypeError. */
static Value special_binop(VM *vm, BinOp op, Value a, Value b) {
    Type *ta = vm_typeof(vm, a), *tb = vm_typeof(vm, b);
    Value r = EMPTY_VAL;
    if (foreign_of(ta) && vm->dunder_binop[op])
        r = implemented(vm, call_special(vm, a, vm->dunder_binop[op]->chars, 1, &b, NULL));
    if (IS_EMPTY(r) && ta != tb && foreign_of(tb) && vm->dunder_rbinop[op])
        r = implemented(vm, call_special(vm, b, vm->dunder_rbinop[op]->chars, 1, &a, NULL));
    return r;
}

/* Points t's slots at the special methods its dict defines. */
static void install_special(VM *vm, Type *t) {
#define HAS(name) (!IS_EMPTY(dict_get_cstr(vm, t->dict, name)))
    if (HAS("__repr__")) t->repr = special_repr;
    if (HAS("__str__")) t->str = special_str;
    if (HAS("__len__")) t->len = special_len;
    if (HAS("__bool__")) t->truthy = special_truthy;
    if (HAS("__getitem__")) t->getitem = special_getitem;
    if (HAS("__setitem__") || HAS("__delitem__")) t->setitem = special_setitem;
    if (HAS("__call__")) t->call = special_call;
    for (size_t i = 0; i < sizeof cmp_names / sizeof cmp_names[0]; i++)
        if (HAS(cmp_names[i])) t->compare = special_compare;
    if (HAS("__hash__")) t->hash = special_hash;
    else if (HAS("__eq__")) t->hash = unhashable;
    for (size_t i = 0; i < sizeof unop_names / sizeof unop_names[0]; i++)
        if (HAS(unop_names[i])) t->unop = special_unop;
    for (int op = 0; op < BINOP__COUNT; op++)
        if ((vm->dunder_binop[op] && HAS(vm->dunder_binop[op]->chars)) ||
            (vm->dunder_rbinop[op] && HAS(vm->dunder_rbinop[op]->chars)))
            t->binop = special_binop;
#undef HAS
}

static void new_class(VM *vm, void *ud) {
    NativeCtx *c = ud;
    GpyVM *g = vm->api;
    const GpyClassDef *def = c->def;
    Module *m = module_in_slot(vm, c->slot, "gpy_new_class");
    if (!def || !def->name || !def->name[0]) vm_raise_kind(vm, ValueError, "gpy_new_class: the class has no name");
    if (def->size > (1u << 30)) vm_raise_kind(vm, ValueError, "gpy_new_class: size %zu is too large", def->size);
    Type *t = type_new_builtin_sized(vm, def->name, vm->t_object, TYPE_BASETYPE | TYPE_FOREIGN, sizeof(ForeignType));
    ForeignType *ft = (ForeignType *)t;
    ft->def = def;
    ft->user = c->user;
    t->new_ = foreign_new;
    t->mark = foreign_mark;
    t->finalize = foreign_finalize;
    Value self = OBJ_VAL(t);
    /* no collection happens below (no safepoint): the new objects need no roots */
    for (const GpyMethodDef *md = def->methods; md && md->name; md++)
        dict_set_cstr(vm, t->dict, md->name, cfunc_new(vm, md->name, md->fn, c->user, self, true));
    if (def->init) dict_set_str(vm, t->dict, vm->sym_init, cfunc_new(vm, "__init__", def->init, c->user, self, true));
    for (const GpyAttrDef *ad = def->attrs; ad && ad->name; ad++) {
        Wrapper *p = gc_alloc_obj(vm, vm->t_property, sizeof(Wrapper));
        p->func = p->fset = p->fdel = NONE_VAL;
        dict_set_cstr(vm, t->dict, ad->name, OBJ_VAL(p));
        if (ad->get) p->func = cfunc_new(vm, ad->name, ad->get, c->user, self, true);
        if (ad->set) p->fset = cfunc_new(vm, ad->name, ad->set, c->user, self, true);
        /* scripts' subclasses must look data descriptors up before their instance dict */
        t->flags |= TYPEF_DATADESC;
    }
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(m->name));
    install_special(vm, t);
    t->version = class_next_version(vm);
    dict_set_cstr(vm, m->dict, def->name, self);
    *api_slot(g, c->dst) = self;
}

GpyStatus gpy_new_class(GpyVM *g, int module, const GpyClassDef *def, void *user, int dst) {
    if (!api_slot_ok(g, module) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    NativeCtx c = {.slot = module, .def = def, .user = user, .dst = dst};
    return api_protect(g, new_class, &c);
}

static void new_foreign(VM *vm, void *ud) {
    NativeCtx *c = ud;
    Value v = *api_slot(vm->api, c->slot);
    ForeignType *ft = NULL;
    if (IS_OBJ(v) && AS_OBJ(v)->type == vm->t_type) ft = foreign_of((Type *)AS_OBJ(v));
    if (!ft)
        vm_raise_kind(vm, TypeError, "gpy_new_foreign: slot %d holds a '%s' object, not a class made by gpy_new_class",
                      c->slot, vm_type_name(vm, v));
    ForeignObj *o = foreign_alloc(vm, (Type *)AS_OBJ(v), ft);
    *api_slot(vm->api, c->dst) = OBJ_VAL(o);
    if (c->data) *c->data = o->data;
}

GpyStatus gpy_new_foreign(GpyVM *g, int cls, int dst, void **data) {
    if (data) *data = NULL;
    if (!api_slot_ok(g, cls) || !api_slot_ok(g, dst)) return GPY_RUNTIME_ERROR;
    NativeCtx c = {.slot = cls, .dst = dst, .data = data};
    return api_protect(g, new_foreign, &c);
}

static void wrong_foreign(VM *vm, void *ud) {
    NativeCtx *c = ud;
    vm_raise_kind(vm, TypeError, "expected a '%s' object, got '%s'", c->def && c->def->name ? c->def->name : "?",
                  vm_type_name(vm, *api_slot(vm->api, c->slot)));
}

void *gpy_get_foreign(GpyVM *g, int slot, const GpyClassDef *def) {
    if (!api_slot_ok(g, slot)) return NULL;
    Value v = *api_slot(g, slot);
    if (IS_OBJ(v)) {
        ForeignType *ft = foreign_of(AS_OBJ(v)->type);
        if (ft && ft->def == def) return ((ForeignObj *)AS_OBJ(v))->data;
    }
    NativeCtx c = {.slot = slot, .def = def};
    api_protect(g, wrong_foreign, &c);
    return NULL;
}
