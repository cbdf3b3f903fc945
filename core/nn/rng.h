/* Seeded, reproducible random numbers (splitmix64, <dlgauge/splitmix.h>):
 * same seed, same net. */
#ifndef DLG_NN_RNG_H
#define DLG_NN_RNG_H

#include <dlgauge/splitmix.h>
#include <math.h>
#include <stdint.h>

/* The functions dropout draws with run on CUDA devices too (cuda_kernels.cu
 * includes this file), so every backend keeps the same elements. */
#ifdef __CUDACC__
#define DLG_RNG_HD __host__ __device__
#else
#define DLG_RNG_HD
#endif

/* Counter-based streams (parameter fills, dropout): draw i of the stream
 * `seed` starts from this state, so it depends on (seed, i) alone and a
 * stream split into chunks and threads draws the same values. */
static inline DLG_RNG_HD uint64_t dlg_rng_state_at(uint64_t seed, uint64_t i)
{
    return seed ^ i * 0xd1b54a32d192ed03ull;
}

/* Uniform value i in [0, 1) of the stream `seed`. */
static inline double dlg_rng_uniform_at(uint64_t seed, uint64_t i)
{
    uint64_t s = dlg_rng_state_at(seed, i);
    return dlg_splitmix_unit(&s);
}

/* Normal values 2k and 2k + 1 of the stream `seed`: the Box-Muller pair k
 * (one log, square root and sine-cosine for two values). */
static inline void dlg_rng_gauss_pair_at(uint64_t seed, uint64_t k, double *a, double *b)
{
    uint64_t s = dlg_rng_state_at(seed, k);
    double u = dlg_splitmix_unit(&s), v = dlg_splitmix_unit(&s);
    double r = sqrt(-2.0 * log(1.0 - u)), t = 6.283185307179586 * v;
    *a = r * cos(t);
    *b = r * sin(t);
}

/* Dropout's stream, counter-based so that elements draw independently (in
 * parallel, or in a captured CUDA graph whose step counter lives on the
 * device): at a layer's step-th training forward (from 0), with `base` its
 * seed, element i is kept iff dlg_dropout_u(dlg_dropout_seed(base, step),
 * i) >= ratio.  24 bits, compared as a float on every backend. */
static inline DLG_RNG_HD uint64_t dlg_dropout_seed(uint64_t base, uint64_t step)
{
    return base + DLG_SPLITMIX_GAMMA * (step + 1);
}

static inline DLG_RNG_HD float dlg_dropout_u(uint64_t seed, uint64_t i)
{
    uint64_t s = dlg_rng_state_at(seed, i);
    return (float)(dlg_splitmix_next(&s) >> 40) * (1.0f / 16777216.0f);
}

#endif
