/*
** gen_finalize.c — abandoned generators run their finally blocks.
**
** CPython closes a suspended generator (GeneratorExit thrown in at the
** yield, as close() does) the moment its last reference goes. gpy's
** collector is a tracing one, so the same happens at two other moments:
**   - a collection that finds an unreachable generator suspended inside a
**     try block (a finally, an except or a with) keeps it alive, queues it
**     (gc.c), and the next safepoint closes it; a later collection frees it;
**   - when the VM is freed, every generator still suspended inside a try
**     block is closed, oldest first (creation order: CPython clears a
**     module's globals in the order they were defined).
** A generator suspended in `yield from` is closed too: close() reaches the
** inner iterator first, as in CPython.
** A generator suspended outside any try block has nothing to run on close:
** it is simply freed. An exception escaping close() (a yield in the
** finally: "generator ignored GeneratorExit") is printed to stderr as
** CPython prints exceptions ignored in finalizers, and dropped.
*/
#include <stdlib.h>

#include "interp.h"

bool generator_needs_close(VM *vm, Obj *o) {
    if (o->type != vm->t_generator) return false;
    Generator *g = (Generator *)o;
    if (g->state != GEN_SUSPENDED || !g->regs) return false;
    Proto *p = g->fn->proto;
    uint32_t at = (uint32_t)(g->pc - 1); /* the yield it waits at */
    /* suspended in `yield from`: closing it closes the inner iterator first */
    if (INS_C(p->code[at])) return true;
    for (int32_t i = 0; i < p->nhandlers; i++)
        if (p->handlers[i].start <= at && at < p->handlers[i].end) return true;
    return false;
}

static void close_body(VM *vm, void *ud) {
    Value *gen = ud;
    Value close = type_lookup(vm, vm->t_generator, str_cstr(vm, "close"));
    vm_call(vm, close, 1, gen);
}

static void repr_body(VM *vm, void *ud) {
    Value *v = ud;
    *v = STR_VAL(vm_repr(vm, *v));
}

/* Closes one abandoned generator; what escapes is reported and dropped. */
static void close_abandoned(VM *vm, Value gen) {
    Value saved = vm->exc_value;
    vm_push_root(vm, saved);
    vm_push_root(vm, gen);
    Value arg = gen;
    if (!vm_pcall(vm, close_body, &arg)) {
        Value exc = vm->exc_value;
        vm_push_root(vm, exc);
        Value shown = gen;
        fflush(stdout);
        fputs("Exception ignored in: ", stderr);
        if (vm_pcall(vm, repr_body, &shown) && IS_STR(vm, shown)) fputs(AS_STR(shown)->chars, stderr);
        fputc('\n', stderr);
        /* CPython reports an exception ignored in a finalizer without its chain */
        if (IS_OBJ(exc) && (AS_OBJ(exc)->type->flags & TYPE_EXCEPTION)) {
            ExcObj *e = (ExcObj *)AS_OBJ(exc);
            Value cause = e->cause, context = e->context;
            e->cause = e->context = NONE_VAL;
            exc_print(vm, exc, stderr);
            e->cause = cause;
            e->context = context;
        } else {
            exc_print(vm, exc, stderr);
        }
        fflush(stderr);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 2);
    vm->exc_value = saved;
}

void gen_run_finalizers(VM *vm) {
    if (vm->finalizing) return;
    vm->finalizing = true;
    /* the queue holds the newest first (gc.c walks vm->objects): taking
    ** from the end closes the oldest first and keeps the rest queued (rooted) */
    while (vm->nfinalize > 0) close_abandoned(vm, OBJ_VAL(vm->finalize_queue[--vm->nfinalize]));
    vm->finalizing = false;
}

void gen_close_all(VM *vm) {
    int64_t n = 0, cap = 0;
    Obj **list = NULL;
    /* no generator ever made: nothing to look for among all the objects */
    for (Obj *o = vm->generators_made ? vm->objects : NULL; o; o = o->gc_next) {
        if (!o->type || !generator_needs_close(vm, o)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            Obj **l = realloc(list, (size_t)cap * sizeof *l);
            if (!l) break;
            list = l;
        }
        list[n++] = o;
    }
    /* rooted while the others run: a collection must not free them */
    for (int64_t i = 0; i < n; i++) vm_push_root(vm, OBJ_VAL(list[i]));
    for (int64_t i = n - 1; i >= 0; i--) close_abandoned(vm, OBJ_VAL(list[i]));
    vm_pop_roots(vm, (int)n);
    free(list);
    gen_run_finalizers(vm);
}
