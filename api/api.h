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
};

/* The GpyVM of vm (NULL when vm was not made by gpy_new). */
static inline GpyVM *api_of(VM *vm) { return vm->api; }

/* Runs fn(vm, ud) protected. On success returns GPY_OK and clears the last
** error; on an exception records it (api_record) and returns its status. */
GpyStatus api_protect(GpyVM *g, void (*fn)(VM *vm, void *ud), void *ud);
/* Records exc as the last failure and returns its status: SyntaxError →
** GPY_SYNTAX_ERROR, MemoryError → GPY_OUT_OF_MEMORY, KeyboardInterrupt →
** GPY_INTERRUPTED, SystemExit → GPY_EXIT (exit_code set), else
** GPY_RUNTIME_ERROR. */
GpyStatus api_record(GpyVM *g, Value exc);
/* Checks slot against the open window; false (with an IndexError recorded)
** when it is out of range. */
bool api_slot_ok(GpyVM *g, int slot);
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

#endif
