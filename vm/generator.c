/*
** generator.c — generator objects. A generator keeps a copy of its frame's
** registers and its resume point while suspended; resuming copies them
** back onto the VM stack as a fresh frame. FOR_ITER resumes generators
** inside the running interpreter loop (interp.c); next(), send(), throw()
** and close() resume them in a nested loop through gen_resume.
*/
#include <string.h>

#include "gen_batch.h"
#include "interp.h"

static Generator *as_gen(Value v) {
    return (Generator *)AS_OBJ(v);
}

Value generator_new(VM *vm, Function *fn, Value *args) {
    Proto *p = fn->proto;
    Type *t = (p->flags & PROTO_COROUTINE)   ? vm->t_coroutine
              : (p->flags & PROTO_ASYNC_GEN) ? vm->t_async_generator
                                             : vm->t_generator;
    Generator *g = gc_alloc_obj(vm, t, sizeof(Generator));
    vm->generators_made = true; /* gc.c: look for abandoned generators from now on */
    g->fn = fn;
    g->handling = NONE_VAL;
    g->batch = NULL;
    g->state = GEN_CREATED;
    g->pc = 0;
    g->nregs = 0;
    size_t n = p->nregs > 0 ? (size_t)p->nregs : 0;
    g->regs = gc_malloc(vm, (n ? n : 1) * sizeof(Value));
    if (n) memcpy(g->regs, args, n * sizeof(Value));
    g->nregs = (int32_t)n;
    return OBJ_VAL(g);
}

void gen_finish(VM *vm, Generator *g) {
    g->state = GEN_DONE;
    g->batch = NULL;
    g->handling = NONE_VAL;
    if (g->regs) {
        gc_free(vm, g->regs, (size_t)(g->nregs ? g->nregs : 1) * sizeof(Value));
        g->regs = NULL;
    }
}

Value gen_unwind(VM *vm, Generator *g, Value exc) {
    gen_finish(vm, g);
    if (g->obj.type != vm->t_generator) return coro_unwind_exc(vm, g, exc);
    if (IS_OBJ(exc) && type_is_subtype(AS_OBJ(exc)->type, vm->exc[EXC_StopIteration])) {
        Value r = exc_new_msg(vm, vm->exc[EXC_RuntimeError], "generator raised StopIteration");
        ExcObj *e = (ExcObj *)AS_OBJ(r);
        e->cause = exc;
        e->context = exc;
        e->suppress_context = true;
        return r;
    }
    return exc;
}

static bool resume(VM *vm, Generator *g, Value sent, Value exc, Value *out, struct GenBatch *batch) {
    switch (g->state) {
    case GEN_RUNNING: vm_raise_kind(vm, ValueError, "generator already executing");
    case GEN_DONE:
        if (!IS_EMPTY(exc)) vm_throw(vm, exc);
        *out = NONE_VAL;
        return false;
    case GEN_CREATED:
        if (!IS_EMPTY(exc)) {
            gen_finish(vm, g);
            vm_throw(vm, exc);
        }
        if (!IS_NONE(sent) && !IS_EMPTY(sent))
            vm_raise_kind(vm, TypeError, "can't send non-None value to a just-started generator");
        break;
    default: break;
    }
    Proto *p = g->fn->proto;
    /* suspended in an await (a YIELD with C = 1): SEND throws exc into the
    ** awaited object, which may handle it */
    if (g->state == GEN_SUSPENDED && !IS_EMPTY(exc) && INS_C(p->code[g->pc - 1])) {
        g->regs[INS_A(p->code[g->pc - 1]) + 1] = exc;
        exc = EMPTY_VAL;
        sent = NONE_VAL;
    }
    Value *base = vm->stack_top;
    interp_check_room(vm, base, p->nregs);
    interp_enter(vm);
    interp_copy_regs(base, g->regs, p->nregs);
    if (g->state == GEN_SUSPENDED && IS_EMPTY(exc))
        base[INS_A(p->code[g->pc - 1])] = IS_EMPTY(sent) ? NONE_VAL : sent;
    Frame *f = interp_push_entry(vm, g->fn, base);
    f->pc = p->code + g->pc;
    f->gen = g;
    f->handling = g->handling;
    g->state = GEN_RUNNING;
    g->batch = batch; /* after every check that can throw: a throw leaves it NULL */
    Value r = interp_run(vm, exc);
    *out = r;
    return g->state == GEN_SUSPENDED;
}

bool gen_resume(VM *vm, Generator *g, Value sent, Value exc, Value *out) {
    return resume(vm, g, sent, exc, out, NULL);
}

