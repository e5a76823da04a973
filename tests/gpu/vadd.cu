extern "C" __global__ void vadd(const float *a, const float *b, float *c, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
struct Pair { double x; int y; };
extern "C" __global__ void scale_pair(double *out, Pair p, float s, unsigned char flag)
{
    __shared__ double tile[64];
    tile[threadIdx.x % 64] = p.x * s + p.y + flag;
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x + 1) % 64];
}
