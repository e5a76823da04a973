// Block sum of float32 in shared memory with __syncthreads; one partial per block.
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
#define TPB 256
extern "C" __global__ void block_reduce(const float *__restrict__ a, float *__restrict__ partial, int n) {
    __shared__ float s[TPB];
    int t = threadIdx.x;
    IDX_T i = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    s[t] = i < n ? a[i] : 0.0f;
    __syncthreads();
    for (int step = TPB / 2; step > 0; step /= 2) {
        if (t < step) s[t] += s[t + step];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}
