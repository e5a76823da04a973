/*
** fake_libcuda.h — the test-only functions of tests/gpu/fake_libcuda.so, the
** CUDA driver stand-in (see fake_libcuda.c). Tests dlopen the same file that
** GPY_LIBCUDA names and look these up with dlsym; the typedefs below are
** their types.
*/
#ifndef GPY_FAKE_LIBCUDA_H
#define GPY_FAKE_LIBCUDA_H

#include <stddef.h>

#define FAKE_CUDA_MAX_PARAMS 512
#define FAKE_CUDA_MAX_PARAM_BYTES 32764 /* the driver's kernel parameter limit (Volta+, CUDA 12.1+) */

/* One recorded cuLaunchKernel. */
typedef struct FakeLaunch {
    char entry[512];                 /* the .entry name (cut if longer) */
    unsigned grid[3], block[3];
    unsigned shared_bytes;           /* dynamic */
    void *stream;
    int nparams;                     /* from the PTX .param list */
    unsigned param_size[FAKE_CUDA_MAX_PARAMS];
    unsigned param_offset[FAKE_CUDA_MAX_PARAMS]; /* into bytes */
    size_t nbytes;                   /* sum of param_size */
    unsigned char bytes[FAKE_CUDA_MAX_PARAM_BYTES]; /* each parameter's bytes, concatenated without padding */
} FakeLaunch;

/* Number of successful launches so far. */
typedef long (*fake_cuda_launch_count_fn)(void);
/* Copies the back-th most recent launch (0 = the last); 0, or -1 if none. */
typedef int (*fake_cuda_get_launch_fn)(int back, FakeLaunch *out);
/* Contract violations seen (total), and the message of the i-th (0 = oldest
** kept; the last 256 are kept), or NULL. */
typedef int (*fake_cuda_violations_fn)(void);
typedef const char *(*fake_cuda_violation_fn)(int i);
typedef const char *(*fake_cuda_last_violation_fn)(void);
typedef void (*fake_cuda_clear_violations_fn)(void);
/* The next cuLaunchKernel fails with code: a sticky code (illegal address,
** launch failure, ...) is reported as on a GPU — the launch returns success
** and every later call on the context returns the code until
** cuDevicePrimaryCtxReset; other codes are returned by the launch itself. */
typedef void (*fake_cuda_inject_error_fn)(int code);
/* Device memory (cuMemAlloc + cuMemAllocManaged) currently allocated. */
typedef size_t (*fake_cuda_live_bytes_fn)(void);
typedef int (*fake_cuda_live_allocations_fn)(void);

#endif