bool gen_resume_batch(VM *vm, Generator *g, struct GenBatch *batch, Value *out) {
    return resume(vm, g, NONE_VAL, EMPTY_VAL, out, batch);
}

/* StopIteration carrying a generator's return value. */
static _Noreturn void stop_iteration(VM *vm, Value v) {
    vm_throw(vm, exc_new(vm, vm->exc[EXC_StopIteration], IS_NONE(v) ? 0 : 1, &v));
}

static Generator *check_gen(VM *vm, const char *meth, int argc, Value *argv) {
    if (argc < 1 || !IS_OBJ(argv[0]) || AS_OBJ(argv[0])->type != vm->t_generator)
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a 'generator' object", meth);
    return as_gen(argv[0]);
}

/* ================================================================ slots */

static Value gen_iter(VM *vm, Value self) {
    (void)vm;
    return self;
}

static bool gen_next_slot(VM *vm, Value self, Value *out) {
    Value v;
    if (gen_resume(vm, as_gen(self), NONE_VAL, EMPTY_VAL, &v)) {
        *out = v;
        return true;
    }
    return false;
}

static Str *gen_qualname(Generator *g) {
    Function *fn = g->fn;
    if (fn->qualname) return fn->qualname;
    if (fn->proto->qualname) return fn->proto->qualname;
    return fn->name ? fn->name : fn->proto->name;
}

static Value gen_repr(VM *vm, Value self) {
    Generator *g = as_gen(self);
    Str *q = gen_qualname(g);
    return STR_VAL(str_printf(vm, "<generator object %s at %p>", q ? q->chars : "?", (void *)g));
}

static Value gen_getattr(VM *vm, Value self, Str *name) {
    Generator *g = as_gen(self);
    const char *n = name->chars;
    if (!strcmp(n, "__name__")) {
        Str *s = g->fn->name ? g->fn->name : g->fn->proto->name;
        return s ? STR_VAL(s) : NONE_VAL;
    }
    if (!strcmp(n, "__qualname__")) {
        Str *s = gen_qualname(g);
        return s ? STR_VAL(s) : NONE_VAL;
    }
    if (!strcmp(n, "gi_running")) return BOOL_VAL(g->state == GEN_RUNNING);
    if (!strcmp(n, "gi_suspended")) return BOOL_VAL(g->state == GEN_SUSPENDED);
    if (!strcmp(n, "gi_frame")) return NONE_VAL;
    if (!strcmp(n, "gi_code")) return OBJ_VAL(g->fn->proto);
    if (!strcmp(n, "__class__")) return OBJ_VAL(vm->t_generator);
    Value m = type_lookup(vm, vm->t_generator, name);
    if (IS_OBJ(m) && (AS_OBJ(m)->type == vm->t_function ||
                      (AS_OBJ(m)->type == vm->t_builtin_function && (AS_OBJ(m)->flags & NATIVE_FLAG_METHOD))))
        return bound_method_new(vm, self, m);
    return m;
}

static void gen_mark(VM *vm, Obj *o) {
    Generator *g = (Generator *)o;
    gc_mark_obj(vm, (Obj *)g->fn);
    gc_mark_value(vm, g->handling);
    if (g->regs && g->state != GEN_RUNNING)
        for (int32_t i = 0; i < g->nregs; i++) gc_mark_value(vm, g->regs[i]);
    if (g->batch && g->state == GEN_RUNNING)
        for (int i = 0; i < g->batch->n; i++) gc_mark_value(vm, g->batch->items[i]);
}

static void gen_finalize(VM *vm, Obj *o) {
    Generator *g = (Generator *)o;
    if (g->regs) {
        gc_free(vm, g->regs, (size_t)(g->nregs ? g->nregs : 1) * sizeof(Value));
        g->regs = NULL;
    }
}

/* ============================================================== methods */

static Value m_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_gen(vm, "__next__", argc, argv);
    arg_no_kwargs(vm, "__next__", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "expected 0 arguments, got %d", argc - 1);
    Value v;
    if (gen_resume(vm, g, NONE_VAL, EMPTY_VAL, &v)) return v;
    stop_iteration(vm, v);
}

static Value m_iter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_gen(vm, "__iter__", argc, argv);
    arg_no_kwargs(vm, "__iter__", kwargs);
    return argv[0];
}

