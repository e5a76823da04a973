/*
** interp.h — private to the interpreter files (interp.c, call.c,
** generator.c): the generator object layout, the interpreter's error
** landing pad, and the entry points those three files share.
**
** Frame invariants kept by every function here:
**  - vm->nframes frames are live; the top one is the running frame.
**  - vm->stack_top == top frame's base + its proto's nregs while gpy code
**    runs (natives and the GC rely on it).
**  - a frame's pc, while it is not the running one or while the running
**    one may raise, points just past the opcode word of its current
**    instruction (so pc - code - 1 is the faulting instruction); a frame
**    suspended in CALL/CALL_METHOD resumes after the EXT word.
**  - a callee's registers start at the caller's stack_top (the arguments
**    are copied there), so a call never clobbers caller registers; build
**    with -DGPY_CALL_IN_PLACE for Lua's layout (the frame starts at the
**    arguments, R[A+1]), valid only if the compiler keeps no live register
**    above a call block (saves a few percent on call-heavy code).
*/
#ifndef GPY_INTERP_H
#define GPY_INTERP_H

#include "opcodes.h"
#include "vm.h"

/* Frame.entry values */
#define FRAME_NORMAL 0     /* pushed by CALL in the same loop: RETURN resumes the caller */
#define FRAME_ENTRY 1      /* pushed from C: RETURN/YIELD leave interp_run */
#define FRAME_GEN_INLINE 2 /* generator resumed by FOR_ITER inside the same loop */
#define FRAME_INIT 3       /* __init__ run by CALL on a class: the result is the instance */

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NOINLINE __attribute__((noinline))
#define COLD __attribute__((noinline, cold))
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define NOINLINE
#define COLD
#endif

typedef enum GenState { GEN_CREATED, GEN_SUSPENDED, GEN_RUNNING, GEN_DONE } GenState;

/* A generator owns a copy of its frame's registers while it is not running;
** resuming copies them onto the VM stack as a fresh frame. */
struct Generator {
    Obj obj;
    Function *fn;
    Value *regs;    /* nregs saved registers; NULL once done */
    int32_t nregs;
    int32_t pc;     /* resume instruction index (just after the YIELD) */
    int32_t state;  /* GenState */
    Value handling; /* the frame's exception-being-handled, kept across yields */
    struct GenBatch *batch; /* gen_batch.c: a consumer taking values in bulk, while running */
};

/* The ErrorJmp of one interpreter-loop invocation. */
typedef struct InterpJmp {
    ErrorJmp ej;
    int32_t entry;         /* index in vm->frames of the loop's entry frame */
    NativeFunction *native; /* vm->current_native at entry, restored when catching */
    volatile bool reraise; /* set before a throw that must not add a traceback line */
    bool protect;          /* interp_run_protected: an escaping exception returns, not rethrows */
} InterpJmp;

/* Sets the frame count; vm->interp_nframes survives a vm_throw that resets
** vm->nframes to the catcher's saved depth, so the catching loop still
** knows which frames to unwind. */
#define SET_NFRAMES(vm, n) ((vm)->nframes = (vm)->interp_nframes = (n))

/* Copies n registers; generators do it at every resume and yield, mostly
** for a handful of registers, where a loop beats a memcpy call. */
static inline void interp_copy_regs(Value *dst, const Value *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = src[i];
}

