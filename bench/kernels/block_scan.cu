// Block inclusive prefix scan (Hillis-Steele, double-buffered shared memory), int32.
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
#define TPB 256
extern "C" __global__ void block_scan(const int *__restrict__ a, int *__restrict__ out, int n) {
    __shared__ int s[2][TPB];
    int t = threadIdx.x;
    IDX_T i = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    s[0][t] = i < n ? a[i] : 0;
    __syncthreads();
    int src = 0;
    for (int off = 1; off < TPB; off *= 2) {
        int x = s[src][t];
        if (t >= off) x += s[src][t - off];
        s[1 - src][t] = x;
        src = 1 - src;
        __syncthreads();
    }
    if (i < n) out[i] = s[src][t];
}
