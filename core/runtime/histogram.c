/* Log-linear latency histogram: see histogram.h for the bucket layout and
 * the percentile definition. */
#include "histogram.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BITS 7                        /* 128 sub-buckets per power of two */
#define SUB_COUNT (1u << SUB_BITS)
#define LINEAR_COUNT (2u * SUB_COUNT)     /* values < 256 are exact */
#define NBUCKETS ((64u - SUB_BITS - 1u) * SUB_COUNT + LINEAR_COUNT)

struct dlg_histogram {
    uint64_t n;
    uint64_t min, max;
    unsigned __int128 sum; /* exact: 2^64 values of up to 2^64 fit */
    double mean, m2;       /* Welford: numerically stable variance */
    uint64_t counts[NBUCKETS];
};

static unsigned bucket_of(uint64_t v)
{
    if (v < LINEAR_COUNT)
        return (unsigned)v;
    unsigned top = 63u - (unsigned)__builtin_clzll(v); /* >= 8 */
    unsigned shift = top - SUB_BITS;
    return shift * SUB_COUNT + (unsigned)(v >> shift); /* v >> shift in [128, 255] */
}

/* Midpoint of the integers a bucket holds (exact for width-1 buckets). */
static double bucket_mid(unsigned idx)
{
    if (idx < LINEAR_COUNT)
        return (double)idx;
    unsigned shift = idx / SUB_COUNT - 1u;
    uint64_t sub = idx - shift * SUB_COUNT;
    double lo = (double)(sub << shift);
    double width = ldexp(1.0, (int)shift);
    return lo + (width - 1.0) / 2.0;
}

dlg_histogram *dlg_hist_new(void)
{
    dlg_histogram *h = malloc(sizeof *h);
    if (h)
        dlg_hist_reset(h);
    return h;
}

void dlg_hist_free(dlg_histogram *h) { free(h); }

