/* cpu_bn_bf16 (core/nn/cpu/cpu_bn_bf16.c), cpu-bf16's batch norm over
 * nhwc bf16 activations, against a double-precision reference computed
 * from the same bf16 inputs: the batch mean and (biased) variance, y
 * within bf16's rounding, the scale and shift gradients and dx.  Shapes
 * cover a channel count with a tail (24), several register sweeps per row
 * (2048 channels), rows that do not split evenly over 1 and 3 threads,
 * the non-temporal stores of a large tensor, with and without the fused
 * ReLU, and backward in place (dx in dy's memory); cpu_bf16_channel_sums
 * (a bias gradient) against dy's sums.  The inputs sit far
 * from 0 (mean ~5 per channel, spread ~0.3), so a variance taken as
 * E[x^2] - E[x]^2 without the shift would cancel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bf16_testutil.h"
#include "cpu/cpu_bn_bf16.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float uniform(unsigned *seed) { return (float)rand_r(seed) / (float)RAND_MAX - 0.5f; }

static uint16_t *bf16_buffer(int64_t n)
{
    uint16_t *p = aligned_alloc(64, ((size_t)n * 2 + 63) / 64 * 64);
    assert_non_null(p);
    return p;
}

/* The reference's per-channel sums, in double. */
typedef struct ref_stats {
    double *mean, *var, *sg, *sgx;
} ref_stats;

static void reference(const cpu_bn_shape *s, const uint16_t *x, const uint16_t *dy, const uint16_t *y,
                      ref_stats *r)
{
    int64_t C = s->C, R = s->rows;
    for (int64_t c = 0; c < C; c++) {
        double m = 0, v = 0, sg = 0, sgx = 0;
        for (int64_t i = 0; i < R; i++)
            m += from_bf16(x[i * C + c]);
        m /= (double)R;
        for (int64_t i = 0; i < R; i++)
            v += (from_bf16(x[i * C + c]) - m) * (from_bf16(x[i * C + c]) - m);
        v /= (double)R;
        double rstd = 1 / sqrt(v + s->eps);
        for (int64_t i = 0; i < R; i++) {
            /* the ReLU's mask from the kernel's own y: where it rounds
             * matters, not a double's view of the kink */
            double g = s->relu && !(from_bf16(y[i * C + c]) > 0) ? 0 : from_bf16(dy[i * C + c]);
            sg += g;
            sgx += g * (from_bf16(x[i * C + c]) - m) * rstd;
        }
        r->mean[c] = m, r->var[c] = v, r->sg[c] = sg, r->sgx[c] = sgx;
    }
}

/* |got - want| within bf16's half ulp of want plus abs. */
static bool near(double got, double want, double abs)
{
    return fabs(got - want) <= ldexp(fabs(want), -8) + abs;
}

static void check(int64_t rows, int64_t C, bool relu, int threads)
{
    cpu_bn_shape s = {.rows = rows, .C = C, .eps = 1e-5f, .relu = relu, .threads = threads};
    int64_t n = rows * C;
    uint16_t *x = bf16_buffer(n), *dy = bf16_buffer(n), *y = bf16_buffer(n), *dx = bf16_buffer(n);
    float *gamma = malloc((size_t)C * 4), *beta = malloc((size_t)C * 4), *mean = malloc((size_t)C * 4),
          *var = malloc((size_t)C * 4), *dg = malloc((size_t)C * 4), *db = malloc((size_t)C * 4);
    double *buf = calloc(4 * (size_t)C, sizeof(double));
    size_t bytes = (cpu_bn_bf16_scratch(&s) + 63) / 64 * 64;
    void *scratch = aligned_alloc(64, bytes);
    assert_true(gamma && beta && mean && var && dg && db && buf && scratch);
    unsigned seed = (unsigned)(rows * 131 + C);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i % C;
        x[i] = to_bf16(5.0f + 0.01f * (float)c + 0.6f * uniform(&seed));
        dy[i] = to_bf16(uniform(&seed));
    }
    for (int64_t c = 0; c < C; c++) {
        gamma[c] = 1.0f + 0.5f * uniform(&seed);
        beta[c] = 0.3f * uniform(&seed); /* with the ReLU about half the values pass */
    }
    cpu_bn_bf16_fwd(&s, x, y, gamma, beta, NULL, mean, var, scratch);
    cpu_bn_bf16_bwd(&s, x, dy, dx, gamma, beta, mean, var, dg, db, scratch);
    /* in place (dx in dy's memory): the same values */
    uint16_t *inplace = bf16_buffer(n);
    memcpy(inplace, dy, (size_t)n * 2);
    cpu_bn_bf16_bwd(&s, x, inplace, inplace, gamma, beta, mean, var, dg, db, scratch);
    assert_memory_equal(inplace, dx, (size_t)n * 2);
    free(inplace);

    ref_stats r = {buf, buf + C, buf + 2 * C, buf + 3 * C};
    reference(&s, x, dy, y, &r);
    /* a bias gradient: dy's plain sums per channel */
    int64_t bad_sums = 0;
    cpu_bf16_channel_sums(&s, dy, dg, scratch);
    for (int64_t c = 0; c < C; c++) {
        double want = 0;
        for (int64_t i = 0; i < rows; i++)
            want += from_bf16(dy[i * C + c]);
        bad_sums += fabs(dg[c] - want) > 1e-5 * (1 + fabs(want));
    }
    assert_int_equal(bad_sums, 0);
    cpu_bn_bf16_bwd(&s, x, dy, dx, gamma, beta, mean, var, dg, db, scratch);
    int64_t bad_stats = 0, bad_y = 0, bad_dx = 0, zeros = 0;
    double worst_var = 0;
    for (int64_t c = 0; c < C; c++) {
        double ev = fabs(var[c] - r.var[c]) / r.var[c];
        worst_var = ev > worst_var ? ev : worst_var;
        if (fabs(mean[c] - r.mean[c]) > 1e-6 * fabs(r.mean[c]) || ev > 1e-4 ||
            fabs(dg[c] - r.sgx[c]) > 1e-4 * (1 + fabs(r.sgx[c])) || fabs(db[c] - r.sg[c]) > 1e-4 * (1 + fabs(r.sg[c])))
            bad_stats++;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i % C;
        double rstd = 1 / sqrt(r.var[c] + s.eps), xh = (from_bf16(x[i]) - r.mean[c]) * rstd;
        double want = gamma[c] * xh + beta[c];
        if (relu && want < 0)
            want = 0;
        zeros += from_bf16(y[i]) == 0;
        bad_y += !near(from_bf16(y[i]), want, 1e-5);
        double g = relu && !(from_bf16(y[i]) > 0) ? 0 : from_bf16(dy[i]);
        double d = gamma[c] * rstd * (g - r.sg[c] / (double)rows - xh * r.sgx[c] / (double)rows);
        bad_dx += !near(from_bf16(dx[i]), d, 1e-5);
    }
    printf("  %lld rows x %lld channels%s, %d thread%s: variance off by %.1e at worst; %lld bad statistics, "
           "%lld bad y, %lld bad dx; %lld zeros\n",
           (long long)rows, (long long)C, relu ? ", relu" : "", threads, threads == 1 ? "" : "s", worst_var,
           (long long)bad_stats, (long long)bad_y, (long long)bad_dx, (long long)zeros);
    assert_int_equal(bad_stats, 0);
    assert_int_equal(bad_y, 0);
    assert_int_equal(bad_dx, 0);
    if (relu) /* the mask was exercised both ways */
        assert_true(zeros > n / 10 && zeros < n * 9 / 10);
    free(x), free(dy), free(y), free(dx), free(gamma), free(beta), free(mean), free(var), free(dg), free(db);
    free(buf), free(scratch);
}

