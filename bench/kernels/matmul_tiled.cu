// Shared-memory tiled matmul, 16x16 tiles, float32 (n a multiple of 16), same
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
// indexing as the gpy kernel (x = row from threadIdx.x).
#define TPB 16
extern "C" __global__ void matmul_tiled(const float *__restrict__ A, const float *__restrict__ B,
                                        float *__restrict__ C, int n) {
    __shared__ float sA[TPB][TPB];
    __shared__ float sB[TPB][TPB];
    IDX_T x = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    IDX_T y = (IDX_T)blockIdx.y * blockDim.y + threadIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float tmp = 0.0f;
    for (int i = 0; i < (int)gridDim.x; ++i) {
        sA[tx][ty] = A[x * n + ty + i * TPB];
        sB[tx][ty] = B[(IDX_T)(tx + i * TPB) * n + y];
        __syncthreads();
        for (int j = 0; j < TPB; ++j) tmp += sA[tx][j] * sB[j][ty];
        __syncthreads();
    }
    C[x * n + y] = tmp;
}