void dlg_hist_reset(dlg_histogram *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

void dlg_hist_record(dlg_histogram *h, uint64_t value)
{
    h->counts[bucket_of(value)]++;
    h->n++;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
    h->sum += value;
    double x = (double)value;
    double delta = x - h->mean;
    h->mean += delta / (double)h->n;
    h->m2 += delta * (x - h->mean);
}

/* What a histogram knows besides its bucket counts. */
typedef struct hist_stats {
    uint64_t n, min, max;
    unsigned __int128 sum;
    double mean, m2;
} hist_stats;

static void add_stats(dlg_histogram *dst, const hist_stats *src)
{
    if (src->n == 0)
        return;
    /* Chan et al.: combine two (n, mean, M2) triples. */
    double na = (double)dst->n, nb = (double)src->n, n = na + nb;
    double delta = src->mean - dst->mean;
    dst->mean += delta * nb / n;
    dst->m2 += src->m2 + delta * delta * na * nb / n;
    dst->n += src->n;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

void dlg_hist_merge(dlg_histogram *dst, const dlg_histogram *src)
{
    if (src->n == 0)
        return;
    for (unsigned i = 0; i < NBUCKETS; i++)
        dst->counts[i] += src->counts[i];
    add_stats(dst, &(hist_stats){src->n, src->min, src->max, src->sum, src->mean, src->m2});
}

/* A part's slot: n, min, max, the sum's low and high 64 bits, mean and M2
 * as their bits. */
#define SLOT_WORDS 7u

size_t dlg_hist_sum_words(size_t nparts) { return NBUCKETS + SLOT_WORDS * nparts; }

/* A 64-bit value's bits as a word, and back (a double's bits too). */
_Static_assert(sizeof(double) == sizeof(int64_t), "a double is 64 bits");
static int64_t to_word(const void *v)
{
    int64_t w;
    memcpy(&w, v, sizeof w);
    return w;
}

static void from_word(int64_t w, void *v) { memcpy(v, &w, sizeof w); }

void dlg_hist_to_sum(const dlg_histogram *h, size_t part, size_t nparts, int64_t *words)
{
    memset(words, 0, dlg_hist_sum_words(nparts) * sizeof *words);
    for (unsigned i = 0; i < NBUCKETS; i++)
        words[i] = (int64_t)h->counts[i];
    int64_t *slot = words + NBUCKETS + SLOT_WORDS * part;
    uint64_t lo = (uint64_t)h->sum, hi = (uint64_t)(h->sum >> 64);
    const void *field[SLOT_WORDS] = {&h->n, &h->min, &h->max, &lo, &hi, &h->mean, &h->m2};
    for (unsigned i = 0; i < SLOT_WORDS; i++)
        slot[i] = to_word(field[i]);
}

void dlg_hist_from_sum(dlg_histogram *h, const int64_t *words, size_t nparts)
{
    dlg_hist_reset(h);
    for (size_t k = 0; k < nparts; k++) {
        const int64_t *slot = words + NBUCKETS + SLOT_WORDS * k;
        hist_stats st;
        uint64_t lo, hi;
        void *field[SLOT_WORDS] = {&st.n, &st.min, &st.max, &lo, &hi, &st.mean, &st.m2};
        for (unsigned i = 0; i < SLOT_WORDS; i++)
            from_word(slot[i], field[i]);
        st.sum = (unsigned __int128)hi << 64 | lo;
        add_stats(h, &st);
    }
    for (unsigned i = 0; i < NBUCKETS; i++)
        from_word(words[i], &h->counts[i]);
}

uint64_t dlg_hist_count(const dlg_histogram *h) { return h->n; }

uint64_t dlg_hist_min(const dlg_histogram *h) { return h->n ? h->min : 0; }

uint64_t dlg_hist_max(const dlg_histogram *h) { return h->max; }

double dlg_hist_mean(const dlg_histogram *h)
{
    if (h->n == 0)
        return 0.0;
    /* Quotient and remainder separately keep full double precision. */
    unsigned __int128 q = h->sum / h->n, r = h->sum % h->n;
    return (double)q + (double)r / (double)h->n;
}

double dlg_hist_stddev(const dlg_histogram *h)
{
    if (h->n < 2 || h->m2 <= 0.0)
        return 0.0;
    return sqrt(h->m2 / (double)(h->n - 1));
}

/* ceil(p / 100 * n) in [1, n].  The product carries p's decimal rounding
 * (99.9 / 100 * 1000 is 999.0000000000001), and its ceil would be the next
 * rank: p99.9 of 1000 steps would be the slowest one.  A product within a
 * few ulps of a whole number is that number. */
static uint64_t nearest_rank(double p, uint64_t n)
{
    double x = p / 100.0 * (double)n;
    double whole = nearbyint(x);
    double r = fabs(x - whole) <= 4.0 * DBL_EPSILON * x ? whole : ceil(x);
    return r < 1.0 ? 1 : r >= (double)n ? n : (uint64_t)r;
}

double dlg_hist_percentile(const dlg_histogram *h, double p)
{
    if (h->n == 0)
        return 0.0;
    if (isnan(p))
        return NAN;
    if (p < 0.0)
        p = 0.0;
    if (p > 100.0)
        p = 100.0;
    uint64_t rank = nearest_rank(p, h->n);
    /* The smallest and largest values are known exactly. */
    if (rank == 1)
        return (double)h->min;
    if (rank == h->n)
        return (double)h->max;
    uint64_t seen = 0;
    unsigned last = bucket_of(h->max);
    unsigned i = bucket_of(h->min);
    for (; i < last; i++) {
        seen += h->counts[i];
        if (seen >= rank)
            break;
    }
    double v = bucket_mid(i);
    if (v < (double)h->min)
        v = (double)h->min;
    if (v > (double)h->max)
        v = (double)h->max;
    return v;
}

double dlg_hist_relative_error(void)
{
    /* Half a bucket width over the smallest value in the bucket. */
    return 1.0 / (2.0 * SUB_COUNT);
}
