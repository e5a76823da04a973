/*
** coroutine.c — coroutines (async def), async generators, and the
** awaitables that drive them.
**
** Both reuse the generator machinery of generator.c: a coroutine is a
** Generator object of type `coroutine` whose frame suspends at the YIELD of
** an `await` (emitted by the compiler as GET_AWAITABLE, then a SEND/YIELD
** loop). An async generator is a Generator of type `async_generator`; its
** own `yield` values are wrapped (ASYNC_GEN_WRAP) so that the awaitables
** asend()/athrow() return can tell them from the values an `await` inside
** it passes up to the event loop: a wrapped value ends the awaitable with
** StopIteration(value), a bare one is handed on to whoever drives it.
**
** An await nests one C-level interpreter entry per awaiting coroutine (SEND
** resumes the awaited one through gen_resume), as CPython nests its C stack,
** so a very deep chain of awaits ends in RecursionError like CPython's.
*/
#include <string.h>

#include "cstack.h"
#include "interp.h"

/* Async generator awaitables: asend() / __anext__ and athrow() / aclose(). */
typedef enum AwaitState { AW_INIT, AW_ITER, AW_CLOSED } AwaitState;

typedef struct AsyncAwait {
    Obj obj;
    Generator *gen;
    Value value; /* asend: the value to send first; athrow: the exception (EMPTY: aclose) */
    int32_t state;
} AsyncAwait;

/* A value an async generator yields (not one its awaits pass up). */
typedef struct AsyncWrapped {
    Obj obj;
    Value value;
} AsyncWrapped;

/* coroutine.__await__() result. */
typedef struct CoroWrapper {
    Obj obj;
    Generator *coro;
} CoroWrapper;

static Str *name_of(VM *vm, const char *s) {
    return str_intern(vm, s, strlen(s));
}

static bool has_type(VM *vm, Value v, Type *t) {
    (void)vm;
    return IS_OBJ(v) && AS_OBJ(v)->type == t;
}

static _Noreturn void stop_iteration(VM *vm, Value v) {
    vm_throw(vm, exc_new(vm, vm->exc[EXC_StopIteration], IS_NONE(v) ? 0 : 1, &v));
}

/* The value a StopIteration carries (None without arguments). */
static Value stop_value(Value exc) {
    ExcObj *e = (ExcObj *)AS_OBJ(exc);
    return e->args && e->args->len > 0 ? e->args->items[0] : NONE_VAL;
}

static bool exc_is(VM *vm, Value exc, ExcKind k) {
    return IS_OBJ(exc) && type_is_subtype(AS_OBJ(exc)->type, vm->exc[k]);
}

static const char *kind_name(VM *vm, Generator *g) {
    return g->obj.type == vm->t_coroutine ? "coroutine" : g->obj.type == vm->t_async_generator ? "async generator" : "generator";
}

/* The exception that leaves an async frame: StopIteration (and, from an
** async generator, StopAsyncIteration) becomes RuntimeError, as in CPython. */
Value coro_unwind_exc(VM *vm, Generator *g, Value exc) {
    bool agen = g->obj.type == vm->t_async_generator;
    const char *what = exc_is(vm, exc, EXC_StopIteration) ? "StopIteration"
                       : agen && exc_is(vm, exc, EXC_StopAsyncIteration) ? "StopAsyncIteration"
                                                                          : NULL;
    if (!what) return exc;
    vm_push_root(vm, exc);
    Value r = OBJ_VAL(str_printf(vm, "%s raised %s", kind_name(vm, g), what));
    vm_push_root(vm, r);
    r = exc_new(vm, vm->exc[EXC_RuntimeError], 1, &r);
    ExcObj *e = (ExcObj *)AS_OBJ(r);
    e->cause = exc;
    e->context = exc;
    e->suppress_context = true;
    vm_pop_roots(vm, 2);
    return r;
}

/* ================================================================ coroutines */

static Generator *check_self(VM *vm, Type *t, const char *meth, int argc, Value *argv) {
    if (argc < 1 || !has_type(vm, argv[0], t))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a '%s' object", meth, t->cname);
    return (Generator *)AS_OBJ(argv[0]);
}

