/*
** kernel_args.c — scalars and arrays as kernel parameters (kernel_args.h).
*/
#include "kernel_args.h"

/* the ABI passes a host data pointer and a CUdeviceptr in the same 8 bytes */
_Static_assert(sizeof(void *) == sizeof(uint64_t), "kernel ABI: pointers are 8 bytes");

int gpu_args_push_scalar(GpuArgs *a, NDType dt, const GpuNumber *x) {
    bool ok;
#define AS_C(ctype) (x->is_int ? (x->is_unsigned ? (ctype)x->u : (ctype)x->i) : (ctype)x->f)
    switch (dt) {
    case ND_BOOL: { uint8_t v = x->is_int ? (x->i != 0 || x->u != 0) : (x->f != 0); ok = gpu_args_push(a, &v, 1); break; }
    case ND_INT8: { int8_t v = AS_C(int8_t); ok = gpu_args_push(a, &v, 1); break; }
    case ND_INT16: { int16_t v = AS_C(int16_t); ok = gpu_args_push(a, &v, 2); break; }
    case ND_INT32: { int32_t v = AS_C(int32_t); ok = gpu_args_push(a, &v, 4); break; }
    case ND_INT64: { int64_t v = AS_C(int64_t); ok = gpu_args_push(a, &v, 8); break; }
    case ND_UINT8: { uint8_t v = AS_C(uint8_t); ok = gpu_args_push(a, &v, 1); break; }
    case ND_UINT16: { uint16_t v = AS_C(uint16_t); ok = gpu_args_push(a, &v, 2); break; }
    case ND_UINT32: { uint32_t v = AS_C(uint32_t); ok = gpu_args_push(a, &v, 4); break; }
    case ND_UINT64: {
        uint64_t v = x->is_int ? (x->is_unsigned ? x->u : (uint64_t)x->i) : (uint64_t)x->f;
        ok = gpu_args_push(a, &v, 8);
        break;
    }
    case ND_FLOAT32: { float v = AS_C(float); ok = gpu_args_push(a, &v, 4); break; }
    case ND_FLOAT64: { double v = AS_C(double); ok = gpu_args_push(a, &v, 8); break; }
    default: return GPU_ARGS_UNSUPPORTED;
    }
#undef AS_C
    return ok ? 0 : GPU_ARGS_MISMATCH;
}

int gpu_args_push_array(GpuArgs *a, uint64_t address, int ndim, const int64_t *shape, const int64_t *strides) {
    bool ok = gpu_args_push(a, &address, sizeof address);
    for (int i = 0; ok && i < ndim; i++) ok = gpu_args_push(a, &shape[i], 8);
    for (int i = 0; ok && i < ndim; i++) ok = gpu_args_push(a, &strides[i], 8);
    return ok ? 0 : GPU_ARGS_MISMATCH;
}
