/* Log-linear latency histogram (HdrHistogram / fio style).
 *
 * Values are unsigned 64-bit (nanoseconds), the whole uint64 range.
 * Buckets: values below 256 each have their own bucket (exact); above that,
 * every power of two [2^k, 2^(k+1)) is split into 128 equal sub-buckets, so a
 * bucket is never wider than 1/128 of its lower bound.  7424 buckets in all,
 * allocated once by dlg_hist_new(); recording is O(1) and never allocates.
 *
 * Percentile definition (nearest rank):
 *   rank = ceil(p / 100 * n), clamped to [1, n], where a product that is a
 *   whole number but for p's binary rounding counts as that number (p99.9
 *   of 1000 values is rank 999, not 1000); the result is the midpoint
 *   of the bucket holding the rank-th smallest value, clamped to [min, max].
 *   Rank 1 and rank n (p = 0, p = 100) return the exact min and max.
 *   p below 0 or above 100 is clamped; NaN gives NaN.  Its relative error
 *   against the exact nearest-rank value is at most dlg_hist_relative_error()
 *   (1/256, about 0.39%).  An empty histogram answers 0 for every query.
 *
 * count, min, max, mean and stddev are exact: kept from the raw values
 * (a 128-bit running sum for the mean, Welford/Chan for the variance), not
 * from the buckets.  stddev is the sample standard deviation (n - 1); it is
 * 0 for fewer than two values.
 *
 * Not thread-safe: use one histogram per thread and merge. */
#ifndef DLG_RUNTIME_HISTOGRAM_H
#define DLG_RUNTIME_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct dlg_histogram dlg_histogram;

dlg_histogram *dlg_hist_new(void); /* allocates once; NULL on OOM */
void dlg_hist_free(dlg_histogram *h);
void dlg_hist_reset(dlg_histogram *h);
void dlg_hist_record(dlg_histogram *h, uint64_t value); /* O(1), never allocates */
void dlg_hist_merge(dlg_histogram *dst, const dlg_histogram *src);
uint64_t dlg_hist_count(const dlg_histogram *h);
uint64_t dlg_hist_min(const dlg_histogram *h);  /* exact */
uint64_t dlg_hist_max(const dlg_histogram *h);  /* exact */
double dlg_hist_mean(const dlg_histogram *h);   /* exact (running sums / Welford) */
double dlg_hist_stddev(const dlg_histogram *h); /* exact, sample stddev (n-1) */
double dlg_hist_percentile(const dlg_histogram *h, double p); /* p in [0,100] */
double dlg_hist_relative_error(void); /* the bound on percentile relative error */

/* Merging across processes (the ranks of a run) with nothing but an
 * element-wise integer sum (an allreduce): each of nparts histograms
 * writes dlg_hist_sum_words(nparts) words with dlg_hist_to_sum, as part
 * `part`; the words summed over the parts give dlg_hist_from_sum the
 * merge of them all, as dlg_hist_merge would.  The bucket counts sum as
 * they are; what does not sum (n, min, max, the exact sum, mean, M2) each
 * part writes into a slot of its own, zeros in the others.  Words are
 * int64_t for an MPI_INT64_T sum: a sum of bits and zeros is exact. */
size_t dlg_hist_sum_words(size_t nparts);
void dlg_hist_to_sum(const dlg_histogram *h, size_t part, size_t nparts, int64_t *words);
void dlg_hist_from_sum(dlg_histogram *h, const int64_t *words, size_t nparts);

#endif
