/*
** prompt.h — the interactive prompt when stdin and stdout are terminals:
** line editing, history (~/.gpy_history, GPY_HISTORY), blocks as history
** units, completion, Ctrl-C and %magics. docs/repl.md describes it. With
** any other stdin, main.c's plain line reader runs instead, unchanged.
*/
#ifndef GPY_PROMPT_H
#define GPY_PROMPT_H

#include "vm.h"

/* Reads, runs and prints until end of input or exit(); returns the exit status. */
int prompt_repl(VM *vm);

#endif
