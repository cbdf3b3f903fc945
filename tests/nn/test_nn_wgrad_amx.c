/* cpu_wgrad_amx (core/nn/cpu/cpu_wgrad_amx.c), the weight and bias
 * gradients of a few-channel convolution on AMX tiles, against the sums in
 * double from the same bf16 inputs: every weight within fp32 accumulation
 * of its terms.  Shapes: GoogLeNet's/ResNet-50's conv1 (7x7 stride 2 pad
 * 3) with an output width short of the tiles' 32, AlexNet's (11x11 stride
 * 4), VGG16's (3x3 pad 1) over rows enough for several chunks a thread,
 * Inception-v3's 32-channel 3x3 (289 taps); 1 to 3 threads, a team smaller
 * than asked for, no bias; from bf16 NHWC and from the net's fp32 NCHW
 * input, which the kernel rounds.  Skips where there are no tiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bf16_testutil.h"
#include "cpu/cpu_wgrad_amx.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>

static void *scratch_for(const cpu_wgrad_shape *s)
{
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 64, cpu_wgrad_amx_scratch(s)), 0);
    return p;
}

/* x at (n, c, ih, iw) as the kernel multiplies it: bf16 NHWC, or the fp32
 * NCHW input rounded to bf16 */
static double xval(const cpu_wgrad_shape *s, const void *x, int64_t n, int64_t c, int64_t ih, int64_t iw)
{
    if (s->f32_nchw)
        return from_bf16(to_bf16(((const float *)x)[((n * s->C + c) * s->H + ih) * s->W + iw]));
    return from_bf16(((const uint16_t *)x)[((n * s->H + ih) * s->W + iw) * s->C + c]);
}

/* nested: called from a team of 2 with nesting off, so it gets 1 thread
 * for s->threads shares */
static void check(cpu_wgrad_shape s, bool bias, bool nested)
{
    int64_t nx = s.N * s.H * s.W * s.C, ny = s.N * s.OH * s.OW * s.OC, K = s.C * s.KH * s.KW;
    void *x = malloc((size_t)nx * (s.f32_nchw ? 4 : 2));
    uint16_t *dy = malloc((size_t)ny * 2);
    float *dw = malloc((size_t)(s.OC * K) * 4), *db = malloc((size_t)s.OC * 4);
    void *scr = scratch_for(&s);
    assert_true(x && dy && dw && db);
    assert_true(cpu_wgrad_amx_fits(&s));
    unsigned seed = (unsigned)(nx + ny);
    for (int64_t i = 0; i < nx; i++) {
        float v = 2.0f * ((float)rand_r(&seed) / (float)RAND_MAX - 0.5f);
        if (s.f32_nchw)
            ((float *)x)[i] = v; /* not bf16-exact: the kernel rounds it */
        else
            ((uint16_t *)x)[i] = to_bf16(v);
    }
    for (int64_t i = 0; i < ny; i++)
        dy[i] = to_bf16((float)rand_r(&seed) / (float)RAND_MAX - 0.5f);
    for (int64_t i = 0; i < s.OC * K; i++)
        dw[i] = NAN; /* every weight must be written */
    db[0] = NAN;
    if (nested) {
#ifdef _OPENMP
        omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
        if (omp_get_thread_num() == 0)
#endif
            cpu_wgrad_amx(&s, x, dy, dw, bias ? db : NULL, scr);
    } else {
        cpu_wgrad_amx(&s, x, dy, dw, bias ? db : NULL, scr);
    }
    int64_t bad = 0;
    for (int64_t o = 0; o < s.OC; o++) {
        for (int64_t c = 0; c < s.C; c++)
            for (int kh = 0; kh < s.KH; kh++)
                for (int kw = 0; kw < s.KW; kw++) {
                    double sum = 0, mag = 0;
                    for (int64_t n = 0; n < s.N; n++)
                        for (int64_t oh = 0; oh < s.OH; oh++)
                            for (int64_t ow = 0; ow < s.OW; ow++) {
                                int64_t ih = oh * s.S + kh - s.P, iw = ow * s.S + kw - s.P;
                                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W)
                                    continue;
                                double t = xval(&s, x, n, c, ih, iw) *
                                           from_bf16(dy[((n * s.OH + oh) * s.OW + ow) * s.OC + o]);
                                sum += t;
                                mag += fabs(t);
                            }
                    double got = dw[((o * s.C + c) * s.KH + kh) * s.KW + kw];
                    bad += !(fabs(got - sum) <= ldexp(mag, -16) + 1e-6);
                }
        if (bias) {
            double sum = 0, mag = 0;
            for (int64_t p = 0; p < s.N * s.OH * s.OW; p++) {
                sum += from_bf16(dy[p * s.OC + o]);
                mag += fabs(from_bf16(dy[p * s.OC + o]));
            }
            bad += !(fabs(db[o] - sum) <= ldexp(mag, -16) + 1e-6);
        }
    }
    if (!bias)
        assert_true(isnan(db[0])); /* no bias: not written */
    printf("  %s N%lld C%lld %lldx%lld k%dx%d s%d p%d -> OC%lld %lldx%lld, %d thread(s)%s%s: %lld bad of %lld\n",
           s.f32_nchw ? "fp32 NCHW" : "bf16 NHWC", (long long)s.N, (long long)s.C, (long long)s.H, (long long)s.W,
           s.KH, s.KW, s.S, s.P, (long long)s.OC, (long long)s.OH, (long long)s.OW, s.threads, bias ? "" : ", no bias",
           nested ? ", team of 1" : "", (long long)bad, (long long)(s.OC * (K + bias)));
    assert_int_equal(bad, 0);
    free(x);
    free(dy);
    free(dw);
    free(db);
    free(scr);
}

