#include "lathist.h"

#include <string.h>

void lathist_reset(lathist *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

static unsigned bucket_of(uint64_t v)
{
    if (v < (1u << LATHIST_SUB_BITS))
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
    unsigned sub = (unsigned)(v >> (e - LATHIST_SUB_BITS)) & ((1u << LATHIST_SUB_BITS) - 1);
    return ((e - LATHIST_SUB_BITS + 1) << LATHIST_SUB_BITS) + sub;
}

/* Lowest value and width of bucket b. */
static void bucket_range(unsigned b, uint64_t *lo, uint64_t *width)
{
    if (b < (1u << LATHIST_SUB_BITS)) {
        *lo = b;
        *width = 1;
        return;
    }
    unsigned e = (b >> LATHIST_SUB_BITS) + LATHIST_SUB_BITS - 1;
    uint64_t sub = b & ((1u << LATHIST_SUB_BITS) - 1);
    *width = 1ull << (e - LATHIST_SUB_BITS);
    *lo = (1ull << e) + sub * *width;
}

void lathist_add(lathist *h, uint64_t v)
{
    h->bucket[bucket_of(v)]++;
    h->count++;
    h->sum += v;
    if (v > h->max)
        h->max = v;
    if (v < h->min)
        h->min = v;
}

uint64_t lathist_quantile(const lathist *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)h->count + 0.5);
    if (rank < 1)
        rank = 1;
    if (rank > h->count)
        rank = h->count;
    uint64_t seen = 0;
    for (unsigned b = 0; b < LATHIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) {
            uint64_t lo, width;
            bucket_range(b, &lo, &width);
            uint64_t mid = lo + width / 2;
            return mid < h->min ? h->min : mid > h->max ? h->max : mid;
        }
    }
    return h->max;
}

double lathist_mean(const lathist *h) { return h->count ? (double)h->sum / (double)h->count : 0; }