static Value m_send(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_gen(vm, "send", argc, argv);
    arg_no_kwargs(vm, "send", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "generator.send() takes exactly one argument (%d given)", argc - 1);
    Value v;
    if (gen_resume(vm, g, argv[1], EMPTY_VAL, &v)) return v;
    stop_iteration(vm, v);
}

/* throw(exc) / throw(type[, value[, tb]]): the exception instance to raise. */
Value gen_throw_value(VM *vm, int argc, Value *argv) {
    Value typ = argv[1];
    Value val = argc > 2 ? argv[2] : NONE_VAL;
    if (IS_OBJ(typ) && (AS_OBJ(typ)->type->flags & TYPE_EXCEPTION)) {
        if (!IS_NONE(val)) vm_raise_kind(vm, TypeError, "instance exception may not have a separate value");
        return typ;
    }
    bool is_class = IS_OBJ(typ) && type_is_subtype(AS_OBJ(typ)->type, vm->t_type) &&
                    (((Type *)AS_OBJ(typ))->flags & TYPE_EXCEPTION);
    if (!is_class)
        vm_raise_kind(vm, TypeError, "exceptions must be classes or instances deriving from BaseException, not %s",
                      vm_type_name(vm, typ));
    if (IS_OBJ(val) && type_is_subtype(AS_OBJ(val)->type, (Type *)AS_OBJ(typ))) return val;
    Value e;
    if (IS_NONE(val)) e = vm_call(vm, typ, 0, NULL);
    else if (IS_TUPLE(vm, val)) e = vm_call(vm, typ, (int)AS_TUPLE(val)->len, AS_TUPLE(val)->items);
    else e = vm_call(vm, typ, 1, &val);
    if (!IS_OBJ(e) || !(AS_OBJ(e)->type->flags & TYPE_EXCEPTION))
        vm_raise_kind(vm, TypeError, "exceptions must derive from BaseException");
    return e;
}

static Value m_throw(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_gen(vm, "throw", argc, argv);
    arg_no_kwargs(vm, "throw", kwargs);
    if (argc < 2 || argc > 4)
        vm_raise_kind(vm, TypeError, "throw expected at least 1 argument, got %d", argc < 2 ? 0 : argc - 1);
    Value exc = gen_throw_value(vm, argc, argv);
    vm_push_root(vm, exc);
    Value v;
    bool yielded = gen_resume(vm, g, NONE_VAL, exc, &v);
    vm_pop_roots(vm, 1);
    if (yielded) return v;
    stop_iteration(vm, v);
}

typedef struct CloseCall {
    Generator *g;
    Value exc;
    bool yielded;
} CloseCall;

static void close_body(VM *vm, void *ud) {
    CloseCall *c = ud;
    Value v;
    c->yielded = gen_resume(vm, c->g, NONE_VAL, c->exc, &v);
}

static Value m_close(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Generator *g = check_gen(vm, "close", argc, argv);
    arg_no_kwargs(vm, "close", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "close() takes no arguments (%d given)", argc - 1);
    if (g->state == GEN_RUNNING) vm_raise_kind(vm, ValueError, "generator already executing");
    if (g->state != GEN_SUSPENDED) {
        gen_finish(vm, g);
        return NONE_VAL;
    }
    CloseCall c = {.g = g, .exc = exc_new(vm, vm->exc[EXC_GeneratorExit], 0, NULL), .yielded = false};
    vm_push_root(vm, c.exc);
    bool ok = vm_pcall(vm, close_body, &c);
    vm_pop_roots(vm, 1);
    if (ok) {
        if (c.yielded) vm_raise_kind(vm, RuntimeError, "generator ignored GeneratorExit");
        return NONE_VAL;
    }
    Value e = vm->exc_value;
    if (IS_OBJ(e) && (type_is_subtype(AS_OBJ(e)->type, vm->exc[EXC_GeneratorExit]) ||
                      type_is_subtype(AS_OBJ(e)->type, vm->exc[EXC_StopIteration]))) {
        vm->exc_value = NONE_VAL;
        return NONE_VAL;
    }
    vm_rethrow(vm, e);
}

void generator_init(VM *vm) {
    Type *t = vm->t_generator;
    t->iter = gen_iter;
    t->next = gen_next_slot;
    t->repr = gen_repr;
    t->getattr = gen_getattr;
    t->mark = gen_mark;
    t->finalize = gen_finalize;
    type_add_method(vm, t, "__next__", m_next);
    type_add_method(vm, t, "__iter__", m_iter);
    type_add_method(vm, t, "send", m_send);
    type_add_method(vm, t, "throw", m_throw);
    type_add_method(vm, t, "close", m_close);
}