/* send(v) on a coroutine: the yielded value, or StopIteration(result). */
static Value coro_send_value(VM *vm, Generator *g, Value v) {
    if (g->state == GEN_DONE) vm_raise_kind(vm, RuntimeError, "cannot reuse already awaited coroutine");
    if (g->state == GEN_CREATED && !IS_NONE(v))
        vm_raise_kind(vm, TypeError, "can't send non-None value to a just-started coroutine");
    if (g->state == GEN_RUNNING) vm_raise_kind(vm, ValueError, "coroutine already executing");
    Value out;
    if (gen_resume(vm, g, v, EMPTY_VAL, &out)) return out;
    stop_iteration(vm, out);
}

static Value coro_throw_value(VM *vm, Generator *g, Value exc) {
    if (g->state == GEN_RUNNING) vm_raise_kind(vm, ValueError, "%s already executing", kind_name(vm, g));
    vm_push_root(vm, exc);
    Value out;
    bool y = gen_resume(vm, g, NONE_VAL, exc, &out);
    vm_pop_roots(vm, 1);
    if (y) return out;
    stop_iteration(vm, out);
}

typedef struct CloseCall {
    Generator *g;
    Value exc;
    Value out;
    bool yielded;
} CloseCall;

static void close_body(VM *vm, void *ud) {
    CloseCall *c = ud;
    c->yielded = gen_resume(vm, c->g, NONE_VAL, c->exc, &c->out);
}

/* close(): GeneratorExit at the suspension point; true when the frame
** yielded again instead of finishing (the caller decides what that means). */
static bool coro_close_frame(VM *vm, Generator *g, Value *yielded) {
    if (g->state == GEN_RUNNING) vm_raise_kind(vm, ValueError, "%s already executing", kind_name(vm, g));
    if (g->state != GEN_SUSPENDED) {
        gen_finish(vm, g);
        return false;
    }
    CloseCall c = {.g = g, .exc = exc_new(vm, vm->exc[EXC_GeneratorExit], 0, NULL), .out = NONE_VAL};
    vm_push_root(vm, c.exc);
    bool ok = vm_pcall(vm, close_body, &c);
    vm_pop_roots(vm, 1);
    if (ok) {
        *yielded = c.out;
        return c.yielded;
    }
    Value e = vm->exc_value;
    if (exc_is(vm, e, EXC_GeneratorExit) || exc_is(vm, e, EXC_StopIteration) ||
        (g->obj.type == vm->t_async_generator && exc_is(vm, e, EXC_StopAsyncIteration))) {
        vm->exc_value = NONE_VAL;
        return false;
    }
    vm_rethrow(vm, e);
}

static Value coro_close(VM *vm, Generator *g) {
    Value y;
    if (coro_close_frame(vm, g, &y)) vm_raise_kind(vm, RuntimeError, "coroutine ignored GeneratorExit");
    return NONE_VAL;
}

/* throw(exc) / throw(type[, value[, tb]]) arguments as one exception instance. */
static Value throw_arg(VM *vm, const char *what, int argc, Value *argv) {
    if (argc < 2 || argc > 4)
        vm_raise_kind(vm, TypeError, "%s expected at least 1 argument, got %d", what, argc < 2 ? 0 : argc - 1);
    return gen_throw_value(vm, argc, argv);
}

static Value m_coro_send(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_coroutine, "send", argc, argv);
    arg_no_kwargs(vm, "send", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "coroutine.send() takes exactly one argument (%d given)", argc - 1);
    return coro_send_value(vm, g, argv[1]);
}

static Value m_coro_throw(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_coroutine, "throw", argc, argv);
    arg_no_kwargs(vm, "throw", kwargs);
    return coro_throw_value(vm, g, throw_arg(vm, "throw", argc, argv));
}

static Value m_coro_close(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_coroutine, "close", argc, argv);
    arg_no_kwargs(vm, "close", kwargs);
    return coro_close(vm, g);
}

