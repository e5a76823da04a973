/*
** async_builtins.c — aiter() and anext(), the async counterparts of iter()
** and next().
**
** anext(it) is it.__anext__() itself. anext(it, default) must turn the
** end of the iteration into a result, so it returns an `anext_awaitable`:
** an iterator (its own __await__) that drives the awaitable __anext__()
** returned and answers a StopAsyncIteration from it with
** StopIteration(default), i.e. `await` gives default.
*/
#include <string.h>

#include "stdlib_priv.h"

typedef struct AnextAwaitable {
    Obj obj;
    Value aiter;   /* the async iterator */
    Value dflt;    /* what await gives at the end of the iteration */
    Value inner;   /* the iterator of __anext__()'s awaitable; EMPTY before the first step */
} AnextAwaitable;

static Str *name_of(VM *vm, const char *s) {
    return str_cstr(vm, s);
}

static bool has_method(VM *vm, Value v, const char *name) {
    return !IS_EMPTY(type_lookup(vm, vm_typeof(vm, v), name_of(vm, name)));
}

static Value b_aiter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "aiter", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "aiter() takes exactly one argument (%d given)", argc);
    if (!has_method(vm, argv[0], "__aiter__"))
        vm_raise_kind(vm, TypeError, "'%s' object is not an async iterable", vm_type_name(vm, argv[0]));
    Value it = vm_call_method(vm, argv[0], name_of(vm, "__aiter__"), 0, NULL);
    if (!has_method(vm, it, "__anext__"))
        vm_raise_kind(vm, TypeError, "aiter() returned not an async iterator of type '%s'", vm_type_name(vm, it));
    return it;
}

static Value b_anext(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "anext", kwargs);
    if (argc < 1) vm_raise_kind(vm, TypeError, "anext expected at least 1 argument, got %d", argc);
    if (argc > 2) vm_raise_kind(vm, TypeError, "anext expected at most 2 arguments, got %d", argc);
    if (!has_method(vm, argv[0], "__anext__"))
        vm_raise_kind(vm, TypeError, "'%s' object is not an async iterator", vm_type_name(vm, argv[0]));
    if (argc == 1) return vm_call_method(vm, argv[0], name_of(vm, "__anext__"), 0, NULL);
    Type *t = (Type *)AS_OBJ(vm_current_native(vm)->data);
    AnextAwaitable *a = gc_alloc_obj(vm, t, sizeof(AnextAwaitable));
    a->aiter = argv[0];
    a->dflt = argv[1];
    a->inner = EMPTY_VAL;
    return OBJ_VAL(a);
}

/* ------------------------------------------------------ anext_awaitable */

static AnextAwaitable *check_self(VM *vm, int argc, Value *argv) {
    native_check_self(vm, vm_current_native(vm), argc, argv);
    return (AnextAwaitable *)AS_OBJ(argv[0]);
}

/* The iterator behind __anext__()'s awaitable, made on the first step. */
static Value inner_iter(VM *vm, AnextAwaitable *a) {
    if (IS_EMPTY(a->inner)) {
        Value aw = vm_call_method(vm, a->aiter, name_of(vm, "__anext__"), 0, NULL);
        vm_push_root(vm, aw);
        /* a coroutine steps itself (send/throw/close); anything else
        ** through the iterator its __await__ returns */
        Type *t = vm_typeof(vm, aw);
        if (t != vm->t_coroutine && !has_method(vm, aw, "__await__"))
            vm_raise_kind(vm, TypeError, "object %s can't be used in 'await' expression", vm_type_name(vm, aw));
        a->inner = t == vm->t_coroutine ? aw : vm_call_method(vm, aw, name_of(vm, "__await__"), 0, NULL);
        vm_pop_roots(vm, 1);
    }
    return a->inner;
}

typedef struct Step {
    AnextAwaitable *a;
    const char *meth; /* "send", "throw" or NULL for __next__ */
    Value arg, out;
} Step;

static void step_body(VM *vm, void *ud) {
    Step *s = ud;
    Value it = inner_iter(vm, s->a);
    if (s->meth && !strcmp(s->meth, "throw") && !has_method(vm, it, "throw")) vm_throw(vm, s->arg);
    /* a coroutine has send() but no __next__: next is send(None) */
    const char *m = s->meth ? s->meth : has_method(vm, it, "__next__") ? "__next__" : "send";
    int n = !strcmp(m, "__next__") ? 0 : 1;
    s->out = vm_call_method(vm, it, name_of(vm, m), n, &s->arg);
}