static cpu_wgrad_shape shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC, int k, int stride, int pad,
                             int threads)
{
    return (cpu_wgrad_shape){.N = N, .C = C, .H = H, .W = W, .OC = OC, .OH = (H + 2 * pad - k) / stride + 1,
                             .OW = (W + 2 * pad - k) / stride + 1, .KH = k, .KW = k, .S = stride, .P = pad,
                             .SW = stride, .PW = pad, .threads = threads};
}

static cpu_wgrad_shape input(cpu_wgrad_shape s)
{
    s.f32_nchw = true;
    return s;
}

static void test_shapes(void **st)
{
    (void)st;
    if (!cpu_wgrad_amx_supported())
        skip();
    check(shape(2, 3, 30, 30, 64, 7, 2, 3, 2), true, false);  /* conv1 of GoogLeNet, ResNet-50 */
    check(shape(2, 3, 35, 39, 96, 11, 4, 0, 2), true, false); /* AlexNet's */
    check(shape(2, 3, 80, 20, 32, 3, 1, 1, 2), true, false);  /* VGG16's: 3 chunks a thread */
    check(shape(1, 3, 80, 20, 32, 3, 1, 1, 3), true, false);  /* uneven shares */
    check(shape(2, 32, 17, 17, 64, 3, 1, 0, 1), true, false); /* Inception-v3's, 289 taps */
    check(shape(2, 3, 30, 30, 64, 7, 2, 3, 2), false, false);
    check(shape(2, 3, 30, 30, 64, 7, 2, 3, 2), true, true);
    /* the net's input as it comes, fp32 NCHW */
    check(input(shape(2, 3, 30, 30, 64, 7, 2, 3, 2)), true, false);
    check(input(shape(2, 3, 35, 39, 96, 11, 4, 0, 2)), true, false);
    check(input(shape(1, 3, 80, 20, 32, 3, 1, 1, 3)), true, false);
}

static void test_fits(void **st)
{
    (void)st;
    assert_true(cpu_wgrad_amx_fits(&(cpu_wgrad_shape){.C = 3, .KH = 7, .KW = 7, .OC = 64, .S = 2, .P = 3, .SW = 2, .PW = 3, .threads = 2}));
    assert_false(cpu_wgrad_amx_fits(&(cpu_wgrad_shape){.C = 3, .KH = 7, .KW = 7, .OC = 48, .S = 2, .P = 3, .SW = 2, .PW = 3, .threads = 2}));
    /* 64 x 3 x 3 + 1 taps: past 512 */
    assert_false(cpu_wgrad_amx_fits(&(cpu_wgrad_shape){.C = 64, .KH = 3, .KW = 3, .OC = 64, .S = 1, .P = 1, .SW = 1, .PW = 1, .threads = 2}));
    assert_false(cpu_wgrad_amx_fits(&(cpu_wgrad_shape){.C = 3, .KH = 3, .KW = 3, .OC = 64, .S = 5, .P = 1, .SW = 5, .PW = 1, .threads = 2}));
    /* a 1x3 layer padded along w only (Inception-v3's) */
    assert_false(cpu_wgrad_amx_fits(&(cpu_wgrad_shape){.C = 3, .KH = 1, .KW = 3, .OC = 64, .S = 1, .P = 0, .SW = 1, .PW = 1, .threads = 2}));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes), cmocka_unit_test(test_fits)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