static Value m_coro_await(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_coroutine, "__await__", argc, argv);
    arg_no_kwargs(vm, "__await__", kwargs);
    CoroWrapper *w = gc_alloc_obj(vm, vm->t_coroutine_wrapper, sizeof(CoroWrapper));
    w->coro = g;
    return OBJ_VAL(w);
}

static Str *gen_qualname(Generator *g) {
    Function *fn = g->fn;
    if (fn->qualname) return fn->qualname;
    if (fn->proto->qualname) return fn->proto->qualname;
    return fn->name ? fn->name : fn->proto->name;
}

static Value coro_repr(VM *vm, Value self) {
    Generator *g = (Generator *)AS_OBJ(self);
    Str *q = gen_qualname(g);
    const char *kind = g->obj.type == vm->t_coroutine ? "coroutine" : "async_generator";
    return STR_VAL(str_printf(vm, "<%s object %s at %p>", kind, q ? q->chars : "?", (void *)g));
}

/* The sub-iterator a suspended frame is awaiting (cr_await / ag_await). */
static Value awaiting(Generator *g) {
    if (g->state != GEN_SUSPENDED || !g->regs) return NONE_VAL;
    uint32_t y = g->fn->proto->code[g->pc - 1];
    if (!INS_C(y)) return NONE_VAL;
    return g->regs[INS_A(y) - 1];
}

static Value coro_getattr(VM *vm, Value self, Str *name) {
    Generator *g = (Generator *)AS_OBJ(self);
    const char *n = name->chars;
    bool coro = g->obj.type == vm->t_coroutine;
    const char *pre = coro ? "cr_" : "ag_";
    if (!strcmp(n, "__name__")) {
        Str *s = g->fn->name ? g->fn->name : g->fn->proto->name;
        return s ? STR_VAL(s) : NONE_VAL;
    }
    if (!strcmp(n, "__qualname__")) {
        Str *s = gen_qualname(g);
        return s ? STR_VAL(s) : NONE_VAL;
    }
    if (!strcmp(n, "__class__")) return OBJ_VAL(g->obj.type);
    if (!strncmp(n, pre, 3)) {
        const char *r = n + 3;
        if (!strcmp(r, "running")) return BOOL_VAL(g->state == GEN_RUNNING);
        if (!strcmp(r, "suspended") && !coro) return BOOL_VAL(g->state == GEN_SUSPENDED);
        if (!strcmp(r, "frame")) return NONE_VAL;
        if (!strcmp(r, "code")) return OBJ_VAL(g->fn->proto);
        if (!strcmp(r, "await")) return awaiting(g);
    }
    Value m = type_lookup(vm, g->obj.type, name);
    if (IS_OBJ(m) && (AS_OBJ(m)->flags & NATIVE_FLAG_METHOD) && AS_OBJ(m)->type == vm->t_builtin_function)
        return bound_method_new(vm, self, m);
    return m;
}

/* ---------------------------------------------------------- coroutine_wrapper */

static Generator *check_wrapper(VM *vm, const char *meth, int argc, Value *argv) {
    if (argc < 1 || !has_type(vm, argv[0], vm->t_coroutine_wrapper))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a 'coroutine_wrapper' object", meth);
    return ((CoroWrapper *)AS_OBJ(argv[0]))->coro;
}

typedef struct SendNextCall {
    Value it, out;
} SendNextCall;

static Value await_send(VM *vm, struct AsyncAwait *a, Value v);

static void send_next_body(VM *vm, void *ud) {
    SendNextCall *c = ud;
    Obj *o = AS_OBJ(c->it);
    if (o->type == vm->t_coroutine_wrapper) c->out = coro_send_value(vm, ((CoroWrapper *)o)->coro, NONE_VAL);
    else c->out = await_send(vm, (struct AsyncAwait *)o, NONE_VAL);
}

static Value m_wrap_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_wrapper(vm, "__next__", argc, argv);
    arg_no_kwargs(vm, "__next__", kwargs);
    return coro_send_value(vm, g, NONE_VAL);
}

static Value m_wrap_send(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_wrapper(vm, "send", argc, argv);
    arg_no_kwargs(vm, "send", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "send() takes exactly one argument (%d given)", argc - 1);
    return coro_send_value(vm, g, argv[1]);
}

