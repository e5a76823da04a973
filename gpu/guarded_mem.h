/*
** guarded_mem.h — buffers fenced by inaccessible guard regions, for the
** arrays kernels use on the CPU device.
**
** A kernel that indexes past either end of such a buffer touches a guard
** region and faults; the CPU device's fault handler (cpu_device.c) turns
** the fault into a failed launch instead of letting the write land in
** another array or in the interpreter's heap. The data ends exactly where
** the upper guard begins (its start is aligned to the element size asked
** for), so a[n] faults for every dtype. Below the data, the rest of its
** first page comes before the lower guard; its last 256 bytes are a
** redzone checked after each launch. Each guard is as wide as the buffer, at least 1 MiB and at
** most 256 MiB: guards cost address space, not memory.
**
** Buffers of up to 16 pages come from slabs of slots reused without
** system calls (see guarded_mem.c). When the kernel refuses a mapping (too
** many mappings, an address-space limit) or 8192 slots are in use, the
** allocation falls back to malloc: the buffer then works but is unguarded.
*/
#ifndef GPY_GUARDED_MEM_H
#define GPY_GUARDED_MEM_H

#include <stdbool.h>
#include <stddef.h>

typedef struct GuardedBuf GuardedBuf;

/* A buffer of bytes (0 allowed) whose data starts at a multiple of align (a
** power of two ≤ 4096) and ends at its upper guard; zeroed when zero is set.
** NULL when out of memory. */
GuardedBuf *guarded_alloc(size_t bytes, size_t align, bool zero);
void guarded_free(GuardedBuf *b);
/* The buffer's data (bytes long). */
void *guarded_data(const GuardedBuf *b);
/* The data sits at the end of its pages; the rest of its first page
** belongs to no one (a write there harms nothing). Its last 256 bytes, just
** below the data, are a redzone kept zero: false when something wrote
** there (an index a little below 0); the redzone is then zeroed again. */
bool guarded_redzone_clean(GuardedBuf *b);
/* Whether b really has guard regions (false after the malloc fallback). */
bool guarded_is_fenced(const GuardedBuf *b);

/* The live guarded buffer whose mapping (guards included) contains addr:
** its data and size in *data and *bytes. False when none does. Scans every
** live buffer: for reporting a fault, not for fast paths. Thread-safe. */
bool guarded_find(const void *addr, void **data, size_t *bytes);

/* Once a VM imports cuda or numba, its host arrays (numpy buffers,
** stdlib/nd_core.c) of more than GUARDED_HOST_MIN bytes are allocated here,
** so that a CPU-device kernel cannot index from them into the heap; smaller
** ones are copied into fenced memory for each launch (stdlib/cuda_array.c).
** VMs without kernels keep malloc's speed (the choice is the caller's, per
** VM: nothing here is switched on for the whole process). */
#define GUARDED_HOST_MIN ((size_t)60 << 10)
/* A fenced buffer of bytes for a host array, or NULL (too small, no mapping
** to be had: use malloc). */
void *guarded_host_alloc(size_t bytes, size_t align);
/* Frees data if guarded_host_alloc gave it; false (nothing done) otherwise. */
bool guarded_host_free(void *data);

#endif
