/*
** api.h — what the files of api/ (the implementation of include/gpy.h)
** share. api/ is the top layer of libgpy: it may use vm/, stdlib/, jit/ and
** gpu/; nothing below includes this header.
**
** A GpyVM wraps one VM. Slots are a stack of windows: the application's
** window starts at 0; each call of a C function (api/api_native.c) opens a
** fresh window above the caller's and closes it on return, so a C function
** sees its own slots 0 .. n-1. Every slot of every open window and every
** handle is a GC root (api_mark).
*/
#ifndef GPY_API_H
#define GPY_API_H

#include "gpy.h"
#include "vm.h"

struct GpyHandle {
    Value value;
    struct GpyHandle *prev, *next;
};

struct GpyVM {
    VM *vm;
    /* slots: values[base .. base+count) is the open window */
    Value *values;
    int cap, base, count;
    int kwargs_slot;        /* the running C function's keyword dict slot, or -1 */
    GpyHandle *handles;     /* every live handle (doubly linked) */
    Type *t_external;       /* api_array.c: the owner of wrapped memory with a release callback */
    /* the last failure: the exception, and its strings made on demand */
    Value error;            /* NONE when none */
    char *error_type, *error_message, *error_traceback;
    int exit_code;
    Dict *exceptions;       /* api_native.c: "module.Name" -> class made by gpy_new_exception (gpy_raise) */
};

/* The GpyVM of vm (NULL when vm was not made by gpy_new). */
static inline GpyVM *api_of(VM *vm) { return vm->api; }
/* api_native.c: is v an instance of a class made by gpy_new_class (or of a
** script's subclass of one, which lacks the TYPE_FOREIGN flag itself)? */
bool api_is_foreign(VM *vm, Value v);

/* Runs fn(vm, ud) protected. On success returns GPY_OK and clears the last
** error; on an exception records it (api_record) and returns its status. */
GpyStatus api_protect(GpyVM *g, void (*fn)(VM *vm, void *ud), void *ud);
/* Records exc as the last failure and returns its status: SyntaxError →
** GPY_SYNTAX_ERROR, MemoryError → GPY_OUT_OF_MEMORY, KeyboardInterrupt →
** GPY_INTERRUPTED, SystemExit → GPY_EXIT (exit_code set), else
** GPY_RUNTIME_ERROR. */
GpyStatus api_record(GpyVM *g, Value exc);
/* Records the IndexError for a slot outside the open window; false. */
bool api_slot_fail(GpyVM *g, int slot);
/* Checks slot against the open window; false (with an IndexError recorded)
** when it is out of range. Inline: every slot accessor starts with it. */
static inline bool api_slot_ok(GpyVM *g, int slot) {
    return (slot >= 0 && slot < g->count) || api_slot_fail(g, slot);
}
/* The value in slot of the open window (the slot must be valid). */
static inline Value *api_slot(GpyVM *g, int slot) { return &g->values[g->base + slot]; }
/* Raises (inside a protected call) the IndexError for a bad slot. */
_Noreturn void api_bad_slot(VM *vm, int slot);
/* Opens a window of count fresh slots (None) above the current one and
** returns the previous base/count in *saved (for api_close_window); raises
** MemoryError. */
typedef struct ApiWindow {
    int base, count, kwargs_slot;
} ApiWindow;
void api_open_window(VM *vm, GpyVM *g, int count, ApiWindow *saved);
void api_close_window(GpyVM *g, const ApiWindow *saved);

/* ---- shared by api_values.c, api_calls.c, api_handles.c ---- */
/* Records a new exception of kind with the formatted message as the last
** failure (outside a protected call) and returns its status. */
GpyStatus api_fail(GpyVM *g, ExcKind kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Raises (inside a protected call) TypeError "slot 2 holds a 'str', not an
** int"; want names the expected kind with its article. */
_Noreturn void api_wrong_type(VM *vm, int slot, const char *want);
/* A str from UTF-8 text handed to the API (len (size_t)-1: NUL-terminated);
** raises UnicodeDecodeError (a ValueError) with CPython's message when it
** is not valid UTF-8, TypeError when text is NULL. what names the argument. */
Str *api_str(VM *vm, const char *text, size_t len, const char *what);
/* Raises IndexError (inside a protected call) unless slot is in the window. */
static inline void api_check_slot(VM *vm, GpyVM *g, int slot) {
    if (slot < 0 || slot >= g->count) api_bad_slot(vm, slot);
}
/* Collects when the allocation budget is spent. The interpreter reaches
** safepoints only at calls and backward jumps inside gpy code, so an
** application that builds values or makes failing calls in a C loop would
** otherwise never collect. Call it only where every live value is in a
** slot, a handle or a root (the start of a protected body). */
static inline void api_safepoint(VM *vm) { gc_safepoint(vm); }

#endif
