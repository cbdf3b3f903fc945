/* A tiny log-linear latency histogram (16 sub-buckets per power of two,
 * so any recorded value is within ~6% of its bucket's midpoint), for the
 * per-I/O latencies the runner's per-step histogram cannot see.  The
 * runtime has a full one, but plugins must not link libdlgauge. */
#ifndef DLG_TOOLS_LATHIST_H
#define DLG_TOOLS_LATHIST_H

#include <stdint.h>

#define LATHIST_SUB_BITS 4
#define LATHIST_BUCKETS ((64 - LATHIST_SUB_BITS + 1) << LATHIST_SUB_BITS)

typedef struct lathist {
    uint64_t count, sum, max;
    uint64_t min;
    uint64_t bucket[LATHIST_BUCKETS];
} lathist;

void lathist_reset(lathist *h);
void lathist_add(lathist *h, uint64_t v);
/* Value at quantile q in [0, 1] (a bucket midpoint, clamped to [min, max]);
 * 0 when empty. */
uint64_t lathist_quantile(const lathist *h, double q);
double lathist_mean(const lathist *h);

#endif
