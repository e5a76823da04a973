// SAXPY, float32.
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
extern "C" __global__ void saxpy(float a, const float *__restrict__ x, float *__restrict__ y, int n) {
    IDX_T i = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
