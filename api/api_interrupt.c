/*
** api_interrupt.c — gpy_interrupt: the one entry point that any thread, or
** a signal handler, may call while another thread runs the VM. It only
** sets the VM's request flag (vm/signals.c): the interpreter, the CPU
** device and GPU waits test it and raise KeyboardInterrupt there.
*/
#include "api.h"
#include "signals.h"

void gpy_interrupt(GpyVM *vm) {
    if (vm) vm_request_interrupt(vm->vm);
}
