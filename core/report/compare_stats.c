/* Welch's t-test for dlgauge compare: the sides' cells have different
 * variances and repeat counts, so the pooled-variance t-test does not
 * apply; the p-value needs Student's t at fractional degrees of freedom,
 * hence the incomplete beta function rather than a quantile table. */
#define _GNU_SOURCE
#include "compare.h"

#include <math.h>

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 500; m++) {
        double m2 = 2.0 * m;
        for (int half = 0; half < 2; half++) {
            double aa = half == 0 ? m * (b - m) * x / ((a - 1 + m2) * (a + m2))
                                  : -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
            d = 1 + aa * d;
            d = 1 / (fabs(d) < tiny ? tiny : d);
            c = 1 + aa / c;
            c = fabs(c) < tiny ? tiny : c;
            h *= d * c;
            if (half == 1 && fabs(d * c - 1) < eps)
                return h;
        }
    }
    return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* Past this many degrees of freedom lgamma(df/2) cancels and the continued
 * fraction stops early near its switch point (p came out negative or above
 * 1 at 1e15); the normal tail with its 1/df and 1/df^2 terms is exact there
 * to double precision. */
#define T_NORMAL_DF 1e7

/* The two-sided tail of Student's t for large df (Cornish-Fisher series). */
static double t_tail_large_df(double t, double df)
{
    double a = fabs(t), phi = exp(-a * a / 2) / sqrt(2 * M_PI), a3 = a * a * a, a5 = a3 * a * a;
    return erfc(a / M_SQRT2) + 2 * phi * ((a3 + a) / (4 * df) + (5 * a5 + 16 * a3 + 3 * a) / (96 * df * df));
}

double rep_t_two_sided_p(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    if (df > T_NORMAL_DF)
        return t_tail_large_df(t, df);
    return beta_inc(df / 2, 0.5, df / (df + t * t));
}

rep_welch rep_welch_test(double m1, double sd1, double n1, double m2, double sd2, double n2)
{
    rep_welch w = {NAN, NAN, NAN};
    if (!(n1 >= 2 && n2 >= 2) || isnan(sd1) || isnan(sd2))
        return w;
    double v1 = sd1 * sd1 / n1, v2 = sd2 * sd2 / n2, se = sqrt(v1 + v2);
    if (se == 0) { /* no spread on either side: any difference is certain */
        w.df = n1 + n2 - 2;
        w.t = m1 == m2 ? 0 : copysign(INFINITY, m2 - m1);
        w.p = m1 == m2 ? 1 : 0;
        return w;
    }
    w.t = (m2 - m1) / se;
    w.df = (v1 + v2) * (v1 + v2) / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1));
    w.p = rep_t_two_sided_p(w.t, w.df);
    return w;
}
