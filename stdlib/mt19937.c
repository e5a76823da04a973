/*
** mt19937.c — the reference MT19937 (Matsumoto & Nishimura), see mt19937.h.
*/
#include "mt19937.h"

enum { MT_M = 397 };

void mt_seed(MT19937 *g, uint32_t s) {
    g->mt[0] = s;
    for (uint32_t i = 1; i < MT_N; i++) g->mt[i] = 1812433253u * (g->mt[i - 1] ^ (g->mt[i - 1] >> 30)) + i;
    g->index = MT_N;
}

void mt_seed_array(MT19937 *g, const uint32_t *key, size_t klen) {
    mt_seed(g, 19650218u);
    uint32_t *mt = g->mt;
    size_t i = 1, j = 0;
    for (size_t k = MT_N > klen ? MT_N : klen; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
        if (j >= klen) j = 0;
    }
    for (size_t k = MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000u;
}

/* The twist: y's top bit from mt[a], low 31 bits from mt[b], mixed into mt[c]. */
static inline uint32_t twist(uint32_t hi, uint32_t lo, uint32_t far) {
    uint32_t y = (hi & 0x80000000u) | (lo & 0x7fffffffu);
    return far ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
}

uint32_t mt_next32(MT19937 *g) {
    uint32_t *mt = g->mt;
    if (g->index >= MT_N) {
        int kk;
        for (kk = 0; kk < MT_N - MT_M; kk++) mt[kk] = twist(mt[kk], mt[kk + 1], mt[kk + MT_M]);
        for (; kk < MT_N - 1; kk++) mt[kk] = twist(mt[kk], mt[kk + 1], mt[kk + (MT_M - MT_N)]);
        mt[MT_N - 1] = twist(mt[MT_N - 1], mt[0], mt[MT_M - 1]);
        g->index = 0;
    }
    uint32_t y = mt[g->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}
