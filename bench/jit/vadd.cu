// The seed kernel (examples/vector_add.gpy) in CUDA C, for `nvcc -ptx` timing.
extern "C" __global__ void add_arrays_cuda(const float *x, const float *y, float *out, long long n) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) out[idx] = x[idx] + y[idx];
}
