/*
** repl_helpers.h — what the interactive prompt asks the running VM:
** completions of the text before the cursor (names in scope, keywords,
** attributes of live objects, module and file names) and IPython-style
** magics (%time, %timeit, %run, %who, %reset, %ptx, %llvm, %types, %regs,
** %device). %load and %history belong to the line editor (prompt.c).
*/
#ifndef GPY_REPL_HELPERS_H
#define GPY_REPL_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include "vm.h"

typedef struct ReplCompletion {
    size_t start;  /* byte offset in the line where the completed word begins */
    char **names;  /* malloc'd candidates, sorted */
    size_t count;
} ReplCompletion;

/* Completes line[0..len) (the text before the cursor). False: no candidates
** could be computed (errors are swallowed: completion must not disturb). */
bool repl_complete(VM *vm, const char *line, size_t len, ReplCompletion *out);
void repl_completion_free(ReplCompletion *c);

/* Compiles the helpers now and puts help() in builtins (the prompt's start). */
void repl_helpers_load(VM *vm);

/* Runs a line "%name args" in the user's namespace; an error prints its
** traceback like any entry. Returns vm_run_interactive's status. */
int repl_run_magic(VM *vm, const char *line);

#endif