static Value m_wrap_throw(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_wrapper(vm, "throw", argc, argv);
    arg_no_kwargs(vm, "throw", kwargs);
    return coro_throw_value(vm, g, throw_arg(vm, "throw", argc, argv));
}

static Value m_wrap_close(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_wrapper(vm, "close", argc, argv);
    arg_no_kwargs(vm, "close", kwargs);
    return coro_close(vm, g);
}

static Value m_self(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)vm;
    (void)kwargs;
    return argc > 0 ? argv[0] : NONE_VAL;
}

/* The next slot (for loops, next() without a default goes through send to
** keep the StopIteration value): the awaitable's next step, false when done. */
static bool send_next_slot(VM *vm, Value self, Value *out) {
    SendNextCall c = {.it = self, .out = NONE_VAL};
    if (vm_pcall(vm, send_next_body, &c)) {
        *out = c.out;
        return true;
    }
    Value e = vm->exc_value;
    if (!exc_is(vm, e, EXC_StopIteration)) vm_rethrow(vm, e);
    vm->exc_value = NONE_VAL;
    return false;
}

static Value self_iter(VM *vm, Value self) {
    (void)vm;
    return self;
}

static void wrapper_mark(VM *vm, Obj *o) {
    gc_mark_obj(vm, (Obj *)((CoroWrapper *)o)->coro);
}

/* =========================================================== async generators */

static Value new_await(VM *vm, Type *t, Generator *g, Value v) {
    vm_push_root(vm, v);
    AsyncAwait *a = gc_alloc_obj(vm, t, sizeof(AsyncAwait));
    a->gen = g;
    a->value = v;
    a->state = AW_INIT;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(a);
}

static Value m_agen_aiter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, vm->t_async_generator, "__aiter__", argc, argv);
    arg_no_kwargs(vm, "__aiter__", kwargs);
    return argv[0];
}

static Value m_agen_anext(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_async_generator, "__anext__", argc, argv);
    arg_no_kwargs(vm, "__anext__", kwargs);
    return new_await(vm, vm->t_async_asend, g, NONE_VAL);
}

static Value m_agen_asend(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_async_generator, "asend", argc, argv);
    arg_no_kwargs(vm, "asend", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "async_generator.asend() takes exactly one argument (%d given)", argc - 1);
    return new_await(vm, vm->t_async_asend, g, argv[1]);
}

static Value m_agen_athrow(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_async_generator, "athrow", argc, argv);
    arg_no_kwargs(vm, "athrow", kwargs);
    return new_await(vm, vm->t_async_athrow, g, throw_arg(vm, "athrow", argc, argv));
}

static Value m_agen_aclose(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_self(vm, vm->t_async_generator, "aclose", argc, argv);
    arg_no_kwargs(vm, "aclose", kwargs);
    return new_await(vm, vm->t_async_athrow, g, EMPTY_VAL);
}

/* What the generator did, seen from an asend/athrow awaitable: its own
** yield ends the awaitable with StopIteration(value); an await's value is
** passed up; finishing is StopAsyncIteration. */
static Value agen_outcome(VM *vm, AsyncAwait *a, bool yielded, Value v) {
    if (!yielded) {
        a->state = AW_CLOSED;
        vm_throw(vm, exc_new(vm, vm->exc[EXC_StopAsyncIteration], 0, NULL));
    }
    if (has_type(vm, v, vm->t_async_wrapped)) {
        a->state = AW_CLOSED;
        stop_iteration(vm, ((AsyncWrapped *)AS_OBJ(v))->value);
    }
    return v;
}

typedef struct StepCall {
    AsyncAwait *a;
    Value sent, exc, out;
    bool yielded;
} StepCall;

static void step_body(VM *vm, void *ud) {
    StepCall *c = ud;
    if (c->a->gen->state == GEN_RUNNING) vm_raise_kind(vm, RuntimeError, "anext(): asynchronous generator is already running");
    c->yielded = gen_resume(vm, c->a->gen, c->sent, c->exc, &c->out);
}

