/* Summary statistics over repetitions: mean, sample standard deviation and
 * the 95% confidence interval of the mean (Student t). */
#ifndef DLG_RUNTIME_STATS_H
#define DLG_RUNTIME_STATS_H

#include <stddef.h>

typedef struct dlg_summary {
    size_t n;
    double mean, stddev, ci95; /* ci95: half-width, mean +/- ci95 */
    double min, max, median;
} dlg_summary;

/* Fills *out from x[0..n).  stddev is the sample standard deviation (n - 1);
 * ci95 = t(n-1) * stddev / sqrt(n) with t = dlg_t_quantile_975.
 * n == 1: stddev = ci95 = 0 (one value says nothing about spread) and
 * mean = min = max = median = x[0].  n == 0: every field is 0.
 * median of an even count is the mean of the two middle values.
 * x is not modified; no allocation for n <= 64 (larger n sorts a heap copy,
 * or, if that allocation fails, selects without one in O(n^2)).
 * NaN inputs propagate to mean/stddev/ci95. */
void dlg_summarize(const double *x, size_t n, dlg_summary *out);

/* Two-sided 95% critical value of Student's t with df degrees of freedom
 * (the 0.975 quantile): exact table for df <= 30, a fourth-order
 * Cornish-Fisher expansion beyond (error < 5e-8), tending to 1.959964.
 * df == 0 gives INFINITY (no interval can be stated). */
double dlg_t_quantile_975(size_t df);

#endif