/* interp.c */
/* Runs the top frame (pushed by the caller, entry FRAME_ENTRY) until it
** returns or (generators) yields, and pops it. exc: if not EMPTY, it is
** raised at the frame's suspended instruction first (generator.throw). */
Value interp_run(VM *vm, Value exc);
/* interp_run for an entry frame pushed by a caller with no protected call
** of its own (gpy_call's fast path): an exception escaping the entry frame
** leaves the VM as vm_pcall's failure does (frames, stack top, roots and C
** depth restored; the exception in vm->exc_value) and returns false. */
bool interp_run_protected(VM *vm, Value *result);
/* Counts a nested C-level entry into the interpreter (call it right before
** pushing the entry frame); RecursionError when too deep, by count or by
** C stack use. interp_run undoes it when it returns or rethrows. */
void interp_enter(VM *vm);
/* Pushes an entry frame for fn at base (registers already bound). */
static inline Frame *interp_push_entry(VM *vm, Function *fn, Value *base) {
    Frame *f = &vm->frames[vm->nframes];
    f->fn = fn;
    f->pc = fn->proto->code;
    f->base = base;
    f->globals = fn->globals;
    f->locals = NULL;
    f->handling = NONE_VAL;
    f->ret = NULL;
    f->gen = NULL;
    f->entry = FRAME_ENTRY;
    SET_NFRAMES(vm, vm->nframes + 1);
    vm->stack_top = base + fn->proto->nregs;
    return f;
}
_Noreturn void interp_recursion_error(VM *vm);
/* Checks that the frame array and value stack can take a frame of nregs
** registers at base; RecursionError otherwise. */
void interp_check_room(VM *vm, Value *base, int64_t nregs);
/* Finds obj.name as a method to call with obj as first argument (a
** function or method native on obj's type, not shadowed by an instance
** attribute); false when the generic attribute protocol must be used. */
bool interp_find_method(VM *vm, Value obj, Str *name, Value *out);

/* call.c */
/* Binds the arguments of a call to fn into the registers base[0..nregs):
** npos positional values at pos, then keywords either as nkw names (Tuple
** kwnames of Str) with values kwvals, or as the Dict kwdict. Inputs may
** overlap base (CALL passes them in place). Raises CPython's TypeErrors. */
void interp_bind(VM *vm, Function *fn, Value *base, int64_t npos, const Value *pos, int64_t nkw,
                 Tuple *kwnames, const Value *kwvals, Dict *kwdict);
/* Builds the kwargs Dict for a native callee from CALL's names and values. */
Dict *interp_kwargs_dict(VM *vm, Tuple *kwnames, const Value *kwvals, int64_t nkw);
/* Calls func(self, *argv) without building a bound method. */
Value interp_call_with_self(VM *vm, Value func, Value self, int argc, const Value *argv, Dict *kwargs);
/* Qualified name of a function for error messages. */
const char *interp_fn_name(Function *fn);

/* generator.c */
/* The generator finished (returned or raised): frees its registers. */
void gen_finish(VM *vm, Generator *g);
/* An exception leaves the generator's frame: finishes it and turns a
** StopIteration into RuntimeError("generator raised StopIteration"). */
Value gen_unwind(VM *vm, Generator *g, Value exc);
/* Resumes g with sent (a value for the suspended yield) or with exc raised
** at the yield (or, suspended in an await, thrown into the awaited object).
** Returns true with the yielded value in *out, or false with the return
** value when the generator finished. */
bool gen_resume(VM *vm, Generator *g, Value sent, Value exc, Value *out);
/* gen_resume(g, None) for gen_next_batch: runs with batch armed. */
bool gen_resume_batch(VM *vm, Generator *g, struct GenBatch *batch, Value *out);
/* The exception throw(typ[, val[, tb]]) raises (argv[0] is self). */
Value gen_throw_value(VM *vm, int argc, Value *argv);

/* coroutine.c: what the async opcodes do (see opcodes.h) */
Value coro_unwind_exc(VM *vm, Generator *g, Value exc);
Value coro_get_awaitable(VM *vm, Value o, int ctx);
bool coro_send(VM *vm, Value *r);
Value coro_get_aiter(VM *vm, Value o);
Value coro_get_anext(VM *vm, Value o);
bool coro_is_stop_async(VM *vm, Value exc);
Value coro_wrap_value(VM *vm, Value v);
void coro_async_with_enter(VM *vm, Value *ra, Value mgr);
Value coro_async_with_exit(VM *vm, Value exitf, Value exc, bool has_exc);

#endif
