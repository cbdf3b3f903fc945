/* Emulated accelerator compute for io-pipeline: a duration per step drawn
 * from a seeded distribution, spent sleeping (the host CPU is free, as
 * with a GPU) or spinning (it is busy, as with CPU training). */
#ifndef DLG_TOOLS_COMPUTE_H
#define DLG_TOOLS_COMPUTE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum compute_dist { COMPUTE_FIXED, COMPUTE_UNIFORM, COMPUTE_NORMAL } compute_dist;

typedef struct compute_model {
    uint64_t mean_ns;
    uint64_t jitter_ns; /* uniform: half-width; normal: standard deviation */
    compute_dist dist;
    bool spin;
    uint64_t rng;
} compute_model;

/* The next compute time (never negative). */
uint64_t compute_draw(compute_model *m);
/* Spends ns (sleeping or spinning); returns the time actually spent. */
uint64_t compute_spend(const compute_model *m, uint64_t ns);

#endif
