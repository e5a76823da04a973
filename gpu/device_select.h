/*
** device_select.h — which device runs a VM's kernels: the CUDA GPU when the
** driver loads and reports one, else the CPU device, unless the caller
** asks for one of them (the CLI reads GPY_DEVICE, an embedder sets it in
** its config; neither is this layer's business).
*/
#ifndef GPY_DEVICE_SELECT_H
#define GPY_DEVICE_SELECT_H

#include <stddef.h>

#include "cuda_driver.h"

typedef enum GpuDeviceWant { GPU_WANT_AUTO, GPU_WANT_CPU, GPU_WANT_CUDA } GpuDeviceWant;
typedef enum GpuDeviceKind { GPU_KIND_CPU = 1, GPU_KIND_CUDA, GPU_KIND_FAILED } GpuDeviceKind;

/* GpuDeviceWant has GpyDevice's values (include/gpy.h). libcuda: the
** driver library to open (NULL: libcuda.so.1). Decides. GPU_KIND_CUDA: *gpu is device 0, opened. GPU_KIND_FAILED (only
** when CUDA was asked for): why it cannot run, in why. AUTO falls back to
** the CPU device, and touches the driver; CPU never does. */
GpuDeviceKind gpu_device_select(GpuDeviceWant want, const char *libcuda, GpuCuda **gpu, char *why, size_t size);
/* One line for `gpy --version`: the device a VM would use, without opening
** it ("CUDA device 0: NAME (compute capability 8.0, 108 SMs)"). how names
** the setting that asked for a device, for the message ("GPY_DEVICE"). */
const char *gpu_device_describe(GpuDeviceWant want, const char *libcuda, const char *how, char *buf, size_t size);

#endif
