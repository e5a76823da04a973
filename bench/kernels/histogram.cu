// Histogram of int32 values with global atomics.
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
extern "C" __global__ void histogram(const int *__restrict__ data, int *__restrict__ bins, int n, int nbins) {
    IDX_T i = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i] % nbins], 1);
}
