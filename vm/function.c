/*
** function.c — the callable objects and their companions: gpy functions
** (Function over a compiled Proto), natives (NativeFunction), bound methods,
** closure cells and code objects. Calling them is the interpreter's job
** (call.c); this file creates them and gives them their attributes,
** reprs, equality and GC hooks.
*/
#include <string.h>

#include "ast.h"
#include "class_internal.h"

/* ================================================================ creation */

Function *function_new(VM *vm, Proto *proto, Dict *globals) {
    int32_t nfree = proto->nfree > 0 ? proto->nfree : 0;
    Function *fn = gc_alloc_obj(vm, vm->t_function, sizeof(Function) + (size_t)nfree * sizeof(Cell *));
    fn->proto = proto;
    fn->globals = globals;
    fn->name = proto->name;
    fn->qualname = proto->qualname ? proto->qualname : proto->name;
    fn->nfree = nfree;
    fn->module = NONE_VAL;
    if (globals) {
        Str *key = vm->sym_name ? vm->sym_name : str_cstr(vm, "__name__");
        Value m = dict_get_str(vm, globals, key);
        if (!IS_EMPTY(m)) fn->module = m;
    }
    return fn;
}

Proto *proto_new(VM *vm) {
    Proto *p = gc_alloc_obj(vm, vm->t_code, sizeof(Proto));
    return p;
}

Cell *cell_new(VM *vm, Value v) {
    Cell *c = gc_alloc_obj(vm, vm->t_cell, sizeof(Cell));
    c->value = v;
    return c;
}

Value native_new(VM *vm, const char *name, NativeFn fn, Value data) {
    NativeFunction *nf = gc_alloc_obj(vm, vm->t_builtin_function, sizeof(NativeFunction));
    nf->name = name;
    nf->fn = fn;
    nf->data = data;
    return OBJ_VAL(nf);
}

Value bound_method_new(VM *vm, Value self, Value func) {
    BoundMethod *m = gc_alloc_obj(vm, vm->t_method, sizeof(BoundMethod));
    m->self = self;
    m->func = func;
    return OBJ_VAL(m);
}

/* A method of builtin type t: flagged so that the call path checks self. */
void type_add_method(VM *vm, Type *t, const char *name, NativeFn fn) {
    if (!t->dict) t->dict = dict_new(vm);
    Value nf = native_new(vm, name, fn, OBJ_VAL(t));
    AS_OBJ(nf)->flags |= NATIVE_FLAG_METHOD;
    dict_set_cstr(vm, t->dict, name, nf);
    t->version = class_next_version(vm);
}

/* A module function; its data is the module (vm_current_native(vm)->data). */
void module_add_function(VM *vm, Module *m, const char *name, NativeFn fn) {
    if (!m->dict) m->dict = dict_new(vm);
    Value nf = native_new(vm, name, fn, OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, name, nf);
}

int32_t proto_line_at(Proto *p, int32_t pc) {
    if (p->lines && pc >= 0 && pc < p->ncode) return p->lines[pc];
    if (p->lines && pc >= p->ncode && p->ncode > 0) return p->lines[p->ncode - 1];
    return p->firstline;
}

NativeFunction *vm_current_native(VM *vm) {
    return vm->current_native;
}

void native_check_self(VM *vm, NativeFunction *nf, int argc, Value *argv) {
    if (!(nf->obj.flags & NATIVE_FLAG_METHOD) || !IS_OBJ(nf->data)) return;
    Type *t = (Type *)AS_OBJ(nf->data);
    if (argc < 1)
        vm_raise_kind(vm, TypeError, "unbound method %s.%s() needs an argument", class_type_name(t), nf->name);
    if (!vm_isinstance(vm, argv[0], t))
        vm_raise_kind(vm, TypeError, "descriptor '%s' for '%s' objects doesn't apply to a '%s' object", nf->name,
                      class_type_name(t), vm_type_name(vm, argv[0]));
    argv[0] = class_native_self(vm, OBJ_VAL(nf), argv[0]); /* list.append(my_list_subclass_instance, x) */
}

/* =================================================================== helpers */

/* A fake but stable address for values that are not objects (reprs). */
static const void *value_addr(Value v) {
    return IS_OBJ(v) ? (const void *)AS_OBJ(v) : (const void *)(uintptr_t)v.as.i;
}

