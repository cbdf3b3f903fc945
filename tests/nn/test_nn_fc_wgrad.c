/* cpu_fc_wgrad (core/nn/cpu/cpu_fc_wgrad.c), an inner product's weight and
 * bias gradients at a small batch by outer products, against sums in
 * double of the same inputs (rounded to bf16 first where the shape says
 * so, as cpu-bf16's kernels take them): every weight within fp32
 * accumulation of its terms.  Shapes: VGG16's fc7 in small (rows a
 * multiple of 16, the streaming stores), an odd input count (masked
 * tails), outputs not a multiple of the kernel's 4 rows, a batch of 1 and
 * of 64 (the most it takes); 1 to 3 threads; no bias; a gradient not
 * 64-byte aligned (ordinary stores).  Skips without AVX-512. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bf16_testutil.h"
#include "cpu/cpu_fc_wgrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double as_taken(const cpu_fc_wgrad_shape *s, float v) { return s->bf16 ? from_bf16(to_bf16(v)) : v; }

/* off: floats dW starts past a 64-byte boundary */
static void check(cpu_fc_wgrad_shape s, bool bias, int off)
{
    float *x = malloc((size_t)(s.B * s.I) * 4), *dy = malloc((size_t)(s.B * s.O) * 4);
    float *dwb = NULL, *db = malloc((size_t)s.O * 4);
    void *scr = NULL;
    assert_int_equal(posix_memalign((void **)&dwb, 64, (size_t)(s.O * s.I + off) * 4), 0);
    assert_int_equal(posix_memalign(&scr, 64, cpu_fc_wgrad_scratch(&s)), 0);
    assert_true(x && dy && db && cpu_fc_wgrad_fits(&s));
    float *dw = dwb + off;
    unsigned seed = (unsigned)(s.B * 131 + s.I * 7 + s.O);
    for (int64_t i = 0; i < s.B * s.I; i++)
        x[i] = 2.0f * ((float)rand_r(&seed) / (float)RAND_MAX - 0.5f);
    for (int64_t i = 0; i < s.B * s.O; i++)
        dy[i] = 2.0f * ((float)rand_r(&seed) / (float)RAND_MAX - 0.5f);
    for (int64_t i = 0; i < s.O * s.I; i++)
        dw[i] = NAN; /* every weight written */
    for (int64_t o = 0; o < s.O; o++)
        db[o] = NAN;
    cpu_fc_wgrad(&s, x, dy, dw, bias ? db : NULL, scr);
    double worst = 0;
    for (int64_t o = 0; o < s.O; o++) {
        for (int64_t i = 0; i < s.I; i++) {
            double sum = 0, mag = 0;
            for (int64_t b = 0; b < s.B; b++) {
                double t = as_taken(&s, dy[b * s.O + o]) * as_taken(&s, x[b * s.I + i]);
                sum += t;
                mag += fabs(t);
            }
            double e = fabs(dw[o * s.I + i] - sum) / (mag * (double)s.B * 0x1p-23 + 1e-30);
            if (!(e <= 1.0))
                fail_msg("B%lld I%lld O%lld: dw[%lld][%lld] = %g, want %g", (long long)s.B, (long long)s.I,
                         (long long)s.O, (long long)o, (long long)i, dw[o * s.I + i], sum);
            worst = e > worst ? e : worst;
        }
        if (bias) {
            double sum = 0, mag = 0;
            for (int64_t b = 0; b < s.B; b++) {
                sum += as_taken(&s, dy[b * s.O + o]);
                mag += fabs(as_taken(&s, dy[b * s.O + o]));
            }
            assert_true(fabs(db[o] - sum) <= mag * (double)s.B * 0x1p-23 + 1e-30);
        } else {
            assert_true(isnan(db[o])); /* left alone */
        }
    }
    printf("  B%lld I%lld O%lld %s t%d%s: worst error %.2f of the fp32 bound\n", (long long)s.B, (long long)s.I,
           (long long)s.O, s.bf16 ? "bf16" : "fp32", s.threads, off ? " unaligned" : "", worst);
    free(x);
    free(dy);
    free(dwb);
    free(db);
    free(scr);
}

static cpu_fc_wgrad_shape shape(int64_t B, int64_t I, int64_t O, bool bf16, int threads)
{
    return (cpu_fc_wgrad_shape){.B = B, .I = I, .O = O, .bf16 = bf16, .threads = threads};
}

static void test_shapes(void **st)
{
    (void)st;
    if (!cpu_fc_wgrad_fits(&(cpu_fc_wgrad_shape){.B = 4, .I = 16, .O = 4, .threads = 1}))
        skip();
    check(shape(4, 512, 256, true, 2), true, 0);
    check(shape(4, 512, 256, false, 2), true, 0);
    check(shape(16, 37, 10, true, 3), true, 0);
    check(shape(1, 100, 1001, false, 2), true, 0);
    check(shape(64, 48, 33, true, 1), false, 0);
    check(shape(7, 64, 13, true, 2), true, 3);
}

static void test_fits(void **st)
{
    (void)st;
    if (!cpu_fc_wgrad_fits(&(cpu_fc_wgrad_shape){.B = 4, .I = 16, .O = 4, .threads = 1}))
        skip();
    assert_true(cpu_fc_wgrad_fits(&(cpu_fc_wgrad_shape){.B = 64, .I = 25088, .O = 4096, .threads = 2}));
    /* past 64 rows the gemm's: the batch a step of the kernel keeps */
    assert_false(cpu_fc_wgrad_fits(&(cpu_fc_wgrad_shape){.B = 65, .I = 16, .O = 4, .threads = 2}));
    assert_false(cpu_fc_wgrad_fits(&(cpu_fc_wgrad_shape){.B = 0, .I = 16, .O = 4, .threads = 2}));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes), cmocka_unit_test(test_fits)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
