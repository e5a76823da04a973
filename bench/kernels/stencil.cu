// 2-D 5-point stencil on the interior, float32, row-major u[rows][cols].
#ifndef IDX_T
#define IDX_T int /* run.py also builds with -DIDX_T="long long" */
#endif
extern "C" __global__ void stencil(const float *__restrict__ u, float *__restrict__ v, int rows, int cols) {
    IDX_T x = (IDX_T)blockIdx.x * blockDim.x + threadIdx.x;
    IDX_T y = (IDX_T)blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < rows - 1 && y < cols - 1)
        v[x * cols + y] = 0.25f * (u[(x - 1) * cols + y] + u[(x + 1) * cols + y] +
                                   u[x * cols + y - 1] + u[x * cols + y + 1]) - u[x * cols + y];
}
