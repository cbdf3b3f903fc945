/* cpu_lrn_bf16 (core/nn/cpu/cpu_lrn_bf16.c), cpu-bf16's across-channel
 * LRN over nhwc bf16 activations, against Caffe's formula in double from
 * the same bf16 inputs (the reference backend's): y and dx within bf16's
 * rounding.  alpha is large enough (0.5-2) that the window sums matter,
 * not Caffe's 1e-4 that makes LRN nearly the identity; channel counts
 * cover a tail (24), GoogLeNet's 64 and several vectors with a tail
 * (200); windows of 3 and 5, k of 1 and 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bf16_testutil.h"
#include "cpu/cpu_lrn_bf16.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* s at (row, c) = k + alpha/size * sum of x^2 over the channels near c */
static double ref_scale(const cpu_lrn_shape *s, const uint16_t *x, int64_t r, int64_t c)
{
    double sum = 0;
    for (int64_t j = c - s->size / 2; j <= c + s->size / 2; j++)
        if (j >= 0 && j < s->C) {
            double v = from_bf16(x[r * s->C + j]);
            sum += v * v;
        }
    return s->k + s->alpha / s->size * sum;
}

static bool near(double got, double want, double abs) { return fabs(got - want) <= ldexp(fabs(want), -8) + abs; }

static void check(int64_t rows, int64_t C, int size, float alpha, float k)
{
    cpu_lrn_shape s = {.rows = rows, .C = C, .size = size, .alpha = alpha, .k = k};
    int64_t n = rows * C;
    uint16_t *x = malloc((size_t)n * 2), *y = malloc((size_t)n * 2), *dy = malloc((size_t)n * 2),
             *dx = malloc((size_t)n * 2);
    assert_true(x && y && dy && dx);
    assert_true(cpu_lrn_bf16_supported(C, size, 0.75f));
    unsigned seed = (unsigned)(rows + C * 31 + size);
    for (int64_t i = 0; i < n; i++) {
        x[i] = to_bf16(4.0f * ((float)rand_r(&seed) / (float)RAND_MAX - 0.5f));
        dy[i] = to_bf16((float)rand_r(&seed) / (float)RAND_MAX - 0.5f);
    }
    cpu_lrn_bf16_fwd(&s, x, y);
    cpu_lrn_bf16_bwd(&s, x, dy, dx);
    int64_t bad_y = 0, bad_dx = 0;
    double spread = 0; /* how far the scale moves: the windows mattered */
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < C; c++) {
            double sc = ref_scale(&s, x, r, c), xv = from_bf16(x[r * C + c]);
            spread = fmax(spread, sc / k);
            bad_y += !near(from_bf16(y[r * C + c]), xv * pow(sc, -0.75), 1e-6);
            double sum = 0;
            for (int64_t j = c - size / 2; j <= c + size / 2; j++)
                if (j >= 0 && j < C)
                    sum += from_bf16(dy[r * C + j]) * from_bf16(x[r * C + j]) * pow(ref_scale(&s, x, r, j), -1.75);
            double want = from_bf16(dy[r * C + c]) * pow(sc, -0.75) - 2.0 * alpha * 0.75 / size * xv * sum;
            bad_dx += !near(from_bf16(dx[r * C + c]), want, 1e-5);
        }
    printf("  %lld rows x %lld channels, size %d, alpha %g, k %g: the scale reaches %.2f k; %lld bad y, %lld bad dx\n",
           (long long)rows, (long long)C, size, (double)alpha, (double)k, spread, (long long)bad_y, (long long)bad_dx);
    assert_int_equal(bad_y, 0);
    assert_int_equal(bad_dx, 0);
    assert_true(spread > 1.5);
    free(x), free(y), free(dy), free(dx);
}

static void test_lrn_bf16(void **st)
{
    if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl") ||
        !__builtin_cpu_supports("avx512dq")) {
        printf("  no AVX-512 BW/VL/DQ here: cpu-bf16 does not run, nothing to check\n");
        skip(); /* reported as skipped, not passed */
    }
    check(300, 64, 5, 1.0f, 1.0f);
    check(257, 24, 5, 2.0f, 1.0f);
    check(100, 200, 3, 0.5f, 2.0f);
    assert_false(cpu_lrn_bf16_supported(64, 5, 0.5f)); /* another beta: oneDNN's */
    assert_false(cpu_lrn_bf16_supported(64, 4, 0.75f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lrn_bf16)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
