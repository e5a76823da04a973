/*
** cpu_child_grids.h — kernels launching kernels on the CPU device (CUDA
** dynamic parallelism).
**
** A thread's child[grid, block](args) queues the child grid (kernel,
** dimensions, a copy of the argument bytes) on its own launch. When that
** launch's grid is done, the queued grids run, each to completion with its
** own children (depth first), before the launch returns. That is one of the
** schedules CUDA allows, and it gives CUDA's visibility rules: a child sees
** what its parent wrote before launching it; the parent never sees a child's
** writes while it runs; the host sees every descendant done when the launch
** returns. Children run in the order (launching block, launching thread,
** launch order within the thread), so runs are reproducible.
** Grids nest at most GPU_CPU_MAX_NESTING levels below the host's, as on the
** GPU; a deeper launch fails the host launch with a message.
*/
#ifndef GPY_CPU_CHILD_GRIDS_H
#define GPY_CPU_CHILD_GRIDS_H

#include "cpu_device.h"

#define GPU_CPU_MAX_NESTING 24

/* Runs the grid l and every grid it launches, recursively. 0, or -1 with a
** message in err; GPU_CPU_CHILD_INDEX_ERROR when a debug-mode kernel
** launched from a kernel indexed out of bounds (the IndexError message in err). */
#define GPU_CPU_CHILD_INDEX_ERROR (-2)
int gpu_cpu_launch_tree(CpuDevice *d, const CpuLaunch *l, char *err, size_t errsize);
/* Kernels queue children with gpy_cpu_launch_child (contracts/kernel_abi.h). */


#endif