static bool name_eq(Str *name, const char *lit) {
    return strcmp(name->chars, lit) == 0;
}

/* The docstring of a def: its first statement when that is a string. */
static Value proto_docstring(VM *vm, Proto *p) {
    AstNode *n = p->ast;
    if (!n || n->kind != AST_FUNCTIONDEF || n->u.func.is_lambda || n->u.func.body.len < 1) return NONE_VAL;
    AstNode *s = n->u.func.body.items[0];
    if (!s || s->kind != AST_EXPR || !s->u.expr.value || s->u.expr.value->kind != AST_STR) return NONE_VAL;
    return STR_VAL(str_new(vm, s->u.expr.value->u.str.s, s->u.expr.value->u.str.len));
}

static Tuple *str_array_tuple(VM *vm, Str **names, int32_t n) {
    Tuple *t = tuple_new(vm, n > 0 ? n : 0);
    for (int32_t i = 0; i < n; i++) t->items[i] = names && names[i] ? STR_VAL(names[i]) : NONE_VAL;
    return t;
}

/* ================================================================ functions */

static Value function_repr(VM *vm, Value self) {
    Function *fn = (Function *)AS_OBJ(self);
    Str *q = fn->qualname ? fn->qualname : fn->name;
    return STR_VAL(str_printf(vm, "<function %s at %p>", q ? q->chars : "?", (void *)fn));
}

static Value function_getattr(VM *vm, Value self, Str *name) {
    Function *fn = (Function *)AS_OBJ(self);
    if (name->len > 4 && name->chars[0] == '_' && name->chars[1] == '_') {
        if (class_name_is(name, vm->sym_name, "__name__")) return fn->name ? STR_VAL(fn->name) : NONE_VAL;
        if (class_name_is(name, vm->sym_qualname, "__qualname__"))
            return fn->qualname ? STR_VAL(fn->qualname) : NONE_VAL;
        if (class_name_is(name, vm->sym_module, "__module__")) return IS_EMPTY(fn->module) ? NONE_VAL : fn->module;
        if (class_name_is(name, vm->sym_doc, "__doc__")) {
            Value d = fn->dict ? dict_get_str(vm, fn->dict, name) : EMPTY_VAL;
            return IS_EMPTY(d) ? proto_docstring(vm, fn->proto) : d;
        }
        if (class_name_is(name, vm->sym_dict, "__dict__")) {
            if (!fn->dict) fn->dict = dict_new(vm);
            return OBJ_VAL(fn->dict);
        }
        if (name_eq(name, "__defaults__")) return fn->defaults ? OBJ_VAL(fn->defaults) : NONE_VAL;
        if (name_eq(name, "__kwdefaults__")) return fn->kwdefaults ? OBJ_VAL(fn->kwdefaults) : NONE_VAL;
        if (name_eq(name, "__globals__")) return fn->globals ? OBJ_VAL(fn->globals) : NONE_VAL;
        if (name_eq(name, "__code__")) return OBJ_VAL(fn->proto);
        if (name_eq(name, "__closure__")) {
            if (fn->nfree == 0) return NONE_VAL;
            Tuple *t = tuple_new(vm, fn->nfree);
            for (int32_t i = 0; i < fn->nfree; i++) t->items[i] = fn->free[i] ? OBJ_VAL(fn->free[i]) : NONE_VAL;
            return OBJ_VAL(t);
        }
        if (name_eq(name, "__annotations__")) {
            if (!fn->dict) fn->dict = dict_new(vm);
            Value a = dict_get_str(vm, fn->dict, name);
            if (IS_EMPTY(a)) {
                a = OBJ_VAL(dict_new(vm));
                dict_set_str(vm, fn->dict, name, a);
            }
            return a;
        }
    }
    if (fn->dict) {
        Value v = dict_get_str(vm, fn->dict, name);
        if (!IS_EMPTY(v)) return v;
    }
    return generic_getattr(vm, self, name);
}

