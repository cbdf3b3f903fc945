/* Seeded, reproducible random numbers (splitmix64): same seed, same net. */
#ifndef DLG_NN_RNG_H
#define DLG_NN_RNG_H

#include <math.h>
#include <stdint.h>

static inline uint64_t dlg_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double dlg_rng_uniform(uint64_t *s)
{
    return (double)(dlg_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static inline double dlg_rng_gauss(uint64_t *s)
{
    double u = dlg_rng_uniform(s), v = dlg_rng_uniform(s);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

#endif
