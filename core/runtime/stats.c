/* Summary statistics over repetitions: see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STACK_MAX 64

/* t(0.975, df) for df = 1..30 (R: qt(0.975, df)); index 0 unused. */
static const double t975[31] = {
    INFINITY,    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
    2.446911851, 2.364624252,  2.306004135, 2.262157163, 2.228138852, 2.200985160,
    2.178812830, 2.160368656,  2.144786688, 2.131449546, 2.119905299, 2.109815578,
    2.100922040, 2.093024054,  2.085963447, 2.079613845, 2.073873068, 2.068657610,
    2.063898562, 2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642,
    2.042272456};

double dlg_t_quantile_975(size_t df)
{
    if (df < sizeof t975 / sizeof t975[0])
        return t975[df];
    /* Cornish-Fisher expansion of t around the normal quantile z
     * (Abramowitz & Stegun 26.7.5); < 5e-8 off for df > 30. */
    const double z = 1.959963984540054;
    double v = (double)df;
    double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
    double g1 = (z3 + z) / 4.0;
    double g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    double g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    double g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y)) /* a total order: NaN sorts last */
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* k-th smallest (0-based) of x without a copy: O(n^2), the fallback when
 * a copy cannot be allocated. */
static double select_kth(const double *x, size_t n, size_t k)
{
    for (size_t i = 0; i < n; i++) {
        size_t less = 0, equal = 0;
        for (size_t j = 0; j < n; j++) {
            int c = cmp_double(&x[j], &x[i]);
            less += c < 0;
            equal += c == 0;
        }
        if (less <= k && k < less + equal)
            return x[i];
    }
    return NAN; /* unreachable for a total order */
}

static double median_of(const double *x, size_t n)
{
    double stack[STACK_MAX];
    double *copy = n <= STACK_MAX ? stack : malloc(n * sizeof *copy);
    double lo, hi;
    if (copy) {
        memcpy(copy, x, n * sizeof *copy);
        qsort(copy, n, sizeof *copy, cmp_double);
        lo = copy[(n - 1) / 2];
        hi = copy[n / 2];
        if (copy != stack)
            free(copy);
    } else {
        lo = select_kth(x, n, (n - 1) / 2);
        hi = select_kth(x, n, n / 2);
    }
    return lo + (hi - lo) / 2.0;
}

void dlg_summarize(const double *x, size_t n, dlg_summary *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    out->n = n;
    /* Two passes: the mean first, then squared deviations from it, which
     * avoids the cancellation of sum(x^2) - n*mean^2. */
    long double sum = 0;
    out->min = out->max = x[0];
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        if (x[i] < out->min)
            out->min = x[i];
        if (x[i] > out->max)
            out->max = x[i];
    }
    long double mean = sum / (long double)n;
    out->mean = (double)mean;
    out->median = median_of(x, n);
    if (n == 1)
        return;
    long double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += ((long double)x[i] - mean) * ((long double)x[i] - mean);
    out->stddev = (double)sqrtl(ss / (long double)(n - 1));
    out->ci95 = dlg_t_quantile_975(n - 1) * out->stddev / sqrt((double)n);
}
