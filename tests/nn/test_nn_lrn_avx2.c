/* cpu_lrn_avx2 (core/nn/cpu/cpu_lrn_avx2.c), the cpu backend's
 * across-channel LRN over nChw8c fp32 activations on AVX2 in inference
 * plans, against Caffe's formula in double: y within 2e-6 relative (plus
 * 1e-7 absolute; Newton-refined reciprocal square roots).  alpha is large
 * enough (0.5-2) that the window sums matter, not Caffe's 1e-4 that makes
 * LRN nearly the identity.  Channel counts: one block, AlexNet's 96, a
 * last block padded (20: its padding must come back as zeros and never
 * enter a window, which a poisoned pad shows), several images; windows
 * of 3, 5 and 7, k of 1 and 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpu/cpu_lrn_avx2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where (n, c, p) sits in nChw8c with C padded to blocks of 8. */
static int64_t at(const cpu_lrn8_shape *s, int64_t n, int64_t c, int64_t p)
{
    int64_t cp = (s->C + 7) / 8 * 8;
    return (n * cp + c / 8 * 8) * s->HW + p * 8 + c % 8;
}

/* s at (n, c, p) = k + alpha/size * sum of x^2 over the channels near c */
static double ref_scale(const cpu_lrn8_shape *s, const float *x, int64_t n, int64_t c, int64_t p)
{
    double sum = 0;
    for (int64_t j = c - s->size / 2; j <= c + s->size / 2; j++)
        if (j >= 0 && j < s->C) {
            double v = x[at(s, n, j, p)];
            sum += v * v;
        }
    return s->k + s->alpha / s->size * sum;
}

static bool near(double got, double want) { return fabs(got - want) <= 2e-6 * fabs(want) + 1e-7; }

static void check(int64_t N, int64_t C, int64_t HW, int size, float alpha, float k)
{
    cpu_lrn8_shape s = {.N = N, .C = C, .HW = HW, .size = size, .alpha = alpha, .k = k};
    int64_t cp = (C + 7) / 8 * 8, n = N * cp * HW;
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
    assert_true(x && y);
    unsigned seed = (unsigned)(N * 31 + C * 7 + HW + size);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)rand_r(&seed) / (float)RAND_MAX * 4.0f - 2.0f;
    for (int64_t b = 0; b < N; b++) /* the padding: ignored in, zeros out */
        for (int64_t c = C; c < cp; c++)
            for (int64_t p = 0; p < HW; p++)
                x[at(&s, b, c, p)] = 1e6f;
    memset(y, 0xff, (size_t)n * 4); /* NaN: every value must be written */
    cpu_lrn_avx2_fwd(&s, x, y);
    int64_t bad_y = 0, bad_pad = 0;
    for (int64_t b = 0; b < N; b++)
        for (int64_t p = 0; p < HW; p++) {
            for (int64_t c = 0; c < C; c++) {
                int64_t i = at(&s, b, c, p);
                bad_y += !near(y[i], x[i] * pow(ref_scale(&s, x, b, c, p), -0.75));
            }
            for (int64_t c = C; c < cp; c++)
                bad_pad += y[at(&s, b, c, p)] != 0.0f;
        }
    printf("  %lld images x %lld channels x %lld pixels, size %d, alpha %g, k %g: %lld bad y, %lld padding values "
           "not zero\n",
           (long long)N, (long long)C, (long long)HW, size, alpha, k, (long long)bad_y, (long long)bad_pad);
    assert_int_equal(bad_y, 0);
    assert_int_equal(bad_pad, 0);
    free(x), free(y);
}

static void test_lrn_avx2(void **st)
{
    if (!cpu_lrn_avx2_supported(8, 5, 0.75f)) {
        printf("  no AVX2 + FMA here: the kernels do not run, nothing to check\n");
        skip(); /* reported as skipped, not passed */
    }
    assert_false(cpu_lrn_avx2_supported(8, 5, 0.5f)); /* only beta 0.75 */
    assert_false(cpu_lrn_avx2_supported(8, 4, 0.75f)); /* odd windows */
    assert_false(cpu_lrn_avx2_supported(8, 17, 0.75f));
    check(1, 8, 9, 5, 1.0f, 1.0f);   /* one block */
    check(2, 96, 13, 5, 0.5f, 1.0f); /* AlexNet's channels */
    check(3, 20, 7, 3, 2.0f, 2.0f);  /* a padded last block */
    check(1, 20, 5, 7, 1.5f, 1.0f);  /* a window wider than the padding */
    check(2, 64, 4, 5, 1.0f, 2.0f);  /* GoogLeNet's first */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lrn_avx2)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
