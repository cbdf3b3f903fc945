/* gemm's known-answer check: see gemm_check.h. */
#include "gemm_check.h"

#include <float.h>
#include <math.h>

static double op_a(const gemm_operands *g, int64_t i, int64_t p)
{
    return g->ta == 'N' ? g->a[i * g->lda + p] : g->a[p * g->lda + i];
}

static double op_b(const gemm_operands *g, int64_t p, int64_t j)
{
    return g->tb == 'N' ? g->b[p * g->ldb + j] : g->b[j * g->ldb + p];
}

/* |C[i][j] - exact|, and the bound fp32 accumulation may reach: rounding
 * errors of k terms grow like sqrt(k) (blocked sums do better still), so
 * 16 sqrt(k) ulps of the terms' root-sum-square; a wrong product is off by
 * about the entry's own size. */
static double entry_error(const gemm_operands *g, int64_t i, int64_t j, double *tol)
{
    double sum = 0, sq = 0;
    for (int64_t p = 0; p < g->k; p++) {
        double t = op_a(g, i, p) * op_b(g, p, j);
        sum += t;
        sq += t * t;
    }
    *tol = 16.0 * FLT_EPSILON * sqrt((double)g->k) * sqrt(sq) + FLT_MIN;
    double c = g->c[i * g->ldc + j];
    return isnan(c) ? INFINITY : fabs(c - sum);
}

double gemm_check(const gemm_operands *g, bool *ok, int64_t *bad_i, int64_t *bad_j)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    double worst = 0;
    *ok = true;
    for (int s = 0; s < GEMM_CHECK_SAMPLES; s++) {
        int64_t i, j;
        if (s < 2) { /* first and last entries: catch a wrong leading dimension */
            i = s ? g->m - 1 : 0;
            j = s ? g->n - 1 : 0;
        } else {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            i = (int64_t)((seed >> 33) % (uint64_t)g->m);
            j = (int64_t)((seed >> 11 & 0x3fffffull) % (uint64_t)g->n);
        }
        double tol, e = entry_error(g, i, j, &tol);
        if (e > worst)
            worst = e;
        if (!(e <= tol) && *ok) {
            *ok = false;
            *bad_i = i;
            *bad_j = j;
        }
    }
    return worst;
}