/* A residual added before the ReLU (a batch norm that took over a ResNet
 * block's add): y = relu?(bn(x) + res), rounded once. */
static void check_residual(int64_t rows, int64_t C, bool relu, int threads)
{
    cpu_bn_shape s = {.rows = rows, .C = C, .eps = 1e-5f, .relu = relu, .threads = threads};
    int64_t n = rows * C;
    uint16_t *x = bf16_buffer(n), *res = bf16_buffer(n), *y = bf16_buffer(n);
    float *gamma = malloc((size_t)C * 4), *beta = malloc((size_t)C * 4), *mean = malloc((size_t)C * 4),
          *var = malloc((size_t)C * 4);
    void *scratch = aligned_alloc(64, (cpu_bn_bf16_scratch(&s) + 63) / 64 * 64);
    assert_true(gamma && beta && mean && var && scratch);
    unsigned seed = (unsigned)(rows * 7 + C);
    for (int64_t i = 0; i < n; i++) {
        x[i] = to_bf16(2.0f + uniform(&seed));
        res[i] = to_bf16(uniform(&seed));
    }
    for (int64_t c = 0; c < C; c++) {
        gamma[c] = 1.0f + 0.5f * uniform(&seed);
        beta[c] = 0.3f * uniform(&seed);
    }
    cpu_bn_bf16_fwd(&s, x, y, gamma, beta, res, mean, var, scratch);
    int64_t bad = 0, zeros = 0;
    for (int64_t c = 0; c < C; c++) {
        double m = 0, v = 0;
        for (int64_t r = 0; r < rows; r++)
            m += from_bf16(x[r * C + c]);
        m /= (double)rows;
        for (int64_t r = 0; r < rows; r++)
            v += (from_bf16(x[r * C + c]) - m) * (from_bf16(x[r * C + c]) - m);
        v /= (double)rows;
        for (int64_t r = 0; r < rows; r++) {
            int64_t i = r * C + c;
            double want = gamma[c] * (from_bf16(x[i]) - m) / sqrt(v + s.eps) + beta[c] + from_bf16(res[i]);
            want = relu && want < 0 ? 0 : want;
            bad += !near(from_bf16(y[i]), want, 1e-4);
            zeros += from_bf16(y[i]) == 0;
        }
    }
    printf("  %lld rows x %lld channels, residual%s: %lld bad y, %lld zeros\n", (long long)rows, (long long)C,
           relu ? " then relu" : "", (long long)bad, (long long)zeros);
    assert_int_equal(bad, 0);
    if (relu)
        assert_true(zeros > n / 10 && zeros < n * 9 / 10);
    free(x), free(res), free(y), free(gamma), free(beta), free(mean), free(var), free(scratch);
}

static void test_bn_bf16(void **st)
{
    if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl") ||
        !__builtin_cpu_supports("avx512dq")) {
        printf("  no AVX-512 BW/VL/DQ here: cpu-bf16 does not run, nothing to check\n");
        skip(); /* reported as skipped, not passed */
    }
    check(450, 64, false, 2);          /* ResNet-smooth's first batch norm */
    check(1001, 24, true, 3);          /* a channel tail; rows split 333/334/334 */
    check(147, 2048, false, 2);        /* 16 register sweeps of 128 channels a row */
    check(147, 2048, true, 1);
    check(4099, 512, true, 2);         /* 2.1 M values: non-temporal stores */
    check(300, 40, false, 1);          /* 3 vectors, the last with 8 lanes */
    check_residual(450, 64, true, 2);
    check_residual(1001, 24, false, 3); /* a channel tail */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bn_bf16)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