/* Resumes the async generator for an awaitable; an exception leaving it
** closes the awaitable (and aclose() swallows GeneratorExit and
** StopAsyncIteration, its normal outcomes). */
static Value agen_step(VM *vm, AsyncAwait *a, Value sent, Value exc) {
    /* CPython reaches an async generator through a C call, and words the
    ** recursion error of a too deep chain of them as such */
    int32_t limit = vm->recursion_limit > 0 ? vm->recursion_limit : 1000;
    if (vm->c_depth >= limit || vm->nframes >= vm->recursion_limit || c_stack_exhausted())
        vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded while calling a Python object");
    StepCall c = {.a = a, .sent = sent, .exc = exc, .out = NONE_VAL};
    vm_push_root(vm, OBJ_VAL(a));
    bool ok = vm_pcall(vm, step_body, &c);
    vm_pop_roots(vm, 1);
    bool aclose = a->obj.type == vm->t_async_athrow && IS_EMPTY(a->value);
    if (!ok) {
        Value e = vm->exc_value;
        a->state = AW_CLOSED;
        if (aclose && (exc_is(vm, e, EXC_GeneratorExit) || exc_is(vm, e, EXC_StopAsyncIteration))) {
            vm->exc_value = NONE_VAL;
            stop_iteration(vm, NONE_VAL);
        }
        vm_rethrow(vm, e);
    }
    if (aclose) {
        if (!c.yielded) {
            a->state = AW_CLOSED;
            stop_iteration(vm, NONE_VAL);
        }
        if (has_type(vm, c.out, vm->t_async_wrapped)) {
            a->state = AW_CLOSED;
            vm_raise_kind(vm, RuntimeError, "async generator ignored GeneratorExit");
        }
        return c.out;
    }
    return agen_outcome(vm, a, c.yielded, c.out);
}

static AsyncAwait *check_await(VM *vm, const char *meth, int argc, Value *argv) {
    if (argc < 1 || !IS_OBJ(argv[0]) ||
        (AS_OBJ(argv[0])->type != vm->t_async_asend && AS_OBJ(argv[0])->type != vm->t_async_athrow))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires an async generator awaitable", meth);
    return (AsyncAwait *)AS_OBJ(argv[0]);
}

static Value await_send(VM *vm, AsyncAwait *a, Value v) {
    bool asend = a->obj.type == vm->t_async_asend;
    if (a->state == AW_CLOSED)
        vm_raise_kind(vm, RuntimeError, asend ? "cannot reuse already awaited __anext__()/asend()"
                                              : "cannot reuse already awaited aclose()/athrow()");
    if (a->state == AW_INIT) {
        a->state = AW_ITER;
        if (asend) return agen_step(vm, a, IS_NONE(v) ? a->value : v, EMPTY_VAL);
        Generator *g = a->gen;
        if (IS_EMPTY(a->value)) {
            /* aclose() of a generator that never started or already ended */
            if (g->state != GEN_SUSPENDED) {
                gen_finish(vm, g);
                a->state = AW_CLOSED;
                stop_iteration(vm, NONE_VAL);
            }
            return agen_step(vm, a, NONE_VAL, exc_new(vm, vm->exc[EXC_GeneratorExit], 0, NULL));
        }
        if (g->state == GEN_DONE) {
            a->state = AW_CLOSED;
            vm_throw(vm, exc_new(vm, vm->exc[EXC_StopAsyncIteration], 0, NULL));
        }
        return agen_step(vm, a, NONE_VAL, a->value);
    }
    return agen_step(vm, a, v, EMPTY_VAL);
}

static Value m_await_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AsyncAwait *a = check_await(vm, "__next__", argc, argv);
    arg_no_kwargs(vm, "__next__", kwargs);
    return await_send(vm, a, NONE_VAL);
}

static Value m_await_send(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AsyncAwait *a = check_await(vm, "send", argc, argv);
    arg_no_kwargs(vm, "send", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "send() takes exactly one argument (%d given)", argc - 1);
    return await_send(vm, a, argv[1]);
}

