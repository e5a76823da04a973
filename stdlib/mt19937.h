/*
** mt19937.h — the Mersenne Twister generator shared by the random module
** (CPython's derivations) and np.random (numpy's legacy RandomState). Both
** peers use the reference MT19937 with its two seeding routines; only what
** they derive from the 32-bit outputs differs.
*/
#ifndef GPY_MT19937_H
#define GPY_MT19937_H

#include <stddef.h>
#include <stdint.h>

enum { MT_N = 624 };

typedef struct MT19937 {
    uint32_t mt[MT_N];
    int32_t index; /* next word of mt to temper; MT_N means "regenerate first" */
} MT19937;

/* init_genrand: seeding with one 32-bit word (numpy's integer seeds). */
void mt_seed(MT19937 *g, uint32_t s);
/* init_by_array: seeding with a key (CPython's seeds, numpy's sequences). */
void mt_seed_array(MT19937 *g, const uint32_t *key, size_t klen);
/* The next 32 random bits. */
uint32_t mt_next32(MT19937 *g);
/* A double in [0, 1) from 53 random bits (genrand_res53). */
static inline double mt_random53(MT19937 *g) {
    uint32_t a = mt_next32(g) >> 5, b = mt_next32(g) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

#endif
