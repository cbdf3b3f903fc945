/* cpu_grad_sum (core/nn/cpu/cpu_grad_sum.c), the one-pass backward of an
 * add that took over the split after it: both input gradients equal the
 * sum of the split's output gradients, masked by the ReLU's output, on
 * tensors below and past the size from which the stores are
 * non-temporal, with a tail that is not a whole vector, and with one
 * input gradient not wanted.  cpu_grad_sum_bf16 the same on bf16 tensors,
 * bit for bit against an fp32 sum rounded once to nearest even (on
 * AVX-512 CPUs, the only ones cpu-bf16 runs on). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpu/cpu_grad_sum.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *buffer(int64_t n, unsigned seed)
{
    float *p = aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)rand_r(&seed) / (float)RAND_MAX - 0.5f;
    return p;
}

/* bf16 values in [-0.5, 0.5): fp32 ones cut to their top 16 bits */
static void *buffer16(int64_t n, unsigned seed)
{
    uint16_t *p = aligned_alloc(64, ((size_t)n * 2 + 63) / 64 * 64);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++) {
        float f = (float)rand_r(&seed) / (float)RAND_MAX - 0.5f;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        p[i] = (uint16_t)(u >> 16);
    }
    return p;
}

/* One call's buffers, of fp32 or bf16 values (by make): the parts'
 * gradients, the ReLU's output, both outputs and a copy of dx1 (which
 * must stay as it was when not wanted). */
typedef struct sums {
    void *g[3], *y, *dx0, *dx1, *keep;
    dlg_tensor t[3];
    dlg_tensor *parts[3];
    int nparts;
} sums;

static void sums_init(sums *s, int64_t n, int nparts, void *(*make)(int64_t, unsigned), size_t elem)
{
    memset(s, 0, sizeof *s);
    s->nparts = nparts;
    s->y = make(n, 7);
    s->dx0 = make(n, 8);
    s->dx1 = make(n, 9);
    for (int p = 0; p < nparts; p++) {
        s->g[p] = make(n, 10 + (unsigned)p);
        s->t[p].diff = s->g[p];
        s->parts[p] = &s->t[p];
    }
    assert_non_null(s->keep = malloc((size_t)n * elem));
    memcpy(s->keep, s->dx1, (size_t)n * elem);
}

static void sums_free(sums *s)
{
    for (int p = 0; p < s->nparts; p++)
        free(s->g[p]);
    free(s->y);
    free(s->dx0);
    free(s->dx1);
    free(s->keep);
}

static void check(int64_t n, int nparts, bool relu, bool both)
{
    sums s;
    sums_init(&s, n, nparts, buffer, sizeof(float));
    float *const *g = (float *const *)s.g, *y = s.y, *dx0 = s.dx0, *dx1 = s.dx1, *keep = s.keep;
    cpu_grad_sum(dx0, both ? dx1 : NULL, s.parts, nparts, relu ? y : NULL, n);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float want = g[0][i];
        for (int p = 1; p < nparts; p++)
            want += g[p][i];
        if (relu && !(y[i] > 0))
            want = 0;
        bad += dx0[i] != want || (both ? dx1[i] != want : dx1[i] != keep[i]);
    }
    printf("  n %lld, %d parts%s%s: %lld wrong\n", (long long)n, nparts, relu ? ", relu" : "",
           both ? "" : ", one gradient", (long long)bad);
    assert_int_equal(bad, 0);
    sums_free(&s);
}

static float widen(uint16_t v)
{
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t round_even(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static void check16(int64_t n, int nparts, bool relu, bool both)
{
    sums s;
    sums_init(&s, n, nparts, buffer16, sizeof(uint16_t));
    uint16_t *const *g = (uint16_t *const *)s.g, *y = s.y, *dx0 = s.dx0, *dx1 = s.dx1, *keep = s.keep;
    cpu_grad_sum_bf16(dx0, both ? dx1 : NULL, s.parts, nparts, relu ? y : NULL, n);
    int64_t bad = 0, rounded = 0;
    for (int64_t i = 0; i < n; i++) {
        float sum = widen(g[0][i]);
        for (int p = 1; p < nparts; p++)
            sum += widen(g[p][i]);
        if (relu && !(widen(y[i]) > 0))
            sum = 0;
        uint16_t want = round_even(sum);
        rounded += widen(want) != sum;
        bad += dx0[i] != want || (both ? dx1[i] != want : dx1[i] != keep[i]);
    }
    printf("  bf16: n %lld, %d parts%s%s: %lld wrong (%lld sums rounded)\n", (long long)n, nparts,
           relu ? ", relu" : "", both ? "" : ", one gradient", (long long)bad, (long long)rounded);
    assert_int_equal(bad, 0);
    assert_true(rounded > n / 10); /* the rounding was exercised */
    sums_free(&s);
}

static void test_sums_bf16(void **st)
{
    if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl")) {
        printf("  no AVX-512 BW/VL here: cpu-bf16 does not run, nothing to check\n");
        skip(); /* reported as skipped, not passed */
    }
    check16(1000, 2, true, true);           /* cached stores, an 8-value tail */
    check16(1003, 3, false, true);          /* an 11-value tail */
    check16((1 << 21) + 5, 2, true, true);  /* non-temporal stores, a tail */
    check16((1 << 21) + 16, 2, true, false); /* only the first gradient */
    check16((3 << 20) + 1, 3, false, true);
}

static void test_sums(void **st)
{
    check(1000, 2, true, true);            /* cached stores, a 0-vector tail */
    check(1003, 3, false, true);           /* a 3-float tail */
    check((1 << 20) + 5, 2, true, true);   /* non-temporal stores, a tail */
    check((1 << 20) + 8, 2, true, false);  /* only the first gradient */
    check((3 << 20) + 1, 3, false, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sums), cmocka_unit_test(test_sums_bf16)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
