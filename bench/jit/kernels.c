/*
** kernels.c — the C twins of bench/jit/kernels.gpy: the same loops, the same
** inputs and the same arithmetic order (the reduction sums each 256-element
** block in the kernel's tree order), so the checksums must match. Compiled
** with gcc -O2 by bench/jit/run.py; single-threaded. Prints
** "name median_seconds checksum" like the gpy program.
*/
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { REPS = 7, N = 10000000, H = 2048, W = 2048, MH = 512, MW = 512, MAXIT = 100, RN = 1000000, RB = 256 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void saxpy(float a, const float *x, const float *y, float *out) {
    for (long i = 0; i < N; i++) out[i] = a * x[i] + y[i];
}

static void stencil(const float *u, float *out) {
    for (long i = 0; i < H; i++)
        for (long j = 0; j < W; j++) {
            if (i == 0 || j == 0 || i == H - 1 || j == W - 1)
                out[i * W + j] = u[i * W + j];
            else
                out[i * W + j] = 0.2f * (u[i * W + j] + u[(i - 1) * W + j] + u[(i + 1) * W + j] +
                                         u[i * W + j - 1] + u[i * W + j + 1]);
        }
}

static void mandel(int32_t *out, int maxit) {
    for (long i = 0; i < MH; i++)
        for (long j = 0; j < MW; j++) {
            double cr = -2.0 + 2.5 * (double)j / MW, ci = -1.25 + 2.5 * (double)i / MH;
            double zr = 0.0, zi = 0.0;
            int n = 0;
            while (n < maxit && zr * zr + zi * zi <= 4.0) {
                double t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                n++;
            }
            out[i * MW + j] = n;
        }
}

static void block_sum(const float *x, float *out) {
    float sm[RB];
    for (long b = 0; b < (RN + RB - 1) / RB; b++) {
        for (long t = 0; t < RB; t++) sm[t] = b * RB + t < RN ? x[b * RB + t] : 0.0f;
        for (int s = RB / 2; s > 0; s /= 2)
            for (int t = 0; t < s; t++) sm[t] += sm[t + s];
        out[b] = sm[0];
    }
}

static volatile int sink;

#define TIMED(name, call, arr, len)                                      \
    do {                                                                 \
        double ts[REPS];                                                 \
        call;                                                            \
        for (int r = 0; r < REPS; r++) {                                 \
            double t0 = now();                                           \
            call;                                                        \
            ts[r] = now() - t0;                                          \
            sink += (int)(arr)[r];                                       \
        }                                                                \
        qsort(ts, REPS, sizeof(double), cmp_double);                     \
        double sum = 0;                                                  \
        for (long i = 0; i < (long)(len); i++) sum += (double)(arr)[i];  \
        printf("%s %.9g %.17g\n", name, ts[REPS / 2], sum);              \
    } while (0)

int main(void) {
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);
    for (long i = 0; i < N; i++) {
        x[i] = (float)(i % 1000) * 0.001f;
        y[i] = (float)(i % 777) * 0.5f;
    }
    TIMED("saxpy", saxpy(2.5f, x, y, out), out, N);

    float *u = malloc(sizeof(float) * H * W), *v = malloc(sizeof(float) * H * W);
    for (long i = 0; i < H; i++)
        for (long j = 0; j < W; j++) u[i * W + j] = (float)((i * 31 + j * 17) % 101) * 0.01f;
    TIMED("stencil", stencil(u, v), v, (long)H * W);

    int32_t *m = malloc(sizeof(int32_t) * MH * MW);
    TIMED("mandelbrot", mandel(m, MAXIT), m, (long)MH * MW);

    float *part = malloc(sizeof(float) * ((RN + RB - 1) / RB));
    TIMED("reduction", block_sum(x, part), part, (RN + RB - 1) / RB);
    free(x), free(y), free(out), free(u), free(v), free(m), free(part);
    return 0;
}