static Value m_await_throw(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AsyncAwait *a = check_await(vm, "throw", argc, argv);
    arg_no_kwargs(vm, "throw", kwargs);
    Value exc = throw_arg(vm, "throw", argc, argv);
    if (a->state == AW_CLOSED) vm_raise_kind(vm, RuntimeError, "cannot reuse already awaited __anext__()/asend()");
    a->state = AW_ITER;
    return agen_step(vm, a, NONE_VAL, exc);
}

static Value m_await_close(VM *vm, int argc, Value *argv, Dict *kwargs) {
    AsyncAwait *a = check_await(vm, "close", argc, argv);
    arg_no_kwargs(vm, "close", kwargs);
    a->state = AW_CLOSED;
    return NONE_VAL;
}

static void await_mark(VM *vm, Obj *o) {
    AsyncAwait *a = (AsyncAwait *)o;
    gc_mark_obj(vm, (Obj *)a->gen);
    gc_mark_value(vm, a->value);
}

static void wrapped_mark(VM *vm, Obj *o) {
    gc_mark_value(vm, ((AsyncWrapped *)o)->value);
}

/* ================================================= interpreter helpers */

Value coro_wrap_value(VM *vm, Value v) {
    vm_push_root(vm, v);
    AsyncWrapped *w = gc_alloc_obj(vm, vm->t_async_wrapped, sizeof(AsyncWrapped));
    w->value = v;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(w);
}

static bool is_iterator(VM *vm, Value v) {
    Type *t = vm_typeof(vm, v);
    return t->next || !IS_EMPTY(type_lookup(vm, t, name_of(vm, "__next__")));
}

Value coro_get_awaitable(VM *vm, Value o, int ctx) {
    Type *t = vm_typeof(vm, o);
    if (t == vm->t_coroutine) {
        if (!IS_NONE(awaiting((Generator *)AS_OBJ(o))))
            vm_raise_kind(vm, RuntimeError, "coroutine is being awaited already");
        return o;
    }
    Str *aw = name_of(vm, "__await__");
    if (IS_EMPTY(type_lookup(vm, t, aw))) {
        const char *tn = vm_type_name(vm, o);
        switch (ctx) {
        case 1: vm_raise_kind(vm, TypeError, "'async with' received an object from __aenter__ that does not implement __await__: %s", tn);
        case 2: vm_raise_kind(vm, TypeError, "'async with' received an object from __aexit__ that does not implement __await__: %s", tn);
        case 3: vm_raise_kind(vm, TypeError, "'async for' received an invalid object from __anext__: %s", tn);
        default: vm_raise_kind(vm, TypeError, "object %s can't be used in 'await' expression", tn);
        }
    }
    Value it = vm_call_method(vm, o, aw, 0, NULL);
    if (has_type(vm, it, vm->t_coroutine)) vm_raise_kind(vm, TypeError, "__await__() returned a coroutine");
    if (!is_iterator(vm, it))
        vm_raise_kind(vm, TypeError, "__await__() returned non-iterator of type '%s'", vm_type_name(vm, it));
    return it;
}

typedef struct SendCall {
    Value it, v, exc, out;
    bool throw_;
} SendCall;

static void send_body(VM *vm, void *ud) {
    SendCall *c = ud;
    if (c->throw_) c->out = vm_call_method(vm, c->it, name_of(vm, "throw"), 1, &c->exc);
    else if (IS_NONE(c->v)) c->out = vm_call_method(vm, c->it, name_of(vm, "__next__"), 0, NULL);
    else c->out = vm_call_method(vm, c->it, name_of(vm, "send"), 1, &c->v);
}

/* The generic path of SEND: it.__next__() / send(v) / throw(exc), with
** StopIteration meaning the await is over. */
static bool send_generic(VM *vm, Value *r, SendCall *c) {
    if (vm_pcall(vm, send_body, c)) {
        r[1] = c->out;
        return true;
    }
    Value e = vm->exc_value;
    if (!exc_is(vm, e, EXC_StopIteration)) vm_rethrow(vm, e);
    vm->exc_value = NONE_VAL;
    r[1] = stop_value(e);
    return false;
}

