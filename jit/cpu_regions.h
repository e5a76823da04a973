/*
** cpu_regions.h — barrier kernels on the CPU device without fibers (private
** to jit/). When every cuda.syncthreads() of a kernel sits in control flow
** that is the same for all threads of a block, the kernel body is cut at
** its barriers into regions, and each region runs as one native loop over
** the block's threads (see cpu_regions.c for the rules and the lowering).
*/
#ifndef GPY_JIT_CPU_REGIONS_H
#define GPY_JIT_CPU_REGIONS_H

#include "target.h"

typedef struct CpuRegions CpuRegions;

/* The region plan of kernel f, or NULL when f has no barrier or must keep
** the fiber path (a barrier under thread-dependent control flow, warp
** collectives, print, a device function with a barrier). jit.c does not
** ask when config.cpu_regions is 0 (GPY_CPU_REGIONS=0). */
CpuRegions *cpu_regions_plan(const JFunc *f);
void cpu_regions_free(CpuRegions *p);

/* Lowers the kernel's body as regions (instead of lower_body); L->regions
** is the plan. The emitted body runs every thread of the block. */
void cpu_regions_lower_body(Lower *L);

/* The per-thread storage of the cuda.local.array call n (in a region). */
LLVMValueRef cpu_regions_local_array(Lower *L, const AstNode *n);

#endif