static void function_setattr(VM *vm, Value self, Str *name, Value value) {
    Function *fn = (Function *)AS_OBJ(self);
    bool del = IS_EMPTY(value);
    if (name->len > 4 && name->chars[0] == '_' && name->chars[1] == '_') {
        if (class_name_is(name, vm->sym_name, "__name__") || class_name_is(name, vm->sym_qualname, "__qualname__")) {
            bool is_name = class_name_is(name, vm->sym_name, "__name__");
            if (del || !IS_STR(vm, value))
                vm_raise_kind(vm, TypeError, "%s must be set to a string object", name->chars);
            if (is_name)
                fn->name = AS_STR(value);
            else
                fn->qualname = AS_STR(value);
            return;
        }
        if (class_name_is(name, vm->sym_module, "__module__")) {
            fn->module = del ? NONE_VAL : value;
            return;
        }
        if (name_eq(name, "__defaults__")) {
            if (del || IS_NONE(value))
                fn->defaults = NULL;
            else if (IS_TUPLE(vm, value))
                fn->defaults = AS_TUPLE(value);
            else
                vm_raise_kind(vm, TypeError, "__defaults__ must be set to a tuple object");
            return;
        }
        if (name_eq(name, "__kwdefaults__")) {
            if (del || IS_NONE(value))
                fn->kwdefaults = NULL;
            else if (IS_DICT(vm, value))
                fn->kwdefaults = AS_DICT(value);
            else
                vm_raise_kind(vm, TypeError, "__kwdefaults__ must be set to a dict object");
            return;
        }
        if (class_name_is(name, vm->sym_dict, "__dict__")) {
            if (del) vm_raise_kind(vm, TypeError, "cannot delete __dict__");
            if (!IS_DICT(vm, value))
                vm_raise_kind(vm, TypeError, "__dict__ must be set to a dictionary, not a '%s'",
                              vm_type_name(vm, value));
            fn->dict = AS_DICT(value);
            return;
        }
        if (name_eq(name, "__code__") || name_eq(name, "__globals__") || name_eq(name, "__closure__") ||
            class_name_is(name, vm->sym_class, "__class__"))
            vm_raise_kind(vm, AttributeError, "readonly attribute");
    }
    if (del) {
        if (!fn->dict || !dict_del(vm, fn->dict, STR_VAL(name)))
            vm_raise_kind(vm, AttributeError, "'function' object has no attribute '%s'", name->chars);
        return;
    }
    if (!fn->dict) fn->dict = dict_new(vm);
    dict_set_str(vm, fn->dict, name, value);
}

/* Only for callers that dispatch through slots: the interpreter calls
** Function objects itself (this goes back through vm_call_kw). */
static Value function_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    return vm_call_kw(vm, self, argc, argv, kwargs);
}

static void function_mark(VM *vm, Obj *o) {
    Function *fn = (Function *)o;
    gc_mark_obj(vm, (Obj *)fn->proto);
    gc_mark_obj(vm, (Obj *)fn->globals);
    gc_mark_obj(vm, (Obj *)fn->defaults);
    gc_mark_obj(vm, (Obj *)fn->kwdefaults);
    gc_mark_obj(vm, (Obj *)fn->dict);
    gc_mark_obj(vm, (Obj *)fn->name);
    gc_mark_obj(vm, (Obj *)fn->qualname);
    gc_mark_value(vm, fn->module);
    for (int32_t i = 0; i < fn->nfree; i++) gc_mark_obj(vm, (Obj *)fn->free[i]);
}

/* ================================================================== natives */

static Value native_repr(VM *vm, Value self) {
    NativeFunction *nf = (NativeFunction *)AS_OBJ(self);
    const char *n = nf->name ? nf->name : "?";
    if ((nf->obj.flags & NATIVE_FLAG_METHOD) && IS_OBJ(nf->data))
        return STR_VAL(str_printf(vm, "<method '%s' of '%s' objects>", n, class_type_name((Type *)AS_OBJ(nf->data))));
    return STR_VAL(str_printf(vm, "<built-in function %s>", n));
}