bool coro_send(VM *vm, Value *r) {
    Value it = r[0];
    Value exc = r[2];
    Type *t = vm_typeof(vm, it);
    if (t == vm->t_coroutine_wrapper) {
        it = OBJ_VAL(((CoroWrapper *)AS_OBJ(it))->coro);
        t = vm->t_coroutine;
    }
    bool gen = t == vm->t_coroutine || t == vm->t_generator;
    if (!IS_NONE(exc)) {
        r[2] = NONE_VAL;
        if (exc_is(vm, exc, EXC_GeneratorExit)) {
            /* close() reached an await: close the awaited object, then leave */
            vm_push_root(vm, exc);
            if (gen) {
                Value y;
                if (coro_close_frame(vm, (Generator *)AS_OBJ(it), &y))
                    vm_raise_kind(vm, RuntimeError, "%s ignored GeneratorExit", kind_name(vm, (Generator *)AS_OBJ(it)));
            } else if (!IS_EMPTY(vm_getattr_opt(vm, it, name_of(vm, "close")))) {
                vm_call_method(vm, it, name_of(vm, "close"), 0, NULL);
            }
            vm_pop_roots(vm, 1);
            vm_throw(vm, exc);
        }
        if (gen) {
            Generator *g = (Generator *)AS_OBJ(it);
            if (g->state == GEN_RUNNING) vm_raise_kind(vm, ValueError, "%s already executing", kind_name(vm, g));
            return gen_resume(vm, g, NONE_VAL, exc, &r[1]);
        }
        if (IS_EMPTY(type_lookup(vm, t, name_of(vm, "throw")))) vm_throw(vm, exc);
        SendCall c = {.it = it, .v = NONE_VAL, .exc = exc, .out = NONE_VAL, .throw_ = true};
        return send_generic(vm, r, &c);
    }
    if (gen) {
        Generator *g = (Generator *)AS_OBJ(it);
        if (g->state == GEN_DONE && t == vm->t_coroutine)
            vm_raise_kind(vm, RuntimeError, "cannot reuse already awaited coroutine");
        if (g->state == GEN_RUNNING) vm_raise_kind(vm, ValueError, "%s already executing", kind_name(vm, g));
        return gen_resume(vm, g, r[1], EMPTY_VAL, &r[1]);
    }
    /* a plain builtin iterator (yield from a list, a range...): its next
    ** slot, whose end is the end of the delegation (value None) */
    if (IS_NONE(r[1]) && t->next && !(t->flags & TYPE_HEAP) &&
        (t == vm->t_range_iter || t == vm->t_list_iter || IS_EMPTY(type_lookup(vm, t, name_of(vm, "send")))))
        return vm_next(vm, it, &r[1]) || (r[1] = NONE_VAL, false);
    SendCall c = {.it = it, .v = r[1], .exc = NONE_VAL, .out = NONE_VAL, .throw_ = false};
    return send_generic(vm, r, &c);
}

Value coro_get_aiter(VM *vm, Value o) {
    Type *t = vm_typeof(vm, o);
    Str *ai = name_of(vm, "__aiter__");
    if (IS_EMPTY(type_lookup(vm, t, ai)))
        vm_raise_kind(vm, TypeError, "'async for' requires an object with __aiter__ method, got %s", vm_type_name(vm, o));
    Value it = t == vm->t_async_generator ? o : vm_call_method(vm, o, ai, 0, NULL);
    if (IS_EMPTY(type_lookup(vm, vm_typeof(vm, it), name_of(vm, "__anext__"))))
        vm_raise_kind(vm, TypeError, "'async for' received an object from __aiter__ that does not implement __anext__: %s",
                      vm_type_name(vm, it));
    return it;
}

Value coro_get_anext(VM *vm, Value o) {
    Type *t = vm_typeof(vm, o);
    if (t == vm->t_async_generator) return new_await(vm, vm->t_async_asend, (Generator *)AS_OBJ(o), NONE_VAL);
    return vm_call_method(vm, o, name_of(vm, "__anext__"), 0, NULL);
}

