/*
** fuzz_vm.h — what the libFuzzer targets in tests/fuzz share: one VM per
** process (creating one per input would spend most of the time in vm_new),
** protected calls, and a garbage collection now and then because the
** targets that only compile never reach the interpreter's safepoints.
*/
#ifndef GPY_FUZZ_VM_H
#define GPY_FUZZ_VM_H

#include <stddef.h>
#include <stdint.h>

#include "vm.h"

/* The process's VM (created on first use). Its stdout goes to /dev/null
** unless GPY_FUZZ_VERBOSE is set, so that printing programs stay fast. */
VM *fuzz_vm(void);
/* Runs fn protected; an exception is what fuzz inputs mostly produce, so
** it is dropped. True when fn returned normally. */
bool fuzz_pcall(VM *vm, void (*fn)(VM *vm, void *ud), void *ud);
/* Collects garbage every few inputs (call with nothing rooted but what the
** target keeps for the whole run). */
void fuzz_collect(VM *vm);
/* A FILE open on /dev/null for listings nobody reads. */
FILE *fuzz_null_file(void);

#endif