static Value native_getattr(VM *vm, Value self, Str *name) {
    NativeFunction *nf = (NativeFunction *)AS_OBJ(self);
    bool method = (nf->obj.flags & NATIVE_FLAG_METHOD) && IS_OBJ(nf->data);
    if (class_name_is(name, vm->sym_name, "__name__")) return STR_VAL(str_cstr(vm, nf->name ? nf->name : "?"));
    if (class_name_is(name, vm->sym_qualname, "__qualname__")) {
        if (method)
            return STR_VAL(str_printf(vm, "%s.%s", class_type_name((Type *)AS_OBJ(nf->data)), nf->name));
        return STR_VAL(str_cstr(vm, nf->name ? nf->name : "?"));
    }
    if (class_name_is(name, vm->sym_doc, "__doc__")) return NONE_VAL;
    if (class_name_is(name, vm->sym_module, "__module__")) {
        if (IS_OBJ(nf->data) && AS_OBJ(nf->data)->type == vm->t_module) {
            Module *m = (Module *)AS_OBJ(nf->data);
            return m->name ? STR_VAL(m->name) : NONE_VAL;
        }
        return method ? NONE_VAL : STR_VAL(str_cstr(vm, "builtins"));
    }
    if (name_eq(name, "__self__")) {
        if (IS_OBJ(nf->data) && AS_OBJ(nf->data)->type == vm->t_module) return nf->data;
        return NONE_VAL;
    }
    return generic_getattr(vm, self, name);
}

static Value native_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    NativeFunction *nf = (NativeFunction *)AS_OBJ(self);
    native_check_self(vm, nf, argc, argv);
    NativeFunction *prev = vm->current_native;
    vm->current_native = nf;
    Value r = nf->fn(vm, argc, argv, kwargs);
    vm->current_native = prev;
    return r;
}

static void native_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((NativeFunction *)o)->data);
}

/* ============================================================ bound methods */

static Value method_repr(VM *vm, Value self) {
    BoundMethod *m = (BoundMethod *)AS_OBJ(self);
    if (IS_OBJ(m->func) && AS_OBJ(m->func)->type == vm->t_builtin_function) {
        NativeFunction *nf = (NativeFunction *)AS_OBJ(m->func);
        return STR_VAL(str_printf(vm, "<built-in method %s of %s object at %p>", nf->name ? nf->name : "?",
                                  vm_type_name(vm, m->self), value_addr(m->self)));
    }
    Str *q = NULL;
    if (IS_OBJ(m->func) && AS_OBJ(m->func)->type == vm->t_function) {
        Function *fn = (Function *)AS_OBJ(m->func);
        q = fn->qualname ? fn->qualname : fn->name;
    } else {
        Value v = vm_getattr_opt(vm, m->func, vm->sym_qualname ? vm->sym_qualname : str_cstr(vm, "__qualname__"));
        if (IS_STR(vm, v)) q = AS_STR(v);
    }
    Str *sr = vm_repr(vm, m->self);
    return STR_VAL(str_printf(vm, "<bound method %s of %s>", q ? q->chars : "?", sr->chars));
}

static Value method_getattr(VM *vm, Value self, Str *name) {
    BoundMethod *m = (BoundMethod *)AS_OBJ(self);
    if (name_eq(name, "__self__")) return m->self;
    if (name_eq(name, "__func__")) return m->func;
    if (class_name_is(name, vm->sym_class, "__class__")) return OBJ_VAL(vm->t_method);
    return vm_getattr_opt(vm, m->func, name);
}

static void method_setattr(VM *vm, Value self, Str *name, Value value) {
    (void)self;
    (void)value;
    vm_raise_kind(vm, AttributeError, "'method' object has no attribute '%s'", name->chars);
}

/* Bound methods are equal when they bind the same object to equal functions. */
static Value method_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (op != CMP_EQ && op != CMP_NE) return EMPTY_VAL;
    if (!IS_OBJ(b) || AS_OBJ(b)->type != vm->t_method) return EMPTY_VAL;
    BoundMethod *x = (BoundMethod *)AS_OBJ(a), *y = (BoundMethod *)AS_OBJ(b);
    bool eq = vm_is(x->self, y->self) && vm_equal(vm, x->func, y->func);
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

static int64_t method_hash(VM *vm, Value self) {
    BoundMethod *m = (BoundMethod *)AS_OBJ(self);
    int64_t hs = IS_OBJ(m->self) ? class_identity_hash(m->self) : vm_hash(vm, m->self);
    int64_t h = hs ^ vm_hash(vm, m->func);
    return h == -1 ? -2 : h;
}

/* Only for callers that dispatch through slots: self goes first. */
static Value method_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    BoundMethod *m = (BoundMethod *)AS_OBJ(self);
    return class_call_prepend(vm, m->func, m->self, argc, argv, kwargs);
}

