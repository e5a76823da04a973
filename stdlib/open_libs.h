/*
** open_libs.h — what the layers above the standard library (api/, repl/) call
** to give a VM its library.
*/
#ifndef GPY_OPEN_LIBS_H
#define GPY_OPEN_LIBS_H

#include "vm.h"

/* VMConfig.open_libs: file objects, builtins, and every standard module
** (math, numpy, time, sys, os, random, cuda/numba) registered for import. */
void stdlib_open_libs(VM *vm);

/* stdlib/cuda.c: which device would run kernels with config.device and
** config.libcuda, for gpy --version (no VM needed) */
const char *cuda_device_description(int device, const char *libcuda, char *buf, size_t size);

#endif