bool coro_is_stop_async(VM *vm, Value exc) {
    return exc_is(vm, exc, EXC_StopAsyncIteration);
}

void coro_async_with_enter(VM *vm, Value *ra, Value mgr) {
    Type *t = vm_typeof(vm, mgr);
    Str *enter = name_of(vm, "__aenter__"), *exitn = name_of(vm, "__aexit__");
    if (IS_EMPTY(type_lookup(vm, t, enter)))
        vm_raise_kind(vm, TypeError, "'%s' object does not support the asynchronous context manager protocol",
                      vm_type_name(vm, mgr));
    if (IS_EMPTY(type_lookup(vm, t, exitn)))
        vm_raise_kind(vm, TypeError,
                      "'%s' object does not support the asynchronous context manager protocol (missed __aexit__ method)",
                      vm_type_name(vm, mgr));
    vm_push_root(vm, mgr);
    Value bound_exit = vm_getattr(vm, mgr, exitn);
    vm_push_root(vm, bound_exit);
    Value r = vm_call_method(vm, mgr, enter, 0, NULL);
    ra[0] = bound_exit;
    ra[1] = r;
    vm_pop_roots(vm, 2);
}

Value coro_async_with_exit(VM *vm, Value exitf, Value exc, bool has_exc) {
    Value args[3] = {NONE_VAL, NONE_VAL, NONE_VAL};
    if (has_exc) {
        args[0] = OBJ_VAL(vm_typeof(vm, exc));
        args[1] = exc;
    }
    return vm_call(vm, exitf, 3, args);
}

/* ======================================================================= init */

static Type *new_type(VM *vm, const char *name) {
    return type_new_builtin(vm, name, vm->t_object, 0);
}

void coroutine_init(VM *vm) {
    Type *t = vm->t_coroutine = new_type(vm, "coroutine");
    t->repr = coro_repr;
    t->getattr = coro_getattr;
    t->mark = vm->t_generator->mark;
    t->finalize = vm->t_generator->finalize;
    type_add_method(vm, t, "send", m_coro_send);
    type_add_method(vm, t, "throw", m_coro_throw);
    type_add_method(vm, t, "close", m_coro_close);
    type_add_method(vm, t, "__await__", m_coro_await);

    t = vm->t_coroutine_wrapper = new_type(vm, "coroutine_wrapper");
    t->iter = self_iter;
    t->next = send_next_slot;
    t->mark = wrapper_mark;
    type_add_method(vm, t, "__next__", m_wrap_next);
    type_add_method(vm, t, "__iter__", m_self);
    type_add_method(vm, t, "send", m_wrap_send);
    type_add_method(vm, t, "throw", m_wrap_throw);
    type_add_method(vm, t, "close", m_wrap_close);

    t = vm->t_async_generator = new_type(vm, "async_generator");
    t->repr = coro_repr;
    t->getattr = coro_getattr;
    t->mark = vm->t_generator->mark;
    t->finalize = vm->t_generator->finalize;
    type_add_method(vm, t, "__aiter__", m_agen_aiter);
    type_add_method(vm, t, "__anext__", m_agen_anext);
    type_add_method(vm, t, "asend", m_agen_asend);
    type_add_method(vm, t, "athrow", m_agen_athrow);
    type_add_method(vm, t, "aclose", m_agen_aclose);

    Type *aws[2] = {vm->t_async_asend = new_type(vm, "async_generator_asend"),
                    vm->t_async_athrow = new_type(vm, "async_generator_athrow")};
    for (int i = 0; i < 2; i++) {
        t = aws[i];
        t->iter = self_iter;
        t->next = send_next_slot;
        t->mark = await_mark;
        type_add_method(vm, t, "__await__", m_self);
        type_add_method(vm, t, "__iter__", m_self);
        type_add_method(vm, t, "__next__", m_await_next);
        type_add_method(vm, t, "send", m_await_send);
        type_add_method(vm, t, "throw", m_await_throw);
        type_add_method(vm, t, "close", m_await_close);
    }

    t = vm->t_async_wrapped = new_type(vm, "async_generator_wrapped_value");
    t->mark = wrapped_mark;
}