static void method_mark(VM *vm, Obj *o) {
    BoundMethod *m = (BoundMethod *)o;
    gc_mark_value(vm, m->self);
    gc_mark_value(vm, m->func);
}

/* ==================================================================== cells */

static Value cell_repr(VM *vm, Value self) {
    Cell *c = (Cell *)AS_OBJ(self);
    if (IS_EMPTY(c->value)) return STR_VAL(str_printf(vm, "<cell at %p: empty>", (void *)c));
    return STR_VAL(str_printf(vm, "<cell at %p: %s object at %p>", (void *)c, vm_type_name(vm, c->value),
                              value_addr(c->value)));
}

static Value cell_getattr(VM *vm, Value self, Str *name) {
    Cell *c = (Cell *)AS_OBJ(self);
    if (name_eq(name, "cell_contents")) {
        if (IS_EMPTY(c->value)) vm_raise_kind(vm, ValueError, "Cell is empty");
        return c->value;
    }
    return generic_getattr(vm, self, name);
}

static void cell_setattr(VM *vm, Value self, Str *name, Value value) {
    Cell *c = (Cell *)AS_OBJ(self);
    if (name_eq(name, "cell_contents")) {
        c->value = value;
        return;
    }
    generic_setattr(vm, self, name, value);
}

static Value cell_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (!IS_OBJ(b) || AS_OBJ(b)->type != vm->t_cell) return EMPTY_VAL;
    Value x = ((Cell *)AS_OBJ(a))->value, y = ((Cell *)AS_OBJ(b))->value;
    if (IS_EMPTY(x) || IS_EMPTY(y)) {
        /* an empty cell sorts before any full one */
        int cx = IS_EMPTY(x) ? 0 : 1, cy = IS_EMPTY(y) ? 0 : 1;
        switch (op) {
        case CMP_EQ: return BOOL_VAL(cx == cy);
        case CMP_NE: return BOOL_VAL(cx != cy);
        case CMP_LT: return BOOL_VAL(cx < cy);
        case CMP_LE: return BOOL_VAL(cx <= cy);
        case CMP_GT: return BOOL_VAL(cx > cy);
        case CMP_GE: return BOOL_VAL(cx >= cy);
        default: return EMPTY_VAL;
        }
    }
    return vm_compare(vm, op, x, y);
}

static void cell_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((Cell *)o)->value);
}

/* ============================================================ code objects */

static Value code_repr(VM *vm, Value self) {
    Proto *p = (Proto *)AS_OBJ(self);
    const char *file = p->source && p->source->filename ? p->source->filename->chars : "<unknown>";
    return STR_VAL(str_printf(vm, "<code object %s at %p, file \"%s\", line %d>", p->name ? p->name->chars : "?",
                              (void *)p, file, (int)p->firstline));
}

static Value code_getattr(VM *vm, Value self, Str *name) {
    Proto *p = (Proto *)AS_OBJ(self);
    if (name_eq(name, "co_name")) return p->name ? STR_VAL(p->name) : NONE_VAL;
    if (name_eq(name, "co_qualname")) {
        Str *q = p->qualname ? p->qualname : p->name;
        return q ? STR_VAL(q) : NONE_VAL;
    }
    if (name_eq(name, "co_filename"))
        return p->source && p->source->filename ? STR_VAL(p->source->filename) : NONE_VAL;
    if (name_eq(name, "co_firstlineno")) return INT_VAL(p->firstline);
    if (name_eq(name, "co_argcount")) return INT_VAL(p->nparams);
    if (name_eq(name, "co_kwonlyargcount")) return INT_VAL(p->nkwonly);
    if (name_eq(name, "co_nlocals")) return INT_VAL(p->nlocals);
    if (name_eq(name, "co_varnames")) return OBJ_VAL(str_array_tuple(vm, p->varnames, p->nlocals));
    if (name_eq(name, "co_freevars")) return OBJ_VAL(str_array_tuple(vm, p->freenames, p->nfree));
    if (name_eq(name, "co_flags")) return INT_VAL(p->flags);
    return generic_getattr(vm, self, name);
}

