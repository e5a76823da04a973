/*
** device_select.c — which device runs kernels (device_select.h).
*/
#include "device_select.h"

#include <stdio.h>
#include <string.h>

GpuDeviceKind gpu_device_select(GpuDeviceWant want, const char *libcuda, GpuCuda **gpu, char *why, size_t size) {
    *gpu = NULL;
    if (want == GPU_WANT_CPU) return GPU_KIND_CPU;
    char err[GPU_CUDA_ERRSIZE];
    err[0] = '\0';
    int n = 0, status = gpu_cuda_device_count(libcuda, &n, err, sizeof err);
    if (status == 0 && n == 0) snprintf(err, sizeof err, "the CUDA driver (%s) reports no device", gpu_cuda_library_path(libcuda));
    if (status == 0 && n > 0) {
        *gpu = gpu_cuda_open(libcuda, 0, &status, err, sizeof err);
        if (*gpu) return GPU_KIND_CUDA;
    }
    if (want == GPU_WANT_AUTO) return GPU_KIND_CPU;
    snprintf(why, size, "%.480s", err[0] ? err : "no CUDA device");
    return GPU_KIND_FAILED;
}

const char *gpu_device_describe(GpuDeviceWant want, const char *libcuda, const char *how, char *buf, size_t size) {
    if (want == GPU_WANT_CPU) {
        snprintf(buf, size, "gpy CPU device (%s=cpu)", how);
        return buf;
    }
    char err[GPU_CUDA_ERRSIZE];
    GpuCudaProps p;
    int n = 0;
    if (gpu_cuda_device_count(libcuda, &n, err, sizeof err) == 0 && n > 0 && gpu_cuda_device_props(libcuda, 0, &p, err, sizeof err) == 0)
        snprintf(buf, size, "CUDA device 0: %.200s (compute capability %d.%d, %d SMs)", p.name, p.cc_major, p.cc_minor,
                 p.sm_count);
    else if (want == GPU_WANT_CUDA)
        snprintf(buf, size, "none: %s=cuda but %.300s", how, n == 0 && !strstr(err, "not found") ? "no CUDA device" : err);
    else
        snprintf(buf, size, "gpy CPU device (no CUDA device found)");
    return buf;
}
