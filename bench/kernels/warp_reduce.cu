// Warp-shuffle reduction of float32; lane 0 adds the warp's sum to out[0].
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
extern "C" __global__ void warp_reduce(const float *__restrict__ a, float *__restrict__ out, int n) {
    IDX_T i = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? a[i] : 0.0f;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}