static void code_mark(VM *vm, Obj *o) {
    Proto *p = (Proto *)o;
    gc_mark_obj(vm, (Obj *)p->name);
    gc_mark_obj(vm, (Obj *)p->qualname);
    gc_mark_obj(vm, (Obj *)p->source);
    if (p->consts)
        for (int32_t i = 0; i < p->nconsts; i++) gc_mark_value(vm, p->consts[i]);
    if (p->varnames)
        for (int32_t i = 0; i < p->nlocals; i++) gc_mark_obj(vm, (Obj *)p->varnames[i]);
    if (p->freenames)
        for (int32_t i = 0; i < p->nfree; i++) gc_mark_obj(vm, (Obj *)p->freenames[i]);
}

/* Frees the arrays the compiler attached. The sizes passed to gc_free only
** keep the allocation counter honest: they assume each array was made by
** gc_malloc with exactly count * sizeof(element) bytes (code and lines/cols
** hold ncode entries; varnames nlocals; freevars/freenames nfree). */
static void code_finalize(VM *vm, Obj *o) {
    Proto *p = (Proto *)o;
    size_t nc = p->ncode > 0 ? (size_t)p->ncode : 0;
    gc_free(vm, p->code, nc * sizeof(uint32_t));
    gc_free(vm, p->consts, (size_t)(p->nconsts > 0 ? p->nconsts : 0) * sizeof(Value));
    gc_free(vm, p->varnames, (size_t)(p->nlocals > 0 ? p->nlocals : 0) * sizeof(Str *));
    gc_free(vm, p->cell_regs, (size_t)(p->ncells > 0 ? p->ncells : 0) * sizeof(int32_t));
    gc_free(vm, p->freevars, (size_t)(p->nfree > 0 ? p->nfree : 0) * sizeof(FreeVarDesc));
    gc_free(vm, p->freenames, (size_t)(p->nfree > 0 ? p->nfree : 0) * sizeof(Str *));
    gc_free(vm, p->handlers, (size_t)(p->nhandlers > 0 ? p->nhandlers : 0) * sizeof(Handler));
    gc_free(vm, p->lines, nc * sizeof(int32_t));
    gc_free(vm, p->cols, nc * sizeof(int32_t));
    if (p->caches) gc_free(vm, p->caches, interp_caches_size(p));
    p->code = NULL;
    p->consts = NULL;
    p->varnames = NULL;
    p->cell_regs = NULL;
    p->freevars = NULL;
    p->freenames = NULL;
    p->handlers = NULL;
    p->lines = p->cols = NULL;
    p->caches = NULL;
    p->ncode = p->nconsts = p->nlocals = p->ncells = p->nfree = p->nhandlers = 0;
}

/* ================================================================= sources */

static Value source_repr(VM *vm, Value self) {
    Source *s = (Source *)AS_OBJ(self);
    return STR_VAL(str_printf(vm, "<source '%s'>", s->filename ? s->filename->chars : "?"));
}

/* ==================================================================== init */

void function_init(VM *vm) {
    class_prepare_core(vm, vm->t_function, "function", vm->t_object);
    class_prepare_core(vm, vm->t_builtin_function, "builtin_function_or_method", vm->t_object);
    class_prepare_core(vm, vm->t_method, "method", vm->t_object);
    class_prepare_core(vm, vm->t_cell, "cell", vm->t_object);
    class_prepare_core(vm, vm->t_code, "code", vm->t_object);
    class_prepare_core(vm, vm->t_source, "source", vm->t_object);

    Type *t = vm->t_function;
    t->repr = function_repr;
    t->getattr = function_getattr;
    t->setattr = function_setattr;
    t->call = function_call;
    t->mark = function_mark;

    t = vm->t_builtin_function;
    t->repr = native_repr;
    t->getattr = native_getattr;
    t->call = native_call;
    t->mark = native_mark;

    t = vm->t_method;
    t->repr = method_repr;
    t->getattr = method_getattr;
    t->setattr = method_setattr;
    t->compare = method_compare;
    t->hash = method_hash;
    t->call = method_call;
    t->mark = method_mark;

    t = vm->t_cell;
    t->repr = cell_repr;
    t->getattr = cell_getattr;
    t->setattr = cell_setattr;
    t->compare = cell_compare;
    t->mark = cell_mark;

    t = vm->t_code;
    t->repr = code_repr;
    t->getattr = code_getattr;
    t->mark = code_mark;
    t->finalize = code_finalize;

    /* module.c owns the Source's mark and finalize (text and arena) */
    vm->t_source->repr = source_repr;
}