/* One step of the inner awaitable; its StopAsyncIteration ends the await
** with the default value. */
static Value step(VM *vm, AnextAwaitable *a, const char *meth, Value arg) {
    Step s = {.a = a, .meth = meth, .arg = arg, .out = NONE_VAL};
    vm_push_root(vm, arg);
    bool ok = vm_pcall(vm, step_body, &s);
    vm_pop_roots(vm, 1);
    if (ok) return s.out;
    Value e = vm->exc_value;
    if (IS_OBJ(e) && type_is_subtype(AS_OBJ(e)->type, vm->exc[EXC_StopAsyncIteration])) {
        vm->exc_value = NONE_VAL;
        vm_throw(vm, exc_new(vm, vm->exc[EXC_StopIteration], 1, &a->dflt));
    }
    vm_rethrow(vm, e);
}

static Value m_await(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, argc, argv);
    arg_no_kwargs(vm, "__await__", kwargs);
    return argv[0];
}

static Value m_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AnextAwaitable *a = check_self(vm, argc, argv);
    arg_no_kwargs(vm, "__next__", kwargs);
    return step(vm, a, NULL, NONE_VAL);
}

static Value m_send(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AnextAwaitable *a = check_self(vm, argc, argv);
    arg_no_kwargs(vm, "send", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "send() takes exactly one argument (%d given)", argc - 1);
    return step(vm, a, "send", argv[1]);
}

/* throw(exc) or throw(type[, value]): the exception instance. */
static Value throw_value(VM *vm, int argc, Value *argv) {
    Value typ = argv[1];
    if (IS_OBJ(typ) && (AS_OBJ(typ)->type->flags & TYPE_EXCEPTION)) return typ;
    if (IS_OBJ(typ) && type_is_subtype(AS_OBJ(typ)->type, vm->t_type) && (((Type *)AS_OBJ(typ))->flags & TYPE_EXCEPTION))
        return argc > 2 && !IS_NONE(argv[2]) ? vm_call(vm, typ, 1, &argv[2]) : vm_call(vm, typ, 0, NULL);
    vm_raise_kind(vm, TypeError, "exceptions must be classes or instances deriving from BaseException, not %s",
                  vm_type_name(vm, typ));
}

static Value m_throw(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AnextAwaitable *a = check_self(vm, argc, argv);
    arg_no_kwargs(vm, "throw", kwargs);
    if (argc < 2 || argc > 4)
        vm_raise_kind(vm, TypeError, "throw expected at least 1 argument, got %d", argc < 2 ? 0 : argc - 1);
    return step(vm, a, "throw", throw_value(vm, argc, argv));
}

static Value m_close(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AnextAwaitable *a = check_self(vm, argc, argv);
    arg_no_kwargs(vm, "close", kwargs);
    if (!IS_EMPTY(a->inner) && has_method(vm, a->inner, "close"))
        vm_call_method(vm, a->inner, name_of(vm, "close"), 0, NULL);
    return NONE_VAL;
}

static Value m_iter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, argc, argv);
    arg_no_kwargs(vm, "__iter__", kwargs);
    return argv[0];
}

static void anext_mark(VM *vm, Obj *o) {
    AnextAwaitable *a = (AnextAwaitable *)o;
    gc_mark_value(vm, a->aiter);
    gc_mark_value(vm, a->dflt);
    gc_mark_value(vm, a->inner);
}

void async_builtins_init(VM *vm) {
    Type *t = type_new_builtin(vm, "anext_awaitable", vm->t_object, 0);
    t->mark = anext_mark;
    type_add_method(vm, t, "__await__", m_await);
    type_add_method(vm, t, "__iter__", m_iter);
    type_add_method(vm, t, "__next__", m_next);
    type_add_method(vm, t, "send", m_send);
    type_add_method(vm, t, "throw", m_throw);
    type_add_method(vm, t, "close", m_close);
    dict_set_cstr(vm, vm->builtins, "aiter", native_new(vm, "aiter", b_aiter, EMPTY_VAL));
    dict_set_cstr(vm, vm->builtins, "anext", native_new(vm, "anext", b_anext, OBJ_VAL(t)));
}
