// Vector add, float32, as a CUDA programmer writes it (int index).
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
extern "C" __global__ void vector_add(const float *__restrict__ a, const float *__restrict__ b,
                                      float *__restrict__ c, int n) {
    IDX_T i = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
