/* splitmix64 (Steele, Lea and Flood, 2014): dlgauge's seeded random
 * numbers (synthetic data, parameter fills, dropout, random I/O offsets,
 * jitter).  Any seed works, 0 included; the same seed gives the same values
 * on every build, machine and backend, which results and tests rely on.
 * Not for anything an adversary chooses. */
#ifndef DLGAUGE_SPLITMIX_H
#define DLGAUGE_SPLITMIX_H

#include <stdint.h>

/* CUDA kernels draw the same streams (core/nn/rng.h). */
#ifdef __CUDACC__
#define DLG_SPLITMIX_HD __host__ __device__
#else
#define DLG_SPLITMIX_HD
#endif

#define DLG_SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull /* the state's step: 2^64 / golden ratio */

/* The output function: a bijection of 64-bit values in which every input
 * bit moves about half the output bits (also a hash of a key). */
static inline DLG_SPLITMIX_HD uint64_t dlg_splitmix_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The next value of the stream *state is at (it steps *state). */
static inline DLG_SPLITMIX_HD uint64_t dlg_splitmix_next(uint64_t *state)
{
    return dlg_splitmix_mix(*state += DLG_SPLITMIX_GAMMA);
}

/* Uniform in [0, 1), from the top 53 bits (every value exact in a double). */
static inline double dlg_splitmix_unit(uint64_t *state)
{
    return (double)(dlg_splitmix_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, bound) (bound > 0) by multiply-shift: no division, and a
 * bias of at most bound / 2^64.  (__extension__: GCC's and Clang's 128-bit
 * product, which their 64-bit targets have, in strict ISO modes too.) */
static inline uint64_t dlg_splitmix_below(uint64_t *state, uint64_t bound)
{
    __extension__ typedef unsigned __int128 dlg_splitmix_u128;
    return (uint64_t)(((dlg_splitmix_u128)dlg_splitmix_next(state) * bound) >> 64);
}

#endif
